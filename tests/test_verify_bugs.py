"""``verify`` on the files of issue 26, which an independent verifier found it mishandled:
each gets a verdict (never a traceback), and blame only where the log proves it.

1. A Box Whist match forfeited before the first hand's trump card was revealed.
2. A badly signed message naming a seat the table does not have.
3. A START naming both a number of hands and minutes.
4. What cannot be read of a file: a malformed message (judged, blamed as the recording
   peer's ABORT after it says), a frame over the limit, a file ending inside a message.
5. A badly signed or out-of-chain message with no ABORT after it: nobody is blamed.

And a fuzzer: a real transcript with bytes changed gets a verdict, or, for a file that is no
transcript at all, one clean ``TranscriptError``.
"""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from test_verify_forfeits import report
from verdicts import (
    ALICE,
    BOB,
    CAROL,
    NAMES,
    bob_to_move,
    bobs_move,
    deliver,
    play_until,
    raws,
    seated,
    stretched,
    transcript,
)

from p2pwhist import cli
from p2pwhist.bodies import Accept, Player, Table
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import random_match, run
from p2pwhist.session import Aborted, Session, start_message
from p2pwhist.signed import Kind, SignatureError, parse, public_bytes, seal, sign
from p2pwhist.transcript import MAGIC, TranscriptError, read_transcript
from p2pwhist.ui.scoresheet import scoresheet
from p2pwhist.verify import Verdict, verify
from p2pwhist.wire import LENGTH, MAX_FRAME, frame

DAMAGED = "the recording peer's log is damaged at message {}, and the message proves nothing against the seat it names"


def written(path, payloads: list[bytes]):
    """A transcript holding ``payloads`` as they are, each in a frame: what a damaged or
    hand-made file holds."""
    path.write_bytes(transcript(payloads))
    return path


def judged(path) -> Verdict:
    return verify(read_transcript(path))


@pytest.fixture
def two() -> list[Session]:
    """A 2-player table where bob is to move in the first hand: each seat's session."""
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    return sessions


# -- 1. a match forfeited before the first hand's trump card was revealed -----------------------


@pytest.mark.parametrize("ending", ["forfeit", "abort"])
def test_a_box_whist_match_ended_before_the_trump_card_was_revealed_gets_a_verdict(ending, tmp_path, capsys):
    """Three players, frozen after the first deal's passes, before any KEYS: carol, due to
    publish hers first, stays away (alice declares it, bob co-signs) or leaves."""
    sessions, bots = seated(3)
    play_until(sessions, bots, lambda host: host.hand is not None and host.expected_kind is Kind.KEYS)
    assert sessions[ALICE].waiting_for == CAROL  # the last to lock publishes first (session.md §4.1)
    honest = sessions[:CAROL]
    if ending == "forfeit":
        deliver(sessions[ALICE].forfeit(CAROL, "carol took longer than 10:00 over one message"), honest)
        run(honest, bots)
    else:
        quit_ = sessions[CAROL].abort("I saw my hand and I leave")
        for session in honest:
            with pytest.raises(Aborted):
                session.receive(quit_.raw, CAROL)
    for session in honest:  # both honest peers' transcripts
        path = written(tmp_path / f"{NAMES[session.seat]}.p2pw", raws(session.log))
        verdict = judged(path)
        assert verdict.valid and verdict.settlement.seat == CAROL
        (hand,) = verdict.to_json()["hands"]
        assert (hand["trumps"], hand["scores"], hand["offenders"], hand["left"]) == ("?", [0, 0, 0], [], [CAROL])
        assert '[Trumps "?"]' in scoresheet(verdict)
        assert cli.main(["show", str(path)]) == 0 and "carol" in capsys.readouterr().out


# -- 2. a badly signed message naming a seat the table lacks -------------------------------------


