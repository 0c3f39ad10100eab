"""Computer players. A bot sees only its seat's view and returns one of its legal moves.

Which bots a game has is said by its registry entry (``p2pwhist.games.GAMES``); ``RandomBot``
plays any game.

Bots take their randomness as a ``random.Random`` passed in, so a run is repeatable from its
seed and nothing here touches global state.
"""

from __future__ import annotations

import random
from typing import Protocol

from p2pwhist.games.base import Play, View


class Bot(Protocol):
    def choose(self, view: View) -> Play:  # the game's own view type
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: View) -> Play:
        return self.rng.choice(view.legal_moves)
