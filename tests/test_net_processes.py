"""What only real ``p2pwhist`` processes over loopback TCP can show; everything else about the
network edge runs in memory (test_table_*.py).

- A whole match between separate processes, as users run it: the transcripts byte-identical
  on every peer, and valid and complete to ``verify``; and ``play --watch``, whose bots are
  processes of their own, each with a key it keeps from match to match.
- A joiner whose host is killed (SIGKILL: no last word) declares the host's forfeit once the
  table's wait has passed, and exits with its transcript complete.
- The operating system's words reaching the user in one line: a port already in use (our
  own usage: exit status 2), a port nobody listens on (the network: exit status 1).
- The host's memory under a flood of connections, read from /proc: only a process has it.

Every wait has a deadline (``netutil.DEADLINE``)."""

from __future__ import annotations

import json
import re
import resource
import signal
import socket
import struct
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import DEADLINE, POLL, FakePeer, FrameCounter, Host, Peers, free_port, seat_at

from p2pwhist.signed import Kind
from p2pwhist.table import Ready, encode
from p2pwhist.transcript import read_transcript
from p2pwhist.wire import unpack

# -- whole matches -----------------------------------------------------------------------------


def test_a_match_between_processes_ends_alike_on_every_peer(tmp_path):
    players = 3
    with Peers(tmp_path) as peers:
        done, transcripts, verified = peers.match(players)

    assert [d.code for d in done] == [0] * players, [d.err for d in done]
    assert verified.code == 0, verified.err
    assert any(line.startswith("valid, complete") for line in verified.out.splitlines()), verified.out
    assert len({d.result_line() for d in done}) == 1
    assert all(f"Transcript: {path}" in d.out for d, path in zip(done, transcripts))
    contents = {path.read_bytes() for path in transcripts}
    assert len(contents) == 1
    assert not list(tmp_path.glob("*.secrets"))  # every secret is in the finished transcript
    messages = list(read_transcript(transcripts[0]))
    assert messages[0].kind is Kind.START
    assert [m.kind for m in messages[-players:]] == [Kind.FINAL] * players
    assert Kind.PLAY in {m.kind for m in messages}


def test_play_watch_runs_bots_as_networked_peers_named_by_kind_and_seat(tmp_path):
    with Peers(tmp_path) as peers:
        done = peers.start("watcher", "play", "--watch", "--hands", "1", "--bot", "random", "--players", "4",
                           "--game", "box", "--plain").finish()
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    assert re.search(r"^Match over\. Final points: random-0 \d, random-1 \d, random-2 \d, random-3 \d;", done.out,
                     re.MULTILINE)


def test_the_computer_players_of_play_keep_their_keys_and_a_match_of_bots_is_not_the_persons(tmp_path):
    """Two ``play --watch`` matches and a ``play --level easy`` one in one home: the bots of the
    first two are the same two players both times (before, each bot had a new key every match,
    so ``stats`` listed a stranger per match), the person's key is never made for a match they
    only watched (before, seat 0's bot played under it: the bots' results became the person's
    record and rating), and a bot at another level is another player, named so."""
    with Peers(tmp_path) as peers:
        for extra in ([], [], ["--bot", "search", "--level", "easy", "--players", "3", "--game", "box"]):
            done = peers.start("watcher", "play", "--watch", "--hands", "1", "--bot", "random", "--plain",
                               *extra).finish()
            assert done.code == 0, done.err
        counted = peers.start("watcher", "stats", "--json").finish()
    assert counted.code == 0, counted.err
    report = json.loads(counted.out)
    assert report["you"] is None and not (tmp_path / "watcher" / "identity.pem").exists()
    assert sorted((player["name"], player["matches"]["played"]) for player in report["players"]) == [
        ("random-0", 2), ("random-1", 2), ("search-easy-0", 1), ("search-easy-1", 1), ("search-easy-2", 1)]


def test_a_joiner_whose_host_is_killed_mid_match_declares_its_forfeit_after_the_wait(tmp_path):
    """The host dies as a killed process does, with no last word; bob cannot reach it again.
    Once the table's wait (10 s) has passed he declares its forfeit and exits 0 with a
    complete transcript, well within the deadline (before the fix he waited another day: the
    table's move limit, then the wait, for a DONE nobody would send)."""
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--wait", "10", "--hands", "5", timeout=86400)
        transcript = tmp_path / "bob.p2pw"
        bob = peers.join("bob", host, "--transcript", str(transcript))
        counter, deadline = FrameCounter(transcript), time.monotonic() + DEADLINE
        while counter.count() < 30 and time.monotonic() < deadline:
            time.sleep(POLL)
        host.peer.popen.kill()
        done = bob.finish()
        verified = peers.start("verifier", "verify", str(transcript)).finish()
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    assert "alice left the match: lost connection and did not return within 0:10" in done.out, done.out
    assert verified.code == 0 and "valid, complete" in verified.out, verified.out


def test_a_joiner_stopped_by_ctrl_c_is_told_how_long_the_table_waits_for_it(tmp_path):
    """Ctrl-C mid-match: the joiner says how to go back, within the wait the table's START
    says (45 s here; it used to say "5 minutes unless they chose otherwise" whatever the host
    chose), and its game waits in the games folder to be resumed."""
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--wait", "45", "--hands", "1000", timeout=86400)
        bob = peers.join("bob", host)
        bob.wait_for("Hand 1: ")  # a bot's line as each hand ends
        bob.popen.send_signal(signal.SIGINT)
        done = bob.finish()
    assert done.code == 130 and "Traceback" not in done.err, done.err
    assert done.err.strip().splitlines()[-2:] == [
        "p2pwhist: interrupted",
        "p2pwhist: to go back to the game, run the same command again, or p2pwhist resume, within 0:45 of leaving: "
        "the table's wait for a lost player"], done.err
    assert len(list((bob.home / "games").glob("*.p2pw"))) == 1


# -- the operating system's words ----------------------------------------------------------------


def test_hosting_on_a_port_in_use_is_a_usage_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with Peers(tmp_path) as peers:
            done = peers.start("alice", "host", "--bind", "127.0.0.1", "--port", str(port), "--bot", "random").finish()
    assert done.code == 2
    assert f"cannot listen on 127.0.0.1, port {port}: Address already in use" in done.error_line()


def test_joining_a_port_nobody_listens_on(tmp_path):
    port = free_port()
    with Peers(tmp_path) as peers:
        done = peers.start("bob", "join", f"127.0.0.1:{port}", "--bot", "random").finish()
    assert done.code == 1
    assert done.error_line() == f"p2pwhist: cannot reach the host 127.0.0.1:{port}: Connection refused"


# -- a flood of connections ------------------------------------------------------------------------


def _connect_from(address: str, port: int) -> socket.socket:
    """A connection to the host from ``address`` (any 127.x.y.z is this machine's loopback)."""
    sock = socket.socket()
    sock.settimeout(DEADLINE)
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    return sock


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
            peer.send_payload(encode(Ready()))
            assert seat_at(peer, key).table.players[1].name == name  # past the LOBBY news, START
            return peer
        peer.close()
        assert "too many" in value.get("refuse", "") and time.monotonic() < deadline, value
        time.sleep(POLL)


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
