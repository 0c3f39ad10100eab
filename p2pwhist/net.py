"""The network edge: TCP connections, the host's relay, timeouts, and the transcript file.

Topology: only the host needs a reachable port. Every joiner keeps one TCP connection to the
host; the host relays each joiner's messages to the others. The relay cannot forge, reorder,
drop or fork the game unnoticed, because every message is signed by its author and chained to
the one before it (``p2pwhist.session`` checks both, at every peer).

Before the game's log starts, a joiner says HELLO (its protocol version, name and public key)
and the host answers with REFUSE (one line: why) or, once every seat is taken, with the signed
START message that opens the log (``protocol/session.md``).

This module is the thin trio loop around the pure session: read a frame, feed the session,
send what it makes. Timeouts are set here, at the call sites.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import inspect
import ipaddress
import json
import os
import secrets
import socket
import struct
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Protocol

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pwhist.bodies import (
    NONCE_SIZE,
    PROTOCOL_VERSION,
    READY,
    Hello,
    Notice,
    Player,
    Presence,
    Rejoin,
    Resumed,
    Table,
    Welcome,
    Done,
    Forfeit,
    check_ready,
)
from p2pwhist.games.base import ConfigError, Game, Play
from p2pwhist.games.match import MatchLength
from p2pwhist.home import (
    ChangedKey,
    HomeError,
    KnownPeers,
    command_path,
    create_private,
    new_transcript_path,
    reopen_private,
    secrets_path,
    unfinished_games,
)
from p2pwhist.limits import DEFAULT_PORT, DEFAULT_TIMEOUT, DEFAULT_WAIT
from p2pwhist.session import (
    HOST,
    SECRET_SIZE,
    Aborted,
    Convicted,
    LocalError,
    Need,
    Outcome,
    RemoteError,
    Session,
    SessionError,
    start_message,
)
from p2pwhist.session_events import SessionEvent
from p2pwhist.signed import (
    Kind,
    SignatureError,
    SignedMessage,
    fingerprint,
    parse,
    public_bytes,
    same_fingerprint,
)
from p2pwhist.transcript import TranscriptError, TranscriptWriter, read_transcript, read_unfinished
from p2pwhist.wire import LENGTH, MAX_FRAME, FrameBuffer, WireError, frame, pack, unpack

# A handshake is one HELLO frame: a peer that takes longer than this to say HELLO is not a
# p2pwhist peer.
HANDSHAKE_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
# A joiner answers WELCOME once it has checked the host's key, which may mean asking its person.
READY_TIMEOUT = 120.0
# While the table waits for a seat, every this many seconds (or a quarter of the limit, if
# that is less) the others, and the seat itself, are told how long.
NOTICE_EVERY = 30.0
RECEIVE_CHUNK = 65536

# The host's lobby must stay small whoever connects (protocol/wire.md section 2). A HELLO is
# about 100 bytes (a name of at most 32 characters and a 32-byte key), so a frame from a peer
# the game has not started with is at most HELLO_LIMIT bytes, and is read no further than its
# own end: a pending handshake holds under 1.1 KiB for at most HANDSHAKE_TIMEOUT.
HELLO_LIMIT = 1024
# Handshakes under way at once, in all and from one address; beyond either, a connection is
# refused at once. A table has at most three joiners and an honest handshake takes
# milliseconds, so 64 is far more than honest use needs while bounding what a flood can make
# the host hold (64 handshakes of about 10 KiB each, task and socket included, under 1 MiB).
# 8 per address leaves room for several players behind one NAT, or `play`'s bots, all on
# loopback, yet one address cannot take every slot from the others.
MAX_PENDING = 64
MAX_PENDING_PER_ADDRESS = 8
# A refusal of an excess connection is one short line, which a fresh connection's send buffer
# takes at once; a peer that leaves it no room is not waited for longer than this.
REFUSE_AT_ONCE = 0.05


class NetError(Exception):
    """The game stopped because of the network or a peer; the message names the peer, and
    ``seat`` is that peer's seat when there is one."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


class BadFrame(NetError):
    """A peer sent bytes that are not a frame we take: a fault, not a lost connection."""


@dataclass
class Link:
    """One framed TCP connection to a peer. One task writes at a time (trio forbids more).

    ``limit`` is the largest frame taken: ``HELLO_LIMIT`` on the host's side of a connection
    until the game starts on it. Below the wire's own limit a link reads no further than the
    frame it is in (its 4-byte length first, refused at once if over the limit, then exactly
    the rest), so its buffer never holds more than one frame of at most ``limit`` bytes."""

    stream: trio.abc.Stream
    name: str
    seat: int | None = None  # the seat at the other end, once known
    buffer: FrameBuffer = field(default_factory=FrameBuffer)
    limit: int = MAX_FRAME
    _length: bytearray = field(default_factory=bytearray, repr=False)  # while limited: the frame's length so far

    async def send(self, payload: bytes) -> None:
        try:
            await self.stream.send_all(frame(payload))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise NetError(f"{self.name} disconnected ({_os_words(error)})", self.seat) from None

    async def receive(self) -> bytes:
        while True:
            try:
                payload = self.buffer.next_frame()
            except WireError as error:
                raise BadFrame(f"{self.name} sent a bad frame: {error}", self.seat) from None
            if payload is not None:
                self._length.clear()
                return payload
            limited = self.limit < MAX_FRAME
            try:
                data = await self.stream.receive_some(self._rest_of_frame() if limited else RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                raise NetError(f"{self.name} disconnected ({_os_words(error)})", self.seat) from None
            if not data:
                raise NetError(f"{self.name} disconnected", self.seat)
            self.buffer.feed(data)
            if limited and len(self._length) < LENGTH.size:
                self._length += data  # no more than the length's missing bytes were asked for
                if len(self._length) == LENGTH.size and (size := LENGTH.unpack(self._length)[0]) > self.limit:
                    raise BadFrame(f"{self.name} sent a frame of {size} bytes, over the {self.limit}-byte limit "
                                   "before the game", self.seat)

    def _rest_of_frame(self) -> int:
        """How much a limited link asks for: the rest of the frame's length, then of the frame."""
        if len(self._length) < LENGTH.size:
            return LENGTH.size - len(self._length)
        return LENGTH.size + LENGTH.unpack(self._length)[0] - self.buffer.pending

    async def close(self) -> None:
        with trio.move_on_after(1):
            await self.stream.aclose()

    async def part(self) -> None:
        """Close at the end of a game, so that our last words arrive: say we are done sending,
        then read and drop what the peer still sends until it closes too (at most a second).
        Closing a socket with unread data in it sends a reset, which can destroy our last
        message (an ABORT, DONE) in the peer's buffer before it reads it."""
        with trio.move_on_after(1):
            try:
                await self.stream.send_eof()  # type: ignore[attr-defined]
                while await self.stream.receive_some(RECEIVE_CHUNK):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError, OSError,
                    AttributeError):
                pass
        await self.close()


def _os_words(error: Exception) -> str:
    """A socket failure in the OS's words ("Connection refused"), not trio's wrappers: a broken
    stream's ``BrokenResourceError`` has the OS error as its cause, and a failed connect's
    generic "all attempts to connect ... failed" has a group of each attempt's error."""
    cause = error.__cause__
    if isinstance(cause, BaseExceptionGroup):
        cause = next((e for e in cause.exceptions if isinstance(e, OSError)), None)
    found = cause if isinstance(cause, OSError) else error
    if isinstance(found, OSError) and not isinstance(found, socket.gaierror) and found.errno and found.errno > 0:
        return os.strerror(found.errno)
    # a name lookup's strerror is the resolver's message; anything else is named by its type
    return getattr(found, "strerror", None) or str(found) or type(found).__name__


class Agent:
    """Who chooses our moves, and whether to play another hand of an open match: a bot, or a
    person at the terminal. ``wish`` None means always yes (a bot plays on as long as the
    people at the table wish). Unthreaded, ``choose`` and ``wish`` may return awaitables,
    awaited on the event loop (the full-screen table runs there)."""

    def __init__(self, choose: Callable[[object], Play], threaded: bool,
                 wish: Callable[[], bool] | None = None) -> None:
        self._choose = choose
        self._threaded = threaded
        self._wish = wish

    async def choose(self, view: object) -> Play:
        return await self._call(self._choose, view)

    async def wish(self) -> bool:
        return True if self._wish is None else await self._call(self._wish)

    async def _call(self, function: Callable, *args: object):
        if self._threaded:  # a person typing: keep the event loop free meanwhile
            return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)
        result = function(*args)
        return await result if inspect.isawaitable(result) else result  # e.g. the full-screen table's


@dataclass
class PeerOptions:
    """What every playing command shares."""

    name: str
    key: object  # Ed25519PrivateKey
    agent: Agent
    transcript: Path | None
    timeout: float = DEFAULT_TIMEOUT  # the most one seat may take over one message
    known: KnownPeers | None = None
    trust_new: Callable[[str, bytes], Awaitable[bool]] | None = None  # None: accept new keys
    report: Callable[[str], None] = print
    on_event: Callable[[SessionEvent], None] | None = None  # each of the session's events (``take_events``)
    wait: float = DEFAULT_WAIT  # how long the table waits for a seat whose connection was lost
    command: list[str] | None = None  # how this peer was started: ``p2pwhist resume`` runs it again
    resume: Path | None = None  # the transcript of an unfinished game to go on with, if any


