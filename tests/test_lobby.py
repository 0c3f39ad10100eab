"""The host's lobby, before START: a joiner that answers START at once keeps its seat, and a
flood of connections cannot make the host hold more than a few handshakes of a few bytes.

The limits are those protocol/wire.md section 2 documents. The seating race runs the host in
this process (a thread with its own trio loop) so that many games take a few seconds; the
floods hit a real host process, whose memory is read from /proc. Every wait has a deadline."""

from __future__ import annotations

import contextlib
import os
import queue
import random
import re
import resource
import select
import selectors
import socket
import struct
import threading
import time
from pathlib import Path

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import DEADLINE, POLL, FakePeer, Host, Peers, seat_at

from p2pwhist.bodies import READY
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.net import Agent, HostOptions, Link, NetError, PeerOptions, host
from p2pwhist.session import HOST
from p2pwhist.signed import Kind, parse
from p2pwhist.wire import frame, unpack

# protocol/wire.md section 2
PENDING_CAP = 64
PENDING_CAP_PER_ADDRESS = 8
HELLO_LIMIT = 1024


# -- the seating race ----------------------------------------------------------------------


def _one_game(tmp: Path, number: int, answered: threading.Event) -> tuple[Kind | None, list[str]]:
    """A 2-seat table hosted in this process; a fake joiner takes the last seat and signs its
    ACCEPT the instant START arrives, then sets ``answered``. The kind of the host's next
    message (None if it hung up instead), and what the host reported."""
    lines: list[str] = []
    ports: queue.Queue[int] = queue.Queue()
    options = PeerOptions(name="alice", key=Ed25519PrivateKey.generate(),
                          agent=Agent(GAMES["boxwhist"].bots["random"](random.Random(number)).choose, threaded=False),
                          transcript=tmp / f"game-{number}.p2pw", timeout=DEADLINE, report=lines.append,
                          wait=0.01)  # the fake leaves at once: no need to wait for its return
    table = HostOptions(BoxWhist(2), MatchLength(hands=1), 0, "127.0.0.1")

    async def serve(task_status=trio.TASK_STATUS_IGNORED) -> None:
        with contextlib.suppress(NetError):  # the fake hangs up mid-game, and forfeits
            await host(options, table, task_status=task_status)

    async def hosting() -> bool:
        with trio.move_on_after(DEADLINE):
            async with trio.open_nursery() as nursery:
                ports.put(await nursery.start(serve))
        return True

    ended: list[bool] = []
    thread = threading.Thread(target=lambda: ended.append(trio.run(hosting)), daemon=True)
    thread.start()
    key = Ed25519PrivateKey.generate()
    peer = FakePeer.connect(ports.get(timeout=DEADLINE))
    try:
        peer.sit("bob", key)
        session = seat_at(peer, key)
        peer.send_payload(session.produce().raw)  # ACCEPT, at once
        answered.set()
        payload = peer.receive()
        kind = None if payload is None else session.receive(payload, HOST).kind
    finally:
        peer.close()
        thread.join(DEADLINE)
    assert ended, "the host's thread failed (its traceback is above) or did not end"
    return kind, lines


def test_the_joiner_who_fills_the_table_may_answer_start_at_once(tmp_path, monkeypatch):
    """The host used to stop watching a seated joiner only after START had gone out, and then
    could take a prompt ACCEPT for "spoke before the game began" (in 4% to 30% of games here,
    depending on how long the send of START took to return). To make that window certain,
    the host's send of START is made slow: it writes START, then holds the host's loop
    until the joiner has answered."""
    send = Link.send
    answered = threading.Event()

    async def slow_start(link: Link, payload: bytes) -> None:
        if "welcome" in unpack(payload) or parse(payload).kind is not Kind.START:
            return await send(link, payload)
        data = frame(payload)
        assert os.write(link.stream.socket.fileno(), data) == len(data)  # nothing else runs meanwhile
        assert answered.wait(DEADLINE)
        await trio.lowlevel.checkpoint()

    monkeypatch.setattr(Link, "send", slow_start)
    for number in range(100):
        answered.clear()
        kind, lines = _one_game(tmp_path, number, answered)
        assert not [line for line in lines if "before the game began" in line], (number, lines)
        assert kind is Kind.COMMIT, (number, kind, lines)  # the host's next message in the schedule


