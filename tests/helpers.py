"""Building fixed deals for scenario tests, and hands played at random."""

from __future__ import annotations

import random
from collections.abc import Iterator

from p2pwhist.cards import Card, Suit
from p2pwhist.games.base import GameEntry, HonourPolicy, View
from p2pwhist.games.boxwhist.engine import TURN_UP, BoxWhist, BoxWhistHand, Layout


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def make_deck(
    game: BoxWhist,
    dealer: int,
    hands: dict[int, str] | None = None,
    boxes: dict[int, str] | None = None,
    stack: str = "",
) -> list[Card]:
    """A deck in position order with the named cards where the layout deals them.

    Unnamed positions get the remaining cards in code order, so a scenario names only what
    matters to it."""
    layout = Layout.of(game.players, dealer, len(game.deck()))
    deck: list[Card | None] = [None] * len(game.deck())
    for placement, chosen in ((layout.hands, hands or {}), (layout.boxes, boxes or {})):
        for seat, text in chosen.items():
            for position, card in zip(placement[seat], cards(text), strict=False):
                deck[position] = card
    for position, card in zip(layout.stack, cards(stack), strict=False):
        deck[position] = card
    placed = [c for c in deck if c is not None]
    assert len(set(placed)) == len(placed), "a scenario names a card twice"
    rest = iter(c for c in game.deck() if c not in placed)
    return [c if c is not None else next(rest) for c in deck]


def deal(
    game: BoxWhist,
    dealer: int = 0,
    trump: Suit | None | object = TURN_UP,
    policy: HonourPolicy = HonourPolicy.REFUSE,
    **where,
) -> BoxWhistHand:
    """A hand on a fixed deck; ``trump`` names the trumps outright, or TURN_UP (rule 4)."""
    return BoxWhistHand(game, dealer, trump, make_deck(game, dealer, **where), policy)


def play(hand: BoxWhistHand, *moves: str) -> None:
    """Apply moves typed as a person would, each by the seat to act."""
    for text in moves:
        hand.apply(hand.view(hand.turn).parse_move(text))


class PublicView:
    """A snapshot of a ``BoxWhistView`` holding only its public API's values.

    It keeps no reference to the live view or the state, so a bot that reached for
    ``view._state`` (or anything else not in the public API) fails with AttributeError.
    """

    __slots__ = (
        "seat", "players", "dealer", "trump", "deck", "turn", "exposed", "stack_size", "trick", "tricks",
        "tricks_won", "may_look", "hand_sizes", "box_sizes", "hand", "box", "legal_moves", "game", "trump_turned",
        "known_hand_cards", "card",
    )

    def __init__(self, view) -> None:
        for name in self.__slots__[:-2]:
            setattr(self, name, getattr(view, name))
        known = {seat: view.known_hand_cards(seat) for seat in range(view.players)}
        self.known_hand_cards = known.__getitem__
        self.card = [view.card(p) for p in range(len(view.deck))].__getitem__


def check_one_move_per_run(view, distinct, equivalent) -> tuple[int, int]:
    """Check a search's ``distinct`` moves against the definition: each legal move of ``view``
    stands for itself or is ``equivalent(view, chosen, move)`` to exactly one of them, the
    lowest card of its run, in the order given. Returns (moves merged, pairs of one suit kept
    apart), so that a test can see both cases came up."""
    legal = view.legal_moves
    assert distinct == [move for move in legal if move in distinct]  # in the order given
    for move in legal:
        (stands_for,) = [chosen for chosen in distinct if chosen == move or equivalent(view, chosen, move)]
        assert int(view.card(stands_for.position)) <= int(view.card(move.position))
    apart = sum(int(view.card(a.position)) // 13 == int(view.card(b.position)) // 13
                for a in distinct for b in distinct if a != b)
    return len(legal) - len(distinct), apart


def turns(entry: GameEntry, players: int, seed: int, **options: str) -> Iterator[View]:
    """Every view of a seat to move in a hand played at random."""
    rng = random.Random(seed)
    game = entry.make(players, **options)
    deck = list(game.deck())
    rng.shuffle(deck)
    hand = game.new_hand(rng.randrange(players), [], deck)
    while (seat := hand.current_seat) is not None:
        view = hand.view(seat)
        yield view
        hand.apply(rng.choice(view.legal_moves))
