"""Spectators (``p2pwhist watch``): the host's gallery and the spectator's own machine, whole
tables in memory under a mock clock (protocol/wire.md §2.6).

A spectator sits in no seat and proves nothing; the host sends it the signed log so far, then
each message as it is appended. What is asserted: a spectator's transcript is the seats' log
(or a prefix of it) and verifies; the host admits at most ``--spectators`` and refuses the rest
in one line each; a spectator that reads nothing is dropped while the seats finish their match;
a message that does not verify ends the spectator at once, in one line naming it; a spectator
never makes a secrets file, so ``resume`` never takes its game for one of ours."""

from __future__ import annotations

import secrets

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import FakeHost, Hosted, MemoryNetwork, Seat, options, play, table, vouch_until_start
from test_every_game_properties import peer_of, random_hand

from p2pwhist import cli_play, net
from p2pwhist.gamefiles import unfinished
from p2pwhist.games.base import ConfigError
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.home import command_path, secrets_path
from p2pwhist.identity import fingerprint
from p2pwhist.session import Session
from p2pwhist.session_events import Moved, TableChanged
from p2pwhist.signed import public_bytes
from p2pwhist.table import (
    PROTOCOL_VERSION,
    Chat,
    Done,
    Heard,
    Limits,
    Logged,
    Presence,
    Refuse,
    Refused,
    TableError,
    Watch,
    read_for_spectator,
)
from p2pwhist.table._actions import Begun, ConnId, Opened, Received, Report, Spectate
from p2pwhist.table._chat import Talk
from p2pwhist.table._frames import Notice, encode
from p2pwhist.table._gallery import Gallery
from p2pwhist.table._spectator import SpectatorMachine
from p2pwhist.table._words import ShownNotices
from p2pwhist.text import Style
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify


def _verdict(path) -> tuple[bool, bool]:
    verdict = verify(read_transcript(path))
    return verdict.valid, verdict.complete


async def _spectate(hosted: Hosted, tmp_path, name: str, source: str, expect: str | None = None,
                    **extra) -> net.GameRecord | Exception:
    try:
        return await net.watch(options(name, tmp=tmp_path, **extra), "alice.lan", 7878, expect,
                               connect=hosted.network.connector(source))
    except TableError as error:
        return error


async def _watcher(seat: Seat) -> list:
    """What a hand-written spectator is sent, until the host closes."""
    await seat.send(Watch(PROTOCOL_VERSION))
    frames = []
    while (payload := await seat.receive_payload()) is not None:
        frames.append(read_for_spectator(payload))
    return frames


async def test_a_spectator_before_the_start_and_one_mid_hand_record_the_seats_log(tmp_path, autojump_clock):
    records: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)

        async def spectator(name: str, source: str) -> None:
            records[name] = await _spectate(hosted, tmp_path, name, source)

        nursery.start_soon(spectator, "early", "10.0.1.1")
        await trio.sleep(1)
        seat, key = await hosted.seat("bob")
        start = await vouch_until_start(seat)
        session = Session(start, 1, key, lambda: secrets.token_bytes(32))
        await play(seat, session)  # up to bob's first move: the cards are dealt, the hand under way
        nursery.start_soon(spectator, "late", "10.0.1.2")
        while not hosted.said("10.0.1.2"):
            await trio.sleep(0.01)
        await play(seat, session, bot="random")
        host = await hosted.end()
    assert isinstance(host, net.GameRecord), host
    log = host.transcript.read_bytes()
    for name in ("early", "late"):
        record = records[name]
        assert isinstance(record, net.GameRecord), (name, record)
        assert record.transcript.read_bytes() == log
        assert record.outcome.points == host.outcome.points
        assert _verdict(record.transcript) == (True, True)
    assert not list(tmp_path.glob("*.secrets"))  # a spectator's game is never resumed: it holds no secret


async def test_the_host_admits_its_most_and_refuses_the_rest_in_one_line_each(tmp_path, autojump_clock):
    """20 spectators at once, 4 admitted: the rest are refused, and none holds a slot at the door."""
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery, spectators=4)
        seen: list[list] = []

        async def one(n: int) -> None:
            seen.append(await _watcher(await hosted.connect(f"10.0.{n}.1")))

        for n in range(20):
            nursery.start_soon(one, n)
        bob = await hosted.join("bob")
        await bob()
        await hosted.end()
    refused = [frames for frames in seen if frames and isinstance(frames[0], Refuse)]
    watched = [frames for frames in seen if frames and isinstance(frames[0], Logged)]
    assert len(refused) == 16 and len(watched) == 4
    assert all(len(frames) == 1 and "4 spectators already" in frames[0].reason for frames in refused)
    assert all(isinstance(frames[-1], Done) and frames[-1].have == len(frames) - 1 for frames in watched)
    assert len([line for line in hosted.lines if "spectators already" in line]) == 16


