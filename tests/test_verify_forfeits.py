"""What ``verify`` says of a match settled by a seat leaving (session.md §7.3, issue 20): a
FORFEIT is evidence, as far as its signers vouch for it; an ABORT is its sender leaving,
whatever seat it blames; and the FORFEIT an accused seat kept against it shows, in its own
transcript and beside the declarer's, where the two histories part.

Every game is played by real sessions in memory (``p2pwhist.inprocess``); the command line
runs in this process (``cli.main``), its output read from ``capsys``.
"""

from __future__ import annotations

import json

import pytest
from test_verify import write
from verdicts import ALICE, AWAY, BOB, CAROL, NAMES, bob_to_move, declared_absent, forked_histories, play_until, seated

from p2pwhist import cli
from p2pwhist.session import Aborted
from p2pwhist.signed import Kind
from p2pwhist.transcript import read_transcript
from p2pwhist.ui.scoresheet import scoresheet
from p2pwhist.verify import verify


def lines(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[str]]:
    """``p2pwhist verify ARGS``: its exit status and its lines."""
    code = cli.main(["verify", *map(str, args)])
    return code, capsys.readouterr().out.splitlines()


def report(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, object]:
    """``p2pwhist verify --json ARGS``: its exit status and its JSON."""
    code = cli.main(["verify", "--json", *map(str, args)])
    return code, json.loads(capsys.readouterr().out)


# -- a FORFEIT: what its signatures prove ----------------------------------------------------


def test_a_two_player_forfeit_is_signed_by_the_one_who_gains_and_proves_no_absence(tmp_path, capsys):
    alice = declared_absent(2)[ALICE]
    path = write(tmp_path / "alice.p2pw", alice.log)
    seq = next(m.seq for m in alice.log if m.kind is Kind.FORFEIT)
    code, json_report = report(capsys, path)
    assert code == 0 and json_report["valid"] and json_report["complete"]
    assert json_report["forfeit"] == {
        "seat": BOB, "name": "bob", "reason": AWAY, "seq": seq, "how": "absent", "declared_by": ALICE,
        "signed_by": [ALICE], "witnessed": False, "blamed": None, "blame": None}
    assert json_report["match"]["winner"] == ALICE
    code, text = lines(capsys, path)
    assert code == 0 and text[0].startswith("valid, complete: boxwhist")
    said = (f"bob (seat 1) forfeits the match at message {seq}: bob was declared absent ({AWAY}), as alice alone "
            "signs, who gains from it: absence between two seats cannot be proven")
    assert said in text and text[text.index(said) + 1].endswith("bob left and forfeits, so alice wins the match")
    assert said in scoresheet(verify(alice.log)).splitlines()


def test_a_three_player_forfeit_co_signed_by_a_seat_that_does_not_win_is_witnessed():
    # bob leaves mid-hand with alice and carol on different tricks: the hand, and so the
    # match, goes to one of them, and the other signs with nothing to win.
    alice = declared_absent(3, lambda host: host.hand.tricks_won[ALICE] != host.hand.tricks_won[CAROL])[ALICE]
    verdict = verify(alice.log)
    forfeit = verdict.to_json()["forfeit"]
    assert verdict.valid and verdict.complete
    assert (forfeit["how"], forfeit["declared_by"], forfeit["signed_by"], forfeit["witnessed"]) == \
        ("absent", ALICE, [ALICE, CAROL], True)
    winner = verdict.to_json()["match"]["winner"]
    assert winner in (ALICE, CAROL)
    assert verdict.settlement.line(NAMES).endswith(f"bob was declared absent ({AWAY}), as alice and carol sign")


def test_a_three_player_forfeit_signed_only_by_seats_sharing_the_result_is_said_to_be_unwitnessed():
    # bob leaves before anyone won a trick: alice and carol draw the match, each gaining a share.
    alice = declared_absent(3, lambda host: not any(host.hand.tricks_won))[ALICE]
    verdict = verify(alice.log)
    assert verdict.valid and verdict.to_json()["forfeit"]["witnessed"] is False
    assert verdict.settlement.line(NAMES).endswith(
        "as alice and carol sign, each of whom gains from it: no seat without a stake in it vouches for the absence")


# -- an ABORT: its sender leaving, whomever it blames ----------------------------------------


