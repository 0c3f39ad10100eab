"""The game over memory streams, with a real host (and real joiners where it matters) and a
hand-written joiner running the real ``Session``: a joiner answering START at once, returns
to the table, the end exchange, forfeits by absence or slowness, and every way a seated joiner
can misbehave, each named by every honest peer, with the mock clock standing in for minutes of
waiting."""

from __future__ import annotations

import hashlib

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import Cut, Hosted, MemoryNetwork, Seat, Thinker, options, play, seat_at, vouch_until_start

from p2pwhist import net
from p2pwhist.bodies import Accept, Body, NextHand
from p2pwhist.games.base import PLAYS
from p2pwhist.games.boxwhist.engine import BoxWhistView
from p2pwhist.session import HOST, RemoteError, Session
from p2pwhist.signed import Kind, SignedMessage, parse, seal
from p2pwhist.table import (
    Done,
    Notice,
    Presence,
    Refuse,
    Rejoin,
    Resumed,
    Welcome,
    read_from_host,
)
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import LENGTH, pack


@pytest.fixture
async def hosted(tmp_path, nursery, autojump_clock):
    """A 2-seat table whose host waits 60 s for a lost seat and gives 20 s a message."""
    return Hosted(tmp_path, nursery, wait=60.0, timeout=20.0)


async def _rejoin(network: MemoryNetwork, name: str, public: bytes, sign, game: bytes, seat: int, have: int,
                  head: bytes) -> tuple[Seat, object]:
    """HELLO with ``public``, then a REJOIN signed by ``sign`` over the WELCOME's nonce: the
    connection and the host's answer."""
    from p2pwhist.table import PROTOCOL_VERSION, Hello

    peer = Seat(await network.connect("alice.lan", 7878))
    await peer.send(Hello(PROTOCOL_VERSION, name, public))
    reply = await peer.receive()
    if not isinstance(reply, Welcome):
        return peer, reply
    assert reply.game is not None  # the game under way (a returning joiner may name another)
    await peer.send(Rejoin(game, seat, have, head, sign(Rejoin.statement(game, seat, have, head, reply.nonce))))
    return peer, await peer.receive()


async def test_a_joiner_answering_start_at_once_keeps_its_seat_and_the_host_commits_next(hosted, autojump_clock,
                                                                                         monkeypatch):
    """The old host stopped watching a seated joiner only after START had gone out, and could
    take a prompt ACCEPT for "spoke before the game began" (in 4% to 30% of games). Here the
    window is made certain: the host's send of START does not return until bob has answered
    it. The seat is the game's before START is sent, so bob keeps it, and the host's next
    message is the next in the schedule, its COMMIT."""
    send = net.Link.send
    answered = trio.Event()
    held: list[bytes] = []

    async def slow_start(link: net.Link, payload: bytes) -> None:
        await send(link, payload)
        if payload[0] & 0xF0 == 0x90 and parse(payload).kind is Kind.START:
            held.append(payload)
            await answered.wait()

    monkeypatch.setattr(net.Link, "send", slow_start)
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    await bob.send_payload(session.produce().raw)  # ACCEPT, at once
    await trio.testing.wait_all_tasks_blocked()  # the host has read it, its send of START still waiting
    assert held == [session.log[0].raw]
    answered.set()
    while isinstance(read_from_host(payload := await bob.receive_payload()), Notice):
        pass
    assert session.receive(payload, HOST).kind is Kind.COMMIT
    assert not hosted.said("before the game began"), hosted.lines
    await bob.stream.aclose()


