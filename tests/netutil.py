"""Helpers for tests over real loopback TCP: p2pwhist processes, and fake peers written by hand.

``Peers`` runs ``python -m p2pwhist`` processes, each with its own ``P2PWHIST_HOME`` and its
output in files, and kills whatever still runs when the test ends. ``FakePeer`` speaks raw
frames over a blocking socket; ``seat_at`` and ``play`` let a fake joiner run the real
``Session`` and misbehave at a chosen point. Every wait has a deadline, so no test can hang.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import secrets
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist import cli
from p2pwhist.games.registry import GAMES
from p2pwhist.session import HOST, Need, Session
from p2pwhist.signed import Kind, parse, public_bytes
from p2pwhist.table import (
    PROTOCOL_VERSION,
    Done,
    Hello,
    Logged,
    Ready,
    Welcome,
    encode,
    read_from_host,
    read_from_joiner,
)
from p2pwhist.transcript import MAGIC
from p2pwhist.wire import FrameBuffer, frame, pack, unpack

# The longest any single wait in these tests may take: a process to finish, a line to
# appear, a socket to answer. A healthy 4-player game of one hand takes a few seconds.
DEADLINE = 30.0
# The host's --timeout (the table's, carried to the joiners in START): shorter than DEADLINE,
# so a stuck game ends with the program's message first.
PEER_TIMEOUT = 20.0
POLL = 0.02
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")  # seat order in matches of Peers.match
HOST_LINE = re.compile(r"on port (\d+); your key fingerprint is ([0-9a-f-]+)")


@dataclass
class Finished:
    code: int
    out: str
    err: str

    def error_line(self) -> str:
        """The one line a failed command prints on stderr, checked for form."""
        assert "Traceback" not in self.err, self.err
        lines = self.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("p2pwhist: "), self.err
        return lines[0]

    def result_line(self) -> str:
        (line,) = [line for line in self.out.splitlines() if line.startswith("Match over. ")]
        return line


@dataclass
class Peer:
    """One running ``p2pwhist`` process; stdout and stderr go to files beside its home."""

    name: str
    home: Path
    popen: subprocess.Popen
    out: Path
    err: Path

    def wait_for(self, pattern: str | re.Pattern) -> re.Match:
        """Wait until the process has printed a line matching ``pattern``."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            exited = self.popen.poll() is not None  # read after: the last output is then in
            found = re.search(pattern, self.out.read_text())
            if found:
                return found
            if exited:
                raise AssertionError(f"{self.name} exited without printing {pattern!r}:\n{self._texts()}")
            time.sleep(POLL)
        raise AssertionError(f"{self.name} did not print {pattern!r} within {DEADLINE:g} s:\n{self._texts()}")

    def finish(self) -> Finished:
        try:
            code = self.popen.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise AssertionError(f"{self.name} did not finish within {DEADLINE:g} s:\n{self._texts()}") from None
        return Finished(code, self.out.read_text(), self.err.read_text())

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    def _texts(self) -> str:
        return f"stdout:\n{self.out.read_text()}\nstderr:\n{self.err.read_text()}"