@pytest.mark.parametrize("seat", [3, 5])
def test_a_badly_signed_message_from_a_seat_the_table_lacks_is_refused_and_blames_nobody(seat, tmp_path, capsys):
    start = seated(3)[0][ALICE].log[0]
    stranger = seal(Ed25519PrivateKey.generate(), 1, start.digest, seat, Accept())
    path = written(tmp_path / "g.p2pw", raws([start, stranger]))
    code, json_report = report(capsys, path)
    assert code == 1 and not json_report["valid"]
    error = json_report["error"]
    assert (error["seq"], error["seat"], error["name"], error["fingerprint"]) == (1, None, None, None)
    assert error["reason"] == f"message 1 from seat {seat} has a bad signature; " + DAMAGED.format(1)


# -- 3. a START with both hands and minutes ------------------------------------------------------


def test_a_start_naming_both_hands_and_minutes_is_an_invalid_start(tmp_path, capsys):
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    players = tuple(Player(name, public_bytes(key.public_key())) for name, key in zip(NAMES, keys))
    start = start_message(keys[0], Table(BoxWhist(2), MatchLength(hands=3, minutes=30), players, bytes(32)))
    accept = seal(keys[1], 1, start.digest, 1, Accept())
    with pytest.raises(SignatureError, match="at most one of hands and minutes"):
        parse(start.raw)
    verdict = judged(written(tmp_path / "g.p2pw", raws([start, accept])))
    assert not verdict.valid and verdict.session is None
    assert (verdict.error.seq, verdict.error.seat) == (0, None)
    assert "a match length names at most one of hands and minutes" in verdict.error.reason
    assert cli.main(["verify", str(tmp_path / "g.p2pw")]) == 1
    assert capsys.readouterr().out.startswith("INVALID: message 0: a match length names at most one")


# -- 4. what cannot be read of a file ------------------------------------------------------------


def test_a_malformed_message_then_the_recorders_abort_is_blamed_as_the_abort_says(two, tmp_path, capsys):
    """session.md §5's case: alice records bob's malformed message and her ABORT naming the
    connection that carried it, bob's; the log is invalid there, and bob is blamed."""
    alice, kept = two[ALICE], raws(two[ALICE].log)
    move = bobs_move(two)
    notice = alice.abort("bob sent a message not in msgpack's shortest encoding", culprit=BOB)
    path = written(tmp_path / "g.p2pw", [*kept, stretched(move), notice.raw])
    code, json_report = report(capsys, path)
    assert code == 1 and not json_report["valid"]
    error = json_report["error"]
    assert (error["seq"], error["seat"], error["name"]) == (move.seq, BOB, "bob")
    assert error["reason"].startswith("a message not in msgpack's shortest encoding; seat 0, which received it, "
                                      "blames bob: bob sent a message")
    assert json_report["head"] == parse(kept[-1]).digest.hex()  # the last good message's


def test_a_message_whose_body_has_the_wrong_shape_with_no_abort_after_it_blames_nobody(two, tmp_path):
    bob = two[BOB]
    wrong = sign(bob._key, len(bob.log), bob.head, BOB, "play", {"claim": None, "blind": None})
    verdict = judged(written(tmp_path / "g.p2pw", [*raws(two[ALICE].log), wrong]))
    assert not verdict.valid and verdict.error.seat is None and verdict.error.seq == len(bob.log)
    assert verdict.error.reason.endswith(DAMAGED.format(len(bob.log)))


def test_a_frame_over_the_limit_is_invalid_where_it_stands(two, tmp_path):
    path = written(tmp_path / "g.p2pw", raws(two[ALICE].log))
    with path.open("ab") as out:
        out.write(LENGTH.pack(MAX_FRAME + 1) + bytes(100))
    verdict = judged(path)
    seq = len(two[ALICE].log)
    assert not verdict.valid and (verdict.error.seq, verdict.error.seat) == (seq, None)
    assert verdict.error.reason.startswith(f"a frame announces {MAX_FRAME + 1} bytes, over the {MAX_FRAME}-byte limit")


