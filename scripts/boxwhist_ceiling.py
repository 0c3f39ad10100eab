#!/usr/bin/env python3
"""What knowing more would be worth to Box Whist's PIMC (``games/boxwhist/search.py``, its search
with the heuristic's playouts): in duplicate against the heuristic (``scripts/duplicate.py``'s
pairs at 2 players, its rotations at 3 and 4), the bot playing its deals out not on sampled
deals but, to measure a ceiling, on the true one:

- ``hands``: the other seats' hands and every box are the true ones; the face-down stack is
  shuffled afresh for each deal played (nobody may know its order);
- ``all``: every card is the true one, the stack's order too.

It reads the game's hidden state (``view._state``), which no real bot may: it is a measure of how
much better inference could make the search (issue 25), not a player. Same deals and seeds for
each mode. The LAST line is one JSON object.

    python scripts/boxwhist_ceiling.py [--players N] [--modes hands,all] [--pairs N] [--playouts P] [--seed S]
                                       [--jobs J]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplicate import BotSpec, Setting, duel, figures, rotation  # scripts/duplicate.py

from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import PLAYOUT_COST, SearchBot, _distinct, heuristic_playout


def true_deal(hand, moves: list[Play], seat: int, shuffle_stack: bool, rng: random.Random):
    """The true deal (its face-down stack shuffled if ``shuffle_stack``); returns how move i
    scores on it, played out by the heuristic for every seat, as ``search.heuristic_deal``."""
    hand = hand.clone()
    if shuffle_stack:
        hidden = hand.stack[1:]
        cards = [hand.cards[p] for p in hidden]
        rng.shuffle(cards)
        for p, card in zip(hidden, cards, strict=True):
            hand.cards[p] = card
    policy = HeuristicBot(rng)
    return lambda i: heuristic_playout(hand, moves[i], policy, seat, policy)


class Seeing(SearchBot):
    """PIMC on the true deal (see the module docstring), at the budget's playouts."""

    def __init__(self, rng: random.Random, knows: str = "hands", **budget) -> None:
        super().__init__(rng, **budget)
        self.knows = knows

    def choose(self, view) -> Play:
        obvious = self.obvious(view)
        if obvious is not None:
            return obvious
        distinct = _distinct(view, view.legal_moves)
        job = (view._state, distinct, view.seat, self.knows == "hands")
        return distinct[self.vote(len(distinct), true_deal, job, playouts=max(1, self.playouts // PLAYOUT_COST))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="hands,all")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--pairs", type=int, default=60, help="deals (pairs at 2 players, else rotations)")
    parser.add_argument("--playouts", type=int, default=SearchBot.budgets["normal"].playouts,
                        help="the budget in ISMCTS iterations, as the levels' (default: normal's)")
    parser.add_argument("--seed", type=int, default=901)
    parser.add_argument("--jobs", type=int, default=1, help="deals played at once, each in a process (default 1)")
    args = parser.parse_args()
    results = []
    for mode in args.modes.split(","):
        setting = Setting("boxwhist", (), args.players, BotSpec("seeing", (("knows", mode),), maker=Seeing),
                          BotSpec("heuristic"), args.playouts, None)
        r = (duel if args.players == 2 else rotation)(setting, args.pairs, args.seed, args.jobs)
        r["knows"] = mode
        results.append(r)
        print(f"PIMC knowing {mode}: {figures(r)}", flush=True)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
