"""The network edge: trio around the table's machines (``p2pwhist.table``).

Everything a table decides is decided by a pure machine (``HostMachine``, ``JoinerMachine``).
This module does what they cannot: it owns the connections (a framed ``Link`` each, read one
frame at a time and written by one task, every write with a deadline), the clock, the game's
files, the person and the bots. It tells the machine what happened, with the time, and does
what the machine answers, in order; that loop is ``_Edge.run``.

``watch`` runs a spectator's machine the same way (``SpectatorMachine``: no seat, every message
checked as it comes).

``host``, ``join`` and ``watch`` take their listener or their connect function as arguments,
so a test hands them memory streams (``trio.testing``) and a mock clock, and plays whole
tables, slow answers and lost connections in milliseconds.
"""

from __future__ import annotations

import errno
import inspect
import math
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.addresses import host_port
from p2pwhist.bodies import Player, Table, TimeLimits
from p2pwhist.gamefiles import GameFiles, our_unfinished, reopen, unfinished
from p2pwhist.games.base import ConfigError, Game, Play, View
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import game_entry
from p2pwhist.home import HomeError, KnownPeers
from p2pwhist.limits import DEFAULT_SPECTATORS, DEFAULT_TIMEOUT, DEFAULT_WAIT
from p2pwhist.reach import table_ad
from p2pwhist.reach.lan import Announcer
from p2pwhist.reach.portmap import Mapped, hold_mapping
from p2pwhist.reach.where import announced_addresses, forwarded_line, lost_line, where_lines
from p2pwhist.session import HOST, Outcome, Session, start_message
from p2pwhist.session_events import SessionEvent
from p2pwhist.signed import fingerprint, public_bytes
from p2pwhist.table import (
    Action,
    Begin,
    BeginFailed,
    Begun,
    Choose,
    Chosen,
    Close,
    Connect,
    Finish,
    Heard,
    HostMachine,
    JoinerMachine,
    Keep,
    Limits,
    Lost,
    Notice,
    Opened,
    OpenFailed,
    Received,
    Record,
    Remember,
    Reopen,
    Report,
    Resumable,
    Say,
    Send,
    Show,
    Sit,
    Spectate,
    SpectatorMachine,
    TableError,
    Unchoose,
    Unvet,
    Vet,
    Vetted,
    Wish,
    judge_key,
)
from p2pwhist.transcript import TranscriptError
from p2pwhist.wire import LENGTH, frame

RECEIVE_CHUNK = 65536
# A write to a peer that has stopped reading blocks once the buffers between us are full. A
# frame that has not left this long after it was queued means the peer reads too slowly, or
# not at all: it is gone, and is treated as lost. Counted from the queueing, not from the
# write, so a reader taking one frame just inside the limit cannot make the queue grow.
SEND_TIMEOUT = 20.0
# Closing at the end of a game: what we still have to say is given this long to leave.
PART_TIMEOUT = 1.0
# The OS errors that mean "too many connections now", after which accepting pauses a moment.
_ACCEPT_CAPACITY = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}

NetError = TableError  # what a game stopped by a peer or the network raises (exit status 1)


class Agent:
    """Who chooses our moves, whether to play another hand of an open match, and whether to
    stop a match of set length whose winner is settled: a bot, or a person at the terminal.
    ``wish`` None means always yes (a bot plays on as long as the people at the table wish);
    ``stop`` None means always yes too (a bot never keeps people playing hands that cannot
    change the result). Unthreaded, ``choose``, ``wish`` and ``stop`` may return awaitables,
    awaited on the event loop (the full-screen table runs there)."""

    def __init__(self, choose: Callable[[View], Play | Awaitable[Play]], threaded: bool,
                 wish: Callable[[], bool | Awaitable[bool]] | None = None,
                 stop: Callable[[], bool | Awaitable[bool]] | None = None) -> None:
        self._choose = choose
        self._threaded = threaded
        self._wish = wish
        self._stop = stop

    async def choose(self, view: View) -> Play:
        return await self._call(self._choose, view)

    async def wish(self) -> bool:
        return True if self._wish is None else await self._call(self._wish)

    async def stop(self) -> bool:
        return True if self._stop is None else await self._call(self._stop)

    async def _call(self, function: Callable, *args: object):
        if self._threaded:  # a person typing, a bot thinking: keep the event loop free meanwhile
            return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)
        result = function(*args)
        return await result if inspect.isawaitable(result) else result  # e.g. the full-screen table's


