"""The Box search bot: sampled deals never contradict the seat's view (nor what an honest seat's
moves said), its playout engine keeps the rules, it reads no hidden state, plays only legal
moves and is repeatable from a seed.

No strength assertions here: ``scripts/duplicate.py --game box`` measures it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_box_bots import CONFIGS, IDS, Peer, PublicBoxView, new_game

from p2pwhist.cards import CARDS
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.box.engine import BoxHand, Phase
from p2pwhist.games.box.heuristic import BoxHeuristicBot
from p2pwhist.games.box.search import BoxKnowledge, BoxSearchBot


class Bounds:
    """Rule 9 from the engine's side: before each move, what the mover's true hand says about
    the positions in it (an opener from the hand holds nothing higher; a seat taking from its
    box holds nothing equal or lower than the card to beat)."""

    def __init__(self) -> None:
        self.low: dict[int, int] = {}
        self.high: dict[int, int] = {}

    def note(self, hand: BoxHand, move) -> None:
        seat = hand.turn
        held = hand.hands[seat]
        if hand.phase is not Phase.LAY:
            return
        if move.position in held and hand.to_beat is None:
            for p in held:
                self.high[p] = min(self.high.get(p, 14), hand.cards[move.position].rank)
        elif move.position not in held and hand.to_beat is not None:
            for p in held:
                self.low[p] = max(self.low.get(p, 2), hand.to_beat.rank + 1)

    def hold(self, p: int, rank: int) -> bool:
        return self.low.get(p, 2) <= rank <= self.high.get(p, 14)


def random_moments(game, games: int, seed: int, every: float = 0.3):
    """Yield (hand, seat, bounds) at random moments of games played by heuristic and random bots."""
    rng = random.Random(seed)
    for _ in range(games):
        hand = new_game(game, rng)
        bots = [BoxHeuristicBot(random.Random(s)) if rng.random() < 0.6 else RandomBot(random.Random(s))
                for s in range(game.players)]
        bounds = Bounds()
        while (turn := hand.turn) is not None:
            if rng.random() < every:
                yield hand, rng.randrange(game.players), bounds
            move = bots[turn].choose(hand.view(turn))
            bounds.note(hand, move)
            hand.apply(move)


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_no_sampled_deal_contradicts_the_view(game):
    rng = random.Random(game.players)
    moments = 0
    for hand, seat, bounds in random_moments(game, 12, seed=game.players + 100):
        view = hand.view(seat)
        visible = hand.visible_to(seat)
        assert all(bounds.hold(p, hand.cards[p].rank) for p in bounds.low | bounds.high), "the true deal"
        knowledge = BoxKnowledge(PublicBoxView(view))
        for _ in range(4):
            deal = knowledge.sample(rng)
            hidden = {p for p in range(len(CARDS)) if p not in visible and p not in hand.set_aside}
            hidden -= {lay.position for lay in hand.lays}
            assert set(deal) == hidden, "a card for every place the seat cannot see, and only there"
            cards = list(deal.values()) + [int(c) for c in view.known.values()]
            out_of_play = [int(hand.cards[p]) for p in hand.set_aside if p not in visible]
            assert sorted(cards + out_of_play) == list(range(len(CARDS))), "each card exactly once"
            assert all(bounds.hold(p, c % 13 + 2) for p, c in deal.items()), "a sampled hand breaks rule 9"
        moments += 1
    assert moments > 30


@pytest.mark.parametrize("game", CONFIGS, ids=IDS)
def test_the_inference_holds_at_a_table_that_lays_its_highest_card(game):
    """``inferred`` assumes a seat lays its highest card that passes; at a table of heuristic
    bots, which do, the true cards always meet it, and it says more than rule 9 alone."""
    rng = random.Random(game.players + 50)
    narrower = 0
    for _ in range(15):
        hand = new_game(game, rng)
        bots = [BoxHeuristicBot(random.Random(s)) for s in range(game.players)]
        while (turn := hand.turn) is not None:
            knowledge = BoxKnowledge(hand.view(rng.randrange(game.players)))
            for p in knowledge.unknown:
                rank = hand.cards[p].rank
                assert knowledge.inferred.get(p, -1) >> rank & 1
                narrower += knowledge.inferred.get(p) != knowledge.rules.get(p)
            hand.apply(bots[turn].choose(hand.view(turn)))
    assert narrower > 20


def test_a_seat_seen_not_to_lay_its_highest_card_is_not_assumed_to():
    """At a table of random bots: once a seat lays a card it held when it laid a lower one on a
    card it could have beaten with it, the bot assumes of its hand only rule 9."""
    game = CONFIGS[2]
    rng = random.Random(77)
    caught = 0
    for _ in range(20):
        hand = new_game(game, rng)
        passed_over: dict[int, list[tuple[set[int], int, int]]] = {s: [] for s in range(game.players)}
        unlike: set[int] = set()
        while (turn := hand.turn) is not None:
            move = RandomBot(rng).choose(hand.view(turn))
            held, to_beat = set(hand.hands[turn]), hand.to_beat
            if move.position in held:
                rank = hand.cards[move.position].rank
                if any(move.position in then and low < rank <= high for then, low, high in passed_over[turn]):
                    unlike.add(turn)
                if to_beat is not None:
                    passed_over[turn].append((held - {move.position}, rank, to_beat.rank))
            hand.apply(move)
            if hand.turn is None:
                break
            knowledge = BoxKnowledge(hand.view(hand.turn))
            for seat in unlike - {hand.turn}:
                caught += 1
                assert all(knowledge.inferred.get(p) == knowledge.rules.get(p) for p in hand.hands[seat])
    assert caught > 20


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(CONFIGS), st.integers(0, 2**32))
def test_playout_engine_keeps_the_rules(game, seed):
    """From a random moment, rebuilt from one seat's view with the true cards filled in, the
    playout engine and ``BoxHand`` agree move by move: legal moves, turn, boxes, points."""
    rng = random.Random(seed)
    hand = new_game(game, rng)
    for _ in range(rng.randrange(30)):
        hand.apply(rng.choice(hand.legal_moves()))
        assume(hand.turn is not None)
    seat = rng.randrange(game.players)
    knowledge = BoxKnowledge(hand.view(seat))
    sim = knowledge.sim({p: int(hand.cards[p]) for p in knowledge.unknown})
    while hand.turn is not None:
        assert sim.turn == hand.turn
        assert sorted(sim.legal()) == [m.position for m in hand.legal_moves()]
        move = rng.choice(hand.legal_moves())
        hand.apply(move)
        sim.apply(move.position)
        assert [sorted(p for p in s if p is not None) for s in sim.slots] == [sorted(hand.box(s))
                                                                             for s in range(game.players)]
        assert sim.hands == hand.hands
    assert sim.turn is None
    assert [sim.points(s) for s in range(game.players)] == list(hand.result().points)


@pytest.mark.parametrize("game", CONFIGS[:4], ids=IDS[:4])
def test_bot_reads_no_hidden_state_and_plays_legal_moves(game):
    """From a peer's state (no card its seat may not know) through a public snapshot, the bot
    makes a legal move, the same one as from the full state with the same seed."""
    rng = random.Random(game.players * 7)
    decisions = 0
    for _ in range(3):
        full = new_game(game, rng)
        seat = rng.randrange(game.players)
        peer = Peer(full, seat)
        while (turn := full.turn) is not None:
            view = full.view(turn)
            if turn == seat:
                assert all(card is None for p, card in enumerate(peer.state.cards) if p not in full.visible_to(seat))
                bot_seed = rng.randrange(1 << 30)
                move = BoxSearchBot(random.Random(bot_seed), playouts=40).choose(PublicBoxView(peer.state.view(seat)))
                assert full.refusal(move) is None
                assert BoxSearchBot(random.Random(bot_seed), playouts=40).choose(view) == move
                decisions += 1
            else:
                move = BoxHeuristicBot(random.Random(turn)).choose(view)
            peer.apply(move)
    assert decisions > 10


def test_deterministic_for_a_seed():
    game = CONFIGS[2]  # 4 players, seed rules

    def moves(seed: int) -> list:
        hand = new_game(game, random.Random(3))
        bots = [BoxSearchBot(random.Random(seed + s), playouts=30) for s in range(game.players)]
        played = []
        while (seat := hand.turn) is not None:
            played.append(bots[seat].choose(hand.view(seat)))
            hand.apply(played[-1])
        return played

    assert moves(1) == moves(1)


def a_choice_of_ranks(game, rng: random.Random) -> BoxHand:
    """A hand whose seat to move chooses between cards of two ranks or more."""
    while True:
        hand = new_game(game, rng)
        while hand.turn is not None and len({hand.cards[m.position].rank for m in hand.legal_moves()}) < 2:
            hand.apply(hand.legal_moves()[0])
        if hand.turn is not None:
            return hand


def test_time_cap_uses_the_clock_passed_in():
    """A clock that jumps a second per read and a 0.5 s cap: one deal is sampled, the next cut
    short and left out."""
    hand = a_choice_of_ranks(CONFIGS[2], random.Random(9))
    ticks = iter(range(1000))
    bot = BoxSearchBot(random.Random(0), playouts=10_000, clock=lambda: float(next(ticks)), time_limit=0.5)
    view = hand.view(hand.turn)
    assert view.refusal(bot.choose(view)) is None
    assert bot.last_samples == 1


def test_a_single_choice_is_played_without_search():
    """Closed box cards are one choice (nobody knows them): no deal is sampled."""
    game = CONFIGS[2]
    hand = new_game(game, random.Random(4))
    while hand.turn is not None:
        view = hand.view(hand.turn)
        if all(view.card(m.position) is None for m in view.legal_moves) and len(view.legal_moves) > 1:
            break
        hand.apply(BoxHeuristicBot(random.Random(0)).choose(view))
    bot = BoxSearchBot(random.Random(0))
    assert bot.choose(view) in view.legal_moves and bot.last_samples == 0 and bot.last_weighed == ()


def choice_of(view, move):
    """What the bot weighs ``move`` as: its rank, or None for a closed box card."""
    card = view.card(move.position)
    return None if card is None else card.rank


@pytest.mark.parametrize("game", CONFIGS[:4], ids=IDS[:4])
def test_last_weighed_has_each_choice_best_first_and_the_move_played_first(game):
    """One entry per distinct choice (a rank; the closed box cards), each a legal move with its
    mean score over every deal sampled, best first; the first is the move played."""
    rng = random.Random(game.players)
    for _ in range(3):
        hand = a_choice_of_ranks(game, rng)
        view = hand.view(hand.turn)
        bot = BoxSearchBot(random.Random(1), playouts=60)
        move = bot.choose(view)
        weighed = bot.last_weighed
        assert weighed[0].move == move
        assert [w.mean for w in weighed] == sorted((w.mean for w in weighed), reverse=True)
        assert all(w.move in view.legal_moves and w.deals == bot.last_samples for w in weighed)
        choices = [choice_of(view, w.move) for w in weighed]
        assert len(set(choices)) == len(choices) and set(choices) == {choice_of(view, m) for m in view.legal_moves}


def test_rejects_a_bad_budget_and_a_view_with_no_move():
    with pytest.raises(ValueError, match="playouts must be a positive int"):
        BoxSearchBot(random.Random(0), playouts=0)
    hand = new_game(CONFIGS[2], random.Random(0))
    with pytest.raises(ValueError, match="no move"):
        BoxSearchBot(random.Random(0)).choose(hand.view((hand.turn + 1) % 4))


def test_bounds_no_deal_can_meet_are_dropped():
    """Bounds that no deal meets mean a seat broke rule 9 (on honour: possible live, found by
    the audit); the bot still samples a deal, without them."""
    hand = new_game(CONFIGS[2], random.Random(2))
    knowledge = BoxKnowledge(hand.view(hand.turn))
    others = [p for p in knowledge.unknown if any(p in h for h in hand.hands)]
    for p in others:  # every other hand all twos: more twos than the pack holds
        knowledge.rules[p] = knowledge.inferred[p] = 1 << 2
    deal = knowledge.sample(random.Random(0))
    assert set(deal) == set(knowledge.unknown) and sorted(deal.values()) == sorted(knowledge.cards)