# -- floods of connections -----------------------------------------------------------------


def _connect_from(address: str, port: int) -> socket.socket:
    """A connection to the host from ``address`` (any 127.x.y.z is this machine's loopback)."""
    sock = socket.socket()
    sock.settimeout(DEADLINE)
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _partial_hello(sock: socket.socket) -> None:
    """The start of a HELLO frame of 100 bytes, never finished: a handshake held open."""
    sock.sendall(struct.pack(">I", 100) + b"\x81\xa5hello")


def _refusals(socks: list[socket.socket], count: int) -> dict[socket.socket, object]:
    """Wait until ``count`` of ``socks`` have been closed by the host; what each closed one
    received before the end (its one frame, decoded, or None)."""
    received = {sock: b"" for sock in socks}
    closed: dict[socket.socket, object] = {}
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + DEADLINE
        while len(closed) < count and time.monotonic() < deadline:
            for ready, _ in selector.select(timeout=deadline - time.monotonic()):
                sock = ready.fileobj
                try:
                    data = sock.recv(4096)
                except ConnectionResetError:
                    data = b""
                if data:
                    received[sock] += data
                    continue
                selector.unregister(sock)
                body = received[sock]
                closed[sock] = unpack(body[4:]) if len(body) >= 4 else None
    assert len(closed) == count, f"the host closed {len(closed)} of {len(socks)} connections, not {count}"
    return closed


def _still_open(sock: socket.socket) -> bool:
    """Nothing to read, not even the end: the host still waits for this one's HELLO."""
    readable, _, _ = select.select([sock], [], [], 0)
    return not readable


def _join_when_admitted(host: Host, name: str, address: str = "127.0.0.1") -> FakePeer:
    """A genuine joiner from ``address``, seated and sent START (the table has 2 seats), trying
    again while the host says it has too many connections waiting (until the deadline)."""
    key = Ed25519PrivateKey.generate()
    deadline = time.monotonic() + DEADLINE
    while True:
        peer = FakePeer(_connect_from(address, host.port))
        peer.hello(name, key)
        payload = peer.receive()
        assert payload is not None, "the host hung up on a genuine joiner"
        value = unpack(payload)
        if "welcome" in value:
            peer.send(READY)
            payload = peer.receive()
            assert payload is not None and parse(payload).kind is Kind.START
            return peer
        peer.close()
        assert "too many" in value.get("refuse", "") and time.monotonic() < deadline, value
        time.sleep(POLL)


def test_handshakes_beyond_the_cap_are_refused_at_once_and_a_joiner_gets_in_after(tmp_path):
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        # 3 times the cap, from 64 loopback addresses (3 each: under the cap per address)
        socks = [_connect_from(f"127.0.1.{1 + i % 64}", host.port) for i in range(3 * PENDING_CAP)]
        for sock in socks:
            _partial_hello(sock)
        refused = _refusals(socks, 2 * PENDING_CAP)
        assert all(isinstance(v, dict) and "too many connections" in v["refuse"] for v in refused.values()), refused
        held = [sock for sock in socks if sock not in refused]
        assert all(_still_open(sock) for sock in held)  # the cap's worth are still waited for
        assert re.search(r"Refused a joiner at 127\.0\.1\.\d+:\d+: the host has too many", host.peer.out.read_text())
        for sock in socks:
            sock.close()
        _join_when_admitted(host, "bob").close()  # once those are gone


def test_one_address_cannot_take_every_handshake(tmp_path):
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        socks = [_connect_from("127.0.0.3", host.port) for _ in range(3 * PENDING_CAP_PER_ADDRESS)]
        for sock in socks:
            _partial_hello(sock)
        refused = _refusals(socks, 2 * PENDING_CAP_PER_ADDRESS)
        assert all(isinstance(v, dict) and "from your address" in v["refuse"] for v in refused.values()), refused
        assert all(_still_open(sock) for sock in socks if sock not in refused)
        _join_when_admitted(host, "bob", "127.0.0.2").close()  # while they still hold theirs
        for sock in socks:
            sock.close()