@dataclass
class GameRecord:
    outcome: Outcome | None
    transcript: Path
    table: Table


# -- the shared peer loop ------------------------------------------------------------------


class Absent(Exception):
    """The seat whose message is due stayed away past the table's wait, or took longer than
    the limit for one message: it forfeits (``Session.forfeit``)."""

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(reason)
        self.seat = seat
        self.reason = reason


class Peers(Protocol):
    """The other seats, as one peer reaches them: the host through each joiner's connection,
    a joiner through its connection to the host. Connections may drop and come back; what was
    written to the transcript reaches each peer once it is connected (``deliver``)."""

    async def receive(self, seat: int) -> tuple[bytes, int]:
        """The next frame of ``seat``'s message, and the seat whose connection carried it;
        ``Absent`` when the seat is gone too long, ``NetError`` when it cannot come."""

    def received(self, via: int) -> None:
        """The message just written came over ``via``'s connection: it has it already."""

    async def deliver(self) -> None:
        """Send every message written so far to every connected peer that lacks it."""

    @property
    def pending(self) -> bool:
        """Whether a message came in while we were choosing (``meanwhile``): take it first."""

    async def meanwhile(self, choosing: Awaitable[object]) -> object:
        """Await our person's or bot's choice, listening meanwhile: what the others are told
        (a seat gone, slow, back) is shown at once, and a message (the table declaring our
        forfeit, an ABORT) stops the choice (None; ``pending`` is then true)."""


class _GameFiles:
    """What a game keeps on disk while it lasts (session.md §7): the transcript, written
    ahead (every message is in it before it is sent or relayed, so a peer that crashes never
    finds that it sent a message its transcript lacks), the hand secrets, and the command
    that started this peer, for ``p2pwhist resume``. ``raws`` are the log's messages as
    written, which the connections are sent from."""

    def __init__(self, path: Path, secrets_: _SecretFile, writer: TranscriptWriter, raws: list[bytes],
                 command: list[str] | None) -> None:
        self.path = path
        self.secrets = secrets_
        self.writer = writer
        self.raws = raws
        self.command = command
        self.command_path = command_path(path)
        if command is not None and not os.path.lexists(self.command_path):
            try:
                with os.fdopen(create_private(self.command_path, "the command to resume with"), "w") as out:
                    json.dump({"argv": command}, out)
            except (HomeError, OSError) as error:  # only `p2pwhist resume` without arguments needs it
                print(f"Warning: {error}", file=sys.stderr)

    def add(self, message: SignedMessage) -> None:
        self.writer.append(message)
        self.raws.append(message.raw)

    def evidence(self, raw: bytes) -> None:
        """Write the message we refused, before our ABORT, so that anyone who verifies the
        transcript reaches our verdict. A frame that is not even a message proves nothing."""
        if self.raws and self.raws[-1] == raw:
            return  # written once its envelope checked out, then refused by its body
        try:
            self.writer.append(parse(raw))
        except SignatureError:
            pass

    def close(self, over: bool) -> None:
        """Close the transcript, and ``discard`` the rest once the game is ``over``. A game
        started with no command to resume it by (``play``'s own seat) is over when it stops."""
        self.writer.close()
        if over or self.command is None:
            self.discard()

    def discard(self) -> None:
        """Delete the secrets and the command: the game is over, and every secret we still
        hold is either in the transcript or protects nothing any more."""
        self.secrets.discard()
        self.command_path.unlink(missing_ok=True)


async def _play(session: Session, options: PeerOptions, peers: Peers, files: _GameFiles,
                names: list[str]) -> Outcome:
    """Drive the session until the match is over; on a peer's fault, tell the others why.

    A received message is written and passed on (by the host, to the other joiners) once its
    envelope checks out, before the costly checks of its body: every peer makes those itself,
    so their work overlaps ours."""
    started = trio.current_time()
    refused = False
    for event in session.take_events():  # START, or where a resumed peer stands; drained even unshown
        if options.on_event:
            options.on_event(event)
    try:
        while (need := session.need) is not Need.DONE:
            if need is Need.PEER or peers.pending:
                try:
                    raw, via = await peers.receive(session.waiting_for)  # type: ignore[arg-type]
                except Absent as absent:
                    message = _declare_forfeit(session, absent, names)
                    if message is None:
                        break  # the forfeit is settled, but the others cannot sign it: stop here
                    files.add(message)
                    await peers.deliver()
                else:
                    try:
                        message = session.check(raw, via)
                        files.add(message)
                        peers.received(via)
                        await peers.deliver()
                        session.take(message)
                    except RemoteError:
                        reason = _forfeit_of_ours(session, raw)
                        if reason is not None:  # we made our move too late: the table went on without us
                            raise Refused(f"{names[session.seat]} left the match, as the others signed: {reason}")  # type: ignore[index]
                        files.evidence(raw)
                        raise
            else:
                value = await _input_for(session, need, options, started, peers)
                if peers.pending:
                    continue  # a message came first: the session takes it, then asks again
                message = session.produce(value)
                files.add(message)
                await peers.deliver()
            _remember_if_started(session, options)
            for event in session.take_events():
                if options.on_event:
                    options.on_event(event)
            if message.kind in (Kind.HAND, Kind.FORFEIT):
                files.writer.sync()  # at least once a hand: nothing agreed is lost in a crash
        if session.error is not None:
            raise session.error  # a verdict every peer reached (Convicted)
        assert session.outcome is not None
        return session.outcome
    except RemoteError as error:
        if not isinstance(error, Convicted):
            reason = f"{names[error.seat]} (seat {error.seat}) broke the rules: {error.reason}"
            await _abort(session, peers, files, reason, error.seat)
        raise NetError(f"{names[error.seat]} (seat {error.seat}): {error.reason}", error.seat) from None
    except Aborted as error:
        if session.outcome is not None:  # the sender left a match under way: it forfeits
            return session.outcome
        raise NetError(f"{names[error.seat]} (seat {error.seat}) stopped the game: {error.reason}", error.culprit) from None
    except LocalError as error:  # our own fault: say so, and let the others stop cleanly
        await _abort(session, peers, files, f"{names[session.seat]} failed: {error}", None)  # type: ignore[index]
        raise NetError(f"this program failed: {error}") from None
    except Refused:  # the host will not take us back: the game is over for us
        refused = True
        raise
    except NetError as error:
        await _abort(session, peers, files, str(error), error.seat)
        raise
    finally:
        # Stopped for good: nothing to resume. A match played out, or settled by a forfeit,
        # keeps its files until every seat holds the whole log (``finish``), then discards them.
        files.close(over=refused or session.error is not None)


def _forfeit_of_ours(session: Session, raw: bytes) -> str | None:
    """The reason, if ``raw`` is a validly signed FORFEIT naming us at a place in the log where
    we put a message of our own: we were declared gone (too slow) while we made it."""
    try:
        message = parse(raw)
        message.verify(session.table.players[message.seat].key)
    except (SignatureError, IndexError):
        return None
    body = message.body
    if not isinstance(body, Forfeit) or body.seat != session.seat or message.seq >= len(session.log):
        return None
    ours = session.log[message.seq]
    return body.reason if ours.seat == session.seat and ours.prev == message.prev else None


def _declare_forfeit(session: Session, absent: Absent, names: list[str]) -> SignedMessage | None:
    """Our FORFEIT naming the absent seat; None when a forfeit is settled already and the
    seats that should sign it cannot be reached (the host is gone for good). Before every seat
    has accepted, nobody has anything to lose: the game just stops (``NetError``)."""
    if session.leaver is not None or session.outcome is not None:
        return None  # the result is settled; the log stays one signature short
    who = f"{names[absent.seat]} (seat {absent.seat})"
    if not session.begun:
        raise NetError(f"{who} {absent.reason}", absent.seat)
    return session.forfeit(absent.seat, f"{names[absent.seat]} {absent.reason}")


async def _input_for(session: Session, need: Need, options: PeerOptions, started: float, peers: Peers) -> object:
    if need is Need.MOVE:
        return await peers.meanwhile(options.agent.choose(session.view()))
    if need is Need.WISH:
        return await peers.meanwhile(options.agent.wish())
    if need is Need.DECISION:  # the host's clock decides whether a timed match goes on
        minutes = session.table.length.minutes
        return minutes is not None and trio.current_time() - started >= minutes * 60
    return None


async def _abort(session: Session, peers: Peers, files: _GameFiles, reason: str, culprit: int | None) -> None:
    """Sign and send our reason for stopping, and whom we blame; best effort: the others may
    be gone."""
    try:
        message = session.abort(reason, culprit)
    except SessionError:
        return
    files.add(message)
    with trio.move_on_after(2):
        try:
            await peers.deliver()
        except NetError:
            pass


