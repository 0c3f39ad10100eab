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

from p2pwhist.cli_play import _Display, _finish, _Spectating
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import game_entry
from p2pwhist.net import GameRecord
from p2pwhist.session import Session
from p2pwhist.session_events import HandOver, MatchOver, Seated
from p2pwhist.text import check_line, match_summary, seat_names
from p2pwhist.ui.terminal import TerminalPlayer


def finished(session: Session, path: Path, capsys) -> list[str]:
    """What a networked match's end prints for ``session``'s seat."""
    _Display(bot="random").finish(GameRecord(session.outcome, path, session.table))
    return capsys.readouterr().out.splitlines()


def hand_lines(out: list[str]) -> dict[int, list[str]]:
    """The lines that give a hand's result, by hand."""
    said: dict[int, list[str]] = {}
    for line in out:
        if line.startswith("Hand ") and ":" in line:
            said.setdefault(int(line[5:line.index(":")]), []).append(line)
    return said


@pytest.mark.parametrize("spectator", [False, True], ids=["bot", "spectator"])
@pytest.mark.parametrize("ending", ["forfeit", "breach"])
def test_lines_that_told_each_hand_as_it_ended_do_not_tell_it_again_at_the_end(
        spectator, ending, tmp_path, capsys, monkeypatch):
    """A bot's lines (``join --bot``) and a spectator's (``watch --plain``) say each hand's
    result as it ends, with any breach or forfeit: the match's end adds who left and the
    result, not the hands once more."""
    alice = declared_absent(2)[ALICE] if ending == "forfeit" else revoked_match(monkeypatch)[ALICE]
    record = GameRecord(alice.outcome, tmp_path / "g.p2pw", alice.table)
    lines = _Spectating() if spectator else _Display(bot="random")
    # The events are taken after the match, when each one's hand is the hand as it ended, so
    # the moves are left out (a move's words read its hand as it was): the hands' ends remain.
    for event in alice.take_events():
        if isinstance(event, Seated | HandOver | MatchOver):
            lines.on_event(event)
    if spectator:
        _finish(record, lines.told_hands)
    else:
        lines.finish(record)
    out = capsys.readouterr().out.splitlines()
    said = hand_lines(out)
    assert sorted(said) == list(range(1, len(alice.outcome.hands) + 1))
    assert all(len(told) == 1 for told in said.values()), said
    notes = [line for (line,) in said.values() if "left the match and lost it" in line or "proven breach" in line]
    assert len(notes) == 1 and ("bob left" if ending == "forfeit" else "bob lost it by a proven breach") in notes[0]
    assert out[-1] == check_line(tmp_path / "g.p2pw") and out[-2].startswith("Match over. Final points:")


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
