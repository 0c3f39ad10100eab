"""Errors of the deck protocol, and the protocol steps they blame.

As in h11: a ``LocalDeckError`` is our own misuse (calling an action out of turn, building a
malformed message); a ``RemoteDeckError`` names the seat that misbehaved, the step and why.
Peer input enters at ``Deck.receive`` and ``Deck.receive_wire`` only, and that is where a
format error in a peer's message becomes a ``RemoteDeckError`` naming the sender.

Some faults have no author that anyone can name before the audit: a card that decrypts to
nothing (or to a card already seen) may come from any earlier pass or from any key used to
decrypt it. Those raise ``UnattributedDeckError`` with the suspects; ``audit`` then names the
culprit once every seat has revealed its secret (protocol/deck.md §8).
"""

from __future__ import annotations

import enum


class Step(enum.Enum):
    """A step of the protocol, in the order a hand goes through them (protocol/deck.md §5)."""

    MESSAGE = "message"  # a message that could not be decoded at all
    COMMITMENT = "commitment"
    SHUFFLE_PASS = "shuffle pass"
    LOCK_PASS = "lock pass"
    POSITION_KEY = "position key"
    CLAIM = "claim"
    REVEAL = "reveal"  # a decrypted position: who made it wrong is for the audit to say
    SECRET = "secret"


class DeckError(Exception):
    """Base class of every error the deck protocol raises."""


class LocalDeckError(DeckError):
    """We misused the API (wrong phase, not our turn, bad argument)."""


class MessageFormatError(LocalDeckError):
    """A message value breaks the wire format.

    Raised by message constructors and ``from_wire``; ``step`` is the step of the message type
    (``Step.MESSAGE`` when even the type is unknown). ``Deck.receive_wire`` re-raises it as a
    ``RemoteDeckError`` naming the sender.
    """

    def __init__(self, reason: str, step: Step = Step.MESSAGE) -> None:
        super().__init__(reason)
        self.reason = reason
        self.step = step


class RemoteDeckError(DeckError):
    """Seat ``seat`` broke the protocol at ``step`` (at ``position``, when one is concerned)."""

    def __init__(self, seat: int, step: Step, reason: str, position: int | None = None) -> None:
        where = "" if position is None else f" at position {position}"
        self.detail = f"{step.value}{where}: {reason}"  # what went wrong, without whose fault
        super().__init__(f"seat {seat}, {self.detail}")
        self.seat = seat
        self.step = step
        self.reason = reason
        self.position = position


class UnattributedDeckError(DeckError):
    """Somebody cheated, but only the audit can say who: ``suspects`` lists the candidates.

    The session should stop the hand, collect every seat's secret and run ``audit``.
    """

    def __init__(self, suspects: tuple[int, ...], step: Step, position: int, reason: str) -> None:
        names = ", ".join(str(seat) for seat in suspects)
        super().__init__(
            f"{step.value} at position {position}: {reason}; one of seats {names} cheated "
            "and only the audit (every seat reveals its secret) can tell which"
        )
        self.suspects = suspects
        self.step = step
        self.position = position
        self.reason = reason
