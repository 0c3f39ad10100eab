"""What holds for every game in the registry, written once (issue 21): a game added to the
registry gets these tests without writing them. Here: its configuration on the wire, and random
hands played through the interface alone; beside it, test_every_game_properties.py (refusals,
views, the audit), test_every_game_session.py (matches, transcripts, verify) and
test_every_game_text.py (the tables at 80×24). ``CONFIGS`` is what they are parametrised over.
Each game's own properties (where every card is, its rules one by one) stay in its own files."""

from __future__ import annotations

import random

import pytest

from p2pwhist.games.base import HonourPolicy
from p2pwhist.games.registry import GAMES, game_entry, game_from_wire
from p2pwhist.text import Style, seat_names

PLAIN = Style(False)
# Every game at every table size, under each value of each of its options.
CONFIGS = [
    pytest.param(entry.make(players, **{option.name: choice}) if option else entry.make(players),
                 id=f"{name}-{players}" + (f"-{option.name}={choice}" if option else ""))
    for name, entry in GAMES.items()
    for players in entry.players
    for option, choice in ([(o, c) for o in entry.options for c in o.choices] or [(None, None)])
]


def dealt(game, seed: int):
    rng = random.Random(seed)
    deck = list(game.deck())
    rng.shuffle(deck)
    return game.new_hand(game.first_dealer(deck[:game.players]), (), deck, HonourPolicy.REFUSE), rng


@pytest.mark.parametrize("game", CONFIGS)
def test_the_configuration_goes_over_the_wire_and_back(game):
    assert game_from_wire(game.to_wire()) == game == game_entry(game).from_wire(game.to_wire())


@pytest.mark.parametrize("game", CONFIGS)
def test_random_hands_play_to_a_result_through_the_interface_alone(game):
    entry = game_entry(game)
    for seed in range(3):
        hand, rng = dealt(game, seed)
        while not hand.is_over:
            seat = hand.current_seat
            moves = hand.legal_moves()
            assert moves and len({move.position for move in moves}) == len(moves)
            for other in range(game.players):
                view = hand.view(other)
                assert view.turn == seat and view.legal_moves == (moves if other == seat else [])
            view = hand.view(seat)
            for move in moves:  # what a person types back is the move
                assert view.refusal(move) is None and view.parse_move(view.describe_move(move)) == move
            entry.text.table(view, seat_names(game.players, seat), PLAIN)
            move = rng.choice(moves)
            hand.check(move)
            hand.apply(move)
        result = hand.result()
        assert len(result.scores) == len(result.points) == game.players
        assert entry.text.result_line(result, seat_names(game.players))
