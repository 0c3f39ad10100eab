"""The joint endgame search (``jointsearch``) on random small endgames of several deals: the
searching seat's cards the same in each, the other seat's split between hand and reserve not.

With one deal there is nothing to fuse, so it values every move as the solver does; with one
joint decision it is PIMC, the weighted mean of the deals' solved values; and each further joint
decision can only take value away (fewer strategies to choose from), never add it."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.games.doubledummy import OutOfTime, Position, Solver
from p2pwhist.games.jointsearch import Deal, joint_values


def _mask(cards):
    return sum(1 << c for c in cards)


@st.composite
def endgames(draw):
    """(deals, me, trump, looks, led, won): ``me`` holds the same cards in every deal."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    tricks = draw(st.integers(1, 4))
    me = draw(st.integers(0, 1))
    trump = draw(st.integers(-1, 3))
    looks = (draw(st.booleans()), draw(st.booleans()))
    cards = rng.sample(range(52), 2 * tricks + 1)
    led = -1
    if draw(st.booleans()):  # the other seat has led
        led = cards.pop()
    mine = cards[:tricks]
    theirs = cards[tricks:2 * tricks - (led >= 0)]  # the card led was theirs
    my_reserve = set(mine[:draw(st.integers(0, len(mine)))]) if looks[me] else set()  # our box is known
    my_hand = set(mine) - my_reserve
    deals = []
    for _ in range(draw(st.integers(1, 4))):
        box = set(rng.sample(theirs, rng.randint(0, len(theirs))))
        hands = [0, 0]
        reserves = [0, 0]
        hands[me], reserves[me] = _mask(my_hand), _mask(my_reserve)
        hands[1 - me], reserves[1 - me] = _mask(set(theirs) - box), _mask(box)
        deals.append((tuple(hands), tuple(reserves), draw(st.floats(0.1, 2.0)), rng.randrange(52)))
    won = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    return deals, me, trump, looks, led, won


def _deals(raw, trump):
    return [Deal(hands, reserves, weight, Solver(trump, pick)) for hands, reserves, weight, pick in raw]


def _solved(raw, me, trump, looks, led, won):
    """Each deal's solved values, every card as ``Solver.values`` gives it."""
    return [Solver(trump, pick).values(Position(hands=hands, turn=me, trump=trump, reserves=reserves, looks=looks,
                                                led=led), won)
            for hands, reserves, _, pick in raw]


@settings(max_examples=150, deadline=None)
@given(endgames(), st.integers(1, 4))
def test_one_deal_is_valued_as_the_solver_values_it(case, depth):
    raw, me, trump, looks, led, won = case
    raw = raw[:1]
    assert joint_values(_deals(raw, trump), me, trump, looks, led, won, depth) == _solved(raw, me, trump, looks,
                                                                                          led, won)[0]


@settings(max_examples=150, deadline=None)
@given(endgames())
def test_one_joint_decision_is_pimc_and_more_take_value_away(case):
    raw, me, trump, looks, led, won = case
    solved = _solved(raw, me, trump, looks, led, won)
    total = sum(weight for _, _, weight, _ in raw)
    pimc = {card: sum(values[card] * raw[i][2] for i, values in enumerate(solved)) / total for card in solved[0]}
    previous = joint_values(_deals(raw, trump), me, trump, looks, led, won, 1)
    assert previous.keys() == pimc.keys()
    for card in pimc:
        assert abs(previous[card] - pimc[card]) < 1e-9
    for depth in (2, 3, 4):
        joint = joint_values(_deals(raw, trump), me, trump, looks, led, won, depth)
        for card in joint:
            assert joint[card] <= previous[card] + 1e-9, (depth, card)
        previous = joint


def test_a_stop_ends_the_search_and_no_stop_changes_nothing():
    """The caller's ``stop`` is asked as the search goes (no clock here): saying stop raises
    ``OutOfTime``; never saying it leaves the values as without one."""
    rng = random.Random(4)
    cards = rng.sample(range(52), 12)
    mine, theirs = cards[:6], cards[6:]
    raw = []
    for _ in range(4):
        box = set(rng.sample(theirs, 2))
        raw.append(((_mask(mine), _mask(set(theirs) - box)), (0, _mask(box)), 1.0, rng.randrange(52)))
    args = (0, 1, (True, True), -1, (10, 10), 3)
    asked = []

    def never() -> bool:
        asked.append(1)
        return False

    assert joint_values(_deals(raw, 1), *args, stop=never) == joint_values(_deals(raw, 1), *args)
    assert asked
    with pytest.raises(OutOfTime):
        joint_values(_deals(raw, 1), *args, stop=lambda: True)
