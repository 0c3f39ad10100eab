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

import contextlib
import hashlib
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

import trio

from p2pwhist.games.base import ConfigError, Game, Play
from p2pwhist.games.match import MatchLength
from p2pwhist.home import ChangedKey, KnownPeers, new_transcript_path
from p2pwhist.session import (
    HOST,
    PROTOCOL_VERSION,
    Aborted,
    Convicted,
    LocalError,
    Need,
    Outcome,
    Player,
    RemoteError,
    Session,
    SessionError,
    Table,
    check_name,
    start_message,
)
from p2pwhist.signed import Kind, SignatureError, SignedMessage, fingerprint, parse, public_bytes, same_fingerprint
from p2pwhist.transcript import TranscriptWriter
from p2pwhist.wire import FrameBuffer, WireError, frame, pack, unpack

# A handshake is a few hundred bytes: a peer that takes longer than this to say HELLO is not
# a p2pwhist peer.
HANDSHAKE_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
# Humans think: the default wait for a peer's next message is generous; bots answer in
# milliseconds, so tests and benchmarks set it lower with --timeout.
DEFAULT_TIMEOUT = 300.0
RECEIVE_CHUNK = 65536


class NetError(Exception):
    """The game stopped because of the network or a peer; the message names the peer, and
    ``seat`` is that peer's seat when there is one."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


@dataclass
class Link:
    """One framed TCP connection to a peer. One task writes at a time (trio forbids more)."""

    stream: trio.abc.Stream
    name: str
    seat: int | None = None  # the seat at the other end, once known
    buffer: FrameBuffer = field(default_factory=FrameBuffer)

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
                raise NetError(f"{self.name} sent a bad frame: {error}", self.seat) from None
            if payload is not None:
                return payload
            try:
                data = await self.stream.receive_some(RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                raise NetError(f"{self.name} disconnected ({_os_words(error)})", self.seat) from None
            if not data:
                raise NetError(f"{self.name} disconnected", self.seat)
            self.buffer.feed(data)

    async def close(self) -> None:
        with trio.move_on_after(1):
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


class Agent:
    """Who chooses our moves: a bot, or a person at the terminal."""

    def __init__(self, choose: Callable[[object], Play], threaded: bool) -> None:
        self._choose = choose
        self._threaded = threaded

    async def choose(self, view: object) -> Play:
        if self._threaded:  # a person typing: keep the event loop free meanwhile
            return await trio.to_thread.run_sync(self._choose, view, abandon_on_cancel=True)
        return self._choose(view)


@dataclass
class PeerOptions:
    """What every playing command shares."""

    name: str
    key: object  # Ed25519PrivateKey
    agent: Agent
    transcript: Path | None
    timeout: float = DEFAULT_TIMEOUT
    known: KnownPeers | None = None
    trust_new: Callable[[str, bytes], Awaitable[bool]] | None = None  # None: accept new keys
    report: Callable[[str], None] = print
    on_event: Callable[[Session, SignedMessage], None] | None = None


@dataclass
class GameRecord:
    outcome: Outcome | None
    transcript: Path
    table: Table


# -- the shared peer loop ------------------------------------------------------------------


Send = Callable[[SignedMessage], Awaitable[None]]
Receive = Callable[[int], Awaitable[tuple[bytes, int]]]
Relay = Callable[[bytes, int], Awaitable[None]]


class _Record:
    """The transcript file, kept level with the session's log, plus the evidence of a message
    we refused (which never enters the log)."""

    def __init__(self, session: Session, writer: TranscriptWriter) -> None:
        self.session = session
        self.writer = writer
        self.written = 0

    def catch_up(self) -> None:
        log = self.session.log
        for message in log[self.written :]:
            self.writer.append(message)
        self.written = len(log)

    def evidence(self, raw: bytes) -> None:
        """Write the message we refused, before our ABORT, so that anyone who verifies the
        transcript reaches our verdict. A frame that is not even a message proves nothing."""
        self.catch_up()
        if self.session.log[-1].raw == raw:
            return  # taken into the log, then refused by its body: already written
        try:
            self.writer.append(parse(raw))
        except SignatureError:
            pass


async def _play(session: Session, options: PeerOptions, send: Send, receive: Receive, relay: Relay | None,
                writer: TranscriptWriter, names: list[str]) -> Outcome:
    """Drive the session until the match is over; on a peer's fault, tell the others why.

    ``receive(seat)`` waits for the next message (from ``seat``, or from the host that relays
    it) and says which seat's connection carried it; the host passes ``relay`` to forward
    each joiner's message to the others."""
    started = trio.current_time()
    record = _Record(session, writer)
    record.catch_up()
    try:
        while (need := session.need) is not Need.DONE:
            if need is Need.PEER:
                seat = session.waiting_for
                with trio.move_on_after(options.timeout) as scope:
                    raw, via = await receive(seat)
                if scope.cancelled_caught:
                    raise NetError(f"{names[seat]} (seat {seat}) sent nothing for {options.timeout:g} s", seat)
                try:
                    message = session.check(raw, via)
                    if relay is not None:
                        # Forward once the envelope checks out, before the costly checks of
                        # its body: every peer makes those itself, so their work overlaps ours.
                        await relay(raw, via)
                    session.take(message)
                except RemoteError:
                    record.evidence(raw)
                    raise
            else:
                value = await _input_for(session, need, options, started)
                message = session.produce(value)
                await send(message)
            record.catch_up()
            if options.on_event:
                options.on_event(session, message)
            if message.kind is Kind.RESULT:
                writer.sync()  # at least once a hand: nothing agreed is lost in a crash
        if session.error is not None:
            raise session.error  # a verdict every peer reached (Convicted)
        assert session.outcome is not None
        return session.outcome
    except RemoteError as error:
        if not isinstance(error, Convicted):
            reason = f"{names[error.seat]} (seat {error.seat}) broke the rules: {error.reason}"
            await _abort(session, send, record, reason, error.seat)
        raise NetError(f"{names[error.seat]} (seat {error.seat}): {error.reason}", error.seat) from None
    except Aborted as error:
        raise NetError(f"{names[error.seat]} (seat {error.seat}) stopped the game: {error.reason}", error.culprit) from None
    except LocalError as error:  # our own fault: say so, and let the others stop cleanly
        await _abort(session, send, record, f"{names[session.seat]} failed: {error}", None)
        raise NetError(f"this program failed: {error}") from None
    except NetError as error:
        await _abort(session, send, record, str(error), error.seat)
        raise
    finally:
        record.catch_up()
        writer.close()


