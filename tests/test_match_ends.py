"""How a match ends, tried as an attacker would (issue 20): nobody wins by the clock or the
wire. Each test is one attack that worked before the table agreed its limits in START, took a
forfeit as evidence rather than a claim, bounded every send and wait, and made room at the
door; each runs in memory under the mock clock, minutes of waiting in milliseconds.

1. A joiner's own clock cannot make a present host forfeit, nor can a FORFEIT it makes up.
2. Leaving costs the leaver, whatever seat its ABORT blames.
3. A message lost on the way is sent again: nobody forfeits, nobody is called a cheater.
4. A storm of returns, then a connection left unread, holds nothing up.
5. The end exchange is bounded on both sides, whatever the other side sends meanwhile.
6. (A planted command file: tests/test_home.py and tests/test_unfinished.py.)
7. Silent connections from a returning player's network cannot keep it out.
"""

from __future__ import annotations

import random
import secrets

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import (
    Cut,
    FakeHost,
    Hosted,
    HostSide,
    MemoryNetwork,
    Seat,
    Thinker,
    Through,
    options,
    play,
    vouch_until_start,
)

from p2pwhist import net
from p2pwhist.bodies import Abort, Forfeit, Player, Table, TimeLimits
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.session import HOST, Need, Session, start_message
from p2pwhist.signed import Kind, parse, seal
from p2pwhist.table import (
    PROTOCOL_VERSION,
    Done,
    Hello,
    Notice,
    Presence,
    Ready,
    Refuse,
    Rejoin,
    Resumed,
    Welcome,
    read_from_host,
)
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import LENGTH


def _sealed(key: Ed25519PrivateKey, session: Session, body) -> bytes:
    """A message of ours made by hand at the head of ``session``'s log."""
    return seal(key, len(session.log), session.head, session.seat, body).raw


def _kinds(path) -> list[tuple[int, Kind]]:
    return [(message.seat, message.kind) for message in read_transcript(path)]


# -- 1. a joiner cannot make a present host forfeit ------------------------------------------------


async def test_a_joiners_own_short_limit_does_not_time_the_host(tmp_path, nursery, autojump_clock):
    """bob asks for a 10 s limit of his own; the table agreed 60 s in START, and alice thinks
    40 s over her first move. Nobody forfeits: bob times alice by the table's limit."""
    hosted = Hosted(tmp_path, nursery, timeout=60.0)
    hosted.options.agent = Thinker(40).agent()
    bob = options("bob", tmp=tmp_path, seed=1, timeout=10.0)
    result = await net.join(bob, "alice.lan", 7878, connect=hosted.network.connector())
    record = await hosted.end()
    assert isinstance(result, net.GameRecord) and result.outcome.forfeited is None, result
    assert record.table.times == TimeLimits(60, 300)
    assert record.transcript.read_bytes() == result.transcript.read_bytes()


async def test_a_forfeit_a_joiner_makes_up_against_a_present_host_costs_the_joiner(tmp_path, nursery,
                                                                                   autojump_clock):
    """A hand-made bob, due to move, sends a FORFEIT naming alice instead. alice, present, does
    not sign it: she drops bob, whose message stays due, and declares his forfeit when the
    table's limit passes; carol signs it on her own clock. Nobody's transcript says alice left."""
    hosted = Hosted(tmp_path, nursery, players=3, timeout=30.0)
    bob, key = await hosted.seat()
    await trio.sleep(1)
    carol_end = await hosted.join("carol")
    session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
    await play(bob, session)  # up to his first move
    await bob.send_payload(_sealed(key, session, Forfeit(HOST, "alice took longer than 0:01 over one message")))
    record, carol = await hosted.end(), await carol_end()
    assert isinstance(record, net.GameRecord) and isinstance(carol, net.GameRecord)
    assert record.outcome.forfeited.seat == 1 and "took longer than 0:30" in record.outcome.forfeited.reason
    assert any(line.startswith("Dropped bob's connection: bob declared that alice forfeits the match")
               for line in hosted.lines), hosted.lines
    assert record.transcript.read_bytes() == carol.transcript.read_bytes()
    forfeits = [m for m in read_transcript(record.transcript) if m.kind is Kind.FORFEIT]
    assert [(m.seat, m.body.seat) for m in forfeits] == [(0, 1), (2, 1)]  # alice declares, carol signs


# -- 2. leaving costs the leaver ---------------------------------------------------------------------


