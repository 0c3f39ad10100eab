"""Wire form of the deck messages: round trips, and hostile input that must be refused."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.cards import Card
from p2pwhist.deck import (
    Claim,
    Commitment,
    Deck,
    DeckParams,
    LockPass,
    MessageFormatError,
    MessageType,
    PositionKey,
    PositionKeys,
    RemoteDeckError,
    SecretReveal,
    ShufflePass,
    Step,
    decode_message,
)
from p2pwhist.deck._curve import N, P

X = (5).to_bytes(32, "big")  # any value below p is well-formed; the curve is checked later
Y = (6).to_bytes(32, "big")
KEY = (N - 1).to_bytes(32, "big")

xs = st.integers(0, P - 1).map(lambda x: x.to_bytes(32, "big"))
keys = st.integers(1, N - 1)
decks = st.lists(xs, min_size=1, max_size=52, unique=True).map(tuple)
position_keys = st.dictionaries(st.integers(0, 51), keys, min_size=1, max_size=52).map(
    lambda d: PositionKeys(tuple(PositionKey(p, k) for p, k in sorted(d.items())))
)
messages = st.one_of(
    st.binary(min_size=32, max_size=32).map(Commitment),
    decks.map(ShufflePass),
    decks.map(LockPass),
    position_keys,
    st.builds(Claim, st.integers(0, 51), st.integers(0, 51).map(Card), keys),
    st.binary(min_size=32, max_size=32).map(SecretReveal),
)


@settings(max_examples=60, deadline=None)
@given(messages)
def test_every_message_survives_msgpack(message):
    wire = msgpack.unpackb(msgpack.packb(message.to_wire()))
    assert decode_message(wire) == message
    assert type(message).from_wire(wire) == message
    assert (
        decode_message(msgpack.unpackb(msgpack.packb(message.to_wire()), use_list=False)) == message
    )


def test_wire_form_is_plain_ints_bytes_and_lists():
    claim = Claim(3, Card(40), 7)
    assert claim.to_wire() == [5, 3, 40, (7).to_bytes(32, "big")]
    assert type(claim.to_wire()[2]) is int
    assert PositionKeys((PositionKey(1, 2),)).to_wire() == [4, [[1, (2).to_bytes(32, "big")]]]
    assert ShufflePass((X, Y)).to_wire() == [2, [X, Y]]


HOSTILE = [
    ("not an array", {"type": 1}, Step.MESSAGE),
    ("empty", [], Step.MESSAGE),
    ("unknown type", [9, X], Step.MESSAGE),
    ("bool type", [True, X], Step.MESSAGE),
    ("float type", [1.0, X], Step.MESSAGE),
    ("too many fields", [1, X, X], Step.COMMITMENT),
    ("too few fields", [1], Step.COMMITMENT),
    ("short digest", [1, X[:31]], Step.COMMITMENT),
    ("text digest", [1, "a" * 32], Step.COMMITMENT),
    ("bytearray digest", [1, bytearray(X)], Step.COMMITMENT),
    ("points not an array", [2, X], Step.SHUFFLE_PASS),
    ("no points", [2, []], Step.SHUFFLE_PASS),
    ("53 points", [2, [i.to_bytes(32, "big") for i in range(53)]], Step.SHUFFLE_PASS),
    ("x = p", [3, [P.to_bytes(32, "big")]], Step.LOCK_PASS),
    ("x too long", [3, [b"\x00" + X]], Step.LOCK_PASS),
    ("duplicate x", [3, [X, Y, X]], Step.LOCK_PASS),
    ("int point", [2, [5]], Step.SHUFFLE_PASS),
    ("bool position", [4, [[True, KEY]]], Step.POSITION_KEY),
    ("position 52", [4, [[52, KEY]]], Step.POSITION_KEY),
    ("negative position", [4, [[-1, KEY]]], Step.POSITION_KEY),
    ("key 0", [4, [[0, bytes(32)]]], Step.POSITION_KEY),
    ("key n", [4, [[0, N.to_bytes(32, "big")]]], Step.POSITION_KEY),
    ("int key", [4, [[0, 7]]], Step.POSITION_KEY),
    ("pair of three", [4, [[0, KEY, KEY]]], Step.POSITION_KEY),
    ("positions not increasing", [4, [[2, KEY], [1, KEY]]], Step.POSITION_KEY),
    ("repeated position", [4, [[2, KEY], [2, KEY]]], Step.POSITION_KEY),
    ("no keys", [4, []], Step.POSITION_KEY),
    ("bool card", [5, 0, False, KEY], Step.CLAIM),
    ("card 52", [5, 0, 52, KEY], Step.CLAIM),
    ("claim without key", [5, 0, 1], Step.CLAIM),
    ("long secret", [6, X + b"\x00"], Step.SECRET),
]


@pytest.mark.parametrize(
    "wire, step", [(w, s) for _, w, s in HOSTILE], ids=[name for name, _, _ in HOSTILE]
)
def test_hostile_wire_input_raises_the_format_error_of_its_step(wire, step):
    with pytest.raises(MessageFormatError) as caught:
        decode_message(wire)
    assert caught.value.step is step


def test_from_wire_of_one_type_refuses_another():
    with pytest.raises(MessageFormatError):
        Commitment.from_wire(SecretReveal(X).to_wire())
    with pytest.raises(MessageFormatError):
        ShufflePass.from_wire(LockPass((X,)).to_wire())


def test_constructors_validate_too():
    with pytest.raises(MessageFormatError):
        ShufflePass([X])  # a list is not frozen
    with pytest.raises(MessageFormatError):
        PositionKey(0, N)
    with pytest.raises(MessageFormatError):
        PositionKeys(((0, 1),))
    with pytest.raises(MessageFormatError):
        Claim(0, Card(1), 0)
    assert Claim(0, 1, 1).card is Card(1)
    assert MessageType.CLAIM.step is Step.CLAIM


garbage = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**64), 2**64),
        st.floats(),
        st.text(max_size=4),
        st.binary(max_size=40),
        st.sampled_from([X, KEY, P.to_bytes(32, "big")]),
    ),
    lambda children: (
        st.lists(children, max_size=4) | st.tuples(st.integers(0, 7), children, children)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(garbage)
def test_garbage_only_ever_raises_the_format_error(obj):
    try:
        decode_message(obj)
    except MessageFormatError:
        pass


@settings(max_examples=60, deadline=None)
@given(garbage)
def test_garbage_from_a_peer_is_blamed_on_that_peer(obj):
    deck = Deck(DeckParams(b"wire", 0, (0, 1), 3), 0, bytes(32))
    try:
        deck.receive_wire(2, obj)
    except RemoteDeckError as error:
        assert error.seat == 2
