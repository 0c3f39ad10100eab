"""A spectator's full-screen table without a terminal (issue 24): ``FullScreenPlayer`` sat with no
seat, following local matches of every game and table size, its screen rendered by urwid into
text. What is asserted: every seat by name with its counts, the trick, the stack's face-up card,
the scores; no hand pane of cards and no private card anywhere on screen; the keys a spectator
has (l, ?, q) and the ones it has not (moves, table talk); q ends what runs beside the screen.
"""

from __future__ import annotations

import re

import pytest
import trio
from test_table_model import PLAIN, _local, _press, _screen

from p2pwhist import text
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.registry import GAMES
from p2pwhist.local import LocalMatch
from p2pwhist.ui.fullscreen import MIN_COLS, FullScreenPlayer

SIZE = (80, 25)  # the size a person is told to make the terminal, and a little wider
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")
# The row that shows the stack or pile, whose top card is face up where the game turns one.
STACK_ROW = {"boxwhist": "Stack:", "box": "Pile:", "germanwhist": "Stack:"}
# The row of the cards on the table now: the trick, or Box's round.
TABLE_ROW = {"boxwhist": "Trick:", "box": "Laid:", "germanwhist": "Trick:"}
TABLES = [pytest.param(name, players, id=f"{name}-{players}") for name, entry in GAMES.items()
          for players in entry.players]


def _spectator(name: str, players: int) -> FullScreenPlayer:
    full = FullScreenPlayer(color=False)
    full.model.style = PLAIN
    full.sit(GAMES[name].text, None, NAMES[:players])
    return full


def _private_cards(local: LocalMatch) -> set[str]:
    """The labels (as ``PLAIN`` writes them) of the hand's cards no spectator may see."""
    hand = local.match.hands[-1]
    public = hand.visible_to(None)
    return {PLAIN.card(card) for position, card in enumerate(hand.cards)
            if card is not None and position not in public}


def _shown(label: str, screen: str) -> bool:
    return re.search(rf"(?<![0-9A-Za-z]){re.escape(label)}(?![0-9A-Za-z])", screen) is not None


@pytest.mark.parametrize("name, players", TABLES)
async def test_a_spectator_sees_every_seat_and_the_table_and_never_a_private_card(name, players):
    full = _spectator(name, players)
    local, rng = _local(name, players, seed=24, hands=1)
    bot = RandomBot(rng)
    screens = 0
    while (turn := local.next_turn()) is not None:
        full.follow(local.match)
        while full.model.popups:  # an alert ("the stack is gone"): Esc closes it and does nothing else
            _press(full, "esc")
        screen = _screen(full, SIZE)
        assert "make the terminal" not in screen
        assert "(watching)" in screen.split("\n")[0] and "you hold no seat" in screen
        assert "Your hand" not in screen and "Your turn" not in screen
        rows = {line.strip().split(":")[0]: line for line in screen.split("\n")}
        for seat in range(players):  # every seat by name, with its counts
            assert re.search(r"in hand|out: no box cards", rows[NAMES[seat]]), screen
        assert STACK_ROW[name] in screen and TABLE_ROW[name] in screen
        assert f"Waiting for {NAMES[turn.seat]}" in screen
        leaked = {label for label in _private_cards(local) if _shown(label, screen)}
        assert not leaked, f"private cards {sorted(leaked)} on a spectator's screen:\n{screen}"
        assert full.model.cells == [] and not full.model.asking
        screens += 1
        local.play(bot.choose(turn.view()))
    full.follow(local.match)
    assert screens > 5
    result = full.model.popups[0].body  # the hand's end, with the points, to acknowledge
    assert "Points" in result and all(NAMES[seat] in result for seat in range(players))


async def test_hands_played_faster_than_a_spectator_reads_leave_one_result_up_and_all_in_the_history():
    full = _spectator("boxwhist", 2)
    local, rng = _local("boxwhist", 2, seed=5, hands=3)
    bot = RandomBot(rng)
    while (turn := local.next_turn()) is not None:  # as cli_play._local_turns, nobody at the keys
        full.follow(local.match)
        if local.play(bot.choose(turn.view())) is not None:
            full.follow(local.match)
    results = [popup.body for popup in full.model.popups if "Points" in popup.body]
    assert len(results) == 1 and "Hand 3 over" in results[0]
    assert all(f"Hand {n}: " in "\n".join(full.model.history_before) for n in (1, 2, 3))
    _press(full, "enter")
    assert not any("Points" in popup.body for popup in full.model.popups)


