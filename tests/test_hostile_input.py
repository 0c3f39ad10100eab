"""Hostile bytes against every decoder of peer input, and against real host, joiner and verify
processes: deep nesting, wrong types, non-canonical encodings, huge files. Nothing crashes,
and every refusal is one line naming who sent it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from pathlib import Path

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from netutil import FakeHost, FakePeer, Peers, play, seat_at

from p2pwhist import signatures
from p2pwhist.bodies import BodyError, CardPlay, Done, Hello, Kind, Notice, Player, Rejoin, Resumed, Table, Welcome, decode
from p2pwhist.deck import PositionKey, PositionKeys
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import random_match
from p2pwhist.session import HOST, Need
from p2pwhist.signed import (
    GENESIS_PREV,
    SignatureError,
    parse,
    public_bytes,
    seal,
    sign,
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


@settings(max_examples=200, deadline=None)
@given(value=values, deep=st.integers(0, 1200))
def test_a_hello_decodes_or_is_refused_with_a_body_error(value, deep):
    for candidate in (value, {"hello": value}, {"hello": {"version": value, "name": "bob", "key": bytes(32)}}):
        try:
            Hello.from_wire(candidate)
        except BodyError:
            pass
    with pytest.raises(WireError):
        Hello.from_wire(unpack(b"\x81\xa5hello\x83\xa7version" + nested(deep + MAX_DEPTH) + b"\xa4name\xa1b\xa3key\xc0"))


@settings(max_examples=300, deadline=None)
@given(frame=st.sampled_from([Welcome, Rejoin, Resumed, Done, Notice]), value=values, field=st.integers(0, 5),
       deep=st.integers(0, 1200))
def test_every_frame_outside_the_log_decodes_or_is_refused_with_a_body_error(frame, value, field, deep):
    """WELCOME, REJOIN, RESUMED, DONE and NOTICE (wire.md §2), as HELLO above: garbage, the
    right label around garbage, and the right fields with one of them garbage."""
    names = [f.name for f in dataclasses.fields(frame)]
    honest = {name: 1 for name in names}
    shaped = {**honest, names[field % len(names)]: value}
    for candidate in (value, {frame.LABEL: value}, {frame.LABEL: shaped}):
        try:
            frame.from_wire(candidate)
        except BodyError:
            pass
    with pytest.raises(WireError):
        frame.from_wire(unpack(b"\x81" + msgpack.packb(frame.LABEL) + nested(deep + MAX_DEPTH)))


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
    stretched = b"\x92" + b"\xc6" + len(last.signed).to_bytes(4, "big") + last.signed + b"\xc6" + (64).to_bytes(4, "big") + last.signature
    assert unpack(stretched) == [last.signed, last.signature]
    path = tmp_path / "g.p2pw"
    writer = TranscriptWriter(path)
    for message in log[:-1]:
        writer.append(message)
    writer.close()
    with path.open("ab") as out:
        out.write(frame(stretched))
    with pytest.raises(TranscriptError, match="shortest"):
        verify(read_transcript(path))


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


# -- real processes ----------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["version", "name"])
def test_a_deeply_nested_hello_is_refused_and_the_host_plays_on(tmp_path, field):
    """A 1 KiB HELLO (the most a HELLO may be) whose version or name is nested 995 deep once
    killed the host while it formatted the refusal."""
    fields = {"version": pack(1), "name": pack("m"), "key": b"\xc0"}
    fields[field] = nested(995)
    payload = b"\x81" + pack("hello") + b"\x83" + b"".join(pack(k) + v for k, v in fields.items())
    assert len(payload) <= 1024
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        attacker = FakePeer.connect(host.port)
        attacker.send_payload(payload)
        assert "nested more than" in attacker.receive_value()["refuse"]
        attacker.close()
        joiner = peers.join("bob", host)
        done, hosted = joiner.finish(), host.peer.finish()
    assert hosted.code == 0 and done.code == 0, hosted.err + done.err
    assert "Traceback" not in hosted.err


def test_a_seated_joiners_deep_body_is_refused_by_the_host_and_named_by_all(tmp_path):
    """A validly signed message with a deep body, from seat 1: the host refuses it before
    relaying (so carol never sees it), every peer names bob, and every transcript verifies."""
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--transcript", str(tmp_path / "alice.p2pw"), players=3)
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        host.peer.wait_for("bob joined")
        carol = peers.join("carol", host, "--transcript", str(tmp_path / "carol.p2pw"))
        session = seat_at(bob, key)
        while session.need is Need.PEER or session.expected_kind is not Kind.COMMIT:  # honest up to the cut
            if session.need is Need.PEER:
                session.receive(bob.receive(), HOST)
            else:
                bob.send_payload(session.produce().raw)
        # bob's commitment for the cut, validly signed, whose body is a list nested 995 deep
        signed = b"\x95" + pack(len(session.log)) + pack(session.head) + pack(1) + pack("commit") + nested(995)
        bob.send_payload(pack([signed, key.sign(signed)]))
        hosted, carol_done = host.peer.finish(), carol.finish()
        bob.close()
        checks = [peers.start(f"verify-{n}", "verify", str(tmp_path / f"{n}.p2pw")).finish() for n in ("alice", "carol")]
    for done in hosted, carol_done:
        assert done.code == 1 and "bob (seat 1)" in done.error_line()
    assert "nested more than" in hosted.error_line()
    for check in checks:
        assert "Traceback" not in check.err and check.code in (0, 1), check.err
        assert check.code == 0 or "bob" in check.out


def test_a_start_with_a_deep_envelope_seq_ends_the_joiner_in_one_line(tmp_path):
    fake = FakeHost()
    with Peers(tmp_path) as peers:
        joiner = peers.start("bob", "join", fake.address, "--name", "bob", "--bot", "random")
        peer = fake.accept()
        peer.welcome("alice", Ed25519PrivateKey.generate())
        signed = b"\x95" + nested(995) + pack(GENESIS_PREV) + b"\x00" + pack("start") + b"\x80"
        peer.send_payload(pack([signed, bytes(64)]))
        done = joiner.finish()
        peer.close()
    fake.close()
    assert done.code == 1 and "nested more than" in done.error_line()


def test_after_hostile_frames_the_host_seats_and_plays_a_real_joiner(tmp_path):
    key = Ed25519PrivateKey.generate()
    with Peers(tmp_path) as peers:
        host = peers.host("alice")
        for garbage in (b"\xc1", nested(995), pack({"hello": [1] * 200})):
            attacker = FakePeer.connect(host.port)
            attacker.send_payload(garbage)
            assert "refuse" in attacker.receive_value()
            attacker.close()
        bob = FakePeer.connect(host.port)
        bob.sit("bob", key)
        play(bob, seat_at(bob, key), "random")
        hosted = host.peer.finish()
        bob.close()
    assert hosted.code == 0, hosted.err
