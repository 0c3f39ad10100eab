"""Judging a finished (or stopped) game from its transcript alone: no network, no keys.

The verifier replays every message into an observing session (``Session.observe``), which
applies every check a seat applies during play (signatures, the chain, the schedule, every
deck step, every move), and at the end of each hand the full audit: the deck recomputed from
the revealed secrets, and every move replayed with every card known, which catches a revoke.
So a peer during play and anyone afterwards reach their verdict by the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from p2pwhist.session import (
    HOST,
    Aborted,
    BadSignature,
    BrokenChain,
    Convicted,
    LocalError,
    RemoteError,
    Session,
    abort_body,
)
from p2pwhist.signed import Kind, SignatureError, SignedMessage


@dataclass(frozen=True)
class Fault:
    """Why a transcript is invalid: the first bad message and the seat responsible."""

    seq: int
    seat: int
    name: str
    fingerprint: str
    reason: str

    def __str__(self) -> str:
        return f"message {self.seq}: {self.name} (seat {self.seat}, key {self.fingerprint}): {self.reason}"


@dataclass(frozen=True)
class HandSummary:
    dealer: int
    tags: dict[str, str]  # the game's own facts about the hand, e.g. Box Whist's trumps
    tricks: tuple[int, ...]
    winner: int | None
    offenders: tuple[int, ...]


@dataclass(frozen=True)
class Verdict:
    valid: bool
    complete: bool
    session: Session | None  # the observing session, for ``show``; None if START was unusable
    hands: tuple[HandSummary, ...]
    head: bytes
    error: Fault | None = None
    stopped: str | None = None  # for a valid but unfinished game: where and who stopped

    def to_json(self) -> dict[str, Any]:
        session = self.session
        table = session.table if session else None
        match = session.match if session else None
        return {
            "valid": self.valid,
            "complete": self.complete,
            "game": table.game.name if table else None,
            "players": [{"name": p.name, "fingerprint": p.fingerprint} for p in table.players] if table else [],
            "hands": [
                {"dealer": h.dealer, **h.tags, "tricks": list(h.tricks), "winner": h.winner,
                 "offenders": list(h.offenders)}
                for h in self.hands
            ],
            "match": {"hands_won": list(match.hands_won), "winner": match.winner} if match else None,
            "head": self.head.hex(),
            "error": None if self.error is None else {
                "seq": self.error.seq, "seat": self.error.seat, "name": self.error.name,
                "fingerprint": self.error.fingerprint, "reason": self.error.reason},
            "stopped": self.stopped,
        }


def verify(messages: Sequence[SignedMessage]) -> Verdict:
    """Judge a transcript's messages (as ``read_transcript`` parsed them)."""
    if not messages:
        return Verdict(False, False, None, (), b"", Fault(0, HOST, "the host", "?", "the transcript is empty"))
    start = messages[0]
    try:
        session = Session.observe(start)
    except (RemoteError, LocalError, SignatureError) as error:
        reason = error.reason if isinstance(error, RemoteError) else str(error)
        return Verdict(False, False, None, (), start.digest, Fault(0, HOST, "the host", "?", reason))
    stopped = None
    for index, message in enumerate(messages[1:], start=1):
        try:
            session.receive(message.raw, message.seat)
        except Aborted as aborted:
            stopped = f"seat {aborted.seat} stopped the game at message {message.seq}: {aborted.reason}"
            break
        except (BadSignature, BrokenChain) as error:
            # The message proves nothing against the seat it names: the peer who recorded it
            # says, in its signed ABORT, whose connection carried it.
            fault = _recorded_blame(session, error, messages[index + 1 : index + 2]) or _fault(session, error)
            return _verdict(session, valid=False, error=fault)
        except RemoteError as error:
            return _verdict(session, valid=False, error=_fault(session, error))
        if isinstance(session.error, Convicted):  # a dispute the audit settled
            return _verdict(session, valid=False, error=_fault(session, session.error))
    complete = session.error is None and session.waiting_for is None
    if not complete and stopped is None:
        seat = session.waiting_for
        who = session.table.players[seat].name if seat is not None else "?"
        stopped = (f"the transcript ends at message {len(session.log) - 1}, "
                   f"waiting for {who} (seat {seat}) to send {session.expected_kind.value}")
    return _verdict(session, valid=True, complete=complete, stopped=stopped)


def _recorded_blame(session: Session, error: RemoteError, following: Sequence[SignedMessage]) -> Fault | None:
    """The blame in the recording peer's ABORT, if it follows the refused message as it must:
    next in the log, chained to the last good message, validly signed."""
    if not following:
        return None
    notice = following[0]
    if notice.kind is not Kind.ABORT or notice.seq != len(session.log) or notice.prev != session.head:
        return None
    try:
        notice.verify(session.table.players[notice.seat].key)
    except (SignatureError, IndexError):
        return None
    reason, culprit = abort_body(notice.body, session.players)
    if culprit is None:
        return None
    player = session.table.players[culprit]
    return Fault(error.seq if error.seq is not None else notice.seq, culprit, player.name, player.fingerprint,
                 f"{error.reason}; seat {notice.seat}, which received it, blames {player.name}: {reason}")


def _fault(session: Session, error: RemoteError) -> Fault:
    player = session.table.players[error.seat]
    return Fault(error.seq if error.seq is not None else len(session.log), error.seat, player.name,
                 player.fingerprint, error.reason)


def _verdict(session: Session, valid: bool, complete: bool = False, error: Fault | None = None,
             stopped: str | None = None) -> Verdict:
    hands = []
    match = session.match
    if match is not None:
        for hand, result in zip(match.hands, match.results):
            hands.append(HandSummary(hand.dealer, hand.tags(), result.scores, result.winner,
                                     tuple(sorted(result.offenders))))
    return Verdict(valid, complete, session, tuple(hands), session.head, error, stopped)
