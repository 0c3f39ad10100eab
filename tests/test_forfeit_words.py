"""A seat that left the match (a FORFEIT for absence or slowness, or its own ABORT) and a seat
caught in a breach lose the hand alike, but are different things everywhere (issue 23, item
1): the hand's result keeps them apart (``HandResult.left`` and ``offenders``), and the
hand-end words, the score sheet (``show``), ``verify`` and ``verify --json`` each word a
departure as one, never as a breach; a proven breach is still worded as a breach.
"""

from __future__ import annotations

import io
import random

import pytest
from test_cheats import only_for
from test_every_game import CONFIGS, dealt
from test_every_game_session import HonourBreaker, unchecked_play
from test_verify import write
from test_verify_forfeits import lines, report
from verdicts import ALICE, AWAY, BOB, NAMES, declared_absent

from p2pwhist import cli
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import game_entry
from p2pwhist.inprocess import open_table, run
from p2pwhist.session import Session
from p2pwhist.text import Style, seat_names
from p2pwhist.ui.terminal import TerminalPlayer

PLAIN = Style(color=False, symbols=False)
BREACH_WORDS = ("broke the rules", "breaking", "revoked", "Breach:", "Revoke:")


def forfeited_in_play(game, seat: int = 1):
    """A hand of ``game`` a few moves in, then ``seat`` leaves the match: the hand and its result."""
    hand, rng = dealt(game, seed=3)
    match = Match(game, MatchLength(hands=1), hand.dealer, [hand])
    for _ in range(3):
        hand.apply(rng.choice(hand.legal_moves()))
    match.forfeit(seat)
    return hand, match.results[-1]


@pytest.mark.parametrize("game", CONFIGS)
def test_a_seat_that_left_loses_the_hand_without_being_called_an_offender(game):
    hand, result = forfeited_in_play(game)
    assert result.left == {1} and result.offenders == frozenset() and result.points[1] == 0
    names = seat_names(game.players)
    words = game_entry(game).text
    ended = words.hand_result(hand, result, names, PLAIN, 1)
    assert f"{names[1]} left the match and may not win the hand (a forfeit, not a breach of the rules)." in ended
    assert not any(word in ended for word in BREACH_WORDS), ended
    record = words.record(hand, result, names)
    assert f"Forfeit: {names[1]} left the match, which loses the hand but proves no breach" in record
    assert not any(word in line for line in record for word in ("caught", "Breach:")), record


@pytest.mark.parametrize("game", CONFIGS)
def test_a_seat_caught_breaking_the_deck_protocol_is_still_worded_as_a_breach(game):
    hand, _ = forfeited_in_play(game)
    caught = hand.result(offenders=frozenset({1}))
    assert caught.offenders == {1} and caught.left == frozenset() and caught.points[1] == 0
    names = seat_names(game.players)
    words = game_entry(game).text
    assert "broke the rules" in words.hand_result(hand, caught, names, PLAIN, 1)
    assert f"Breach: {names[1]} was caught breaking the deck protocol" in words.record(hand, caught, names)


def test_the_line_interface_says_a_seat_left_at_the_end_of_the_hand():
    hand, result = forfeited_in_play(BoxWhist(2))
    out = io.StringIO()
    player = TerminalPlayer(0, game_entry(BoxWhist(2)).text, io.StringIO(), out, names=["You", "dave"])
    player.hand_over(hand, result)
    said = out.getvalue()
    assert "dave left the match and may not win the hand" in said and "broke the rules" not in said


def test_show_verify_and_verify_json_say_an_absent_seat_left_and_accuse_nobody(tmp_path, capsys):
    alice = declared_absent(2)[ALICE]
    path = write(tmp_path / "alice.p2pw", alice.log)
    code, json_report = report(capsys, path)
    assert code == 0 and json_report["forfeit"]["how"] == "absent" and json_report["forfeit"]["reason"] == AWAY
    (hand,) = json_report["hands"]
    assert hand["offenders"] == [] and hand["left"] == [BOB] and hand["points"] == [1, 0]
    code, text = lines(capsys, path)
    assert code == 0 and any(f"bob was declared absent ({AWAY})" in line for line in text)
    assert not any(word in line for line in text for word in BREACH_WORDS), text
    assert cli.main(["show", str(path)]) == 0
    sheet = capsys.readouterr().out
    assert "Forfeit: bob left the match, which loses the hand but proves no breach" in sheet
    assert "caught" not in sheet and "Breach:" not in sheet


def revoked_match(monkeypatch: pytest.MonkeyPatch) -> list[Session]:
    """A 2-hand Box Whist match in which bob breaks a rule on honour once (a revoke), which his
    own session lets through: the audit catches it, bob loses that hand, and the match goes on
    to its end."""
    monkeypatch.setattr(Session, "_make_play", only_for(BOB, unchecked_play, Session._make_play))
    sessions = open_table(BoxWhist(2), MatchLength(hands=2), random.Random(5), NAMES[:2])
    breaker = HonourBreaker(random.Random(1), BoxWhist(2))
    run(sessions, [RandomBot(random.Random(0)), breaker])
    assert breaker.broken, "bob never had the chance"
    return sessions


def test_a_revoke_is_still_a_breach_in_show_and_verify_json(tmp_path, capsys, monkeypatch):
    alice = revoked_match(monkeypatch)[ALICE]
    path = write(tmp_path / "alice.p2pw", alice.log)
    code, json_report = report(capsys, path)
    assert code == 0 and json_report["forfeit"] is None
    assert [(h["offenders"], h["left"]) for h in json_report["hands"] if h["offenders"]] == [([BOB], [])]
    assert cli.main(["show", str(path)]) == 0
    sheet = capsys.readouterr().out
    assert "Revoke: bob did not follow suit in trick" in sheet and "left the match" not in sheet
