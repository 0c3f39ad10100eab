"""p2pwhist verify and show on transcripts of games played through real sessions."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from p2pwhist.bodies import CardPlay
from p2pwhist.cli import main
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.inprocess import random_match
from p2pwhist.signed import Kind, parse, seal
from p2pwhist.transcript import TranscriptWriter
from p2pwhist.verify import verify


@pytest.fixture(scope="module")
def game():
    return random_match(BoxWhist(3), hands=2, seed=11)


def write(path, messages):
    writer = TranscriptWriter(path)
    for message in messages:
        writer.append(message)
    writer.close()
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "p2pwhist", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def test_a_complete_honest_game_is_valid_and_summarised(game, tmp_path):
    path = write(tmp_path / "g.p2pw", game[0].log)
    out = cli("verify", "--json", path)
    assert out.returncode == 0
    report = json.loads(out.stdout)
    assert report["valid"] and report["complete"] and report["game"] == "boxwhist"
    assert [p["name"] for p in report["players"]] == ["seat0", "seat1", "seat2"]
    outcome = game[0].outcome
    assert [tuple(h["scores"]) for h in report["hands"]] == [r.scores for r in outcome.hands]
    assert [tuple(h["points"]) for h in report["hands"]] == [r.points for r in outcome.hands]
    assert all(h["trumps"] in ("hearts", "diamonds", "clubs", "spades", "no trumps") for h in report["hands"])
    assert report["match"] == {"points": list(outcome.points), "winner": outcome.winner}
    assert report["head"] == game[0].head.hex() and report["error"] is None


def test_an_unfinished_game_says_how_far_it_got_and_who_stopped_answering(game):
    cut = game[0].log
    last_hand = max(i for i, m in enumerate(cut) if m.kind is Kind.HAND and i < len(cut) - 10)  # its second
    verdict = verify(cut[: last_hand + 5])
    assert verdict.valid and not verdict.complete
    assert len(verdict.hands) >= 1
    waiting = verdict.session.waiting_for
    assert f"seat{waiting} (seat {waiting})" in verdict.stopped


def test_a_tampered_message_is_pinned_on_its_sender(game, tmp_path):
    log = list(game[0].log)
    i = next(i for i, m in enumerate(log) if m.kind is Kind.PLAY and m.seat == 2)
    original = log[i]
    # Seat 2's key signs a different play: a valid signature, but not the card it holds.
    key = game[2]._key  # a test-only dishonest peer signs with its own key
    claim = original.body.reveal
    lie = CardPlay(dataclasses.replace(claim, card=(int(claim.card) + 1) % 52))
    forged = seal(key, original.seq, original.prev, 2, lie)
    path = write(tmp_path / "bad.p2pw", log[:i] + [forged])
    out = cli("verify", path)
    assert out.returncode == 1
    assert f"message {original.seq}" in out.stdout and "seat2 (seat 2" in out.stdout
    # A byte flipped in transit breaks the signature instead.
    flipped = bytearray(original.raw)
    flipped[len(flipped) // 2] ^= 1
    verdict = verify(log[:i] + [parse(bytes(flipped))])
    assert not verdict.valid and verdict.error.seq == original.seq


def test_show_prints_tags_every_trick_and_the_match_table(game, tmp_path):
    path = write(tmp_path / "g.p2pw", game[0].log)
    out = cli("show", path)
    assert out.returncode == 0
    text = out.stdout
    assert text.count('[Game "boxwhist"]') == 2 and '[Dealer "' in text and '[Trumps "' in text
    assert text.count("\n17. ") == 2  # 17 tricks a hand with 3 players
    assert "Final points: seat0 " in text
    hand_cards = [line for line in text.splitlines() if line.startswith("seat0: ")]
    assert len(hand_cards) == 2 and "| box " in hand_cards[0]


def test_show_with_several_files_names_each_sheet_and_says_what_it_could_not_show(game, tmp_path, capsys):
    first, second = write(tmp_path / "a.p2pw", game[0].log), write(tmp_path / "b.p2pw", game[1].log)
    (tmp_path / "junk.p2pw").write_bytes(b"junk")
    assert main(["show", str(first), str(tmp_path / "junk.p2pw"), str(second)]) == 2
    said = capsys.readouterr()
    assert said.err == f"p2pwhist: {tmp_path / 'junk.p2pw'}: not a p2pwhist transcript (no P2PWHST1 header)\n"
    sheets = said.out.split("\n\n== ")
    assert len(sheets) == 2 and sheets[0].startswith(f"== {first} ==\n[Game \"boxwhist\"]")
    assert sheets[1].startswith(f"{second} ==\n[Game \"boxwhist\"]")
    assert all(sheet.count("Final points: seat0 ") == 1 for sheet in sheets)


def test_show_with_no_file_shows_the_game_saved_last_and_says_so(game, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    assert main(["show"]) == 2
    assert capsys.readouterr().err == \
        f"p2pwhist: no game is saved in {tmp_path / 'games'} yet; name a file: p2pwhist show FILE\n"
    (tmp_path / "games").mkdir()
    older, newer = write(tmp_path / "games" / "b.p2pw", game[0].log), write(tmp_path / "games" / "a.p2pw", game[0].log)
    os.utime(older, (1, 1))
    assert main(["show"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"== {newer} ==\n[Game \"boxwhist\"]") and str(older) not in shown
