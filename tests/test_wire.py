"""Frames, msgpack limits, signed messages and transcript files: hostile bytes in, typed errors out."""

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.bodies import Accept, Dispute
from p2pwhist.games.base import Play
from p2pwhist.signed import GENESIS_PREV, Kind, SignatureError, fingerprint, parse, public_bytes, same_fingerprint, seal
from p2pwhist.transcript import MAGIC, TranscriptError, TranscriptWriter, read_transcript
from p2pwhist.wire import MAX_FRAME, FrameBuffer, WireError, frame, pack, unpack


def test_frames_split_however_the_bytes_arrive():
    payloads = [b"", b"a", bytes(range(256)) * 10]
    stream = b"".join(frame(p) for p in payloads)
    buffer = FrameBuffer()
    got = []
    for i in range(0, len(stream), 7):
        buffer.feed(stream[i : i + 7])
        while (payload := buffer.next_frame()) is not None:
            got.append(payload)
    assert got == payloads and buffer.pending == 0


def test_an_oversized_frame_is_refused_from_its_header():
    buffer = FrameBuffer()
    buffer.feed((MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(WireError):
        buffer.next_frame()
    with pytest.raises(WireError):
        frame(bytes(MAX_FRAME + 1))


@pytest.mark.parametrize(
    "payload",
    [b"\xc1", pack(1) + b"x", pack("x" * 2000), pack(list(range(300))), pack({str(i): i for i in range(40)}),
     b"\xd4\x01\x00", b"\x81\x01\x02", b"\xdd\xff\xff\xff\xff", b"\x82\xa1a\x01\xa1a\x02"],
)
def test_malformed_or_unbounded_msgpack_is_a_wire_error(payload):
    with pytest.raises(WireError):
        unpack(payload)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_only_ever_raises_typed_errors(data):
    try:
        parse(data)
    except SignatureError:
        pass


def test_signed_message_round_trip_and_tampering():
    key = Ed25519PrivateKey.generate()
    message = seal(key, 0, GENESIS_PREV, 0, Dispute(7, "x"))
    again = parse(message.raw)
    assert (again.seq, again.seat, again.kind, again.body) == (0, 0, Kind.DISPUTE, Dispute(7, "x"))
    again.verify(public_bytes(key.public_key()))
    with pytest.raises(SignatureError):
        again.verify(public_bytes(Ed25519PrivateKey.generate().public_key()))
    bad = bytearray(message.raw)
    bad[-5] ^= 0x40
    with pytest.raises(SignatureError):
        parse(bytes(bad)).verify(public_bytes(key.public_key()))


@pytest.mark.parametrize("inner", [[0, GENESIS_PREV, 0, "nope", {}], [-1, GENESIS_PREV, 0, "accept", {}],
                                   [0, b"short", 0, "accept", {}], [0, GENESIS_PREV, 9, "accept", {}],
                                   [True, GENESIS_PREV, 0, "accept", {}], [0, GENESIS_PREV, 0, "accept"]])
def test_a_malformed_envelope_is_refused(inner):
    with pytest.raises(SignatureError):
        parse(pack([pack(inner), bytes(64)]))


def test_fingerprints_compare_loosely_but_exactly():
    key = public_bytes(Ed25519PrivateKey.generate().public_key())
    text = fingerprint(key)
    assert len(text) == 39 and same_fingerprint(text.upper().replace("-", " "), text)
    assert not same_fingerprint(text[:-1] + ("0" if text[-1] != "0" else "1"), text)


def test_moves_are_deck_positions_on_the_wire():
    assert Play.from_wire(Play(17).to_wire(), 52) == Play(17)
    for bad in (52, -1, True, "3", None):
        with pytest.raises(ValueError):
            Play.from_wire(bad, 52)


def test_transcript_file_round_trip_and_damage(tmp_path):
    key = Ed25519PrivateKey.generate()
    messages = [seal(key, i, GENESIS_PREV, 0, Accept()) for i in range(3)]
    path = tmp_path / "game.p2pw"
    writer = TranscriptWriter(path)
    for message in messages:
        writer.append(message)
    writer.close()
    assert [m.raw for m in read_transcript(path)] == [m.raw for m in messages]
    data = path.read_bytes()
    (tmp_path / "cut.p2pw").write_bytes(data[:-3])
    with pytest.raises(TranscriptError) as error:
        list(read_transcript(tmp_path / "cut.p2pw"))
    assert error.value.index == 2
    (tmp_path / "other").write_bytes(b"hello")
    with pytest.raises(TranscriptError):
        list(read_transcript(tmp_path / "other"))
    with pytest.raises(TranscriptError):
        list(read_transcript(tmp_path / "missing"))
    assert data.startswith(MAGIC)
