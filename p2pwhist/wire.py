"""Frames and msgpack with limits: the only place bytes from a peer or a file become values.

A frame is a 4-byte big-endian length followed by that many bytes of msgpack (see
``protocol/wire.md``). msgpack's defaults trust the input (buffers up to 100 MiB, arrays
pre-allocated from the announced length: msgpack-python's ``unpackb`` documentation), so every limit here is
set explicitly, and a payload must be exactly one msgpack object.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

# The largest honest frame is a shuffle pass: 52 points of 32 bytes plus a few dozen bytes
# of envelope and signature (about 1.8 KiB). 64 KiB leaves room and bounds a hostile peer.
MAX_FRAME = 64 * 1024
LENGTH = struct.Struct(">I")
# unpackb bounds its buffer by the payload itself, which the frame limit already bounds.
_LIMITS = dict(
    max_str_len=1024,
    max_bin_len=MAX_FRAME,
    max_array_len=256,
    max_map_len=32,
    max_ext_len=0,
)
# The deepest honest value is a PLAY's body, four arrays and maps inside the signed message's
# own array (protocol/wire.md §1). msgpack's own limit is about a thousand levels, deep enough
# for Python's recursion (repr, ==, hashing) to fail on a 1 KiB payload, so we refuse anything
# nested deeper than this, checked without recursion.
MAX_DEPTH = 8


class WireError(ValueError):
    """Input from a peer or a file that is malformed: bytes that are not a frame or a msgpack
    value within our limits, or a value that is not the message it should be. Every decoder of
    peer input raises this type (or a subclass) and no other."""


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def unpack(payload: bytes) -> Any:
    """Decode exactly one msgpack value, refusing anything beyond our limits."""
    if len(payload) > MAX_FRAME:
        raise WireError(f"payload of {len(payload)} bytes exceeds the {MAX_FRAME}-byte limit")
    try:
        value = msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True,
                                object_pairs_hook=_map_without_repeats, **_LIMITS)
    except WireError:
        raise
    except Exception as error:  # msgpack raises several unrelated types for bad input
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise WireError(f"malformed msgpack ({detail})"[:200]) from None
    _check_depth(value)
    return value


def _map_without_repeats(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A map, refused if a key repeats: msgpack would keep the last value, so one payload
    could mean one thing to us and another to a decoder that keeps the first."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise WireError("a map repeats a key")
    return value


def _check_depth(value: Any) -> None:
    """Refuse a value nested deeper than ``MAX_DEPTH``, walking it with an explicit stack.
    The walk visits each item once, and the frame limit bounds the items."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth == MAX_DEPTH:
                raise WireError(f"a value nested more than {MAX_DEPTH} levels deep")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def describe(value: Any) -> str:
    """A short description of a value from a peer, for an error message. Never ``repr``:
    that recurses (and fails) on deep values and can be as long as the frame."""
    if value is None or isinstance(value, bool):
        return str(value).lower() if value is not None else "nil"
    if isinstance(value, int):
        return str(value) if -10**12 < value < 10**12 else "a very large integer"
    if isinstance(value, str):
        return repr(value[:40]) + ("…" if len(value) > 40 else "")
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value)}"
    if isinstance(value, dict):
        return f"a map of {len(value)}"
    return f"a {type(value).__name__}"


def frame(payload: bytes) -> bytes:
    if len(payload) > MAX_FRAME:
        raise WireError(f"frame of {len(payload)} bytes exceeds the {MAX_FRAME}-byte limit")
    return LENGTH.pack(len(payload)) + payload


class FrameBuffer:
    """Accumulates received bytes and splits them into frames (sans-I/O, like h11)."""

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, data: bytes) -> None:
        self._data += data

    def next_frame(self) -> bytes | None:
        """The next complete frame's payload, or None until more bytes arrive."""
        if len(self._data) < LENGTH.size:
            return None
        (size,) = LENGTH.unpack_from(self._data)
        if size > MAX_FRAME:
            raise WireError(f"a frame announces {size} bytes, over the {MAX_FRAME}-byte limit")
        end = LENGTH.size + size
        if len(self._data) < end:
            return None
        payload = bytes(self._data[LENGTH.size : end])
        del self._data[:end]
        return payload

    @property
    def pending(self) -> int:
        """Bytes received that do not yet make a whole frame."""
        return len(self._data)
