"""Judging a finished (or stopped) game from its transcript alone: no network, no keys.

The verifier replays every message into an observing session (``Session.observe``), which
applies every check a seat applies during play (signatures, the chain, the schedule, every
deck step, every move), and at the end of each hand the full audit: the deck recomputed from
the revealed secrets, and every move replayed with every card known, which catches a revoke.
So a peer during play and anyone afterwards reach their verdict by the same code. Only the
signatures of a long file are checked elsewhere: by a helper process, a window of messages
ahead, which can only vouch (p2pwhist.signatures).

Beyond the session's verdict, the verifier says what the log proves of a match settled by a
seat leaving (``Settlement``: its own ABORT, or a FORFEIT and who signed it, session.md §7.3),
recognises the fork an accused seat keeps as evidence (``Fork``), and finds where several
transcripts of one game part (``first_partings``).

It blames a seat only where the log proves it (session.md §5). A message that proves nothing
against the seat it names (malformed, badly signed, out of the chain) makes the log invalid
where it stands, blamed as the recording peer's ABORT right after it blames, or on nobody. A
file is judged as far as it can be read: one that ends inside a message (a crash while it was
written, wire.md §4) as far as it goes; only a file that is no transcript at all gets no
verdict (``unreadable``).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from p2pwhist.bodies import Abort, Forfeit, Table
from p2pwhist.session import (
    Aborted,
    BadMessage,
    BrokenChain,
    Convicted,
    LocalError,
    RemoteError,
    Session,
)
from p2pwhist.session_events import Forfeited, Outcome
from p2pwhist.signatures import CheckedAhead
from p2pwhist.signed import Kind, SignatureError, SignedMessage
from p2pwhist.text import listed
from p2pwhist.transcript import TornTranscript, TranscriptError
from p2pwhist.wire import WireError

T = TypeVar("T")


@dataclass(frozen=True)
class Fault:
    """Why a transcript is invalid: the first bad message, and the seat responsible where the
    log proves one is (``seat``, ``name`` and ``fingerprint`` None: nobody is blamed)."""

    seq: int | None  # None: the file holds no message to judge (``unreadable``)
    seat: int | None
    name: str | None
    fingerprint: str | None
    reason: str

    def __str__(self) -> str:
        if self.seq is None:
            return self.reason
        if self.seat is None:
            return f"message {self.seq}: {self.reason}"
        return f"message {self.seq}: {self.name} (seat {self.seat}, key {self.fingerprint}): {self.reason}"


@dataclass(frozen=True)
class HandSummary:
    dealer: int
    tags: dict[str, str]  # the game's own facts about the hand, e.g. Box Whist's trumps
    scores: tuple[int, ...]  # the game's measure: tricks, box cards left
    points: tuple[int, ...]  # towards the match
    offenders: tuple[int, ...]  # lost the hand by a proven breach (a revoke, the deck protocol)
    left: tuple[int, ...]  # lost it by leaving the match (a forfeit or its own ABORT): no breach


class Departure(enum.Enum):
    """How a seat left a match, as far as the log proves it (session.md §7.3)."""

    LEFT = "left"  # its own signed ABORT: its own signature proves it
    ABSENT = "absent"  # a FORFEIT that others declared: proven as far as its signers vouch


@dataclass(frozen=True)
class Settlement:
    """A match settled by a seat leaving, and what the log proves of it.

    ``signed_by``: every seat whose signature on the settling message's body the log holds,
    in log order (for an ABORT, the leaver alone). ``witnessed``: whether one of them does
    not gain the match from it, so vouches for it with nothing to win: a seat other than the
    winner (or, in a drawn result, than the seats sharing the most points, who gain a share);
    for an ABORT, the leaver itself, signing against its own interest."""

    leaver: Forfeited  # the seat, its reason, the message that settled it, and whom an ABORT blamed
    how: Departure
    declared_by: int  # the signer of the first FORFEIT, or the leaver
    signed_by: tuple[int, ...]
    witnessed: bool

    @property
    def seat(self) -> int:
        return self.leaver.seat

    def line(self, names: Sequence[str]) -> str:
        """What the log proves, and what it cannot, in one line: "bob (seat 1) forfeits the match
        at message 57: bob was declared absent (REASON), as alice and carol sign"."""
        leaver, name = self.leaver, names[self.seat]
        if self.how is Departure.LEFT:
            line = (f"{name} (seat {self.seat}) left the match at message {leaver.seq} with {name}'s own signed "
                    f"ABORT, and forfeits it: {leaver.reason}")
            if leaver.blamed is not None:
                line += f"; {name} blamed {names[leaver.blamed]} (seat {leaver.blamed}), which the log does not prove"
            return line
        signers = listed([names[seat] for seat in self.signed_by])
        line = f"{name} (seat {self.seat}) forfeits the match at message {leaver.seq}: {name} was declared absent " \
               f"({leaver.reason}), as "
        if self.witnessed:
            return line + f"{signers} sign{'s' if len(self.signed_by) == 1 else ''}"
        who = f"{signers} alone signs, who gains" if len(self.signed_by) == 1 else \
            f"{signers} sign, each of whom gains"
        why = "absence between two seats cannot be proven" if len(names) == 2 else \
            "no seat without a stake in it vouches for the absence"
        return line + f"{who} from it: {why}"

    def to_json(self, names: Sequence[str]) -> dict[str, Any]:
        leaver = self.leaver
        return {"seat": leaver.seat, "name": names[leaver.seat], "reason": leaver.reason, "seq": leaver.seq,
                "how": self.how.value, "declared_by": self.declared_by, "signed_by": list(self.signed_by),
                "witnessed": self.witnessed, "blamed": leaver.blamed,
                "blame": None if leaver.blamed is None else "unproven"}


