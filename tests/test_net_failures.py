"""Every way a networked game can fail ends in one line that names the peer at fault, the
right exit code (1: a peer or the network, 2: our own usage), no traceback and no hang.

The host under test is a real process; the misbehaving peers are written by hand (raw frames,
or the real ``Session`` driven to a chosen point and then made to cheat)."""

from __future__ import annotations

import hashlib
import secrets
import socket
import struct
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import (
    PEER_TIMEOUT,
    FakeHost,
    FakePeer,
    Host,
    Peer,
    Peers,
    free_port,
    play,
    seat_at,
)

from p2pwhist.bodies import PROTOCOL_VERSION, Accept, Body, NextHand, Player, Table, Welcome
from p2pwhist.deck import Deck, DeckParams
from p2pwhist.games.base import PLAYS
from p2pwhist.games.boxwhist import BoxWhist, BoxWhistView
from p2pwhist.games.match import MatchLength
from p2pwhist.session import HOST, RemoteError
from p2pwhist.signed import GENESIS_PREV, Kind, SignedMessage, parse, public_bytes, seal
from p2pwhist.transcript import MAGIC, read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import frame, pack

TEN_MB = 10 * 1024 * 1024


# -- before the game -----------------------------------------------------------------------


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
    line = done.error_line()
    assert f"cannot reach the host 127.0.0.1:{port}" in line and "refused" in line.lower()


@pytest.mark.parametrize(
    "args, reason",
    [
        (["join", "127.0.0.1:99999"], "is not an address to join"),
        (["join", "127.0.0.1:7878", "--name", " bob"], "a name is"),
        (["host", "--identity", "garbage.pem"], "cannot read the identity key"),
        (["host", "--bind", "no.such.host.invalid"], "cannot listen on no.such.host.invalid"),
        (["host", "--transcript", "garbage.pem"], "already exists: a transcript is never overwritten"),
    ],
)
def test_our_own_usage_mistakes_exit_2(tmp_path, args, reason):
    (tmp_path / "garbage.pem").write_text("not a key")
    args = [str(tmp_path / a) if a.endswith(".pem") else a for a in args]
    with Peers(tmp_path) as peers:
        done = peers.start("bob", *args, "--bot", "random").finish()
    assert done.code == 2
    assert reason in done.error_line()


def test_a_third_joiner_to_a_full_table_is_refused_and_the_game_goes_on(tmp_path):
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        bob = FakePeer.connect(host.port)  # takes the last seat, then waits while carol knocks
        bob.sit("bob", key)
        host.peer.wait_for(r"bob joined")
        carol = peers.join("carol", host).finish()
        play(bob, seat_at(bob, key), bot="random")
        hosted = host.peer.finish()
        bob.close()
    assert carol.code == 1
    assert "refused us: the table is full" in carol.error_line()
    assert hosted.code == 0, hosted.err
    assert "Refused carol: the table is full" in hosted.out and "Match over" in hosted.out


def test_a_joiner_who_leaves_before_the_table_fills_frees_its_seat(tmp_path):
    with Peers(tmp_path) as peers:
        host = peers.host("alice", players=3)
        dan = FakePeer.connect(host.port)
        dan.sit("dan", Ed25519PrivateKey.generate())
        host.peer.wait_for(r"dan joined")
        dan.close()
        host.peer.wait_for(r"dan left before the game began; its seat is free again")
        bob = peers.join("bob", host)
        host.peer.wait_for(r"bob joined")
        carol = peers.join("carol", host).finish()
        bob, hosted = bob.finish(), host.peer.finish()
    assert [bob.code, carol.code, hosted.code] == [0, 0, 0], (bob.err, carol.err, hosted.err)
    assert "Match over" in hosted.out and "with alice, bob, carol" in carol.out


@pytest.mark.parametrize(
    "send, reply",
    [
        (lambda peer: peer.hello("bob", Ed25519PrivateKey.generate(), version=99), "protocol version 99"),
        (lambda peer: peer.hello("bob", Ed25519PrivateKey.generate(), version=1),
         "you speak protocol version 1; this host speaks version 2"),
        (lambda peer: peer.send_payload(b"\xc1 not msgpack"), "not a p2pwhist HELLO: malformed msgpack"),
        (lambda peer: peer.send({"hello": {"name": "bob"}}), "not a p2pwhist HELLO"),
        (lambda peer: peer.send_bytes(struct.pack(">I", TEN_MB) + b"x" * 100), None),
    ],
    ids=["version", "version-1", "garbage", "not-hello", "oversized"],
)
def test_a_bad_hello_is_refused_in_one_line_and_the_host_goes_on(tmp_path, send, reply):
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        peer = FakePeer.connect(host.port)
        address = f"127.0.0.1:{peer.sock.getsockname()[1]}"
        send(peer)
        if reply is not None:  # a frame we could read gets an answer; one we cannot, none
            assert reply in peer.receive_value()["refuse"]
        assert peer.receive() is None  # and the host hangs up
        line = host.peer.wait_for(rf"(Refused|Dropped) .*{address}.*\n")[0]
        assert reply is None or reply in line
        assert host.peer.running  # a bad HELLO does not end the table
        peer.close()


