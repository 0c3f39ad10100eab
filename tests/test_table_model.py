"""The full-screen table without a terminal: ``FullScreenPlayer`` driven by the calls the game
makes (``follow``, ``choose``, ``news``) and by keys, its screen rendered by urwid into text,
and its model (``p2pwhist.ui.model``) on its own. Issue 23's items 2, 3, 4 and 6 and its
features (the last trick, the bell, forced moves) each have a test here.

The clock is trio's autojump clock where time matters; nothing asserts how long anything took.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import BinaryIO

import pytest
import trio
import trio.testing
import urwid
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pwhist import text
from p2pwhist.cli import build_parser
from p2pwhist.games.base import Play
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.local import LocalMatch
from p2pwhist.table import Notice, Presence
from p2pwhist.text import Style
from p2pwhist.ui.fullscreen import MIN_COLS, MIN_ROWS, FullScreenPlayer, _Hanging
from p2pwhist.ui.model import Closing, Popup, TableModel

SIZE = (100, 30)
PLAIN = Style(color=False, symbols=False)  # letters for suits: what the tests type reads as it shows


def _player(name: str = "boxwhist", players: int = 2, **options) -> FullScreenPlayer:
    entry = GAMES[name]
    full = FullScreenPlayer(color=False, **options)
    full.model.style = PLAIN
    full.sit(entry.text, 0, ["You", *(f"bot-{seat}" for seat in range(1, players))])
    return full


def _screen(full: FullScreenPlayer, size: tuple[int, int] = SIZE) -> str:
    full.refresh()
    return "\n".join(line.decode() for line in full._root.render(size, focus=True).text)


def _press(full: FullScreenPlayer, *keys: str) -> None:
    for key in keys:
        full._root.keypress(SIZE, key)


def _until(local: LocalMatch, rng: random.Random, ready: Callable[[LocalMatch], bool],
           on_turn: Callable[[LocalMatch], None] = lambda local: None) -> None:
    """Random moves in every seat until ``ready(local)`` before a turn; ``on_turn`` before each."""
    bot = RandomBot(rng)
    while not ready(local):
        turn = local.next_turn()
        assert turn is not None, "the match ended first"
        on_turn(local)
        local.play(bot.choose(turn.view()))


def _following(full: FullScreenPlayer) -> Callable[[LocalMatch], None]:
    """Show the table before each turn, as ``cli_play._local_turns`` does."""
    return lambda local: full.follow(local.match)


def _local(name: str, players: int, seed: int, hands: int = 2) -> tuple[LocalMatch, random.Random]:
    rng = random.Random(seed)
    return LocalMatch(GAMES[name].make(players), MatchLength(hands=hands), rng), rng


# -- item 2: the score rows at every hand's end ---------------------------------------------------

SCORE_LABEL = {"boxwhist": "Hands won:", "box": "Points:", "germanwhist": "Hands won:"}


@pytest.mark.parametrize("name", sorted(GAMES))
async def test_the_score_rows_show_the_points_after_every_hand(name):
    entry = GAMES[name]
    local, rng = _local(name, entry.default_players, seed=4, hands=3)
    full = _player(name, entry.default_players)
    for hand in (1, 2):
        _until(local, rng, lambda local, hand=hand: len(local.match.results) == hand, _following(full))
        full.follow(local.match)  # the hand's end, as ``_local_turns`` shows it
        _press(full, "esc")  # its result popup closed: the table beneath it
        rows = [line.strip() for line in _screen(full).split("\n") if line.strip().startswith(SCORE_LABEL[name])]
        assert rows == [f"{SCORE_LABEL[name]:<12}{text.tally(full.model.names, local.match.points)}"], \
            _screen(full)


# -- item 3: popups and the keys that close them ----------------------------------------------------


def _box_open_on_our_turn(seed: int) -> tuple[LocalMatch, FullScreenPlayer]:
    """Box Whist at our turn, our box just opened (its alert up), the table followed all along."""
    local, rng = _local("boxwhist", 2, seed)
    full = _player()
    entry = GAMES["boxwhist"]

    def ready(local: LocalMatch) -> bool:
        turn = local.next_turn()
        return turn is not None and turn.seat == 0 and bool(entry.text.notices(turn.view())) \
            and len(turn.view().legal_moves) > 1
    _until(local, rng, ready, _following(full))
    full.follow(local.match)
    return local, full


async def test_a_key_that_closes_an_alert_also_counts_so_a_card_is_typed_whole():
    local, full = _box_open_on_our_turn(seed=1)
    view = local.next_turn().view()
    assert [popup.closing for popup in full.model.popups] == [Closing.PASSES]
    cell = next(cell for cell in full.model.cells if cell.legal and cell.card is not None
                and cell.move != full.model.cells[0].move)  # not the card Enter alone would play
    played: list[Play] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _choose(full, view, played))
        await trio.testing.wait_all_tasks_blocked()
        assert "box is open" in _screen(full)
        _press(full, *cell.typed.lower(), "enter")  # "5d": the 5 closes the alert and is typed
        await trio.testing.wait_all_tasks_blocked()
        assert played == [cell.move], full.model.message


async def _choose(full: FullScreenPlayer, view, played: list[Play]) -> None:
    played.append(await full.choose(view))


async def test_escape_only_closes_an_alert():
    local, full = _box_open_on_our_turn(seed=1)
    view = local.next_turn().view()
    played: list[Play] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _choose(full, view, played))
        await trio.testing.wait_all_tasks_blocked()
        _press(full, "esc")
        assert not full.model.popups and not played and full.model.typed == ""
        _press(full, "enter")  # then Enter plays the highlighted card
        await trio.testing.wait_all_tasks_blocked()
        assert played and played[0] in view.legal_moves


async def test_a_hands_end_is_closed_only_by_enter_space_or_escape_which_do_nothing_else():
    local, rng = _local("boxwhist", 2, seed=3)
    full = _player()
    _until(local, rng, lambda local: len(local.match.results) == 1, _following(full))
    full.model.popups.clear()  # the alerts of the hand
    full.follow(local.match)
    assert "Hand 1 over" in _screen(full)
    _press(full, "5", "d", "l")  # not one of them closes it, nor is typed
    assert "Hand 1 over" in _screen(full) and full.model.typed == ""
    _press(full, " ")
    assert "Hand 1 over" not in _screen(full) and full.model.typed == ""


async def test_escape_then_a_key_read_as_one_meta_key_is_both_keys():
    """urwid reads Esc and a key pressed within its ``complete_wait`` (0.125 s) as one "meta"
    key, as if typed with Alt: Esc closing an alert and space the hand's end behind it, quickly,
    close both."""
    local, rng = _local("boxwhist", 2, seed=3)
    full = _player()
    _until(local, rng, lambda local: len(local.match.results) == 1, _following(full))
    full.model.popups.clear()
    full.follow(local.match)
    full.model.popups.insert(0, Popup("Your box is open.", Closing.PASSES))
    _press(full, "meta  ")
    assert not full.model.popups and "Hand 1 over" not in _screen(full)


async def test_an_alert_already_standing_when_the_screen_first_shows_the_hand_is_not_popped_up_again():
    # A resumed game: the program stopped with the box open; its new screen starts there.
    local, _ = _box_open_on_our_turn(seed=1)
    full = _player()
    full.follow(local.match)
    screen = _screen(full)
    assert "Press" not in screen and not full.model.popups, screen
    assert "Your box is open" in screen  # on the message line: said, not in the way


# -- item 4: the table's connections, live ----------------------------------------------------------


async def test_a_seat_away_stays_on_screen_with_its_time_counting_down(autojump_clock):
    local, rng = _local("boxwhist", 2, seed=2)
    full = _player()
    _until(local, rng, lambda local: local.next_turn().seat == 1, _following(full))
    full.follow(local.match)
    full.news(Notice(1, Presence.GONE, 0, 300))
    assert "bot-1 lost connection; waiting for them to return (5:00 left)." in _screen(full)
    _press(full, "x")  # a key does not take it away
    await trio.sleep(42)
    assert "bot-1 lost connection; waiting for them to return (4:18 left)." in _screen(full)
    _press(full, "x")
    assert "Not your turn: waiting for bot-1 to return (4:18 left)" in _screen(full)
    full.news(Notice(1, Presence.BACK, 0, 0))
    screen = _screen(full)
    assert "lost connection" not in screen and "bot-1 is back." in screen


async def test_a_joiner_cut_off_from_the_host_is_told_so_and_its_move_is_refused_until_it_is_back(autojump_clock):
    local, rng = _local("boxwhist", 2, seed=2)
    full = FullScreenPlayer(color=False)
    full.model.style = PLAIN
    full.sit(GAMES["boxwhist"].text, 1, ["alice", "You"])  # a joiner: the host is seat 0
    _until(local, rng, lambda local: local.next_turn().seat == 1)
    view = local.next_turn().view()
    played: list[Play] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _choose(full, view, played))
        await trio.testing.wait_all_tasks_blocked()
        full.news(Notice(0, Presence.GONE, 0, 300))
        await trio.sleep(1)
        _press(full, "x", "enter")  # "x" closes the table's first alert, if any, and is typed
        _press(full, "esc", "enter")
        await trio.testing.wait_all_tasks_blocked()
        screen = _screen(full)
        assert not played, "a move made while cut off from the host"
        assert "Not played: the connection to alice, the host, is lost" in screen, screen
        assert "Lost the connection to alice, the host: reconnecting (4:59 left" in screen, screen
        full.news(Notice(0, Presence.BACK, 0, 0))
        assert "Back at the table." in _screen(full)
        _press(full, "enter")
        await trio.testing.wait_all_tasks_blocked()
        assert played and played[0] in view.legal_moves


def test_the_connection_line_counts_down_from_the_time_the_news_came():
    model = TableModel(PLAIN)
    model.sit(GAMES["boxwhist"].text, 0, ["You", "bob", "carol"])
    model.news(Notice(2, Presence.GONE, 0, 90), now=100.0)
    model.news(Notice(1, Presence.GONE, 0, 300), now=130.0)
    assert model.connection_line(131.0) == ("bob lost connection; waiting for them to return (4:59 left). "
                                            "carol lost connection; waiting for them to return (0:59 left).")
    assert "carol did not return in time" in model.connection_line(500.0)  # the count stops; the line stays
    model.news(Notice(2, Presence.SLOW, 40, 20), now=140.0)  # connected after all
    assert model.connection_line(141.0) == "bob lost connection; waiting for them to return (4:49 left)."
    assert model.counting and not model.cut_off


# -- item 6: the smallest terminal --------------------------------------------------------------------


async def test_below_the_smallest_size_the_screen_says_only_how_large_to_make_it():
    local, rng = _local("boxwhist", 2, seed=5)
    full = _player()
    _until(local, rng, lambda local: local.next_turn().seat == 0, _following(full))
    full.follow(local.match)
    small = _screen(full, (40, 12))
    assert small.split() == ["make", "the", "terminal", "at", "least", f"{MIN_COLS}\u00d7{MIN_ROWS}"], small
    whole = _screen(full, (MIN_COLS, 20))
    assert "Trumps:" in whole and "Hands won:" in whole and "Hand:" in whole


@pytest.mark.parametrize("name", sorted(GAMES))
async def test_every_table_of_every_game_fits_whole_at_the_smallest_size(name):
    entry = GAMES[name]
    players = max(entry.players)
    for seed in range(3):
        local, rng = _local(name, players, seed, hands=1)
        full = _player(name, players)
        full.news(Notice(1, Presence.GONE, 0, 300))  # the connection line takes a row too

        def fits(local: LocalMatch) -> bool:
            turn = local.next_turn()
            if turn is None:
                return True
            if turn.seat == 0:
                full.follow(local.match)
                full.refresh()
                assert full.fits(MIN_COLS, MIN_ROWS), _screen(full, (MIN_COLS, 40))
            return False
        _until(local, rng, fits)


# -- features: the last trick, the bell, forced moves ---------------------------------------------------


async def test_l_shows_the_last_trick_as_it_lay_and_the_key_that_closes_it_does_nothing_else():
    local, rng = _local("boxwhist", 2, seed=6)
    full = _player()
    _until(local, rng, lambda local: local.hand is not None and len(local.hand.tricks) == 3
           and local.next_turn().seat == 0, _following(full))
    view = local.next_turn().view()
    played: list[Play] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _choose(full, view, played))
        await trio.testing.wait_all_tasks_blocked()
        for popup in list(full.model.popups):
            _press(full, "esc")
        _press(full, "l")
        trick = GAMES["boxwhist"].text.finished_lines(view, 2, full.model.names, PLAIN)[0]
        assert trick.startswith("Trick 3:")
        screen = _screen(full)
        for line in trick.split("\n"):
            assert line.strip() in screen, screen
        _press(full, "enter")  # closes it, and plays nothing
        await trio.testing.wait_all_tasks_blocked()
        assert not played and "Trick 3:" not in _screen(full).split("History")[0]
        nursery.cancel_scope.cancel()


class _Written(urwid.display.raw.Screen):
    """urwid's terminal driver at a fixed size, keeping what is written to the terminal."""

    def __init__(self, written: list[str], keys: BinaryIO) -> None:
        super().__init__(input=keys)
        self._written = written

    def get_cols_rows(self) -> tuple[int, int]:
        return SIZE

    def write(self, data: str) -> None:
        self._written.append(data)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("quiet", [False, True])
