"""Invariants of the Box engine under random play, for 2, 4 and 6 players, both variants: where
every card lies, what each seat may know (tracked from the rules text), that the game ends, and
how it is scored. What holds for every game (refusals, a peer that knows only what it may see,
the audit of a breach on honour) is in test_every_game_*.py."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.cards import CARDS
from p2pwhist.games.base import HonourPolicy, Play
from p2pwhist.games.box.engine import Box, BoxHand, Variant

games = st.sampled_from([Box(n, v) for n in (2, 4, 6) for v in Variant])
seeds = st.integers(0, 2**32)
# A game has at most 52 hand lays and, by the potential in box.py's header, 2 × 8 × players box
# takes and restocks: 52 + 16 × 6 = 148.
MOVE_BOUND = 148


def random_game(game: Box, seed: int, honour: HonourPolicy = HonourPolicy.REFUSE) -> tuple[BoxHand, random.Random]:
    rng = random.Random(seed)
    deck = list(CARDS)
    rng.shuffle(deck)
    return game.new_hand(rng.randrange(game.players), (), deck, honour), rng


def places(hand: BoxHand) -> list[int]:
    """Every position, once per place it is found."""
    found = [p for group in hand.hands + hand.extras for p in group] + hand.pile + hand.set_aside
    found += [p for slots in hand.slots for p in slots if p is not None]
    found += [lay.position for lay in hand.lays]
    return found


class Entitlement:
    """What each seat may know, tracked from the rules text, independently of the engine:
    its dealt hand (rule 3), its draws (rule 8), and every card laid, turned or put into an
    extra pile (rules 4-7): never a box card before it is taken, nor the pile."""

    def __init__(self, hand: BoxHand) -> None:
        self.public: set[int] = set()
        self.private = [set(h) for h in hand.layout.hands]

    def before(self, hand: BoxHand) -> None:
        self._hands = [set(h) for h in hand.hands]
        self._pile = list(hand.pile)

    def after(self, hand: BoxHand, move: Play) -> None:
        self.public.add(move.position)
        drawn = [set(h) - self._hands[s] - {move.position} for s, h in enumerate(hand.hands)]
        taken = set().union(*drawn)
        assert taken == set(self._pile[: len(taken)]), "draws come from the top of the pile"
        for seat, cards in enumerate(drawn):
            self.private[seat] |= cards

    def of(self, seat: int) -> set[int]:
        return self.public | self.private[seat]


def check_view(hand: BoxHand, seat: int, allowed: set[int]) -> None:
    view = hand.view(seat)
    assert set(view.known) <= allowed, f"seat {seat} sees {set(view.known) - allowed}"
    assert all(hand.cards[p] == c for p, c in view.known.items())
    assert set(view.hand) == set(hand.hands[seat])  # a seat always knows its own hand
    for _, p, card in view.box:
        assert card is None or p in hand.public  # a box card is known only if everyone saw it
    round_cards = [lay.card for lay in view.round]
    assert round_cards == [lay.card for lay in hand.lays] and all(lay.position in allowed for lay in view.round)
    for record in view.rounds:
        assert all(lay.position in allowed for lay in record.lays)
        assert record.too_high is None or record.too_high.position in allowed
    assert view.hand_sizes == tuple(map(len, hand.hands))
    assert view.box_sizes == tuple(len(hand.box(s)) for s in range(hand.players))


@settings(max_examples=60, deadline=None)
@given(game=games, seed=seeds)
def test_random_legal_play_ends_and_keeps_every_invariant(game, seed):
    hand, rng = random_game(game, seed)
    entitled = Entitlement(hand)
    steps = 0
    while not hand.is_over:
        steps += 1
        assert steps <= MOVE_BOUND, "the game must end"
        assert sorted(places(hand)) == list(range(52))  # every card in exactly one place
        for s in range(game.players):
            assert hand.visible_to(s) <= entitled.of(s)
            check_view(hand, s, entitled.of(s))
        move = rng.choice(hand.legal_moves())
        entitled.before(hand)
        hand.apply(move)
        entitled.after(hand, move)
        for s in range(game.players):  # hands never exceed four; the pile refills them
            assert len(hand.hands[s]) <= 4
    assert sorted(places(hand)) == list(range(52))
    result = hand.result()
    assert result.scores == tuple(len(hand.box(s)) for s in range(game.players))
    if game.variant is Variant.SEED:
        assert result.scores[hand.loser] == 0
        assert result.points == tuple(int(s != hand.loser) for s in range(game.players))
    else:
        assert len(hand.out) == game.players - 1 and result.points[hand.winner] == 1 and sum(result.points) == 1
    assert result.offenders == frozenset()