async def test_only_the_seat_with_its_own_log_gets_back_in(hosted, autojump_clock):
    """bob plays to his first move and loses his connection. A stranger cannot take his seat,
    nor can someone who has only his public key; bob with a log that differs from the table's
    is refused and named; bob with his real log is taken back and given what he missed."""
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    await play(bob, session)  # up to bob's first move
    await bob.stream.aclose()
    await trio.sleep(1)
    assert hosted.said("bob lost connection")
    game, have, head = session.game_id, len(session.log), session.head
    public = key.public_key().public_bytes_raw()
    network = hosted.network

    stranger = Ed25519PrivateKey.generate()
    _, refused = await _rejoin(network, "bob", stranger.public_key().public_bytes_raw(), stranger.sign, game, 1,
                               have, head)
    assert refused == Refuse("the table is full: a game is under way")
    impostor = Ed25519PrivateKey.generate()  # bob's public key, but not his private one
    _, refused = await _rejoin(network, "bob", public, impostor.sign, game, 1, have, head)
    assert refused == Refuse("bob (seat 1) did not prove that it holds the seat's key")
    forked = hashlib.sha256(b"another history").digest()
    _, refused = await _rejoin(network, "bob", public, key.sign, game, 1, have, forked)
    assert "bob (seat 1)'s transcript differs from the table's log" in refused.reason
    _, refused = await _rejoin(network, "bob", public, key.sign, bytes(32), 1, have, head)
    assert refused == Refuse("this host is playing another game")

    behind = 3  # bob says he holds less than he does: the host sends him the rest again
    back, reply = await _rejoin(network, "bob", public, key.sign, game, 1, have - behind,
                                session.log[have - behind - 1].digest)
    assert reply == Resumed(have)
    again = [await back.receive_payload() for _ in range(behind)]
    assert again == [m.raw for m in session.log[-behind:]]
    await trio.sleep(0.1)
    assert hosted.said("bob is back")
    for words in ("Refused bob: the table is full", "Refused bob: bob (seat 1) did not prove",
                  "Refused bob: bob (seat 1)'s transcript differs"):
        assert hosted.said(words), hosted.lines
    await back.stream.aclose()


@pytest.mark.parametrize("gone", ["silent", "wrong answer"])
async def test_a_joiner_gone_before_answering_done_is_waited_for_and_finishes_when_it_returns(hosted, gone,
                                                                                             autojump_clock):
    """bob plays the match to its last message, takes the host's DONE, and is gone without
    answering it (as a peer killed right after its last message), or answers with another
    count. The host must not count him finished: it waits, takes him back when he returns,
    says DONE again, and leaves on his answer."""
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    await play(bob, session, bot="random", answer_done=False)
    have = len(session.log)
    assert await bob.receive() == Done(have)
    if gone == "wrong answer":
        await bob.send(Done(have - 1))
        assert await bob.receive_payload() is None  # the host hangs up on it
    else:
        await trio.sleep(15)  # past the 10 s the host waits for the answer
    await bob.stream.aclose()
    back, reply = await _rejoin(hosted.network, "bob", key.public_key().public_bytes_raw(), key.sign,
                                session.game_id, 1, have, session.head)
    assert reply == Resumed(have)
    assert await back.receive() == Done(have)
    await back.send(Done(have))
    record = await hosted.end()
    assert isinstance(record, net.GameRecord)
    assert verify(read_transcript(record.transcript)).complete


async def test_a_seat_that_thinks_too_long_forfeits(tmp_path, nursery, autojump_clock):
    """bob thinks longer than the table's limit over his first move: alice declares his
    forfeit and signs the result, and bob, still thinking, is told at once, and warned first.
    bob does not sign his own forfeit: he keeps alice's declaration in his transcript."""
    hosted = Hosted(tmp_path, nursery, timeout=30.0)
    thinker = Thinker(300, seed=1)
    told: list[str] = []
    bob = options("bob", tmp=tmp_path, lines=told, timeout=600.0)
    bob.agent = thinker.agent()
    with pytest.raises(net.NetError, match="alice declared that bob forfeits the match \\(took longer than "
                       "0:30 over one message\\); bob does not sign its own forfeit"):
        await net.join(bob, "alice.lan", 7878, connect=hosted.network.connector())
    record = await hosted.end()
    outcome = record.outcome
    assert outcome.forfeited.seat == 1 and "took longer than 0:30" in outcome.forfeited.reason
    assert outcome.winner == 0 and len(thinker.views) == 1  # his choice was dropped
    assert any(line.startswith(("You have 0:08 left", "You have 0:07 left")) for line in told), told  # warned first
    assert not list(tmp_path.glob("*.secrets"))
    verdict = verify(read_transcript(record.transcript))
    assert verdict.valid and verdict.complete and verdict.to_json()["forfeit"]["seat"] == 1
    bobs = verify(read_transcript(tmp_path / "bob.p2pw"))  # his log ends with the declaration, which he kept
    assert bobs.valid and bobs.to_json()["forfeit"]["seat"] == 1


