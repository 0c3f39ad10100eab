"""``verify --json`` prints one JSON object whatever FILE is (issue 23, item 7): "valid" false
and the reason for a file that is missing, a directory, empty, garbage, or a header with no
message; a file that ends inside a message is judged on its complete prefix ("valid",
unfinished, and where the file ends). With several files, one JSON array, an object per file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from verdicts import ALICE, bob_to_move, play_until, raws, seated, transcript

from p2pwhist import cli
from p2pwhist.transcript import MAGIC
from p2pwhist.wire import frame


def report(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, object]:
    """``p2pwhist verify --json PATHS``: its exit status and the one JSON value it printed."""
    code = cli.main(["verify", "--json", *map(str, paths)])
    return code, json.loads(capsys.readouterr().out)  # raises unless stdout is exactly one JSON value


def unreadable(json_report: object, reason: str) -> bool:
    return isinstance(json_report, dict) and json_report["valid"] is False and json_report["complete"] is False \
        and json_report["error"]["seat"] is None and reason in json_report["error"]["reason"]


@pytest.fixture
def log() -> list[bytes]:
    """A game in progress: bob is to move in the first hand."""
    sessions, bots = seated(2)
    play_until(sessions, bots, bob_to_move)
    return raws(sessions[ALICE].log)


def test_a_missing_file(tmp_path, capsys):
    code, json_report = report(capsys, tmp_path / "nowhere.p2pw")
    assert code == 2 and unreadable(json_report, "No such file or directory")


def test_a_directory(tmp_path, capsys):
    code, json_report = report(capsys, tmp_path)
    assert code == 2 and unreadable(json_report, "Is a directory")


def test_an_empty_file(tmp_path, capsys):
    (tmp_path / "empty.p2pw").write_bytes(b"")
    code, json_report = report(capsys, tmp_path / "empty.p2pw")
    assert code == 2 and unreadable(json_report, "not a p2pwhist transcript")


def test_a_garbage_file(tmp_path, capsys):
    (tmp_path / "garbage.p2pw").write_bytes(bytes(range(256)) * 4)
    code, json_report = report(capsys, tmp_path / "garbage.p2pw")
    assert code == 2 and unreadable(json_report, "not a p2pwhist transcript")


def test_a_header_and_no_message(tmp_path, capsys):
    (tmp_path / "header.p2pw").write_bytes(MAGIC)
    code, json_report = report(capsys, tmp_path / "header.p2pw")
    assert code == 1 and unreadable(json_report, "the transcript is empty")


def test_a_file_ending_inside_its_first_message_is_an_empty_transcript_that_says_where_it_ends(log, tmp_path, capsys):
    start = frame(log[0])[:-7]
    (tmp_path / "torn.p2pw").write_bytes(MAGIC + start)
    code, json_report = report(capsys, tmp_path / "torn.p2pw")
    assert code == 1 and json_report["error"]["seq"] == 0
    assert json_report["error"]["reason"] == \
        f"the transcript is empty: the file ends inside message 0 ({len(start)} stray bytes)"


@pytest.mark.parametrize("cut", [1, 4, 5, 40])  # inside the length, just after it, inside the message
def test_a_truncated_file_is_judged_on_its_complete_prefix(log, tmp_path, capsys, cut):
    whole = len(log) - 1
    torn = frame(log[-1])[:cut]
    (tmp_path / "torn.p2pw").write_bytes(transcript(log[:-1]) + torn)
    code, json_report = report(capsys, tmp_path / "torn.p2pw")
    assert code == 0 and json_report["valid"] is True and json_report["complete"] is False
    assert json_report["stopped"].startswith(f"the file ends inside message {whole} ({cut} stray bytes)")
    assert json_report["game"] == "boxwhist" and json_report["error"] is None


def test_several_files_make_one_array_with_an_object_for_each(log, tmp_path, capsys):
    (tmp_path / "good.p2pw").write_bytes(transcript(log))
    (tmp_path / "torn.p2pw").write_bytes(transcript(log) + frame(log[-1])[:9])
    (tmp_path / "empty.p2pw").write_bytes(b"")
    (tmp_path / "garbage.p2pw").write_bytes(b"\xff" * 100)
    (tmp_path / "dir.p2pw").mkdir()
    paths = [tmp_path / name for name in ("good.p2pw", "missing.p2pw", "dir.p2pw", "empty.p2pw", "garbage.p2pw",
                                          "torn.p2pw")]
    code, json_report = report(capsys, *paths)
    assert code == 2 and isinstance(json_report, list)
    assert [item["file"] for item in json_report] == list(map(str, paths))
    assert [item["valid"] for item in json_report] == [True, False, False, False, False, True]
    assert all(item["error"]["seq"] is None for item in json_report[1:5])
    assert json_report[5]["stopped"].startswith(f"the file ends inside message {len(log)} (9 stray bytes)")


def test_several_files_in_words_name_each_file_that_is_no_transcript_once(log, tmp_path, capsys):
    (tmp_path / "good.p2pw").write_bytes(transcript(log))
    (tmp_path / "garbage.p2pw").write_bytes(b"\xff" * 100)
    paths = [tmp_path / name for name in ("good.p2pw", "missing.p2pw", "garbage.p2pw")]
    code = cli.main(["verify", *map(str, paths)])
    said = capsys.readouterr()
    assert code == 2 and said.out.startswith(f"{paths[0]}: valid, unfinished")
    assert said.err.splitlines() == [f"p2pwhist: {paths[1]}: No such file or directory",
                                     f"p2pwhist: {paths[2]}: not a p2pwhist transcript (no P2PWHST1 header)"]
