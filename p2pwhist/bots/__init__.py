"""Computer players. A bot sees only its seat's view and returns one of its legal moves.

Bots take their randomness as a ``random.Random`` passed in, so a run is repeatable from its
seed and nothing here touches global state.
"""

from __future__ import annotations

import random
from typing import Callable, Protocol

from p2pwhist.games.base import Play


class Bot(Protocol):
    def choose(self, view) -> Play:  # the game's view type, e.g. BoxWhistView
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view) -> Play:
        return self.rng.choice(view.legal_moves)


def _heuristic(rng: random.Random) -> Bot:
    from p2pwhist.bots.heuristic import HeuristicBot

    return HeuristicBot(rng)


BOTS: dict[str, Callable[[random.Random], Bot]] = {"random": RandomBot, "heuristic": _heuristic}
