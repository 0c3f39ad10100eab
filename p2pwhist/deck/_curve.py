"""NIST P-256 used as a commutative cipher on x-coordinates, and cards hashed onto it.

Encrypting a point P with key k is k·P; keys commute, and k⁻¹ mod n decrypts
(protocol/deck.md §2; the construction of Google's private-join-and-compute
``ECCommutativeCipher``). ``cryptography`` exposes P-256 scalar multiplication only as ECDH,
which returns x(k·Q): so a point travels and is stored as its x-coordinate alone, and x-only
arithmetic is still a commutative cipher because k·(−P) = −(k·P) has the same x.

Costs that shaped this module (measured with ``scripts/bench_deck.py``; protocol/deck.md §9):
``exchange`` (one variable-base multiplication) is the unit; turning an x into a public key
object takes a square root, about 0.4 of that; every private key object costs a fixed-base
multiplication k·G that we never use, about 0.5 of it, and no loader of ``cryptography``
avoids it. So a key object is made once per scalar and reused, and a point object once per
point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import ec

from p2pwhist.cards import Card
from p2pwhist.deck._params import DeckParams

# Curve P-256 (FIPS 186-5 / SEC 2 §2.4.2): y² = x³ − 3x + b over GF(p), prime order n.
P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
X_BYTES = 32  # SEC 1 §2.3.5: a field element is a fixed-length big-endian octet string
SCALAR_BYTES = 32  # SEC 1 §2.3.7, likewise for an integer below n

TAG_CARD = b"p2pwhist/deck/v1/card"
MAX_ENCODING_TRIES = 256  # the counter is one byte; 256 misses in a row has odds 2^-256

_CURVE = ec.SECP256R1()
_ECDH = ec.ECDH()
_COMPRESSED_EVEN_Y = b"\x02"  # SEC 1 §2.3.3 compressed encoding; the sign of y is irrelevant

Point = ec.EllipticCurvePublicKey
Scalar = ec.EllipticCurvePrivateKey


def is_field_element(x: bytes) -> bool:
    """True if ``x`` is a well-formed x-coordinate: 32 bytes, big-endian, below p."""
    return type(x) is bytes and len(x) == X_BYTES and int.from_bytes(x, "big") < P


def point(x: bytes) -> Point | None:
    """The curve point with x-coordinate ``x`` (either of ±P), or None if there is none.

    This is the on-curve check: decompression succeeds exactly when x < p and x³ − 3x + b is a
    square mod p (SEC 1 §2.3.4); the identity has no x, so it can never come out of here.
    """
    if not is_field_element(x):
        return None
    try:
        return Point.from_encoded_point(_CURVE, _COMPRESSED_EVEN_Y + x)
    except ValueError:
        return None


def scalar(k: int) -> Scalar:
    """A key object for the scalar k in [1, n−1] (costs one fixed-base multiplication)."""
    return ec.derive_private_key(k, _CURVE)


def multiply(k: Scalar, q: Point) -> bytes:
    """x(k·Q) as 32 bytes."""
    return k.exchange(_ECDH, q)


def product(factors: Iterable[int]) -> int:
    """The product of scalars mod n: several keys applied to one point as one multiplication."""
    result = 1
    for factor in factors:
        result = result * factor % N
    return result


def encode_card(hand_context: bytes, card: int) -> tuple[bytes, Point]:
    """Hash a card onto the curve by try-and-increment (protocol/deck.md §4).

    x = SHA-256(TAG_CARD || hand_context || u8(card) || u8(counter)) for counter = 0, 1, …;
    the first x that is a curve point's x-coordinate wins. Nobody knows its discrete
    logarithm, which is what keeps the shuffle secret (protocol/deck.md §10.1).
    """
    prefix = TAG_CARD + hand_context + bytes([card])
    for counter in range(MAX_ENCODING_TRIES):
        x = hashlib.sha256(prefix + bytes([counter])).digest()
        q = point(x)
        if q is not None:
            return x, q
    raise AssertionError("256 hash-to-curve misses in a row (probability 2^-256)")


@dataclass(frozen=True)
class CardEncodings:
    """The hand's card encodings; in card-code order they are the initial deck."""

    cards: tuple[Card, ...]
    xs: tuple[bytes, ...]
    points: tuple[Point, ...]
    card_at: dict[bytes, Card]  # x-coordinate → card, to recognise a decrypted point

    @staticmethod
    def of(params: DeckParams) -> CardEncodings:
        context = params.hand_context()
        encoded = [encode_card(context, card) for card in params.cards]
        xs = tuple(x for x, _ in encoded)
        return CardEncodings(
            cards=params.cards,
            xs=xs,
            points=tuple(q for _, q in encoded),
            card_at=dict(zip(xs, params.cards)),
        )

    def point_of(self, card: Card) -> Point:
        return self.points[self.cards.index(card)]