def test_an_abort_blaming_another_seat_is_its_sender_leaving_with_the_blame_unproven(tmp_path, capsys):
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    quit_ = sessions[BOB].abort("alice cheated, believe me", culprit=ALICE)
    with pytest.raises(Aborted):
        sessions[ALICE].receive(quit_.raw, BOB)
    path = write(tmp_path / "alice.p2pw", sessions[ALICE].log)
    code, json_report = report(capsys, path)
    assert code == 0 and json_report["valid"] and json_report["error"] is None
    assert json_report["forfeit"] == {
        "seat": BOB, "name": "bob", "reason": "alice cheated, believe me", "seq": quit_.seq, "how": "left",
        "declared_by": BOB, "signed_by": [BOB], "witnessed": True, "blamed": ALICE, "blame": "unproven"}
    # Not a game merely stopped: the match has its result, against the leaver.
    assert json_report["match"] == {"points": [1, 0], "winner": ALICE}
    code, text = lines(capsys, path)
    assert code == 0
    said = (f"bob (seat 1) left the match at message {quit_.seq} with bob's own signed ABORT, and forfeits it: "
            "alice cheated, believe me; bob blamed alice (seat 0), which the log does not prove")
    assert said in text and text[text.index(said) + 1].endswith("bob left and forfeits, so alice wins the match")
    sheet = scoresheet(verify(sessions[ALICE].log))
    assert said in sheet and "the match was not finished" not in sheet


# -- the accused's own transcript: a fork, shown beside the declarer's ------------------------


@pytest.fixture
def forked(tmp_path):
    """bob moves, but his PLAY never reaches alice, who declares him absent at that very
    place and signs FINAL. bob keeps her FORFEIT after his own messages, as evidence."""
    alice_log, bob_messages, seq = forked_histories()
    return write(tmp_path / "alice.p2pw", alice_log), write(tmp_path / "bob.p2pw", bob_messages), seq


def test_the_accused_keeps_the_forfeit_as_evidence_of_a_fork_and_its_file_stays_valid(forked, capsys):
    _, bob_file, seq = forked
    code, json_report = report(capsys, bob_file)
    assert code == 0 and json_report["valid"] and not json_report["complete"] and json_report["error"] is None
    assert json_report["fork"] == {"seq": seq, "accused": BOB, "declared_by": ALICE, "kinds": ["play", "forfeit"]}
    assert json_report["forfeit"] is None  # bob's history has no forfeit: its own message stands there
    code, text = lines(capsys, bob_file)
    assert code == 0 and text[0].startswith("valid, unfinished")
    assert f"unfinished: fork at message {seq}: bob signed a PLAY there, and alice signed a FORFEIT declaring bob " \
        "absent at the same place; the two histories part here (one side's message did not reach the other in " \
        "time, or was ignored)" in text


def test_verifying_both_files_shows_where_they_part(forked, capsys):
    alice_file, bob_file, seq = forked
    code, text = lines(capsys, alice_file, bob_file)
    assert code == 0
    assert text[0].startswith(f"{alice_file}: valid, complete") and f"{bob_file}: valid, unfinished" in " ".join(text)
    assert text[-1] == f"{alice_file} and {bob_file} part at message {seq}: {alice_file} holds alice's FORFEIT " \
        f"naming bob, {bob_file} holds bob's PLAY"
    code, reports = report(capsys, alice_file, bob_file)
    assert code == 0 and [r["file"] for r in reports] == [str(alice_file), str(bob_file)]
    parted = {"seq": seq, "files": [str(alice_file), str(bob_file)],
              "held": [{"seat": ALICE, "kind": "forfeit", "naming": BOB}, {"seat": BOB, "kind": "play", "naming": None}],
              "signed_both": None}
    assert [r["parted"] for r in reports] == [parted, parted]
    assert reports[0]["forfeit"]["how"] == "absent" and reports[1]["fork"]["seq"] == seq


def test_several_files_exit_with_the_worst_verdict(forked, tmp_path, capsys):
    alice_file, _, _ = forked
    cut = write(tmp_path / "cut.p2pw", [m for m in read_transcript(alice_file) if m.kind is not Kind.ACCEPT])
    garbage = tmp_path / "garbage.p2pw"
    garbage.write_bytes(b"not a transcript")
    assert lines(capsys, alice_file, cut)[0] == 1  # the ACCEPT left out: invalid
    code, reports = report(capsys, alice_file, cut, garbage)
    assert code == 2 and [r["valid"] for r in reports] == [True, False, False]
    assert reports[2]["file"] == str(garbage) and "not a p2pwhist transcript" in reports[2]["error"]["reason"]
    assert reports[2]["parted"] is None