async def test_a_joiner_whose_connection_drops_comes_back_by_itself(tmp_path, nursery, autojump_clock):
    """The network cuts bob's connection in the middle of the hand: he reconnects on his own,
    and the match ends alike on both sides."""
    hosted = Hosted(tmp_path, nursery, wait=60.0)
    network = hosted.network
    connections = 0

    async def connect(address, port):
        nonlocal connections
        connections += 1
        stream = await network.connect(address, port)
        return Cut(stream, 6000) if connections == 1 else stream  # a hand sends bob about 10 KB

    lines: list[str] = []
    result = await net.join(options("bob", tmp=tmp_path, seed=1, lines=lines), "alice.lan", 7878, connect=connect)
    record = await hosted.end()
    assert isinstance(result, net.GameRecord) and isinstance(record, net.GameRecord)
    assert connections == 2 and "Back at the table." in lines
    assert any(line.startswith("Lost the connection to the host") for line in lines)
    assert record.transcript.read_bytes() == result.transcript.read_bytes()
    assert verify(read_transcript(record.transcript)).complete


# -- misbehaving after START: a 3-seat table of alice, the fake bob and the real carol ----------


def _accept(key: Ed25519PrivateKey, start: SignedMessage, body: Body = Accept()) -> SignedMessage:
    return seal(key, 1, start.digest, 1, body)


def _corrupt_signature(message: SignedMessage) -> bytes:
    return pack([message.signed, bytes([message.signature[0] ^ 1]) + message.signature[1:]])


# What bob does after START, and what the host says of it. Bytes that prove nothing against bob
# (they are no message of his) cost him his connection, not the game: he may come back and send
# again, and this bob does not, so his ACCEPT, due, takes longer than the limit.
SLOW = "bob (seat 1) took longer than 0:20 over one message"
AFTER_START = {
    "garbage": (lambda bob, key, start: bob.send_payload(b"\xc1\xc1"), "malformed msgpack", SLOW),
    "malformed-frame": (lambda bob, key, start: bob.send_payload(b"\x81\xa4done\xc1"),
                        "it sent a bad frame: malformed msgpack", SLOW),
    "oversized": (lambda bob, key, start: bob.stream.send_all(LENGTH.pack(10 * 2**20) + b"x" * 100),
                  "sent a frame of 10485760 bytes, over the 65536-byte limit", SLOW),
    "bad-signature": (lambda bob, key, start: bob.send_payload(_corrupt_signature(_accept(key, start))),
                      "message 1 from seat 1 has a bad signature", SLOW),
    "a-frame-outside-the-log": (lambda bob, key, start: bob.send(Done(3)), "it sent a DONE during the game", SLOW),
    "out-of-turn": (lambda bob, key, start: bob.send_payload(_accept(key, start, NextHand(True)).raw), None,
                    "bob (seat 1): sent hand out of turn (expected accept from seat 1)"),
    "silent": (lambda bob, key, start: trio.sleep(0), None, SLOW),
}


@pytest.mark.parametrize("misbehave, dropped, reason", list(AFTER_START.values()), ids=list(AFTER_START))
async def test_a_joiner_misbehaving_after_start_is_named_by_everyone(tmp_path, nursery, autojump_clock,
                                                                     misbehave, dropped, reason):
    hosted = Hosted(tmp_path, nursery, players=3, timeout=20.0)
    bob, key = await hosted.seat()
    await trio.sleep(1)
    carol_end = await hosted.join("carol")
    start = await vouch_until_start(bob)
    await misbehave(bob, key, start)
    record, carol = await hosted.end(), await carol_end()
    assert isinstance(record, net.NetError) and reason in str(record), record
    assert isinstance(carol, net.NetError)
    assert "bob" in str(carol) and not str(carol).startswith("alice (seat 0): ")  # the host only relayed
    if dropped is not None:
        assert any(line.startswith("Dropped bob's connection") and dropped in line for line in hosted.lines)