def test_a_file_ending_inside_its_last_message_is_judged_as_far_as_it_goes(two, tmp_path, capsys):
    """A crash while the last message was written (wire.md §4): the whole messages before it
    are a valid, unfinished game, and the verdict says where the file ends."""
    log, torn = two[ALICE].log, frame(bobs_move(two).raw)[:-10]
    path = written(tmp_path / "g.p2pw", raws(log))
    with path.open("ab") as out:
        out.write(torn)
    verdict = judged(path)
    assert verdict.valid and not verdict.complete and verdict.head == log[-1].digest
    assert verdict.stopped == (f"the file ends inside message {len(log)} ({len(torn)} stray bytes); before it, the "
                               f"transcript ends at message {len(log) - 1}, waiting for bob (seat 1) to send play")
    assert cli.main(["verify", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("valid, unfinished")
    assert out[1].startswith(f"unfinished: the file ends inside message {len(log)}")


@pytest.mark.parametrize("content", [b"", b"garbage", MAGIC[:5]])
def test_json_is_one_object_even_for_a_file_that_is_no_transcript(content, tmp_path, capsys):
    path = tmp_path / "junk.p2pw"
    path.write_bytes(content)
    code = cli.main(["verify", "--json", str(path)])
    captured = capsys.readouterr()
    json_report = json.loads(captured.out)
    assert code == 2 and json_report["valid"] is False and json_report["complete"] is False
    assert "not a p2pwhist transcript" in json_report["error"]["reason"] and json_report["error"]["seq"] is None
    assert captured.err.count("\n") == 1 and "not a p2pwhist transcript" in captured.err


# -- 5. no blame without evidence -----------------------------------------------------------------


def test_a_badly_signed_message_with_no_abort_after_it_blames_nobody(two, tmp_path, capsys):
    move = bytearray(bobs_move(two).raw)
    move[-1] ^= 1  # the signature's last byte
    seq = len(two[ALICE].log)
    code, json_report = report(capsys, written(tmp_path / "g.p2pw", [*raws(two[ALICE].log), bytes(move)]))
    assert code == 1
    assert json_report["error"] == {"seq": seq, "seat": None, "name": None, "fingerprint": None,
                                    "reason": f"message {seq} from seat 1 has a bad signature; " + DAMAGED.format(seq)}
    assert cli.main(["verify", str(tmp_path / "g.p2pw")]) == 1
    assert capsys.readouterr().out == f"INVALID: message {seq}: message {seq} from seat 1 has a bad signature; " \
        f"{DAMAGED.format(seq)}\n"


def test_a_replayed_message_with_no_abort_after_it_blames_nobody(two):
    log = two[ALICE].log
    verdict = verify([*log, log[-1]])
    assert not verdict.valid and verdict.error.seat is None and verdict.error.seq == log[-1].seq
    assert "does not follow" in verdict.error.reason and verdict.error.reason.endswith(DAMAGED.format(log[-1].seq))


# -- a fuzzer: bytes changed anywhere --------------------------------------------------------------


@pytest.fixture(scope="module")
def honest_file() -> bytes:
    log = random_match(BoxWhist(2), hands=1, seed=26)[ALICE].log
    return MAGIC + b"".join(frame(message.raw) for message in log)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_transcript_with_bytes_changed_gets_a_verdict_or_one_clean_error(honest_file, tmp_path_factory, data):
    damaged = bytearray(honest_file)
    for _ in range(data.draw(st.integers(1, 4), "changes")):
        at = data.draw(st.integers(0, len(damaged) - 1), "at")
        damaged[at] = data.draw(st.integers(0, 255), "byte")
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(damaged))), "cut")
    path = tmp_path_factory.mktemp("fuzz") / "g.p2pw"
    path.write_bytes(bytes(damaged[:cut]))
    try:
        verdict = judged(path)
    except TranscriptError as error:
        assert error.index is None  # the file as a whole: no transcript
        return
    json.dumps(verdict.to_json())
    assert cli._verdict_lines(verdict)
    if verdict.valid:
        scoresheet(verdict)
