"""Judging a finished (or stopped) game from its transcript alone: no network, no keys.

The verifier replays every message into an observing session (``Session.observe``), which
applies every check a seat applies during play (signatures, the chain, the schedule, every
deck step, every move), and at the end of each hand the full audit: the deck recomputed from
the revealed secrets, and every move replayed with every card known, which catches a revoke.
So a peer during play and anyone afterwards reach their verdict by the same code. Only the
signatures of a long file are checked elsewhere: by a helper process, a window of messages
ahead, which can only vouch (p2pwhist.signatures).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from p2pwhist.bodies import Abort
from p2pwhist.session import (
    HOST,
    Aborted,
    BadMessage,
    BrokenChain,
    Convicted,
    LocalError,
    RemoteError,
    Session,
)
from p2pwhist.signatures import CheckedAhead
from p2pwhist.signed import Kind, SignatureError, SignedMessage
from p2pwhist.wire import WireError


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
    scores: tuple[int, ...]  # the game's measure: tricks, box cards left
    points: tuple[int, ...]  # towards the match
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
                {"dealer": h.dealer, **h.tags, "scores": list(h.scores), "points": list(h.points),
                 "offenders": list(h.offenders)}
                for h in self.hands
            ],
            "match": {"points": list(match.points), "winner": match.winner} if match else None,
            "forfeit": None if session is None or session.leaver is None else {
                "seat": session.leaver.seat, "name": table.players[session.leaver.seat].name,  # type: ignore[union-attr]
                "reason": session.leaver.reason, "seq": session.leaver.seq},
            "head": self.head.hex(),
            "error": None if self.error is None else {
                "seq": self.error.seq, "seat": self.error.seat, "name": self.error.name,
                "fingerprint": self.error.fingerprint, "reason": self.error.reason},
            "stopped": self.stopped,
        }


def verify(messages: Iterable[SignedMessage]) -> Verdict:
    """Judge a transcript's messages (as ``read_transcript`` yields them), taking each as it
    comes and stopping at the first bad one: a hostile file costs no more than its good part
    and the window of messages read ahead for the signature helper (p2pwhist.signatures)."""
    stream: Iterator[SignedMessage] = iter(messages)
    start = next(stream, None)
    if start is None:
        return Verdict(False, False, None, (), b"", Fault(0, HOST, "the host", "?", "the transcript is empty"))
    try:
        session = Session.observe(start)
    except (RemoteError, LocalError, SignatureError) as error:
        reason = error.reason if isinstance(error, RemoteError) else str(error)
        return Verdict(False, False, None, (), start.digest, Fault(0, HOST, "the host", "?", reason))
    with CheckedAhead(stream, [player.key for player in session.table.players]) as checked:
        return _judged(session, checked)


def _judged(session: Session, checked: CheckedAhead) -> Verdict:
    """The verdict on the messages after START."""
    stopped = None
    for message, signature_checked in checked:
        try:
            session.receive_parsed(message, message.seat, signature_checked)
        except Aborted as aborted:
            stopped = f"seat {aborted.seat} stopped the game at message {message.seq}: {aborted.reason}"
            break
        except (BadMessage, BrokenChain) as error:
            # The message proves nothing against the seat it names: the peer who recorded it
            # says, in its signed ABORT, whose connection carried it.
            fault = _recorded_blame(session, error, _next_or_none(checked)) or _fault(session, error)
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


def _next_or_none(checked: CheckedAhead) -> SignedMessage | None:
    """The next message, if there is a readable one: damage after a verdict does not change it."""
    try:
        message, _ = next(checked)
    except (StopIteration, WireError):
        return None
    return message


def _recorded_blame(session: Session, error: RemoteError, notice: SignedMessage | None) -> Fault | None:
    """The blame in the recording peer's ABORT, if it follows the refused message as it must:
    next in the log, chained to the last good message, validly signed."""
    if notice is None or notice.kind is not Kind.ABORT or notice.seq != len(session.log) or notice.prev != session.head:
        return None
    try:
        notice.verify(session.table.players[notice.seat].key)
    except (SignatureError, IndexError):
        return None
    body: Abort = notice.body  # type: ignore[assignment]
    if body.culprit is None or body.culprit >= session.players:
        return None
    player = session.table.players[body.culprit]
    return Fault(error.seq if error.seq is not None else notice.seq, body.culprit, player.name, player.fingerprint,
                 f"{error.reason}; seat {notice.seat}, which received it, blames {player.name}: {body.reason}")


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
            hands.append(HandSummary(hand.dealer, hand.tags(), result.scores, result.points,
                                     tuple(sorted(result.offenders))))
    return Verdict(valid, complete, session, tuple(hands), session.head, error, stopped)