class _SecretFile:
    """Each hand's deck secret, from OS randomness (REFERENCE.md section 2), appended to a file
    beside the transcript and synced before use: with the transcript it is all a crashed peer
    needs to rebuild its state (protocol/session.md section 7).

    The file is created at once by ``create_private``: mode 0600, and never over a file or
    symbolic link already there (``HomeError``), which whoever planted it could read. Its
    descriptor stays open for the whole game and every secret is written and synced through
    it, so replacing the directory entry meanwhile cannot redirect a secret. Reopened to
    resume a game (``reopen``), it gives back the secrets saved in it, in order, before it
    draws new ones."""

    def __init__(self, path: Path, reopen: bool = False) -> None:
        self.path = path
        self._saved: list[bytes] = []
        if reopen:
            fd = reopen_private(path, "the hand secrets")
            data = _read_all(fd)
            whole = len(data) - len(data) % SECRET_SIZE  # a secret cut short by a crash was never used
            os.ftruncate(fd, whole)
            self._saved = [data[at : at + SECRET_SIZE] for at in range(0, whole, SECRET_SIZE)]
        else:
            fd = create_private(path, "the hand secrets")  # HomeError if anything is there already
        self._fd = fd
        self._close = weakref.finalize(self, os.close, fd)  # closed by ``discard``, or at exit

    def __call__(self) -> bytes:
        if self._saved:
            return self._saved.pop(0)
        secret = secrets.token_bytes(SECRET_SIZE)
        try:
            written = 0
            while written < len(secret):
                written += os.write(self._fd, secret[written:])
            os.fsync(self._fd)
        except OSError as error:  # ends the game as our own failure, cleanly
            raise LocalError(f"cannot save a hand secret in {self.path}: {error.strerror}") from None
        return secret

    def discard(self) -> None:
        """Close and delete the file: every secret in it is in the finished transcript, or it
        holds none yet, or the game is over and they protect nothing."""
        self._close()
        self.path.unlink(missing_ok=True)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


async def _begin(options: PeerOptions, start: SignedMessage, seat: int,
                 links: list[Link]) -> tuple[Session, _GameFiles]:
    """Our session and the game's files (``_GameFiles``); the host calls this before it sends
    START, a joiner once START has come.

    The files are created now, so the game never begins without them. If either cannot be
    (a file or link already there, perhaps planted to read our secrets; an unwritable folder),
    nothing is written to either, the others on ``links`` are told why (the host refuses them
    before START; a joiner signs an ABORT instead of its ACCEPT), and the error is raised: one
    line, a local problem (``HomeError`` or ``TranscriptError``)."""
    path = options.transcript or new_transcript_path(hashlib.sha256(start.raw).digest())
    try:
        source = _SecretFile(secrets_path(path))
        try:
            writer = TranscriptWriter(path)
        except TranscriptError:
            source.discard()
            raise
    except (HomeError, TranscriptError) as error:
        reason = f"{options.name} cannot start the game: {error}"
        if seat == HOST:
            for link in links:
                await _refuse(link, reason)
        else:
            notice = Session(start, seat, options.key, None).abort(reason)
            for link in links:
                with trio.move_on_after(2), contextlib.suppress(NetError):
                    await link.send(notice.raw)
        raise
    files = _GameFiles(path, source, writer, [], options.command)
    files.add(start)
    return Session(start, seat, options.key, source), files


@dataclass
class Unfinished:
    """A game of ours that stopped before its end (a crash, Ctrl-C, a lost connection), as
    its transcript's first message says: to resume, with ``resume_game``."""

    path: Path
    start: SignedMessage
    seat: int

    @property
    def table(self) -> Table:
        return self.start.body  # type: ignore[return-value]


def unfinished(path: Path, key) -> Unfinished:
    """The unfinished game in ``path`` in which ``key`` holds a seat; ``ConfigError`` if it is
    not one (no secrets file beside it: the game is over, or never was ours)."""
    if not secrets_path(path).is_file():
        raise ConfigError(f"{path} is not an unfinished game of yours: there is no {secrets_path(path).name} "
                          "beside it (a game deletes it when it ends)")
    try:
        start = next(read_transcript(path))
    except StopIteration:
        raise ConfigError(f"{path} holds no message") from None
    except TranscriptError as error:
        raise ConfigError(f"{path}: {error}") from None
    table = start.body
    mine = public_bytes(key.public_key())
    seats = [seat for seat, player in enumerate(table.players) if player.key == mine] if isinstance(table, Table) else []
    if start.kind is not Kind.START or not seats:
        raise ConfigError(f"{path} is not a game in which your key holds a seat")
    return Unfinished(path, start, seats[0])


def _host_word(payload: bytes) -> Notice | Done | None:
    """The NOTICE or DONE a frame from the host holds, if it is one (a map; a message is an
    array)."""
    if not payload or payload[0] & 0xF0 != 0x80:
        return None
    try:
        value = unpack(payload)
        return Done.from_wire(value) if isinstance(value, dict) and Done.LABEL in value else Notice.from_wire(value)
    except WireError as error:
        raise BadFrame(f"the host sent a bad frame: {error}", HOST) from None


def resume_game(options: PeerOptions, game: Unfinished) -> tuple[Session, _GameFiles]:
    """Our session rebuilt from the transcript and the saved secrets (session.md §7), and the
    game's files reopened to go on; ``ConfigError`` in one line when the transcript does not
    rebuild (damaged, edited, or the game is over)."""
    try:
        log = read_unfinished(game.path)
        source = _SecretFile(secrets_path(game.path), reopen=True)
    except (HomeError, TranscriptError) as error:
        raise ConfigError(f"cannot resume {game.path}: {error}") from None
    try:
        session = Session.resume(log, game.seat, options.key, source)  # type: ignore[arg-type]
    except LocalError as error:  # our own transcript or secrets were changed: kept, to be looked at
        raise ConfigError(f"cannot resume {game.path}: {error}") from None
    except SessionError as error:  # the log ends in a stop or a verdict: the game is over
        session = None
        reason = str(error)
    else:
        reason = str(session.error)
    if session is None or session.error is not None:
        source.discard()
        command_path(game.path).unlink(missing_ok=True)
        raise ConfigError(f"{game.path} is a game that was stopped ({reason}): there is nothing to resume")
    writer = TranscriptWriter(game.path, reopen=True)
    return session, _GameFiles(game.path, source, writer, [m.raw for m in log], options.command)


def _remember_if_started(session: Session, options: PeerOptions) -> None:
    """Once the game has started, remember the others' keys (``KnownPeers``), each labelled
    with its player's name. Started means every seat has signed: the log holds START and the
    n-1 ACCEPTs. Called after each message of the log; that is so at exactly one length (a
    HELLO, or a START listing players who never sign, leaves nothing behind)."""
    log, players = session.log, session.table.players
    if options.known is None or len(log) != len(players) or session.error is not None:
        return
    if any(message.kind is not Kind.ACCEPT for message in log[1:]):
        return
    try:
        options.known.remember((p.name, p.key) for seat, p in enumerate(players) if seat != session.seat)
    except HomeError as error:  # the game goes on; only the memory of it is lost
        options.report(f"Warning: {error}")


@dataclass(eq=False)
class _Connection:
    """A connected peer, and how many of the log's messages it holds (``delivered``): what it
    sent us, what we sent it, and, on its return, what it said it has."""

    link: Link
    delivered: int
    released: trio.Event = field(default_factory=trio.Event)  # set once the game no longer uses it

    async def catch_up(self, raws: list[bytes]) -> None:
        while self.delivered < len(raws):
            await self.link.send(raws[self.delivered])
            self.delivered += 1


def _clock(seconds: float) -> str:
    """m:ss"""
    whole = max(0, int(seconds + 0.5))
    return f"{whole // 60}:{whole % 60:02d}"


def _notice_line(notice: Notice, names: list[str], me: int) -> str:
    """What a NOTICE says, for a person to read."""
    name, left = names[notice.seat], _clock(notice.left)
    if notice.presence is Presence.BACK:
        return f"{name} is back."
    if notice.presence is Presence.GONE:
        return f"{name} lost connection; waiting for them to return ({left} left)."
    if notice.seat == me:
        return f"You have {left} left for your move; then you forfeit the match."
    return f"Waiting for {name} for {_clock(notice.waited)}; they forfeit in {left}."



# -- host ----------------------------------------------------------------------------------


@dataclass
class HostOptions:
    game: Game
    length: MatchLength
    port: int = 0
    bind: str | None = None
    seated: Callable[[int], None] | None = None  # told the number of joiners seated, as it changes


@dataclass(eq=False)
class _Joiner:
    link: Link
    player: Player
    gone: trio.Event = field(default_factory=trio.Event)  # set when it leaves before the game