DEEP = b"\x91" * 995 + b"\xc0"  # a list nested 995 deep: about 1 KB


@pytest.mark.parametrize(
    "change, reason",
    [({"version": 99}, "protocol version 99"),
     ({"version": 1}, "this game speaks protocol version 1; this p2pwhist speaks version 2"),
     ({"game": {"game": "bridge", "players": 2}}, "unknown game 'bridge'"),
     ({"game": {"game": [1]}}, "unknown game an array of 1"), ({"version": "DEEP"}, "nested more than 8 levels"),
     ({"players": "EXTRA"}, "the game is for 2 players")],
    ids=["version", "version-1", "game", "unhashable-game", "deep-version", "extra-player"],
)
def test_a_start_this_program_cannot_accept_stops_the_joiner_and_verify(tmp_path, change, reason):
    """A version or configuration mismatch comes from the other side: exit 1 (see cli.py); the
    same START in a file is not a transcript: verify exits 2. One line each, no traceback."""
    host_key = Ed25519PrivateKey.generate()
    fake = FakeHost()
    with Peers(tmp_path) as peers:
        joiner = peers.start("bob", "join", fake.address, "--name", "bob", "--bot", "random")
        peer = fake.accept()
        hello = peer.welcome("alice", host_key)
        players = (Player("alice", public_bytes(host_key.public_key())), Player(hello["name"], hello["key"]))
        table = Table(BoxWhist(2), MatchLength(hands=1), players, secrets.token_bytes(32)).to_wire()
        extra = table["players"] + [["eve", bytes(32)]]
        signed = pack([0, GENESIS_PREV, HOST, "start", {**table, **change}])
        signed = signed.replace(pack("DEEP"), DEEP).replace(pack("EXTRA"), pack(extra))
        payload = pack([signed, host_key.sign(signed)])
        peer.send_payload(payload)
        done = joiner.finish()
        peer.close()
        (tmp_path / "start.p2pw").write_bytes(MAGIC + frame(payload))
        checked = peers.start("verifier", "verify", str(tmp_path / "start.p2pw")).finish()
    fake.close()
    assert done.code == 1
    line = done.error_line()
    assert "sent a bad START" in line and reason in line
    assert checked.code == 2 and reason in checked.error_line()


def test_a_joiner_leaves_a_host_that_speaks_another_protocol_version(tmp_path):
    """A host of another version welcomes us instead of refusing our HELLO: we say so in one
    line and never sit down."""
    fake = FakeHost()
    with Peers(tmp_path) as peers:
        joiner = peers.start("bob", "join", fake.address, "--name", "bob", "--bot", "random")
        peer = fake.accept()
        assert peer.receive_value()["hello"]["version"] == PROTOCOL_VERSION
        key = Ed25519PrivateKey.generate()
        peer.send(Welcome(1, "alice", public_bytes(key.public_key()), bytes(32)).to_wire())
        assert peer.receive() is None  # no READY: the joiner hung up
        done = joiner.finish()
        peer.close()
    fake.close()
    assert done.code == 1
    assert "speaks protocol version 1; this p2pwhist speaks version 2" in done.error_line()


# -- during the game -----------------------------------------------------------------------


def _accept(key: Ed25519PrivateKey, start: SignedMessage, body: Body = Accept()) -> SignedMessage:
    """Seat 1's signed reply to START (its ACCEPT, unless told otherwise)."""
    return seal(key, 1, start.digest, 1, body)


def _corrupt_signature(message: SignedMessage) -> bytes:
    signature = bytes([message.signature[0] ^ 1]) + message.signature[1:]
    return pack([message.signed, signature])


Misbehaviour = Callable[[FakePeer, Ed25519PrivateKey, SignedMessage], None]
AFTER_START: dict[str, tuple[Misbehaviour, str]] = {
    "garbage": (lambda peer, key, start: peer.send_payload(b"\xc1\xc1"), "bob (seat 1): malformed msgpack"),
    "oversized": (lambda peer, key, start: peer.send_bytes(struct.pack(">I", TEN_MB) + b"x" * 100),
                  f"bob sent a bad frame: a frame announces {TEN_MB} bytes"),
    "bad-signature": (lambda peer, key, start: peer.send_payload(_corrupt_signature(_accept(key, start))),
                      "bob (seat 1): message 1 from seat 1 has a bad signature"),
    "out-of-turn": (lambda peer, key, start: peer.send_payload(_accept(key, start, NextHand(True)).raw),
                    "bob (seat 1): sent hand out of turn (expected accept from seat 1)"),
    "silent": (lambda peer, key, start: None, "bob (seat 1) took longer than 0:02 over one message"),
}


