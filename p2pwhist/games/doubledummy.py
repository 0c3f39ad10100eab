"""The end of a two-seat whist hand solved exactly, every card known ("double dummy").

A searching bot samples the cards it cannot see; once the stack is gone, each sample is small
enough to play perfectly. This module finds, for one sampled deal, what each move of the seat
to act is worth under best play by both seats: alpha-beta over the tricks still to play, with
a transposition table at each trick's start and equivalent cards merged (two cards of a suit
in the same place with no card still in play between them win and lose the same tricks). It is
the technique of bridge's double-dummy solvers and of OpenSpiel's German Whist endgame, in
plain ints: a card is its code (``suit * 13 + rank - 2``), a set of cards a bit mask.

The rules it plays are whist's, with the one addition both games here need:

- a seat follows the suit led from its hand if it can (on honour in the game: here every card
  is known, so the sample obeys it); leads come from the hand;
- a seat may hold a *reserve* (Box Whist's box, rule 7): cards it may play only when it cannot
  follow from its hand, and only once it may look at them (it has won a trick); once its hand
  is empty it plays from the reserve, blind while it may not look. A blind card is one the seat
  cannot choose: the solver plays the one ``blind_pick`` names, fixed per sample, which over
  random samples is a random card, as the game's own blind play is;
- the trick goes to the highest trump, else the highest card of the suit led; its winner leads
  next and may look at its reserve from then on.

German Whist has no reserve: its positions give empty ones. A position must be at a trick's
start or after its first card, with both seats holding the same number of cards once that
trick is done (no stack left to draw from).

Pure: no clock, no randomness (``blind_pick`` comes in). ``nodes`` counts the positions
searched, for ``scripts/bench_solver.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MARGIN", "OutOfTime", "Position", "Solver", "equivalent_runs", "strength", "without"]

# Each trick a seat ends ahead by adds this much to a won (or drawn) hand's value, when asked
# for: it orders moves that win (or lose) alike.
MARGIN = 0.02

_SUIT = tuple(((1 << 13) - 1) << (13 * suit) for suit in range(4))
_SUIT_OF = tuple(card // 13 for card in range(52))


def _cards(mask: int) -> list[int]:
    """The card codes in ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(frozen=True, slots=True)
class Position:
    """A two-seat position with every card known. ``hands`` and ``reserves`` are card masks by
    seat; ``looks`` says whether each seat may look at its reserve; ``led`` is the card on the
    table (played by the other seat) or -1 at a trick's start; ``trump`` a suit or -1."""

    hands: tuple[int, int]
    turn: int
    trump: int
    reserves: tuple[int, int] = (0, 0)
    looks: tuple[bool, bool] = (True, True)
    led: int = -1


class OutOfTime(Exception):
    """The solver's ``stop`` said to stop: the deal is left unsolved."""


# How many positions the solver searches between two questions to its ``stop``.
_STOP_EVERY = 4096