class _Lobby:
    """The host's table until START: the seated joiners, the watch on their connections, and
    the handshakes under way.

    A seated joiner has nothing to say before START, so a watcher reads its connection: if it
    speaks or closes, the joiner has left and its seat is free again. The watchers run in one
    nursery of the host's task. When the last seat is taken the host cancels that nursery, and
    its end proves that every watcher has stopped; only then does the host count again. If
    someone left in the meantime the table is not full: new watchers start and the host waits
    on. Otherwise the seating is final and START goes out with no watcher left to read a
    joiner's prompt answer to it. (trio: a cancelled receive loses no bytes, so a frame a
    watcher read in full was sent before START existed.)"""

    def __init__(self, options: PeerOptions, seats: int, seated: Callable[[int], None] | None = None) -> None:
        self.options = options
        self.seated = seated
        self.seats = seats  # the joiners wanted
        self.joiners: list[_Joiner] = []
        self.final = False  # START is going out: nobody else sits down
        self.game: _Seats | None = None  # the game under way: a HELLO then is a joiner returning
        self._seated = trio.Event()  # set when someone sits down
        self._pending: dict[str, int] = {}  # handshakes under way, by the remote address
        self._refused = 0  # connections refused for too many handshakes
        self._refusing = 0  # refusals still sending their line

    async def fill(self) -> list[_Joiner]:
        """Wait until every seat is taken and no watcher is reading; the seating is then final."""
        while True:
            async with trio.open_nursery() as watching:
                watched: set[_Joiner] = set()
                while True:
                    watched.intersection_update(self.joiners)  # forget those who left
                    for joiner in self.joiners:
                        if joiner not in watched:
                            watched.add(joiner)
                            watching.start_soon(self._watch, joiner)
                    if len(self.joiners) == self.seats:
                        break
                    self._seated = trio.Event()
                    await self._seated.wait()
                watching.cancel_scope.cancel()
            # Every watcher has stopped. One that read a frame or a hang-up has unseated its
            # joiner; one seated meanwhile was never watched, and has seen nothing either.
            if len(self.joiners) == self.seats:
                self.final = True
                return list(self.joiners)

    async def _watch(self, joiner: _Joiner) -> None:
        try:
            await joiner.link.receive()
            why = "spoke before the game began"
        except NetError:
            why = "left before the game began"
        self.joiners.remove(joiner)
        _number(self.joiners)
        self.options.report(f"{joiner.player.name} {why}; its seat is free again")
        joiner.gone.set()

    def check(self, player: Player) -> None:
        """Refuse (``ConfigError``) a joiner who cannot sit down now."""
        options = self.options
        if self.final or len(self.joiners) >= self.seats:
            raise ConfigError("the table is full")
        if player.name == options.name or any(j.player.name == player.name for j in self.joiners):
            raise ConfigError(f"the name {player.name!r} is taken at this table")
        if player.key == public_bytes(options.key.public_key()) or any(j.player.key == player.key for j in self.joiners):
            raise ConfigError("that key is already seated at this table")

    def seat(self, link: Link, player: Player) -> _Joiner:
        self.check(player)  # again: the trust check may have waited for the host's user
        joiner = _Joiner(link, player)
        self.joiners.append(joiner)
        _number(self.joiners)
        self.options.report(f"{player.name} joined (key {fingerprint(player.key)}); "
                            f"{len(self.joiners) + 1}/{self.seats + 1} seated")
        self._seated.set()
        if self.seated is not None:
            self.seated(len(self.joiners))
        return joiner

    def admit(self, address: str) -> str | None:
        """Count a new handshake from ``address``, or say why it is refused (too many)."""
        if sum(self._pending.values()) >= MAX_PENDING:
            return "the host has too many connections waiting to join; try again shortly"
        if self._pending.get(address, 0) >= MAX_PENDING_PER_ADDRESS:
            return "too many connections from your address are waiting to join this host; try again shortly"
        self._pending[address] = self._pending.get(address, 0) + 1
        return None

    def done(self, address: str) -> None:
        """A handshake that ``admit`` counted has ended."""
        self._pending[address] -= 1
        if not self._pending[address]:
            del self._pending[address]

    async def turn_away(self, link: Link, reason: str) -> None:
        """Refuse a connection beyond the limits at once: one line, if its send buffer takes
        it now, then hang up. A flood is reported, not line by line: the 1st, 2nd, 4th, 8th..."""
        self._refused += 1
        if self._refused & (self._refused - 1) == 0:
            self.options.report(f"Refused {link.name}: {reason} ({self._refused} refused so far)")
        if self._refusing < MAX_PENDING:  # beyond these, the refusal is the hang-up alone
            self._refusing += 1
            try:
                with trio.move_on_after(REFUSE_AT_ONCE), contextlib.suppress(NetError):
                    await link.send(pack({"refuse": reason}))
            finally:
                self._refusing -= 1
        await link.close()


class _Seats:
    """The host's side of the game: each joiner's connection, which may drop and come back.

    A seat whose connection drops is not waited for until its message is due: the game goes
    on without it, and on its return (``rejoin``) it gets every message it missed. Once its
    message is due the table waits ``options.wait`` from the moment it left, telling the
    others (NOTICE); a seat that is connected has ``options.timeout`` for its message. Past
    either, it is ``Absent`` and forfeits."""

    def __init__(self, session: Session, options: PeerOptions, files: _GameFiles, names: list[str],
                 links: list[Link | None]) -> None:
        self.session = session
        self.options = options
        self.files = files
        self.names = names
        now = trio.current_time()
        self.connections: list[_Connection | None] = [None] + [
            None if link is None else _Connection(link, 0) for link in links]  # just seated: it has nothing yet
        self.lost_at = {seat: now for seat, c in enumerate(self.connections) if seat != HOST and c is None}
        self._returned = trio.Event()  # set, and replaced, whenever a seat returns
        self._news: list[Notice] = []  # to tell the connected seats at the next chance

    async def receive(self, seat: int) -> tuple[bytes, int]:
        options = self.options
        due = trio.current_time()
        every = min(NOTICE_EVERY, options.timeout / 4)
        next_notice = due + every
        while True:
            await self._tell_news()
            connection = self.connections[seat]
            limit_at = due + options.timeout
            deadline = limit_at if connection is not None else min(limit_at, self.lost_at[seat] + options.wait)
            with trio.move_on_at(min(deadline, next_notice)):
                if connection is None:
                    returned = self._returned
                    await returned.wait()
                    continue
                try:
                    return await connection.link.receive(), seat
                except BadFrame:
                    raise
                except NetError as error:
                    self._lost(seat, connection, error)
                    continue
            now = trio.current_time()
            if now >= deadline:
                if deadline < limit_at:
                    raise Absent(seat, f"lost connection and did not return within {_clock(options.wait)}")
                raise Absent(seat, f"took longer than {_clock(options.timeout)} over one message")
            next_notice += every
            presence = Presence.GONE if self.connections[seat] is None else Presence.SLOW
            self._announce(Notice(seat, presence, int(now - due), int(deadline - now)))

    def received(self, via: int) -> None:
        connection = self.connections[via]
        if connection is not None:
            connection.delivered = len(self.files.raws)

    pending = False  # while it is our turn no joiner may send: their returns are the lobby's

    async def meanwhile(self, choosing: Awaitable[object]) -> object:
        return await choosing

    async def deliver(self) -> None:
        for seat, connection in enumerate(self.connections):
            if connection is not None:
                try:
                    await connection.catch_up(self.files.raws)
                except NetError as error:
                    self._lost(seat, connection, error)

    async def finish(self) -> None:
        """The log is complete: see that every joiner (but one that left) holds all of it, and
        say DONE. One whose connection is down may lack the last messages: it is waited for,
        within the wait, and catches up when it returns."""
        raws, wait = self.files.raws, self.options.wait
        done = pack(Done(len(raws)).to_wire())
        leaver = self.session.leaver
        missing = {seat for seat in range(1, len(self.connections)) if leaver is None or seat != leaver.seat}
        while True:
            await self.deliver()
            for seat in sorted(missing):
                connection = self.connections[seat]
                if connection is not None and connection.delivered == len(raws) and \
                        await self._done_answered(seat, connection, done, len(raws)):
                    missing.discard(seat)
            if not missing:
                return
            until = max(self.lost_at.get(seat, trio.current_time()) for seat in missing) + wait
            if trio.current_time() >= until:
                return  # they did not come back: their transcripts stay a few messages short
            with trio.move_on_at(until):
                await self._returned.wait()

    async def _done_answered(self, seat: int, connection: _Connection, done: bytes, have: int) -> bool:
        """Say DONE to ``seat`` and hear it say DONE back, holding the whole log (wire.md §2).
        That the DONE was written proves nothing: the kernel takes a write into a connection
        whose peer has just died, and a joiner killed right after its last message would be
        counted finished, left a message short when it comes back to a host that is gone."""
        try:
            await connection.link.send(done)
            with trio.move_on_after(HANDSHAKE_TIMEOUT):  # a joiner answers at once
                answer = await connection.link.receive()
                with contextlib.suppress(WireError):
                    if Done.from_wire(unpack(answer)) == Done(have):
                        return True
            error = NetError(f"{connection.link.name} did not answer DONE", seat)
        except NetError as lost:
            error = lost
        self._lost(seat, connection, error)  # as for any connection down at the end: it may return
        await connection.link.close()
        return False

    def _lost(self, seat: int, connection: _Connection, error: NetError) -> None:
        if self.connections[seat] is not connection:
            return  # an old connection, replaced by the seat's return
        self.connections[seat] = None
        self.lost_at[seat] = trio.current_time()
        connection.released.set()
        if self.session.leaver is None and self.session.waiting_for is not None:
            self._announce(Notice(seat, Presence.GONE, 0, int(self.options.wait)))

    def _announce(self, notice: Notice) -> None:
        self.options.report(_notice_line(notice, self.names, HOST))
        self._news.append(notice)

    async def _tell_news(self) -> None:
        """The NOTICEs so far, to every connected seat (best effort: one that fails is lost)."""
        news, self._news = self._news, []
        for notice in news:
            frame_ = pack(notice.to_wire())
            for seat, connection in enumerate(self.connections):
                if connection is not None:
                    try:
                        await connection.link.send(frame_)
                    except NetError as error:
                        self._lost(seat, connection, error)  # its news goes out next time

    async def rejoin(self, link: Link, key: bytes, rejoin: Rejoin, nonce: bytes) -> _Connection:
        """Take a returning joiner back (wire.md §2), or refuse it (``ConfigError``): it must
        prove it holds its seat's key by signing our nonce, and hold a prefix of our log (or
        our log and messages of its own that we never got, which come next and are checked
        like any other)."""
        session, raws = self.session, self.files.raws
        players = session.table.players
        if rejoin.game != session.game_id:
            raise ConfigError("this host is playing another game")
        if rejoin.seat >= len(players) or players[rejoin.seat].key != key:
            raise ConfigError(f"seat {rejoin.seat} of this game has another key than yours")
        name = f"{players[rejoin.seat].name} (seat {rejoin.seat})"
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(
                rejoin.proof, Rejoin.statement(rejoin.game, rejoin.seat, rejoin.have, rejoin.head, nonce))
        except (InvalidSignature, ValueError):
            raise ConfigError(f"{name} did not prove that it holds the seat's key") from None
        leaver = session.leaver
        if leaver is not None and leaver.seat == rejoin.seat:
            raise ConfigError(f"{name} forfeited the match: {leaver.reason}")
        if session.error is not None:
            raise ConfigError("the game was stopped")
        if rejoin.have <= len(raws) and hashlib.sha256(raws[rejoin.have - 1]).digest() != rejoin.head:
            raise ConfigError(f"{name}'s transcript differs from the table's log at or before message "
                              f"{rejoin.have - 1}: it was changed, or {players[rejoin.seat].name} signed two "
                              "different messages at one place in the log")
        link.seat, link.name, link.limit = rejoin.seat, players[rejoin.seat].name, MAX_FRAME
        await link.send(pack(Resumed(len(raws)).to_wire()))
        connection = _Connection(link, min(rejoin.have, len(raws)))
        # Until it holds the whole log: the game may write more meanwhile, and ``catch_up``
        # checks the length after each send. No await lies between its last check and the
        # connection taking its place, so no message can fall between the two.
        await connection.catch_up(raws)
        old, self.connections[rejoin.seat] = self.connections[rejoin.seat], connection
        self.lost_at.pop(rejoin.seat, None)
        self._returned.set()
        self._returned = trio.Event()
        self._announce(Notice(rejoin.seat, Presence.BACK, 0, 0))
        if old is not None:
            old.released.set()
            await old.link.close()
        return connection