async def test_the_bell_and_the_title_say_when_our_turn_comes_after_someone_elses(quiet):
    local, rng = _local("boxwhist", 2, seed=7)
    written: list[str] = []
    full = _player(quiet=quiet)
    typing, terminal = os.openpty()  # the screen's input: a terminal it may set to raw mode
    keys = os.fdopen(terminal, "rb", buffering=0)
    full._screen = _Written(written, keys)
    _until(local, rng, lambda local: local.next_turn().seat == 1, _following(full))
    full.follow(local.match)
    async with trio.open_nursery() as nursery:
        await nursery.start(full.open_screen)
        played: list[Play] = []
        written.clear()
        _until(local, rng, lambda local: local.next_turn().seat == 0, _following(full))
        full.follow(local.match)
        nursery.start_soon(lambda: _choose(full, local.next_turn().view(), played))
        await trio.testing.wait_all_tasks_blocked()
        signals = "".join(written)
        if quiet:
            assert "\a" not in signals and "\x1b]2;" not in signals
        else:
            assert "\a" in signals and "\x1b]2;p2pwhist: your turn\x07" in signals
        nursery.cancel_scope.cancel()
    keys.close()
    os.close(typing)


def test_our_turn_is_news_only_after_someone_elses():
    local, rng = _local("germanwhist", 2, seed=8)
    model = TableModel(PLAIN)
    model.sit(GAMES["germanwhist"].text, 0, ["You", "bob"])
    seen: list[tuple[int, bool]] = []

    def turn(local: LocalMatch) -> None:
        view = local.next_turn().view() if local.next_turn().seat == 0 else None
        model.follow(local.match, 0.0)
        if view is not None:
            seen.append((len(local.hand.tricks), model.ask(view, 0.0)))
    _until(local, rng, lambda local: len(local.match.results) == 1, turn)
    news = [fresh for _, fresh in seen]
    assert news[0] and True in news[1:] and False in news, seen  # we lead again after winning a trick: no bell


