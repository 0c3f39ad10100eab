"""Invariants of the Box Whist engine under random legal play, for 2, 3 and 4 players: where
every card lies and what each seat may know, tracked from the rules text. What holds for every
game (refusals, a peer that knows only what it may see, the audit) is in test_every_game_*.py."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.games.boxwhist.engine import TRICKS_PER_HAND, TURN_UP, BoxWhist, BoxWhistHand

games = st.sampled_from([BoxWhist(2), BoxWhist(3), BoxWhist(4)])


def random_hand(game: BoxWhist, seed: int) -> tuple[BoxWhistHand, random.Random]:
    rng = random.Random(seed)
    deck = list(game.deck())
    rng.shuffle(deck)
    return BoxWhistHand(game, rng.randrange(game.players), TURN_UP, deck), rng


def places(hand: BoxWhistHand) -> list[int]:
    """Every position, once per place it is found."""
    found = [p for group in hand.hands + hand.boxes for p in group] + hand.stack
    found += [play.position for play in hand.trick]
    found += [play.position for trick in hand.tricks for play in trick.plays]
    return found


class Entitlement:
    """What each seat may know, tracked from the rules text, independently of the engine."""

    def __init__(self, hand: BoxWhistHand) -> None:
        layout = hand.layout
        self.public = {layout.stack[0], layout.trump_card}
        self.private = [set(h) for h in layout.hands]
        self.boxes = layout.boxes

    def after_play(self, position: int) -> None:
        self.public.add(position)  # a played card is face up

    def after_trick(self, hand: BoxWhistHand) -> None:
        trick = hand.tricks[-1]
        self.public |= {draw.position for draw in trick.draws}
        self.private[trick.winner] |= set(self.boxes[trick.winner])
        if hand.stack:
            self.public.add(hand.stack[0])

    def of(self, seat: int) -> set[int]:
        return self.public | self.private[seat]


def check_view(hand: BoxWhistHand, seat: int, allowed: set[int]) -> None:
    view = hand.view(seat)
    shown = {p: c for p, c in view.hand.items()}
    shown |= {p: c for _, p, c in view.box if c is not None}
    shown |= {p: view.card(p) for p in range(len(hand.cards)) if view.card(p) is not None}
    for p, card in shown.items():
        assert p in allowed, f"seat {seat} sees position {p}"
        assert card == hand.cards[p]
    others = {c for s in range(hand.players) for c in view.known_hand_cards(s)}
    assert others <= {hand.cards[p] for p in allowed}
    if view.exposed is not None:
        assert hand.stack[0] in allowed and view.exposed == hand.cards[hand.stack[0]]
    if not hand.may_look[seat]:
        assert all(c is None for _, _, c in view.box)


@settings(max_examples=60, deadline=None)
@given(game=games, seed=st.integers(0, 2**32))
def test_random_legal_play_keeps_every_invariant(game, seed):
    hand, rng = random_hand(game, seed)
    deck_size = len(game.deck())
    entitled = Entitlement(hand)
    stack_phase_tricks = len(hand.layout.stack) // game.players
    while not hand.is_over:
        assert sorted(places(hand)) == list(range(deck_size))  # every card in exactly one place
        for s in range(game.players):
            assert hand.visible_to(s) <= entitled.of(s)
            check_view(hand, s, entitled.of(s))
        move = rng.choice(hand.legal_moves())
        tricks_before = len(hand.tricks)
        hand.apply(move)
        entitled.after_play(move.position)
        if len(hand.tricks) > tricks_before:
            entitled.after_trick(hand)
            if len(hand.tricks) <= stack_phase_tricks:
                # rule 9: hand sizes stay as dealt, except that each box play adds a hand card
                for s in range(game.players):
                    assert len(hand.hands[s]) == len(hand.layout.hands[s]) + sum(
                        play.from_box for t in hand.tricks for play in t.plays if play.seat == s
                    )
    assert len(hand.tricks) == TRICKS_PER_HAND[game.players] == sum(hand.tricks_won)
    assert sorted(places(hand)) == list(range(deck_size))
    assert len(hand.tricks) * game.players == deck_size


def _state(hand: BoxWhistHand) -> tuple:
    return (places(hand), [hand.visible_to(s) for s in range(hand.players)], hand.turn, list(hand.tricks_won),
            list(hand.may_look), hand.exposed)


@settings(max_examples=20, deadline=None)
@given(game=games, seed=st.integers(0, 2**32))
def test_a_clone_plays_on_alone_and_as_the_original_would(game, seed):
    """The search bot's playouts run on clones: a clone's moves leave the original as it was,
    and the same moves on the original reach the same state and result."""
    hand, rng = random_hand(game, seed)
    for _ in range(rng.randrange(TRICKS_PER_HAND[game.players] * game.players)):
        hand.apply(rng.choice(hand.legal_moves()))
    before = _state(hand)
    copy = hand.clone()
    moves = []
    while not copy.is_over:
        moves.append(rng.choice(copy.legal_moves()))
        copy.apply(moves[-1])
    assert _state(hand) == before
    for move in moves:
        hand.apply(move)
    assert _state(hand) == _state(copy) and hand.result() == copy.result() and hand.tricks == copy.tricks