async def host(options: PeerOptions, table_options: HostOptions,
               task_status=trio.TASK_STATUS_IGNORED) -> GameRecord:
    """Listen, seat the joiners, then play the match, relaying joiners' messages; or, with
    ``options.resume``, go on with an unfinished game of ours, waiting for the joiners to
    return (they reconnect by themselves).

    ``task_status.started`` receives the listening port, so tests can ``nursery.start`` it."""
    key = options.key
    returning = None if options.resume is None else unfinished(options.resume, key)
    if returning is not None and returning.seat != HOST:
        raise ConfigError(f"you joined the game in {returning.path}: resume it with p2pwhist join or p2pwhist resume")
    game = table_options.game if returning is None else returning.table.game
    players = game.players
    try:
        listeners = await trio.open_tcp_listeners(table_options.port, host=table_options.bind)
    except OSError as error:  # a port in use, an address not of this machine: the user's to fix
        where = f"{table_options.bind or 'every address'}, port {table_options.port}"
        raise ConfigError(f"cannot listen on {where}: {_os_words(error)} (choose another with --port or --bind)") from None
    port = listeners[0].socket.getsockname()[1]
    my_print = fingerprint(public_bytes(key.public_key()))
    lobby = _Lobby(options, players - 1, table_options.seated)
    failure: NetError | None = None
    async with trio.open_nursery() as nursery:
        # Listening all along: before the game for joiners, during it for joiners who return.
        for listener in listeners:
            nursery.start_soon(trio.serve_listeners, lambda s: _greet(s, options, lobby), [listener])
        try:
            if returning is not None:
                session, files = resume_game(options, returning)
                options.report(f"Resuming the unfinished game in {returning.path} on port {port}, with "
                               f"{', '.join(p.name for p in session.table.players[1:])}; they return by themselves")
                task_status.started(port)
                links: list[Link | None] = [None] * (players - 1)
            else:
                options.report(f"Hosting {game.name} for {players} players on port {port}; "
                               f"your key fingerprint is {my_print}")
                ports = {listener.socket.family: listener.socket.getsockname()[1] for listener in reversed(listeners)}
                commands = _join_commands(_addresses(table_options.bind, ports), my_print)
                options.report("Others join with:" if len(commands) == 1 else "Others join with one of:")
                for command in commands:
                    options.report(f"  {command}")
                task_status.started(port)
                session, files, links = await _seat_table(options, table_options, lobby)
            record = await _host_game(options, lobby, session, files, links)
        except NetError as error:  # raised below, outside the nursery, as itself (not a group)
            failure = error
        finally:
            nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return record


async def _seat_table(options: PeerOptions, table_options: HostOptions,
                      lobby: _Lobby) -> tuple[Session, _GameFiles, list[Link | None]]:
    """Wait for the table to fill, then make START, our session and the game's files."""
    joiners = await lobby.fill()
    links: list[Link | None] = [j.link for j in joiners]
    for joiner in joiners:
        joiner.link.limit = MAX_FRAME  # the game's messages are larger than a HELLO
    key = options.key
    table = Table(table_options.game, table_options.length,
                  (Player(options.name, public_bytes(key.public_key())),) + tuple(j.player for j in joiners),
                  secrets.token_bytes(32), time.strftime("%Y-%m-%d"))
    start = start_message(key, table)
    session, files = await _begin(options, start, HOST, [j.link for j in joiners])  # before START goes out
    options.report(f"All seats taken: {', '.join(p.name for p in table.players)}. Transcript: {files.path}")
    return session, files, links


async def _host_game(options: PeerOptions, lobby: _Lobby, session: Session, files: _GameFiles,
                     links: list[Link | None]) -> GameRecord:
    """Play the match as its host: relay, keep the time, and take back joiners who return."""
    names = [p.name for p in session.table.players]
    seats = _Seats(session, options, files, names, links)
    lobby.final, lobby.game = True, seats
    try:
        await seats.deliver()  # START, to everyone seated (or whatever a returning host has)
        outcome = await _play(session, options, seats, files, names)
        if session.error is None and session.waiting_for is None:
            await seats.finish()
        files.discard()
    finally:
        async with trio.open_nursery() as parting:
            for connection in seats.connections:
                if connection is not None:
                    parting.start_soon(connection.link.part)
    return GameRecord(outcome, files.path, session.table)


async def _greet(stream: trio.SocketStream, options: PeerOptions, lobby: _Lobby) -> None:
    """Take one joiner's HELLO and seat it, or refuse it in one line; a seated joiner's
    connection is kept open for the game, unless the joiner leaves first. Once the game is
    under way, a HELLO is a joiner returning to its seat (``_Seats.rejoin``)."""
    link = Link(stream, f"a joiner at {_peer_address(stream)}", limit=HELLO_LIMIT)  # until its HELLO names it
    address = _peer_host(stream)
    refusal = lobby.admit(address)
    if refusal is not None:
        await lobby.turn_away(link, refusal)
        return
    try:
        joiner = await _handshake(link, options, lobby)
    except Exception as error:  # noqa: BLE001 (a bug of ours must not take the table down with it)
        options.report(f"Dropped {link.name}: internal error in its handshake ({type(error).__name__}: {error})")
        await link.close()
        return
    finally:
        lobby.done(address)
    if isinstance(joiner, _Connection):  # a joiner back in the game: its connection is the game's
        await joiner.released.wait()  # (trio closes a handler's stream when the handler returns)
    elif joiner is not None:
        await joiner.gone.wait()  # after START, never: the connection belongs to the game
        await link.close()


