"""Table talk (issue 24): the CHAT frame, its signature, its limits, what a person sees of it,
and that a game's log, transcript and verdict are the same whether or not anyone talked.

The machines' rules are tested on ``Talk`` (what a seat says and takes) and on a whole table in
memory (``memnet``), where alice and bob talk while their bots play."""

from __future__ import annotations

import hashlib
import io
import json
import random
import secrets
import types
from pathlib import Path

import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from memnet import NAMES, Hosted, MemoryNetwork, options, play, vouch_until_start

from p2pwhist import cli, net
from p2pwhist.bodies import Player
from p2pwhist.cli import build_parser
from p2pwhist.cli_play import _Display
from p2pwhist.gamefiles import SecretFile
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import game_entry
from p2pwhist.local import shuffled_deck
from p2pwhist.session import Session
from p2pwhist.table import (
    MAX_CHAT,
    PRESETS,
    Chat,
    FrameError,
    Heard,
    Talk,
    encode,
    read_from_host,
    read_from_joiner,
    shown,
)
from p2pwhist.table._chat import LINES, SLACK, WINDOW
from p2pwhist.text import Style
from p2pwhist.transcript import read_transcript
from p2pwhist.ui.model import TALK_KEPT, KeyResult, TableModel
from p2pwhist.ui.terminal import TerminalPlayer
from p2pwhist.verify import verify

GAME = hashlib.sha256(b"a game").digest()
KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([seat + 1]) * 32) for seat in range(3)]
PLAYERS = [Player(NAMES[seat], key.public_key().public_bytes_raw()) for seat, key in enumerate(KEYS)]


def talk(seat: int, game: bytes = GAME) -> Talk:
    return Talk(game, PLAYERS, seat, KEYS[seat].sign)


def line(seat: int, count: int, text: str, game: bytes = GAME, key: Ed25519PrivateKey | None = None) -> Chat:
    """A CHAT signed by ``key`` (by default the seat's own)."""
    return Chat(seat, count, text, (key or KEYS[seat]).sign(Chat.statement(game, seat, count, text)))


# -- the frame ----------------------------------------------------------------------------------


def test_a_chat_reads_back_in_both_directions_as_itself():
    chat = line(1, 7, "good hand")
    payload = encode(chat)
    assert payload == msgpack.packb({"chat": {"seat": 1, "count": 7, "text": "good hand", "proof": chat.proof}})
    assert read_from_joiner(payload) == chat == read_from_host(payload)


@pytest.mark.parametrize("body", [
    {"seat": 1, "count": 7, "text": "x" * (MAX_CHAT + 1), "proof": bytes(64)},  # too long
    {"seat": 1, "count": 7, "text": "", "proof": bytes(64)},  # empty
    {"seat": 6, "count": 7, "text": "hi", "proof": bytes(64)},  # no such seat
    {"seat": 1, "count": -1, "text": "hi", "proof": bytes(64)},
    {"seat": 1, "count": True, "text": "hi", "proof": bytes(64)},
    {"seat": 1, "count": 7, "text": b"hi", "proof": bytes(64)},
    {"seat": 1, "count": 7, "text": "hi", "proof": bytes(63)},
    {"seat": 1, "count": 7, "text": "hi"},
    {"seat": 1, "count": 7, "text": "hi", "proof": bytes(64), "more": 1},
], ids=["long", "empty", "seat", "negative", "bool", "bytes", "short proof", "no proof", "extra key"])
def test_a_malformed_chat_is_a_frame_error(body):
    with pytest.raises(FrameError):
        read_from_joiner(msgpack.packb({"chat": body}))


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1), st.text(max_size=300),
                     st.binary(max_size=80))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=5)),
                       max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(seat=_VALUES, count=_VALUES, text=_VALUES, proof=_VALUES, drop=st.sampled_from(["", "seat", "text"]))
def test_any_chat_shaped_value_reads_as_a_chat_or_a_frame_error(seat, count, text, proof, drop):
    body = {"seat": seat, "count": count, "text": text, "proof": proof}
    body.pop(drop, None)
    payload = msgpack.packb({"chat": body}, use_bin_type=True)
    for read in (read_from_joiner, read_from_host):
        try:
            chat = read(payload)
        except FrameError:
            continue
        assert isinstance(chat, Chat) and 1 <= len(chat.text) <= MAX_CHAT and len(chat.proof) == 64
        assert encode(chat) == payload


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_after_a_chat_label_read_as_a_chat_or_a_frame_error(tail):
    payload = b"\x81\xa4chat" + tail
    for read in (read_from_joiner, read_from_host):
        try:
            read(payload)
        except FrameError:
            pass