@dataclass
class PeerOptions:
    """What every playing command shares."""

    name: str
    key: Ed25519PrivateKey
    agent: Agent
    # Where the game is recorded; None: a new file under ``$P2PWHIST_HOME/games``. Once the
    # game's files are made or reopened, their transcript's path is put here, for a caller
    # stopped before the result (Ctrl-C: ``p2pwhist.cli`` says where the game is kept).
    transcript: Path | None
    # A host's: the table's limits, which START carries and every seat signs (whole seconds, at
    # least bodies.MIN_MOVE and MIN_WAIT): the most one seat may take over one message, and how
    # long the table waits for a seat whose connection was lost. A joiner plays by the table's;
    # its ``wait`` only bounds how long it tries to reach a host that may be restarting.
    timeout: float = DEFAULT_TIMEOUT
    wait: float = DEFAULT_WAIT
    known: KnownPeers | None = None  # None: trust every key (no memory of keys)
    # Asks our person a yes-or-no question about a new key; None: nobody to ask (a bot).
    ask: Callable[[str], Awaitable[bool]] | None = None
    report: Callable[[str], None] = print
    # The news of a seat's connection as a value (``Report.notice``), instead of its line, for
    # a screen that keeps it on show; None: the line is reported.
    news: Callable[[Notice], None] | None = None
    on_event: Callable[[SessionEvent], None] | None = None
    # Table talk: the lines said at the table, for our person (None: not shown, and ``say`` is
    # None too: --no-chat, a bot), and the lines our person says, as they say them.
    hear: Callable[[Heard], None] | None = None
    say: trio.MemoryReceiveChannel[str] | None = None
    command: list[str] | None = None  # how this peer was started: ``p2pwhist resume`` runs it again
    resume: Path | None = None  # the transcript of an unfinished game to go on with, if any

    # A host's spectators (``host --spectators``, ``--delay``): how many may watch at once, and
    # how much later than the seats they see each message.
    spectators: int = DEFAULT_SPECTATORS
    delay: float = 0.0

    @property
    def limits(self) -> Limits:
        return Limits(timeout=self.timeout, wait=self.wait, spectators=self.spectators, delay=self.delay)


@dataclass
class HostOptions:
    game: Game
    length: MatchLength
    port: int = 0
    bind: str | None = None
    seated: Callable[[int], None] | None = None  # told the number of joiners seated, as it changes
    announce: bool = False  # announce the table on the local network while it has a free seat
    map_port: bool = False  # ask the home router to forward our port from the internet


@dataclass
class GameRecord:
    outcome: Outcome
    transcript: Path
    table: Table


# -- a framed connection -----------------------------------------------------------------------


class LinkError(Exception):
    """A connection is gone, or (``bad``) sent what makes no frame we take; ``sample`` holds
    the start of what it sent last, to say what the other side was."""

    def __init__(self, reason: str, sample: bytes | None = None, bad: bool = False) -> None:
        super().__init__(reason)
        self.sample = sample
        self.bad = bad


