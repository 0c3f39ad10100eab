"""A hint for a person (``h``): what the game's search bot would play from the person's view,
and why in a few words (``terminal.hint``, ``Searching.why``); never an error.

The screens' ``h`` is tested with them: ``test_ui.py`` (the line interface) and
``test_fullscreen.py`` (the full-screen table, which thinks of a hint off its event loop).
"""

from __future__ import annotations

import random
import re

import pytest
from helpers import turns

from p2pwhist.games.base import Play, View
from p2pwhist.games.bots import Weighed
from p2pwhist.games.box.search import BoxSearchBot
from p2pwhist.games.boxwhist.search import SearchBot
from p2pwhist.games.registry import GAMES
from p2pwhist.ui.terminal import Hint, Thinking, hint, hint_bot


@pytest.mark.parametrize("name, players, options, words", [
    ("boxwhist", 2, {}, "wins the hand in about "),
    ("boxwhist", 4, {}, "wins the hand in about "),
    ("box", 3, {}, "scores you a point in about "),
    ("box", 4, {"variant": "pagat"}, "scores you a point in about "),
    ("germanwhist", 2, {}, "wins the hand in about "),
])
def test_a_hint_names_the_legal_move_the_bot_weighed_best_and_says_why(name, players, options, words):
    entry = GAMES[name]
    made = []

    class Seen(hint_bot(entry)):  # the game's search bot, kept to read what it weighed
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    for view in turns(entry, players, seed=players, **options):
        made.clear()
        said = hint(Seen, view)
        if made and made[0].last_weighed:  # a decision the bot searched
            break
    else:
        pytest.fail("no decision with a choice in the hand")
    best, second = (view.describe_move(weighed.move) for weighed in made[0].last_weighed[:2])
    assert said.move == made[0].last_weighed[0].move and said.move in view.legal_moves
    assert re.fullmatch(rf"Hint: {re.escape(best)} - {words}\d+% of the deals tried "
                        rf"\(next best {re.escape(second)}, \d+%\)", said.line), said.line


def test_a_hint_thinks_at_the_level_the_person_chose():
    """``play --level easy`` makes the hints easy too: the level's budget, iterations and cap
    (not the iterations it ran: on a busy machine the cap stops it sooner)."""
    made = []

    class Seen(SearchBot):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    view = next(v for v in turns(GAMES["boxwhist"], 2, seed=2) if len(v.legal_moves) > 1)
    for level in ("easy", "normal"):
        made.clear()
        hint(Seen, view, thinking=Thinking(level))
        budget = SearchBot.budgets[level]
        assert (made[0].playouts, made[0].time_limit) == (budget.playouts, budget.seconds)
        assert 0 < made[0].last_samples <= budget.playouts


NAMED = {Play(1): "QH", Play(2): "8C"}.__getitem__


def test_box_whist_words_a_score_of_about_one_a_hand_won_and_minus_one_a_hand_lost():
    """The best move's share of the deals tried won (a draw half), and the next best's; a mean
    past the ends (the trick margin that breaks ties) stays within 0 and 100%."""
    bot = SearchBot(random.Random(0))
    bot.last_weighed = (Weighed(Play(1), 0.28, 90), Weighed(Play(2), 0.02, 90))
    assert bot.why(NAMED) == "wins the hand in about 64% of the deals tried (next best 8C, 51%)"
    bot.last_weighed = (Weighed(Play(1), 1.1, 90), Weighed(Play(2), -1.04, 90))
    assert bot.why(NAMED) == "wins the hand in about 100% of the deals tried (next best 8C, 0%)"


def test_box_words_a_score_of_the_games_point():
    bot = BoxSearchBot(random.Random(0))
    bot.last_weighed = (Weighed(Play(1), 0.8, 40), Weighed(Play(2), 0.55, 40))
    assert bot.why(NAMED) == "scores you a point in about 80% of the deals tried (next best 8C, 55%)"
    bot.last_weighed = (Weighed(Play(1), 1.03, 40),)  # the box cards left add a little
    assert bot.why(NAMED) == "scores you a point in about 100% of the deals tried"
    bot.last_weighed = ()  # no search: one choice (cards of one rank, closed box cards)
    assert bot.why(NAMED) == "your plays are all alike here"


def test_a_single_play_is_named_without_a_search():
    entry = GAMES["boxwhist"]
    view = next(view for view in turns(entry, 2, seed=1) if len(view.legal_moves) == 1)
    assert hint(hint_bot(entry), view) == Hint(f"Only one play: {view.describe_move(view.legal_moves[0])}.",
                                               view.legal_moves[0])


def test_a_bot_that_fails_or_no_search_bot_is_a_short_message_not_an_error():
    entry = GAMES["box"]
    view = next(view for view in turns(entry, 3, seed=1) if len(view.legal_moves) > 1)

    class Broken(BoxSearchBot):
        def choose(self, view: View) -> Play:
            raise RuntimeError("a bug")

    assert hint(Broken, view) == Hint("No hint: the computer player failed (RuntimeError).")
    assert hint(None, view) == Hint("No hint: this game has no search bot.")
