"""The name a person plays under, asked once and remembered, and ``--version`` (issue 23,
item 8): a saved name is read defensively (``home.Remembered``): whatever the file holds, the
program goes on, and asks again."""

from __future__ import annotations

import builtins
import os
import sys
from pathlib import Path

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import p2pwhist
from p2pwhist import cli, cli_play
from p2pwhist.bodies import LOG_VERSION, check_name
from p2pwhist.home import MAX_NAME_BYTES, Remembered
from p2pwhist.table import PROTOCOL_VERSION

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    monkeypatch.setenv("USER", "")
    monkeypatch.delenv("USERNAME", raising=False)
    return tmp_path


def _answers(monkeypatch, *answers: str) -> list[str]:
    """``input`` answers each question with the next of ``answers``; the questions asked."""
    asked: list[str] = []
    left = list(answers)

    def answer(question: str = "") -> str:
        asked.append(question)
        if not left:
            raise AssertionError(f"asked once too often: {question!r}")
        return left.pop(0)

    monkeypatch.setattr(builtins, "input", answer)
    return asked


def test_version_names_the_program_and_the_protocol(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == (f"p2pwhist {cli.program_version()} (protocol version {PROTOCOL_VERSION}, "
                                       f"log version {LOG_VERSION})\n")
    assert cli.program_version() == p2pwhist.__version__  # the package installed is this tree


def test_play_takes_a_name():
    assert cli.build_parser().parse_args(["play", "--name", "ann"]).name == "ann"


def test_a_person_at_a_terminal_is_asked_once_and_the_answer_is_remembered(home, monkeypatch):
    asked = _answers(monkeypatch, "ann")
    assert cli_play._person_name(None, asking=True) == "ann"
    assert cli_play._person_name(None, asking=True) == "ann"  # not asked again
    assert asked == ["Your name at the table? [player] "]  # no login name to offer, with $USER empty
    assert (home / "name").read_text() == "ann\n"
    assert (home / "name").stat().st_mode & 0o777 == 0o600


def test_enter_takes_the_login_name_offered(home, monkeypatch):
    monkeypatch.setenv("USER", "bob")
    asked = _answers(monkeypatch, "")
    assert cli_play._person_name(None, asking=True) == "bob"
    assert asked == ["Your name at the table? [bob] "]
    assert Remembered.name().load() == "bob"


def test_enter_with_no_login_name_takes_player(home, monkeypatch):
    """$USER empty: Enter takes the name offered, "player" (it used to be refused as no name)."""
    asked = _answers(monkeypatch, "")
    assert cli_play._person_name(None, asking=True) == "player"
    assert asked == ["Your name at the table? [player] "]


def test_a_name_that_is_no_name_is_asked_again(home, monkeypatch, capsys):
    asked = _answers(monkeypatch, "\x07", "x" * 40, "ann")
    assert cli_play._person_name(None, asking=True) == "ann"
    assert len(asked) == 3 and "a name is 1..32 printable characters" in capsys.readouterr().out


def test_a_name_given_at_a_terminal_becomes_the_default(home, monkeypatch):
    _answers(monkeypatch)  # never asked
    assert cli_play._person_name("carol", asking=True) == "carol"
    assert cli_play._person_name(None, asking=True) == "carol"


def test_bots_and_programs_without_a_terminal_never_ask_nor_change_the_name(home, monkeypatch):
    _answers(monkeypatch)  # never asked
    assert cli_play._person_name(None, asking=False) == "player"
    assert cli_play._person_name("random-1", asking=False) == "random-1"
    assert not (home / "name").exists()
    monkeypatch.setenv("USER", "dave")
    assert cli_play._person_name(None, asking=False) == "dave"


@pytest.mark.parametrize("content", [
    b"\xff\xfe not utf-8\n",
    b"a" * (10 * MAX_NAME_BYTES),  # oversized: never read whole
    b"ann\nbob\n",  # two lines
    b"\x1b[2Jann\n",  # a terminal escape
    b" ann\n",
    b"\n",
])
def test_a_garbage_or_oversized_names_file_counts_as_no_name(home, monkeypatch, content):
    (home / "name").write_bytes(content)
    assert Remembered.name().load() is None
    _answers(monkeypatch, "ann")
    assert cli_play._person_name(None, asking=True) == "ann"  # asked, and the file replaced
    assert (home / "name").read_bytes() == b"ann\n"


@settings(max_examples=300, deadline=None)
@given(content=st.binary(max_size=3 * MAX_NAME_BYTES) | st.text(max_size=80).map(lambda t: t.encode("utf-8")))
def test_whatever_the_names_file_holds_it_reads_as_a_name_or_as_none(tmp_path_factory, content):
    """The fuzz test of the one decoder of the names file: never an error, and a name read is
    one START accepts (check_name) and saving it writes it back byte for byte."""
    path = tmp_path_factory.mktemp("home") / "name"
    path.write_bytes(content)
    name = Remembered(path, check_name, 'your name').load()
    if name is not None:
        assert check_name(name) == name and content in (name.encode("utf-8"), name.encode("utf-8") + b"\n")


def test_a_names_file_that_is_no_file_never_stops_the_program(home, monkeypatch):
    os.mkfifo(home / "name")  # would hang a plain open
    assert Remembered.name().load() is None
    (home / "name").unlink()
    (home / "name").mkdir()
    assert Remembered.name().load() is None
    _answers(monkeypatch, "ann")
    assert cli_play._person_name(None, asking=True) == "ann"  # not saved: said so, and played on


def test_play_at_a_terminal_asks_once(tmp_path):
    """``p2pwhist play`` in a real pseudo-terminal, $USER empty: asked once, then never again."""
    env = dict(os.environ, P2PWHIST_HOME=str(tmp_path), NO_COLOR="1", TERM="xterm", USER="")
    command = ["-m", "p2pwhist", "play", "--plain", "--hands", "1", "--bot", "random"]
    for run in range(2):
        child = pexpect.spawn(sys.executable, command, cwd=str(REPO), env=env, encoding="utf-8", timeout=60)
        try:
            first = child.expect(["Your name at the table\\? ", "Your play: "])
            assert first == (1 if run else 0)
            if not run:
                child.sendline("ann")
                child.expect("Your play: ")
        finally:
            child.close(force=True)
    assert (tmp_path / "name").read_text() == "ann\n"


def test_auto_forced_is_remembered_until_turned_off(tmp_path, monkeypatch):
    """``--auto-forced`` is a person's choice for their later games too (issue 23: "remembered");
    ``--no-auto-forced`` takes it back; a file that holds no choice counts as off."""
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    parse = cli.build_parser().parse_args
    assert [parse(["play", *flag]).auto_forced for flag in ([], ["--auto-forced"], ["--no-auto-forced"])] == [
        None, True, False]
    assert cli_play._auto_forced(None) is False  # never chosen
    assert cli_play._auto_forced(True) is True
    assert cli_play._auto_forced(None) is True  # remembered
    assert cli_play._auto_forced(False) is False
    assert cli_play._auto_forced(None) is False
    (tmp_path / "auto-forced").write_bytes(b"on please\n")
    assert cli_play._auto_forced(None) is False
