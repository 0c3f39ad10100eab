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
from pathlib import Path

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


def measure(players: int, hands: int, samples: int, recent: int, models: list[PlayModel], noisy: float,
            seed: int) -> dict:
    game = GAMES["boxwhist"].make(players)
    rng = random.Random(seed)
    gains: list[list[float]] = [[] for _ in models]  # per hand: the mean gain over uniform
    uniform_all: list[float] = []
    accuracy_all: list[list[float]] = [[] for _ in models]
    ess_all: list[list[float]] = [[] for _ in models]
    for number in range(hands):
        hand = game.new_hand(number % players, (), shuffled_deck(game, rng))
        bots = [HeuristicBot(random.Random(rng.getrandbits(64))) for _ in range(players)]
        hand_gains: list[list[float]] = [[] for _ in models]
        while (turn := hand.turn) is not None:
            view = hand.view(turn)
            if turn == SEAT and len(view.legal_moves) > 1 and view.tricks:
                k = Knowledge(view)
                if any(k.unknown_hand):
                    truth = [{int(c) for c in hand.view(j).hand.values()} for j in range(players)]
                    deals = [k.sample(rng) for _ in range(samples)]
                    right = [placed_right(k, deal, truth) for deal in deals]
                    uniform = statistics.fmean(right)
                    uniform_all.append(uniform)
                    for i, model in enumerate(models):
                        replay = Replay(view, recent, model)
                        weights = [replay.weight(replay.deck(*deal, k.known)) for deal in deals]
                        total = sum(weights)
                        accuracy = sum(w * r for w, r in zip(weights, right, strict=True)) / total if total else uniform
                        accuracy_all[i].append(accuracy)
                        ess_all[i].append(total * total / sum(w * w for w in weights) if total else samples)
                        hand_gains[i].append(accuracy - uniform)
            if turn != SEAT and rng.random() < noisy:
                hand.apply(rng.choice(view.legal_moves))
            else:
                hand.apply(bots[turn].choose(view))
        for i in range(len(models)):
            if hand_gains[i]:
                gains[i].append(statistics.fmean(hand_gains[i]))
    rows = []
    for i, model in enumerate(models):
        mean = statistics.fmean(gains[i])
        half = Z95 * statistics.stdev(gains[i]) / math.sqrt(len(gains[i])) if len(gains[i]) > 1 else math.inf
        rows.append({"temperature": model.temperature, "noise": model.noise,
                     "accuracy": round(statistics.fmean(accuracy_all[i]), 4),
                     "gain": round(mean, 4), "gain_ci95": [round(mean - half, 4), round(mean + half, 4)],
                     "ess": round(statistics.fmean(ess_all[i]), 1)})
    return {"players": players, "hands": hands, "decisions": len(uniform_all), "samples": samples, "recent": recent,
            "noisy": noisy, "seed": seed, "uniform": round(statistics.fmean(uniform_all), 4), "models": rows}


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
