"""Helpers for tests over real loopback TCP: p2pwhist processes, and fake peers written by hand.

``Peers`` runs ``python -m p2pwhist`` processes, each with its own ``P2PWHIST_HOME`` and its
output in files, and kills whatever still runs when the test ends. ``FakePeer`` speaks raw
frames over a blocking socket; ``seat_at`` and ``play`` let a fake joiner run the real
``Session`` and misbehave at a chosen point. Every wait has a deadline, so no test can hang.
"""

from __future__ import annotations

import os
import random
import re
import secrets
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import PROTOCOL_VERSION, READY, Welcome
from p2pwhist.games.registry import GAMES
from p2pwhist.session import HOST, Need, Session
from p2pwhist.signed import parse, public_bytes
from p2pwhist.wire import FrameBuffer, frame, pack, unpack

# The longest any single wait in these tests may take: a process to finish, a line to
# appear, a socket to answer. A healthy 4-player game of one hand takes a few seconds.
DEADLINE = 30.0
# The peers' own --timeout: shorter, so a stuck game ends with the program's message first.
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
        return self.start(name, "join", host.address, "--name", name, "--bot", bot, "--timeout", f"{PEER_TIMEOUT:g}", *args)

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
        self.send({"hello": {"version": version, "name": name, "key": public_bytes(key.public_key())}})

    def sit(self, name: str, key: Ed25519PrivateKey) -> None:
        """HELLO, then READY to the host's WELCOME: the host seats us ("NAME joined")."""
        self.hello(name, key)
        reply = self.receive_value()
        assert isinstance(reply, dict) and "welcome" in reply, f"the host did not welcome us: {reply}"
        self.send(READY)

    def welcome(self, name: str, key: Ed25519PrivateKey) -> dict:
        """As a host: take the joiner's HELLO, answer WELCOME, and wait for its READY. Returns
        the HELLO's body."""
        hello = self.receive_value()["hello"]
        self.send(Welcome(PROTOCOL_VERSION, name, public_bytes(key.public_key()), bytes(32)).to_wire())
        assert self.receive_value() == READY
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
    """Read the host's START and make this fake joiner's real session from it."""
    payload = peer.receive()
    assert payload is not None, "the host closed the connection instead of starting"
    start = parse(payload)
    mine = public_bytes(key.public_key())
    seat = [p.key for p in start.body.players].index(mine)
    return Session(start, seat, key, lambda: secrets.token_bytes(32))


def play(peer: FakePeer, session: Session, bot: str | None = None) -> None:
    """Play honestly: with a bot, to the end of the match; without, up to our first move."""
    chooser = GAMES[session.table.game.name].bots[bot](random.Random(0)) if bot else None
    while (need := session.need) is not Need.DONE:
        if need is Need.PEER:
            payload = peer.receive()
            assert payload is not None, "the host closed the connection during the game"
            session.receive(payload, HOST)
        elif need is Need.MOVE and chooser is None:
            return
        else:
            peer.send_payload(session.produce(chooser.choose(session.view()) if need is Need.MOVE else None).raw)
