"""Everything a seat derives from its one 32-byte secret for a hand (protocol/deck.md §3).

The secret is the seat's only randomness: it commits to it before the first pass and reveals
it after the hand, so that anyone can recompute every step the seat took (the audit). From it,
with HKDF (RFC 5869) over SHA-256 and distinct info labels:

- the deck key d, used in the seat's shuffle pass;
- the permutation, an unbiased Fisher–Yates shuffle driven by HKDF output;
- one key per position k_j, swapped in for d in the lock pass and published to reveal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from functools import cached_property

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

from p2pwhist.deck._curve import N
from p2pwhist.deck._params import DeckParams

SECRET_BYTES = 32

TAG_COMMITMENT = b"p2pwhist/deck/v1/commitment"
HKDF_SALT = b"p2pwhist/deck/v1/hkdf"  # a fixed salt is fine for a uniform secret (RFC 5869 §3.1)
INFO_DECK_KEY = b"p2pwhist/deck/v1/deck-key"
INFO_PERMUTATION = b"p2pwhist/deck/v1/permutation"
INFO_POSITION_KEY = b"p2pwhist/deck/v1/position-key"

# A key is 40 bytes of HKDF output reduced mod n−1, plus 1: the 64 bits beyond the size of n
# make the bias at most 2^-64 (FIPS 186-5 A.2.1, "extra random bits").
KEY_OKM_BYTES = 40
_SHA256 = hashes.SHA256()
_DRAW_BYTES = 4  # Fisher–Yates draws 32-bit big-endian integers
_DRAW_RANGE = 2 ** (8 * _DRAW_BYTES)
_BLOCK_BYTES = 32  # the permutation stream is read in HKDF-Expand blocks of this size


def commitment(params: DeckParams, seat: int, secret: bytes) -> bytes:
    """SHA-256(TAG_COMMITMENT || seat_context || secret): binds the seat to its secret."""
    return hashlib.sha256(TAG_COMMITMENT + params.seat_context(seat) + secret).digest()


def key_from_okm(okm: bytes) -> int:
    """A scalar in [1, n−1] from 40 bytes of key material (FIPS 186-5 A.2.1)."""
    return int.from_bytes(okm, "big") % (N - 1) + 1


def uniform_below(draws: Iterator[int], bound: int) -> int:
    """A uniform integer in [0, bound) from 32-bit draws, rejecting the biased top range."""
    limit = _DRAW_RANGE - _DRAW_RANGE % bound
    for draw in draws:
        if draw < limit:
            return draw % bound
    raise AssertionError("the draw stream is endless")


def fisher_yates(size: int, draws: Iterator[int]) -> tuple[int, ...]:
    """Durstenfeld's shuffle of range(size): for i = size−1 … 1 swap i with uniform j ≤ i."""
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        j = uniform_below(draws, i + 1)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


class SeatKeys:
    """The secrets of one seat for one hand, derived lazily from its 32-byte secret."""

    def __init__(self, params: DeckParams, seat: int, secret: bytes) -> None:
        self._size = params.size
        self._context = params.seat_context(seat)
        # HKDF-Extract once; every value below is an HKDF-Expand of this PRK (RFC 5869 §2).
        self._prk = HKDF.extract(_SHA256, HKDF_SALT, secret)

    def _expand(self, info: bytes, length: int) -> bytes:
        return HKDFExpand(_SHA256, length, info).derive(self._prk)

    @cached_property
    def deck_key(self) -> int:
        return key_from_okm(self._expand(INFO_DECK_KEY + self._context, KEY_OKM_BYTES))

    @cached_property
    def permutation(self) -> tuple[int, ...]:
        """Output position j of the shuffle pass takes the input card at ``permutation[j]``."""
        return fisher_yates(self._size, self._draws())

    @cached_property
    def position_keys(self) -> tuple[int, ...]:
        return tuple(
            key_from_okm(
                self._expand(INFO_POSITION_KEY + self._context + bytes([j]), KEY_OKM_BYTES)
            )
            for j in range(self._size)
        )

    def _draws(self) -> Iterator[int]:
        """32-bit draws from the stream HKDF-Expand(PRK, INFO_PERMUTATION || ctx || u32be(i), 32)
        for block i = 0, 1, …: one block per call, so the stream never runs out."""
        block = 0
        while True:
            okm = self._expand(
                INFO_PERMUTATION + self._context + block.to_bytes(4, "big"), _BLOCK_BYTES
            )
            for offset in range(0, _BLOCK_BYTES, _DRAW_BYTES):
                yield int.from_bytes(okm[offset : offset + _DRAW_BYTES], "big")
            block += 1