def _bob_and_carol_join(peers: Peers, key: Ed25519PrivateKey, timeout: float = PEER_TIMEOUT) -> tuple[Host, FakePeer, Peer]:
    """A 3-seat table: alice hosts, the fake bob takes seat 1, then the honest carol seat 2.
    alice and carol write their transcripts to ``alice.p2pw`` and ``carol.p2pw``."""
    host = peers.host("alice", "--transcript", str(peers.root / "alice.p2pw"), players=3, timeout=timeout)
    bob = FakePeer.connect(host.port)
    bob.sit("bob", key)
    host.peer.wait_for(r"bob joined")
    carol = peers.join("carol", host, "--transcript", str(peers.root / "carol.p2pw"))
    return host, bob, carol


@pytest.mark.parametrize("misbehave, reason", list(AFTER_START.values()), ids=list(AFTER_START))
def test_a_joiner_misbehaving_after_start_is_named_by_everyone(tmp_path, misbehave, reason):
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host, bob, carol = _bob_and_carol_join(peers, key, timeout=2)
        misbehave(bob, key, parse(bob.receive()))
        hosted, carol_done = host.peer.finish(), carol.finish()
        bob.close()
    assert hosted.code == 1
    assert reason in hosted.error_line()
    assert carol_done.code == 1
    line = carol_done.error_line()
    assert "bob" in line and not line.startswith("p2pwhist: alice (seat 0): ")  # the host only relayed


@pytest.mark.parametrize("leave", [FakePeer.close, FakePeer.reset], ids=["close", "reset"])
def test_a_peer_that_disconnects_mid_game_and_stays_away_forfeits(tmp_path, leave):
    """bob vanishes at his first move and does not return within the table's wait: alice
    declares his forfeit, carol co-signs it, both sign the match result, and both keep the
    same transcript, which verify accepts as a forfeited match."""
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--transcript", str(peers.root / "alice.p2pw"), "--wait", "1", players=3)
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        host.peer.wait_for(r"bob joined")
        carol = peers.join("carol", host, "--transcript", str(peers.root / "carol.p2pw"), "--wait", "1")
        play(bob, seat_at(bob, key))
        leave(bob)
        hosted, carol_done = host.peer.finish(), carol.finish()
    assert [hosted.code, carol_done.code] == [0, 0], [hosted.err, carol_done.err]
    assert "bob lost connection; waiting for them to return (0:01 left)" in hosted.out
    assert "bob left the match: bob lost connection and did not return within 0:01" in carol_done.out
    assert "bob left and forfeits, so" in carol_done.out
    transcript = tmp_path / "alice.p2pw"
    assert transcript.read_bytes() == (tmp_path / "carol.p2pw").read_bytes()
    messages = list(read_transcript(transcript))
    assert [(m.seat, m.kind) for m in messages[-4:]] == [(0, Kind.FORFEIT), (2, Kind.FORFEIT),
                                                        (0, Kind.FINAL), (2, Kind.FINAL)]
    assert messages[-4].body.seat == 1
    verdict = verify(read_transcript(transcript))
    assert verdict.valid and verdict.complete and verdict.to_json()["forfeit"]["seat"] == 1
    assert not (tmp_path / "alice.p2pw.secrets").exists()  # the game is over: nothing secret is left


def test_an_illegal_move_is_named_with_its_rule_by_everyone(tmp_path, monkeypatch):
    """A modified bob plays honestly up to his first move, then plays the face-up stack card,
    which is not his: a properly signed claim that only the rules refuse."""
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host, bob, carol = _bob_and_carol_join(peers, key)
        session = seat_at(bob, key)
        play(bob, session)
        position = session.hand.stack[0]
        monkeypatch.setattr(BoxWhistView, "refusal", lambda view, move: None)  # bob's own check, gone
        with pytest.raises(RemoteError):  # bob's own session knows better, but has signed it
            session.produce(PLAYS[position])
        bob.send_payload(session.log[-1].raw)
        abort = parse(bob.receive())
        hosted, carol_done = host.peer.finish(), carol.finish()
        bob.close()
    rule = f"that card is not in the player's hand or box (position {position})"
    for done in hosted, carol_done:
        assert done.code == 1
        line = done.error_line()
        assert line.startswith("p2pwhist: bob (seat 1)") and rule in line
    assert abort.kind is Kind.ABORT and "bob (seat 1) broke the rules" in abort.body.reason
    assert abort.body.culprit == 1
    # The host kept bob's play as evidence: verifying its transcript gives the same verdict.
    verdict = verify(read_transcript(tmp_path / "alice.p2pw"))
    assert not verdict.valid and verdict.error.seat == 1 and rule in verdict.error.reason
