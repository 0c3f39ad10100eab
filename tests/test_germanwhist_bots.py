"""German Whist's bots: the heuristic beats random play, the search bot's samples keep to what
its seat knows, and both only ever choose legal moves."""

from __future__ import annotations

import random

from helpers import check_one_move_per_run

from p2pwhist.games.bots import RandomBot, distinct_moves, make_bot
from p2pwhist.games.germanwhist.engine import GermanWhist
from p2pwhist.games.germanwhist.heuristic import GermanWhistHeuristicBot
from p2pwhist.games.germanwhist.search import _deal, _Knowledge, _replayed, _sampled
from p2pwhist.games.registry import GAMES
from p2pwhist.local import play_hand, shuffled_deck

ENTRY = GAMES["germanwhist"]
GAME = GermanWhist()


class Checked:
    """A bot whose every move is checked legal in its own view."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def choose(self, view):
        move = self.bot.choose(view)
        assert view.refusal(move) is None
        return move


def share_against_random(bot, decks: int, seed: int) -> float:
    """The bot's share of decided hands, each deck played with it in both seats."""
    rng = random.Random(seed)
    wins = decided = 0
    for number in range(decks):
        deck = shuffled_deck(GAME, rng)
        for seat in (0, 1):
            bots = [RandomBot(random.Random(number))] * 2
            bots[seat] = Checked(bot)
            result = play_hand(GAME.new_hand(number % 2, (), list(deck)), bots)
            decided += any(result.points)
            wins += result.points[seat]
    return wins / decided


def test_the_heuristic_beats_random_play():
    # 0.923 of 1000 hands in the measurement (tests run fewer).
    assert share_against_random(ENTRY.bots["heuristic"](random.Random(0)), 40, 1) >= 0.7


def test_the_search_bot_plays_legal_moves_and_says_why():
    bot = make_bot(ENTRY.bots["search"], random.Random(0), "easy")
    hand = GAME.new_hand(0, (), shuffled_deck(GAME, random.Random(2)))
    while not hand.is_over:
        view = hand.view(hand.turn)
        move = Checked(bot).choose(view)
        # The vote weighs one move for each run of equivalent cards; the end's solve, every move.
        weighed = distinct_moves(view, view.legal_moves) if view.stack_size else view.legal_moves
        if len(view.legal_moves) > 1:
            assert move in weighed and {w.move for w in bot.last_weighed} == set(weighed)
            assert "of the deals tried" in bot.why(view.describe_move)
        hand.apply(move)


def _equivalent(view, a, b) -> bool:
    """Cards of one suit with every card between them in our hand or played in a finished trick."""
    low, high = sorted((int(view.card(a.position)), int(view.card(b.position))))
    ours = {int(view.card(move.position)) for move in view.legal_moves}
    played = {int(play.card) for trick in view.tricks for play in trick.plays}
    return low // 13 == high // 13 and all(card in ours or card in played for card in range(low + 1, high))


def test_the_vote_weighs_one_move_for_each_run_of_equivalent_cards():
    """At every decision of random hands: each legal move is equivalent to exactly one move
    voted on, the lowest card of its run; a card still out between two of ours keeps them apart."""
    rng = random.Random(7)
    merged = apart = 0
    for number in range(30):
        hand = GAME.new_hand(number % 2, (), shuffled_deck(GAME, rng))
        while not hand.is_over:
            view = hand.view(hand.turn)
            more_merged, more_apart = check_one_move_per_run(view, distinct_moves(view, view.legal_moves), _equivalent)
            merged, apart = merged + more_merged, apart + more_apart
            hand.apply(rng.choice(view.legal_moves))
    assert merged > 100 and apart > 100  # both cases came up often