async def _input_for(session: Session, need: Need, options: PeerOptions, started: float) -> object:
    if need is Need.MOVE:
        return await options.agent.choose(session.view())
    if need is Need.DECISION:  # the host's clock decides whether a timed match goes on
        minutes = session.table.length.minutes
        return minutes is not None and trio.current_time() - started >= minutes * 60
    return None


async def _abort(session: Session, send: Send, record: _Record, reason: str, culprit: int | None) -> None:
    """Sign and send our reason for stopping, and whom we blame; best effort: the others may
    be gone."""
    try:
        message = session.abort(reason, culprit)
    except SessionError:
        return
    record.catch_up()
    with trio.move_on_after(2):
        try:
            await send(message)
        except NetError:
            pass


def _secret_source(saved: Path) -> Callable[[], bytes]:
    """Each hand's deck secret, from OS randomness (REFERENCE.md section 2), appended to
    ``saved`` (mode 0600) and synced before use: with the transcript it is all a crashed peer
    needs to rebuild its state (protocol/session.md section 7)."""

    def new_secret() -> bytes:
        secret = secrets.token_bytes(32)
        saved.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(saved, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, secret)
            os.fsync(fd)
        finally:
            os.close(fd)
        return secret

    return new_secret


def _begin(options: PeerOptions, start: SignedMessage, seat: int) -> tuple[Session, Path, Path, TranscriptWriter]:
    """Our session, the transcript's path, the file of our secrets beside it, and the open
    transcript."""
    path = options.transcript or new_transcript_path(hashlib.sha256(start.raw).digest())
    saved = path.with_name(path.name + ".secrets")
    return Session(start, seat, options.key, _secret_source(saved)), path, saved, TranscriptWriter(path)