class Link:
    """One TCP connection (or any trio stream), read a frame at a time: its 4-byte length
    first, refused at once if it is over the limit the caller gives for this frame, then the
    rest. What a read brings beyond the frame waits for the next one, so a connection holds at
    most one read (``RECEIVE_CHUNK``) and one frame, and the limit may change from one frame to
    the next."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._buffer = bytearray()

    async def send(self, payload: bytes) -> None:
        try:
            await self.stream.send_all(frame(payload))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise LinkError(f"disconnected ({_os_words(error)})") from None

    async def receive(self, limit: Callable[[], int]) -> bytes:
        """The next frame's payload; ``limit`` says the largest taken, asked once its length
        has come (the connection's role may have changed while we waited for it)."""
        await self._fill(LENGTH.size)
        (size,) = LENGTH.unpack_from(self._buffer)
        most = limit()
        if size > most:
            with trio.move_on_after(0.2):  # a little more of what it says, to tell what it is
                await self._fill(64, quiet=True)
            raise LinkError(f"sent a frame of {size} bytes, over the {most}-byte limit", bytes(self._buffer[:64]),
                            bad=True)
        await self._fill(LENGTH.size + size)
        payload = bytes(self._buffer[LENGTH.size : LENGTH.size + size])
        del self._buffer[: LENGTH.size + size]
        return payload

    async def _fill(self, count: int, quiet: bool = False) -> None:
        """Read until the buffer holds ``count`` bytes; ``quiet``: an end is no error."""
        while len(self._buffer) < count:
            try:
                chunk = await self.stream.receive_some(RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                if quiet:
                    return
                raise LinkError(f"disconnected ({_os_words(error)})") from None
            if not chunk:
                if quiet:
                    return
                said = bytes(self._buffer[:64])
                raise LinkError("closed the connection" + (" inside a frame" if said else ""), said or None)
            self._buffer += chunk

    async def part(self) -> None:
        """Close at the end, so that our last words arrive: say we are done sending, then read
        and drop what the peer still sends until it closes too (at most ``PART_TIMEOUT``).
        Closing a socket with unread data in it sends a reset, which can destroy our last
        message (an ABORT, DONE) in the peer's buffer before it reads it."""
        with trio.move_on_after(PART_TIMEOUT):
            try:
                await self.stream.send_eof()  # type: ignore[attr-defined]
                while await self.stream.receive_some(RECEIVE_CHUNK):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError, OSError,
                    AttributeError):
                pass
        with trio.move_on_after(PART_TIMEOUT):
            await self.stream.aclose()


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


def _remote(stream: trio.abc.Stream) -> tuple[str, str]:
    """The other end's IP address (what the admission limits count) and its address and port
    as a person reads them. A stream that is no socket (a test's) may say ``remote``."""
    try:
        address = stream.socket.getpeername()  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return getattr(stream, "remote", ("unknown", "an unknown address"))
    host = str(address[0])
    return host, host_port(host, address[1])


# -- the loop around a machine --------------------------------------------------------------------


Machine = HostMachine | JoinerMachine | SpectatorMachine


@dataclass(eq=False)
class _Conn:
    """One connection of the edge's: its link, what is queued for it, and its tasks."""

    link: Link
    outbox: trio.MemorySendChannel[tuple[bytes, float]]  # each frame, and when it was queued
    inbox: trio.MemoryReceiveChannel[tuple[bytes, float]]
    readable: trio.Event = field(default_factory=trio.Event)  # set: the machine may take its next frame
    # The machine has been handed its Opened. Until then it knows nothing of this connection,
    # and its answers about it (``reading``, ``frame_limit``) are about none: the reader would
    # take a None limit for "read no more" and never read the newcomer's HELLO.
    announced: bool = False
    tasks: trio.CancelScope = field(default_factory=trio.CancelScope)
    close_by: float | None = None  # set by Close: flush until then, then part (or, given no time, close)
    graceful: bool = False  # part: say we are done and hear the peer out, so our last words arrive
    lost: Lost | None = None  # why it is gone, once it is: told to the machine when its tasks have stopped


class _Edge:
    """Runs one machine: its connections, its questions to our person and bot, its files."""

    def __init__(self, machine: Machine, options: PeerOptions, files: GameFiles | None = None,
                 connect: Callable[[], Awaitable[trio.abc.Stream]] | None = None,
                 create: Callable[[Action], tuple[Session, GameFiles]] | None = None,
                 after: Callable[[], None] | None = None) -> None:
        self.machine = machine
        self._after = after
        self.options = options
        self._files: GameFiles | None = None
        self.files = files
        self._connect = connect
        self._create = create
        self.conns: dict[int, _Conn] = {}
        self._ids = 0
        self._events_in, self._events = trio.open_memory_channel[object](0)
        self._scopes: dict[object, trio.CancelScope] = {}  # a question or a choice, by key or token
        self._withdrawn: dict[bytes, str] = {}  # a question withdrawn, and the line that says why
        self.result: Outcome | Exception | None = None
        self._nursery: trio.Nursery | None = None

    @property
    def files(self) -> GameFiles | None:
        """The game's files, once made or reopened; ``options.transcript`` then says where."""
        return self._files

    @files.setter
    def files(self, files: GameFiles | None) -> None:
        self._files = files
        if files is not None:  # for a caller stopped before the result (Ctrl-C): where the game is
            self.options.transcript = files.path

    async def run(self, first: list[Action]) -> Outcome | Exception:
        """Do ``first``, then feed the machine what happens until it finishes; part from
        every connection (briefly) and return its result."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self.options.say is not None:
                nursery.start_soon(self._say, self.options.say)
            self._do(first)
            while self.result is None:
                if self.machine.busy:
                    await trio.lowlevel.checkpoint()  # what was queued leaves first: the others work meanwhile
                    self._do(self.machine.work(trio.current_time()))
                    continue
                now = trio.current_time()
                deadline = self.machine.deadline
                if deadline is not None and now >= deadline:
                    self._do(self.machine.tick(now))
                    continue
                event = None
                with trio.move_on_at(math.inf if deadline is None else deadline):
                    event = await self._events.receive()
                if event is not None:
                    if isinstance(event, Opened) and (conn := self.conns.get(event.conn)) is not None:
                        conn.announced = True
                    self._do(self.machine.handle(event, trio.current_time()))  # type: ignore[arg-type]
            await self._part()
            nursery.cancel_scope.cancel()
        assert self.result is not None
        return self.result

    def accept(self, stream: trio.abc.Stream) -> Awaitable[None]:
        """A host's newcomer: a connection of ours from now on, announced to the machine."""
        conn = self._add(stream)
        address, where = _remote(stream)
        return self._post(Opened(conn, address, where))

    # -- doing what the machine says ------------------------------------------------------------

    def _do(self, actions: Sequence[Action]) -> None:
        for action in actions:
            self._act(action)
        for conn_id, conn in self.conns.items():
            # One accepted while the loop was busy (its Opened still waiting) is not the machine's yet.
            if conn.announced and not conn.readable.is_set() and conn.lost is None and self.machine.reading(conn_id):
                conn.readable.set()
        if self._after is not None:
            self._after()

    def _act(self, action: Action) -> None:
        options = self.options
        if isinstance(action, Send):
            conn = self.conns.get(action.conn)
            if conn is not None and conn.close_by is None and conn.lost is None:  # a lost one: the machine hears next
                conn.outbox.send_nowait((action.payload, trio.current_time()))
        elif isinstance(action, Close):
            conn = self.conns.get(action.conn)
            if conn is not None and conn.close_by is None:
                conn.close_by = trio.current_time() + action.within
                conn.graceful = action.part
                conn.outbox.close()
        elif isinstance(action, Record):
            assert self.files is not None
            self.files.add(action.message)
            if action.sync:
                self.files.sync()
        elif isinstance(action, Keep):
            assert self.files is not None
            self.files.evidence(action.raw)
        elif isinstance(action, Show):
            if options.on_event is not None:
                options.on_event(action.event)
        elif isinstance(action, Report):
            if action.notice is not None and options.news is not None:
                options.news(action.notice)  # the screen keeps it on show, in its own words
            else:
                options.report(action.line)
        elif isinstance(action, Remember):
            self._remember(action.players)
        elif isinstance(action, (Choose, Wish)):
            self._start(action.token, self._choose, action)
        elif isinstance(action, Unchoose):
            self._cancel(action.token)
        elif isinstance(action, Vet):
            self._start(action.key, self._vet, action)
        elif isinstance(action, Unvet):
            if action.key in self._scopes:  # the question is still open: its task says the line
                self._withdrawn[action.key] = action.line
                self._cancel(action.key)
            else:
                options.report(action.line)
        elif isinstance(action, Connect):
            self._nursery.start_soon(self._connect_task)  # type: ignore[union-attr]
        elif isinstance(action, (Begin, Sit, Reopen, Spectate)):
            self._do(self.machine.handle(self._begin(action), trio.current_time()))
        elif isinstance(action, Heard):
            if options.hear is not None:
                options.hear(action)
        elif isinstance(action, Finish):
            self.result = action.result
        else:
            raise TypeError(f"no edge for {type(action).__name__}")

    def _begin(self, action: Begin | Sit | Reopen | Spectate) -> Begun | BeginFailed:
        assert self._create is not None
        try:
            session, self.files = self._create(action)
        except (HomeError, TranscriptError, ConfigError) as error:
            return BeginFailed(error)
        return Begun(session)

    # -- connections ----------------------------------------------------------------------------

    def _add(self, stream: trio.abc.Stream) -> int:
        self._ids += 1
        outbox, inbox = trio.open_memory_channel[tuple[bytes, float]](math.inf)
        self.conns[self._ids] = _Conn(Link(stream), outbox, inbox)
        self._nursery.start_soon(self._serve, self._ids)  # type: ignore[union-attr]
        return self._ids

    async def _serve(self, conn_id: int) -> None:
        """A connection's reader and writer, until it is closed or lost; then it is parted, and
        the machine hears of its end, once, from here (a task still posting could be cancelled)."""
        conn = self.conns[conn_id]
        try:
            with conn.tasks:
                async with trio.open_nursery() as both:
                    both.start_soon(self._read, conn_id, conn)
                    await self._write(conn_id, conn)
                    both.cancel_scope.cancel()
        except trio.Cancelled:  # the edge itself is ending (one accepted as it parted): close all the same
            await trio.aclose_forcefully(conn.link.stream)
            raise
        await conn.link.part() if conn.graceful else await _aclose(conn.link.stream)
        del self.conns[conn_id]
        if self.result is None:  # one the machine closed hears of it too, as of any other
            await self._post(conn.lost or Lost(conn_id, "closed"))

    async def _read(self, conn_id: int, conn: _Conn) -> None:
        while True:
            await conn.readable.wait()
            if self.machine.frame_limit(conn_id) is None:
                return
            try:
                payload = await conn.link.receive(lambda: self.machine.frame_limit(conn_id) or 0)
            except LinkError as error:
                self._lose(conn_id, conn, str(error), error.sample, error.bad)
                return
            conn.readable = trio.Event()  # the next frame waits until the machine says it may come
            await self._post(Received(conn_id, payload))

    async def _write(self, conn_id: int, conn: _Conn) -> None:
        machine = self.machine
        async for payload, queued in conn.inbox:
            # asked for each frame: a connection at the door becomes a spectator's at its WATCH
            timeout = machine.send_timeout(conn_id, SEND_TIMEOUT) if isinstance(machine, HostMachine) else SEND_TIMEOUT
            deadline = queued + timeout
            if conn.close_by is not None:
                deadline = min(deadline, conn.close_by)
            with trio.move_on_at(deadline) as scope:
                try:
                    await conn.link.send(payload)
                except LinkError as error:
                    self._lose(conn_id, conn, str(error))
                    return
            if scope.cancelled_caught:
                if conn.close_by is None:
                    self._lose(conn_id, conn, f"stopped reading: a frame waited {timeout:g} s to leave")
                return

    def _lose(self, conn_id: int, conn: _Conn, reason: str, sample: bytes | None = None, bad: bool = False) -> None:
        """``conn`` is gone: its writer stops, and with it its reader; ``_serve`` tells the machine."""
        if conn.lost is not None or conn.close_by is not None:
            return
        conn.lost = Lost(conn_id, reason, sample, bad)
        conn.outbox.close()

    async def _connect_task(self) -> None:
        assert self._connect is not None
        try:
            with trio.fail_after(self.options.limits.connect):
                stream = await self._connect()
        except trio.TooSlowError:
            await self._post(OpenFailed(f"no answer within {self.options.limits.connect:g} s"))
            return
        except OSError as error:
            await self._post(OpenFailed(_os_words(error)))
            return
        conn = self._add(stream)
        await self._post(Opened(conn))

    async def _part(self) -> None:
        """The machine has finished: what is queued leaves within its time, then every
        connection closes (graceful, so that our last words are not lost to a reset)."""
        now = trio.current_time()
        for conn in self.conns.values():
            if conn.close_by is None:
                conn.close_by, conn.graceful = now + PART_TIMEOUT, True
                conn.outbox.close()
        with trio.move_on_after(2 * PART_TIMEOUT + 1):
            while self.conns:
                await trio.sleep(0.01)

    # -- questions to our person and bot ------------------------------------------------------

    def _start(self, key: object, task: Callable[..., Awaitable[None]], action: Action) -> None:
        scope = trio.CancelScope()
        self._scopes[key] = scope
        self._nursery.start_soon(task, scope, action)  # type: ignore[union-attr]

    def _cancel(self, key: object) -> None:
        scope = self._scopes.pop(key, None)
        if scope is not None:
            scope.cancel()

    async def _choose(self, scope: trio.CancelScope, action: Choose | Wish) -> None:
        with scope:
            agent = self.options.agent
            value = await (agent.choose(action.view) if isinstance(action, Choose)
                           else agent.stop() if action.stop else agent.wish())
            self._scopes.pop(action.token, None)
            await self._post(Chosen(action.token, value))

    async def _vet(self, scope: trio.CancelScope, action: Vet) -> None:
        """Whether we play with a key: a known one at once; a new one asked of our person, and
        their yes remembered at once; with nobody to ask, a new one is accepted (wire.md §5)."""
        options = self.options
        with scope:
            known = options.known
            judgement = None
            trusted = True
            if known is not None:
                try:
                    seen = known.load()
                except HomeError as error:
                    options.report(f"Warning: {error}; every key counts as new")
                    seen = {}
                judgement = judge_key(seen, action.name, action.key)
                if judgement.known:
                    if (remark := judgement.remark()) is not None:
                        options.report(remark)
                elif options.ask is None:
                    if (warning := judgement.warning()) is not None:
                        options.report(warning)
                else:
                    try:
                        trusted = await options.ask(judgement.question())
                    except trio.Cancelled:  # withdrawn: the line comes once the question is off the screen
                        if line := self._withdrawn.pop(action.key, ""):
                            options.report(line)
                        raise
                    if trusted:  # remembered once given, whether or not the game happens
                        self._remember((Player(action.name, action.key),))
                    else:
                        options.report(f"Refused: {judgement.refused_line()}")
            self._scopes.pop(action.key, None)
            await self._post(Vetted(action.key, trusted, judgement))

    def _remember(self, players: Sequence[Player]) -> None:
        known = self.options.known
        if known is None:
            return
        try:
            known.remember((p.name, p.key) for p in players)
        except HomeError as error:  # the game goes on; only the memory of it is lost
            self.options.report(f"Warning: {error}")

    async def _say(self, lines: trio.MemoryReceiveChannel[str]) -> None:
        """Each line our person says, to the machine, with the wall clock its count starts from."""
        async for text in lines:
            await self._post(Say(text, time.time_ns() // 1_000_000))

    async def _post(self, event: object) -> None:
        await self._events_in.send(event)


async def _aclose(stream: trio.abc.Stream) -> None:
    with trio.move_on_after(PART_TIMEOUT):
        await stream.aclose()


def _finished(result: Outcome | Exception) -> Outcome:
    if isinstance(result, Exception):
        raise result
    return result


# -- host --------------------------------------------------------------------------------------


async def host(options: PeerOptions, table_options: HostOptions,
               listeners: Sequence[trio.abc.Listener] | None = None,
               task_status=trio.TASK_STATUS_IGNORED) -> GameRecord:
    """Listen, seat the joiners, then play the match, relaying joiners' messages; or, with
    ``options.resume``, go on with an unfinished game of ours, waiting for the joiners to
    return (they reconnect by themselves).

    ``listeners`` default to TCP on ``table_options.port`` and ``bind``; ``task_status.started``
    receives the listening port (0 for listeners given), so tests can ``nursery.start`` it."""
    key = options.key
    me = Player(options.name, public_bytes(key.public_key()))
    files: GameFiles | None = None
    if options.resume is not None:
        returning = unfinished(options.resume, key)
        if returning.seat != HOST:
            raise ConfigError(f"you joined the game in {returning.path}: resume it with p2pwhist resume")
    else:
        returning = None
    times = TimeLimits(round(options.timeout), round(options.wait))  # a wrong one is refused before we listen
    port = 0
    if listeners is None:
        try:
            listeners = await trio.open_tcp_listeners(table_options.port, host=table_options.bind)
        except OSError as error:  # a port in use, an address not of this machine: the user's to fix
            where = f"{table_options.bind or 'every address'}, port {table_options.port}"
            raise ConfigError(f"cannot listen on {where}: {_os_words(error)} "
                              "(choose another with --port or --bind)") from None
        port = listeners[0].socket.getsockname()[1]
    game = table_options.game

    def create(action: Action) -> tuple[Session, GameFiles]:
        assert isinstance(action, Begin)
        table = Table(game, table_options.length, action.players, secrets.token_bytes(32), time.strftime("%Y-%m-%d"),
                      times)
        start = start_message(key, table)
        made = GameFiles.create(options.transcript, start, options.command)
        options.report(f"All seats taken: {', '.join(p.name for p in action.players)}. Transcript: {made.path}")
        return Session(start, HOST, key, made.secrets), made

    limits = options.limits
    if returning is not None:
        session, files = reopen(returning, key)
        names = [p.name for p in session.table.players]
        machine = HostMachine.returning(session, limits, lambda: secrets.token_bytes(32), trio.current_time())
        options.report(f"Resuming the unfinished game in {returning.path}" + (f" on port {port}" if port else "")
                       + f", with {', '.join(names[1:])}; they return by themselves")
    else:
        machine = HostMachine(me, game.players, limits, lambda: secrets.token_bytes(32))
    seated = table_options.seated
    counted = [0]
    # Only a table listening on every address is announced or mapped: one bound to an address
    # chose where it is reached.
    reach = port != 0 and table_options.bind in (None, "", "0.0.0.0", "::")
    announcer = Announcer(announced_addresses(_ports(listeners), port), options.report) \
        if reach and returning is None and table_options.announce else None

    def after_each() -> None:  # what follows each change: seats counted, the announcement kept true
        lobby = machine.lobby
        joiners = len(lobby.players) - 1 if lobby.players else len(lobby.seated)  # START seats them all
        if seated is not None and joiners != counted[0]:  # ``play`` starts its bots one at a time
            counted[0] = joiners
            seated(joiners)
        if announcer is not None:
            taken = lobby.taken if edge.result is None else None
            announcer.show(table_ad(me.name, game, fingerprint(me.key), port, taken)
                           if taken is not None and taken < game.players else None)

    edge = _Edge(machine, options, files, create=create, after=after_each)
    try:
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(_accept, listener, edge)
            if announcer is not None:  # first: it takes the network a second or so to hear of it
                nursery.start_soon(announcer.run)
            if returning is None and port:
                title = game_entry(game).text.title
                options.report(f"Hosting {title} for {game.players} players on port {port}; your key fingerprint "
                               f"is {fingerprint(me.key)}")
            mapped = await nursery.start(partial(hold_mapping, port, lost=lambda why: options.report(lost_line(why)))) \
                if reach and table_options.map_port else None
            if returning is None and port:
                for line in where_lines(table_options.bind, _ports(listeners), fingerprint(me.key), mapped):
                    options.report(line)
            elif isinstance(mapped, Mapped):
                options.report(forwarded_line(mapped))
            if announcer is not None:
                options.report("Announced on this network: there, p2pwhist join with no address finds this table")
            task_status.started(port)
            result = await edge.run(machine.begin(trio.current_time()) if returning is not None else [])
            nursery.cancel_scope.cancel()
    finally:
        _close_files(edge, options)
        for listener in listeners:  # whoever comes now is refused, not left in a backlog nobody reads
            await trio.aclose_forcefully(listener)
    outcome = _finished(result)
    assert edge.files is not None and machine.peer is not None
    return GameRecord(outcome, edge.files.path, machine.peer.session.table)


def _ports(listeners: Sequence[trio.abc.Listener]) -> dict[int, int]:
    """The port of each address family's listener, the first listener's first (with
    ``--port 0`` they may differ)."""
    ports: dict[int, int] = {}
    for listener in listeners:
        ports.setdefault(listener.socket.family, listener.socket.getsockname()[1])  # type: ignore[attr-defined]
    return ports


async def _accept(listener: trio.abc.Listener, edge: _Edge) -> None:
    """Every newcomer to the machine, one at a time: the machine admits or refuses each before
    the next is accepted, and the kernel's backlog holds the rest."""
    while True:
        try:
            stream = await listener.accept()
        except OSError as error:
            if error.errno not in _ACCEPT_CAPACITY:
                raise
            await trio.sleep(0.1)  # out of descriptors: those we hold will close
            continue
        if edge.result is not None:  # the table has finished as it came: as to a closed port
            await trio.aclose_forcefully(stream)
            return
        await edge.accept(stream)


def _close_files(edge: _Edge, options: PeerOptions) -> None:
    """Close the game's files; they go once the game is over (a finished machine) or when no
    command could resume it (``play``'s own seat). A game interrupted keeps them."""
    if edge.files is not None:
        edge.files.close(over=edge.result is not None or options.command is None, warn=options.report)


# -- join --------------------------------------------------------------------------------------


async def join(options: PeerOptions, address: str, port: int, expect: str | None = None,
               connect: Callable[[str, int], Awaitable[trio.abc.Stream]] | None = None,
               patient: bool = False) -> GameRecord:
    """Connect to a host, take the seat it gives, and play the match; or go on with an
    unfinished game of ours: ``options.resume``, or the game this host says it is playing if
    it is one of ours. Going on with ``options.resume``, or ``patient``, the host may be down
    (it crashed too): we try again, pausing longer each time, within the wait.

    ``connect`` defaults to ``trio.open_tcp_stream``."""
    key = options.key
    where = host_port(address, port)
    opener = connect or trio.open_tcp_stream
    limits = options.limits
    waiting = our_unfinished(key)
    ours = {game.game_id: game for game in waiting if game.seat != HOST}
    files: GameFiles | None = None
    if options.resume is not None:
        returning = unfinished(options.resume, key)
        if returning.seat == HOST:
            raise ConfigError(f"you hosted the game in {returning.path}: resume it with p2pwhist resume")
        session, files = reopen(returning, key)
        names = [p.name for p in session.table.players]
        options.report(f"Resuming the unfinished game in {returning.path}, as {names[session.seat]} "  # type: ignore[index]
                       f"(seat {session.seat}) with {', '.join(names)}")
        machine = JoinerMachine.returning(session, key, where, limits, trio.current_time())
    else:
        resumable = [Resumable(g.game_id, g.describe(), str(g.path)) for g in waiting]
        machine = JoinerMachine(options.name, key, where, limits, expect, resumable, patient)

    def create(action: Action) -> tuple[Session, GameFiles]:
        if isinstance(action, Reopen):
            game = ours.get(action.game)
            if game is None:
                raise ConfigError("the host is playing a game of ours that we hosted ourselves")
            taken = reopen(game, key)
            options.report(f"Resuming the unfinished game in {game.path}, which this host is playing")
            return taken
        assert isinstance(action, Sit)
        made = GameFiles.create(options.transcript, action.start, options.command)
        table = action.start.body
        names = [p.name for p in table.players]  # type: ignore[union-attr]
        options.report(f"Seated as {names[action.seat]} (seat {action.seat}) with {', '.join(names)}. "
                       f"Transcript: {made.path}")
        return Session(action.start, action.seat, key, made.secrets), made

    edge = _Edge(machine, options, files, connect=lambda: opener(address, port), create=create)
    try:
        result = await edge.run(machine.begin(trio.current_time()))
    finally:
        _close_files(edge, options)
    outcome = _finished(result)
    assert edge.files is not None and machine.peer is not None
    return GameRecord(outcome, edge.files.path, machine.peer.session.table)


# -- watch -------------------------------------------------------------------------------------


async def watch(options: PeerOptions, address: str, port: int, expect: str | None = None,
                connect: Callable[[str, int], Awaitable[trio.abc.Stream]] | None = None) -> GameRecord:
    """Watch the table a host holds, from no seat: say WATCH, then check every message of the
    log as it comes with a session that holds no seat (``Session.observe``), showing its events
    (``options.on_event``) and recording it (``options.transcript``, else a new file under
    ``$P2PWHIST_HOME/games``; once made, ``options.transcript`` says where, as for a player, for
    a caller that cancels the watch: our person stopped watching). A message that fails to
    verify ends it at once, in one line (``TableError``), keeping the transcript so far: a valid
    prefix. It makes no secrets file: a spectator holds no secret, and its game is never
    resumed. ``expect``: the host's key fingerprint; a table whose START another key signed is
    refused, nothing recorded.

    ``connect`` defaults to ``trio.open_tcp_stream``."""
    where = host_port(address, port)
    opener = connect or trio.open_tcp_stream
    machine = SpectatorMachine(where, options.limits, expect)

    def create(action: Action) -> tuple[Session, GameFiles]:
        assert isinstance(action, Spectate)
        made = GameFiles.create(options.transcript, action.start, None, seated=False)
        names = [p.name for p in action.start.body.players]  # type: ignore[union-attr]
        options.report(f"Watching {', '.join(names)} at {where}. Transcript: {made.path}")
        return Session.observe(action.start), made

    edge = _Edge(machine, options, connect=lambda: opener(address, port), create=create)
    try:
        result = await edge.run(machine.begin(trio.current_time()))
    finally:
        if edge.files is not None:
            edge.files.close(over=True, warn=options.report)
    if isinstance(result, Exception) and edge.files is not None:
        options.report(f"The log so far, each message checked, is in {edge.files.path}")
    outcome = _finished(result)
    assert edge.files is not None and machine.session is not None
    return GameRecord(outcome, edge.files.path, machine.session.table)
