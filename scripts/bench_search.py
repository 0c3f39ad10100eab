#!/usr/bin/env python3
"""How fast the Box Whist search bot thinks: ISMCTS iterations a second, on one core.

For ``--hands`` shuffled 2-player deals, at the hand's first decision (where a playout runs the
whole hand, so an iteration costs most) and again after ``--later`` moves of the heuristic, it
runs one part of the search (``search.search_part``) for ``--iterations`` iterations, with the
deals drawn uniformly and again weighed by inference (``inference.Replay``), and times it.
No clock reaches the bot: the iterations, not the time, decide, so two versions of the code
run the same searches (compare them in one run: ``farm-bench --vs``, or this script under each
version's PYTHONPATH one after the other on a quiet machine).

Prints one line per setting, then, as its LAST line, one JSON object with iterations a second
for each (``start_uniform``, ``start_inference``, ``later_uniform``, ``later_inference``).

    python scripts/bench_search.py [--hands N] [--iterations N] [--later N] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.inference import Replay
from p2pwhist.games.boxwhist.search import RECENT, UCT, Knowledge, search_part
from p2pwhist.games.registry import GAMES
from p2pwhist.local import shuffled_deck


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--later", type=int, default=12, help="heuristic moves before the second decision timed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    game = GAMES["boxwhist"].make(2)
    rng = random.Random(args.seed)
    spent: dict[str, float] = {}
    for number in range(args.hands):
        hand = game.new_hand(number % 2, (), shuffled_deck(game, rng))
        heuristic = HeuristicBot(random.Random(number))
        for when, moves in (("start", 0), ("later", args.later)):
            for _ in range(moves):
                hand.apply(heuristic.choose(hand.view(hand.turn)))
            view = hand.view(hand.turn)
            for how in ("uniform", "inference"):
                start = time.perf_counter()
                replay = Replay(view, RECENT) if how == "inference" else None
                search_part(Knowledge(view), replay, args.iterations, number, UCT, None, None)
                key = f"{when}_{how}"
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
    figures = {key: round(args.hands * args.iterations / seconds) for key, seconds in spent.items()}
    for key, rate in figures.items():
        print(f"{key}: {rate} iterations a second ({args.hands} decisions of {args.iterations})")
    print(json.dumps({"iterations_per_s": figures, "hands": args.hands, "iterations": args.iterations}))


if __name__ == "__main__":
    main()
