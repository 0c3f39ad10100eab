#!/usr/bin/env python3
"""How fast the endgame solver (``p2pwhist.games.doubledummy``) is, and from how many tricks
left it solves a sampled deal within a move's budget.

Hands of 2-player Box Whist (or, ``--game germanwhist``, German Whist) are played by two
heuristic bots on shuffled decks; once the stack is gone, at each number of tricks left (from
15 in Box Whist, the first trick after the stack, or 13 in German Whist, down to 2)
the true deal (every card known, as a sample is) is solved for the seat to act: every legal
move valued win/draw/loss (one or two null-window searches each), once more with the exact
trick margin. For each number of tricks left it prints the positions solved, the mean and
largest seconds and nodes per solve, and the nodes per second; the LAST line is one JSON object
with the same figures (``by_left``), the overall ``nodes_per_s``, and ``exact_from``: the most
tricks left at which a mean solve took at most ``--budget`` seconds divided by ``--samples``
(the share of a move's time one sampled deal may take).

    python scripts/bench_solver.py [--game boxwhist|germanwhist] [--hands N] [--seed S]
                                   [--budget SECONDS] [--samples K]

In German Whist every card is known once the stack is gone, so a move solves one deal: there
``--samples 1``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.boxwhist.engine import BoxWhistHand
from p2pwhist.games.doubledummy import Position, Solver
from p2pwhist.games.registry import GAMES
from p2pwhist.local import shuffled_deck


def position_of(hand) -> tuple[Position, tuple[int, int]]:
    """The hand's true position at a trick's start, every card known (a script may read the
    state: a bot may not), and the tricks that count won so far."""
    def mask(positions):
        return sum(1 << int(hand.cards[p]) for p in positions)

    trump = hand.trump
    hands = (mask(hand.hands[0]), mask(hand.hands[1]))
    if isinstance(hand, BoxWhistHand):
        return Position(hands=hands, turn=hand.turn, trump=-1 if trump is None else int(trump),
                        reserves=(mask(hand.boxes[0]), mask(hand.boxes[1])),
                        looks=(hand.may_look[0], hand.may_look[1])), tuple(hand.tricks_won)
    return Position(hands=hands, turn=hand.turn, trump=int(trump)), tuple(hand.scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("boxwhist", "germanwhist"), default="boxwhist")
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=0.9, help="a move's seconds")
    parser.add_argument("--samples", type=int, default=20, help="sampled deals a move solves")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    entry = GAMES[args.game]
    game = entry.make(2)
    by_left: dict[int, list[tuple[float, int]]] = {}
    for number in range(args.hands):
        hand = game.new_hand(number % 2, (), shuffled_deck(game, rng))
        bots = [entry.bots["heuristic"](random.Random(rng.random())) for _ in range(2)]
        while not hand.is_over:
            left = 26 - sum(hand.tricks_won)
            if not hand.stack and not hand.trick and left >= 2:
                position, won = position_of(hand)
                solver = Solver(position.trump, rng.randrange(16))
                start = time.perf_counter()
                solver.values(position, won)
                by_left.setdefault(left, []).append((time.perf_counter() - start, solver.nodes))
            seat = hand.turn
            hand.apply(bots[seat].choose(hand.view(seat)))
    rows = {}
    per_sample = args.budget / args.samples
    exact_from = 0
    for left in sorted(by_left, reverse=True):
        runs = by_left[left]
        seconds = [s for s, _ in runs]
        nodes = [n for _, n in runs]
        mean_s = sum(seconds) / len(runs)
        row = {"solves": len(runs), "mean_s": round(mean_s, 5), "max_s": round(max(seconds), 5),
               "mean_nodes": round(sum(nodes) / len(runs)), "max_nodes": max(nodes),
               "nodes_per_s": round(sum(nodes) / sum(seconds))}
        rows[left] = row
        if not exact_from and mean_s <= per_sample:
            exact_from = left
        print(f"{left:2d} tricks left: {row['solves']} solves, {mean_s:.4f} s mean, {row['max_s']:.4f} s max, "
              f"{row['mean_nodes']} nodes mean, {row['max_nodes']} max, {row['nodes_per_s']} nodes/s")
    total_nodes = sum(n for runs in by_left.values() for _, n in runs)
    total_s = sum(s for runs in by_left.values() for s, _ in runs)
    print(json.dumps({"game": args.game, "by_left": rows, "nodes_per_s": round(total_nodes / total_s),
                      "exact_from": exact_from, "budget_s": args.budget, "samples": args.samples,
                      "hands": args.hands, "seed": args.seed}))


if __name__ == "__main__":
    main()