class Solver:
    """Exact values of the moves of one position's seat to act, under best play by both. One
    solver serves one sample (its table holds that deal's positions): ask it ``values``.
    ``stop``, if given, is asked every few thousand positions whether to give up (``OutOfTime``):
    a caller's deadline, kept outside so that the solver reads no clock."""

    def __init__(self, trump: int, blind_pick: int = 0, stop: Callable[[], bool] | None = None) -> None:
        self.trump = trump
        self.blind_pick = blind_pick
        self.stop = stop
        self.nodes = 0
        self._next_stop = _STOP_EVERY
        self._table: dict[tuple[int, int, int, int, int, int], tuple[int, int]] = {}

    def values(self, position: Position, won: tuple[int, int] = (0, 0), exact: bool = False
               ) -> dict[int, float]:
        """For every card the seat to act may play, what the hand is then worth to it under best
        play by both: +1 if it ends with more tricks than the other seat (``won`` counts those
        already taken), 0 as many, -1 fewer. With ``exact``, plus ``margin`` times the tricks
        it ends ahead by (the more costly question: every move's exact trick count)."""
        me = position.turn
        hands, reserves, led = position.hands, position.reserves, position.led
        looks = position.looks[0] | position.looks[1] << 1
        remaining, ahead, win, tie = _thresholds(position, won)
        out: dict[int, float] = {}
        for run in self.runs(hands, reserves, looks, me, led):
            if exact:
                mine = self._move(hands, reserves, looks, me, led, run[0], -1, remaining + 1)
                mine = mine if me == 0 else remaining - mine
                value = (1.0 if mine >= win else 0.0 if mine == tie else -1.0) + MARGIN * (2 * mine - remaining + ahead)
            else:
                first = run[0]  # the question is asked here and now: the closure sees this run's
                value = self._worth(me, remaining, win, tie,
                                    lambda low, high: self._move(hands, reserves, looks, me, led, first, low, high))
            for card in run:
                out[card] = value
        return out

    def outcome(self, position: Position, won: tuple[int, int] = (0, 0)) -> float:
        """What the hand is worth to the seat to act under best play by both: +1 if it ends
        with more tricks, 0 as many, -1 fewer (``values``' best, asked once for the position)."""
        me, led = position.turn, position.led
        hands, reserves = position.hands, position.reserves
        looks = position.looks[0] | position.looks[1] << 1
        remaining, _, win, tie = _thresholds(position, won)

        def probe(low: int, high: int) -> int:  # from a trick's start, or after its first card
            if led < 0:
                return self.search(hands, reserves, looks, me, low, high)
            return self._best(hands, reserves, looks, me, led, low, high)

        return self._worth(me, remaining, win, tie, probe)

    @staticmethod
    def _worth(me: int, remaining: int, win: int, tie: int | None, probe: Callable[[int, int], int]) -> float:
        """+1 if ``me`` can take ``win`` of the ``remaining`` tricks, else 0 if it can take
        ``tie``, else -1: one null-window question each, ``probe(alpha, beta)`` searching seat
        0's tricks from the position asked about."""
        for need, worth in ((win, 1.0), (tie, 0.0)):
            if need is None:
                continue
            if need <= 0:
                return worth
            if me == 0:
                if probe(need - 1, need) >= need:
                    return worth
            else:
                most = remaining - need  # seat 0 must take at most this many
                if probe(most, most + 1) <= most:
                    return worth
        return -1.0

    # -- the search ----------------------------------------------------------------------

    def runs(self, hands: tuple[int, int], reserves: tuple[int, int], looks: int, seat: int, led: int
             ) -> list[list[int]]:
        """The cards ``seat`` may play, grouped into runs of equivalent cards (highest first),
        the runs in the order worth trying first."""
        hand, reserve = hands[seat], reserves[seat]
        may_look = looks >> seat & 1
        if not hand:
            if not may_look:
                cards = _cards(reserve)
                return [[cards[self.blind_pick % len(cards)]]] if cards else []
            allowed, from_hand = reserve, 0
        elif led < 0:
            allowed, from_hand = hand, hand
        else:
            following = hand & _SUIT[_SUIT_OF[led]]
            if following:
                allowed, from_hand = following, following
            elif may_look:
                allowed, from_hand = hand | reserve, hand
            else:
                allowed, from_hand = hand, hand
        in_play = hands[0] | hands[1] | reserves[0] | reserves[1]
        if led >= 0:
            in_play |= 1 << led
        runs = equivalent_runs(allowed & from_hand, in_play) + equivalent_runs(allowed & ~from_hand, in_play)
        trump = self.trump
        if led < 0:
            # Leads: high cards first (they take tricks or force out the ones that do), trumps last.
            runs.sort(key=lambda run: (_SUIT_OF[run[0]] == trump, -(run[0] % 13)))
            return runs
        led_suit = _SUIT_OF[led]
        top = strength(led, led_suit, trump)
        # Second to play: the cheapest card that wins, then the cheapest that does not.
        runs.sort(key=lambda run: (strength(run[0], led_suit, trump) < top,
                                   (_SUIT_OF[run[0]] == trump) * 20 + run[0] % 13))
        return runs

    def search(self, hands: tuple[int, int], reserves: tuple[int, int], looks: int, turn: int,
               alpha: int, beta: int) -> int:
        """The tricks seat 0 takes from a trick's start (``turn`` leads) under best play.
        Fail-soft alpha-beta: a value at or below ``alpha`` is an upper bound, at or above
        ``beta`` a lower one. The table keeps each position's bounds."""
        self.nodes += 1
        if self.nodes >= self._next_stop and self.stop is not None:
            self._next_stop += _STOP_EVERY
            if self.stop():
                raise OutOfTime
        left = (hands[0] | reserves[0]).bit_count()
        if not left:
            return 0
        key = (hands[0], hands[1], reserves[0], reserves[1], looks, turn)
        low, high = self._table.get(key, (0, left))
        if low >= beta or low == high:
            return low
        if high <= alpha:
            return high
        window_low, window_high = max(alpha, low), min(beta, high)
        best = self._best(hands, reserves, looks, turn, -1, window_low, window_high)
        if best <= window_low:
            high = min(high, best)
        elif best >= window_high:
            low = max(low, best)
        else:
            low = high = best
        self._table[key] = (low, high)
        return best

    def _best(self, hands, reserves, looks, turn, led, alpha, beta) -> int:
        """Seat 0's tricks from here when ``turn`` chooses its best move (``led`` as ``runs``)."""
        maximize = turn == 0
        best = -1 if maximize else 99
        for run in self.runs(hands, reserves, looks, turn, led):
            value = self._move(hands, reserves, looks, turn, led, run[0], alpha, beta)
            if maximize:
                if value > best:
                    best = value
                    if best > alpha:
                        alpha = best
            elif value < best:
                best = value
                if best < beta:
                    beta = best
            if alpha >= beta:
                break
        return best

    def _move(self, hands, reserves, looks, turn, led, card, alpha, beta) -> int:
        """Seat 0's tricks from here once ``turn`` plays ``card``."""
        hands, reserves = without(hands, reserves, turn, card)
        if led < 0:
            self.nodes += 1
            return self._best(hands, reserves, looks, 1 - turn, card, alpha, beta)
        led_suit = _SUIT_OF[led]
        winner = turn if strength(card, led_suit, self.trump) > strength(led, led_suit, self.trump) else 1 - turn
        taken = 1 - winner  # seat 0's trick, or not
        return taken + self.search(hands, reserves, looks | 1 << winner, winner, alpha - taken, beta - taken)


