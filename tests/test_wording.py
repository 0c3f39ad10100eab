"""The wording of issue 23, item 9, checked in every game at its one source: moves (hints) in
the table's card notation, "you" within a sentence, "1 hand", one "Points:" in a popup, the
real path of the per-user state in help, and Box's rule "equal or lower" in its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_every_game import CONFIGS, dealt
from test_verify import write

from p2pwhist import cli
from p2pwhist.games.box.engine import Box
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.registry import game_entry
from p2pwhist.inprocess import random_match
from p2pwhist.text import Style, match_line, row, seat_names, tally

SYMBOLS, LETTERS = Style(color=False, symbols=True), Style(color=False, symbols=False)


@pytest.mark.parametrize("game", CONFIGS)
def test_a_move_reads_in_the_tables_card_notation_in_every_game(game):
    """What a hint names (``describe_move``) is the card as the table draws it: the suit
    symbol, which a terminal that is not UTF-8 gets as a letter (``Style.fit``)."""
    hand, rng = dealt(game, seed=1)
    view = hand.view(hand.current_seat)
    cells = [cell for cell in game_entry(game).text.cells(view) if cell.card is not None and cell.legal]
    assert cells, "a hand card to play"
    for cell in cells:
        said = view.describe_move(cell.move)
        assert SYMBOLS.card(cell.card) in said and LETTERS.fit(said).endswith(cell.card.ascii)
        assert view.parse_move(said) == cell.move  # and it is typed back as it reads


@pytest.mark.parametrize("game", CONFIGS)
def test_you_is_capitalised_only_at_the_start_of_a_sentence_in_every_game(game):
    entry = game_entry(game)
    names = seat_names(game.players, 0)
    for seed in range(4):
        hand, rng = dealt(game, seed)
        while not hand.is_over:
            hand.apply(rng.choice(hand.legal_moves()))
        view = hand.view(0)
        result = hand.result()
        words = "\n".join([*entry.text.finished_lines(view, 0, names, LETTERS),
                           entry.text.hand_result(hand, result, names, LETTERS, 1),
                           entry.text.result_line(result, names),
                           match_line(names, result.points, next((s for s, p in enumerate(result.points) if p), None))])
        assert not re.search(r"[;,] You [a-z]|\bby You\b", words), words


def test_one_hand_is_one_hand_in_verify(tmp_path, capsys):
    path = write(tmp_path / "one.p2pw", random_match(BoxWhist(2), hands=1, seed=1)[0].log)
    assert cli.main(["verify", str(path)]) == 0
    assert ", 1 hand, players " in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("game", CONFIGS)
def test_a_last_hands_popup_says_points_once(game):
    """The full-screen popup at the match's end: the hand's result, the points row, then the
    match's line (ui/fullscreen.py composes it of these)."""
    hand, rng = dealt(game, seed=2)
    while not hand.is_over:
        hand.apply(rng.choice(hand.legal_moves()))
    names, result = seat_names(game.players, 0), hand.result()
    popup = game_entry(game).text.hand_result(hand, result, names, LETTERS, 1) + "\n" + \
        row("Points", tally(names, result.points)) + "\n\n" + match_line(names, result.points, None)
    assert popup.count("Points:") == 1, popup


@pytest.mark.parametrize("command", [["resume"], ["host"], ["join"]])
def test_help_names_the_real_folder_of_saved_games(command, monkeypatch, capsys):
    home = Path("/nowhere/100% mine")  # no hyphen: argparse may break a line after one
    monkeypatch.setenv("P2PWHIST_HOME", str(home))
    with pytest.raises(SystemExit):
        cli.main([*command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps lines where it likes
    assert "$P2PWHIST_HOME" not in shown and f"{home / 'games'}" in shown


def test_box_says_what_follows_by_its_rule_equal_or_lower():
    game = Box(3)
    hand, rng = dealt(game, seed=4)
    hand.apply(rng.choice(hand.legal_moves()))  # the opener lays: the next seat must follow it
    table = game_entry(game).text.table(hand.view(hand.current_seat), seat_names(3, hand.current_seat), LETTERS)
    assert "To beat" not in table
    (line,) = [line for line in table.splitlines() if line.startswith("To follow:")]
    assert "or lower, else take a box card" in line


def test_an_ipv6_host_is_named_in_brackets_with_its_port(tmp_path, monkeypatch, capsys):
    """``[::1]:PORT``, as ``join`` takes it, never ``::1:PORT``, which reads as a longer address."""
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    assert cli.main(["join", "[::1]:1", "--bot", "random", "--name", "bob"]) == 1
    assert "cannot reach the host [::1]:1:" in capsys.readouterr().err
