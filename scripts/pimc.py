"""PIMC for 2-player Box Whist: the baseline the search bot is measured against
(``scripts/compare_search.py``, whose docstring says what it is and why)."""

from __future__ import annotations

import random
from collections.abc import Callable

from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist.search import Knowledge, SearchBot, _playout, _score, _Sim

# PIMC's playouts at the normal level when it was the shipped search (500 over all legal moves).
PIMC_NORMAL = 500


class PIMCBot(SearchBot):
    """PIMC over sampled deals with greedy playouts (see the module docstring): ``SearchBot``
    with its search replaced, ``playouts`` counting playouts over all legal moves."""

    def choose(self, view) -> Play:
        obvious = self.obvious(view)
        if obvious is not None:
            return obvious
        moves = view.legal_moves
        k = Knowledge(view)
        return moves[self.vote(len(moves), _pimc_deal, (k, moves))]


def _pimc_deal(k: Knowledge, moves: list[Play], rng: random.Random) -> Callable[[int], float]:
    """One deal sampled from ``k``; returns how move i scores on it, played out greedily."""
    hands, boxes, stack, my_box = k.sample(rng)
    cards_at = {**k.hand, **my_box}

    def play(i: int) -> float:
        sim = _Sim(k.players, k.trump, [h[:] for h in hands], [b[:] for b in boxes], k.may_look[:], stack[:],
                   k.trick[:], k.turn, k.tricks_won[:])  # the deal afresh for each move
        sim.apply(cards_at[moves[i].position])
        _playout(sim, rng)
        return _score(sim.won, k.seat)

    return play