async def test_auto_forced_makes_our_only_legal_move_after_a_pause_with_a_line_saying_so(autojump_clock):
    local, rng = _local("boxwhist", 2, seed=9)
    _until(local, rng, lambda local: local.next_turn().seat == 0 and len(local.next_turn().view().legal_moves) == 1)
    view = local.next_turn().view()
    for auto in (False, True):
        full = _player(auto_forced=auto)
        full.follow(local.match)
        played: list[Play] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda full=full, played=played: _choose(full, view, played))
            await trio.testing.wait_all_tasks_blocked()
            if auto:
                assert "is made for you in a moment (--auto-forced)" in full.model.message
            await trio.sleep(60)
            assert played == ([view.legal_moves[0]] if auto else [])
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("command", [["play"], ["host"], ["join", "127.0.0.1"]])
def test_quiet_and_auto_forced_are_options_of_every_command_that_plays(command):
    args = build_parser().parse_args([*command, "--quiet", "--auto-forced"])
    assert args.quiet and args.auto_forced
    args = build_parser().parse_args(command)
    assert not args.quiet and not args.auto_forced


def test_a_seat_whose_wait_is_over_is_said_to_forfeit_when_its_move_is_due():
    """The count stops at 0:00, and a forfeit needs the absent seat to owe a message: the line
    says so instead of "waiting for them to return (0:00 left)" for as long as the others think."""
    model = TableModel(PLAIN)
    model.sit(GAMES["boxwhist"].text, 0, ["You", "bob"])
    model.news(Notice(1, Presence.GONE, 0, 10), now=100.0)
    assert "(0:05 left)" in model.connection_line(105.0)
    assert model.connection_line(111.0) == "bob did not return in time, and forfeits once a move of theirs is due."


