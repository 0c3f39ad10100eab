"""Invariants of the German Whist engine under random legal play, in both scorings."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.games.base import PLAYS, HonourPolicy, IllegalMove
from p2pwhist.games.germanwhist.engine import (
    HAND_SIZE,
    STACK,
    STACK_TRICKS,
    TRICKS_PER_HAND,
    GermanWhist,
    GermanWhistHand,
    Scoring,
    dealt_hand,
)

games = st.sampled_from([GermanWhist(2, scoring) for scoring in Scoring])


def random_hand(game: GermanWhist, seed: int) -> tuple[GermanWhistHand, random.Random]:
    rng = random.Random(seed)
    deck = list(game.deck())
    rng.shuffle(deck)
    return game.new_hand(rng.randrange(2), (), deck), rng


def places(hand: GermanWhistHand) -> list[int]:
    """Every position, once per place it is found."""
    found = [p for held in hand.hands for p in held] + hand.stack
    found += [play.position for play in hand.trick]
    found += [play.position for trick in hand.tricks for play in trick.plays]
    return found


class Entitlement:
    """What each seat may know, tracked from the rules text, independently of the engine: the
    turned cards and the played cards are public; a seat's dealt cards and the cards it drew
    face down are its own (rule 7)."""

    def __init__(self, hand: GermanWhistHand) -> None:
        self.public = {STACK[0]}
        self.private = [set(dealt_hand(seat, hand.dealer)) for seat in (0, 1)]

    def after_play(self, position: int) -> None:
        self.public.add(position)

    def after_trick(self, hand: GermanWhistHand) -> None:
        trick = hand.tricks[-1]
        if trick.drawn is not None:
            self.private[1 - trick.winner].add(trick.drawn)
        if hand.stack:
            self.public.add(hand.stack[0])

    def of(self, seat: int) -> set[int]:
        return self.public | self.private[seat]


def check_view(hand: GermanWhistHand, seat: int, allowed: set[int]) -> None:
    view = hand.view(seat)
    shown = dict(view.hand)
    shown |= {p: view.card(p) for p in range(len(hand.cards)) if view.card(p) is not None}
    for p, card in shown.items():
        assert p in allowed, f"seat {seat} sees position {p}"
        assert card == hand.cards[p]
    assert set(view.known_hand_cards(1 - seat)) <= {hand.cards[p] for p in allowed}
    if view.turned is not None:
        assert view.turned == hand.cards[hand.stack[0]]
    # Never a face-down stack card, nor the other seat's face-down draws.
    assert not allowed & set(hand.stack[1:])
    played = {play.position for trick in hand.tricks for play in trick.plays} | {play.position for play in hand.trick}
    assert not allowed & ({trick.drawn for trick in hand.tricks if trick.winner == seat} - played)


@settings(max_examples=60, deadline=None)
@given(game=games, seed=st.integers(0, 2**32))
def test_random_legal_play_keeps_every_invariant(game, seed):
    hand, rng = random_hand(game, seed)
    entitled = Entitlement(hand)
    while not hand.is_over:
        seat = hand.turn
        assert sorted(places(hand)) == list(range(52))  # every card in exactly one place
        for s in (0, 1):
            assert hand.visible_to(s) == entitled.of(s)
            check_view(hand, s, entitled.of(s))
        legal = hand.legal_moves()
        assert legal and len(set(legal)) == len(legal)
        if hand.trick:  # rule 5: follow suit when able
            led = hand.trick[0].card.suit
            held = [hand.cards[p].suit for p in hand.hands[seat]]
            assert all(hand.cards[m.position].suit is led for m in legal) or led not in held
        for move in PLAYS:
            if move in legal:
                assert hand.refusal(move) is None
                continue
            before = ([list(h) for h in hand.hands], len(hand.trick))
            try:
                hand.apply(move)
            except IllegalMove:
                pass
            else:
                raise AssertionError(f"{move} was applied but is not legal")
            assert ([list(h) for h in hand.hands], len(hand.trick)) == before and hand.turn == seat
        move = rng.choice(legal)
        tricks_before = len(hand.tricks)
        hand.apply(move)
        entitled.after_play(move.position)
        if len(hand.tricks) > tricks_before:
            entitled.after_trick(hand)
            if len(hand.tricks) <= STACK_TRICKS:  # rule 7: each draw keeps 13 cards in hand
                assert [len(h) for h in hand.hands] == [HAND_SIZE, HAND_SIZE]
    assert len(hand.tricks) == TRICKS_PER_HAND == sum(hand.tricks_won) and sorted(places(hand)) == list(range(52))
    assert sum(t.scoring for t in hand.tricks) == 13 == sum(hand.scoring_won)
    result = hand.result()
    assert sum(result.scores) == (13 if game.variant is Scoring.LAST13 else 26)


@settings(max_examples=30, deadline=None)
@given(game=games, seed=st.integers(0, 2**32), seat=st.integers(0, 1))
def test_a_peer_that_learns_only_what_it_may_see_follows_the_same_game(game, seed, seat):
    """A peer's state, fed the cards the rules reveal to its seat, agrees with the full state."""
    full, rng = random_hand(game, seed)
    known = full.visible_to(seat)
    peer = game.new_hand(full.dealer, (), [c if p in known else None for p, c in enumerate(full.cards)],
                         HonourPolicy.RECORD)
    while not full.is_over:
        if full.turn == seat:
            assert peer.legal_moves() == full.legal_moves()
        move = rng.choice(full.legal_moves())
        full.apply(move)
        peer.learn(move.position, full.cards[move.position])  # the player reveals the card it plays
        peer.apply(move)
        for p in peer.visible_to(seat) - known:
            peer.learn(p, full.cards[p])
        known = peer.visible_to(seat)
        assert known == full.visible_to(seat)
        assert all(peer.cards[p] is None for p in range(52) if p not in known)
    assert peer.tricks_won == full.tricks_won and peer.revokes == []
    assert peer.result() == full.result()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_a_clone_plays_on_alone(seed):
    """The search bot's playouts run on clones: a clone's moves leave the original as it was."""
    hand, rng = random_hand(GermanWhist(), seed)
    for _ in range(rng.randrange(52)):
        hand.apply(rng.choice(hand.legal_moves()))
    before = (places(hand), hand.visible_to(0), hand.visible_to(1), hand.turn, list(hand.tricks_won))
    copy = hand.clone()
    while not copy.is_over:
        copy.apply(rng.choice(copy.legal_moves()))
    assert (places(hand), hand.visible_to(0), hand.visible_to(1), hand.turn, list(hand.tricks_won)) == before
