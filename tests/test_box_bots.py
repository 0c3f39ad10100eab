"""The Box heuristic bot: legal moves everywhere, only its seat's knowledge, its rules kept.

Games are seeded (2, 4 and 6 players, both variants). Strength is not tested here:
``scripts/bench_engine.py`` measures it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist.cards import CARDS
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.box.engine import Box, BoxHand, BoxView, Phase, Variant
from p2pwhist.games.box.heuristic import BoxHeuristicBot

CONFIGS = [Box(n, v) for n in (2, 4, 6) for v in Variant]
IDS = [f"{game.players}p-{game.variant.value}" for game in CONFIGS]


class PublicBoxView:
    """A snapshot of a ``BoxView`` holding only its public API's values (``card`` and
    ``extra_cards`` answer from the cards the seat may know). It keeps no reference to the
    view or the state, so a bot that reached for anything else fails with AttributeError."""

    __slots__ = (
        "box", "box_sizes", "dealer", "extras", "hand", "hand_sizes", "hands", "known", "legal_moves", "opener", "out",
        "phase", "pile_size", "players", "round", "rounds", "seat", "slots", "to_beat", "turn", "variant",
    )

    def __init__(self, view: BoxView) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(view, name))
        self.known = dict(view.known)

    def card(self, position: int):
        return self.known.get(position)

    def extra_cards(self, seat: int) -> tuple:
        return tuple(self.known[p] for p in self.extras[seat])


def new_game(game: Box, rng: random.Random) -> BoxHand:
    deck = list(CARDS)
    rng.shuffle(deck)
    return game.new_hand(rng.randrange(game.players), [], deck)


def rank_of(hand: BoxHand, position: int) -> int:
    return hand.cards[position].rank


def check_rules(hand: BoxHand, move) -> str | None:
    """The bot's rules (module docstring of games/box/heuristic.py) for the move it chose, judged
    with every card known; returns the rule it had a choice under, if any."""
    seat = hand.turn
    legal = hand.legal_moves()
    ranks = {rank_of(hand, m.position) for m in legal}
    if len(ranks) < 2:
        return None
    if hand.phase is Phase.RESTOCK:
        assert rank_of(hand, move.position) == min(ranks), "puts back its lowest extra card"
        return "restock"
    if legal[0].position in hand.hands[seat]:
        assert rank_of(hand, move.position) == max(ranks), "lays its highest card that passes"
        return "lay"
    to_beat = hand.to_beat
    known = [m.position for m in legal if m.position in hand.public]
    standing = [p for p in known if to_beat is not None and rank_of(hand, p) <= to_beat.rank]
    if standing:
        assert move.position in standing and rank_of(hand, move.position) == max(rank_of(hand, p) for p in standing)
        return "take a known card that stands"
    return None


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_heuristic_plays_legal_moves_by_its_rules_seeing_only_a_public_snapshot(game):
    """Every decision of seeded games, heuristic seats mixed with random ones: the move is
    legal, the same as the live view gives, and follows the bot's rules."""
    rng = random.Random(game.players * 10 + (game.variant is Variant.PAGAT))
    decisions = 0
    choices: dict[str, int] = {}
    for _ in range(60):
        hand = new_game(game, rng)
        heuristic = {seat for seat in range(game.players) if rng.random() < 0.6} or {0}
        seed = rng.randrange(1 << 30)
        bots = {seat: BoxHeuristicBot(random.Random(seed + seat)) for seat in heuristic}
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            if seat in heuristic:
                state = bots[seat].rng.getstate()
                move = bots[seat].choose(PublicBoxView(view))
                assert move in view.legal_moves and hand.refusal(move) is None
                bots[seat].rng.setstate(state)
                assert bots[seat].choose(view) == move, "the snapshot and the live view disagree"
                rule = check_rules(hand, move)
                if rule:
                    choices[rule] = choices.get(rule, 0) + 1
                decisions += 1
            else:
                move = RandomBot(rng).choose(view)
            hand.apply(move)
        assert hand.is_over
    assert decisions > 500
    assert choices.get("lay", 0) > 20
    if game.variant is Variant.PAGAT and game.players > 2:
        assert choices.get("restock", 0) > 0 and choices.get("take a known card that stands", 0) > 0


class Peer:
    """Seat ``seat``'s own copy of a game, as a peer holds it: a ``BoxHand`` whose deck has
    None at every position the seat may not know, told each card as it is revealed."""

    def __init__(self, full: BoxHand, seat: int) -> None:
        self.full, self.seat = full, seat
        self.state = full.game.new_hand(full.dealer, [], [None] * len(full.cards))
        self._learn()

    def _learn(self) -> None:
        for position in self.full.visible_to(self.seat):
            self.state.learn(position, self.full.cards[position])

    def apply(self, move) -> None:
        # The card is claimed (a hand card), turned (a box card) or public (an extra card).
        self.state.learn(move.position, self.full.cards[move.position])
        self.full.apply(move)
        self.state.apply(move)
        self._learn()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CONFIGS), st.integers(0, 2**32))
def test_heuristic_decides_on_a_state_that_holds_only_what_its_seat_may_know(game, seed):
    """The bot plays one seat from a peer's state, which has no card its seat may not know
    (others' hands, every closed box card, its own included, the pile): it chooses as it does
    from the full state's view, and its move is legal there."""
    rng = random.Random(seed)
    full = new_game(game, rng)
    seat = rng.randrange(game.players)
    peer = Peer(full, seat)
    bot = BoxHeuristicBot(random.Random(seed))
    while (turn := full.turn) is not None:
        if turn == seat:
            assert all(
                card is None for p, card in enumerate(peer.state.cards) if p not in full.visible_to(seat)
            ), "the peer holds a card its seat may not know"
            view = peer.state.view(seat)
            assert view == full.view(seat)
            state = bot.rng.getstate()
            move = bot.choose(view)
            bot.rng.setstate(state)
            assert bot.choose(full.view(seat)) == move
            assert full.refusal(move) is None
        else:
            move = RandomBot(rng).choose(full.view(turn))
        peer.apply(move)
    assert peer.state.is_over and peer.state.result().points == full.result().points


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_heuristic_games_repeat_from_their_seeds(game):
    def moves(seed: int) -> list:
        rng = random.Random(seed)
        hand = new_game(game, rng)
        bots = [BoxHeuristicBot(random.Random(seed + seat)) for seat in range(game.players)]
        played = []
        while (seat := hand.turn) is not None:
            played.append(bots[seat].choose(hand.view(seat)))
            hand.apply(played[-1])
        return played

    assert moves(7) == moves(7)


def test_heuristic_refuses_a_view_with_no_move():
    game = Box(4)
    hand = new_game(game, random.Random(0))
    idle = (hand.turn + 1) % game.players
    with pytest.raises(ValueError, match="no move"):
        BoxHeuristicBot(random.Random(0)).choose(hand.view(idle))