async def test_an_abort_that_blames_another_seat_is_still_the_sender_leaving(tmp_path, nursery, autojump_clock):
    """bob, once the game began, stops it with an ABORT blaming alice: he left, and forfeits;
    the blame is kept as his, and proves nothing against alice."""
    hosted = Hosted(tmp_path, nursery)
    bob, key = await hosted.seat()
    session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
    await play(bob, session)  # every seat accepted: the match is under way
    await bob.send_payload(_sealed(key, session, Abort("alice cheated, believe me", HOST)))
    record = await hosted.end()
    assert isinstance(record, net.GameRecord), record
    forfeited = record.outcome.forfeited
    assert (forfeited.seat, forfeited.blamed) == (1, HOST) and record.outcome.winner == 0
    verdict = verify(read_transcript(record.transcript))
    assert verdict.valid and verdict.to_json()["forfeit"]["seat"] == 1


# -- 3. a message lost on the way is sent again ----------------------------------------------------


class WithholdOne(Through):
    """bob's connection as a hostile path sees it: his ``nth`` message of the log (counting
    from 1), or his first of ``kind``, never reaches the host; everything else goes through."""

    def __init__(self, stream: trio.abc.Stream, nth: int | None = None, kind: Kind | None = None) -> None:
        super().__init__(stream)
        self.left = nth
        self.kind = kind

    async def send_all(self, data: bytes) -> None:
        payload = data[LENGTH.size:]
        if payload and (payload[0] & 0xF0 == 0x90 or payload[0] in (0xDC, 0xDD)):  # a message of the log
            if self.kind is not None and parse(payload).kind is self.kind:
                self.kind = None
                return
            if self.left is not None:
                self.left -= 1
                if self.left == 0:
                    return
        await self.stream.send_all(data)


@pytest.mark.parametrize("nth, kind, how", [(4, None, "Dropped bob's connection: message"),
                                           (1, None, "The host has not got our"),
                                           (None, Kind.FINAL, "The host has not got our")],
                         ids=["followed by another", "the last one out", "the log's last"])
async def test_a_message_lost_on_the_way_is_sent_again_and_nobody_forfeits(tmp_path, nursery, autojump_clock,
                                                                            nth, kind, how):
    """The path drops one of bob's messages. Followed at once by another of his, the host
    takes the next for what it is, out of the chain, proving nothing: it drops the connection,
    and bob, returning, sends both again. The last one out before bob waits: the host's
    NOTICE that it waits for bob tells him it never came, and he returns and sends it again;
    so too for his FINAL, which completes his log and leaves him waiting for the host's DONE."""
    hosted = Hosted(tmp_path, nursery, timeout=60.0)
    network, connections = hosted.network, []

    async def connect(address, port):
        stream = await network.connect(address, port, "10.0.0.7")
        connections.append(stream)
        return WithholdOne(stream, nth, kind) if len(connections) == 1 else stream

    lines: list[str] = []
    result = await net.join(options("bob", tmp=tmp_path, seed=1, lines=lines), "alice.lan", 7878, connect=connect)
    record = await hosted.end()
    assert isinstance(result, net.GameRecord) and isinstance(record, net.GameRecord), (result, record)
    assert record.outcome.forfeited is None and len(connections) == 2
    assert any(line.startswith(how) for line in hosted.lines + lines), (hosted.lines, lines)
    assert record.transcript.read_bytes() == result.transcript.read_bytes()
    assert verify(read_transcript(record.transcript)).complete


# -- 4. a storm of returns, then a connection left unread ------------------------------------------


async def test_a_storm_of_returns_and_an_unread_connection_hold_nothing_up(tmp_path, nursery, autojump_clock):
    """bob, due to move, comes back 100 times at once, each proving his key, and leaves his
    last connections unread. The host takes a few returns a minute and refuses the rest, its
    writes to the unread connections give up, carol hears of none of it, and bob forfeits when
    the table's limit for his move passes, as he would have."""
    hosted = Hosted(tmp_path, nursery, players=3, timeout=60.0, wait=60.0)
    bob, key = await hosted.seat(source="10.0.0.7")
    await trio.sleep(1)
    carol_lines: list[str] = []
    carol_end = await hosted.join("carol", lines=carol_lines)
    session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
    await play(bob, session)  # up to his first move
    began = trio.current_time()
    game, have, head = session.game_id, len(session.log), session.head
    answers, unread = [], []
    for _ in range(100):
        back = Seat(await hosted.network.connect("alice.lan", 7878, "10.0.0.7"))
        welcome = await back.hello("bob", key)
        assert isinstance(welcome, Welcome)
        proof = key.sign(Rejoin.statement(game, 1, have, head, welcome.nonce))
        await back.send(Rejoin(game, 1, have, head, proof))
        answers.append(await back.receive())
        unread.append(back)  # read no further
    taken = [a for a in answers if isinstance(a, Resumed)]
    refused = [a for a in answers if isinstance(a, Refuse)]
    assert len(taken) == 6 and len(refused) == 94, answers
    assert "bob came back 6 times within 1:00; try again shortly" in refused[0].reason
    record, carol = await hosted.end(), await carol_end()
    assert isinstance(record, net.GameRecord) and isinstance(carol, net.GameRecord), (record, carol)
    assert record.outcome.forfeited.seat == 1 and "took longer than 1:00" in record.outcome.forfeited.reason
    assert trio.current_time() - began < 60 + 10
    assert sum("bob is back" in line for line in carol_lines) <= 1, carol_lines
    for back in unread:
        await back.stream.aclose()