async def _handshake(link: Link, options: PeerOptions, lobby: _Lobby) -> _Joiner | _Connection | None:
    """The joiner seated, or its connection if it returned to the game under way, or None
    once it is refused or dropped (and its connection closed)."""
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            hello = await link.receive()
        player = _read_hello(hello)
        link.name = player.name
        if lobby.game is None:
            lobby.check(player)
            await _check_trust(options, player.name, player.key)
        elif player.key not in [p.key for p in lobby.game.session.table.players[1:]]:
            raise ConfigError("the table is full: a game is under way")
        # Our identity, for the joiner to check before it sits down: one that refuses us
        # leaves now, and never holds up or ends the table. The nonce is for one returning.
        nonce = secrets.token_bytes(NONCE_SIZE)
        await link.send(pack(Welcome(PROTOCOL_VERSION, options.name, public_bytes(options.key.public_key()),
                                     nonce).to_wire()))
        with trio.fail_after(READY_TIMEOUT if lobby.game is None else HANDSHAKE_TIMEOUT):
            answer = await link.receive()
        try:
            value = unpack(answer)
            if lobby.game is not None:
                if not (isinstance(value, dict) and Rejoin.LABEL in value):
                    raise ConfigError("a game is under way at this table")
                rejoin = Rejoin.from_wire(value)
            else:
                check_ready(value)
        except WireError as error:
            raise ConfigError(f"not a p2pwhist {'REJOIN' if lobby.game else 'READY'}: {error}") from None
        if lobby.game is not None:
            return await lobby.game.rejoin(link, player.key, rejoin, nonce)
        return lobby.seat(link, player)
    except ChangedKey as changed:
        # The host's user, asked, did not trust a new key under a name they knew with another
        # one. The whole story is for them; the joiner is told in its own terms.
        options.report(f"Refused {link.name}: {changed}")
        await _refuse(link, f"the host's user did not accept key {fingerprint(player.key)} for {player.name!r}: "
                            "it is not the key they played with under that name")
        return None
    except ConfigError as refusal:
        options.report(f"Refused {link.name}: {refusal}")
        await _refuse(link, str(refusal))
        return None
    except NetError as error:  # gone, or a frame we cannot even delimit: nobody to answer
        options.report(f"Dropped a connection during its handshake: {error}")
        await link.close()
        return None
    except trio.TooSlowError:
        options.report(f"Dropped {link.name}: no HELLO within {HANDSHAKE_TIMEOUT:g} s, "
                       f"or no answer to our WELCOME in time")
        await link.close()
        return None


def _number(joiners: list[_Joiner]) -> None:
    """Seats follow the order of arrival; the host is seat 0."""
    for seat, joiner in enumerate(joiners, start=1):
        joiner.link.seat = seat


async def _refuse(link: Link, reason: str) -> None:
    """Tell a joiner in one line why it may not sit down (best effort), and hang up."""
    with trio.move_on_after(2):
        try:
            await link.send(pack({"refuse": reason}))
        except NetError:
            pass
    await link.close()


def _peer_host(stream: trio.abc.Stream) -> str:
    """The remote address without its port: what the per-address limit of handshakes counts."""
    try:
        return str(stream.socket.getpeername()[0])  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return "unknown"


def _peer_address(stream: trio.abc.Stream) -> str:
    try:
        address = stream.socket.getpeername()  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not a socket, or already disconnected
        return "an unknown address"
    return f"[{address[0]}]:{address[1]}" if ":" in address[0] else f"{address[0]}:{address[1]}"


def _read_hello(payload: bytes) -> Player:
    """The joiner a HELLO describes; a refusal (``ConfigError``) says why in one line, since a
    well-delimited frame lets us tell the joiner."""
    try:
        hello = Hello.from_wire(unpack(payload))
    except WireError as error:
        raise ConfigError(f"not a p2pwhist HELLO: {error}") from None
    if hello.version != PROTOCOL_VERSION:
        raise ConfigError(f"you speak protocol version {hello.version}; this host speaks version {PROTOCOL_VERSION} "
                          "(both sides need a p2pwhist of one protocol version)")
    return Player(hello.name, hello.key)


async def _check_trust(options: PeerOptions, name: str, key: bytes) -> None:
    """Whether to play with ``key``, which calls itself ``name`` (protocol/wire.md section 5).

    Identity is the key; the name is only a label anyone can choose. A key we played with
    before is trusted, under any name. A new key is put to the user (``trust_new``) or, with
    nobody to ask, accepted; when its name is one we knew with another key, an unattended
    peer says so in a warning naming both fingerprints. Nothing is remembered here: a key is
    remembered once a game with it has started (``_remember_if_started``). Refusals raise
    ``ConfigError`` (``ChangedKey`` for a known name's new key)."""
    known = options.known
    if known is None:
        return
    print_ = fingerprint(key)
    try:
        seen = known.load()
    except HomeError as error:
        options.report(f"Warning: {error}; every key counts as new")
        seen = {}
    label = seen.get(print_)
    if label is not None:
        if label != name:
            options.report(f"{name} has the key you played with as {label!r} ({print_})")
        return
    before = [p for p, n in seen.items() if n == name][-2:]  # the newest, for a line of sane length
    if options.trust_new is None:  # unattended: accept, and say so when the name had another key
        if before:
            options.report(f"Warning: {name!r} has a different key from the {name!r} you played before "
                           f"(now {print_}, before {' or '.join(before)}); accepting it, as nobody is here to ask")
        return
    if await options.trust_new(name, key):
        return
    if before:
        raise ChangedKey(f"{name!r} has a different key from the {name!r} you played before "
                         f"(now {print_}, before {' or '.join(before)}), and was not trusted")
    raise ConfigError(f"{name} (key {print_}) was not trusted")


def _addresses(bind: str | None, ports: dict[int, int]) -> list[tuple[str, int]]:
    """The addresses, each with its port, at which others may reach a host listening on
    ``bind``; ``ports`` is the port of each address family's listener (with ``--port 0`` the
    IPv4 and IPv6 listeners get different ones). ``_join_commands`` sorts and words them.

    With ``bind`` one address or name: that alone. Otherwise this machine's addresses of each
    family listened on, the one its default route leaves from first, then a loopback address.
    Finding them sends nothing: the default route's source address is the one a UDP socket
    connected toward a documentation address is given (connecting a UDP socket only picks a
    route), and ``_interface_addresses`` reads the others where it can. Whatever cannot be
    read is left out: at worst, only loopback is listed."""
    if bind not in (None, "", "0.0.0.0", "::"):
        return [(bind, next(iter(ports.values())))]  # type: ignore[list-item]
    found: list[tuple[str, int]] = []
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        if family in ports:
            addresses = dict.fromkeys([*_routed_address(family, probe), *_interface_addresses(family)])
            found += [(address, ports[family]) for address in addresses if not _is_loopback(address)]
    loopback = socket.AF_INET if socket.AF_INET in ports else socket.AF_INET6
    return found + [("127.0.0.1" if loopback == socket.AF_INET else "::1", ports[loopback])]


def _is_loopback(address: str) -> bool:

    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _routed_address(family: int, probe: str) -> list[str]:
    """The source address of this machine's route toward ``probe``, if it has one. A UDP
    socket's connect sends no packet: it only chooses the route."""
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            return [str(udp.getsockname()[0])]
    except OSError:
        return []


def _interface_addresses(family: int) -> list[str]:
    """This machine's addresses of ``family``, as far as they can be read without sending
    anything; [] when they cannot. On Linux the kernel lists them; Windows resolves its own
    host name to every address of every adapter, locally. Elsewhere a look-up of the host
    name could ask a name server, so only the default route's address is known."""

    try:
        if sys.platform == "linux":
            return _linux_ipv4() if family == socket.AF_INET else _linux_ipv6()
        if sys.platform == "win32":
            return [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, family)]
    except (OSError, ValueError, ImportError):
        pass
    return []


def _linux_ipv4() -> list[str]:
    """Every IPv4 address of every interface, secondary ones included: ``SIOCGIFCONF`` on a
    socket that is never connected."""
    import fcntl  # Unix only: imported where it is used, on Linux

    siocgifconf = 0x8912
    ifreq = 40 if struct.calcsize("P") == 8 else 32  # struct ifreq: a 16-byte name, then a union
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        slots = 32
        while True:
            buffer = array.array("B", bytes(ifreq * slots))
            request = struct.pack("iP", len(buffer), buffer.buffer_info()[0])  # struct ifconf
            length = struct.unpack("iP", fcntl.ioctl(sock.fileno(), siocgifconf, request))[0]
            if length < len(buffer) or slots >= 4096:  # a full buffer may have been cut short
                break
            slots *= 4
    data = buffer.tobytes()
    # each entry: the interface's name, then its struct sockaddr_in (family, port, address)
    return [socket.inet_ntoa(data[at + 20 : at + 24]) for at in range(0, length - ifreq + 1, ifreq)]


def _linux_ipv6() -> list[str]:
    """Every usable IPv6 address of every interface, from /proc/net/if_inet6 (a line each:
    the address in hex, interface index, prefix length, scope, flags, interface name).
    Addresses not yet checked for duplicates, found duplicated, deprecated or temporary (a
    privacy address, which changes; the interface's stable one is listed) are left out. A
    link-local address is given with its interface as its zone."""

    unusable = 0x01 | 0x08 | 0x20 | 0x40  # IFA_F_TEMPORARY, _DADFAILED, _DEPRECATED, _TENTATIVE
    found = []
    with open("/proc/net/if_inet6", encoding="ascii") as table:
        for line in table:
            fields = line.split()
            if len(fields) != 6 or int(fields[4], 16) & unusable:
                continue
            address = ipaddress.IPv6Address(bytes.fromhex(fields[0]))
            found.append(f"{address}%{fields[5]}" if address.is_link_local else str(address))
    return found


