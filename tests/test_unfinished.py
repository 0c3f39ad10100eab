"""An unfinished game goes on only at the same table: ``p2pwhist resume``, the very command
that started it, or a host whose WELCOME names it. Any other ``host`` or ``join`` starts a new
table and says in one line what waits; an old game never takes a new one over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import MemoryNetwork, options

from p2pwhist import cli, net
from p2pwhist.bodies import Player, Table
from p2pwhist.gamefiles import SecretFile, our_unfinished, read_command, reopen, started_by, unfinished
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.home import HomeError, command_path, load_identity, secrets_path
from p2pwhist.identity import fingerprint
from p2pwhist.session import start_message
from p2pwhist.session_events import Moved
from p2pwhist.table import Refused
from p2pwhist.transcript import MAGIC, read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import frame


def _planted_game(games: Path, name: str, host_key: Ed25519PrivateKey, joiner_key: Ed25519PrivateKey,
                  argv: list[str], host_name: str = "dave") -> Path:
    """The files an unfinished game leaves: its transcript (START alone), an empty secrets
    file and the command that started it, all private, as a game makes them."""
    games.mkdir(parents=True, exist_ok=True)
    players = (Player(host_name, host_key.public_key().public_bytes_raw()),
               Player("bob", joiner_key.public_key().public_bytes_raw()))
    start = start_message(host_key, Table(BoxWhist(2), MatchLength(hands=1), players, os.urandom(32), "2026-12-01"))
    path = games / f"{name}.p2pw"
    path.write_bytes(MAGIC + frame(start.raw))
    command_path(path).write_text(json.dumps({"argv": argv}))
    secrets_path(path).write_bytes(b"")
    for made in (path, command_path(path), secrets_path(path)):
        made.chmod(0o600)
    return path


def test_only_the_very_command_that_started_a_game_goes_on_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    games = tmp_path / "games"
    key = Ed25519PrivateKey.generate()
    old = _planted_game(games, "old", key, Ed25519PrivateKey.generate(), ["host", "--port", "7900"])
    assert started_by(["host", "--port", "7900"]) == old
    assert started_by(["host", "--port", "7901"]) is None
    assert started_by(["host"]) is None


@pytest.mark.parametrize("planting", ["readable by others", "a link"])
def test_a_command_file_not_privately_ours_runs_nothing(tmp_path, monkeypatch, planting):
    """Another user's command file, or a link to one, beside a transcript must never choose
    what ``resume`` runs."""
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    path = _planted_game(tmp_path / "games", "old", Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate(),
                         ["join", "mallory.example:7878"])
    command = command_path(path)
    if planting == "a link":
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text(command.read_text())
        elsewhere.chmod(0o600)
        command.unlink()
        command.symlink_to(elsewhere)
    else:
        command.chmod(0o644)
    with pytest.raises(HomeError):
        read_command(path)
    assert started_by(["join", "mallory.example:7878"]) is None
    assert cli.main(["resume", str(path)]) == 2


def test_a_port_outside_the_range_is_refused_not_wrapped(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["host", "--port", "99999"])
    assert exited.value.code == 2
    assert "a port is 1 to 65535 (or 0: any free one), not 99999" in capsys.readouterr().err


def _host_says(home: Path, *args: str, until: str) -> str:
    """What ``p2pwhist host ARGS`` prints up to a line containing ``until``; then it is stopped."""
    process = subprocess.Popen([sys.executable, "-m", "p2pwhist", "host", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                               env={**os.environ, "P2PWHIST_HOME": str(home)})
    said = []
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            said.append(line)
            if until in line:
                break
    finally:
        process.kill()
        process.wait()
    return "".join(said)


def test_a_host_command_for_another_table_starts_it_and_says_what_waits(tmp_path):
    """``host --port 7900`` used to resume the last unfinished game silently, telling its
    joiners to return to a port they had never heard of, and there was no way to start
    afresh. Now only the very command goes on with its game."""
    key = load_identity(tmp_path / "identity.pem")
    argv = ["--port", "0", "--bind", "127.0.0.1", "--bot", "random", "--hands", "1"]
    old = _planted_game(tmp_path / "games", "old", key, Ed25519PrivateKey.generate(), ["host", *argv], "alice")
    fresh = _host_says(tmp_path, *argv[:-1], "2", until="Hosting")  # another match length: another command
    assert (f"An unfinished game (Box Whist with bob, hosted by you) is waiting in {old}: "
            f"p2pwhist resume {old} goes back to it. This is a new table.") in fresh
    assert "Hosting Box Whist for 2 players" in fresh
    again = _host_says(tmp_path, *argv, until="return by themselves")
    assert f"Resuming the unfinished game in {old}" in again and "Hosting" not in again


async def test_a_join_for_a_new_table_joins_it_checks_expect_and_says_what_waits(tmp_path, monkeypatch, autojump_clock):
    """An old unfinished game with dave took over a new ``join`` of dave's new table: it
    resumed the old game, never checked ``--expect``, and failed with "not a p2pwhist READY"."""
    home = tmp_path / "bob-home"
    monkeypatch.setenv("P2PWHIST_HOME", str(home))
    dave_key, bob_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    old = _planted_game(home / "games", "old", dave_key, bob_key, ["join", "dave.lan:7878"])
    network = MemoryNetwork()
    dave = options("dave", dave_key, tmp_path, seed=3)
    bob_lines: list[str] = []
    bob = options("bob", bob_key, tmp_path, seed=4, lines=bob_lines)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(net.host, dave, net.HostOptions(BoxWhist(2), MatchLength(hands=1)),
                           [network.listen("dave.lan")])
        with pytest.raises(net.NetError, match="does not sit down: the host's key is"):
            await net.join(bob, "dave.lan", 7878, "0000-0000-0000-0000-0000-0000-0000-0000",
                           connect=network.connector())
        nursery.cancel_scope.cancel()
    async with trio.open_nursery() as nursery:
        listener = network.listen("dave.lan")
        nursery.start_soon(net.host, dave, net.HostOptions(BoxWhist(2), MatchLength(hands=1)), [listener])
        record = await net.join(bob, "dave.lan", 7878, fingerprint(dave_key.public_key().public_bytes_raw()),
                                connect=network.connector())
    assert record.transcript == tmp_path / "bob.p2pw" and verify(read_transcript(record.transcript)).complete
    assert (f"An unfinished game (Box Whist with dave, hosted by dave) is waiting in {old}: "
            f"p2pwhist resume {old} goes back to it. This is a new table.") in bob_lines
    assert [game.path for game in our_unfinished(bob_key)] == [old]  # untouched, still waiting


async def test_a_plain_join_takes_up_the_game_its_host_is_playing(tmp_path, monkeypatch, autojump_clock):
    """Both peers stop in the middle of a hand; the host goes on with its game, and bob's plain
    ``join`` learns from its WELCOME that this is his game, and takes it up."""
    home = tmp_path / "bob-home"  # bob's; alice keeps her files elsewhere, as on her own machine
    monkeypatch.setenv("P2PWHIST_HOME", str(home))
    games = home / "games"
    elsewhere = tmp_path / "alice"
    network = MemoryNetwork()
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    moved = 0

    async with trio.open_nursery() as nursery:

        def stop_at_the_fifth_card(event) -> None:
            nonlocal moved
            moved += isinstance(event, Moved)
            if moved == 5:
                nursery.cancel_scope.cancel()  # as Ctrl-C on both: the game's files stay

        alice = options("alice", keys[0], elsewhere, on_event=stop_at_the_fifth_card, command=["host"])
        bob = options("bob", keys[1], games, seed=1, command=["join", "alice.lan"])
        nursery.start_soon(net.host, alice, net.HostOptions(BoxWhist(2), MatchLength(hands=1)), [network.listen()])
        nursery.start_soon(net.join, bob, "alice.lan", 7878, None, network.connector())
    assert secrets_path(elsewhere / "alice.p2pw").exists() and secrets_path(games / "bob.p2pw").exists()
    held = len(list(read_transcript(games / "bob.p2pw")))

    bob_lines: list[str] = []
    alice = options("alice", keys[0], elsewhere, resume=elsewhere / "alice.p2pw", command=["host"])
    bob = options("bob", keys[1], seed=1, lines=bob_lines, command=["join", "alice.lan"])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(net.host, alice, net.HostOptions(BoxWhist(2), MatchLength(hands=1)),
                           [network.listen()])
        record = await net.join(bob, "alice.lan", 7878, connect=network.connector())
    assert record.transcript == games / "bob.p2pw"
    assert f"Resuming the unfinished game in {games / 'bob.p2pw'}, which this host is playing" in bob_lines
    messages = list(read_transcript(record.transcript))
    assert len(messages) > held and verify(read_transcript(record.transcript)).complete
    assert not secrets_path(games / "bob.p2pw").exists()


async def test_resume_refuses_a_host_that_plays_another_table(tmp_path, monkeypatch, autojump_clock):
    home = tmp_path / "home"
    monkeypatch.setenv("P2PWHIST_HOME", str(home))
    dave_key, bob_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    old = _planted_game(home / "games", "old", dave_key, bob_key, ["join", "dave.lan:7878"])
    network = MemoryNetwork()
    dave = options("dave", dave_key, tmp_path, seed=3)
    bob = options("bob", bob_key, tmp_path, resume=old)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(net.host, dave, net.HostOptions(BoxWhist(2), MatchLength(hands=1)),
                           [network.listen("dave.lan")])
        with pytest.raises(Refused, match=r"dave \(the host\) is seating a new table, not this game"):
            await net.join(bob, "dave.lan", 7878, connect=network.connector())
        nursery.cancel_scope.cancel()


def test_a_game_goes_on_in_one_process_at_a_time(tmp_path, monkeypatch, capsys):
    """A second ``resume`` of a game another process is playing is refused in one line before
    it reads or writes a thing: it would append the same messages to the same transcript (and
    cut what the other is writing off its end, as a crash's torn message)."""
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path))
    key = load_identity()
    path = _planted_game(tmp_path / "games", "going", key, Ed25519PrivateKey.generate(),
                         ["host", "--port", "7900"])
    with path.open("ab") as being_written:  # the other process is halfway through a message
        being_written.write(b"\x00\x00\x01")
    before = path.read_bytes()
    playing = SecretFile(secrets_path(path), reopen=True)
    assert cli.main(["resume", str(path)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"p2pwhist: cannot resume {path}: another p2pwhist on this machine is playing this game now " \
        f"(it holds {secrets_path(path)})"
    assert path.read_bytes() == before
    playing.close()  # that process ends: the game may be taken up
    assert read_command(path) == ["host", "--port", "7900"]
    session, files = reopen(unfinished(path, key), key)
    files.close(over=False, warn=print)
    assert path.read_bytes() == before[:-3] and session.seat == 0


def test_a_local_match_keeps_no_transcript_so_names_none(capsys):
    assert cli.main(["play", "--local", "--transcript", "x.p2pw"]) == 2
    assert capsys.readouterr().err == "p2pwhist: a --local match keeps no transcript, so it takes no --transcript\n"


def test_only_a_computer_player_stops_with_its_input(capsys):
    """``join --stop-with-input`` reads standard input for its end: a person's keys would go to it."""
    assert cli.main(["join", "127.0.0.1:9", "--stop-with-input"]) == 2
    assert capsys.readouterr().err == \
        "p2pwhist: --stop-with-input is for a computer player (--bot), whose input nobody types into\n"
