"""Returning to a game under way (protocol/wire.md §2, session.md §7.2), against a real host
process: who may take a seat back, and with what log."""

import hashlib
import random
import time

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from netutil import NAMES, FakePeer, Peers, play, seat_at
from p2pwhist import net
from p2pwhist.bodies import PROTOCOL_VERSION, Done, Rejoin, Resumed
from p2pwhist.bots import RandomBot
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.signed import parse, public_bytes
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify


def _rejoin(peer: FakePeer, name: str, public: bytes, sign, game: bytes, seat: int, have: int, head: bytes) -> dict:
    """HELLO with ``public``, then a REJOIN signed by ``sign`` over the WELCOME's nonce: the
    host's answer."""
    peer.send({"hello": {"version": PROTOCOL_VERSION, "name": name, "key": public}})
    reply = peer.receive_value()
    if "welcome" not in reply:
        return reply
    nonce = reply["welcome"]["nonce"]
    proof = sign(Rejoin.statement(game, seat, have, head, nonce))
    peer.send(Rejoin(game, seat, have, head, proof).to_wire())
    return peer.receive_value()


def test_only_the_seat_with_its_own_log_gets_back_in(tmp_path):
    """bob plays to his first move and loses his connection. A stranger cannot take his seat,
    nor can someone who has only his public key; bob with a log that differs from the table's
    is refused and named; bob with his real log is taken back and given what he missed."""
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--wait", "60")
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        session = seat_at(bob, key)
        play(bob, session)  # up to bob's first move
        bob.close()
        host.peer.wait_for("bob lost connection")
        game, have, head = session.game_id, len(session.log), session.head

        stranger = Ed25519PrivateKey.generate()
        refused = _rejoin(FakePeer.connect(host.port), "bob", public_bytes(stranger.public_key()), stranger.sign,
                          game, 1, have, head)
        assert "the table is full" in refused["refuse"]

        impostor = Ed25519PrivateKey.generate()  # bob's public key, but not his private one
        refused = _rejoin(FakePeer.connect(host.port), "bob", public_bytes(key.public_key()), impostor.sign,
                          game, 1, have, head)
        assert refused["refuse"] == "bob (seat 1) did not prove that it holds the seat's key"

        forked = hashlib.sha256(b"another history").digest()
        refused = _rejoin(FakePeer.connect(host.port), "bob", public_bytes(key.public_key()), key.sign,
                          game, 1, have, forked)
        assert "bob (seat 1)'s transcript differs from the table's log" in refused["refuse"]

        refused = _rejoin(FakePeer.connect(host.port), "bob", public_bytes(key.public_key()), key.sign,
                          bytes(32), 1, have, head)
        assert refused["refuse"] == "this host is playing another game"

        back = FakePeer.connect(host.port)
        behind = 3  # bob says he holds less than he does: the host sends him the rest again
        reply = _rejoin(back, "bob", public_bytes(key.public_key()), key.sign, game, 1, have - behind,
                        session.log[have - behind - 1].digest)
        assert Resumed.from_wire(reply).have == have
        again = [back.receive() for _ in range(behind)]
        assert again == [m.raw for m in session.log[-behind:]]
        assert parse(again[-1]).seq == have - 1
        host.peer.wait_for("bob is back")
        back.close()
        out = host.peer.out.read_text()
    for words in ("Refused bob: the table is full", "Refused bob: bob (seat 1) did not prove",
                  "Refused bob: bob (seat 1)'s transcript differs"):
        assert words in out, out


@pytest.mark.parametrize("gone", ["silent", "wrong answer"])
def test_a_joiner_gone_before_answering_done_is_waited_for_and_finishes_when_it_returns(tmp_path, gone):
    """bob plays the match to its last message, takes the host's DONE, and is gone without
    answering it (as a peer killed right after its last message, whose kernel still took the
    DONE), or answers with another count. The host must not count him finished (wire.md §2):
    it waits, takes him back when he returns, says DONE again, and leaves on his answer. A
    host that counted the written DONE would have left at once, and bob's return would find
    nobody."""
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--wait", "60", "--transcript", str(tmp_path / "alice.p2pw"))
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        session = seat_at(bob, key)
        play(bob, session, bot="random", answer_done=False)
        have = len(session.log)
        assert Done.from_wire(bob.receive_value()) == Done(have)
        if gone == "wrong answer":
            bob.send(Done(have - 1).to_wire())
            assert bob.receive() is None  # the host hangs up on it
        bob.close()

        back = FakePeer.connect(host.port)
        reply = _rejoin(back, "bob", public_bytes(key.public_key()), key.sign, session.game_id, 1, have, session.head)
        assert Resumed.from_wire(reply).have == have
        assert Done.from_wire(back.receive_value()) == Done(have)
        back.send(Done(have).to_wire())
        finished = host.peer.finish()
        back.close()
    assert finished.code == 0, finished.err
    assert "bob is back" in finished.out
    assert verify(read_transcript(tmp_path / "alice.p2pw")).complete


async def test_a_seat_too_slow_over_its_move_forfeits_and_is_told_so(tmp_path):
    """bob thinks longer than the host's limit over his first move: alice declares his
    forfeit and signs the result, and bob, still thinking, is told at once."""
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    slow = RandomBot(random.Random(1))
    moves = []

    def think(view):
        moves.append(view)
        if len(moves) == 1:
            time.sleep(1.5)  # in a worker thread, as a person's input is read
        return slow.choose(view)

    told: list[str] = []

    def options(seat, agent, timeout):
        return net.PeerOptions(NAMES[seat], keys[seat], agent, tmp_path / f"{NAMES[seat]}.p2pw", timeout=timeout,
                               report=told.append if seat == 1 else lambda line: None)

    results = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            table = net.HostOptions(BoxWhist(2), MatchLength(hands=1), 0, "127.0.0.1")
            alice = options(0, net.Agent(RandomBot(random.Random(0)).choose, False), timeout=0.5)

            async def hosting(task_status=trio.TASK_STATUS_IGNORED):
                results[0] = await net.host(alice, table, task_status=task_status)

            async def joining(port):
                results[1] = await net.join(options(1, net.Agent(think, True), timeout=30), "127.0.0.1", port)

            port = await nursery.start(hosting)
            nursery.start_soon(joining, port)
    outcome = results[0].outcome
    assert outcome.forfeited.seat == 1 and "took longer than 0:01" in outcome.forfeited.reason
    assert outcome.winner == 0
    # bob, still choosing, heard it at once: his choice was dropped and he took the forfeit
    assert results[1].outcome.forfeited == outcome.forfeited and len(moves) == 1
    assert any(line.startswith("You have 0:00 left for your move") for line in told), told  # warned first
    assert not (tmp_path / "bob.p2pw.secrets").exists() and not (tmp_path / "alice.p2pw.secrets").exists()
    verdict = verify(read_transcript(tmp_path / "alice.p2pw"))
    assert verdict.valid and verdict.complete and verdict.to_json()["forfeit"]["seat"] == 1
    bobs = verify(read_transcript(tmp_path / "bob.p2pw"))  # his log stops at the forfeit: he signs nothing more
    assert bobs.valid and bobs.to_json()["forfeit"]["seat"] == 1