def test_a_hello_over_the_limit_is_refused_at_once(tmp_path):
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        peer = FakePeer.connect(host.port)
        address = f"127.0.0.1:{peer.sock.getsockname()[1]}"
        peer.send_bytes(struct.pack(">I", HELLO_LIMIT + 1) + b"\x81\xa5hello")  # and never the rest
        assert peer.receive() is None  # the host hangs up without waiting for the rest
        line = host.peer.wait_for(rf"Dropped .*{address}.*\n")[0]
        assert f"{HELLO_LIMIT + 1} bytes, over the {HELLO_LIMIT}-byte limit" in line
        assert host.peer.running
        peer.close()
        _join_when_admitted(host, "bob").close()


def _peak_memory_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024


FLOOD = 2000


def test_a_flood_of_connections_leaves_the_host_small(tmp_path):
    """2,000 connections that each send most of a 64 KiB frame and hold: the host used to
    buffer every one (about 300 MiB); it now reads a few bytes of a few of them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * FLOOD + 256
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"needs {wanted} open files, and the limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))  # the host inherits it too
    chunk = struct.pack(">I", 65000) + bytes(64000)
    socks: list[socket.socket] = []
    try:
        with Peers(tmp_path) as peers:
            host = peers.host("alice")
            for i in range(FLOOD):
                sock = _connect_from(f"127.0.2.{1 + i % 200}", host.port)
                sock.setblocking(False)
                try:
                    sock.send(chunk)  # as much as the socket takes now
                except OSError:  # refused and closed already, or its buffers are full
                    pass
                socks.append(sock)
            bob = _join_when_admitted(host, "bob")  # the host got past the flood, and still serves
            peak = _peak_memory_mib(host.peer.popen.pid)
            bob.close()
            assert peak < 100, f"the host's peak memory was {peak:.0f} MiB"
    finally:
        for sock in socks:
            sock.close()


# -- the lobby's own rule, step by step ----------------------------------------------------


def test_a_joiner_who_leaves_as_the_table_fills_is_not_seated_and_the_host_waits_on():
    """The last seat is taken while an earlier joiner hangs up, before the host has stopped
    the watchers: the table is not full after all, so no START; the next joiner fills it."""
    from p2pwhist.net import HELLO_LIMIT as limit
    from p2pwhist.net import Link, Player, _Lobby

    lines: list[str] = []
    options = PeerOptions(name="alice", key=Ed25519PrivateKey.generate(), agent=None, transcript=None,
                          report=lines.append)

    def joiner(name: str) -> tuple[Link, trio.abc.Stream, Player]:
        ours, theirs = trio.testing.memory_stream_pair()
        key = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
        return Link(ours, name, limit=limit), theirs, Player(name, key)

    async def main() -> None:
        lobby = _Lobby(options, 2)
        filled: list[list] = []

        async def fill() -> None:
            filled.append(await lobby.fill())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(fill)
            bob, bob_end, bob_player = joiner("bob")
            lobby.seat(bob, bob_player)
            await trio.testing.wait_all_tasks_blocked()
            carol, _, carol_player = joiner("carol")
            lobby.seat(carol, carol_player)  # the table is full ...
            bob_end.send_stream.close()  # ... and bob leaves, before the host can act on it
            await trio.testing.wait_all_tasks_blocked()
            assert not filled and [j.player.name for j in lobby.joiners] == ["carol"]
            assert "bob left before the game began; its seat is free again" in lines
            dan, _, dan_player = joiner("dan")
            lobby.seat(dan, dan_player)
            await trio.testing.wait_all_tasks_blocked()
            assert [[j.player.name for j in seated] for seated in filled] == [["carol", "dan"]]
            assert [j.link.seat for j in lobby.joiners] == [1, 2]

    trio.run(main)
