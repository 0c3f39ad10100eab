"""Rule 12: match play, and the local runner."""

import random

import pytest
from helpers import cards, make_deck

from p2pwhist.games.base import ConfigError, HandResult
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MAX_HANDS, Match, MatchLength
from p2pwhist.local import play_match


def finish(match: Match, winner):
    """Record the hand in progress as won by ``winner`` (None: drawn): its point, as Box Whist."""
    players = match.game.players
    match.record(HandResult((0,) * players, frozenset(), tuple(int(seat == winner) for seat in range(players))))


def test_deal_passes_left_and_match_ends_after_n_hands():
    game = BoxWhist(3)
    match = Match.after_cut(game, MatchLength(hands=4), cards("9H 2D KS"))
    assert match.first_dealer == 1
    dealers = []
    while not match.is_over():
        dealers.append(match.next_dealer)
        match.start_hand(make_deck(game, match.next_dealer))
        assert not match.is_over(time_up=True)  # a hand in progress is finished
        finish(match, None)
    assert dealers == [1, 2, 0, 1]


def test_no_new_hand_once_the_time_is_up():
    match = Match(BoxWhist(2), MatchLength(minutes=30), 0)
    assert not match.is_over(time_up=False)
    assert not match.is_over(time_up=True)  # a match plays at least one hand, however long the cut took
    match.start_hand(make_deck(BoxWhist(2), 0))
    finish(match, 1)
    assert not match.is_over(time_up=False) and match.is_over(time_up=True)


def test_most_hands_wins_and_equal_is_a_drawn_match():
    match = Match(BoxWhist(2), MatchLength(hands=3), 0)
    for winner in (0, None, 1):
        match.start_hand(make_deck(BoxWhist(2), match.next_dealer))
        finish(match, winner)
    assert match.points == (1, 1) and match.winner is None
    match.length = MatchLength(hands=4)
    match.start_hand(make_deck(BoxWhist(2), match.next_dealer))
    finish(match, 1)
    assert match.winner == 1 and match.is_over()


def test_hands_must_be_recorded_in_order():
    match = Match(BoxWhist(2), MatchLength(hands=2), 0)
    with pytest.raises(ConfigError):
        finish(match, 0)
    match.start_hand(make_deck(BoxWhist(2), 0))
    with pytest.raises(ConfigError):
        match.start_hand(make_deck(BoxWhist(2), 1))


@pytest.mark.parametrize("length", [dict(hands=0), dict(minutes=-1), dict(hands=True), dict(hands=10**6)])
def test_match_length_is_validated(length):
    with pytest.raises(ConfigError):
        MatchLength(**length)


def test_an_open_match_has_no_set_end_but_the_cap():
    length = MatchLength()
    assert length.open and MatchLength.from_wire(length.to_wire()) == length
    match = Match(BoxWhist(2), length, 0)
    for _ in range(3):
        match.start_hand(make_deck(BoxWhist(2), match.next_dealer))
        finish(match, 0)
    assert not match.is_over() and match.is_over(time_up=True)
    match.hands += [match.hands[-1]] * (MAX_HANDS - 3)
    match.results += [match.results[-1]] * (MAX_HANDS - 3)
    assert match.is_over()


def test_match_length_wire_round_trip():
    length = MatchLength(hands=5, minutes=20)
    assert MatchLength.from_wire(length.to_wire()) == length
    with pytest.raises(ConfigError):
        MatchLength.from_wire({"hands": 5})


@pytest.mark.parametrize("players", [2, 3, 4])
def test_local_runner_plays_a_repeatable_match(players):
    def run(seed):
        rng = random.Random(seed)
        match = play_match(BoxWhist(players), MatchLength(hands=3), [RandomBot(rng) for _ in range(players)], rng)
        return [r.scores for r in match.results], match.winner

    scores, winner = run(7)
    assert len(scores) == 3 and all(sum(s) == {2: 26, 3: 17, 4: 13}[players] for s in scores)
    assert run(7) == (scores, winner)
