"""Per-user state: the files a game creates (never over a planted file or link, mode 0600) and
the known peers (keyed by key, remembered once a game has started, bounded, robust).

Unit tests on ``KnownPeers`` and file creation, then tests with real p2pwhist processes over
loopback TCP (``netutil.Peers``) and a hand-written peer (``FakePeer``) where one is needed."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import DEADLINE, POLL, FakePeer, Peer, Peers

from p2pwhist import cli, cli_play, net
from p2pwhist.home import (
    MAX_KNOWN,
    MAX_KNOWN_BYTES,
    ChangedKey,
    HomeError,
    KnownPeers,
    load_identity,
)
from p2pwhist.signed import fingerprint, public_bytes
from p2pwhist.transcript import TranscriptError, TranscriptWriter


def _key() -> bytes:
    return public_bytes(Ed25519PrivateKey.generate().public_key())


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _entries(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


# -- files a game creates --------------------------------------------------------------------


def _plant(kind: str, path: Path, elsewhere: Path) -> Path:
    """What another local user who can write the folder leaves at ``path``; returns the file
    whose contents they would read."""
    elsewhere.mkdir(exist_ok=True)
    loot = elsewhere / "loot"
    if kind == "file":
        path.write_bytes(b"")
        path.chmod(0o666)
        return path
    if kind == "symlink":
        loot.write_bytes(b"")
        loot.chmod(0o666)
    path.symlink_to(loot)  # "dangling": to a file they have not made yet
    return loot


PLANTED = ["file", "symlink", "dangling"]


def test_the_secrets_file_is_made_at_once_private_and_written_through_its_descriptor(tmp_path):
    saved = tmp_path / "game.p2pw.secrets"
    source = net._SecretFile(saved)
    assert _mode(saved) == 0o600  # made before the game, not at the first secret
    first = source()
    assert saved.read_bytes() == first
    ours = tmp_path / "ours"
    os.link(saved, ours)  # to read our file after its name is taken
    # Someone replaces the directory entry with a file of their own: the next secret still
    # goes into ours, through the descriptor kept open.
    saved.unlink()
    saved.write_bytes(b"")
    second = source()
    assert saved.read_bytes() == b""
    assert ours.read_bytes() == first + second


@pytest.mark.parametrize("kind", PLANTED)
def test_a_planted_secrets_file_is_refused_and_nothing_is_written_to_it(tmp_path, kind):
    saved = tmp_path / "game.p2pw.secrets"
    read_by_them = _plant(kind, saved, tmp_path / "theirs")
    with pytest.raises(HomeError) as refused:
        net._SecretFile(saved)()
    assert str(saved) in str(refused.value)
    assert not read_by_them.exists() or read_by_them.read_bytes() == b""


@pytest.mark.parametrize("kind", PLANTED)
def test_the_transcript_is_made_private_and_never_over_a_planted_file(tmp_path, kind):
    path = tmp_path / "game.p2pw"
    TranscriptWriter(path).close()
    assert _mode(path) == 0o600
    planted = tmp_path / "planted.p2pw"
    read_by_them = _plant(kind, planted, tmp_path / "theirs")
    with pytest.raises(TranscriptError):
        TranscriptWriter(planted)
    assert not read_by_them.exists() or read_by_them.read_bytes() == b""


@pytest.mark.parametrize("planted", ["game.p2pw.secrets", "game.p2pw"])
def test_a_planted_path_named_on_the_command_line_is_refused_before_anything_starts(tmp_path, monkeypatch, planted):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    (tmp_path / planted).symlink_to(tmp_path / "theirs")  # a link to nowhere yet: .exists() is False
    args = cli.build_parser().parse_args(["host", "--bot", "random", "--transcript", str(tmp_path / "game.p2pw")])
    with pytest.raises(cli_play.ConfigError) as refused:
        cli_play._options(args, cli_play._Display("random"))
    assert f"{tmp_path / planted} already exists" in str(refused.value)
    assert not (tmp_path / "theirs").exists()


def _wait_for_count(peer: Peer, text: str, count: int) -> None:
    deadline = time.monotonic() + DEADLINE
    while peer.out.read_text().count(text) < count:
        assert peer.running and time.monotonic() < deadline, peer.out.read_text()
        time.sleep(POLL)


@pytest.mark.parametrize("planted", ["alice.p2pw.secrets", "alice.p2pw"], ids=["secrets", "transcript"])
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_file_planted_while_the_host_waits_stops_it_before_the_game(tmp_path, planted, kind):
    """The host checked its --transcript paths when it started; someone plants one while it
    waits for players. It refuses the joiner before START, in one line, and writes nothing."""
    games = tmp_path / "games"
    games.mkdir()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--transcript", str(games / "alice.p2pw"))
        read_by_them = _plant(kind, games / planted, tmp_path / "theirs")
        bob = peers.join("bob", host).finish()
        hosted = host.peer.finish()
    assert hosted.code == 2
    assert str(games / planted) in hosted.error_line()
    assert bob.code == 1
    assert "refused us: alice cannot start the game" in bob.error_line()
    assert read_by_them.read_bytes() == b""
    assert sorted(p.name for p in games.iterdir()) == [planted]  # nothing of ours left beside it


def test_a_file_planted_while_a_joiner_waits_makes_it_leave_saying_why(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    with Peers(tmp_path) as peers:
        host = peers.host("alice", players=3)
        bob = peers.join("bob", host, "--transcript", str(games / "bob.p2pw"))
        host.peer.wait_for("bob joined")  # bob has checked his paths, and is seat 1
        read_by_them = _plant("file", games / "bob.p2pw.secrets", tmp_path / "theirs")
        carol = peers.join("carol", host)
        done = [p.finish() for p in (host.peer, bob, carol)]
    assert [d.code for d in done] == [1, 2, 1]
    assert "bob.p2pw.secrets already exists" in done[1].error_line()
    for other in done[0], done[2]:
        assert "bob (seat 1) stopped the game: bob cannot start the game" in other.error_line()
    assert read_by_them.read_bytes() == b""


# -- known peers: unit -----------------------------------------------------------------------


def test_peers_are_known_by_key_with_their_name_as_a_label(tmp_path):
    known = KnownPeers(tmp_path / "known_peers")
    bob, bobs_impostor = _key(), _key()
    assert known.load() == {}
    known.remember([("bob", bob)])
    known.remember([("robert", bob), ("bob", bobs_impostor)])  # bob's new name; another "bob"
    assert known.load() == {fingerprint(bob): "robert", fingerprint(bobs_impostor): "bob"}
    assert _entries(known.path) == [f"{fingerprint(bob)} robert", f"{fingerprint(bobs_impostor)} bob"]
    assert known.named("bob") == [fingerprint(bobs_impostor)]
    assert _mode(known.path) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["known_peers"]  # no temporary file left


def test_the_old_name_first_format_is_read_and_rewritten(tmp_path):
    bob, carol = _key(), _key()
    path = tmp_path / "known_peers"
    path.write_text(f"bob {fingerprint(bob)}\nold carol {fingerprint(carol)}\n")
    known = KnownPeers(path)
    assert known.load() == {fingerprint(bob): "bob", fingerprint(carol): "old carol"}
    known.remember([("carol", carol)])
    assert _entries(path) == [f"{fingerprint(bob)} bob", f"{fingerprint(carol)} carol"]


def test_the_file_stays_bounded_dropping_the_oldest(tmp_path):
    known = KnownPeers(tmp_path / "known_peers")
    keys = [_key() for _ in range(MAX_KNOWN + 500)]
    known.remember(("early", key) for key in keys[:MAX_KNOWN])
    known.remember([("played again", keys[0])])  # the oldest, played again: now the newest
    for start in range(MAX_KNOWN, len(keys), 100):  # a few saves, each re-reading the file
        known.remember(("late", key) for key in keys[start : start + 100])
    entries = known.load()
    assert len(entries) == MAX_KNOWN == len(_entries(known.path))
    assert fingerprint(keys[0]) in entries and entries[fingerprint(keys[0])] == "played again"
    assert fingerprint(keys[1]) not in entries and fingerprint(keys[-1]) in entries
    assert list(entries)[-1] == fingerprint(keys[-1])


def test_a_damaged_or_hostile_file_is_read_as_far_as_it_makes_sense(tmp_path):
    bob, carol = _key(), _key()
    path = tmp_path / "known_peers"
    garbage = b"\xff\xfe not utf-8\n\x00\x00\n" + b"x" * 100_000 + b"\n" + b"zz " * 50 + b"\n"
    path.write_bytes(
        b"\n".join([
            f"{fingerprint(bob)} bob".encode(),
            garbage,
            f"{fingerprint(carol)} " .encode() + b"\xc3\x28",  # a name that is not UTF-8
            f"{fingerprint(carol)} carol\x07".encode(),  # not printable
            f"{fingerprint(carol)} {'c' * 500}".encode(),  # too long for a name
            b"0000-1111 half a fingerprint",
            f"{fingerprint(carol)} carol\r".encode(),
        ])
    )
    known = KnownPeers(path)
    assert known.load() == {fingerprint(bob): "bob", fingerprint(carol): "carol"}
    known.remember([("dave", _key())])
    assert len(_entries(path)) == 3


def test_a_huge_file_is_read_only_at_its_end(tmp_path):
    bob = _key()
    path = tmp_path / "known_peers"
    with path.open("wb") as out:
        out.write(f"{fingerprint(_key())} oldest\n".encode())
        out.truncate(64 * MAX_KNOWN_BYTES)  # 64 MiB of NULs: never read
        out.seek(0, os.SEEK_END)
        out.write(f"\n{fingerprint(bob)} bob\n".encode())
    assert KnownPeers(path).load() == {fingerprint(bob): "bob"}
    KnownPeers(path).remember([("carol", _key())])
    assert path.stat().st_size < 1000


@pytest.mark.parametrize("what", ["directory", "fifo"])
def test_a_known_peers_path_that_is_no_file_is_an_error_not_a_crash_or_a_hang(tmp_path, what):
    path = tmp_path / "known_peers"
    path.mkdir() if what == "directory" else os.mkfifo(path)
    known = KnownPeers(path)
    with pytest.raises(HomeError):
        known.load()
    with pytest.raises(HomeError):
        known.remember([("bob", _key())])
    assert known.named("bob") == []


def test_a_save_that_fails_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    known = KnownPeers(tmp_path / "known_peers")
    bob = _key()
    known.remember([("bob", bob)])
    before = known.path.read_bytes()

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(HomeError):
        known.remember([("carol", _key())])
    assert known.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["known_peers"]


# -- known peers: the checks before a game ---------------------------------------------------


def _options(tmp_path: Path, trust_new=None) -> tuple[net.PeerOptions, list[str]]:
    lines: list[str] = []
    options = net.PeerOptions("alice", Ed25519PrivateKey.generate(), net.Agent(lambda view: None, False), None,
                              known=KnownPeers(tmp_path / "known_peers"), trust_new=trust_new, report=lines.append)
    return options, lines


def test_a_known_name_with_a_new_key_is_accepted_unattended_with_a_warning(tmp_path):
    options, lines = _options(tmp_path)
    old, new = _key(), _key()
    options.known.remember([("bob", old)])
    trio.run(net._check_trust, options, "bob", new)
    (line,) = lines
    assert "different key" in line and fingerprint(old) in line and fingerprint(new) in line
    assert options.known.load() == {fingerprint(old): "bob"}  # remembered only once a game starts


def test_a_person_is_asked_plainly_about_a_known_name_with_a_new_key(tmp_path, monkeypatch):
    known = KnownPeers(tmp_path / "known_peers")
    old, new = _key(), _key()
    known.remember([("bob", old)])
    asked: list[str] = []

    def answer(question: str) -> str:
        asked.append(question)
        return "n"

    monkeypatch.setattr("builtins.input", answer)
    monkeypatch.setattr(cli_play.sys, "stdin", type("Terminal", (), {"isatty": lambda self: True})())
    options, lines = _options(tmp_path, cli_play._trust_prompt(None, known))
    with pytest.raises(ChangedKey) as refused:
        trio.run(net._check_trust, options, "bob", new)
    (question,) = asked
    assert "different key from the 'bob' you played before" in question
    assert fingerprint(old) in question and fingerprint(new) in question
    assert fingerprint(old) in str(refused.value) and fingerprint(new) in str(refused.value)
    trio.run(net._check_trust, options, "bob", old)  # the key we know: no question
    assert len(asked) == 1


# -- known peers: between processes ----------------------------------------------------------


def _print_of(peer: Peer) -> str:
    return fingerprint(public_bytes(load_identity(peer.home / "identity.pem").public_key()))


def test_strangers_saying_hello_leave_nothing_behind_nor_lock_the_real_bob_out(tmp_path):
    """A stranger says HELLO as bob and leaves, and many others after him: the host remembers
    none of them, and the real bob then plays. After the game each peer knows the others."""
    with Peers(tmp_path) as peers:
        host = peers.host("alice", players=3)
        for number, name in enumerate(["bob"] + [f"stranger{i}" for i in range(20)], start=1):
            stranger = FakePeer.connect(host.port)
            stranger.sit(name, Ed25519PrivateKey.generate())
            _wait_for_count(host.peer, "joined (key", number)
            stranger.close()
            _wait_for_count(host.peer, "left before the game began", number)
        assert not (host.peer.home / "known_peers").exists()
        bob = peers.join("bob", host)
        carol = peers.join("carol", host)
        done = [p.finish() for p in (host.peer, bob, carol)]
    assert [d.code for d in done] == [0, 0, 0], [d.err for d in done]
    alice_print, bob_print, carol_print = _print_of(host.peer), _print_of(bob), _print_of(carol)
    assert KnownPeers(host.peer.home / "known_peers").load() == {bob_print: "bob", carol_print: "carol"}
    assert KnownPeers(bob.home / "known_peers").load() == {alice_print: "alice", carol_print: "carol"}
    assert _mode(host.peer.home / "known_peers") == 0o600


def test_players_listed_in_a_start_are_not_remembered_before_the_game_starts(tmp_path):
    """bob's START lists a third player who never signs an ACCEPT (to bob, what a player made
    up by a hostile host amounts to): the game never starts, and nobody remembers anybody."""
    with Peers(tmp_path) as peers:
        host = peers.host("alice", "--wait", "1", players=3)
        bob = peers.join("bob", host)
        host.peer.wait_for("bob joined")
        made_up = FakePeer.connect(host.port)
        made_up.sit("dora", Ed25519PrivateKey.generate())
        assert made_up.receive() is not None  # START, listing alice, bob and dora
        assert made_up.receive() is not None  # bob's ACCEPT, relayed: bob took START
        made_up.close()
        done = [p.finish() for p in (host.peer, bob)]
    assert [d.code for d in done] == [1, 1]
    assert "dora" in done[1].error_line()
    assert not (bob.home / "known_peers").exists()
    assert not (host.peer.home / "known_peers").exists()