@dataclass
class Host:
    peer: Peer
    port: int
    fingerprint: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Peers:
    """Starts p2pwhist processes under ``root``; use as a context manager, which kills the
    processes still running at its end."""

    root: Path
    started: list[Peer] = field(default_factory=list)

    def start(self, name: str, *args: str) -> Peer:
        """``p2pwhist ARGS``, with ``P2PWHIST_HOME`` at ``root/name`` (kept across runs)."""
        home_path = self.root / name
        home_path.mkdir(parents=True, exist_ok=True)
        number = len(self.started)
        out, err = self.root / f"{number}-{name}.out", self.root / f"{number}-{name}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            popen = subprocess.Popen(
                [sys.executable, "-m", "p2pwhist", *args],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                env={**os.environ, "P2PWHIST_HOME": str(home_path)},
            )
        peer = Peer(name, home_path, popen, out, err)
        self.started.append(peer)
        return peer

    def host(self, name: str, *args: str, players: int = 2, bot: str = "random",
             timeout: float = PEER_TIMEOUT) -> Host:
        """A host on a free loopback port, once it listens."""
        peer = self.start(name, "host", "--port", "0", "--bind", "127.0.0.1", "--name", name,
                          "--players", str(players), "--bot", bot, "--hands", "1", "--timeout", f"{timeout:g}", *args)
        found = peer.wait_for(HOST_LINE)
        return Host(peer, int(found[1]), found[2])

    def match(self, players: int, *host_args: str) -> tuple[list[Finished], list[Path], Finished]:
        """A whole match between processes: a heuristic host and joiners alternating random and
        heuristic bots, each writing its transcript under ``root``; then ``verify`` on the
        host's. Returns each peer's end, the transcripts, and the verifier's end."""
        transcripts = [self.root / f"{name}.p2pw" for name in NAMES[:players]]
        host = self.host("alice", "--transcript", str(transcripts[0]), *host_args, players=players, bot="heuristic")
        joiners = [
            self.join(name, host, "--transcript", str(path), "--expect", host.fingerprint,
                      bot="random" if seat % 2 else "heuristic")
            for seat, (name, path) in enumerate(zip(NAMES[1:players], transcripts[1:]), start=1)
        ]
        done = [peer.finish() for peer in [host.peer, *joiners]]
        return done, transcripts, self.start("verifier", "verify", str(transcripts[0])).finish()

    def join(self, name: str, host: Host, *args: str, bot: str = "random") -> Peer:
        return self.start(name, "join", host.address, "--name", name, "--bot", bot, *args)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for peer in self.started:
            if peer.running:
                peer.popen.kill()
            peer.popen.wait()


def free_port() -> int:
    """A loopback port nobody listens on (the OS just handed it out and it is closed again)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- fake peers ----------------------------------------------------------------------------


class FakePeer:
    """A hand-written peer: frames over a blocking socket with a deadline on every call."""

    def __init__(self, sock: socket.socket) -> None:
        sock.settimeout(DEADLINE)
        self.sock = sock
        self.buffer = FrameBuffer()

    @staticmethod
    def connect(port: int) -> FakePeer:
        return FakePeer(socket.create_connection(("127.0.0.1", port), timeout=DEADLINE))

    def send(self, value: Any) -> None:
        self.send_payload(pack(value))

    def send_payload(self, payload: bytes) -> None:
        self.sock.sendall(frame(payload))

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def hello(self, name: str, key: Ed25519PrivateKey, version: int = PROTOCOL_VERSION) -> None:
        self.send_payload(encode(Hello(version, name, public_bytes(key.public_key()))))

    def sit(self, name: str, key: Ed25519PrivateKey) -> None:
        """HELLO, then READY to the host's WELCOME: the host seats us ("NAME joined")."""
        self.hello(name, key)
        reply = self.receive_value()
        assert isinstance(reply, dict) and "welcome" in reply, f"the host did not welcome us: {reply}"
        self.send_payload(encode(Ready()))

    def welcome(self, name: str, key: Ed25519PrivateKey) -> Hello:
        """As a host: take the joiner's HELLO, answer WELCOME, and wait for its READY. Returns
        the HELLO."""
        payload = self.receive()
        assert payload is not None
        hello = read_from_joiner(payload)
        assert isinstance(hello, Hello), hello
        self.send_payload(encode(Welcome(PROTOCOL_VERSION, name, public_bytes(key.public_key()), bytes(32), None)))
        payload = self.receive()
        assert payload is not None and read_from_joiner(payload) == Ready()
        return hello

    def receive(self) -> bytes | None:
        """The next frame's payload, or None once the other side has closed."""
        while (payload := self.buffer.next_frame()) is None:
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError:
                return None
            if not data:
                return None
            self.buffer.feed(data)
        return payload

    def receive_value(self) -> Any:
        payload = self.receive()
        assert payload is not None, "the other side closed the connection"
        return unpack(payload)

    def close(self) -> None:
        self.sock.close()

    def reset(self) -> None:
        """Close abortively, as a crashed machine's network stack does: the other side sees a
        connection reset (RST), and its next send fails at once."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


class FakeHost:
    """A listening socket on a free loopback port that hands out ``FakePeer`` connections."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(DEADLINE)
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"

    def accept(self) -> FakePeer:
        sock, _ = self.listener.accept()
        return FakePeer(sock)

    def close(self) -> None:
        self.listener.close()


