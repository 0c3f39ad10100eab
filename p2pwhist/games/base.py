"""The small interface every game implements, so that code which runs games never names one.

A game is played with one shuffled deck whose cards sit at *positions* 0..N-1 (the deck
protocol's positions). The rules engine deals by position, and a move names the position of
the card played. A state may not know the card at every position: a peer knows only what has
been revealed to it. The engine says who may see each position (``visible_to``); the caller
reveals cards and tells the state with ``learn``. A local game simply knows every card.

Everything here is pure: no I/O, clocks or randomness. Chance (the deck order, the cut) comes
in as values.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence

from p2pwhist.cards import Card
from p2pwhist.wire import describe


@dataclass(frozen=True, slots=True)
class Play:
    """The acting seat plays the card at a deck position (from its hand or its box)."""

    position: int

    def to_wire(self) -> int:
        return self.position

    @staticmethod
    def from_wire(obj: object, deck_size: int) -> Play:
        if type(obj) is not int or not 0 <= obj < deck_size:
            raise ValueError(f"a move is a deck position in 0..{deck_size - 1}, not {describe(obj)}")
        return PLAYS[obj]


# Interned: engines hand out these objects in legal-move lists thousands of times a second.
PLAYS: tuple[Play, ...] = tuple(Play(position) for position in range(52))


class Illegal(enum.Enum):
    """Why a move was refused."""

    HAND_OVER = "the hand is over"
    NOT_YOUR_TURN = "it is not this player's turn"
    NOT_YOUR_CARD = "that card is not in the player's hand or box"
    MUST_FOLLOW_SUIT = "must follow suit from the hand"
    LEAD_FROM_HAND = "a lead must come from the hand while the hand has cards"
    BOX_CLOSED = "the box may not be used before winning a trick (nor played blind while holding hand cards)"


class IllegalMove(ValueError):
    """A move the rules refuse. ``seat`` is the seat that tried it."""

    def __init__(self, reason: Illegal, seat: int, detail: str = "") -> None:
        self.reason = reason
        self.seat = seat
        self.detail = detail
        self.rule = reason.value + (f" ({detail})" if detail else "")  # without the seat
        super().__init__(f"seat {seat}: {self.rule}")


class EngineMisuse(RuntimeError):
    """The caller used the engine wrongly (e.g. applied a card nobody has revealed yet)."""


class HonourPolicy(enum.Enum):
    """What ``apply`` does with a breach it can see of a rule played "on honour", such as
    following suit in whist (no peer sees another's hand, so nobody can check it in play).

    REFUSE suits local play, where the breach is simply illegal. RECORD suits a peer checking
    others' moves and the end-of-hand audit: the breach is established and recorded, and the
    game's rules say what it costs (in Box Whist, the hand).
    """

    REFUSE = "refuse"
    RECORD = "record"


class ConfigError(ValueError):
    """A game configuration that is malformed or not supported."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """The outcome of one hand, in terms every game shares.

    ``scores`` is the game's per-seat measure (tricks for whist games); ``offenders`` are seats
    that lost the hand by a proven breach (a revoke, or a cheat the session proved); the
    ``winner`` is None for a drawn hand.
    """

    scores: tuple[int, ...]
    offenders: frozenset[int]
    winner: int | None


def best_score(scores: Sequence[int], excluded: frozenset[int] = frozenset()) -> int | None:
    """The seat with the strictly highest score among those not excluded, else None (a draw)."""
    eligible = [seat for seat in range(len(scores)) if seat not in excluded]
    if not eligible:
        return None
    top = max(scores[seat] for seat in eligible)
    leaders = [seat for seat in eligible if scores[seat] == top]
    return leaders[0] if len(leaders) == 1 else None


class HandState(Protocol):
    """One hand in progress: the rules engine proper (OpenSpiel's ``State``)."""

    players: int
    dealer: int

    @property
    def current_seat(self) -> int | None: ...  # None once the hand is over

    @property
    def is_over(self) -> bool: ...

    def legal_moves(self) -> list[Play]: ...

    def apply(self, move: Play) -> None: ...

    def check(self, move: Play) -> None: ...  # apply's refusal, without playing

    def view(self, seat: int) -> Any: ...  # what ``seat`` may know, as the game's view type

    def visible_to(self, seat: int) -> frozenset[int]: ...

    def learn(self, position: int, card: Card) -> None: ...

    def result(self, offenders: frozenset[int] = frozenset()) -> HandResult: ...

    def tags(self) -> dict[str, str]: ...  # the game's own facts about the hand, for records

    def clone(self) -> HandState: ...


class Game(Protocol):
    """A game: static facts plus a factory of hands (OpenSpiel's ``Game``)."""

    name: ClassVar[str]

    def deck(self) -> tuple[Card, ...]: ...

    @property
    def players(self) -> int: ...

    def first_dealer(self, cut: Sequence[Card]) -> int: ...

    def new_hand(self, dealer: int, previous: Sequence[HandState], cards: Sequence[Card | None] | None = None,
                 honour: HonourPolicy = HonourPolicy.REFUSE) -> HandState: ...

    def audit(self, dealer: int, previous: Sequence[HandState], cards: Sequence[Card],
              moves: Sequence[Play]) -> HandState: ...  # a finished hand replayed, every card known

    def to_wire(self) -> dict[str, Any]: ...

    @staticmethod
    def from_wire(obj: object) -> Game: ...