# -- the signature: the host cannot forge, replay or reorder ------------------------------------


def test_a_line_signed_by_its_seat_is_taken_with_its_name():
    assert talk(1).take(line(2, 5, "well played"), 0.0) == Heard(2, "carol", "well played")


def test_a_line_the_host_forged_in_another_seats_name_is_dropped():
    bob = talk(1)
    assert bob.take(line(2, 5, "I resign", key=KEYS[0]), 0.0) is None
    assert bob.dropped == 1


def test_a_line_from_another_game_is_dropped():
    other = hashlib.sha256(b"another game").digest()
    assert talk(1).take(line(2, 5, "good hand", game=other), 0.0) is None


def test_a_line_replayed_or_reordered_is_dropped():
    bob = talk(1)
    first, second = line(2, 5, "one"), line(2, 6, "two")
    assert bob.take(second, 0.0) is not None
    assert bob.take(first, 1.0) is None  # older than the last taken: reordered
    assert bob.take(second, 2.0) is None  # the same again: replayed
    assert bob.dropped == 2


def test_a_line_changed_on_the_way_is_dropped():
    chat = line(2, 5, "well played")
    assert talk(1).take(Chat(2, 5, "badly played", chat.proof), 0.0) is None
    assert talk(1).take(Chat(2, 6, "well played", chat.proof), 0.0) is None


def test_the_host_takes_a_seats_line_only_on_that_seats_connection():
    host = talk(0)
    assert host.take(line(2, 5, "hi"), 0.0, via=1) is None
    assert host.take(line(2, 5, "hi"), 0.0, via=2) == Heard(2, "carol", "hi")


def test_a_line_naming_our_own_seat_is_never_shown_as_said_by_us():
    assert talk(1).take(line(1, 5, "I resign"), 0.0) is None


def test_a_peer_that_restarts_counts_on_from_the_wall_clock():
    before, after = talk(1), talk(1)  # the same seat, before and after a restart
    first = before.say("one", 1_000_000, 0.0)
    again = after.say("two", 1_000_050, 0.0)
    carol = talk(2)
    assert carol.take(first, 0.0) is not None and carol.take(again, 0.0) is not None


# -- size and rate ------------------------------------------------------------------------------


def test_a_seat_says_at_most_its_lines_in_a_window_then_is_told_to_wait():
    bob = talk(1)
    said = [bob.say(f"line {n}", 0, float(n)) for n in range(LINES)]
    assert all(isinstance(chat, Chat) for chat in said)
    assert [chat.count for chat in said] == list(range(LINES))
    refused = bob.say("one more", 0, LINES - 1.0)
    assert isinstance(refused, str) and "wait" in refused
    assert isinstance(bob.say("later", 0, WINDOW), Chat)


def test_a_line_too_long_or_empty_is_not_said():
    bob = talk(1)
    assert isinstance(bob.say("x" * (MAX_CHAT + 1), 0, 0.0), str)
    assert isinstance(bob.say(" \x1b\n ", 0, 0.0), str)
    assert isinstance(bob.say("x" * MAX_CHAT, 0, 0.0), Chat)


def test_the_host_drops_a_seats_lines_beyond_the_rate_and_takes_them_again_later():
    host, bob = talk(0), talk(1)
    lines = [bob.say(f"line {n}", n, 0.0) for n in range(LINES)]
    lines += [line(1, LINES + n, f"flood {n}") for n in range(3)]  # a hostile bob, past his own peer's limit
    taken = [host.take(chat, 0.1 * n, via=1) for n, chat in enumerate(lines)]
    assert [heard is not None for heard in taken] == [True] * LINES + [False] * 3
    assert host.take(line(1, 100, "later"), WINDOW - SLACK, via=1) is not None


def test_the_host_takes_an_honest_seats_lines_that_arrive_closer_than_they_were_said():
    host, bob = talk(0), talk(1)
    sent = [0.0, 1.0, 2.0, 3.0, 4.0, WINDOW + 0.1]
    arrived = [1.9, 2.0, 2.1, 3.0, 4.0, WINDOW + 0.2]  # the first waited behind a long frame
    chats = [bob.say(f"line {n}", 0, at) for n, at in enumerate(sent)]
    assert all(isinstance(chat, Chat) for chat in chats)
    assert all(host.take(chat, at, via=1) is not None for chat, at in zip(chats, arrived, strict=True))


