"""A spectator's side of a table as one machine: it connects, says WATCH, and checks every
message of the log the host sends as it comes, with the session that holds no seat
(``Session.observe``, the machine ``p2pwhist verify`` uses), so it shows the table from no
seat's view and records a transcript that ``verify`` accepts (wire.md §2.6).

The rules it keeps:

- The first message must be the host's START, which opens the transcript (``Spectate``); each
  later one is checked as a seat checks one relayed by the host (wire.md §3, via the host),
  recorded once its envelope checks out, then taken.
- A message that fails is said at once in one line, naming it and its author ("message 57
  from bob: bad signature — the table's log cannot be trusted"), and the machine stops,
  keeping the transcript it has: a valid prefix, with nothing after the bad message.
- The host's NOTICE (a seat's connection lost, back, or slow to move) is said, as a seat says
  one about another: it is for people to read, and nothing depends on it.
- The host's DONE ends it, once it says the log we hold is the whole of it. The host may
  refuse us (REFUSE); a silence of ``Limits.spectator_silence`` ends it too.
- It sends nothing after WATCH: a spectator has no say in the game.
- With ``expect`` (``watch --expect``, or the fingerprint a table on this network announced),
  a START signed by a host of another key is refused before anything is recorded: someone
  else's table at that address is not the one our person chose.
"""

from __future__ import annotations

from p2pwhist.identity import fingerprint, same_fingerprint
from p2pwhist.session import HOST, Aborted, RemoteError, Session, SessionError
from p2pwhist.signed import SignatureError, parse
from p2pwhist.table._actions import (
    Action,
    BeginFailed,
    Begun,
    Close,
    Connect,
    ConnId,
    Event,
    Finish,
    Lost,
    Opened,
    OpenFailed,
    Received,
    Record,
    Report,
    Send,
    Show,
    Spectate,
)
from p2pwhist.table._chat import Talk
from p2pwhist.table._errors import LocalTableError, Refused, RemoteTableError, TableError, UnattributedTableError
from p2pwhist.table._frames import (
    PROTOCOL_VERSION,
    Chat,
    Done,
    FrameError,
    Notice,
    Refuse,
    Watch,
    encode,
    read_for_spectator,
)
from p2pwhist.table._limits import Limits
from p2pwhist.table._words import ShownNotices, notice_line
from p2pwhist.wire import MAX_FRAME

UNTRUSTED = "the table's log cannot be trusted"


