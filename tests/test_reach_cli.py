"""``join`` with no address, on what was heard (the listening itself is replaced here; the real
multicast is in test_reach_lan.py): the table found becomes the command's address and
``--expect``, so that ``resume`` goes back to that host; a person picks among several, a bot
or a pipe never guesses; a table with another fingerprint than the one expected is not joined.
``watch`` with no address finds a table the same way, and says it watches it."""

from __future__ import annotations

import argparse

import pytest

from p2pwhist import cli, cli_play
from p2pwhist.reach import TableAd
from p2pwhist.reach.lan import Heard, NoTable

ALICE = TableAd("alice", "boxwhist", (), 2, 1, "6d07-5d91-4ca4-7396-23df-21fc-ef66-48d8", 7878, ("10.0.0.2",))
CAROL = TableAd("carol", "box", (("variant", "seed"),), 3, 2, "aaaa-bbbb-cccc-dddd-eeee-ffff-0000-1111", 7900,
                ("fe80::9", "10.0.0.3"))


def parsed(*argv: str) -> argparse.Namespace:
    args = cli.build_parser().parse_args(argv)
    args.argv = list(argv)
    return args


@pytest.fixture
def heard(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))

    def hear(*tables: TableAd) -> None:
        monkeypatch.setattr(cli_play, "hear_tables", lambda: Heard(tables))
    return hear


def test_the_one_table_heard_is_joined_and_its_address_and_key_are_what_resume_runs(heard, capsys) -> None:
    heard(ALICE)
    args = parsed("join", "--name", "bob", "--expect", "6D07 5D91 4CA4 7396 23DF 21FC EF66 48D8", "--bot", "random")
    cli_play._choose_table(args)
    assert (args.address, args.expect) == ("10.0.0.2:7878", ALICE.fingerprint)
    assert args.argv == ["join", "10.0.0.2:7878", "--expect", ALICE.fingerprint, "--name", "bob", "--bot", "random"]
    assert "Joining alice's table at 10.0.0.2:7878" in capsys.readouterr().out


def test_watch_with_no_address_says_it_watches_the_table_heard(heard, capsys) -> None:
    heard(ALICE)
    args = parsed("watch")
    cli_play._choose_table(args, watching=True)
    assert args.address == "10.0.0.2:7878" and args.argv == ["watch", "10.0.0.2:7878"]
    out = capsys.readouterr().out
    assert "Watching alice's table at 10.0.0.2:7878" in out and "Joining" not in out


def test_a_table_with_another_key_than_the_one_expected_is_not_joined(heard) -> None:
    heard(ALICE)
    with pytest.raises(NoTable, match="no table with that key fingerprint heard"):
        cli_play._choose_table(parsed("join", "--expect", CAROL.fingerprint))


def test_several_tables_are_never_guessed_for_a_bot(heard) -> None:
    heard(ALICE, CAROL)
    with pytest.raises(NoTable, match="several tables heard") as raised:
        cli_play._choose_table(parsed("join", "--bot", "random"))
    assert (f"  carol: Box for 3, variant seed, 2 of 3 seats taken, at 10.0.0.3:7900\n"
            f"    p2pwhist join 10.0.0.3:7900 --expect {CAROL.fingerprint}") in str(raised.value)


def test_a_person_picks_among_several_and_may_pick_none(heard, monkeypatch, capsys) -> None:
    heard(ALICE, CAROL)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter(["7", "two", "2"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    args = parsed("join")
    cli_play._choose_table(args)
    assert args.argv == ["join", "10.0.0.3:7900", "--expect", CAROL.fingerprint]
    out = capsys.readouterr().out
    assert f"  1. alice: Box Whist for 2, 1 of 2 seats taken, at 10.0.0.2:7878\n     key {ALICE.fingerprint}" in out
    assert "  2. carol: Box for 3" in out
    assert out.count("Type a number from 1 to 2.") == 2
    monkeypatch.setattr("builtins.input", lambda prompt: "")
    with pytest.raises(NoTable, match="no table chosen"):
        cli_play._choose_table(parsed("join"))


def test_no_table_heard_is_one_line_and_exit_1(heard, capsys) -> None:
    heard()
    assert cli.main(["join", "--bot", "random"]) == 1
    assert capsys.readouterr().err == ("p2pwhist: no table heard on this network within 2 s: ask the host for the "
                                       "join line it printed (p2pwhist join HOST[:PORT] --expect FINGERPRINT)\n")
