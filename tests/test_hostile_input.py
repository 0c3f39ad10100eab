"""Hostile bytes against every decoder of peer input (the log's bodies and envelopes, every
frame outside the log in both directions, transcripts), and against a real host and joiner
over memory streams (``memnet``, under the mock clock): deep nesting, wrong types,
non-canonical encodings, huge sizes and files. Nothing crashes; every decoder raises only its
own error type (a ``WireError``; for the frames outside the log, exactly ``FrameError``, the
type the table's machines catch); every refusal is one line naming who sent it, and the table
goes on with honest players."""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from memnet import FakeHost, Hosted, MemoryNetwork, options, play, seat_at, vouch_until_start

from p2pwhist import net, signatures
from p2pwhist.bodies import BodyError, CardPlay, Kind, Player, Table, decode
from p2pwhist.deck import PositionKey, PositionKeys
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import random_match
from p2pwhist.session import HOST, Need, Session
from p2pwhist.signed import (
    GENESIS_PREV,
    SignatureError,
    parse,
    public_bytes,
    seal,
    sign,
)
from p2pwhist.table import (
    Done,
    FrameError,
    Hello,
    Lobby,
    Logged,
    Notice,
    Presence,
    Ready,
    Refuse,
    Rejoin,
    RemoteTableError,
    Resumed,
    Vouch,
    Watch,
    Welcome,
    encode,
    read_for_spectator,
    read_from_host,
    read_from_joiner,
)
from p2pwhist.transcript import (
    MAGIC,
    TranscriptError,
    TranscriptWriter,
    read_transcript,
    read_unfinished,
)
from p2pwhist.verify import verify
from p2pwhist.wire import MAX_DEPTH, WireError, frame, pack, unpack

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "wire.json"


def nested(depth: int, leaf: bytes = b"\xc0") -> bytes:
    """msgpack bytes of a list nested ``depth`` deep (msgpack's own packer stops at 511)."""
    return b"\x91" * depth + leaf


def depth_of(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


# -- the limits --------------------------------------------------------------------------------


def test_values_nested_past_the_limit_are_refused_and_honest_ones_are_not():
    assert depth_of(unpack(nested(MAX_DEPTH))) == MAX_DEPTH
    for depth in (MAX_DEPTH + 1, 995):
        with pytest.raises(WireError, match="nested more than"):
            unpack(nested(depth))
    with pytest.raises(WireError):
        unpack(nested(5000))  # past msgpack's own limit
    with pytest.raises(WireError):
        unpack(b"\x81\xa1k" * 990 + b"\xc0")  # maps, too


@pytest.mark.parametrize("players", [2, 4])
def test_the_deepest_honest_message_is_well_inside_the_limit(players):
    """protocol/wire.md §1 promises at most 5 levels; the limit leaves room above that."""
    sessions = random_match(BoxWhist(players), hands=1, seed=players)
    deepest = max(depth_of(unpack(m.signed)) for m in sessions[0].log)
    blind = seal(KEY, 9, GENESIS_PREV, 1, CardPlay(PositionKeys((PositionKey(3, 5),))))  # the deepest kind
    assert deepest <= depth_of(unpack(blind.signed)) == 5 < MAX_DEPTH


# -- every decoder, fed garbage, raises only the remote-fault type -----------------------------

leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
                   st.floats(allow_nan=False), st.text(max_size=40), st.binary(max_size=40))
values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                      st.dictionaries(st.text(max_size=10), inner, max_size=5)),
                      max_leaves=30)
KEY = Ed25519PrivateKey.generate()


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(Kind), value=values)
def test_every_body_decoder_refuses_garbage_with_a_body_error(kind, value):
    try:
        decode(kind, value)
    except BodyError:
        pass