# -- what a person sees ------------------------------------------------------------------------


@pytest.mark.parametrize("said, seen", [
    ("good \x1b[2J\x1b]0;owned\x07hand", "good [2J]0;ownedhand"),  # escapes lose their ESC and BEL
    ("well\r\nplayed", "well played"),
    ("\x9b31mred", "31mred"),  # a C1 CSI
    ("abc\u202edcba", "abcdcba"),  # right-to-left override
    ("zero\u200bwidth", "zerowidth"),
    ("line\u2028break", "line break"),
    ("thinking…", "thinking…"),
])
def test_what_is_shown_has_no_control_or_format_characters(said, seen):
    assert shown(said) == seen


@given(st.text(max_size=MAX_CHAT))
def test_nothing_shown_is_a_control_character(text):
    assert shown(text).isprintable()


def test_a_line_is_signed_and_shown_as_cleaned_by_its_sender():
    chat = talk(1).say("hi\x1b[31m there", 0, 0.0)
    assert isinstance(chat, Chat) and chat.text == "hi[31m there"


# -- a whole table in memory -------------------------------------------------------------------


async def _talking_table(tmp: Path, say: dict[int, list[str]], hear: bool = True, keys=None) -> tuple[
        list[net.GameRecord], list[list[Heard]], list[list[str]]]:
    """A match of three in memory, each bot playing at once; each seat in ``say`` says its lines
    as its game begins. Returns the records, the lines each seat heard and its report lines."""
    game = BoxWhist(3)
    network = MemoryNetwork()
    heard: list[list[Heard]] = [[] for _ in range(3)]
    reports: list[list[str]] = [[] for _ in range(3)]
    channels = [trio.open_memory_channel[str](8) for _ in range(3)]

    def begun(seat: int):
        def on_event(event) -> None:
            for text in say.pop(seat, []):
                channels[seat][0].send_nowait(text)
        return on_event

    peers = [options(NAMES[seat], key=(keys or {}).get(seat), tmp=tmp, seed=seat, lines=reports[seat],
                     hear=heard[seat].append if hear else None, say=channels[seat][1] if hear else None,
                     on_event=begun(seat)) for seat in range(3)]
    records: list[net.GameRecord] = [None] * 3  # type: ignore[list-item]

    async def seat_task(seat: int, play) -> None:
        records[seat] = await play()

    async with trio.open_nursery() as nursery:
        listener = network.listen()
        nursery.start_soon(seat_task, 0, lambda: net.host(peers[0], net.HostOptions(game, MatchLength(hands=1)),
                                                          [listener]))
        for seat in (1, 2):
            nursery.start_soon(seat_task, seat, lambda s=seat: net.join(
                peers[s], "alice.lan", 7878, connect=network.connector(f"10.0.0.{s}")))
            while not any(f"{seat + 1}/3 seated" in line for line in reports[0]):
                await trio.sleep(0.01)
    return records, heard, reports


async def test_alice_and_bob_talk_and_every_seat_sees_each_line_with_its_name(tmp_path, autojump_clock):
    records, heard, _ = await _talking_table(tmp_path, {0: ["good luck \x1b[31m"], 1: ["well played"]})
    assert all(isinstance(record, net.GameRecord) for record in records)
    assert Heard(0, "alice", "good luck [31m", ours=True) in heard[0]
    assert Heard(1, "bob", "well played", ours=True) in heard[1]
    for seat in (1, 2):
        assert Heard(0, "alice", "good luck [31m") in heard[seat]
    for seat in (0, 2):
        assert Heard(1, "bob", "well played") in heard[seat]
    assert all(len(lines) == 2 for lines in heard)  # nobody hears a line twice, nor their own echoed
    transcripts = {record.transcript.read_bytes() for record in records}
    assert len(transcripts) == 1
    assert b"well played" not in transcripts.pop()