class SpectatorMachine:
    """See the module docstring. ``where`` names the host for our person."""

    busy = False  # every step is one message: nothing is left to do between frames

    def __init__(self, where: str, limits: Limits, expect: str | None = None) -> None:
        self.where = where
        self.limits = limits
        self.expect = expect  # the host's key fingerprint, if our person named one
        self.session: Session | None = None
        self.talk: Talk | None = None  # the table's talk, checked as a seat checks it, once START is known
        self._conn: ConnId | None = None
        self._heard = 0.0  # when the host last sent anything
        self._noticed = ShownNotices()
        self._over = False

    @property
    def finished(self) -> bool:
        return self._over

    def begin(self, now: float) -> list[Action]:
        self._heard = now
        return [Connect()]

    def work(self, now: float) -> list[Action]:
        return []

    @property
    def deadline(self) -> float | None:
        return None if self._over else self._heard + self.limits.spectator_silence

    def tick(self, now: float) -> list[Action]:
        if self._over or now < self._heard + self.limits.spectator_silence:
            return []
        return self._stop(UnattributedTableError(f"{self.where} sent nothing for {self.limits.spectator_silence:g} s"))

    def frame_limit(self, conn: ConnId) -> int | None:
        return MAX_FRAME if conn == self._conn and not self._over else None

    def reading(self, conn: ConnId) -> bool:
        return True

    def handle(self, event: Event, now: float) -> list[Action]:
        if self._over:
            return []
        if isinstance(event, Opened):
            self._conn, self._heard = event.conn, now
            return [Send(event.conn, encode(Watch(PROTOCOL_VERSION)))]
        if isinstance(event, OpenFailed):
            return self._stop(UnattributedTableError(f"cannot reach {self.where}: {event.reason}"))
        if isinstance(event, Lost):
            return self._stop(UnattributedTableError(f"{self.where} {event.reason} before the game's end"))
        if isinstance(event, Received):
            self._heard = now
            return self._received(event.payload, now)
        if isinstance(event, Begun):
            self.session = session = event.session
            self.talk = Talk(session.game_id, session.table.players, None, None)
            return self._shown()
        if isinstance(event, BeginFailed):
            return self._stop(event.error)
        raise LocalTableError(f"a spectator takes no {type(event).__name__}")

    def _received(self, payload: bytes, now: float) -> list[Action]:
        try:
            frame = read_for_spectator(payload)
        except FrameError as error:
            return self._stop(RemoteTableError(f"{self.where} sent a bad frame: {error}"))
        if isinstance(frame, Refuse):
            return self._stop(Refused(f"{self.where} refused us: {frame.reason}"))
        if isinstance(frame, Done):
            return self._done(frame)
        if isinstance(frame, Chat):  # checked against the seat's key: the host cannot put words in its mouth
            heard = self.talk.take(frame, now) if self.talk is not None else None
            return [heard] if heard is not None else []
        if isinstance(frame, Notice):  # of a seat the table has: before START there is none
            players = self.session.table.players if self.session is not None else ()
            if frame.seat >= len(players) or not self._noticed.worth_showing(frame, now):
                return []
            return [Report(notice_line(frame, [p.name for p in players], None), frame)]
        if self.session is None:
            return self._start(frame.raw)
        return self._message(self.session, frame.raw)

    def _start(self, raw: bytes) -> list[Action]:
        try:
            start = parse(raw)
            Session.observe(start)  # checked here, made again by the edge with the files
        except SignatureError as error:
            return self._stop(RemoteTableError(f"message 0 from {self.where}: {error} — {UNTRUSTED}"))
        except SessionError as error:
            reason = error.reason if isinstance(error, RemoteError) else str(error)
            return self._stop(RemoteTableError(f"message 0 from {self.where}: {reason} — {UNTRUSTED}"))
        host = fingerprint(start.body.players[HOST].key)  # type: ignore[union-attr]
        if self.expect is not None and not same_fingerprint(self.expect, host):
            return self._stop(TableError(f"not watching: the host at {self.where} has key {host}, "
                                      f"not the expected {self.expect}"))
        return [Spectate(start)]

    def _message(self, session: Session, raw: bytes) -> list[Action]:
        seq = len(session.log)
        try:
            message = session.check(raw, 0)
        except RemoteError as error:  # proves nothing against the seat it names: nor do we
            return self._stop(RemoteTableError(f"message {seq} from {self._author(session, raw)}: "
                                               f"{error.reason} — {UNTRUSTED}"))
        out: list[Action] = [Record(message)]
        try:
            session.take(message)
        except Aborted:
            pass  # the game stopped: the host's DONE follows
        except SessionError as error:
            reason = error.reason if isinstance(error, RemoteError) else str(error)
            return out + self._shown() + self._stop(RemoteTableError(
                f"message {seq} from {session.table.players[message.seat].name}: {reason}"))
        return out + self._shown()

    def _done(self, done: Done) -> list[Action]:
        session = self.session
        if session is None or done.have != len(session.log):
            have = 0 if session is None else len(session.log)
            return self._stop(RemoteTableError(f"{self.where} ended the game at message {done.have}, "
                                               f"and sent us {have}"))
        self._over = True
        result = session.outcome if session.outcome is not None else UnattributedTableError(
            f"the game stopped: {session.error}" if session.error is not None else "the game stopped")
        return [Close(self._conn, 1.0, part=True), Finish(result)]  # type: ignore[arg-type]

    def _shown(self) -> list[Action]:
        assert self.session is not None
        return [Show(event) for event in self.session.take_events()]

    def _author(self, session: Session, raw: bytes) -> str:
        """The name of the seat a message names, if it is a message at all, else the host."""
        try:
            seat = parse(raw).seat
        except SignatureError:
            return self.where
        players = session.table.players
        return players[seat].name if seat < len(players) else self.where

    def _stop(self, error: Exception) -> list[Action]:
        """The end, with ``error`` as the result, which the caller says in its one line."""
        self._over = True
        out: list[Action] = [Close(self._conn, 0.0)] if self._conn is not None else []
        return out + [Finish(error)]
