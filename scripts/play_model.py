#!/usr/bin/env python3
"""A learned model of how the search bot plays 2-player Box Whist, against the heuristic as
that model, for inference (issue 25: "start from the heuristic as the model; measure what a
learned or self-play model adds").

Inference (``games/boxwhist/inference.py``) weighs a sampled deal by how likely the other
seat's moves are under a model of its play: the heuristic's scores, softened
(``games.bots.MODEL``). Against the heuristic that model is exact; against a searching player
it is not. This script learns one from the search bot's own play (self-play):

- ``record``: hands of the search bot against itself (the normal level's budget, no clock, so
  repeatable from the seed), appended one per line as JSON (dealer, deck, the moves'
  positions) as each ends, so that a run stopped early keeps the hands it finished;
- ``measure``: the decisions with a choice in those hands, each move described by a few
  features (``features``: the heuristic's score and whether it is its best, the card's rank,
  trump, box or hand, whether it takes the trick so far, and so on), a conditional logit
  (softmax over the legal moves of the features' weighted sum) fitted by maximum likelihood on
  the first hands (its noise, as ``PlayModel``'s, the likeliest of ``NOISES``) and judged on
  the rest: the held-out log-likelihood per decision and the
  share of decisions whose most likely move is the one made, for the fitted model, the shipped
  model and a uniform one. Then, on the held-out hands as inference uses a model, the share of
  the other seat's unseen hand cards that the weighed deals put in the right hand
  (``inference_accuracy.judge``), for uniform deals, the shipped model and the learned one.

It reads the recorded hands in full (every card): a measure, not a player. The LAST line of
``measure`` is one JSON object.

    python scripts/play_model.py record --hands N --seed S --out FILE [--jobs J]
    python scripts/play_model.py measure FILE [FILE...] [--train-share F] [--samples S] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from duplicate import play_timed  # scripts/duplicate.py
from inference_accuracy import Judged, judge, summary, uniform_share  # scripts/inference_accuracy.py

from p2pwhist.cards import Card
from p2pwhist.games.base import PLAYS, Play
from p2pwhist.games.bots import MODEL, PlayModel, distinct_moves
from p2pwhist.games.boxwhist.engine import trick_strength
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import Replay
from p2pwhist.games.boxwhist.search import RECENT, SearchBot
from p2pwhist.games.registry import GAMES
from p2pwhist.local import shuffled_deck

PLAYERS = 2


def game():
    return GAMES["boxwhist"].make(PLAYERS)


# -- record ------------------------------------------------------------------------------------

def record_hand(task: tuple[int, int], maker=SearchBot) -> dict:
    """One hand of ``maker``'s bots (the search bot at normal's budget with no clock), from the
    hand's number and seed."""
    number, seed = task
    rng = random.Random(seed)
    deck = shuffled_deck(game(), rng)
    dealer = number % PLAYERS
    hand = game().new_hand(dealer, (), deck)
    play_timed(hand, [maker(random.Random(rng.getrandbits(64))) for _ in range(PLAYERS)])
    moves = [play.position for trick in hand.view(0).tricks for play in trick.plays]
    return {"dealer": dealer, "deck": [int(c) for c in deck], "moves": moves}


def record(hands: int, seed: int, out: Path, jobs: int) -> None:
    rng = random.Random(seed)
    tasks = [(number, rng.getrandbits(64)) for number in range(hands)]
    with out.open("a") as file, multiprocessing.get_context("forkserver").Pool(jobs) as pool:
        for done, line in enumerate(pool.imap(record_hand, tasks), 1):
            file.write(json.dumps(line) + "\n")
            file.flush()
            if done % 10 == 0:
                print(f"... {done} of {hands} hands", file=sys.stderr, flush=True)


def replayed(line: dict):
    """The recorded hand's states: (hand before the move, the seat to move, the move's position)."""
    hand = game().new_hand(line["dealer"], (), [Card(c) for c in line["deck"]])
    for position in line["moves"]:
        yield hand, hand.turn, position
        hand.apply(PLAYS[position])


# -- the model ---------------------------------------------------------------------------------

FEATURES = ("heuristic score", "heuristic's best", "rank", "trump", "from the box", "takes the trick so far",
            "lowest of its suit held", "highest of its suit held", "leads: rank", "leads: trump",
            "leads: suit length", "cannot win: rank", "takes: the exposed card's rank", "takes: rank",
            "above an equivalent card in the same place")