async def test_a_seat_with_no_chat_sees_nothing_and_the_others_still_talk(tmp_path, autojump_clock):
    """``--no-chat`` is a peer with neither ``hear`` nor ``say``: the host still passes the
    others' lines on."""
    game = BoxWhist(2)
    network = MemoryNetwork()
    said_in, said_out = trio.open_memory_channel[str](1)
    heard: list[Heard] = []

    def bob_begun(event) -> None:
        if not heard and not said_in.statistics().current_buffer_used:
            said_in.send_nowait("hi alice")

    alice = options("alice", tmp=tmp_path)  # no hear, no say: --no-chat
    bob = options("bob", tmp=tmp_path, seed=1, hear=heard.append, say=said_out, on_event=bob_begun)
    records = {}
    async with trio.open_nursery() as nursery:
        async def hosting():
            records["alice"] = await net.host(alice, net.HostOptions(game, MatchLength(hands=1)), [listener])

        async def joining():
            records["bob"] = await net.join(bob, "alice.lan", 7878, connect=network.connector())

        listener = network.listen()
        nursery.start_soon(hosting)
        nursery.start_soon(joining)
    assert isinstance(records["alice"], net.GameRecord) and isinstance(records["bob"], net.GameRecord)
    assert heard and heard[0] == Heard(1, "bob", "hi alice", ours=True)


# -- the log and the verdict are the same with and without talk -----------------------------------


@pytest.fixture
def same_randomness(monkeypatch):
    """Every game played alike: each peer's hand secrets drawn from its own seeded counter,
    the table's id and nonces fixed; the keys are fixed by the test."""
    draws: dict[str, int] = {}

    def secret(self: SecretFile) -> bytes:
        draws[self.path.name] = draws.get(self.path.name, 0) + 1
        return hashlib.sha256(f"{self.path.name} {draws[self.path.name]}".encode()).digest()

    monkeypatch.setattr(SecretFile, "__call__", secret)
    monkeypatch.setattr(net, "secrets", types.SimpleNamespace(token_bytes=lambda size: b"\x07" * size))
    return draws


def _verify_outputs(capsys, path: Path) -> tuple[str, str]:
    outputs = []
    for extra in ([], ["--json"]):
        cli.main(["verify", *extra, str(path)])
        outputs.append(capsys.readouterr().out.replace(str(path), "FILE").replace(str(path.parent), "DIR"))
    return outputs[0], outputs[1]


async def test_a_transcript_verifies_alike_with_and_without_talk(tmp_path, autojump_clock, same_randomness, capsys):
    keys = dict(enumerate(KEYS))
    quiet, talking = tmp_path / "quiet", tmp_path / "talking"
    quiet.mkdir()
    talking.mkdir()
    plain, _, _ = await _talking_table(quiet, {}, hear=False, keys=keys)
    same_randomness.clear()
    chatty, heard, _ = await _talking_table(talking, {0: ["good hand", "thinking…"], 1: ["well played"],
                                                      2: ["gg"]}, keys=keys)
    assert all(len(lines) == 4 for lines in heard)  # the talk happened
    assert plain[0].transcript.read_bytes() == chatty[0].transcript.read_bytes()
    text, as_json = _verify_outputs(capsys, plain[0].transcript)
    assert (text, as_json) == _verify_outputs(capsys, chatty[0].transcript)
    assert json.loads(as_json)["valid"] is True


# -- how a person talks: the full-screen table's model, and the line interface ----------------


def _model(talk_open: bool = True) -> TableModel:
    model = TableModel(Style(color=False))
    model.talk_open = talk_open
    model.asking = True  # our turn: a key would otherwise type a move
    return model


def _keys(model: TableModel, keys: list[str]) -> list[KeyResult]:
    return [model.key(key, 0.0) for key in keys]


def test_slash_opens_the_talk_input_and_enter_says_the_line_not_a_move():
    model = _model()
    results = _keys(model, ["/", "Q", "S", " ", "!", "backspace", "enter"])
    assert [r.say for r in results] == [None] * 6 + ["QS"]
    assert all(r.move is None for r in results)
    assert model.talking is None and model.typed == ""


def test_a_presets_number_alone_says_the_preset():
    for number, preset in enumerate(PRESETS, 1):
        assert _keys(_model(), ["/", str(number), "enter"])[-1].say == preset


def test_esc_closes_the_talk_input_and_says_nothing():
    model = _model()
    assert [r.say for r in _keys(model, ["/", "h", "i", "esc", "enter"])] == [None] * 5
    assert model.talking is None


def test_with_no_chat_a_slash_opens_nothing():
    model = _model(talk_open=False)
    model.asking = False
    assert all(r.say is None for r in _keys(model, ["/", "h", "enter"]))
    assert model.talking is None and model.message.startswith("Not your turn")