def _thresholds(position: Position, won: tuple[int, int]) -> tuple[int, int, int, int | None]:
    """For the seat to act: the tricks still to be won (the one in play included), how many it
    is ahead by, the fewest of the remaining it needs to win the hand, and to draw it (None when
    it cannot be drawn)."""
    me, hands, reserves = position.turn, position.hands, position.reserves
    left = (hands[0] | reserves[0]).bit_count() + (hands[1] | reserves[1]).bit_count() + (position.led >= 0)
    remaining = left // 2
    ahead = won[me] - won[1 - me]
    win = (remaining - ahead) // 2 + 1
    tie = (remaining - ahead) // 2 if (remaining - ahead) % 2 == 0 else None
    return remaining, ahead, win, tie


def strength(card: int, led_suit: int, trump: int) -> int:
    """How ``card`` ranks in a trick led in ``led_suit``: the highest wins."""
    suit = _SUIT_OF[card]
    return card % 13 + (100 if suit == trump else 50 if suit == led_suit else 0)


def without(hands: tuple[int, int], reserves: tuple[int, int], seat: int, card: int
             ) -> tuple[tuple[int, int], tuple[int, int]]:
    """The hands and reserves once ``seat`` has played ``card`` from whichever holds it."""
    bit = 1 << card
    if hands[seat] & bit:
        return ((hands[0] & ~bit, hands[1]) if seat == 0 else (hands[0], hands[1] & ~bit)), reserves
    return hands, ((reserves[0] & ~bit, reserves[1]) if seat == 0 else (reserves[0], reserves[1] & ~bit))


def equivalent_runs(cards: int, in_play: int) -> list[list[int]]:
    """``cards`` as runs of equivalent cards, highest first: cards of a suit with no card of
    ``in_play`` between them win and lose the same tricks (a card neither in ``cards`` nor in
    ``in_play`` has been played)."""
    out: list[list[int]] = []
    for suit in range(4):
        held = cards & _SUIT[suit]
        if not held:
            continue
        run: list[int] | None = None
        for card in range(13 * suit + 12, 13 * suit - 1, -1):
            bit = 1 << card
            if held & bit:
                if run is None:
                    run = []
                    out.append(run)
                run.append(card)
            elif in_play & bit:
                run = None
    return out
