"""The end of a two-seat whist hand searched over several sampled deals at once, the searching
seat's moves shared by all of them: less strategy fusion than solving each deal alone.

Solving each sampled deal on its own (``doubledummy``, then a vote, as PIMC does) lets the
searching seat play each deal as if it could see every card: it "knows" later which deal it is
in. That flaw is strategy fusion (Frank and Basin, "Search in games with incomplete
information", AI 100, 1998). Here the seat's next ``depth`` decisions are made once for all the
deals (its information set: every deal agrees on what it has seen), while the other seat, who
sees its own cards, replies deal by deal. Each line of play is valued as a vector, one entry a
deal; the searching seat picks the move whose vector has the best weighted mean, the other seat
takes each deal's minimum over its moves legal in that deal. After ``depth`` decisions each deal
is solved on its own (``Solver.outcome``). This is vector minimax, the one-vector form of αμ
(Cazenave and Ventos, "The αμ search algorithm for the game of Bridge", 2019), where
``depth`` = 1 is PIMC.

The cost grows as (moves × replies) to the power ``depth``, each leaf one solve a deal (the
solvers keep their tables between leaves): the caller keeps it to the last few tricks.

Pure: the deals come in with their weights and solvers, values go out. ``stop``, if given, is
asked every ``STOP_EVERY`` lines searched whether to give up (``OutOfTime``), as the solvers'
own ``stop`` is: no clock here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2pwhist.games.doubledummy import OutOfTime, Position, Solver, strength, without

__all__ = ["Deal", "joint_values"]

STOP_EVERY = 256


@dataclass(frozen=True, slots=True)
class Deal:
    """One sampled deal: card masks by seat, its weight, and the solver that serves it (its
    ``blind_pick`` fixes the deal's blind plays)."""

    hands: tuple[int, int]
    reserves: tuple[int, int]
    weight: float
    solver: Solver


def joint_values(deals: list[Deal], me: int, trump: int, looks: tuple[bool, bool], led: int,
                 won: tuple[int, int], depth: int, stop: Callable[[], bool] | None = None) -> dict[int, float]:
    """For each card ``me`` (the seat to act) may play, its weighted mean value over ``deals``
    (+1 the hand won, 0 drawn, -1 lost) when ``me``'s next ``depth`` decisions (this one
    included) are made once for every deal and the rest of the hand is played deal by deal,
    both seats at their best. ``me``'s own cards must be the same in every deal."""
    search = _Joint(deals, me, trump, stop)
    states = [(deal.hands, deal.reserves) for deal in deals]
    looking = int(looks[0]) | int(looks[1]) << 1
    first = deals[0]
    out: dict[int, float] = {}
    for run in first.solver.runs(first.hands, first.reserves, looking, me, led):
        vector = search.play(states, me, run[0], looking, led, won, depth - 1)
        for card in run:
            out[card] = search.mean(vector)
    return out


class _Joint:
    def __init__(self, deals: list[Deal], me: int, trump: int, stop: Callable[[], bool] | None) -> None:
        self.deals, self.me, self.trump, self.stop = deals, me, trump, stop
        self.lines = 0  # lines of play searched, for ``stop``
        self.weights = [deal.weight for deal in deals]
        self.total = sum(self.weights) or 1.0

    def mean(self, vector: list[float | None]) -> float:
        return sum(w * v for w, v in zip(self.weights, vector, strict=True) if v is not None) / self.total

    def value(self, states: list, turn: int, looks: int, led: int, won: tuple[int, int], depth: int
              ) -> list[float | None]:
        """The vector from here (None for a deal this line cannot reach)."""
        self.lines += 1
        if self.stop is not None and self.lines % STOP_EVERY == 0 and self.stop():
            raise OutOfTime
        live = [i for i, state in enumerate(states) if state is not None]
        hands, reserves = states[live[0]]
        if not (hands[0] | hands[1] | reserves[0] | reserves[1]) and led < 0:
            mine, theirs = won[self.me], won[1 - self.me]
            result = 1.0 if mine > theirs else 0.0 if mine == theirs else -1.0
            return [None if state is None else result for state in states]
        if turn == self.me:
            if depth == 0:
                out: list[float | None] = [None] * len(states)
                for i in live:
                    hands, reserves = states[i]
                    position = Position(hands=hands, turn=turn, trump=self.trump, reserves=reserves,
                                        looks=(bool(looks & 1), bool(looks & 2)), led=led)
                    out[i] = self.deals[i].solver.outcome(position, won)
                return out
            best: list[float | None] | None = None
            best_mean = -2.0
            for run in self.deals[live[0]].solver.runs(hands, reserves, looks, turn, led):
                vector = self.play(states, turn, run[0], looks, led, won, depth - 1)
                mean = self.mean(vector)
                if mean > best_mean:
                    best, best_mean = vector, mean
            return best  # type: ignore[return-value]
        # The other seat sees its cards: in each deal, its best reply there.
        replies: dict[int, list[int]] = {}  # card -> the deals it is a move in
        for i in live:
            hands, reserves = states[i]
            for run in self.deals[i].solver.runs(hands, reserves, looks, turn, led):
                replies.setdefault(run[0], []).append(i)
        out = [None] * len(states)
        for card, where in replies.items():
            reached = [states[i] if i in where else None for i in range(len(states))]
            vector = self.play(reached, turn, card, looks, led, won, depth)
            for i in where:
                value = vector[i]
                if out[i] is None or value < out[i]:  # type: ignore[operator]
                    out[i] = value
        return out

    def play(self, states: list, turn: int, card: int, looks: int, led: int, won: tuple[int, int], depth: int
             ) -> list[float | None]:
        after = [None if state is None else without(state[0], state[1], turn, card) for state in states]
        if led < 0:
            return self.value(after, 1 - turn, looks, card, won, depth)
        suit = led // 13
        winner = turn if strength(card, suit, self.trump) > strength(led, suit, self.trump) else 1 - turn
        taken = (won[0] + (winner == 0), won[1] + (winner == 1))
        return self.value(after, winner, looks | 1 << winner, -1, taken, depth)