@dataclass(frozen=True)
class Fork:
    """Two validly signed messages follow the same message: the accused seat's own, which the
    transcript holds, and a FORFEIT declaring it absent at that very place, which the accused
    kept as evidence (``GameFiles.evidence``, session.md §7.3). Neither proves the other wrong:
    one side's message did not reach the other in time, or was ignored."""

    seq: int
    accused: int
    declared_by: int
    kind: Kind  # of the accused's own message there

    def line(self, names: Sequence[str]) -> str:
        accused = names[self.accused]
        return (f"fork at message {self.seq}: {accused} signed a {self.kind.value.upper()} there, and "
                f"{names[self.declared_by]} signed a FORFEIT declaring {accused} absent at the same place; the two "
                "histories part here (one side's message did not reach the other in time, or was ignored)")

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "accused": self.accused, "declared_by": self.declared_by,
                "kinds": [self.kind.value, Kind.FORFEIT.value]}


@dataclass(frozen=True)
class Verdict:
    valid: bool
    complete: bool
    session: Session | None  # the observing session, for ``show``; None if START was unusable
    hands: tuple[HandSummary, ...]
    head: bytes
    error: Fault | None = None
    stopped: str | None = None  # for a valid but unfinished game: where and who stopped
    settlement: Settlement | None = None  # a match settled by a seat leaving
    fork: Fork | None = None  # where the transcript parts from a history that declared its seat absent

    def to_json(self) -> dict[str, Any]:
        session = self.session
        table = session.table if session else None
        match = session.match if session else None
        names = [p.name for p in table.players] if table else []
        return {
            "valid": self.valid,
            "complete": self.complete,
            "game": table.game.name if table else None,
            "players": [{"name": p.name, "fingerprint": p.fingerprint} for p in table.players] if table else [],
            "hands": [
                {"dealer": h.dealer, **h.tags, "scores": list(h.scores), "points": list(h.points),
                 "offenders": list(h.offenders), "left": list(h.left)}
                for h in self.hands
            ],
            "match": {"points": list(match.points), "winner": match.winner} if match else None,
            "forfeit": None if self.settlement is None else self.settlement.to_json(names),
            "fork": None if self.fork is None else self.fork.to_json(),
            "head": self.head.hex(),
            "error": None if self.error is None else {
                "seq": self.error.seq, "seat": self.error.seat, "name": self.error.name,
                "fingerprint": self.error.fingerprint, "reason": self.error.reason},
            "stopped": self.stopped,
        }


def verify(messages: Iterable[SignedMessage]) -> Verdict:
    """Judge a transcript's messages (as ``read_transcript`` yields them), taking each as it
    comes and stopping at the first bad one: a hostile file costs no more than its good part
    and the window of messages read ahead for the signature helper (p2pwhist.signatures).

    What cannot be read of the file is judged too (``_unreadable_message``), but for a file
    that holds no transcript at all: its ``TranscriptError`` (with no ``index``) is raised."""
    stream: Iterator[SignedMessage] = iter(messages)
    # A START that cannot be read, or is no valid START, holds no key to blame anyone by.
    try:
        start = next(stream, None)
    except TornTranscript as error:  # the complete prefix holds no message: nothing to judge
        return Verdict(False, False, None, (), b"", Fault(0, None, None, None, "the transcript is empty: the file "
                                                          f"ends inside message 0 ({error.stray} stray bytes)"))
    except WireError as error:
        _raise_unless_a_message(error)
        return Verdict(False, False, None, (), b"", Fault(0, None, None, None, _reason(error)))
    if start is None:
        return Verdict(False, False, None, (), b"", Fault(0, None, None, None, "the transcript is empty"))
    try:
        session = Session.observe(start)
    except (RemoteError, LocalError, SignatureError) as error:
        reason = error.reason if isinstance(error, RemoteError) else str(error)
        return Verdict(False, False, None, (), start.digest, Fault(0, None, None, None, reason))
    with CheckedAhead(stream, [player.key for player in session.table.players]) as checked:
        return _judged(session, checked, stream)


