"""How every game in the registry reads to people, written once over it (issue 21) with the game
interface alone (``GameText``, ``View``, ``Cell``): a game added to the registry gets these
tests by registering. What a game's screens say is tested in its own files; whether they leak a
card is in ``test_every_game_properties.py``.

- Every table a person reads as the hand goes fits 80 columns, for every seat at every move.
- The cells of the hand pane are the seat's cards, the legal ones exactly its legal moves, each
  typed back as itself; no other seat has a legal cell.
- The full-screen table, drawn at 80×24, shows the whole hand pane and the table's first line.
- A spectator's line for a move reads a hand that knows only the cards revealed to it.
"""

from __future__ import annotations

import random

import pytest
import trio
from test_every_game import CONFIGS

from p2pwhist.games.registry import game_entry
from p2pwhist.text import Style, seat_names
from p2pwhist.ui.fullscreen import FullScreenPlayer
from p2pwhist.ui.terminal import help_text

PLAIN = Style(False)
COLUMNS, ROWS = 80, 24


def hands(game, count: int):
    """``count`` random hands, each yielded at every step (and once more when over)."""
    rng = random.Random(game.players)
    for _ in range(count):
        deck = list(game.deck())
        rng.shuffle(deck)
        hand = game.new_hand(rng.randrange(game.players), (), deck)
        while True:
            yield hand
            if hand.is_over:
                break
            hand.apply(rng.choice(hand.legal_moves()))


@pytest.mark.parametrize("game", CONFIGS)
def test_every_table_fits_80_columns_for_every_seat_at_every_move(game):
    """The screens a person reads as the hand goes: the header, the table, the finished tricks
    or rounds, the notices, the hand's result and the help (but its list of the legal moves, a
    list a terminal may wrap; the help's first line was 82 columns wide)."""
    text = game_entry(game).text
    names = [seat_names(game.players, seat) for seat in range(game.players)]
    for hand in hands(game, 2):
        for seat in range(game.players):
            view = hand.view(seat)
            screens = [text.header(view, names[seat], PLAIN, 1),
                       text.table(view, names[seat], PLAIN, 1, [0] * game.players),
                       *text.finished_lines(view, 0, names[seat], PLAIN), *text.notices(view)]
            if view.legal_moves:
                legal, helped = text.legal(view, PLAIN), help_text(text, view, PLAIN)
                assert legal and helped.endswith(legal)
                screens.append(helped.removesuffix(legal))
            if hand.is_over:
                screens.append(text.hand_result(hand, hand.result(), names[seat], PLAIN, 1))
            for screen in screens:
                assert all(len(line) <= COLUMNS for line in screen.splitlines()), screen


@pytest.mark.parametrize("game", CONFIGS)
def test_cells_are_the_seats_cards_and_the_legal_ones_type_back_as_themselves(game):
    entry = game_entry(game)
    for hand in hands(game, 3):
        if hand.is_over:
            continue
        seat = hand.current_seat
        view = hand.view(seat)
        cells = entry.text.cells(view)
        assert {cell.move for cell in cells if cell.legal} == set(view.legal_moves)
        assert len({cell.move for cell in cells}) == len(cells)
        for cell in cells:
            if cell.legal:
                assert view.parse_move(cell.typed) == cell.move, cell
        for other in range(game.players):
            if other != seat:
                assert not any(cell.legal for cell in entry.text.cells(hand.view(other)))


def drawn(player: FullScreenPlayer) -> list[str]:
    """The full-screen table as an 80×24 terminal shows it (popups closed)."""
    player.model.popups.clear()
    player.refresh()
    return [line.decode() for line in player._root.render((COLUMNS, ROWS), focus=True).text]


@pytest.mark.parametrize("game", CONFIGS)
def test_the_full_screen_table_at_80_by_24_shows_the_whole_hand(game):
    entry = game_entry(game)

    async def main() -> None:
        for step, hand in enumerate(hands(game, 1)):
            if hand.is_over or step % 3:
                continue
            seat = hand.current_seat
            view = hand.view(seat)
            player = FullScreenPlayer(color=False)
            player.model.style = PLAIN
            player.sit(entry.text, seat, seat_names(game.players, seat))
            player.show(view, 1, [0] * game.players)
            screen = drawn(player)
            assert len(screen) == ROWS and all(len(line) <= COLUMNS for line in screen)
            shown = "\n".join(screen)
            table = entry.text.table(view, player.model.names, PLAIN, 1, [0] * game.players)
            assert table.splitlines()[0].strip() in shown, shown
            for cell in entry.text.cells(view):
                assert cell.label in shown, f"{cell.label} is not on the screen:\n{shown}"

    trio.run(main)


@pytest.mark.parametrize("game", CONFIGS)
def test_a_spectators_move_line_needs_no_card_its_hand_has_not_learned(game):
    """A spectator's hand learns a card once the deck reveals it, and a reveal that fails (a
    bad key) leaves even a face-up card unlearned while play goes on. Box Whist's and German
    Whist's line for a lead names the face-up stack card the trick is played for, and raised
    AttributeError on one not learned; now it says the card is not yet revealed."""
    rng = random.Random(game.players)
    deck = list(game.deck())
    rng.shuffle(deck)
    hand = game.new_hand(0, (), None)
    seat = hand.current_seat
    for position in hand.visible_to(seat) - hand.visible_to(None):  # the leader's own cards, no face-up one
        hand.learn(position, deck[position])
    move = hand.legal_moves()[0]
    hand.apply(move)
    line = game_entry(game).text.move(hand, seat, move, seat_names(game.players), PLAIN)
    assert "None" not in line, line