async def test_a_peer_that_disconnects_mid_game_and_stays_away_forfeits(tmp_path, nursery, autojump_clock):
    """bob vanishes at his first move and does not return within the table's wait: alice
    declares his forfeit, carol co-signs it, both sign the match result, and both keep the same
    transcript, which verify accepts as a forfeited match."""
    hosted = Hosted(tmp_path, nursery, players=3, wait=60.0)
    bob, key = await hosted.seat()
    await trio.sleep(1)
    carol_end = await hosted.join("carol", wait=60.0)
    session = Session(await vouch_until_start(bob), 1, key, lambda: bytes(32))
    await play(bob, session)
    await bob.stream.aclose()
    record, carol = await hosted.end(), await carol_end()
    assert isinstance(record, net.GameRecord) and isinstance(carol, net.GameRecord)
    assert hosted.said("bob lost connection; waiting for them to return (1:00 left)")
    assert carol.outcome.forfeited.seat == 1 and "did not return within 1:00" in carol.outcome.forfeited.reason
    assert record.transcript.read_bytes() == carol.transcript.read_bytes()
    messages = list(read_transcript(record.transcript))
    assert [(m.seat, m.kind) for m in messages[-4:]] == [(0, Kind.FORFEIT), (2, Kind.FORFEIT),
                                                        (0, Kind.FINAL), (2, Kind.FINAL)]
    verdict = verify(read_transcript(record.transcript))
    assert verdict.valid and verdict.complete and verdict.to_json()["forfeit"]["seat"] == 1
    assert not list(tmp_path.glob("*.secrets"))


async def test_an_illegal_move_is_named_with_its_rule_by_everyone(tmp_path, nursery, autojump_clock, monkeypatch):
    """A modified bob plays honestly up to his first move, then plays the face-up stack card,
    which is not his: a properly signed claim that only the rules refuse."""
    hosted = Hosted(tmp_path, nursery)
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    await play(bob, session)
    position = session.hand.stack[0]
    monkeypatch.setattr(BoxWhistView, "refusal", lambda view, move: None)  # bob's own check, gone
    with pytest.raises(RemoteError):  # bob's own session knows better, but has signed it
        session.produce(PLAYS[position])
    await bob.send_payload(session.log[-1].raw)
    abort = parse(await bob.receive_payload())
    record = await hosted.end()
    rule = f"that card is not in the player's hand or box (position {position})"
    assert isinstance(record, net.NetError) and str(record).startswith("bob (seat 1)") and rule in str(record)
    assert abort.kind is Kind.ABORT and "bob (seat 1) broke the rules" in abort.body.reason
    assert abort.body.culprit == 1
    # The host kept bob's play as evidence: verifying its transcript gives the same verdict.
    verdict = verify(read_transcript(tmp_path / "alice.p2pw"))
    assert not verdict.valid and verdict.error.seat == 1 and rule in verdict.error.reason


async def test_notices_reach_the_seats_while_the_table_waits(hosted, autojump_clock):
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    await play(bob, session)  # bob's move is due; he thinks
    notices = []
    with trio.move_on_after(12):
        while True:
            frame = await bob.receive()
            if isinstance(frame, Notice):
                notices.append(frame)
    assert notices and notices[0].seat == 1 and notices[0].presence is Presence.SLOW
    assert notices[0].left == 15  # a quarter of the 20 s limit has passed
    await bob.stream.aclose()


async def test_a_joiner_cut_off_hears_of_it_as_news_it_can_count_down_until_it_is_back(tmp_path, nursery,
                                                                                      autojump_clock):
    """As above, with a screen that keeps the news on show (``PeerOptions.news``): the lost link
    to the host comes as the host gone, with the table's wait to return, then as the host back;
    neither comes as a line as well."""
    hosted = Hosted(tmp_path, nursery, wait=60.0)
    network = hosted.network
    connections = 0

    async def connect(address, port):
        nonlocal connections
        connections += 1
        stream = await network.connect(address, port)
        return Cut(stream, 6000) if connections == 1 else stream

    lines: list[str] = []
    news: list[Notice] = []
    bob = options("bob", tmp=tmp_path, seed=1, lines=lines, news=news.append)
    result = await net.join(bob, "alice.lan", 7878, connect=connect)
    await hosted.end()
    assert isinstance(result, net.GameRecord) and connections == 2
    assert news == [Notice(HOST, Presence.GONE, 0, 60), Notice(HOST, Presence.BACK, 0, 0)], news
    assert not any("Back at the table" in line or "reconnecting" in line for line in lines), lines