async def test_a_table_with_no_spectators_refuses_them(tmp_path, autojump_clock):
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery, spectators=0)
        record = await _spectate(hosted, tmp_path, "spectator", "10.0.1.1")
        nursery.cancel_scope.cancel()
    assert isinstance(record, Refused) and "takes no spectators" in str(record)


async def test_a_spectator_expecting_another_hosts_key_watches_nothing_and_keeps_nothing(tmp_path, autojump_clock):
    """``watch --expect`` (or the fingerprint a table on this network announced): a START that
    another key signed is refused in one line before anything is shown or written; the right
    fingerprint, typed in capitals without its dashes, watches the match to its end."""
    other = fingerprint(public_bytes(Ed25519PrivateKey.generate().public_key()))  # not the host's key
    records: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)
        real = fingerprint(public_bytes(hosted.options.key.public_key()))

        async def spectator(name: str, expect: str) -> None:
            records[name] = await _spectate(hosted, tmp_path, name, f"10.0.1.{len(records) + 1}", expect)

        nursery.start_soon(spectator, "fooled", other)
        nursery.start_soon(spectator, "careful", real.replace("-", "").upper())
        await trio.sleep(1)
        bob = await hosted.join("bob")
        await bob()
        await hosted.end()
    fooled, careful = records["fooled"], records["careful"]
    assert isinstance(fooled, TableError) and not isinstance(fooled, Refused)
    assert str(fooled) == f"not watching: the host at alice.lan:7878 has key {real}, not the expected {other}"
    assert not (tmp_path / "fooled.p2pw").exists()
    assert isinstance(careful, net.GameRecord) and _verdict(careful.transcript) == (True, True)


