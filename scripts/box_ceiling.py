#!/usr/bin/env python3
"""What knowing more would be worth to the Box search bot: 4-player Box, search against three
heuristic bots in duplicate (``scripts/duplicate.py``'s rotation), the search bot sampling its
deals from what it may know (``view``) or, to measure a ceiling, from the true cards:

- ``hands``: every other seat's hand is the true one; the boxes (its own included) and the pile
  are sampled from the rest, as the bot would;
- ``all``: every card is the true one (the boxes and the pile order too: nobody may know them).

Under the seed rules the only choice that matters is which card to lay (``games/box/heuristic.py``
(a)); the figures say whether a better guess at the hidden cards could make that choice pay.
Same deals and seeds for every mode. The LAST line is one JSON object.

    python scripts/box_ceiling.py [--modes view,hands,all] [--deals N] [--variant seed|pagat]
                                  [--playouts P] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duplicate  # scripts/duplicate.py

from p2pwhist.games.box.search import BoxKnowledge, BoxSearchBot
from p2pwhist.games.registry import GAMES

PLAYERS = 4


class Truth:
    """The game being played, so that a seeing bot can read its cards."""

    hand = None


def seeing(mode: str) -> type[BoxSearchBot]:
    """A search bot whose samples are true to the game in ``mode``'s places."""

    class Seeing(BoxSearchBot):
        def knowledge(self, view) -> BoxKnowledge:
            k = BoxKnowledge(view)
            sample = k.sample
            cards = Truth.hand.cards
            if mode == "all":
                k.sample = lambda rng: {p: int(cards[p]) for p in k.unknown}
            elif mode == "hands":
                hands = {p for h in Truth.hand.hands for p in h}

                def sample_boxes_and_pile(rng: random.Random) -> dict[int, int]:
                    true = {p: int(cards[p]) for p in k.unknown if p in hands}
                    rest = [c for c in k.cards if c not in set(true.values())]
                    rng.shuffle(rest)
                    return true | dict(zip([p for p in k.unknown if p not in hands], rest, strict=True))

                k.sample = sample_boxes_and_pile
            else:
                k.sample = sample
            return k

    return Seeing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="view,hands,all")
    parser.add_argument("--deals", type=int, default=80)
    parser.add_argument("--variant", choices=("seed", "pagat"), default="seed")
    parser.add_argument("--playouts", type=int, default=BoxSearchBot.budgets["normal"].playouts)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    play_timed = duplicate.play_timed

    def remember(hand, bots):
        Truth.hand = hand
        return play_timed(hand, bots)

    duplicate.play_timed = remember
    results = []
    for mode in args.modes.split(","):
        setting = duplicate.Setting("box", tuple(duplicate.all_options(GAMES["box"], args.variant).items()), PLAYERS,
                                    duplicate.BotSpec("search", maker=seeing(mode)), duplicate.BotSpec("heuristic"),
                                    args.playouts, None)
        r = duplicate.rotation(setting, args.deals, args.seed)
        r["knows"] = mode
        results.append(r)
        print(f"search knowing {mode}, {args.variant} rules: {duplicate.figures(r)}; {r['seconds']} s", flush=True)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
