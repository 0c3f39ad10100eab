"""The endgame solver against plain minimax: every move of random small positions, valued the
same by both (the solver's table, window and merged cards change how fast, never what)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.games.doubledummy import MARGIN, Position, Solver


def _legal(hands, reserves, looks, seat, led, blind_pick):
    hand, reserve = hands[seat], reserves[seat]
    if not hand:
        if not looks[seat]:
            return [sorted(reserve)[blind_pick % len(reserve)]] if reserve else []
        return sorted(reserve)
    if led is None:
        return sorted(hand)
    following = [c for c in hand if c // 13 == led // 13]
    if following:
        return sorted(following)
    return sorted(hand | reserve) if looks[seat] else sorted(hand)


def _strength(card, led, trump):
    return card % 13 + (100 if card // 13 == trump else 50 if card // 13 == led // 13 else 0)


def _minimax(hands, reserves, looks, turn, led, trump, blind_pick):
    """Seat 0's tricks from here, by trying everything."""
    moves = _legal(hands, reserves, looks, turn, led, blind_pick)
    if not moves:
        return 0
    values = [_after(hands, reserves, looks, turn, led, trump, blind_pick, card) for card in moves]
    return max(values) if turn == 0 else min(values)


def _after(hands, reserves, looks, turn, led, trump, blind_pick, card):
    hands = [set(h) for h in hands]
    reserves = [set(r) for r in reserves]
    (hands if card in hands[turn] else reserves)[turn].discard(card)
    if led is None:
        return _minimax(hands, reserves, looks, 1 - turn, card, trump, blind_pick)
    winner = turn if _strength(card, led, trump) > _strength(led, led, trump) else 1 - turn
    looks = list(looks)
    looks[winner] = True
    return (winner == 0) + _minimax(hands, reserves, looks, winner, None, trump, blind_pick)


@st.composite
def positions(draw):
    rng = random.Random(draw(st.integers(0, 2**32)))
    tricks = draw(st.integers(1, 5))
    split = [draw(st.integers(0, tricks)) for _ in range(2)]  # reserve cards per seat
    cards = rng.sample(range(52), 2 * tricks)
    hands, reserves = [], []
    for seat in range(2):
        mine = cards[seat * tricks:(seat + 1) * tricks]
        reserves.append(set(mine[:split[seat]]))
        hands.append(set(mine[split[seat]:]))
    turn = draw(st.integers(0, 1))
    led = None
    if draw(st.booleans()):  # the other seat has led a card already, from its hand if it holds any
        leader = 1 - turn
        led = min(hands[leader] or reserves[leader])
        (hands[leader] if hands[leader] else reserves[leader]).discard(led)
    trump = draw(st.integers(-1, 3))
    looks = (draw(st.booleans()), draw(st.booleans()))
    won = (draw(st.integers(0, 4)), draw(st.integers(0, 4)))
    return hands, reserves, looks, turn, led, trump, won, draw(st.integers(0, 5))


def _mask(cards):
    return sum(1 << c for c in cards)


@settings(max_examples=300, deadline=None)
@given(positions())
def test_every_move_is_valued_as_minimax_values_it(case):
    hands, reserves, looks, turn, led, trump, won, blind_pick = case
    moves = _legal(hands, reserves, looks, turn, led, blind_pick)
    position = Position(hands=(_mask(hands[0]), _mask(hands[1])), turn=turn, trump=trump,
                        reserves=(_mask(reserves[0]), _mask(reserves[1])), looks=looks,
                        led=-1 if led is None else led)
    remaining = (len(hands[0]) + len(reserves[0]) + len(hands[1]) + len(reserves[1]) + (led is not None)) // 2
    fast = Solver(trump, blind_pick).values(position, won)
    exact = Solver(trump, blind_pick).values(position, won, exact=True)
    assert sorted(fast) == sorted(exact) == moves
    for card in moves:
        seat0 = _after(hands, reserves, looks, turn, led, trump, blind_pick, card)
        mine = seat0 if turn == 0 else remaining - seat0
        ahead = won[turn] + mine - (won[1 - turn] + remaining - mine)
        outcome = (ahead > 0) - (ahead < 0)
        assert fast[card] == outcome, card
        assert abs(exact[card] - (outcome + MARGIN * ahead)) < 1e-9, card


@settings(max_examples=200, deadline=None)
@given(positions())
def test_a_positions_outcome_is_its_best_moves_value(case):
    hands, reserves, looks, turn, led, trump, won, blind_pick = case
    position = Position(hands=(_mask(hands[0]), _mask(hands[1])), turn=turn, trump=trump,
                        reserves=(_mask(reserves[0]), _mask(reserves[1])), looks=looks,
                        led=-1 if led is None else led)
    if not _legal(hands, reserves, looks, turn, led, blind_pick):
        return
    values = Solver(trump, blind_pick).values(position, won)
    assert Solver(trump, blind_pick).outcome(position, won) == max(values.values())