class _Stalled(trio.abc.Stream):
    """A spectator's connection whose reader never reads: every write past the first blocks."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.remote = ("10.0.9.9", "10.0.9.9:40000")

    async def send_all(self, data: bytes) -> None:
        await trio.sleep_forever()

    async def wait_send_all_might_not_block(self) -> None:
        await trio.sleep_forever()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return await self.stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.stream.aclose()


async def test_a_stalled_spectator_is_dropped_and_the_seats_play_on(tmp_path, autojump_clock):
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)
        ours, theirs = trio.testing.memory_stream_pair()
        await hosted.network.listeners[("alice.lan", 7878)]._in.send(_Stalled(theirs))
        await Seat(ours).send(Watch(PROTOCOL_VERSION))
        seat, key = await hosted.seat("bob")
        session = Session(await vouch_until_start(seat), 1, key, lambda: secrets.token_bytes(32))
        await play(seat, session)  # the table waits for bob's first move, and for nobody else
        await trio.sleep(Limits.spectator_send + 1)
        assert hosted.said("The spectator at 10.0.9.9:40000 left: it stopped reading"), hosted.lines
        await play(seat, session, bot="random")
        host = await hosted.end()
    assert isinstance(host, net.GameRecord), host
    assert _verdict(host.transcript) == (True, True)


async def test_a_message_that_fails_to_verify_ends_the_spectator_at_once(tmp_path, autojump_clock):
    """A host relays a message with one byte of bob's signature changed: the spectator says so
    in one line and keeps the log before it, which verifies as a valid prefix."""
    played = await table(tmp_path / "match")
    log = list(read_transcript(played.records[0].transcript))
    bad = next(m for m in log if m.seat == 1)
    network = MemoryNetwork()
    fake = FakeHost(network)
    result: list = []

    async def spectator() -> None:
        try:
            result.append(await net.watch(options("spectator", tmp=tmp_path), "alice.lan", 7878,
                                          connect=network.connector()))
        except TableError as error:
            result.append(error)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(spectator)
        side = await fake.accept()
        assert await side.receive() == Watch(PROTOCOL_VERSION)
        for message in log[:bad.seq]:
            await side.send_payload(message.raw)
        await side.send_payload(bad.raw[:-1] + bytes([bad.raw[-1] ^ 1]))
    (error,) = result
    assert isinstance(error, TableError)
    assert str(error).startswith(f"message {bad.seq} from bob: ")
    assert "signature" in str(error) and str(error).endswith("the table's log cannot be trusted")
    kept = list(read_transcript(tmp_path / "spectator.p2pw"))
    assert [m.raw for m in kept] == [m.raw for m in log[:bad.seq]]
    assert _verdict(tmp_path / "spectator.p2pw") == (True, False)


def test_the_delay_holds_each_message_back_from_spectators():
    gallery = Gallery(Limits(delay=30.0))
    raws = [b"start"]
    assert gallery.admit(1, "here", Watch(PROTOCOL_VERSION), raws, 100.0) != []
    assert gallery.follow(raws, 100.0) == [] and gallery.deadline == 130.0
    raws.append(b"accept")
    assert gallery.follow(raws, 110.0) == []
    sent = gallery.follow(raws, 130.0)
    assert [action.payload for action in sent] == [b"start"] and gallery.deadline == 140.0
    assert [action.payload for action in gallery.follow(raws, 140.0)] == [b"accept"]
    assert gallery.deadline is None


@pytest.mark.parametrize("version", [PROTOCOL_VERSION - 1, PROTOCOL_VERSION + 1])
def test_a_spectator_of_another_version_is_told_ours(version):
    assert f"version {PROTOCOL_VERSION}" in Gallery(Limits()).admit(1, "here", Watch(version), [], 0.0)


async def test_a_spectator_hears_the_table_talk_each_line_checked_against_its_seat(tmp_path, autojump_clock):
    """Table talk reaches spectators too (issue 24: "every seat and spectator sees it"), checked
    as a seat checks it: a line the seat did not sign never reaches them."""
    heard: list[Heard] = []
    records: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)

        async def spectator() -> None:
            records["early"] = await _spectate(hosted, tmp_path, "early", "10.0.1.1", hear=heard.append)

        nursery.start_soon(spectator)
        await trio.sleep(1)
        seat, key = await hosted.seat("bob")
        start = await vouch_until_start(seat)
        session = Session(start, 1, key, lambda: secrets.token_bytes(32))
        await play(seat, session)  # the game under way
        said = Talk(session.game_id, session.table.players, 1, key.sign).say("well played", 1_000, 0.0)
        assert isinstance(said, Chat)
        await seat.send(said)
        await seat.send(Chat(1, 2_000, "I resign", bytes(64)))  # not bob's signature: the host drops it
        await play(seat, session, bot="random")
        await hosted.end()
    assert isinstance(records["early"], net.GameRecord)
    assert heard == [Heard(1, "bob", "well played")]


async def test_a_spectator_keeps_no_secrets_file_so_resume_never_takes_its_game_up(tmp_path, autojump_clock, capsys):
    """Killed mid-game (kill -9: nothing tidies up), a spectator leaves its transcript alone: no
    secrets file beside it, which is what marks a game to resume, so ``resume`` refuses it and
    never lists it. Shown as lines, it prints each hand's table from no seat as it is dealt."""
    records: dict[str, object] = {}
    path = tmp_path / "early.p2pw"
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)

        async def spectator() -> None:
            records["early"] = await _spectate(hosted, tmp_path, "early", "10.0.1.1",
                                               on_event=cli_play._Spectating().on_event)

        nursery.start_soon(spectator)
        await trio.sleep(1)
        seat, key = await hosted.seat("bob")
        session = Session(await vouch_until_start(seat), 1, key, lambda: secrets.token_bytes(32))
        await play(seat, session)  # the game under way: the spectator's files are as a kill would leave them
        while len(list(read_transcript(path))) < len(session.log):
            await trio.sleep(0.01)
        assert not secrets_path(path).exists() and not command_path(path).exists()
        for anyone in (key, Ed25519PrivateKey.generate()):
            with pytest.raises(ConfigError, match="not an unfinished game"):
                unfinished(path, anyone)
        hand = session.hand
        held = {hand.cards[p] for p in hand.hands[1]} - set(hand.view(1).known_hand_cards(1))
        await play(seat, session, bot="random")
        await hosted.end()
    assert isinstance(records["early"], net.GameRecord)
    shown = capsys.readouterr().out
    assert "-- Hand 1, Trick 1 of " in shown and "Tricks won: alice 0, bob 0" in shown
    table = shown[shown.index("-- Hand 1"):shown.index("Hands won:")]
    assert "alice:" in table and "bob:" in table and "Your" not in table
    assert not [card for card in held if f" {card}" in table or f" {card.ascii}" in table], table