def unreadable(error: TranscriptError) -> Verdict:
    """The verdict on a file that holds no transcript to judge (missing, unreadable, or not a
    transcript): what ``verify --json`` prints for it, with the exit status of a usage error."""
    return Verdict(False, False, None, (), b"", Fault(None, None, None, None, str(error)))


def _judged(session: Session, checked: CheckedAhead, stream: Iterator[SignedMessage]) -> Verdict:
    """The verdict on the messages after START; ``stream`` is what ``checked`` reads ahead
    of, to read on past a message that cannot be read."""
    stopped = None
    torn: TornTranscript | None = None
    while True:
        try:
            item = next(checked, None)
        except WireError as error:
            _raise_unless_a_message(error)
            if not isinstance(error, TornTranscript):
                return _unreadable_message(session, error, stream)
            torn = error  # a crash while the file was written: the prefix is judged
            break
        if item is None:
            break
        message, signature_checked = item
        try:
            session.receive_parsed(message, message.seat, signature_checked)
        except Aborted as aborted:
            stopped = f"seat {aborted.seat} stopped the game at message {message.seq}: {aborted.reason}"
            break
        except (BadMessage, BrokenChain) as error:
            fork = _fork(session, message) if isinstance(error, BrokenChain) else None
            if fork is not None:  # two histories, neither proven wrong: the file is good as far as it follows
                return _verdict(session, valid=True, stopped=fork.line(_names(session)), fork=fork)
            # The message proves nothing against the seat it names: the peer who recorded it
            # says, in its signed ABORT, whose connection carried it.
            seq = error.seq if error.seq is not None else len(session.log)
            ahead = _next_or_none(checked)
            return _verdict(session, valid=False, error=_blamed_by_the_recorder(
                session, seq, error.reason, None if ahead is None else ahead[0]))
        except RemoteError as error:
            return _verdict(session, valid=False, error=_fault(session, error))
        if isinstance(session.error, Convicted):  # a dispute the audit settled
            return _verdict(session, valid=False, error=_fault(session, session.error))
    complete = session.error is None and session.waiting_for is None and torn is None
    if not complete and stopped is None:
        stopped = _waiting(session)
        if torn is not None:
            end = f"the file ends inside message {len(session.log)} ({torn.stray} stray bytes)"
            stopped = end if stopped is None else f"{end}; before it, {stopped}"
    return _verdict(session, valid=True, complete=complete, stopped=stopped)


def _waiting(session: Session) -> str | None:
    """Where a log that stops early stops, and whom it waits for; None if it waits for nobody."""
    seat, kind = session.waiting_for, session.expected_kind
    if seat is None or kind is None:
        return None
    return (f"the transcript ends at message {len(session.log) - 1}, "
            f"waiting for {session.table.players[seat].name} (seat {seat}) to send {kind.value}")


def _raise_unless_a_message(error: WireError) -> None:
    """A file that cannot be read as a whole (it is no transcript, or reading it failed)
    gets no verdict: its error is raised. What cannot be read of one message is judged."""
    if isinstance(error, TranscriptError) and error.index is None:
        raise error


def _reason(error: WireError) -> str:
    return error.reason if isinstance(error, TranscriptError) else str(error)


def _unreadable_message(session: Session, error: WireError, stream: Iterator[SignedMessage]) -> Verdict:
    """A frame that is not a message (wire.md §1, §3), at the log's next place: the log is
    invalid there (session.md §5). The message after it, read from ``stream`` past the bad
    frame, may be the recording peer's ABORT, which says whose connection carried it."""
    fault = _blamed_by_the_recorder(session, len(session.log), _reason(error), _next_or_none(stream))
    return _verdict(session, valid=False, error=fault)