async def test_the_face_up_stack_card_of_a_known_deal_is_on_the_spectators_table():
    full = _spectator("boxwhist", 2)
    local, _ = _local("boxwhist", 2, seed=7)
    local.next_turn()
    full.follow(local.match)
    exposed = local.match.hands[-1].view(None).exposed
    assert exposed is not None
    stack = next(line for line in _screen(full, SIZE).split("\n") if "Stack:" in line)
    assert f"{PLAIN.card(exposed)} face up" in stack


async def test_a_spectators_keys_play_nothing_and_say_so_and_l_shows_the_last_trick():
    full = _spectator("germanwhist", 2)
    local, rng = _local("germanwhist", 2, seed=3)
    bot = RandomBot(rng)
    for _ in range(4):  # two tricks
        local.play(bot.choose(local.next_turn().view()))
    full.follow(local.match)
    _press(full, "q", "s")  # a move typed: nothing is played
    assert "nothing to play" in full.model.message and full.model.typed == ""
    _press(full, "/")
    assert "cannot talk" in full.model.message and full.model.talking is None
    _press(full, "l")
    assert full.model.popups and full.model.popups[0].body.startswith("Trick 2:")
    assert "q or Ctrl-C quit" in _screen(full, SIZE).split("\n")[-1]


async def test_q_stops_watching_at_once_even_over_a_popup_and_run_gives_back_nothing():
    full = _spectator("box", 3)
    shown = trio.Event()

    async def watch() -> str:
        full.model.match_over("The match is over.")  # a popup only Enter, space or Esc closes
        shown.set()
        await trio.sleep_forever()
        return "never"

    async def person() -> None:
        await shown.wait()
        full._key("x")
        assert full.model.popups, "x closes no popup a spectator must acknowledge"
        full._key("q")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(person)
        assert await full.run(watch) is None


async def test_a_table_row_too_long_for_the_narrowest_screen_wraps_under_its_value():
    """At the narrowest screen allowed, every row of the table starts with its label (or is
    the hand's heading), or continues a row above under its value, indented as the values are."""
    label_row = re.compile(r"^ (-- |\S[^:]*: )")
    continued = re.compile(r"^ {%d}\S" % (1 + text.LABEL))  # the screen's margin, then the labels' width
    wrapped = 0
    for name, entry in GAMES.items():
        for players in entry.players:
            full = _spectator(name, players)
            local, rng = _local(name, players, seed=24, hands=1)
            bot = RandomBot(rng)
            while (turn := local.next_turn()) is not None:
                full.follow(local.match)
                while full.model.popups:
                    _press(full, "esc")
                rows = _screen(full, (MIN_COLS, SIZE[1])).split("\n")
                for row in rows[1:[row.startswith(" \u2500") for row in rows].index(True)]:
                    assert label_row.match(row) or continued.match(row), "\n".join(rows)
                    wrapped += bool(continued.match(row))
                local.play(bot.choose(turn.view()))
    assert wrapped  # (Box's "To follow" row is too long for 60 columns)


async def test_a_long_line_from_the_edge_is_shown_whole_wrapped_not_cut():
    """The spectator's first line names the seats and the transcript's path, longer than the
    screen is wide: it wraps on the message line above the keys."""
    full = _spectator("boxwhist", 2)
    path = "/home/somebody/.local/share/p2pwhist/games/20261203-221557-b4c9d981.p2pw"
    line = f"Watching alice, bob at 192.0.2.7:47311. Transcript: {path}"
    assert len(line) > SIZE[0]
    full._running = True  # as once the screen is open, where a report is drawn, not printed
    full.report(line)
    rows = [row.rstrip() for row in _screen(full, SIZE).split("\n")]
    assert rows[-3:-1] == ["Watching alice, bob at 192.0.2.7:47311. Transcript:", path]
    assert rows[-1].startswith("l last trick")  # the keys still on the last row


def test_a_seats_q_is_a_letter_of_a_move_not_leaving():
    full = FullScreenPlayer(color=False)
    full.sit(GAMES["boxwhist"].text, 0, ["You", "bob"])
    assert full.model.key("q", 0).leave is False
