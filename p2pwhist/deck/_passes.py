"""The arithmetic of the passes and of decryption, shared by the peers and the audit.

Points come in as objects (already validated and decompressed, protocol/deck.md §6) and go
out as x-coordinates. Every output point costs one multiplication; a lock pass also needs a
key object per position, because its scalar differs per position (deck.md §9).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from p2pwhist.deck._curve import N, Point, multiply, product, scalar
from p2pwhist.deck._keys import SeatKeys


def shuffle_pass(deck: Sequence[Point], keys: SeatKeys) -> tuple[bytes, ...]:
    """out[j] = d · in[permutation[j]]: encrypt every card with the deck key and permute."""
    deck_key = scalar(keys.deck_key)
    return tuple(multiply(deck_key, deck[source]) for source in keys.permutation)


def lock_pass(deck: Sequence[Point], keys: SeatKeys) -> tuple[bytes, ...]:
    """out[j] = (k_j · d⁻¹) · in[j]: swap the deck key for position keys, one scalar per card."""
    deck_key_inverse = pow(keys.deck_key, -1, N)
    return tuple(
        multiply(scalar(position_key * deck_key_inverse % N), q)
        for position_key, q in zip(keys.position_keys, deck)
    )


def decrypt(q: Point, position_keys: Iterable[int]) -> bytes:
    """Strip every seat's key for one position: (Π k_ij)⁻¹ · Q, one multiplication."""
    return multiply(scalar(pow(product(position_keys), -1, N)), q)


def encrypt(q: Point, position_keys: Iterable[int]) -> bytes:
    """Apply every seat's key for one position: (Π k_ij) · Q.

    Checking a claimed card this way (encrypt its encoding and compare with the deck) needs no
    inverse and no decompression, unlike decrypting the deck's point.
    """
    return multiply(scalar(product(position_keys)), q)