@given(st.text(st.sampled_from("ab ♠10:漢\n"), max_size=200), st.integers(2, 100))  # (a wide character needs 2)
@settings(max_examples=300, deadline=None)
def test_the_tables_hanging_layout_shows_every_character_within_the_width(table, cols):
    """Whatever a table's text (wide characters, runs of spaces, empty lines), laid out with its
    wrapped rows indented: every row within the width, and every character but the spaces
    shown, in order."""
    rendered = urwid.Text(table, layout=_Hanging(text.LABEL)).render((cols,))
    rows = [row.decode() for row in rendered.text]
    assert all(urwid.str_util.calc_width(row, 0, len(row)) == cols for row in rows)
    assert "".join(rows).replace(" ", "") == table.replace(" ", "").replace("\n", "")


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("cols", [MIN_COLS, 80])
async def test_the_keys_line_is_shown_whole_at_every_width_allowed(name, cols):
    """The keys a seat has (its game's moves, hints, table talk, how to quit) are longer than a
    narrow screen is wide: they wrap below the table, and none is cut off."""
    full = FullScreenPlayer(color=False)
    full.allow_talk(lambda line: None)
    entry = GAMES[name]
    full.sit(entry.text, 0, ["You", "bob"], hints=entry.search_bot)
    keys = full._keys.text
    assert "Ctrl-C quit" in keys and "talk" in keys
    shown = " ".join(_screen(full, (cols, MIN_ROWS)).split())  # rows joined, the spaces as one
    assert " ".join(keys.split()) in shown