# -- 5. the end exchange is bounded on both sides ------------------------------------------------------


async def test_a_joiner_returning_again_and_again_after_the_match_does_not_keep_the_host(tmp_path, nursery,
                                                                                          autojump_clock):
    """bob plays to the end, answers DONE wrongly, and returns every few seconds to do it
    again. The host lets him back a few times, then refuses, and leaves when the table's wait
    from the log's completion has passed, however often he comes."""
    hosted = Hosted(tmp_path, nursery, wait=60.0)
    bob, key = await hosted.seat()
    session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
    await play(bob, session, bot="random", answer_done=False)
    completed, have = trio.current_time(), len(session.log)
    refusals = []
    seat = bob
    while not hosted.done.is_set() and trio.current_time() < completed + 600:
        said = await seat.receive_payload()
        if said is not None:
            await seat.send(Done(have - 1))
        await seat.stream.aclose()
        await trio.sleep(5)
        if hosted.done.is_set():
            break
        try:
            seat = Seat(await hosted.network.connect("alice.lan", 7878))
            await seat.send(Hello(PROTOCOL_VERSION, "bob", key.public_key().public_bytes_raw()))
        except (OSError, trio.BrokenResourceError):  # the host has gone
            break
        if (answer := await seat.receive_payload()) is None:  # it went as we came
            break
        welcome = read_from_host(answer)
        if not isinstance(welcome, Welcome):
            refusals.append(welcome)
            continue
        await seat.send(Rejoin(session.game_id, 1, have, session.head,
                               key.sign(Rejoin.statement(session.game_id, 1, have, session.head, welcome.nonce))))
        answer = await seat.receive_payload()
        if answer is None:  # the host has gone
            break
        if isinstance(word := read_from_host(answer), Refuse):
            refusals.append(word)
    record = await hosted.end()
    assert isinstance(record, net.GameRecord)
    assert trio.current_time() - completed <= 60 + 10
    assert any("came back for its last messages often enough" in r.reason for r in refusals), refusals


class _HandMadeHost:
    """bob, a real joiner (as a task), at a hand-made host's table of one hand under
    ``limits``: the host plays honestly with a random bot as long as the test says."""

    def __init__(self, tmp_path, nursery: trio.Nursery, limits: TimeLimits) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.network = MemoryNetwork()
        self.limits = limits
        self.bob = options("bob", tmp=tmp_path, seed=1)
        self.ended: list[net.GameRecord | Exception] = []
        self.listener = FakeHost(self.network)
        nursery.start_soon(self._bob)

    async def _bob(self) -> None:
        try:
            self.ended.append(await net.join(self.bob, "alice.lan", 7878, connect=self.network.connector()))
        except Exception as error:  # noqa: BLE001 (kept for the test to judge)
            self.ended.append(error)

    async def seat(self) -> tuple[HostSide, Session]:
        side = await self.listener.accept()
        await side.welcome("alice", self.key)
        assert isinstance(await side.receive(), Ready)
        players = (Player("alice", self.key.public_key().public_bytes_raw()),
                   Player("bob", self.bob.key.public_key().public_bytes_raw()))
        start = start_message(self.key, Table(BoxWhist(2), MatchLength(hands=1), players, secrets.token_bytes(32), "",
                                              self.limits))
        await side.send_payload(start.raw)
        return side, Session(start, HOST, self.key, lambda: secrets.token_bytes(32))

    async def play(self, side: HostSide, session: Session, until=lambda session: False) -> None:
        """Play until the log is complete, or until ``until(session)`` holds at our turn."""
        bot = RandomBot(random.Random(3))
        while (need := session.need) is not Need.DONE:
            if need is Need.PEER:
                payload = await side.receive_payload()
                assert payload is not None
                session.receive(payload, 1)
            elif until(session):
                return
            else:
                message = session.produce(bot.choose(session.view()) if need is Need.MOVE else None)
                await side.send_payload(message.raw)