def _next_or_none(stream: Iterator[T]) -> T | None:
    """The next item, if there is a readable one: damage after a verdict does not change it."""
    try:
        return next(stream)
    except (StopIteration, WireError):
        return None


# Kinds signed once the match's result is settled (a FORFEIT's co-signatures, FINAL): a
# FORFEIT never stands in their place (session.md §7.3).
_AFTER_THE_RESULT = frozenset({Kind.FORFEIT, Kind.FINAL})


def _fork(session: Session, message: SignedMessage) -> Fork | None:
    """The fork ``message`` makes, if it is a FORFEIT that does not follow the log because the
    seat it names signed a message of its own at that very place (the same seq after the same
    message), where a FORFEIT could stand: after every seat accepted (START and the ACCEPTs
    fill the first ``players`` places), before the result. Its signature by its sender was
    checked before the chain (``Session.check_parsed``)."""
    body, seq = message.body, message.seq
    if not isinstance(body, Forfeit) or not session.players <= seq < len(session.log):
        return None
    accused = session.log[seq]
    if accused.seat != body.seat or accused.prev != message.prev or message.seat == body.seat \
            or accused.kind in _AFTER_THE_RESULT:
        return None
    return Fork(seq, body.seat, message.seat, accused.kind)


def _blamed_by_the_recorder(session: Session, seq: int, reason: str, notice: SignedMessage | None) -> Fault:
    """The fault of message ``seq``, refused for ``reason`` though it proves nothing against
    the seat it names (malformed, badly signed, or out of the chain): blamed as the recording
    peer's ABORT blames, if one follows it as it must (next in the log, chained to the last
    good message, validly signed, naming a seat at the table); else on nobody."""
    if notice is None or notice.kind is not Kind.ABORT or notice.seq != len(session.log) or notice.prev != session.head:
        return _unblamed(seq, reason)
    try:
        notice.verify(session.table.players[notice.seat].key)
    except (SignatureError, IndexError):
        return _unblamed(seq, reason)
    body: Abort = notice.body  # type: ignore[assignment]
    if body.culprit is None or body.culprit >= session.players:
        return _unblamed(seq, reason)
    player = session.table.players[body.culprit]
    return Fault(seq, body.culprit, player.name, player.fingerprint,
                 f"{reason}; seat {notice.seat}, which received it, blames {player.name}: {body.reason}")


def _unblamed(seq: int, reason: str) -> Fault:
    """A fault that proves nothing against anyone (session.md §5): what the recording peer
    wrote at ``seq`` is no message validly signed in the chain, and no ABORT of its says whose
    connection carried it."""
    return Fault(seq, None, None, None, f"{reason}; the recording peer's log is damaged at message {seq}, "
                 "and the message proves nothing against the seat it names")


def _fault(session: Session, error: RemoteError) -> Fault:
    player = session.table.players[error.seat]
    return Fault(error.seq if error.seq is not None else len(session.log), error.seat, player.name,
                 player.fingerprint, error.reason)


def _names(session: Session) -> list[str]:
    return [player.name for player in session.table.players]


def _settlement(session: Session) -> Settlement | None:
    """How the match was settled, if a seat left it: read from the log, from the settling
    message on (its own ABORT, or the first FORFEIT and the same body signed after it)."""
    leaver, outcome = session.leaver, session.outcome
    if leaver is None or outcome is None:
        return None
    notice = session.log[leaver.seq]
    if notice.kind is Kind.ABORT:
        return Settlement(leaver, Departure.LEFT, leaver.seat, (leaver.seat,), witnessed=True)
    signed_by = tuple(m.seat for m in session.log[leaver.seq:] if m.kind is Kind.FORFEIT and m.body == notice.body)
    gainers = _gainers(outcome, leaver.seat)
    return Settlement(leaver, Departure.ABSENT, notice.seat, signed_by,
                      witnessed=any(seat not in gainers for seat in signed_by))


def _gainers(outcome: Outcome, left: int) -> frozenset[int]:
    """The seats a forfeit's result favours: its winner, or in a drawn result every seat that
    shares the most points among those remaining (``Match.winner``)."""
    remaining = [seat for seat in range(len(outcome.points)) if seat != left]
    top = max(outcome.points[seat] for seat in remaining)
    return frozenset(seat for seat in remaining if outcome.points[seat] == top)


def _verdict(session: Session, valid: bool, complete: bool = False, error: Fault | None = None,
             stopped: str | None = None, fork: Fork | None = None) -> Verdict:
    hands = []
    match = session.match
    if match is not None:
        for hand, result in zip(match.hands, match.results):
            hands.append(HandSummary(hand.dealer, hand.tags(), result.scores, result.points,
                                     tuple(sorted(result.offenders)), tuple(sorted(result.left))))
    return Verdict(valid, complete, session, tuple(hands), session.head, error, stopped, _settlement(session), fork)


