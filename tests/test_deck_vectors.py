"""Test vectors of protocol/deck.md (protocol/vectors/deck.json), checked twice: against the
package, and against the independent reference below, written from deck.md alone with the
standard library (hmac for HKDF per RFC 5869, affine P-256 arithmetic on Python ints).

Regenerate the file (only when the protocol version changes) with
``PYTHONPATH=. python tests/test_deck_vectors.py --write``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from pathlib import Path

import pytest

from p2pwhist.deck import Deck, DeckParams, audit
from p2pwhist.deck._curve import CardEncodings
from p2pwhist.deck._keys import SeatKeys, commitment

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "deck.json"

# The reference implementation: constants copied from deck.md, nothing imported from the package.
P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
TAGS = {
    "card": b"p2pwhist/deck/v1/card",
    "commitment": b"p2pwhist/deck/v1/commitment",
    "salt": b"p2pwhist/deck/v1/hkdf",
    "deck-key": b"p2pwhist/deck/v1/deck-key",
    "permutation": b"p2pwhist/deck/v1/permutation",
    "position-key": b"p2pwhist/deck/v1/position-key",
}


def ref_hand_context(game_id: bytes, hand: int) -> bytes:
    return bytes([len(game_id)]) + game_id + hand.to_bytes(4, "big")


def ref_is_square(a: int) -> bool:
    return pow(a, (P - 1) // 2, P) == 1  # Euler's criterion; a is never 0 on P-256


def ref_encode(game_id: bytes, hand: int, card: int) -> tuple[int, bytes]:
    for counter in range(256):
        digest = hashlib.sha256(
            TAGS["card"] + ref_hand_context(game_id, hand) + bytes([card, counter])
        ).digest()
        x = int.from_bytes(digest, "big")
        if x < P and ref_is_square((x**3 - 3 * x + B) % P):
            return counter, digest
    raise AssertionError


def ref_hkdf(secret: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.digest(TAGS["salt"], secret, "sha256")  # RFC 5869 §2.2
    okm, block, counter = b"", b"", 1
    while len(okm) < length:  # RFC 5869 §2.3
        block = hmac.digest(prk, block + info + bytes([counter]), "sha256")
        okm += block
        counter += 1
    return okm[:length]


def ref_key(secret: bytes, info: bytes) -> int:
    return int.from_bytes(ref_hkdf(secret, info, 40), "big") % (N - 1) + 1


def ref_permutation(secret: bytes, context: bytes, size: int) -> list[int]:
    def draws():
        block = 0
        while True:
            okm = ref_hkdf(secret, TAGS["permutation"] + context + block.to_bytes(4, "big"), 32)
            yield from (int.from_bytes(okm[i : i + 4], "big") for i in range(0, 32, 4))
            block += 1

    stream, order = draws(), list(range(size))
    for i in range(size - 1, 0, -1):
        limit = 2**32 - 2**32 % (i + 1)
        j = next(d for d in stream if d < limit) % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def ref_multiply(k: int, x: int) -> int:
    """x(k·Q) for the point Q with x-coordinate x, by affine double-and-add."""
    a = (x**3 - 3 * x + B) % P
    y = pow(a, (P + 1) // 4, P)
    assert y * y % P == a

    def add(p1, p2):
        if p1 is None or p2 is None:
            return p1 or p2
        (x1, y1), (x2, y2) = p1, p2
        if x1 == x2 and (y1 + y2) % P == 0:
            return None
        if x1 == x2:
            slope = (3 * x1 * x1 - 3) * pow(2 * y1, -1, P) % P
        else:
            slope = (y2 - y1) * pow(x2 - x1, -1, P) % P
        x3 = (slope * slope - x1 - x2) % P
        return x3, (slope * (x1 - x3) - y1) % P

    result = None
    for bit in bin(k)[2:]:
        result = add(result, result)
        if bit == "1":
            result = add(result, (x, y))
    return result[0]


def ref_hand(game_id: bytes, hand: int, cards: list[int], secrets: list[bytes]) -> dict:
    """Every value of a hand, computed from deck.md by the reference implementation."""
    seats, size = len(secrets), len(cards)
    encodings = [ref_encode(game_id, hand, card) for card in sorted(cards)]
    seat_values = []
    for seat, secret in enumerate(secrets):
        context = ref_hand_context(game_id, hand) + bytes([seat])
        seat_values.append(
            {
                "seat": seat,
                "secret": secret.hex(),
                "commitment": hashlib.sha256(TAGS["commitment"] + context + secret).hexdigest(),
                "prk": hmac.digest(TAGS["salt"], secret, "sha256").hex(),
                "deck_key": f"{ref_key(secret, TAGS['deck-key'] + context):064x}",
                "permutation": ref_permutation(secret, context, size),
                "position_keys": [
                    f"{ref_key(secret, TAGS['position-key'] + context + bytes([j])):064x}"
                    for j in range(size)
                ],
            }
        )
    deck = [int.from_bytes(x, "big") for _, x in encodings]
    shuffles, locks = [], []
    for values in seat_values:
        d = int(values["deck_key"], 16)
        deck = [ref_multiply(d, deck[source]) for source in values["permutation"]]
        shuffles.append([f"{x:064x}" for x in deck])
    for values in seat_values:
        d_inverse = pow(int(values["deck_key"], 16), -1, N)
        deck = [
            ref_multiply(int(k, 16) * d_inverse % N, x)
            for k, x in zip(values["position_keys"], deck)
        ]
        locks.append([f"{x:064x}" for x in deck])
    card_at = []
    for position in range(size):
        index = position
        for values in reversed(seat_values):
            index = values["permutation"][index]
        card_at.append(sorted(cards)[index])
    return {
        "params": {"game_id": game_id.hex(), "hand": hand, "cards": sorted(cards), "seats": seats},
        "encodings": [
            {"card": card, "counter": counter, "x": x.hex()}
            for card, (counter, x) in zip(sorted(cards), encodings)
        ],
        "seats": seat_values,
        "shuffle_passes": shuffles,
        "lock_passes": locks,
        "final_deck": locks[-1],
        "cards_at_positions": card_at,
    }


def package_hand(vectors: dict) -> dict:
    """The same values, computed by the package through its public state machine."""
    spec = vectors["params"]
    params = DeckParams(
        bytes.fromhex(spec["game_id"]), spec["hand"], tuple(spec["cards"]), spec["seats"]
    )
    secrets = [bytes.fromhex(values["secret"]) for values in vectors["seats"]]
    decks = [Deck(params, seat, secret) for seat, secret in enumerate(secrets)]

    def broadcast(sender, message):
        for deck in decks:
            if deck.seat != sender:
                deck.receive_wire(sender, message.to_wire())
        return message

    commitments = [broadcast(deck.seat, deck.commit()).digest.hex() for deck in decks]
    shuffles = [
        [x.hex() for x in broadcast(deck.seat, deck.shuffle_pass()).points] for deck in decks
    ]
    locks = [[x.hex() for x in broadcast(deck.seat, deck.lock_pass()).points] for deck in decks]
    for deck in decks:
        broadcast(deck.seat, deck.reveal_secret())
    result = audit(params, decks[0].record)
    assert result.clean
    return {
        "encodings": [x.hex() for x in CardEncodings.of(params).xs],
        "commitments": commitments,
        "seat_keys": [SeatKeys(params, seat, secret) for seat, secret in enumerate(secrets)],
        "own_commitments": [commitment(params, seat, s).hex() for seat, s in enumerate(secrets)],
        "shuffle_passes": shuffles,
        "lock_passes": locks,
        "cards_at_positions": [int(card) for card in result.cards],
    }


def make_vectors() -> dict:
    hand = ref_hand(
        b"p2pwhist test vectors", 1, [0, 12, 25, 51], [bytes(range(32)), bytes(range(32, 64))]
    )
    extra = [
        {"card": card, "counter": c, "x": x.hex()}
        for card in (1, 38)
        for c, x in [ref_encode(b"p2pwhist test vectors", 1, card)]
    ]
    return {
        "about": "protocol/deck.md test vectors: a 2-seat, 4-card hand. Byte strings are hex; "
        "keys are 32-byte big-endian hex; 'encodings' include two cards outside the deck.",
        **hand,
        "more_encodings": extra,
    }


@pytest.fixture(scope="module")
def vectors() -> dict:
    return json.loads(VECTORS.read_text())


def test_the_reference_implementation_reproduces_the_stored_vectors(vectors):
    assert make_vectors() == vectors


def test_the_vectors_exercise_try_and_increment(vectors):
    counters = [e["counter"] for e in vectors["encodings"] + vectors["more_encodings"]]
    assert 0 in counters and any(c > 0 for c in counters)


def test_the_package_reproduces_the_stored_vectors(vectors):
    computed = package_hand(vectors)
    assert computed["encodings"] == [e["x"] for e in vectors["encodings"]]
    assert computed["commitments"] == [s["commitment"] for s in vectors["seats"]]
    assert computed["own_commitments"] == computed["commitments"]
    for keys, values in zip(computed["seat_keys"], vectors["seats"]):
        assert f"{keys.deck_key:064x}" == values["deck_key"]
        assert list(keys.permutation) == values["permutation"]
        assert [f"{k:064x}" for k in keys.position_keys] == values["position_keys"]
    assert computed["shuffle_passes"] == vectors["shuffle_passes"]
    assert computed["lock_passes"] == vectors["lock_passes"]
    assert computed["lock_passes"][-1] == vectors["final_deck"]
    assert computed["cards_at_positions"] == vectors["cards_at_positions"]


def test_the_package_encodes_cards_outside_the_vector_deck_alike(vectors):
    params = DeckParams(
        bytes.fromhex(vectors["params"]["game_id"]),
        vectors["params"]["hand"],
        tuple(e["card"] for e in vectors["more_encodings"]),
        2,
    )
    assert [x.hex() for x in CardEncodings.of(params).xs] == [
        e["x"] for e in vectors["more_encodings"]
    ]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    VECTORS.write_text(json.dumps(make_vectors(), indent=2) + "\n")
