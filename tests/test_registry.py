"""The registry and what is built from it (issue 21): each game's declared options become the
CLI's ``--NAME`` arguments and are checked against the chosen game; a game without a search bot
is offered no levels and no hints, and says so plainly."""

from __future__ import annotations

import dataclasses
import enum
import random

import pytest

from p2pwhist import cli
from p2pwhist.cli_play import _game_bot
from p2pwhist.games.base import ConfigError, GameOption
from p2pwhist.games.registry import FOLDERS, GAMES, chosen, options_offered
from p2pwhist.local import shuffled_deck
from p2pwhist.ui.terminal import hint, hint_bot


def test_every_folder_gives_one_game_whose_options_are_well_formed():
    assert len(GAMES) == len(FOLDERS)
    for entry in GAMES.values():
        assert entry.default_players in entry.players and entry.default_bot in entry.bots
        # its reasons on honour: each a reason a move is refused (a game without any has none)
        assert isinstance(entry.on_honour, frozenset) and all(isinstance(r, enum.Enum) for r in entry.on_honour)
        for option in entry.options:
            assert option.type in (str, int) and all(type(c) is option.type for c in option.choices)
            assert entry.make(entry.default_players, **{option.name: option.default}) == entry.make(
                entry.default_players)  # the default is what the game does unless told
    for name, offered in options_offered().items():  # one --NAME for all games: one type
        assert {o.type for e in GAMES.values() for o in e.options if o.name == name} == {offered.type}


def test_an_option_names_its_default_among_its_choices():
    with pytest.raises(ValueError, match="the default 'x' is not one of its choices"):
        GameOption("variant", str, ("a", "b"), "x", "a letter")


@pytest.mark.parametrize("name", sorted(options_offered()))
def test_the_cli_offers_each_option_of_every_game(name):
    parser = cli.build_parser()
    for command in ("play", "host"):
        (game, option), *_ = [(g, o) for g, e in GAMES.items() for o in e.options if o.name == name]
        args = parser.parse_args([command, "--game", game, f"--{name}", str(option.choices[-1])])
        assert getattr(args, name) == option.choices[-1]
        entry, made = chosen(game, None, {name: getattr(args, name)})
        assert made == entry.make(entry.default_players, **{name: option.choices[-1]})


def test_chosen_refuses_an_option_the_game_lacks_or_a_value_it_does_not_allow():
    with pytest.raises(ConfigError, match="boxwhist has no variant option"):
        chosen("boxwhist", None, {"variant": "seed"})
    with pytest.raises(ConfigError, match="box's variant is one of seed, pagat, not 'bridge'"):
        chosen("box", None, {"variant": "bridge"})
    with pytest.raises(ConfigError, match="box is for 2, 3, 4, 5, 6 players, not 7"):
        chosen("box", 7, {})


def test_a_game_without_a_search_bot_offers_no_levels_and_no_hints():
    entry = dataclasses.replace(GAMES["boxwhist"], bots={"random": GAMES["boxwhist"].bots["random"]},
                                default_bot="random")
    assert entry.search_bot is None and hint_bot(entry) is None
    assert _game_bot(entry, "random", None) is entry.bots["random"]
    with pytest.raises(ConfigError, match="boxwhist has no search bot, so no levels"):
        _game_bot(entry, "random", "hard")
    with pytest.raises(ConfigError, match=r"boxwhist has no 'search' bot \(it has random\)"):
        _game_bot(entry, "search", None)
    game = entry.make(2)
    hand = game.new_hand(0, (), cards=shuffled_deck(game, random.Random(3)))
    view = hand.view(hand.turn)
    assert len(view.legal_moves) > 1
    assert hint(hint_bot(entry), view).line == "No hint: this game has no search bot."
