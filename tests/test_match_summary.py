"""The match summary at the end of a match (issue 23): hand by hand, who won and the scores
that say by how much, any seat that lost a hand by a proven breach or by leaving (worded apart,
item 1), the result, then the transcript to check. The line interface prints it, and so does
the end of a networked match once its table (line or full-screen) is gone (``_Display.finish``).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from test_every_game import CONFIGS, dealt
from test_forfeit_words import revoked_match
from verdicts import ALICE, AWAY, declared_absent

from p2pwhist.cli_play import _Display
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import game_entry
from p2pwhist.net import GameRecord
from p2pwhist.session import Session
from p2pwhist.text import check_line, match_summary, seat_names
from p2pwhist.ui.terminal import TerminalPlayer


def finished(session: Session, path: Path, capsys) -> list[str]:
    """What a networked match's end prints for ``session``'s seat."""
    _Display(bot="random").finish(GameRecord(session.outcome, path, session.table))
    return capsys.readouterr().out.splitlines()


def test_a_forfeit_by_absence_ends_with_each_hand_the_leaver_and_the_file_to_verify(tmp_path, capsys):
    alice = declared_absent(2)[ALICE]
    out = finished(alice, tmp_path / "a game.p2pw", capsys)
    assert out[0].startswith("Hand 1: tricks alice ") and out[0].endswith(
        "; won by alice; bob left the match and lost it (a forfeit, not a breach).")
    assert out[1:] == [f"bob left the match: {AWAY}.",
                       "Match over. Final points: alice 1, bob 0; bob left and forfeits, so alice wins the match.",
                       f"Check it with: p2pwhist verify '{tmp_path / 'a game.p2pw'}'"]


def test_a_breach_is_summarised_as_a_breach(tmp_path, capsys, monkeypatch):
    alice = revoked_match(monkeypatch)[ALICE]
    out = finished(alice, tmp_path / "g.p2pw", capsys)
    hands = [line for line in out if line.startswith("Hand ")]
    assert len(hands) == 2 and sum("bob lost it by a proven breach of the rules" in line for line in hands) == 1
    assert not any("left the match" in line for line in out)
    assert out[-1] == f"Check it with: p2pwhist verify {tmp_path / 'g.p2pw'}"


@pytest.mark.parametrize("game", CONFIGS)
def test_the_line_interface_ends_a_match_with_each_hands_result(game):
    """Every game: a hand played out and one cut short by a seat leaving."""
    entry = game_entry(game)
    match = Match(game, MatchLength(hands=2), 0)
    for _ in range(2):
        hand, rng = dealt(game, seed=len(match.hands))
        match.hands.append(hand)
        while not hand.is_over and len(match.hands) == 1:
            hand.apply(rng.choice(hand.legal_moves()))
        if hand.is_over:
            match.record(hand.result())
    match.forfeit(1)
    names = seat_names(game.players, 0)
    out = io.StringIO()
    TerminalPlayer(0, entry.text, io.StringIO(), out, names=list(names)).match_over(match)
    said = out.getvalue().splitlines()
    first, second = (f"Hand {n}: {entry.text.result_line(r, names)}" for n, r in enumerate(match.results, 1))
    assert first + "." in said
    assert f"{second}; {names[1]} left the match and lost it (a forfeit, not a breach)." in said
    summary = match_summary(names, match.results, entry.text.result_line)
    assert summary == [first + ".", said[said.index(first + ".") + 1]]


def test_the_check_line_quotes_a_path_to_copy():
    assert check_line(Path("/games/a b.p2pw")) == "Check it with: p2pwhist verify '/games/a b.p2pw'"
    assert check_line(Path("/games/x.p2pw")) == "Check it with: p2pwhist verify /games/x.p2pw"