# -- host ----------------------------------------------------------------------------------


@dataclass
class HostOptions:
    game: Game
    length: MatchLength
    port: int = 0
    bind: str | None = None


@dataclass
class _Joiner:
    link: Link
    player: Player


async def host(options: PeerOptions, table_options: HostOptions,
               task_status=trio.TASK_STATUS_IGNORED) -> GameRecord:
    """Listen, seat the joiners, then play the match, relaying joiners' messages.

    ``task_status.started`` receives the listening port, so tests can ``nursery.start`` it."""
    players = table_options.game.players
    key = options.key
    try:
        listeners = await trio.open_tcp_listeners(table_options.port, host=table_options.bind)
    except OSError as error:  # a port in use, an address not of this machine: the user's to fix
        where = f"{table_options.bind or 'every address'}, port {table_options.port}"
        raise ConfigError(f"cannot listen on {where}: {_os_words(error)} (choose another with --port or --bind)") from None
    port = listeners[0].socket.getsockname()[1]
    my_print = fingerprint(public_bytes(key.public_key()))
    options.report(f"Hosting {table_options.game.name} for {players} players on port {port}; "
                   f"your key fingerprint is {my_print}")
    for address in _addresses(table_options.bind):
        options.report(f"  others join with: p2pwhist join {address}:{port} --expect {my_print}")
    task_status.started(port)
    joiners: list[_Joiner] = []
    seated = trio.Event()
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(trio.serve_listeners, lambda s: _greet(s, options, joiners, players, seated), [listener])
        await seated.wait()
        links = [j.link for j in joiners]
        table = Table(table_options.game, table_options.length,
                      (Player(options.name, public_bytes(key.public_key())),) + tuple(j.player for j in joiners),
                      secrets.token_bytes(32), time.strftime("%Y-%m-%d"))
        start = start_message(key, table)
        for link in links:
            await link.send(start.raw)
        session, path, saved, writer = _begin(options, start, HOST)
        names = [p.name for p in table.players]
        options.report(f"All seats taken: {', '.join(names)}. Transcript: {path}")

        async def send(message: SignedMessage) -> None:
            # Every link gets the message even when an earlier one is broken, so that our
            # ABORT naming a vanished peer still reaches the peers who remain; the first
            # failure is raised once all have been tried.
            failure: NetError | None = None
            for link in links:
                try:
                    await link.send(message.raw)
                except NetError as error:
                    failure = failure or error
            if failure is not None:
                raise failure

        async def receive(seat: int) -> tuple[bytes, int]:
            return await links[seat - 1].receive(), seat

        async def relay(raw: bytes, via: int) -> None:
            for seat, link in enumerate(links, start=1):
                if seat != via:
                    await link.send(raw)

        failure: NetError | None = None
        try:
            outcome = await _play(session, options, send, receive, relay, writer, names)
            saved.unlink(missing_ok=True)  # every secret is in the finished transcript now
        except NetError as error:  # raised below, outside the nursery, as itself (not a group)
            failure = error
        finally:
            for link in links:
                await link.close()
            nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return GameRecord(outcome, path, table)