@dataclass(frozen=True)
class Parting:
    """Two transcripts of one game (the same START) that hold different messages at the same
    place, the first such place. ``transcripts``: their positions among those compared;
    ``held``: the message each holds there."""

    place: int  # the position in both files; START is 0, so it is the message's number in an honest file
    transcripts: tuple[int, int]
    held: tuple[SignedMessage, SignedMessage]
    table: Table  # the game's, for the seats' names

    def line(self, labels: Sequence[str]) -> str:
        """"alice.p2pw and bob.p2pw part at message 57: alice.p2pw holds alice's FORFEIT naming
        bob, bob.p2pw holds bob's PLAY"; ``labels`` names each transcript compared."""
        first, second = (labels[index] for index in self.transcripts)
        ours, theirs = (self._described(message) for message in self.held)
        line = f"{first} and {second} part at message {self.place}: {first} holds {ours}, {second} holds {theirs}"
        seat = self.signed_both
        if seat is not None:
            name = self._name(seat)
            line += (f"; {name} signed both, after the same message: {name} showed the seats different "
                     "histories, which these two files prove")
        return line

    @functools.cached_property  # two signature checks: once for the line and the JSON alike
    def signed_both(self) -> int | None:
        """The seat that signed both messages held, at the same place after the same message,
        if one did: no honest seat ever signs two, so the pair proves it forked the log (as a
        relaying host can). Each signature is checked here: the files may be anyone's."""
        one, other = self.held
        if (one.seat, one.seq, one.prev) != (other.seat, other.seq, other.prev) or one.seat >= len(self.table.players):
            return None
        key = self.table.players[one.seat].key
        try:
            one.verify(key)
            other.verify(key)
        except SignatureError:
            return None
        return one.seat

    def to_json(self, labels: Sequence[str]) -> dict[str, Any]:
        return {"seq": self.place, "files": [labels[index] for index in self.transcripts],
                "held": [{"seat": message.seat, "kind": message.kind.value, "naming": _accused(message)}
                         for message in self.held],
                "signed_both": self.signed_both}

    def _described(self, message: SignedMessage) -> str:
        accused = _accused(message)
        naming = "" if accused is None else f" naming {self._name(accused)}"
        return f"{self._name(message.seat)}'s {message.kind.value.upper()}{naming}"

    def _name(self, seat: int) -> str:
        players = self.table.players
        return players[seat].name if seat < len(players) else f"seat {seat}"  # a hostile file's seat


def _accused(message: SignedMessage) -> int | None:
    """The seat a FORFEIT names; None for any other message."""
    return message.body.seat if isinstance(message.body, Forfeit) else None


def first_partings(transcripts: Sequence[Iterator[SignedMessage]]) -> list[Parting]:
    """For each game that two or more of ``transcripts`` hold (the same START), the first place
    where two of them hold different messages, if there is one.

    The transcripts of a game are read together, one message of each at a time, as
    ``read_transcript`` streams them: memory holds a message per transcript, whatever the
    files hold, and reading stops where they part. A transcript that ends, or turns unreadable
    (``WireError``), is compared no further; one whose first message is no START, not at all."""
    starts = [_next_or_none(transcript) for transcript in transcripts]
    games: dict[bytes, tuple[Table, list[int]]] = {}  # by START: its table, and which transcripts hold it
    for index, start in enumerate(starts):
        if start is not None and isinstance(start.body, Table):
            games.setdefault(start.raw, (start.body, []))[1].append(index)
    partings = []
    for table, members in games.values():
        parting = _first_parting(table, [(index, transcripts[index]) for index in members])
        if parting is not None:
            partings.append(parting)
    return partings


def _first_parting(table: Table, members: list[tuple[int, Iterator[SignedMessage]]]) -> Parting | None:
    """The first place after START where two of ``members`` (a game's transcripts, each with
    its position) hold different messages; the first of them that holds one there is compared
    with each other."""
    place = 0
    while len(members) > 1:
        place += 1
        held = [(index, stream, message) for index, stream in members
                if (message := _next_or_none(stream)) is not None]
        if held:
            first, _, reference = held[0]
            for index, _, message in held[1:]:
                if message.raw != reference.raw:
                    return Parting(place, (first, index), (reference, message), table)
        members = [(index, stream) for index, stream, _ in held]
    return None