def _join_commands(addresses: list[tuple[str, int]], host_print: str) -> list[str]:
    """The ``p2pwhist join`` command for each address, with its port, that a friend could
    use, to print under "Others join with": IPv4 addresses and names first, then IPv6 ones
    in brackets (``[addr]:port``); link-local ones only when nothing else is there (an
    IPv6 one without our zone, which means nothing on the joiner's machine); loopback last,
    marked "this machine only". The port is left out when it is ``DEFAULT_PORT``. A marker
    follows a ``#``, so a line pasted whole into a shell still runs."""

    groups: dict[int, list[tuple[str, int, str]]] = {0: [], 1: [], 2: [], 3: []}
    for text, port in addresses:
        try:
            ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(text)
        except ValueError:
            ip = None  # a name (from --bind)
        if ip is None:
            group, shown, note = (3, text, "this machine only") if text.lower() == "localhost" else (0, text, "")
        elif ip.is_unspecified:
            continue
        elif ip.is_loopback:
            group, shown, note = 3, str(ip), "this machine only"
        elif ip.is_link_local:
            bare = str(ip).partition("%")[0]
            note = ("link-local: the joiner adds its own interface, as in [ADDRESS%eth0]" if ip.version == 6
                    else "link-local: the same network link only")
            group, shown = 2, bare
        else:
            group, shown, note = (0 if ip.version == 4 else 1), str(ip), ""
        if all(entry[0] != shown or entry[1] != port for entry in groups[group]):
            groups[group].append((shown, port, note))
    if groups[0] or groups[1]:
        groups[2] = []
    lines = []
    for shown, port, note in groups[0] + groups[1] + groups[2] + groups[3]:
        where = f"[{shown}]" if ":" in shown else shown
        if port != DEFAULT_PORT:
            where += f":{port}"
        lines.append(f"p2pwhist join {where} --expect {host_print}" + (f"  # {note}" if note else ""))
    return lines


# -- join ----------------------------------------------------------------------------------


class Refused(NetError):
    """The host will not take us back (we forfeited, or our transcript is not its log): the
    game is over for us, and there is no point in trying again."""


class _HostLine:
    """A joiner's side of the game: its connection to the host, which it re-opens by itself
    when it drops, with growing pauses, for as long as the table waits (``options.wait``).
    The host, which relays everyone, is ``Absent`` once that wait is over, or once it takes
    longer than ``options.timeout`` over a message of its own; for the others' messages the
    host keeps the time, and this side only makes sure that nothing hangs for ever."""

    def __init__(self, session: Session, options: PeerOptions, files: _GameFiles, names: list[str],
                 address: str, port: int) -> None:
        self.session = session
        self.options = options
        self.files = files
        self.names = names
        self.address, self.port = address, port
        self.connection: _Connection | None = None
        self.lost_at = trio.current_time()
        self._held: list[bytes] = []  # a message that came while we were choosing

    @property
    def pending(self) -> bool:
        return bool(self._held)

    async def meanwhile(self, choosing: Awaitable[object]) -> object:
        chosen: object = None
        bad: list[BadFrame] = []  # raised here, not inside the nursery (which would wrap it in a group)
        async with trio.open_nursery() as nursery:

            async def listen() -> None:
                while (connection := self.connection) is not None:
                    try:
                        payload = await connection.link.receive()
                        word = _host_word(payload)
                    except BadFrame as error:
                        bad.append(error)
                        nursery.cancel_scope.cancel()
                        return
                    except NetError as error:
                        self._lost(error)  # ``receive`` returns, once we have chosen
                        return
                    if word is None:
                        self._held.append(payload)
                        nursery.cancel_scope.cancel()
                        return
                    self._show(word)  # type: ignore[arg-type]

            nursery.start_soon(listen)
            chosen = await choosing
            nursery.cancel_scope.cancel()
        if bad:
            raise bad[0]
        return chosen

    async def receive(self, seat: int) -> tuple[bytes, int]:
        if self._held:
            return self._held.pop(0), HOST
        options = self.options
        due = trio.current_time()
        limit = options.timeout if seat == HOST else options.timeout + options.wait + NOTICE_EVERY
        while True:
            connection = self.connection
            if connection is None:
                await self._return()
                continue
            with trio.move_on_at(due + limit):
                try:
                    payload = await connection.link.receive()
                except BadFrame:
                    raise
                except NetError as error:
                    self._lost(error)
                    continue
                word = _host_word(payload)
                if word is None:
                    return payload, HOST
                self._show(word)
                continue
            if seat == HOST:
                raise Absent(HOST, f"took longer than {_clock(options.timeout)} over one message")
            raise NetError(f"the host passed on nothing from {self.names[seat]} for {_clock(limit)}", HOST)

    def _show(self, word: Notice | Done) -> None:
        if isinstance(word, Notice) and word.seat < len(self.names) and \
                (word.seat, word.presence) != (self.session.seat, Presence.BACK):
            self.options.report(_notice_line(word, self.names, self.session.seat))  # type: ignore[arg-type]

    async def finish(self) -> None:
        """Our log is complete: stay until the host says DONE, returning if the connection
        drops (the host may have lost our last message in a crash), within the wait."""
        while True:
            connection = self.connection
            if connection is None:
                try:
                    await self._return()
                except Absent:
                    return  # the host is gone: our log is complete, and it may have all of it
                continue
            with trio.move_on_after(self.options.timeout + self.options.wait):
                try:
                    word = _host_word(await connection.link.receive())
                except BadFrame:
                    return
                except NetError as error:
                    self._lost(error)
                    continue
                if not isinstance(word, Done):
                    self._show(word)  # type: ignore[arg-type]
                    continue
                with contextlib.suppress(NetError):  # the host counts us finished on this answer
                    await connection.link.send(pack(Done(len(self.files.raws)).to_wire()))
            return

    def received(self, via: int) -> None:
        if self.connection is not None:
            self.connection.delivered = len(self.files.raws)

    async def deliver(self) -> None:
        if self.connection is not None:
            try:
                await self.connection.catch_up(self.files.raws)
            except NetError as error:
                self._lost(error)

    def _lost(self, error: NetError) -> None:
        self.connection = None
        self.lost_at = trio.current_time()
        self.options.report(f"Lost the connection to the host ({error}); reconnecting for up to "
                            f"{_clock(self.options.wait)}...")

    async def _return(self) -> None:
        """Connect again and rejoin, pausing longer after each failure, until the wait is over."""
        deadline = self.lost_at + self.options.wait
        pause = 0.25
        while True:
            left = deadline - trio.current_time()
            if left <= 0:
                raise Absent(HOST, f"lost connection and did not return within {_clock(self.options.wait)}")
            try:
                with trio.fail_after(min(CONNECT_TIMEOUT, max(left, 0.1))):
                    link, welcome = await _greet_host(self.options, self.address, self.port)
                    await self.rejoin(link, welcome)
                return
            except trio.TooSlowError:
                pass
            except Refused:
                raise
            except NetError:
                pass
            await trio.sleep(min(pause, max(0.0, deadline - trio.current_time())))
            pause = min(pause * 2, 5.0)

    async def rejoin(self, link: Link, welcome: Welcome) -> None:
        """Take our seat back on ``link`` (wire.md §2): prove our key over the host's nonce,
        say how much of the log we hold, then send what the host lacks of ours; what we lack
        comes as the next messages."""
        session, raws = self.session, self.files.raws
        try:
            if welcome.key != session.table.players[HOST].key:
                raise NetError(f"{link.name} has another key than this game's host")
            have, head = len(raws), hashlib.sha256(raws[-1]).digest()
            statement = Rejoin.statement(session.game_id, session.seat, have, head, welcome.nonce)  # type: ignore[arg-type]
            proof = self.options.key.sign(statement)  # type: ignore[attr-defined]
            await link.send(pack(Rejoin(session.game_id, session.seat, have, head, proof).to_wire()))  # type: ignore[arg-type]
            with trio.fail_after(HANDSHAKE_TIMEOUT):
                reply = await link.receive()
            try:
                resumed = Resumed.from_wire(_reply(reply, link, Refused))
            except WireError as error:
                raise NetError(f"{link.name} sent a bad RESUMED: {error}") from None
            connection = _Connection(link, min(resumed.have, have))
            await connection.catch_up(raws)
        except BaseException:
            await link.close()
            raise
        self.connection = connection
        self.options.report("Back at the table.")