def test_a_sampled_deal_keeps_what_the_seat_sees_and_the_other_seats_voids():
    rng = random.Random(5)
    for deal in range(30):
        hand = GAME.new_hand(deal % 2, (), shuffled_deck(GAME, rng))
        for _ in range(rng.randrange(1, 50)):
            hand.apply(rng.choice(hand.legal_moves()))
        if hand.is_over:
            continue
        seat = hand.turn
        knowledge = _Knowledge(hand.view(seat))
        for _ in range(5):
            sample = knowledge.sample(rng)
            assert sorted(sample) == list(range(52))
            for p in hand.visible_to(seat):
                assert sample[p] == hand.cards[p]
            for p, suits in knowledge.forbidden.items():
                assert sample[p] // 13 not in suits
                assert hand.cards[p].suit not in suits  # the true deal meets every void too


def test_inference_picks_deals_on_which_the_other_seats_moves_were_likelier():
    """Against the heuristic, mid-stack: the deals inference picks make the other seat's asked
    moves likelier, under the model, than uniformly sampled deals do; without a model a deal is
    sampled as before."""
    model = GermanWhistHeuristicBot(random.Random(0))
    rng = random.Random(8)
    lifts = []
    for deal in range(6):
        hand = GAME.new_hand(deal % 2, (), shuffled_deck(GAME, rng))
        for _ in range(rng.randrange(12, 22)):  # both seats the heuristic, still in the stack phase
            hand.apply(model.choose(hand.view(hand.turn)))
        knowledge = _Knowledge(hand.view(hand.turn))
        assert knowledge.asked

        def likelihood(sampled) -> float:
            return _replayed(GAME, knowledge, [int(c) for c in sampled.cards], model)[1]

        uniform = [likelihood(_sampled(GAME, knowledge, None, rng)) for _ in range(150)]
        inferred = [likelihood(_sampled(GAME, knowledge, model, rng)) for _ in range(150)]
        lifts.append(sum(inferred) / sum(uniform))
    assert min(lifts) > 1 and sum(lifts) / len(lifts) > 1.5, lifts  # picked at random: about 1
    seeded = [_sampled(GAME, knowledge, None, random.Random(3)).cards for _ in range(2)]
    assert seeded[0] == seeded[1] == knowledge.sample(random.Random(3))


def _end_views(seed: int):
    """Views with a choice once the stack is gone (every card known to the seat to move)."""
    game = GermanWhist()
    rng = random.Random(seed)
    for number in range(3):
        hand = game.new_hand(number % 2, (), shuffled_deck(game, rng))
        bot = GAMES["germanwhist"].bots["heuristic"](rng)
        while not hand.is_over:
            view = hand.view(hand.turn)
            if not view.stack_size and len(view.legal_moves) > 1:
                yield hand, view
            hand.apply(bot.choose(view))


def test_once_the_stack_is_gone_the_end_is_solved_and_its_best_move_played():
    """Every move valued on the one deal there is (the values' exactness is the solver's own
    test, test_doubledummy.py), the best played."""
    from p2pwhist.games.germanwhist.search import GermanWhistSearchBot

    checked = 0
    for hand, view in _end_views(seed=4):
        bot = GermanWhistSearchBot(random.Random(1), playouts=40)
        move = bot.choose(view)
        assert bot.last_samples == 1 and bot.last_weighed[0].move == move
        assert sorted(w.move.position for w in bot.last_weighed) == sorted(m.position for m in view.legal_moves)
        checked += 1
    assert checked > 10


def test_an_end_not_solved_in_half_the_time_is_left_to_the_vote(monkeypatch):
    from p2pwhist.games import doubledummy
    from p2pwhist.games.germanwhist import search

    dealt = []
    monkeypatch.setattr(search, "_deal", lambda *job: dealt.append(1) or _deal(*job))
    hand, view = next(_end_views(seed=4))
    search.GermanWhistSearchBot(random.Random(1), playouts=40).choose(view)
    assert not dealt  # solved: no deal sampled for a vote
    monkeypatch.setattr(doubledummy, "_STOP_EVERY", 1)  # the solver asks at once whether to stop
    ticks = iter(range(10**6))  # each read of the clock a second later: half the time gone at once
    bot = search.GermanWhistSearchBot(random.Random(1), playouts=40, clock=lambda: float(next(ticks)), time_limit=3.0)
    assert view.refusal(bot.choose(view)) is None
    assert dealt and bot.last_samples >= 1
