#!/usr/bin/env python3
"""What knowing more would be worth to Box Whist's search bot (``games/boxwhist/search.py``): in
duplicate against the heuristic (``scripts/duplicate.py``'s pairs at 2 players, its rotations
at 3 and 4), the bot searching not on sampled deals but, to measure a ceiling, on the true one:

- ``hands``: the other seats' hands and every box are the true ones; the face-down stack is
  shuffled afresh for each deal played (nobody may know its order);
- ``all``: every card is the true one, the stack's order too.

``--searcher pimc`` (the default) is its PIMC, each move played out by the heuristic on the true
deal; ``ismcts`` is the search as it plays at 2 players (ISMCTS, and the end solved exactly), its
sampled deals all the true one (the stack shuffled for ``hands``), uniform (no inference).

Against the heuristic by default; ``--opponent search`` measures it against the search bot (at the
same budget, no clock): how far ahead of the search bot knowing the cards puts one.

It reads the game's hidden state (``view._state``), which no real bot may: it is a measure of how
much better inference could make the search (issue 25), not a player. Same deals and seeds for
each mode. The LAST line is one JSON object.

    python scripts/boxwhist_ceiling.py [--players N] [--modes hands,all] [--pairs N] [--playouts P]
                                       [--pimc-playouts P] [--seed S] [--jobs J] [--opponent BOT]
                                       [--searcher pimc|ismcts]
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
from p2pwhist.games.boxwhist import search
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import Knowledge, SearchBot, _distinct, heuristic_playout


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
        return distinct[self.vote(len(distinct), true_deal, job, playouts=self.pimc_playouts)]


class SeeingSearch(SearchBot):
    """The search bot as it plays at 2 players (ISMCTS, the end solved), every deal it samples the
    true one (see the module docstring)."""

    def __init__(self, rng: random.Random, knows: str = "hands", **budget) -> None:
        super().__init__(rng, inference=False, pimc=False, **budget)
        self.knows = knows

    def choose(self, view) -> Play:
        hand, shuffle_stack = view._state, self.knows == "hands"

        class Told(Knowledge):
            def sample(self, rng: random.Random) -> tuple:
                hands = [[int(hand.cards[p]) for p in places] for places in hand.hands]
                boxes = [[int(hand.cards[p]) for p in places] for places in hand.boxes]
                boxes[self.seat] = [int(hand.cards[p]) for p, _ in self.box]  # in the order the search keeps
                face_down = [int(hand.cards[p]) for p in hand.stack[1:]]
                if shuffle_stack:
                    rng.shuffle(face_down)
                stack = [int(hand.cards[hand.stack[0]]), *face_down] if hand.stack else []
                return hands, boxes, stack, dict(zip([p for p, _ in self.box], boxes[self.seat], strict=True))

        search.Knowledge = Told  # for this move only: the opponent may be a search bot in this process
        try:
            return super().choose(view)
        finally:
            search.Knowledge = Knowledge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="hands,all")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--pairs", type=int, default=60, help="deals (pairs at 2 players, else rotations)")
    normal = SearchBot.budgets["normal"]
    parser.add_argument("--playouts", type=int, default=normal.playouts,
                        help="ISMCTS's iterations a move, as the levels' (default: normal's)")
    parser.add_argument("--pimc-playouts", type=int, default=dict(normal.counts)["pimc_playouts"],
                        help="PIMC's playouts a move, as the levels' (default: normal's)")
    parser.add_argument("--seed", type=int, default=901)
    parser.add_argument("--jobs", type=int, default=1, help="deals played at once, each in a process (default 1)")
    parser.add_argument("--searcher", choices=("pimc", "ismcts"), default="pimc",
                        help="the search that sees: PIMC (default) or ISMCTS with the end solved")
    parser.add_argument("--opponent", default="heuristic",
                        help="one of the game's bots, with its switches if any (default: heuristic)")
    args = parser.parse_args()
    results = []
    for mode in args.modes.split(","):
        maker = Seeing if args.searcher == "pimc" else SeeingSearch
        counts = (("pimc_playouts", args.pimc_playouts),)
        opponent = BotSpec.parse(args.opponent)
        if opponent.name == "search":  # at the same budget
            opponent = BotSpec(opponent.name, (*counts, *opponent.kwargs))
        setting = Setting("boxwhist", (), args.players, BotSpec("seeing", (("knows", mode), *counts), maker=maker),
                          opponent, args.playouts, None)
        r = (duel if args.players == 2 else rotation)(setting, args.pairs, args.seed, args.jobs)
        r["knows"] = mode
        r["opponent"], r["searcher"] = args.opponent, args.searcher
        results.append(r)
        print(f"{args.searcher} knowing {mode}: {figures(r)}", flush=True)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