NOISES = (0.01, 0.03, 0.1, 0.3)  # the learned model's chance of a move it does not explain: fitted
_HEURISTIC = HeuristicBot(None)  # type: ignore[arg-type]  # weigh never draws randomness


def features(view) -> list[tuple[Play, list[float]]]:
    """Each move the heuristic can judge with its features (``FEATURES``), when it has a choice."""
    weighed = _HEURISTIC.weigh(view)
    if len(weighed) < 2:
        return []
    top = max(score for _, score in weighed)
    hand = {p: int(c) for p, c in view.hand.items() if c is not None}
    box = {p: int(c) for _, p, c in view.box if c is not None}
    cards = {**hand, **box}
    trump = -1 if view.trump is None else int(view.trump)  # a suit's number, as the heuristic reads it
    trick = view.trick
    led = int(trick[0].card) // 13 if trick else -1
    best = max((int(p.card) for p in trick), key=lambda c: trick_strength(c, led, trump)) if trick else None
    prize = 0.0 if view.exposed is None else (int(view.exposed) % 13) / 12
    # Whether a lower card of the move's run is held in the same place: a player who always plays
    # a run's lowest (PIMC and the exact end do, ``bots.distinct_moves``; the 2-player ISMCTS
    # does not) says by each move that it holds none below.
    lowest = set(distinct_moves(view, [move for move, _ in weighed], lambda move: move.position in box))
    out = []
    for move, score in weighed:
        card = cards[move.position]
        suit, rank = card // 13, (card % 13) / 12
        held = [c for c in cards.values() if c // 13 == suit]
        leads = not trick
        takes = not leads and trick_strength(card, led, trump) > trick_strength(best, led, trump)
        length = sum(c // 13 == suit for c in hand.values()) / 13
        out.append((move, [score, float(score == top), rank, float(suit == trump), float(move.position in box),
                           float(takes), float(card == min(held)), float(card == max(held)),
                           rank * leads, float(leads and suit == trump), length * leads,
                           rank * (not leads and not takes), prize * takes, rank * takes,
                           float(move not in lowest)]))
    return out


class Learned:
    """A conditional logit over the moves' features: a move's score is the weights' sum over
    its features, its chance softmax(score) mixed with ``noise`` as ``PlayModel`` mixes it."""

    def __init__(self, weights: list[float], noise: float = MODEL.noise) -> None:
        self.weights = weights
        self.model = PlayModel(1.0, noise)

    def scores(self, view) -> list[tuple[Play, float]]:
        return [(move, logit(self.weights, f)) for move, f in features(view)]


def decisions(lines: list[dict]) -> list[tuple[list[list[float]], int]]:
    """Every decision the heuristic can judge with a choice: the moves' features and the index made."""
    out = []
    for line in lines:
        for hand, turn, position in replayed(line):
            moves = features(hand.view(turn))
            made = next((i for i, (move, _) in enumerate(moves) if move.position == position), None)
            if made is not None:
                out.append(([f for _, f in moves], made))
    return out


def logit(weights: list[float], values: list[float]) -> float:
    """A move's score: its features' values weighed."""
    return sum(w * x for w, x in zip(weights, values, strict=True))


def softmax(weights: list[float], moves: list[list[float]]) -> list[float]:
    """Each move's chance under the logit, before the noise."""
    scores = [logit(weights, f) for f in moves]
    top = max(scores)
    odds = [math.exp(s - top) for s in scores]
    total = sum(odds)
    return [o / total for o in odds]


def log_likelihood(weights: list[float], data, noise: float = 0.0) -> float:
    return sum(math.log((1 - noise) * softmax(weights, moves)[made] + noise / len(moves)) for moves, made in data)


def likeliest_made(weights: list[float], data) -> float:
    """The share of decisions whose likeliest move was the one made (a tie shared: a uniform
    model is right one time in the number of moves)."""
    right = 0.0
    for moves, made in data:
        chances = softmax(weights, moves)
        top = max(chances)
        if chances[made] == top:
            right += 1 / chances.count(top)
    return right / len(data)


def fit(data, l2: float = 1e-3, steps: int = 20) -> list[float]:
    """The conditional logit's weights by maximum likelihood (Newton's method: the log-likelihood
    is concave; a small L2 penalty keeps the weights finite where a feature separates the moves)."""
    n = len(FEATURES)
    weights = [0.0] * n
    for _ in range(steps):
        grad = [-l2 * w for w in weights]
        hessian = [[l2 * (i == j) for j in range(n)] for i in range(n)]  # minus the Hessian
        for moves, made in data:
            chances = softmax(weights, moves)
            mean = [sum(c * f[i] for c, f in zip(chances, moves, strict=True)) for i in range(n)]
            for i in range(n):
                grad[i] += moves[made][i] - mean[i]
            for c, f in zip(chances, moves, strict=True):
                d = [x - m for x, m in zip(f, mean, strict=True)]
                for i in range(n):
                    if d[i]:
                        row, ci = hessian[i], c * d[i]
                        for j in range(n):
                            row[j] += ci * d[j]
        step = solve(hessian, grad)
        weights = [w + d for w, d in zip(weights, step, strict=True)]
        if max(map(abs, step)) < 1e-6:
            break
    return weights


def fit_noise(weights: list[float], data) -> float:
    """Of a few noises, the one under which the data are likeliest (the weights fixed)."""
    return max(NOISES, key=lambda noise: log_likelihood(weights, data, noise))


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b (Gaussian elimination with partial pivoting; a is positive definite)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= factor * m[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def accuracy(lines: list[dict], weighers, samples: int, rng: random.Random) -> list[list[Judged]]:
    """At each decision with a choice after the first trick, in each recorded hand and for each
    seat, how well each weigher's deals place the other seat's unseen hand cards, by hand."""
    judged = []
    for line in lines:
        decisions = []
        for hand, turn, _ in replayed(line):
            if (decision := judge(hand, hand.view(turn), weighers, samples, rng)) is not None:
                decisions.append(decision)
        if decisions:
            judged.append(decisions)
    return judged


def shipped_weights() -> list[float]:
    """The shipped model in this form: the heuristic's score over its temperature."""
    return [1 / MODEL.temperature] + [0.0] * (len(FEATURES) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="hands of the search bot against itself")
    rec.add_argument("--hands", type=int, default=100)
    rec.add_argument("--seed", type=int, default=1)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--jobs", type=int, default=1)
    mea = sub.add_parser("measure", help="fit on the first hands, judge on the rest")
    mea.add_argument("files", type=Path, nargs="+")
    mea.add_argument("--train-share", type=float, default=0.5)
    mea.add_argument("--samples", type=int, default=64)
    mea.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.command == "record":
        record(args.hands, args.seed, args.out, args.jobs)
        return
    lines = [json.loads(text) for path in args.files for text in path.read_text().splitlines() if text]
    cut = int(len(lines) * args.train_share)
    train, held = lines[:cut], lines[cut:]
    fitted = decisions(train)
    weights = fit(fitted)
    noise = fit_noise(weights, fitted)
    data = decisions(held)
    rows = {}
    for name, w, its_noise in (("uniform", [0.0] * len(FEATURES), 0.0),
                               ("shipped", shipped_weights(), MODEL.noise), ("learned", weights, noise)):
        rows[name] = {"log_likelihood": round(log_likelihood(w, data, its_noise) / len(data), 4),
                      "top_share": round(likeliest_made(w, data), 4)}
    learned = Learned(weights, noise)
    weighers = [partial(Replay, recent=RECENT), partial(Replay, recent=RECENT, model=learned.model,
                                                        scorer=learned.scores)]
    judged = accuracy(held, weighers, args.samples, random.Random(args.seed))
    placing = {"uniform": uniform_share(judged), "shipped": summary(judged, 0), "learned": summary(judged, 1)}
    print(f"{len(train)} hands to fit, {len(held)} held out ({len(data)} decisions); noise {noise}, weights:")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name}: {w:+.3f}")
    for name, row in rows.items():
        print(f"  {name}: log-likelihood {row['log_likelihood']} a decision, its likeliest move made "
              f"{row['top_share']:.3f}")
    print(f"  the other seat's unseen hand cards placed right ({sum(map(len, judged))} decisions, {args.samples} "
          f"deals each): uniform {placing['uniform']:.3f}")
    for name in ("shipped", "learned"):
        row = placing[name]
        low, high = row["gain_ci95"]
        print(f"    {name}: {row['accuracy']:.3f}, gain {row['gain']:+.3f} ({low:+.3f} to {high:+.3f}), "
              f"ESS {row['ess']}")
    print(json.dumps({"hands_fit": len(train), "hands_held": len(held), "decisions": len(data),
                      "weights": dict(zip(FEATURES, [round(w, 4) for w in weights], strict=True)),
                      "noise": noise, "likelihood": rows, "placing": placing}))


if __name__ == "__main__":
    main()
