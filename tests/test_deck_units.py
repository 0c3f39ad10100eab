"""Units of the deck package: parameters, the curve layer and the key derivations."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.cards import FULL_DECK, Card
from p2pwhist.deck import DeckParams, LocalDeckError
from p2pwhist.deck._curve import (
    B,
    CardEncodings,
    N,
    P,
    encode_card,
    multiply,
    point,
    product,
    scalar,
)
from p2pwhist.deck._keys import SeatKeys, commitment, fisher_yates, key_from_okm, uniform_below
from p2pwhist.deck._passes import decrypt, encrypt

PARAMS = DeckParams(b"units", 5, (3, 1, 2), 2)


def x_bytes(x: int) -> bytes:
    return x.to_bytes(32, "big")


def is_curve_x(x: int) -> bool:
    return x < P and pow((x**3 - 3 * x + B) % P, (P - 1) // 2, P) == 1


# DeckParams


def test_params_sort_cards_and_make_them_cards():
    assert PARAMS.cards == (Card(1), Card(2), Card(3))
    assert all(type(c) is Card for c in PARAMS.cards)
    assert PARAMS.size == 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {"game_id": "text"},
        {"game_id": b""},
        {"game_id": bytes(256)},
        {"hand": -1},
        {"hand": 2**32},
        {"hand": True},
        {"cards": ()},
        {"cards": (1, 1)},
        {"cards": (52,)},
        {"cards": (True,)},
        {"seats": 1},
        {"seats": 256},
        {"seats": 2.0},
    ],
)
def test_params_reject_bad_values(kwargs):
    values = {"game_id": b"g", "hand": 0, "cards": (0, 1), "seats": 2} | kwargs
    with pytest.raises(LocalDeckError):
        DeckParams(**values)


def test_contexts_are_length_prefixed_and_name_the_seat():
    assert PARAMS.hand_context() == b"\x05units\x00\x00\x00\x05"
    assert PARAMS.seat_context(1) == PARAMS.hand_context() + b"\x01"


# The curve layer


def test_point_accepts_exactly_the_x_coordinates_of_curve_points():
    on_curve = next(x for x in itertools.count(1) if is_curve_x(x))
    off_curve = next(x for x in itertools.count(1) if not is_curve_x(x))
    assert point(x_bytes(on_curve)) is not None
    assert point(x_bytes(off_curve)) is None
    assert point(x_bytes(on_curve + P)) is None  # x ≥ p, though x − p is on the curve
    assert point(x_bytes(on_curve)[1:]) is None
    assert point(b"\x00" + x_bytes(on_curve)) is None
    assert point(bytearray(x_bytes(on_curve))) is None


def test_multiplication_commutes_and_the_inverse_decrypts():
    x, q = encode_card(PARAMS.hand_context(), 7)
    a, b = 0x1234567890ABCDEF, N - 3
    ab = multiply(scalar(a), point(multiply(scalar(b), q)))
    ba = multiply(scalar(b), point(multiply(scalar(a), q)))
    assert ab == ba != x
    assert decrypt(point(ab), [a, b]) == x
    assert encrypt(q, [b, a]) == ab
    assert product([a, b, pow(a * b, -1, N)]) == 1


def test_card_encodings_are_distinct_curve_points_bound_to_game_and_hand():
    encodings = CardEncodings.of(DeckParams(b"units", 5, FULL_DECK, 2))
    assert len(set(encodings.xs)) == 52
    assert all(is_curve_x(int.from_bytes(x, "big")) for x in encodings.xs)
    assert encodings.card_at[encodings.xs[10]] == Card(10)
    assert encodings.point_of(Card(10)) is encodings.points[10]
    other_hand = CardEncodings.of(DeckParams(b"units", 6, FULL_DECK, 2))
    other_game = CardEncodings.of(DeckParams(b"unitz", 5, FULL_DECK, 2))
    assert not set(encodings.xs) & set(other_hand.xs)
    assert not set(encodings.xs) & set(other_game.xs)


# Key derivation


def test_key_reduction_covers_one_to_n_minus_one():
    assert key_from_okm(bytes(40)) == 1
    assert key_from_okm((N - 2).to_bytes(40, "big")) == N - 1
    assert key_from_okm((N - 1).to_bytes(40, "big")) == 1
    assert 1 <= key_from_okm(b"\xff" * 40) <= N - 1


def test_uniform_below_rejects_the_biased_top_draws():
    # 2^32 mod 3 == 1, so the single draw 2^32 − 1 would favour 0: it must be skipped.
    assert uniform_below(iter([2**32 - 1, 5]), 3) == 2
    assert uniform_below(iter([2**32 - 2]), 3) == (2**32 - 2) % 3


def test_fisher_yates_follows_the_draws():
    # i = 3: draw 1 → swap 3,1; i = 2: draw 0 → swap 2,0; i = 1: draw 1 → no swap.
    assert fisher_yates(4, iter([1, 0, 1])) == (2, 3, 0, 1)
    assert fisher_yates(1, iter([])) == (0,)


@settings(max_examples=30, deadline=None)
@given(secret=st.binary(min_size=32, max_size=32), size=st.integers(1, 52), seat=st.integers(0, 3))
def test_derived_keys_are_in_range_and_the_permutation_is_one(secret, size, seat):
    params = DeckParams(b"units", 1, tuple(range(size)), 4)
    keys = SeatKeys(params, seat, secret)
    assert sorted(keys.permutation) == list(range(size))
    assert all(1 <= k < N for k in (keys.deck_key, *keys.position_keys))
    assert len(set(keys.position_keys)) == size
    assert keys.deck_key not in keys.position_keys


def test_all_permutations_of_three_come_out_about_equally():
    params = DeckParams(b"units", 1, (0, 1, 2), 2)
    counts = Counter(SeatKeys(params, 0, i.to_bytes(32, "big")).permutation for i in range(600))
    assert len(counts) == 6 and min(counts.values()) > 60  # expected 100 each


def test_every_derivation_depends_on_seat_and_secret():
    a, b, c = (
        SeatKeys(PARAMS, 0, bytes(32)),
        SeatKeys(PARAMS, 1, bytes(32)),
        SeatKeys(PARAMS, 0, b"\x01" * 32),
    )
    assert len({a.deck_key, b.deck_key, c.deck_key}) == 3
    assert len({a.position_keys, b.position_keys, c.position_keys}) == 3
    assert commitment(PARAMS, 0, bytes(32)) != commitment(PARAMS, 1, bytes(32))
    assert commitment(PARAMS, 0, bytes(32)) != commitment(PARAMS, 0, b"\x01" * 32)