def test_a_line_spectator_says_a_trick_once_its_stack_draws_are_revealed(capsys):
    """Shown as lines (``watch --plain``), each move is said as it comes, but a move that ends a
    trick waits for the keys round after it, which reveals the stack cards drawn (rule 9): its
    line names them, never "a card not yet revealed"."""
    game = BoxWhist(2)
    full, cards, rng = random_hand(game, 4)
    public = peer_of(game, full, cards, None)
    match = Match(game, MatchLength(hands=1), 0)
    match.hands.append(public)
    lines = cli_play._Spectating()
    lines.words, lines.names, lines.style = GAMES["boxwhist"].text, ["alice", "bob"], Style(False)
    shown = ""
    while not full.is_over:
        shown += capsys.readouterr().out
        known, mover = full.visible_to(None), full.current_seat
        move = rng.choice(full.legal_moves())
        public.learn(move.position, cards[move.position])  # claimed, or revealed if played blind
        full.apply(move)
        public.apply(move)
        lines.on_event(Moved(mover, move, public))
        lines.on_event(TableChanged(match, public))
        drawn = sorted(public.visible_to(None) - known - {move.position})
        if drawn:
            waiting = capsys.readouterr().out
            assert "wins" not in waiting  # the trick waits for its draws
            shown += waiting
        for p in drawn:
            public.learn(p, cards[p])
        lines.on_event(TableChanged(match, public))
    shown += capsys.readouterr().out
    assert "not yet revealed" not in shown and shown.count("draws") == 11


@pytest.mark.parametrize("delay", [0, 30])
async def test_a_spectator_hears_why_the_table_waits_unless_it_watches_with_a_delay(delay, tmp_path, autojump_clock):
    """bob's move is due and he thinks: the table's news of it (NOTICE, every quarter of the
    move limit) reaches the spectator as it reaches the seats, and is said in the spectator's
    words; with a delay it would speak of a wait the spectator does not see yet, so none comes."""
    news: list = []
    said: list[str] = []
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery, delay=delay)
        watching = trio.Event()

        async def spectator() -> None:
            await net.watch(options("spectator", tmp=tmp_path, news=news.append, lines=said), "alice.lan", 7878,
                            connect=hosted.network.connector("10.0.1.1"))
            watching.set()

        nursery.start_soon(spectator)
        seat, key = await hosted.seat("bob")
        session = Session(await vouch_until_start(seat), 1, key, lambda: secrets.token_bytes(32))
        await play(seat, session)  # bob's first move is due
        await trio.sleep(Limits.timeout / 2)  # he thinks for half the move limit
        await play(seat, session, bot="random")
        await hosted.end()
        await watching.wait()
    seated = [line for line in hosted.lines if line.startswith("Waiting for bob")]
    assert seated  # the host's own person heard it, so the seats did
    if delay:
        assert news == []
    else:
        assert news and all(notice.seat == 1 and notice.presence is Presence.SLOW for notice in news)
        assert len(news) == len(seated)
    assert not any(line.startswith("Waiting for") for line in said)  # the screen shows it, not a line


async def test_a_spectator_says_a_notice_of_a_seat_at_its_table_and_drops_any_other(tmp_path):
    """Before START there is no seat to speak of, and a NOTICE naming a seat the table lacks
    is the host's mistake: neither is said, neither ends the watching."""
    played = await table(tmp_path / "match")
    start = next(iter(read_transcript(played.records[0].transcript)))
    machine = SpectatorMachine("alice.lan:7878", Limits())
    conn = ConnId(1)
    machine.begin(0.0)
    machine.handle(Opened(conn), 0.0)
    gone = Notice(1, Presence.GONE, 0, 60)
    assert machine.handle(Received(conn, encode(gone)), 1.0) == []
    assert isinstance(machine.handle(Received(conn, start.raw), 2.0)[0], Spectate)
    machine.handle(Begun(Session.observe(start)), 2.0)
    assert machine.handle(Received(conn, encode(Notice(5, Presence.GONE, 0, 60))), 3.0) == []
    (said,) = machine.handle(Received(conn, encode(gone)), 4.0)
    assert said == Report("bob lost connection; waiting for them to return (1:00 left).", gone)
    # the same news again at once is a flood (each was a line), not news; in time it is said
    assert [machine.handle(Received(conn, encode(gone)), 4.5) for _ in range(100)] == [[]] * 100
    assert len(machine.handle(Received(conn, encode(gone)), 4.0 + ShownNotices.REPEAT)) == 1
    assert not machine.finished