def seat_at(peer: FakePeer, key: Ed25519PrivateKey) -> Session:
    """Read the host's START (past its LOBBY news) and make this fake joiner's real session from it."""
    while True:
        payload = peer.receive()
        assert payload is not None, "the host closed the connection instead of starting"
        if isinstance(read_from_host(payload), Logged):
            break
    start = parse(payload)
    mine = public_bytes(key.public_key())
    seat = [p.key for p in start.body.players].index(mine)
    return Session(start, seat, key, lambda: secrets.token_bytes(32))


def play(peer: FakePeer, session: Session, bot: str | None = None, answer_done: bool = True) -> None:
    """Play honestly: with a bot, to the end of the match, then take the host's DONE and
    answer it as a joiner does (wire.md §2), unless ``answer_done`` is False; without a bot,
    up to our first move."""
    chooser = GAMES[session.table.game.name].bots[bot](random.Random(0)) if bot else None
    while (need := session.need) is not Need.DONE:
        if need is Need.PEER:
            payload = peer.receive()
            assert payload is not None, "the host closed the connection during the game"
            if isinstance(read_from_host(payload), Logged):  # not a NOTICE
                session.receive(payload, HOST)
        elif need is Need.MOVE and chooser is None:
            return
        else:
            peer.send_payload(session.produce(chooser.choose(session.view()) if need is Need.MOVE else None).raw)
    if answer_done:
        while (word := read_from_host(peer.receive() or b"")) != Done(len(session.log)):
            assert not isinstance(word, Logged), f"the host sent {word} instead of DONE"
        peer.send_payload(encode(Done(len(session.log))))


# -- faults between processes: kill and restart a peer, or cut its connection ---------------
# Shared by tests/test_resume_processes.py and scripts/chaos.py (which imports this module):
# one runner, ``play_with_fault``, so the test suite and the figures check the same things.

FAULT_POLL = 0.005  # how often a transcript is read while waiting for the message to strike at
HEADER = len(MAGIC)
IN_USE = "Address already in use"


class FrameCounter:
    """Counts the complete messages of a transcript file as it grows, reading only what is new.
    A file that is missing counts 0; one that shrank or was replaced is read again from its
    start."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._inode: int | None = None
        self._end = 0  # the byte just after the last complete frame read
        self._count = 0

    def count(self) -> int:
        try:
            with self.path.open("rb") as file:
                status = os.fstat(file.fileno())
                if status.st_ino != self._inode or status.st_size < self._end:
                    self._inode, self._end, self._count = status.st_ino, 0, 0
                file.seek(self._end)
                data = file.read()
        except FileNotFoundError:
            self._inode, self._end, self._count = None, 0, 0
            return 0
        if self._end == 0:
            if len(data) < HEADER:
                return 0
            self._end, data = HEADER, data[HEADER:]
        spans = list(_frame_spans(data))
        self._count += len(spans)
        self._end += spans[-1][1] if spans else 0
        return self._count

    def complete(self) -> bytes:
        """The file's bytes up to the end of its last complete message (as last counted)."""
        self.count()
        try:
            return self.path.read_bytes()[:self._end]
        except FileNotFoundError:
            return b""


def match_over(data: bytes, players: int) -> bool:
    """Whether a transcript's messages hold a whole match: every seat's FINAL."""
    return [parse(raw[4:]).kind for raw in frames_of(data)].count(Kind.FINAL) >= players