async def _greet(stream: trio.SocketStream, options: PeerOptions, joiners: list[_Joiner], players: int,
                 seated: trio.Event) -> None:
    """Take one joiner's HELLO and seat it, or refuse it in one line."""
    link = Link(stream, f"a joiner at {_peer_address(stream)}")  # until its HELLO names it
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            hello = await link.receive()
        player = _read_hello(hello)
        link.name = player.name
        if seated.is_set() or len(joiners) >= players - 1:
            raise ConfigError("the table is full")
        if player.name == options.name or any(j.player.name == player.name for j in joiners):
            raise ConfigError(f"the name {player.name!r} is taken at this table")
        if player.key == public_bytes(options.key.public_key()) or any(j.player.key == player.key for j in joiners):
            raise ConfigError("that key is already seated at this table")
        await _check_trust(options, player.name, player.key)
    except ChangedKey as changed:
        # The whole story, with the file to edit, is for the host's user; the joiner is told
        # in its own terms (and not shown a path on the host's machine).
        options.report(f"Refused {link.name}: {changed}")
        await _refuse(link, f"the key of {player.name!r} changed since this host last saw it: refusing key "
                            f"{fingerprint(player.key)} (if it really changed, ask the host to forget the old one)")
        return
    except ConfigError as refusal:
        options.report(f"Refused {link.name}: {refusal}")
        await _refuse(link, str(refusal))
        return
    except NetError as error:  # gone, or a frame we cannot even delimit: nobody to answer
        options.report(f"Dropped a connection during its handshake: {error}")
        await link.close()
        return
    except trio.TooSlowError:
        options.report(f"Dropped {link.name}: no HELLO within {HANDSHAKE_TIMEOUT:g} s")
        await link.close()
        return
    joiner = _Joiner(link, player)
    joiners.append(joiner)
    _number(joiners)
    options.report(f"{player.name} joined (key {fingerprint(player.key)}); {len(joiners) + 1}/{players} seated")
    if len(joiners) == players - 1:
        seated.set()
    async with trio.open_nursery() as waiting:
        waiting.start_soon(_leave_if_gone, joiner, joiners, options, waiting.cancel_scope)
        await seated.wait()
        waiting.cancel_scope.cancel()
    if joiner in joiners:
        await trio.sleep_forever()  # the connection now belongs to the game; keep it open


def _number(joiners: list[_Joiner]) -> None:
    """Seats follow the order of arrival; the host is seat 0."""
    for seat, joiner in enumerate(joiners, start=1):
        joiner.link.seat = seat


async def _leave_if_gone(joiner: _Joiner, joiners: list[_Joiner], options: PeerOptions, scope: trio.CancelScope) -> None:
    """Until the table fills a seated joiner has nothing to say: if its connection speaks or
    closes, it has left, and its seat is free again. (Cancelled when the table fills; a
    cancelled receive loses no bytes.)"""
    try:
        await joiner.link.receive()
        why = "spoke before the game began"
    except NetError:
        why = "left before the game began"
    joiners.remove(joiner)
    _number(joiners)
    options.report(f"{joiner.player.name} {why}; its seat is free again")
    await joiner.link.close()
    scope.cancel()


async def _refuse(link: Link, reason: str) -> None:
    """Tell a joiner in one line why it may not sit down (best effort), and hang up."""
    with trio.move_on_after(2):
        try:
            await link.send(pack({"refuse": reason}))
        except NetError:
            pass
    await link.close()


def _peer_address(stream: trio.abc.Stream) -> str:
    try:
        address = stream.socket.getpeername()  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not a socket, or already disconnected
        return "an unknown address"
    return f"[{address[0]}]:{address[1]}" if ":" in address[0] else f"{address[0]}:{address[1]}"


def _read_hello(payload: bytes) -> Player:
    try:
        hello = unpack(payload)
    except WireError as error:  # a well-delimited frame, so the joiner can still be told why
        raise ConfigError(f"not a p2pwhist HELLO: {error}") from None
    body = hello.get("hello") if isinstance(hello, dict) and len(hello) == 1 else None
    if not isinstance(body, dict) or set(body) != {"version", "name", "key"}:
        raise ConfigError("not a p2pwhist HELLO")
    if body["version"] != PROTOCOL_VERSION:
        raise ConfigError(f"protocol version {body['version']!r:.20} is not this host's version {PROTOCOL_VERSION}")
    key = body["key"]
    if not isinstance(key, bytes) or len(key) != 32:
        raise ConfigError("bad public key")
    return Player(check_name(body["name"]), key)


async def _check_trust(options: PeerOptions, name: str, key: bytes) -> None:
    known = options.known
    if known is None:
        return
    if known.check(name, key, remember=options.trust_new is None):
        return
    if await options.trust_new(name, key):  # type: ignore[misc]
        known.check(name, key, remember=True)
    else:
        raise ConfigError(f"{name} (key {fingerprint(key)}) was not trusted")


