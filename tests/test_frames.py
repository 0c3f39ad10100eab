"""The readers of the frames outside the log (``p2pwhist.table._frames``): whatever bytes a
peer sends, a reader returns a frame or raises ``FrameError``, the one error the table's
machines catch where peer input enters (protocol/wire.md §1: a receiver refuses malformed
msgpack, repeated keys, keys that are not strings, ext values and deep nests in one line).

Found by scripts/fuzz_host.py: a HELLO-sized payload that begins like a map but is no valid
msgpack value raised the wire's ``WireError`` out of the reader, past the host's lobby, and
ended the host process with a traceback before any joiner had sat down."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Player
from p2pwhist.table import (
    Close,
    Connect,
    Finish,
    FrameError,
    HostMachine,
    JoinerMachine,
    Limits,
    Opened,
    Received,
    RemoteTableError,
    Send,
    read_from_host,
    read_from_joiner,
)
from p2pwhist.wire import unpack

# Each begins with a fixmap's byte (0x80..0x8f), as a frame outside the log does, and is no
# value a receiver takes.
MALFORMED_MAPS = {
    "not msgpack": b"\x81\xc1",
    "cut short": b"\x81\xa5hello\x83",
    "trailing bytes": b"\x81\xa5ready\xc3\xc0",
    "a repeated key": b"\x82\xa5hello\x01\xa5hello\x02",
    "an integer key": b"\x81\x01\x01",
    "a nil key": b"\x81\xc0\xc0",
    "an ext value": b"\x81\xa5ready\xd4\x01\x00",
    "nested 9 deep": b"\x81\xa5ready" + b"\x91" * 8 + b"\xc0",
    "a string over 1,024 bytes": b"\x81\xa6refuse\xda\x04\x01" + b"x" * 1025,
}


@pytest.mark.parametrize("payload", MALFORMED_MAPS.values(), ids=MALFORMED_MAPS.keys())
@pytest.mark.parametrize("read", [read_from_joiner, read_from_host], ids=["from_joiner", "from_host"])
def test_a_malformed_map_is_a_frame_error(read, payload: bytes) -> None:
    with pytest.raises(FrameError):
        read(payload)


def test_the_malformed_maps_are_refused_by_the_wire_itself() -> None:
    """The cases above are malformed for the wire (not merely frames of no known label)."""
    for payload in MALFORMED_MAPS.values():
        with pytest.raises(ValueError):
            unpack(payload)


@pytest.mark.parametrize("payload", MALFORMED_MAPS.values(), ids=MALFORMED_MAPS.keys())
def test_a_host_refuses_a_malformed_first_frame_in_words(payload: bytes) -> None:
    me = Player("alice", Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    host = HostMachine(me, 2, Limits(), lambda: bytes(32))
    assert host.handle(Opened(1, "127.0.0.1", "127.0.0.1:5000"), 0.0) == []
    actions = host.handle(Received(1, payload), 0.0)
    sends = [a for a in actions if isinstance(a, Send)]
    assert len(sends) == 1 and sends[0].conn == 1, actions
    refusal = read_from_host(sends[0].payload)
    assert "not a p2pwhist HELLO" in refusal.reason, refusal  # type: ignore[union-attr]
    assert any(isinstance(a, Close) and a.conn == 1 for a in actions)
    assert not host.finished


@pytest.mark.parametrize("payload", MALFORMED_MAPS.values(), ids=MALFORMED_MAPS.keys())
def test_a_joiner_leaves_a_host_whose_first_frame_is_malformed(payload: bytes) -> None:
    joiner = JoinerMachine("bob", Ed25519PrivateKey.generate(), "127.0.0.1:5000", Limits())
    assert joiner.begin(0.0) == [Connect()]
    assert isinstance(joiner.handle(Opened(7), 0.0)[0], Send)  # HELLO
    actions = joiner.handle(Received(7, payload), 0.0)
    (finish,) = [a for a in actions if isinstance(a, Finish)]
    assert isinstance(finish.result, RemoteTableError) and "does not speak p2pwhist" in str(finish.result)
