"""What a session tells the people at the table: typed events, in the order of the log.

A ``Session`` (``p2pwhist.session``) notes an event whenever something a user interface shows
happens: the game's START was taken, a deck is dealt, the table changed, a seat moved, a hand
or the match ended, the log waits for another seat. Its caller drains them
(``Session.take_events``) after each message the session takes or makes, and hands them to the
interface, which then never reads the session itself. An observer's session (seat None)
notes the same events, so a spectator can be driven by them too.

Rules the events keep:

- ``Seated`` comes first, once. A session rebuilt from a transcript (``Session.resume``) says
  where the game stands (``Seated``, the table, the result, whom it waits for), not its history.
- ``TableChanged`` comes only once every card being revealed has arrived: a seat's view is
  never drawn half revealed (a card just drawn, its keys still on the way).
- ``Awaiting`` comes when the log starts waiting for another seat, or for another reason: not
  after every message of one seat's run of them. Our own turns are never told, but count as a
  change, so the same wait told before ours is told again after it.
- ``Settled`` comes right before the seats are asked whether to stop a match whose winner
  the hands left cannot change, so an interface can say why it asks (a rebuilt session
  waiting at that question says it again).
- ``MatchOver`` comes as soon as the result is settled; only ``Awaiting`` for the seats'
  signatures on it (FORFEIT, FINAL) follows. ``Outcome.line`` words it alike everywhere.

Events hold the session's live objects (the match, the hand), not copies, which would cost a
copy of a hand per message: read them when drained, right after the message that made them.

Pure: no trio, no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from p2pwhist.bodies import Table
from p2pwhist.games.base import HandResult, HandState, Play
from p2pwhist.games.match import Match
from p2pwhist.text import YOU, match_line


@dataclass(frozen=True)
class Forfeited:
    """Who left the match, and why: it loses (session.md §7.3). ``blamed``: the seat the
    leaver's ABORT blamed, a blame the log does not prove."""

    seat: int
    reason: str
    seq: int  # the message that says so: the first FORFEIT, or the leaver's own ABORT
    blamed: int | None = None


@dataclass(frozen=True)
class Outcome:
    """The agreed end of a match: played to its end, ended by a seat's "no more" (an open
    match, ``declined``), stopped by every seat once its winner was settled (``stopped``), or
    forfeited by a seat that left."""

    hands: tuple[HandResult, ...]
    points: tuple[int, ...]
    winner: int | None
    forfeited: Forfeited | None = None
    declined: int | None = None  # the seat whose wish ended an open match
    stopped: bool = False  # every seat agreed to stop with hands left, the winner settled (session.md §2)

    def reason(self, names: Sequence[str]) -> str | None:
        """Why the match ended before its set end, in words: "bob would rather stop", "bob left
        the match: REASON", "Everyone agreed to stop"; None if it was played to its end
        (``names``: every seat's, "You" for ours)."""
        if self.forfeited is not None:
            return f"{names[self.forfeited.seat]} left the match: {self.forfeited.reason}"
        if self.declined is not None:
            return f"{names[self.declined]} would rather stop"
        return "Everyone agreed to stop" if self.stopped else None

    def line(self, names: Sequence[str]) -> str:
        """The match's end in words, for every interface, at once: "bob would rather stop: the
        match is over. Points: alice 2, bob 1; alice wins the match." """
        left = self.forfeited
        result = match_line(names, self.points, self.winner, None if left is None else left.seat) + "."
        reason = self.reason(names)
        if reason is None:
            return f"The match is over. {result}"
        return f"{reason}. The match is over. {result}" if left else f"{reason}: the match is over. {result}"


class Why(enum.Enum):
    """What the log waits for from a seat. Each value is the line that says so to a person, with
    ``{name}`` for the seat's name (``line``)."""

    ACCEPT = "Waiting for {name} to accept the table..."
    COMMIT = "Waiting for {name} to commit to the deck..."
    SHUFFLE = "Waiting for {name} to shuffle the cards..."  # a shuffle pass or a lock pass
    KEYS = "Waiting for {name} to reveal cards..."
    MOVE = "Waiting for {name}..."
    SECRET = "Waiting for {name}'s secret, to check every card..."  # the hand is over
    WISH = "{name} is asked whether to play another hand..."  # an open match
    STOP = "{name} is asked whether to stop, the winner being settled..."  # a match of set length
    DECISION = "Waiting for {name} to start the next hand or end the match..."  # the host
    FORFEIT = "Waiting for {name} to sign the forfeit..."
    FINAL = "Waiting for {name} to sign the match result..."

    def line(self, name: str) -> str:
        """The wait in words for a person: "Waiting for bob...", "bob is asked whether to play
        another hand..."."""
        return self.value.format(name=name)

    @property
    def is_choice(self) -> bool:
        """Whether a player chooses the message (a person may take their time); the seat's
        program makes every other one at once."""
        return self in (Why.MOVE, Why.WISH, Why.STOP)


@dataclass(frozen=True, slots=True)
class Seated:
    """The game's START was taken: the table, and our seat at it (None: an observer, such as
    ``p2pwhist verify``)."""

    table: Table
    seat: int | None


@dataclass(frozen=True, slots=True)
class Dealing:
    """A deck is being shuffled and dealt: for hand ``hand``, or for the cut (0, the session's
    ``CUT_HAND``), which decides the first dealer."""

    hand: int


@dataclass(frozen=True, slots=True)
class TableChanged:
    """What a seat sees of ``hand``, the hand in progress (or the one just played out), changed:
    it was dealt, a card was played or revealed. ``match`` holds the hands so far and the
    points; ``hand`` is ``match.hands[-1]``, whose ``view(seat)`` is the seat's table."""

    match: Match
    hand: HandState


@dataclass(frozen=True, slots=True)
class Moved:
    """``seat`` made ``move``, now applied to ``hand`` (a card played blind, once revealed)."""

    seat: int
    move: Play
    hand: HandState


@dataclass(frozen=True, slots=True)
class HandOver:
    """Hand ``number`` was played out and audited: its ``result`` (with any breach the audit
    proved), and the match's ``points`` with it."""

    number: int
    hand: HandState
    result: HandResult
    points: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Settled:
    """After a hand of a match of set length: ``winner`` wins it whatever the ``left`` hands
    left give (``Match.settled``), and every seat is asked whether to stop now (session.md §2)."""

    winner: int
    left: int

    def line(self, names: Sequence[str]) -> str:
        """"alice has won the match: the last hand cannot change it" (``names`` as ``Outcome.line``)."""
        rest = "the last hand cannot" if self.left == 1 else f"the last {self.left} hands cannot"
        name = names[self.winner]
        return f"{name} {'have' if name == YOU else 'has'} won the match: {rest} change it"


@dataclass(frozen=True, slots=True)
class MatchOver:
    """The match's result is settled: played to its end, or forfeited by a seat that left."""

    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Awaiting:
    """The log now waits for a message from ``seat``, another seat than ours, for ``why``."""

    seat: int
    why: Why


SessionEvent: TypeAlias = Seated | Dealing | TableChanged | Moved | HandOver | Settled | MatchOver | Awaiting