def last_error(err: str) -> str:
    """The line of a process's stderr that says what went wrong: its one-line error, or a
    traceback's last exception (inside an exception group too)."""
    lines = [line.strip().lstrip("|").strip() for line in err.splitlines()]
    lines = [line for line in lines if line.strip("+-") and not set(line) <= set("^~ ")]
    mark = " (with a traceback)" if "Traceback" in err else ""
    return lines[-1] + mark if lines else "(nothing on stderr)"


def _frame_spans(data: bytes) -> Iterator[tuple[int, int]]:
    """Where each complete frame of ``data`` (frames from its start) begins and ends."""
    at = 0
    while at + 4 <= len(data) and at + 4 + (length := struct.unpack(">I", data[at:at + 4])[0]) <= len(data):
        yield at, at + 4 + length
        at += 4 + length


def frames_of(data: bytes) -> list[bytes]:
    """A transcript's complete messages (the frames after the header), each with its length prefix."""
    body = data[HEADER:]
    return [body[start:end] for start, end in _frame_spans(body)]


class CutProxy:
    """A TCP proxy on a free loopback port: each connection it accepts is forwarded to
    ``127.0.0.1:upstream`` (a connection it cannot forward is closed at once). ``cut`` closes
    both sockets of every current connection, as a lost network does; new connections are
    accepted as before. One thread runs it; use as a context manager.

    A subclass (``scripts/adversary.py``) may do more in that thread: ``_call`` runs a function
    there and returns its result, ``_forward`` handles what one socket of a pair has to read,
    and ``_next_time``/``_on_time`` let it act at a time of its own (the selector wakes then)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.accepted: list[float] = []  # time.monotonic() of each accepted connection
        self._pairs: dict[socket.socket, socket.socket] = {}
        self._clients: set[socket.socket] = set()  # the joiners' ends of the pairs (the others: the host's)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.listener, selectors.EVENT_READ)
        self._wake_r, self._wake_w = socket.socketpair()
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._requests: list[tuple[Callable[[], Any], threading.Event, list[Any]]] = []
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=f"CutProxy:{self.port}", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cut(self, reset: bool = False) -> int:
        """Close every current connection, both sides (``reset``: abortively, with a RST, as a
        crashed machine's network stack does; else with a FIN). Returns how many it closed."""
        return self._call("cut", lambda: self._cut_all(reset))

    def close(self) -> None:
        if not self._stopped:
            self._call("stop", self._stop)
            self._thread.join(DEADLINE)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, what: str, action: Callable[[], Any]) -> Any:
        """Run ``action`` in the proxy's thread, between two of its reads; its result."""
        done, result = threading.Event(), [None]
        with self._lock:
            self._requests.append((action, done, result))
        self._wake_w.send(b"x")
        if not done.wait(DEADLINE):
            raise AssertionError(f"the proxy on port {self.port} did not {what} within {DEADLINE:g} s")
        if isinstance(result[0], BaseException):  # raised in the proxy's thread: raised here, where it was asked
            raise result[0]
        return result[0]

    def _run(self) -> None:
        while not self._stopped:
            for key, _ in self._selector.select(self._select_timeout()):
                sock = key.fileobj
                if sock is self.listener:
                    self._accept()
                elif sock is self._wake_r:
                    self._wake_r.recv(4096)
                    self._serve_requests()
                elif sock in self._pairs:  # not closed earlier in this round
                    self._forward(sock)
            if not self._stopped:
                self._on_time(time.monotonic())
        for sock in [self.listener, self._wake_r, self._wake_w, *self._pairs]:
            sock.close()
        self._selector.close()

    def _select_timeout(self) -> float | None:
        when = self._next_time()
        return None if when is None else max(0.0, when - time.monotonic())

    def _next_time(self) -> float | None:
        """When ``_on_time`` has something to do next (None: nothing)."""
        return None

    def _on_time(self, now: float) -> None:
        """Called after every round of the selector."""

    def _accept(self) -> None:
        try:
            client, _ = self.listener.accept()
        except BlockingIOError:
            return
        self.accepted.append(time.monotonic())
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream), timeout=2)
        except OSError:
            client.close()
            return
        for sock in (client, server):
            sock.settimeout(5)  # a send to a peer that stopped reading ends the connection
            self._selector.register(sock, selectors.EVENT_READ)
        self._pairs[client], self._pairs[server] = server, client
        self._clients.add(client)

    def _forward(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
            if data:
                self._pairs[sock].sendall(data)
                return
        except OSError:
            pass
        self._close_pair(sock, reset=False)

    def _close_pair(self, sock: socket.socket, reset: bool) -> None:
        other = self._pairs.pop(sock)
        del self._pairs[other]
        for end in (sock, other):
            self._clients.discard(end)
            with contextlib.suppress(KeyError):  # a subclass may have stopped reading it
                self._selector.unregister(end)
            if reset:
                end.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
            end.close()

    def _cut_all(self, reset: bool) -> int:
        closed = 0
        while self._pairs:
            self._close_pair(next(iter(self._pairs)), reset)
            closed += 1
        return closed

    def _stop(self) -> int:
        self._stopped = True
        return self._cut_all(False)

    def _serve_requests(self) -> None:
        with self._lock:
            requests, self._requests = self._requests, []
        for action, done, result in requests:
            try:
                result[0] = action()
            except Exception as error:  # noqa: BLE001 (the caller raises it: the proxy goes on)
                result[0] = error
            done.set()


class TurnWatcher:
    """Follows a peer's transcript as ``verify`` does (``Session.observe``), to tell when that
    peer, ``name``, is choosing its move: the next message due is its PLAY."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.session: Session | None = None
        self.seat: int | None = None
        self._taken = 0

    def feed(self, data: bytes) -> None:
        """Take the messages of ``data`` (the whole transcript so far) not taken yet."""
        frames = frames_of(data)
        for raw in frames[self._taken:]:
            message = parse(raw[4:])
            if self.session is None:
                self.session = Session.observe(message)
                self.seat = [player.name for player in self.session.table.players].index(self.name)
            else:
                self.session.receive(message.raw, message.seat)
        self._taken = len(frames)

    def choosing(self) -> bool:
        session = self.session
        return session is not None and session.waiting_for == self.seat and session.expected_kind is Kind.PLAY


@dataclass
class Fault:
    """What happens to one peer of a match, and when: ``kind`` is ``"kill"`` (SIGKILL, then,
    ``delay`` seconds later, the same command again) or ``"cut"`` (a joiner's TCP connection,
    closed by a ``CutProxy`` between it and the host; ``reset``: with a RST). It strikes when
    the victim's transcript holds ``at`` messages; with ``choosing``, at the first moment from
    then on when the victim is choosing a card (its bot is then the search bot, which thinks a
    while, where a random bot answers at once and is almost never caught choosing)."""

    victim: int  # 0 the host (alice), 1.. the joiners in the order started (bob, carol...), not their seats
    kind: str
    at: int
    delay: float = 0.0
    reset: bool = False
    choosing: bool = False
    by_resume: bool = False  # restart with ``p2pwhist resume TRANSCRIPT``, not the same command

    def __post_init__(self) -> None:
        assert self.kind in ("kill", "cut"), self.kind
        assert self.kind == "kill" or self.victim > 0, "only a joiner's connection goes through the proxy"
        assert self.at >= 1, "the transcript exists from START on: strike at message 1 or later"

    def describe(self, names: tuple[str, ...] = NAMES) -> str:
        choosing = " as it chooses a card" if self.choosing else ""
        if self.kind == "kill":
            return f"kill {names[self.victim]} at message {self.at}{choosing}, restart after {self.delay:.2f} s"
        return (f"cut {names[self.victim]}'s connection ({'RST' if self.reset else 'FIN'}) at message "
                f"{self.at}{choosing}")


class Ended:
    """What a trial of processes checks at its end, whatever struck: every process exited 0
    (``ends``; ``hung``: those killed at the deadline), and every transcript is alice's."""

    transcripts: list[Path]
    ends: list[Finished | None]
    hung: list[str]

    def exit_problems(self) -> list[str]:
        problems = [f"{what} still ran at the deadline and was killed" for what in self.hung]
        for name, end in zip(NAMES, self.ends):
            if end is not None and end.code != 0:
                problems.append(f"{name} exited {end.code}: {last_error(end.err)}")
        return problems

    def unlike_transcripts(self) -> list[str]:
        texts = [path.read_bytes() if path.exists() else None for path in self.transcripts]
        problems = [f"{name} wrote no transcript" for name, text in zip(NAMES, texts) if text is None]
        if problems:
            return problems
        first = frames_of(texts[0])  # type: ignore[arg-type]
        for name, text in zip(NAMES[1:], texts[1:]):
            if text != texts[0]:
                others = frames_of(text)  # type: ignore[arg-type]
                at = next((i for i, (a, b) in enumerate(zip(first, others)) if a != b), None)
                if at is None:  # one is the other cut short
                    problems.append(f"{name}'s transcript holds {len(others)} messages, alice's {len(first)}, "
                                    "the same as far as the shorter goes")
                else:
                    problems.append(f"{name}'s transcript differs from alice's at message {at} "
                                    f"({len(others)} messages against {len(first)})")
        return problems


@dataclass
class FaultRun(Ended):
    """What ``play_with_fault`` saw. ``struck``: messages in the victim's transcript once the
    fault had struck (None: the match ended first); ``late``: the victim's transcript already
    held the whole match (every FINAL) when the fault was to strike or struck, so nothing was
    left to resume and the trial says nothing. ``connections``: how many the proxy accepted
    (a cut: the joiner's first and its reconnections). ``resume_s``: for a kill, from the restart
    (the process spawned) until the victim's transcript first grew past what it held then;
    for a cut, from the cut until it first grew after the joiner's next connection reached
    the proxy. ``ends``: each peer's last process (None: killed at the deadline)."""

    players: int
    fault: Fault | None  # None: a match without a fault
    transcripts: list[Path]
    struck: int | None = None
    kept: bytes = b""  # the victim's transcript, complete messages, right after the fault
    late: bool = False
    choosing: bool | None = None  # with Fault.choosing: whether the victim was still choosing once killed
    resume_s: float | None = None
    connections: int = 0
    cut: int = 0  # the connections the cut closed
    ends: list[Finished | None] = field(default_factory=list)
    verified: Finished | None = None  # ``verify T``
    verified_json: Finished | None = None  # ``verify --json T``: says whether someone forfeited
    hung: list[str] = field(default_factory=list)
    error: str | None = None  # the harness could not set the match up (e.g. the host never listened)

    @property
    def root(self) -> Path:
        return self.transcripts[0].parent

    def describe(self) -> str:
        return f"{self.players} players, {self.fault.describe() if self.fault else 'no fault'}"

    def fault_problems(self) -> list[str]:
        if self.error:
            return [self.error]
        name = NAMES[self.fault.victim] if self.fault else ""
        if self.late:
            held = len(frames_of(self.kept))
            return [f"the fault came too late: {name}'s transcript already held the whole match ({held} messages)"]
        if self.fault is not None and self.struck is None:
            return [f"the match ended before {name}'s transcript held {self.fault.at} messages: no fault struck"]
        if self.fault is not None and self.fault.kind == "cut" and self.cut == 0:
            return [f"{name} had no connection open through the proxy when it was to be cut"]
        return []

    def transcript_problems(self) -> list[str]:
        problems = self.unlike_transcripts()
        if problems:
            return problems
        texts = [path.read_bytes() for path in self.transcripts]
        victim = texts[self.fault.victim] if self.fault else b""
        if self.fault and self.struck is not None and not victim.startswith(self.kept):
            at = next((i for i, (a, b) in enumerate(zip(frames_of(self.kept), frames_of(victim))) if a != b), None)
            problems.append(f"{NAMES[self.fault.victim]}'s transcript lost or changed what it held at the fault "
                            f"({self.struck} messages; first change at message {at})")
        return problems

    def verify_problems(self) -> list[str]:
        if self.verified is None:
            return ["verify did not run"]
        lines = self.verified.out.splitlines()
        if self.verified.code != 0 or not any(line.startswith("valid, complete") for line in lines):
            said = (self.verified.out + self.verified.err).strip().splitlines()
            return [f"verify exited {self.verified.code}: {said[0] if said else '(nothing)'}"]
        try:
            forfeit = json.loads(self.verified_json.out).get("forfeit") if self.verified_json else None
        except ValueError:
            return [f"verify --json printed no JSON: {self.verified_json.out[:200]!r}"]
        if forfeit:  # a complete match, but not the one that was to be resumed
            return [f"verify: {forfeit.get('name')} forfeited at message {forfeit.get('seq')}: {forfeit.get('reason')}"]
        return []

    def secrets_left(self) -> list[Path]:
        """Secrets files still beside the transcripts (after a finished match, none should be)."""
        return [path for path in (t.with_name(t.name + ".secrets") for t in self.transcripts) if path.exists()]

    def problems(self) -> list[str]:
        """Everything that went wrong, each in a line; none when the fault struck mid-match,
        every peer exited 0, the transcripts are byte-identical and ``verify`` calls them valid
        and complete, with nobody forfeiting."""
        problems = self.fault_problems()
        if self.error:
            return problems
        problems += self.exit_problems()
        if not self.hung:
            problems += self.transcript_problems() + self.verify_problems()
        if not problems and self.struck is not None:
            total = len(frames_of(self.transcripts[0].read_bytes()))
            if self.struck >= total:
                problems.append(f"the fault struck after the match's last message ({self.struck} of {total})")
        return problems

    def report(self) -> str:
        """For a failure message: what was done, where to look, and what went wrong."""
        lines = [f"{self.describe()} (files in {self.root}):", *(f"  {p}" for p in self.problems())]
        return "\n".join(lines)


def verified(transcript: Path, *options: str) -> Finished:
    """``p2pwhist verify [OPTIONS] TRANSCRIPT``, run in this process: its code and what it printed
    (the peers are the processes under test; the verifier need not be one)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["verify", *options, str(transcript)])
    return Finished(code, out.getvalue(), err.getvalue())


def host_on_free_port(peers: Peers, name: str, *args: str, tries: int = 5) -> tuple[Peer, int, list[str]]:
    """``p2pwhist host --port P ARGS`` on an explicit free loopback port, once it listens,
    with a new port when another program took P first. Returns the peer, P, and the host's
    whole command line (the same line restarts it on the same port)."""
    for _ in range(tries):
        port = free_port()
        command = ["host", "--port", str(port), *args]
        peer = peers.start(name, *command)
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            exited = peer.popen.poll() is not None
            if HOST_LINE.search(peer.out.read_text()):
                return peer, port, command
            if exited:
                break
            time.sleep(POLL)
        else:
            raise AssertionError(f"{name} did not listen within {DEADLINE:g} s:\n{peer._texts()}")
        if IN_USE not in peer.err.read_text():
            raise AssertionError(f"{name} exited without listening:\n{peer._texts()}")
    raise AssertionError(f"{name} found no free port in {tries} tries")


def play_with_fault(peers: Peers, players: int, hands: int, fault: Fault | None, *, wait: float = 30.0,
                    timeout: float = 60.0, deadline: float = 90.0) -> FaultRun:
    """A Box Whist match between ``python -m p2pwhist`` processes with random bots (the host
    alice, joiners bob, carol...), each with ``--timeout`` and ``--wait`` and its transcript
    under ``peers.root``, in which ``fault`` strikes (if any); then ``verify`` on alice's transcript.
    Never takes much more than ``deadline`` seconds: what still runs then is killed and named
    in ``hung``."""
    names = NAMES[:players]
    transcripts = [peers.root / f"{name}.p2pw" for name in names]
    run = FaultRun(players, fault, transcripts)
    end_by = time.monotonic() + deadline
    commands: list[list[str]] = []

    def common(i: int) -> list[str]:
        # A victim to be caught choosing thinks a while: the search bot at its easy level (a
        # quarter of a second a move) is long enough for a transcript read every 5 ms.
        bot = ["--bot", "search", "--level", "easy"] if fault and fault.choosing and i == fault.victim \
            else ["--bot", "random"]
        # The limits are the table's: the host sets them, START carries them to the joiners.
        limits = ["--timeout", f"{timeout:g}", "--wait", f"{wait:g}"] if i == 0 else []
        return [*bot, "--name", names[i], "--transcript", str(transcripts[i]), *limits]

    proxy: CutProxy | None = None
    try:
        try:
            host_peer, port, command = host_on_free_port(
                peers, names[0], "--game", "boxwhist", "--players", str(players), "--hands", str(hands),
                "--bind", "127.0.0.1", *common(0))
        except AssertionError as error:
            run.error = f"the host did not start: {error}"
            return run
        commands.append(command)
        current = [host_peer]
        if fault is not None and fault.kind == "cut":
            proxy = CutProxy(port)
        for i in range(1, players):
            address = proxy.address if proxy and i == fault.victim else f"127.0.0.1:{port}"
            commands.append(["join", address, *common(i)])
            current.append(peers.start(names[i], *commands[i]))

        before: int | None = None  # the victim's messages when it could move again: restarted, or reconnected
        started = 0.0  # when the fault struck (the restart, for a kill)
        connections = 0  # the proxy's connections before the cut
        victim = current[fault.victim if fault else 0]
        counter = FrameCounter(transcripts[fault.victim if fault else 0])
        watcher = TurnWatcher(names[fault.victim]) if fault and fault.choosing else None

        def due() -> bool:
            assert fault is not None
            if counter.count() < fault.at:
                return False
            if watcher is None:
                return True
            watcher.feed(counter.complete())
            return watcher.choosing()

        ready = False
        while fault and victim.running and time.monotonic() < end_by and not (ready := due()):
            time.sleep(FAULT_POLL)
        if fault and ready and victim.running and match_over(counter.complete(), players):
            run.late, run.kept = True, counter.complete()
        elif fault and ready and victim.running:
            if fault.kind == "kill":
                victim.popen.kill()
                victim.popen.wait()
                run.kept, run.struck = counter.complete(), counter.count()
                run.late = match_over(run.kept, players)
                if watcher is not None:
                    watcher.feed(run.kept)
                    run.choosing = watcher.choosing()
                time.sleep(fault.delay)
                before, started = run.struck, time.monotonic()
                again = ["resume", str(transcripts[fault.victim])] if fault.by_resume else commands[fault.victim]
                current[fault.victim] = peers.start(names[fault.victim], *again)
            else:
                assert proxy is not None
                connections = len(proxy.accepted)
                started = time.monotonic()
                run.cut = proxy.cut(fault.reset)
                run.kept, run.struck = counter.complete(), counter.count()
                run.late = match_over(run.kept, players)
                run.choosing = True if watcher is not None else None  # it was, when cut; alive, it goes on

        # Wait for every process to end, watching the victim's transcript move again.
        while time.monotonic() < end_by and any(peer.running for peer in current):
            if run.struck is not None and run.resume_s is None:
                if before is None and proxy is not None and len(proxy.accepted) > connections:
                    before = counter.count()
                if before is not None and counter.count() > before:
                    run.resume_s = time.monotonic() - started
            time.sleep(FAULT_POLL if run.struck is not None and run.resume_s is None else POLL)
        run.connections = len(proxy.accepted) if proxy else 0
        for name, peer in zip(names, current):
            if peer.running:
                peer.popen.kill()
                run.hung.append(name)
            peer.popen.wait()
        run.ends = [None if name in run.hung else Finished(peer.popen.returncode, peer.out.read_text(),
                                                           peer.err.read_text())
                    for name, peer in zip(names, current)]
        if transcripts[0].exists():
            run.verified = verified(transcripts[0])
            run.verified_json = verified(transcripts[0], "--json")
        return run
    finally:
        if proxy is not None:
            proxy.close()
