"""Frames and msgpack with limits: the only place bytes from a peer or a file become values.

A frame is a 4-byte big-endian length followed by that many bytes of msgpack (see
``protocol/wire.md``). msgpack's defaults trust the input (buffers up to 100 MiB, arrays
pre-allocated from the announced length, REFERENCE.md section 3), so every limit here is
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


class WireError(ValueError):
    """Bytes that are not a well-formed frame or msgpack value within our limits."""


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def unpack(payload: bytes) -> Any:
    """Decode exactly one msgpack value, refusing anything beyond our limits."""
    if len(payload) > MAX_FRAME:
        raise WireError(f"payload of {len(payload)} bytes exceeds the {MAX_FRAME}-byte limit")
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True, **_LIMITS)
    except Exception as error:  # msgpack raises several unrelated types for bad input
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise WireError(f"malformed msgpack ({detail})"[:200]) from None


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
