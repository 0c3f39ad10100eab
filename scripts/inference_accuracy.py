#!/usr/bin/env python3
"""How well Box Whist's inference places the cards it cannot see (``games/boxwhist/inference.py``):
for models of play (``games.bots.PlayModel``) side by side on the same positions, the share of
the other seats' unseen hand cards that the deals it weighs put in the right hand, against
uniform deals.

Hands are played by the heuristic in every seat (with ``--noisy P`` the other seats play a
random legal move with chance P instead: players the model does not describe). At each decision
of seat 0 with a choice after the first trick, ``--samples`` deals are sampled as the search bot
samples them (``search.Knowledge``) and weighed by ``inference.Replay`` under each model; a
model's accuracy is the weighted mean share of the unseen hand cards dealt to the right seat
(uniform: the plain mean), which estimates what its posterior knows. Its effective sample size
(ESS, (sum w)^2 / sum w^2) says how many of the deals its weights keep. The gain over uniform
has a 95% interval by hand (a hand's decisions are not independent). The LAST line is one JSON
object.

It reads the hidden hands to score the deals (``hand.view`` of every seat): a measure, not a
player.

    python scripts/inference_accuracy.py [--players N] [--hands H] [--samples S] [--recent R]
                                         [--models T/N,T/N] [--noisy P] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from duplicate import Z95  # scripts/duplicate.py

from p2pwhist.games.bots import MODEL, PlayModel
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import Replay
from p2pwhist.games.boxwhist.search import RECENT, Knowledge
from p2pwhist.games.registry import GAMES
from p2pwhist.local import shuffled_deck

SEAT = 0  # the seat whose inference is measured


def parse_model(text: str) -> PlayModel:
    temperature, _, noise = text.partition("/")
    return PlayModel(float(temperature), float(noise))


def placed_right(k: Knowledge, deal: tuple, truth: list[set[int]]) -> float:
    """The share of the other seats' unseen hand cards that ``deal`` gives to the right seat."""
    hands = deal[0]
    placed = right = 0
    for j in range(k.players):
        if j != k.seat:
            unseen = hands[j][len(k.known[j]):]
            placed += len(unseen)
            right += sum(card in truth[j] for card in unseen)
    return right / placed


# One decision judged: the uniform deals' share placed right, and each model's (share, ESS).
Judged = tuple[float, list[tuple[float, float]]]


def judge(hand, view, weighers: list[Callable[[Any], Replay]], samples: int, rng: random.Random) -> Judged | None:
    """``samples`` deals sampled from what ``view``'s seat knows, scored against ``hand``'s true
    hands, plainly and weighed by each model (a weigher makes its ``Replay`` of a view); None
    when there is nothing to judge: no choice, no trick played yet, or no other seat's hand
    holding an unseen card."""
    if len(view.legal_moves) < 2 or not view.tricks:
        return None
    k = Knowledge(view)
    if not any(k.unknown_hand):
        return None
    truth = [{int(c) for c in hand.view(j).hand.values()} for j in range(k.players)]
    deals = [k.sample(rng) for _ in range(samples)]
    right = [placed_right(k, deal, truth) for deal in deals]
    uniform = statistics.fmean(right)
    by_model = []
    for weigher in weighers:
        replay = weigher(view)
        weights = [replay.weight(replay.deck(*deal, k.known)) for deal in deals]
        total = sum(weights)
        if total:
            accuracy = sum(w * r for w, r in zip(weights, right, strict=True)) / total
            by_model.append((accuracy, total * total / sum(w * w for w in weights)))
        else:  # every deal ruled out: the model says nothing
            by_model.append((uniform, samples))
    return uniform, by_model


def measure(players: int, hands: int, samples: int, recent: int, models: list[PlayModel], noisy: float,
            seed: int) -> dict:
    game = GAMES["boxwhist"].make(players)
    rng = random.Random(seed)
    weighers = [partial(Replay, recent=recent, model=model) for model in models]
    judged: list[list[Judged]] = []  # by hand, its decisions
    for number in range(hands):
        hand = game.new_hand(number % players, (), shuffled_deck(game, rng))
        bots = [HeuristicBot(random.Random(rng.getrandbits(64))) for _ in range(players)]
        decisions: list[Judged] = []
        while (turn := hand.turn) is not None:
            view = hand.view(turn)
            if turn == SEAT and (decision := judge(hand, view, weighers, samples, rng)) is not None:
                decisions.append(decision)
            if turn != SEAT and rng.random() < noisy:
                hand.apply(rng.choice(view.legal_moves))
            else:
                hand.apply(bots[turn].choose(view))
        if decisions:
            judged.append(decisions)
    rows = [{"temperature": model.temperature, "noise": model.noise, **summary(judged, i)}
            for i, model in enumerate(models)]
    return {"players": players, "hands": hands, "decisions": sum(map(len, judged)), "samples": samples,
            "recent": recent, "noisy": noisy, "seed": seed, "uniform": uniform_share(judged), "models": rows}


def uniform_share(judged: list[list[Judged]]) -> float:
    """The uniform deals' mean share placed right, over every decision judged."""
    return round(statistics.fmean(uniform for decisions in judged for uniform, _ in decisions), 4)


def summary(judged: list[list[Judged]], i: int) -> dict:
    """Model ``i``'s figures over decisions judged by hand: its mean share placed right, its gain
    on uniform deals with a 95% interval by hand, and its mean ESS."""
    every = [by_model[i] for decisions in judged for _, by_model in decisions]
    gains = [statistics.fmean(by_model[i][0] - uniform for uniform, by_model in decisions) for decisions in judged]
    mean = statistics.fmean(gains)
    half = Z95 * statistics.stdev(gains) / math.sqrt(len(gains)) if len(gains) > 1 else math.inf
    return {"accuracy": round(statistics.fmean(share for share, _ in every), 4), "gain": round(mean, 4),
            "gain_ci95": [round(mean - half, 4), round(mean + half, 4)],
            "ess": round(statistics.fmean(ess for _, ess in every), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4)
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--samples", type=int, default=64, help="deals weighed at each decision")
    parser.add_argument("--recent", type=int, default=RECENT, help="the other seats' last choices asked")
    parser.add_argument("--models", default=f"{MODEL.temperature}/{MODEL.noise},0.001/0.001",
                        help="temperature/noise pairs, separated by ',' (default: the shipped model and a sharp one)")
    parser.add_argument("--noisy", type=float, default=0.0, help="the other seats' chance of a random move")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.hands < 2 or args.samples < 1 or args.recent < 1 or not 0 <= args.noisy <= 1:
        parser.error("--hands takes at least 2 (an interval by hand), --samples and --recent at least 1, "
                     "--noisy a chance from 0 to 1")
    try:
        models = [parse_model(text) for text in args.models.split(",")]
    except ValueError:
        parser.error(f"--models takes temperature/noise pairs such as 0.1/0.1, not {args.models!r}")
    r = measure(args.players, args.hands, args.samples, args.recent, models, args.noisy, args.seed)
    print(f"{r['players']} players, {r['hands']} hands, {r['decisions']} decisions, {r['samples']} deals each, "
          f"last {r['recent']} choices asked, random moves {r['noisy']:.0%}: uniform places {r['uniform']:.3f}")
    for row in r["models"]:
        low, high = row["gain_ci95"]
        print(f"  model {row['temperature']}/{row['noise']}: {row['accuracy']:.3f}, gain {row['gain']:+.3f} "
              f"({low:+.3f} to {high:+.3f}), ESS {row['ess']}")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