async def test_a_host_that_never_says_done_does_not_keep_a_finished_joiner(tmp_path, nursery, autojump_clock):
    """A hand-made host plays the match with bob honestly, then, instead of DONE, sends a
    NOTICE every second for ever. bob, his log complete, stays no longer than the table's wait
    from then (a crashed host's time to be restarted), a try and a greeting, however long the
    table gives a move, and keeps a complete transcript."""
    table = _HandMadeHost(tmp_path, nursery, TimeLimits(86400, 30))
    side, session = await table.seat()
    await table.play(side, session)
    completed = trio.current_time()
    while not table.ended:
        try:
            await side.send(Notice(1, Presence.SLOW, 0, 5))
        except trio.BrokenResourceError:  # bob has closed his end: he is leaving
            pass
        await trio.sleep(1)
    assert isinstance(table.ended[0], net.GameRecord), table.ended
    limits = table.bob.limits
    assert trio.current_time() - completed <= 30 + limits.reconnect_most + limits.hello + 2
    assert verify(read_transcript(table.ended[0].transcript)).complete


async def test_a_host_that_vanishes_mid_match_lets_a_joiner_go_once_its_wait_has_passed(tmp_path, nursery,
                                                                                        autojump_clock):
    """A hand-made host plays a few tricks with bob on a table that gives a day a move (as
    ``p2pwhist play`` does its bots), then vanishes as a killed process does: its connection
    drops and its port refuses. bob tries to return for the table's wait, declares that the
    host forfeits, and leaves then, not a day later, with a transcript verify finds complete."""
    table = _HandMadeHost(tmp_path, nursery, TimeLimits(86400, 30))
    side, session = await table.seat()
    await table.play(side, session, until=lambda session: len(session.log) >= 40)
    del table.network.listeners[("alice.lan", 7878)]
    await side.stream.aclose()
    vanished = trio.current_time()
    while not table.ended:
        await trio.sleep(1)
    record = table.ended[0]
    assert isinstance(record, net.GameRecord), record
    assert record.outcome.forfeited.seat == HOST
    assert record.outcome.forfeited.reason == "lost connection and did not return within 0:30"
    assert trio.current_time() - vanished <= 30 + 2
    verdict = verify(read_transcript(record.transcript))
    assert verdict.complete and verdict.session.outcome.forfeited.seat == HOST


# -- 7. silent connections cannot keep a returning player out ----------------------------------------


async def test_silent_connections_from_a_returning_players_address_cannot_keep_him_out(tmp_path, nursery,
                                                                                    autojump_clock):
    """Behind bob's address (a carrier's NAT), a stranger keeps 8 connections open that say
    nothing, opening another as soon as one is closed. bob's connection drops mid-hand; he
    returns all the same, and the match ends alike for everyone, nobody forfeiting."""
    hosted = Hosted(tmp_path, nursery, players=3, wait=60.0)
    network = hosted.network
    carol_end = await hosted.join("carol", source="10.0.0.3")

    async def squat(task_status=trio.TASK_STATUS_IGNORED) -> None:
        async def hold() -> None:
            while True:
                try:
                    seat = Seat(await network.connect("alice.lan", 7878, "10.0.0.7"))
                    await seat.stream.send_all(LENGTH.pack(100) + b"\x81\xa5hello")  # a HELLO never finished
                except (OSError, trio.BrokenResourceError):  # the host has finished
                    return
                await seat.receive_payload()  # until the host closes it
                await seat.stream.aclose()

        async with trio.open_nursery() as holders:
            for _ in range(8):
                holders.start_soon(hold)
            task_status.started()

    connections = 0

    async def connect(address, port):
        nonlocal connections
        connections += 1
        if connections == 2:  # bob returns, and the squatters were there first
            await squatting.start(squat)
            await trio.sleep(1)
        stream = await network.connect(address, port, "10.0.0.7")
        return Cut(stream, 6000) if connections == 1 else stream  # mid-hand

    lines: list[str] = []
    async with trio.open_nursery() as squatting:
        bob = await net.join(options("bob", tmp=tmp_path, seed=1, lines=lines), "alice.lan", 7878, connect=connect)
        record, carol = await hosted.end(), await carol_end()
        squatting.cancel_scope.cancel()
    assert isinstance(record, net.GameRecord) and isinstance(bob, net.GameRecord), (record, bob)
    assert record.outcome.forfeited is None and "Back at the table." in lines and connections >= 2
    assert record.transcript.read_bytes() == bob.transcript.read_bytes() == carol.transcript.read_bytes()