def test_a_line_heard_is_on_the_message_line_and_in_the_history_which_keeps_the_last_few():
    model = _model()
    for n in range(TALK_KEPT + 5):
        model.heard(Heard(1, "bob", f"line {n}"))
    assert model.message == f"bob said: line {TALK_KEPT + 4}"
    talk = [entry for entry in model.history() if entry.startswith("bob said:")]
    assert len(talk) == TALK_KEPT and talk[-1] == f"bob said: line {TALK_KEPT + 4}"
    model.heard(Heard(0, "alice", "hi", ours=True))
    assert model.history()[-1] == "You said: hi"


def test_the_line_interface_says_a_slash_say_line_and_asks_again():
    said: list[str] = []
    out = io.StringIO()
    game = BoxWhist(2)
    hand = game.new_hand(0, (), cards=shuffled_deck(game, random.Random(1)))
    view = hand.view(hand.turn)
    move = view.legal_moves[0]
    keyboard = io.StringIO(f"/say good luck\n/say 2\n{view.describe_move(move)}\n")
    player = TerminalPlayer(hand.turn, game_entry(game).text, keyboard, out, say=said.append)
    assert player.choose(view) == move
    assert said == ["good luck", "2"]
    player.infile = io.StringIO("/say one more?\nn\n")
    assert player.another_hand() is False
    assert said[-1] == "one more?"


async def test_bad_lines_from_a_hostile_seat_are_dropped_quietly_and_the_game_goes_on(tmp_path, autojump_clock):
    """bob, hand-written, says a line in alice's name, one signed with another key and one from
    another game; then six in a row; then an old one again and a new one: the host shows only
    his good lines within the rate (his bad ones counted against it), keeps his connection,
    and the match ends and verifies."""
    heard: list[Heard] = []
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery, hear=heard.append)
        bob, key = await hosted.seat()
        session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
        game, stranger = session.game_id, Ed25519PrivateKey.generate()

        def signed(count: int, text: str, seat: int = 1, by: Ed25519PrivateKey = key, on: bytes = game) -> Chat:
            return Chat(seat, count, text, by.sign(Chat.statement(on, seat, count, text)))

        bad = [signed(1, "in alice's name", seat=0), signed(2, "another key", by=stranger),
               signed(3, "another game", on=hashlib.sha256(b"elsewhere").digest())]
        good = [signed(10 + n, f"line {n}") for n in range(LINES + 2)]
        for said in (bad, good[:LINES + 1], [good[2], good[LINES + 1]]):
            for chat in said:
                await bob.send(chat)
            await trio.sleep(WINDOW)
        await play(bob, session, bot="random")
        record = await hosted.end()
    assert isinstance(record, net.GameRecord), record
    assert [h.text for h in heard] == [f"line {n}" for n in range(LINES)] + [f"line {LINES + 1}"]
    assert all(h.name == "bob" for h in heard)
    assert not hosted.said("Dropped bob's connection")
    assert verify(read_transcript(record.transcript)).valid


@pytest.mark.parametrize("command", [["play"], ["host"], ["join", "alice.lan"]])
def test_no_chat_is_an_option_of_every_playing_command(command):
    parser = build_parser()
    assert parser.parse_args([*command, "--no-chat"]).no_chat is True
    assert parser.parse_args(command).no_chat is False


def test_a_person_talks_unless_no_chat_and_a_bot_never_does():
    assert set(_Display(None, chat=True).talk_options()) == {"hear", "say"}
    assert _Display(None, chat=False).talk_options() == {}
    assert _Display("random", chat=True).talk_options() == {}


def test_the_chat_vector_is_signed_as_wire_md_says():
    """protocol/vectors/frames.json's CHAT: its proof verifies over the statement of §2.7, with
    the key and game id its ``about`` names."""
    vectors = json.loads((Path(__file__).parent.parent / "protocol" / "vectors" / "frames.json").read_text())
    (vector,) = [v for v in vectors["frames"] if v["name"] == "chat"]
    chat = read_from_host(bytes.fromhex(vector["payload"]))
    game = hashlib.sha256(b"p2pwhist chat vector").digest()
    assert game.hex() in vectors["about"]
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    statement = b"p2pwhist chat v1\x00" + game + bytes([chat.seat]) + chat.count.to_bytes(8, "big") + chat.text.encode()
    key.public_key().verify(chat.proof, statement)
    assert Talk(game, [PLAYERS[0], Player("bob", key.public_key().public_bytes_raw())], 0, None).take(chat, 0.0)