@pytest.mark.parametrize("meanwhile", [(), ("right",), ("Q",)])
def test_a_hints_move_is_chosen_so_enter_plays_it_unless_the_person_chose_meanwhile(meanwhile):
    """h, then the hint comes: its card is the one highlighted, and Enter plays it. A card chosen
    or typed while the hint was thought of is the person's choice: the hint only speaks."""
    local, rng = _local("boxwhist", 2, seed=3)
    _until(local, rng, lambda local: local.next_turn().seat == 0 and len(local.next_turn().view().legal_moves) > 2)
    view = local.next_turn().view()
    model = TableModel(PLAIN)
    model.sit(GAMES["boxwhist"].text, 0, ["You", "bob"])
    model.follow(local.match, 0.0)
    model.ask(view, 0.0)
    legal = [cell.move for cell in model.cells if cell.legal]
    first, hinted = legal[0], legal[-1]  # the focus starts on the first
    assert model.key("h", 0.0).hint
    for key in meanwhile:
        model.key(key, 0.0)
    model.hinted("Hint: the last card", hinted)
    assert model.message == "Hint: the last card"
    if not meanwhile:
        assert model.key("enter", 0.0).move == hinted
    elif meanwhile == ("right",):
        assert model.key("enter", 0.0).move == legal[1] != hinted
    else:
        assert model.typed == "Q" and model.cells[model.focus].move == first