# Every frame outside the log, honest, one of each (protocol/wire.md §2): the fuzz below puts
# garbage in place of each of their fields in turn.
_ALICE = Player("alice", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
_BOB = Player("bob", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
HONEST = [
    Hello(3, "bob", _BOB.key), Ready(), Rejoin(bytes(32), 1, 5, bytes(32), bytes(64)), Vouch(_ALICE.key, True),
    Done(7), Welcome(3, "alice", _ALICE.key, bytes(32), None), Welcome(3, "alice", _ALICE.key, bytes(32), bytes(32)),
    Refuse("the table is full"), Lobby(3, (_ALICE, _BOB), 1, ((1, 0), (0, 1))), Lobby(2, (_ALICE,), None, ()),
    Resumed(9), Notice(1, Presence.SLOW, 3, 15), Watch(3),
]
READERS = {read_from_joiner: (Hello, Ready, Rejoin, Vouch, Done, Watch, Logged),
           read_from_host: (Welcome, Refuse, Lobby, Resumed, Notice, Done, Logged),
           read_for_spectator: (Refuse, Done, Notice, Logged)}
# Values at and past the sizes a receiver takes (wire.md §1): a string over 1,024 bytes, an
# array over 256 items, a map over 32 pairs, the widest integers, a byte string of 60 KB.
HUGE = ["x" * 1025, [0] * 257, {str(i): 0 for i in range(33)}, 2**64 - 1, -(2**63), b"\0" * 60000, "n" * 1024,
        [[0] * 256] * 2]


def _decodes_or_refuses(payload: bytes) -> None:
    """Each reader gives a frame of its own direction or raises ``FrameError`` (a
    ``WireError``: the table's machines catch exactly this type, so any other would crash a
    table), and nothing else; what decodes encodes back to the same frame."""
    for reader, types in READERS.items():
        try:
            frame = reader(payload)
        except FrameError:
            continue
        assert isinstance(frame, types), (reader, frame)
        if not isinstance(frame, Logged):
            assert reader(encode(frame)) == frame


def test_honest_frames_decode_as_themselves_only_in_their_direction():
    for honest in HONEST:
        directions = [reader for reader, types in READERS.items() if isinstance(honest, types)]
        for reader in READERS:
            if reader in directions:
                assert reader(encode(honest)) == honest
            else:
                with pytest.raises(FrameError, match="a frame outside the log is a map of one of"):
                    reader(encode(honest))


@settings(max_examples=400, deadline=None)
@given(honest=st.sampled_from(HONEST), value=st.one_of(values, st.sampled_from(HUGE)), field=st.integers(0, 5))
def test_every_frame_outside_the_log_decodes_or_is_refused_with_a_frame_error(honest, value, field):
    """HELLO, READY, REJOIN, VOUCH, DONE, WELCOME, REFUSE, LOBBY, RESUMED, NOTICE and WATCH
    (wire.md §2), in every direction (a spectator's too): garbage, the right label around
    garbage, and the right fields with one of them garbage, or one of a LOBBY's players or pairs."""
    label, fields = honest.LABEL, honest.fields()
    candidates = [value, {label: value}]
    if isinstance(fields, dict):
        names = sorted(fields)
        candidates.append({label: {**fields, names[field % len(names)]: value}})
        for inner in ("players", "undecided"):
            if fields.get(inner):
                items = list(fields[inner])
                items[field % len(items)] = value
                candidates.append({label: {**fields, inner: items}})
    for candidate in candidates:
        try:
            payload = pack(candidate)
        except (ValueError, TypeError, OverflowError):
            continue  # msgpack cannot even write it
        if len(payload) <= 65536:
            _decodes_or_refuses(payload)


@settings(max_examples=200, deadline=None)
@given(honest=st.sampled_from(HONEST), deep=st.integers(0, 1200), field=st.integers(0, 5))
def test_a_frame_nested_past_the_limit_is_refused_by_both_readers(honest, deep, field):
    """A label around a value nested past the limit, or an honest frame with one field so
    nested, up to about 1,200 levels (msgpack's own limit is about 1,000)."""
    label, fields = honest.LABEL, honest.fields()
    payloads = [b"\x81" + pack(label) + nested(deep + MAX_DEPTH)]
    if isinstance(fields, dict):
        names = sorted(fields)
        name = names[field % len(names)]
        rest = b"".join(pack(k) + pack(v) for k, v in fields.items() if k != name)
        payloads.append(b"\x81" + pack(label) + bytes([0x80 | len(fields)]) + rest + pack(name)
                        + nested(deep + MAX_DEPTH - 1))
    for payload in payloads:
        for reader in READERS:
            with pytest.raises(FrameError, match="nested|malformed"):
                reader(payload)


@settings(max_examples=300, deadline=None)
@given(seq=values, prev=st.one_of(st.just(GENESIS_PREV), values), seat=st.one_of(st.integers(0, 3), values),
       kind=st.one_of(st.sampled_from([k.value for k in Kind]), values), body=values)
def test_any_signed_envelope_parses_or_raises_a_signature_error(seq, prev, seat, kind, body):
    try:
        raw = sign(KEY, seq, prev, seat, kind, body)
    except (ValueError, TypeError, OverflowError):
        return  # msgpack cannot even write it
    try:
        parse(raw)
    except SignatureError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_garbage_bytes_raise_only_wire_errors(data):
    for decoder in (unpack, parse):
        try:
            decoder(data)
        except WireError:
            pass
    for reader in READERS:
        try:
            reader(data)
        except FrameError:
            pass


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_a_garbage_transcript_raises_only_transcript_errors(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("t") / "garbage.p2pw"
    path.write_bytes(MAGIC + data)
    try:
        verify(read_transcript(path))
    except TranscriptError:
        pass
    try:  # as a game to resume: its whole messages, the rest cut off, or one line of refusal
        read_unfinished(path)
    except TranscriptError:
        pass


@pytest.mark.parametrize("depth", [MAX_DEPTH, 995])
def test_deep_values_anywhere_in_a_message_are_refused(depth):
    deep = msgpack.unpackb(nested(depth), max_array_len=1) if depth < 500 else None
    prefix = b"\x95"  # [seq, prev, seat, kind, body]
    for signed in (prefix + nested(depth) + pack(GENESIS_PREV) + b"\x00" + pack("accept") + b"\x80",
                   prefix + b"\x01" + pack(GENESIS_PREV) + b"\x00" + pack("accept") + nested(depth)):
        with pytest.raises(SignatureError, match="nested"):
            parse(pack([signed, KEY.sign(signed)]))
    if deep is not None:
        with pytest.raises(SignatureError, match="nested"):
            parse(sign(KEY, 1, GENESIS_PREV, 0, "abort", {"reason": deep, "culprit": None}))


# -- one hash per message ----------------------------------------------------------------------


def test_the_wire_vector_decodes_to_its_hash_and_re_encodings_are_refused():
    vector = json.loads(VECTORS.read_text())
    raw = bytes.fromhex(vector["message"])
    message = parse(raw)
    assert message.digest.hex() == vector["hash"] == hashlib.sha256(raw).hexdigest()
    assert (message.seq, message.seat, message.kind.value) == (vector["seq"], vector["seat"], vector["kind"])
    message.verify(bytes.fromhex(vector["public_key"]))
    for name, other in vector["refused"].items():
        with pytest.raises(SignatureError, match="shortest"):
            parse(bytes.fromhex(other))
        assert name


def test_a_relay_cannot_re_encode_the_last_message_to_change_the_head(tmp_path):
    log = random_match(BoxWhist(2), hands=1, seed=3)[0].log
    last = log[-1]
    # bin32 headers instead of bin8/bin16: the same [signed, signature], other bytes
    stretched = (b"\x92" + b"\xc6" + len(last.signed).to_bytes(4, "big") + last.signed
                 + b"\xc6" + (64).to_bytes(4, "big") + last.signature)
    assert unpack(stretched) == [last.signed, last.signature]
    path = tmp_path / "g.p2pw"
    writer = TranscriptWriter(path)
    for message in log[:-1]:
        writer.append(message)
    writer.close()
    with path.open("ab") as out:
        out.write(frame(stretched))
    verdict = verify(read_transcript(path))  # a malformed message: the log is invalid there (session.md §5)
    assert not verdict.valid and verdict.error.seq == last.seq and "shortest" in verdict.error.reason
    assert verdict.head == log[-2].digest


# -- verify streams its file -------------------------------------------------------------------


def _accepts(tmp_path: Path, count: int) -> Path:
    """A transcript: a real START, then ``count`` copies of one ACCEPT (only the first fits)."""
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    players = tuple(Player(n, public_bytes(k.public_key())) for n, k in zip("ab", keys))
    start = sign(keys[0], 0, GENESIS_PREV, HOST, "start",
                 Table(BoxWhist(2), MatchLength(hands=1), players, secrets.token_bytes(32)).to_wire())
    accept = sign(keys[1], 1, hashlib.sha256(start).digest(), 1, "accept", {})
    path = tmp_path / "accepts.p2pw"
    path.write_bytes(MAGIC + frame(start) + frame(accept) * count)
    return path


def test_verify_stops_reading_at_the_first_bad_message(tmp_path):
    path = _accepts(tmp_path, 5000)
    taken = []

    def counted(messages):
        for message in messages:
            taken.append(message)
            yield message

    verdict = verify(counted(read_transcript(path)))
    assert not verdict.valid and verdict.error.seq == 1 and "does not follow" in verdict.error.reason
    # START, the ACCEPT, its copy, and the message after it (a recorder's ABORT would say who
    # sent the copy), and no more than the window it reads ahead for its signature helper
    assert 4 <= len(taken) <= 4 + signatures.WINDOW < 5000


def test_a_damaged_tail_does_not_hide_the_verdict_before_it(tmp_path):
    path = _accepts(tmp_path, 2)
    with path.open("ab") as out:
        out.write(b"\xff\xff\xff\xff garbage")
    verdict = verify(read_transcript(path))
    assert not verdict.valid and verdict.error.seq == 1


# -- a real host and joiner, over memory streams -----------------------------------------------


@pytest.mark.parametrize("field", ["version", "name"])
async def test_a_deeply_nested_hello_is_refused_and_the_host_plays_on(tmp_path, nursery, autojump_clock, field):
    """A 1 KiB HELLO (the most a HELLO may be) whose version or name is nested 995 deep once
    killed the host while it formatted the refusal."""
    fields = {"version": pack(1), "name": pack("m"), "key": b"\xc0"}
    fields[field] = nested(995)
    payload = b"\x81" + pack("hello") + b"\x83" + b"".join(pack(k) + v for k, v in fields.items())
    assert len(payload) <= 1024
    hosted = Hosted(tmp_path, nursery)
    attacker = await hosted.connect("10.0.0.9")
    await attacker.send_payload(payload)
    refusal = await attacker.receive()
    assert isinstance(refusal, Refuse) and "nested more than" in refusal.reason
    assert await attacker.receive_payload() is None
    assert any(line.startswith("Refused a joiner at 10.0.0.9:") and "nested more than" in line for line in hosted.lines)
    bob = await (await hosted.join("bob"))()
    record = await hosted.end()
    assert isinstance(record, net.GameRecord) and isinstance(bob, net.GameRecord)


async def test_a_seated_joiners_deep_body_costs_the_connection_and_is_never_relayed(tmp_path, nursery,
                                                                                  autojump_clock):
    """A message with a deep body, from seat 1's connection: its shape is checked before its
    signature, so it proves nothing against bob (protocol/wire.md §3). The host drops the
    connection before relaying it (carol never sees it); bob, who does not return, forfeits
    when the table's wait passes, and both transcripts end alike and verify."""
    hosted = Hosted(tmp_path, nursery, players=3)
    bob, key = await hosted.seat()
    await trio.sleep(1)
    carol_end = await hosted.join("carol")
    session = Session(await vouch_until_start(bob), 1, key, lambda: secrets.token_bytes(32))
    while session.need is Need.PEER or session.expected_kind is not Kind.COMMIT:  # honest up to the cut
        if session.need is Need.PEER:
            payload = await bob.receive_payload()
            if isinstance(read_from_host(payload), Logged):
                session.receive(payload, HOST)
        else:
            await bob.send_payload(session.produce().raw)
    # bob's commitment for the cut, validly signed, whose body is a list nested 995 deep
    signed = b"\x95" + pack(len(session.log)) + pack(session.head) + pack(1) + pack("commit") + nested(995)
    await bob.send_payload(pack([signed, key.sign(signed)]))
    record, carol = await hosted.end(), await carol_end()
    assert isinstance(record, net.GameRecord) and isinstance(carol, net.GameRecord), (record, carol)
    assert any(line.startswith("Dropped bob's connection: ") and "nested more than 8 levels deep" in line
               for line in hosted.lines), hosted.lines
    for outcome in record.outcome, carol.outcome:
        assert outcome.forfeited.seat == 1 and "did not return within" in outcome.forfeited.reason
    alice_log, carol_log = (tmp_path / "alice.p2pw").read_bytes(), (tmp_path / "carol.p2pw").read_bytes()
    assert alice_log == carol_log and b"\x91" * 20 not in alice_log  # carol never got the deep body
    verdict = verify(read_transcript(tmp_path / "alice.p2pw"))
    assert verdict.valid and verdict.to_json()["forfeit"]["seat"] == 1


async def test_a_start_with_a_deep_envelope_seq_ends_the_joiner_in_one_line(tmp_path, autojump_clock):
    network = MemoryNetwork()
    fake = FakeHost(network)
    ended: list[Exception] = []

    async def joining() -> None:
        try:
            await net.join(options("bob", tmp=tmp_path), "alice.lan", 7878, connect=network.connector())
        except net.NetError as error:
            ended.append(error)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(joining)
        host = await fake.accept()
        await host.welcome("alice", Ed25519PrivateKey.generate())
        assert await host.receive() == Ready()
        signed = b"\x95" + nested(995) + pack(GENESIS_PREV) + b"\x00" + pack("start") + b"\x80"
        await host.send_payload(pack([signed, bytes(64)]))
        assert await host.receive_payload() is None  # the joiner hung up
    (error,) = ended
    assert isinstance(error, RemoteTableError) and error.seat == HOST
    assert str(error).startswith("alice (the host) sent a bad START: ") and "nested more than" in str(error)
    assert "\n" not in str(error)


async def test_after_hostile_frames_the_host_seats_and_plays_a_real_joiner(tmp_path, nursery, autojump_clock):
    hosted = Hosted(tmp_path, nursery)
    for number, garbage in enumerate((b"\xc1", nested(995), pack({"hello": [1] * 200})), start=10):
        attacker = await hosted.connect(f"10.0.0.{number}")
        await attacker.send_payload(garbage)
        refusal = await attacker.receive()
        assert isinstance(refusal, Refuse) and refusal.reason.startswith("not a p2pwhist HELLO")
        await attacker.stream.aclose()
    bob, key = await hosted.seat()
    await play(bob, await seat_at(bob, key), "random")
    record = await hosted.end()
    assert isinstance(record, net.GameRecord) and verify(read_transcript(record.transcript)).complete
    assert len([line for line in hosted.lines if line.startswith("Refused a joiner at 10.0.0.1")]) == 3