async def join(options: PeerOptions, address: str, port: int, expect: str | None = None) -> GameRecord:
    """Connect to a host, take the seat it gives, and play the match; or go on with an
    unfinished game of ours at this host: ``options.resume``, or else the newest one whose
    host has the key this host greets us with. Going on with ``options.resume``, the host
    may be down (it crashed too): we try again, pausing longer each time, within the wait."""
    if options.resume is not None:
        return await _join_again(options, address, port, unfinished(options.resume, options.key))
    link, welcome = await _greet_host(options, address, port)
    try:
        returning = _returning_to(options, welcome)
        if returning is not None:
            return await _join_again(options, address, port, returning, link, welcome)
        try:  # before we sit down: a host we refuse loses no seat and its table waits on
            if expect is not None and not same_fingerprint(expect, fingerprint(welcome.key)):
                raise ConfigError(f"the host's key is {fingerprint(welcome.key)}, not the expected {expect}")
            if expect is None:  # --expect: trusted already
                await _check_trust(options, welcome.name, welcome.key)
        except (ConfigError, ChangedKey) as refusal:
            raise NetError(f"{options.name} does not sit down: {refusal}") from None
        await link.send(pack(READY))
        options.report(f"Connected to {address}:{port}; waiting for the table to fill")
        first = await link.receive()  # no timeout: the table fills when people arrive
        start = _read_start(first, link)
        table, seat = _seat_of(start, options.key)
        try:
            if table.players[HOST].key != welcome.key:
                raise ConfigError("the host signed START with another key than it greeted us with")
            for i, player in enumerate(table.players):
                if i not in (seat, HOST):
                    await _check_trust(options, player.name, player.key)
        except (ConfigError, ChangedKey) as refusal:
            # Tell the table why we leave, signed, instead of simply hanging up.
            notice = Session(start, seat, options.key, None).abort(f"{options.name} refuses to play: {refusal}")
            with trio.move_on_after(2), contextlib.suppress(NetError):
                await link.send(notice.raw)
            raise NetError(str(refusal)) from None
        session, files = await _begin(options, start, seat, [link])
    except BaseException:
        await link.close()
        raise
    names = [p.name for p in table.players]
    options.report(f"Seated as {names[seat]} (seat {seat}) with {', '.join(names)}. Transcript: {files.path}")
    line = _HostLine(session, options, files, names, address, port)
    line.connection = _Connection(link, len(files.raws))  # the host has START, which is all we have
    return await _join_game(session, options, line, files, names)


def _returning_to(options: PeerOptions, welcome: Welcome) -> Unfinished | None:
    """The newest unfinished game of ours under ``$P2PWHIST_HOME`` with the host that sent
    ``welcome``, to go on with."""
    for path in unfinished_games():
        try:
            game = unfinished(path, options.key)
        except ConfigError:
            continue
        if game.seat != HOST and game.table.players[HOST].key == welcome.key:
            return game
    return None


async def _join_again(options: PeerOptions, address: str, port: int, returning: Unfinished,
                      link: Link | None = None, welcome: Welcome | None = None) -> GameRecord:
    """Go on with an unfinished game as a joiner: rebuild it, then rejoin, on ``link`` if we
    are connected already, else as after a lost connection."""
    if returning.seat == HOST:
        raise ConfigError(f"you hosted the game in {returning.path}: resume it with p2pwhist host or p2pwhist resume")
    try:
        session, files = resume_game(options, returning)
    except BaseException:
        if link is not None:
            await link.close()
        raise
    names = [p.name for p in session.table.players]
    options.report(f"Resuming the unfinished game in {returning.path}, as {names[returning.seat]} "
                   f"(seat {returning.seat}) with {', '.join(names)}")
    line = _HostLine(session, options, files, names, address, port)
    if link is not None and welcome is not None:
        try:
            await line.rejoin(link, welcome)
        except Refused:
            files.close(over=True)
            raise
        except (NetError, trio.TooSlowError):
            line.connection = None  # as after a lost connection: ``_play`` returns by itself
    return await _join_game(session, options, line, files, names)


async def _join_game(session: Session, options: PeerOptions, line: _HostLine, files: _GameFiles,
                     names: list[str]) -> GameRecord:
    try:
        outcome = await _play(session, options, line, files, names)
        if session.error is None and session.waiting_for is None:
            await line.finish()
        files.discard()
    finally:
        if line.connection is not None:
            await line.connection.link.close()
    return GameRecord(outcome, files.path, session.table)


async def _greet_host(options: PeerOptions, address: str, port: int) -> tuple[Link, Welcome]:
    """A connection to the host, HELLO said and its WELCOME read."""
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            stream = await trio.open_tcp_stream(address, port)
    except trio.TooSlowError:
        raise NetError(f"the host {address}:{port} did not answer within {CONNECT_TIMEOUT:g} s") from None
    except OSError as error:
        raise NetError(f"cannot reach the host {address}:{port}: {_os_words(error)}") from None
    link = Link(stream, f"the host {address}:{port}", HOST)
    try:
        await link.send(pack(Hello(PROTOCOL_VERSION, options.name, public_bytes(options.key.public_key())).to_wire()))
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            welcome = _read_welcome(await link.receive(), link)
    except BaseException:
        await link.close()
        raise
    link.name = f"{welcome.name} (the host)"
    return link, welcome


def _read_welcome(payload: bytes, link: Link) -> Welcome:
    """The host's answer to our HELLO: its identity, or a refusal (``NetError``)."""
    value = _reply(payload, link)
    try:
        welcome = Welcome.from_wire(value)
    except WireError as error:
        raise NetError(f"{link.name} sent a bad WELCOME: {error}") from None
    if welcome.version != PROTOCOL_VERSION:  # a host that does not refuse our HELLO's version itself
        raise NetError(f"{link.name} speaks protocol version {welcome.version}; this p2pwhist speaks version "
                       f"{PROTOCOL_VERSION} (both sides need a p2pwhist of one protocol version)")
    return welcome


def _read_start(payload: bytes, link: Link) -> SignedMessage:
    if isinstance(_reply(payload, link), dict):
        raise NetError(f"{link.name} sent a bad reply")
    try:
        start = parse(payload)
    except SignatureError as error:
        raise NetError(f"{link.name} sent a bad START: {error}") from None
    if start.kind is not Kind.START:
        raise NetError(f"{link.name} sent {start.kind.value} instead of START")
    return start


def _reply(payload: bytes, link: Link, refused: type[NetError] = NetError) -> object:
    """A frame from the host, decoded; a REFUSE raises ``refused`` with the host's reason."""
    try:
        value = unpack(payload)
    except WireError as error:
        raise NetError(f"{link.name} sent a bad frame: {error}") from None
    if isinstance(value, dict) and "refuse" in value:
        reason = value["refuse"]
        if not (isinstance(reason, str) and reason.isprintable()):  # shown to a person: one line, no escapes
            raise NetError(f"{link.name} sent a bad reply")
        raise refused(f"{link.name} refused us: {reason[:200]}")
    return value


def _seat_of(start: SignedMessage, key) -> tuple[Table, int]:
    table: Table = start.body  # type: ignore[assignment]
    try:
        start.verify(table.players[HOST].key)
    except SignatureError as error:
        raise NetError(f"the host's START is not acceptable: {error}") from None
    mine = public_bytes(key.public_key())
    seats = [i for i, p in enumerate(table.players) if p.key == mine]
    if not seats or seats[0] == HOST:
        raise NetError("the host's table does not seat us")
    return table, seats[0]


def parse_address(text: str) -> tuple[str, int]:
    """The host and port ``join`` connects to: ``HOST``, ``HOST:PORT``, ``[IPv6]`` or
    ``[IPv6]:PORT``, HOST a name or an IPv4 address; the port is ``DEFAULT_PORT`` unless
    given. An IPv6 address goes in brackets (a link-local one with its zone, as in
    ``[fe80::1%eth0]``): bare, its last group could be read as a port. Anything else is a
    ``ConfigError``, one line saying why."""

    def refusal(why: str) -> ConfigError:
        return ConfigError(f"{text!r} is not an address to join: {why} "
                           "(write HOST, HOST:PORT, [IPv6] or [IPv6]:PORT)")

    if text.startswith("["):
        host_part, bracket, rest = text[1:].partition("]")
        if not bracket:
            raise refusal("the '[' has no ']'")
        try:
            ipaddress.IPv6Address(host_part)
        except ValueError:
            raise refusal(f"{host_part!r} is not an IPv6 address") from None
        if rest and not rest.startswith(":"):
            raise refusal("only ':PORT' may follow the ']'")
        port_text = rest[1:] if rest else None
    else:
        if text.count(":") > 1:
            try:
                ipaddress.IPv6Address(text)
            except ValueError:
                raise refusal("too many ':'") from None
            raise refusal("an IPv6 address goes in brackets, as in [::1] or [::1]:7878")
        host_part, colon, port_text_ = text.partition(":")
        port_text = port_text_ if colon else None
        if not host_part:
            raise refusal("no host")
        if len(host_part) > 253 or not all(c.isalnum() or c in "-._" for c in host_part) \
                or host_part[0] in "-." or host_part[-1] == "-":
            raise refusal(f"{host_part!r} is not a host name or an IPv4 address")
        labels = host_part.split(".")
        if all(label.isascii() and label.isdigit() for label in labels):
            try:
                ipaddress.IPv4Address(host_part)
            except ValueError:
                raise refusal(f"{host_part!r} is not an IPv4 address") from None
    if port_text is None:
        return host_part, DEFAULT_PORT
    if not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536):
        raise refusal(f"the port must be a number from 1 to 65535, not {port_text!r}")
    return host_part, int(port_text)