def _addresses(bind: str | None) -> list[str]:
    if bind not in (None, "", "0.0.0.0", "::"):
        return [bind]  # type: ignore[list-item]
    found = []
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            address = info[4][0]
            if address not in found and not address.startswith("127."):
                found.append(address)
    except OSError:
        pass
    return found + ["127.0.0.1"]


# -- join ----------------------------------------------------------------------------------


async def join(options: PeerOptions, address: str, port: int, expect: str | None = None) -> GameRecord:
    """Connect to a host, take the seat it gives, and play the match."""
    key = options.key
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            stream = await trio.open_tcp_stream(address, port)
    except trio.TooSlowError:
        raise NetError(f"the host {address}:{port} did not answer within {CONNECT_TIMEOUT:g} s") from None
    except OSError as error:
        raise NetError(f"cannot reach the host {address}:{port}: {_os_words(error)}") from None
    link = Link(stream, f"the host {address}:{port}", HOST)
    try:
        await link.send(pack({"hello": {"version": PROTOCOL_VERSION, "name": options.name,
                                        "key": public_bytes(key.public_key())}}))
        options.report(f"Connected to {address}:{port}; waiting for the table to fill")
        first = await link.receive()  # no timeout: the table fills when people arrive
        start = _read_start(first, link)
        table, seat = _seat_of(start, key)
        host_player = table.players[HOST]
        link.name = f"{host_player.name} (the host)"
        try:
            if expect is not None and not same_fingerprint(expect, host_player.fingerprint):
                raise ConfigError(f"the host's key is {host_player.fingerprint}, not the expected {expect}")
            for i, player in enumerate(table.players):
                if i != seat:
                    await _check_trust(options, player.name, player.key)
        except (ConfigError, ChangedKey) as refusal:
            # Tell the table why we leave, signed, instead of simply hanging up.
            notice = Session(start, seat, key, None).abort(f"{options.name} refuses to play: {refusal}")
            with trio.move_on_after(2), contextlib.suppress(NetError):
                await link.send(notice.raw)
            raise NetError(str(refusal)) from None
        session, path, saved, writer = _begin(options, start, seat)
        names = [p.name for p in table.players]
        options.report(f"Seated as {names[seat]} (seat {seat}) with {', '.join(names)}. Transcript: {path}")

        async def send(message: SignedMessage) -> None:
            await link.send(message.raw)

        async def receive(seat_: int) -> tuple[bytes, int]:
            return await link.receive(), HOST

        outcome = await _play(session, options, send, receive, None, writer, names)
        saved.unlink(missing_ok=True)  # every secret is in the finished transcript now
        return GameRecord(outcome, path, table)
    finally:
        await link.close()


def _read_start(payload: bytes, link: Link) -> SignedMessage:
    try:
        value = unpack(payload)
    except WireError as error:
        raise NetError(f"{link.name} sent a bad frame: {error}") from None
    if isinstance(value, dict):
        reason = value.get("refuse")
        raise NetError(f"{link.name} refused us: {reason!s:.200}" if isinstance(reason, str) else f"{link.name} sent a bad reply")
    try:
        start = parse(payload)
    except SignatureError as error:
        raise NetError(f"{link.name} sent a bad START: {error}") from None
    if start.kind is not Kind.START:
        raise NetError(f"{link.name} sent {start.kind.value} instead of START")
    return start


def _seat_of(start: SignedMessage, key) -> tuple[Table, int]:
    try:
        table = Table.from_wire(start.body)
        start.verify(table.players[HOST].key)
    except (ConfigError, SignatureError) as error:
        raise NetError(f"the host's configuration is not acceptable: {error}") from None
    mine = public_bytes(key.public_key())
    seats = [i for i, p in enumerate(table.players) if p.key == mine]
    if not seats or seats[0] == HOST:
        raise NetError("the host's table does not seat us")
    return table, seats[0]


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT``."""
    host_part, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ConfigError(f"{text!r} is not HOST:PORT")
    return host_part.strip("[]") or "127.0.0.1", int(port_text)

