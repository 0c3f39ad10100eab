"""Per-user state: the files a game creates (never over a planted file or link, mode 0600) and
the known peers (keyed by key, remembered once a game has started, bounded, robust), and the
trust decisions made with them (protocol/wire.md §5).

Unit tests on ``KnownPeers``, ``gamefiles.SecretFile``, file creation and ``table.judge_key``
(what we know of a key, and the words for each answer); then whole tables in memory
(``memnet``: the real host and joiners, or a hand-written joiner, under the mock clock) where
the edge matters: a file planted while a table waits, a person's answer remembered at once,
acceptance with a warning when nobody is there to ask, a refusal's words to the refused,
strangers who leave nothing behind. Only the check of the paths named on a command line
goes through the command line (``cli_play._options``, in this process)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import Hosted, options, vouch_until_start

from p2pwhist import cli, cli_play, net
from p2pwhist.gamefiles import SecretFile
from p2pwhist.home import (
    MAX_KNOWN,
    MAX_KNOWN_BYTES,
    HomeError,
    KnownPeers,
)
from p2pwhist.signed import fingerprint, public_bytes
from p2pwhist.table import Refused, RemoteTableError, TableError, judge_key
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
    source = SecretFile(saved)
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
        SecretFile(saved)()
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


@pytest.mark.parametrize("planted", ["alice.p2pw.secrets", "alice.p2pw", "alice.p2pw.command"],
                         ids=["secrets", "transcript", "command"])
@pytest.mark.parametrize("kind", ["file", "symlink"])
async def test_a_file_planted_while_the_host_waits_stops_it_before_the_game(tmp_path, nursery, autojump_clock,
                                                                             planted, kind):
    """The host checked its --transcript paths when it started; someone plants one while it
    waits for players. It refuses the joiner before START, in one line, and writes nothing:
    its own error is a file's (exit status 2), the joiner's a refusal (exit status 1)."""
    games = tmp_path / "games"
    games.mkdir()
    hosted = Hosted(games, nursery, command=["host", "--transcript", str(games / "alice.p2pw")])
    read_by_them = _plant(kind, games / planted, tmp_path / "theirs")
    bob = await (await hosted.join("bob"))()
    error = await hosted.end()
    assert isinstance(error, (HomeError, TranscriptError)) and str(games / planted) in str(error)
    assert isinstance(bob, Refused) and str(bob).startswith("alice (the host) refused us: alice cannot start the game: ")
    assert read_by_them.read_bytes() == b""
    assert sorted(p.name for p in games.iterdir()) == [planted]  # nothing of ours left beside it


async def test_a_command_file_that_cannot_be_deleted_at_the_end_is_a_warning(tmp_path, nursery, autojump_clock,
                                                                            monkeypatch):
    """The match is over, and the folder no longer lets us delete the command file (a shared
    folder whose permissions changed): the result stands, and a warning names the file."""
    real_unlink = Path.unlink

    def unlink(path: Path, missing_ok: bool = False) -> None:
        if path.name.endswith(".command"):
            raise PermissionError(13, "Permission denied", str(path))
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    hosted = Hosted(tmp_path, nursery, command=["host", "--transcript", str(tmp_path / "alice.p2pw")])
    bob = await (await hosted.join("bob"))()
    record = await hosted.end()
    assert isinstance(record, net.GameRecord) and isinstance(bob, net.GameRecord), (record, bob)
    assert f"Warning: cannot delete {tmp_path / 'alice.p2pw.command'}: Permission denied" in hosted.lines
    assert not (tmp_path / "alice.p2pw.secrets").exists()


async def test_a_file_planted_while_a_joiner_waits_makes_it_leave_saying_why(tmp_path, nursery, autojump_clock):
    hosted = Hosted(tmp_path, nursery, players=3)
    bob = await hosted.join("bob", seed=1, source="10.0.0.2")
    while not hosted.said("bob joined"):  # bob has checked his paths, and is seat 1
        await trio.sleep(0.1)
    read_by_them = _plant("file", tmp_path / "bob.p2pw.secrets", tmp_path / "theirs")
    carol = await hosted.join("carol", seed=2, source="10.0.0.3")
    ends = [await hosted.end(), await bob(), await carol()]
    assert isinstance(ends[1], HomeError) and "bob.p2pw.secrets already exists" in str(ends[1])
    for other in ends[0], ends[2]:
        assert isinstance(other, RemoteTableError)
        assert "bob (seat 1) stopped the game: bob cannot start the game" in str(other), other
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


# -- known peers: the judgement of a key (pure) -------------------------------------------------


def test_a_known_key_is_trusted_under_any_name_and_a_new_name_is_remarked():
    bob = _key()
    known = {fingerprint(bob): "bob"}
    same = judge_key(known, "bob", bob)
    assert same.known and same.remark() is None and same.warning() is None
    renamed = judge_key(known, "robert", bob)
    assert renamed.known and renamed.remark() == f"robert has the key you played with as 'bob' ({fingerprint(bob)})"


def test_a_new_key_is_put_plainly_and_refused_in_words_naming_it():
    new = _key()
    judgement = judge_key({fingerprint(_key()): "carol"}, "bob", new)
    assert not judgement.known and judgement.before == () and judgement.warning() is None
    assert judgement.question() == f"New player 'bob' with key {fingerprint(new)}. Trust it? [y/N] "
    assert judgement.refusal("alice") == f"alice did not accept your key {fingerprint(new)}"
    assert judgement.refused_line() == f"bob (key {fingerprint(new)}) was not trusted"


def test_a_known_name_with_a_new_key_names_both_fingerprints_in_every_word():
    """A stranger who borrows a name is neither taken for its owner nor able to lock the owner
    out: the person is asked plainly; unattended, the key is accepted with a warning."""
    older, old, new = _key(), _key(), _key()
    known = {fingerprint(older): "bob", fingerprint(_key()): "carol", fingerprint(old): "bob"}
    judgement = judge_key(known, "bob", new)
    assert not judgement.known and judgement.before == (fingerprint(older), fingerprint(old))
    both = f"(now {fingerprint(new)}, before {fingerprint(older)} or {fingerprint(old)})"
    assert judgement.question() == (f"This is a different key from the 'bob' you played before {both}: someone else "
                                    "may be using that name. Play with this key? [y/N] ")
    assert judgement.warning() == (f"Warning: 'bob' has a different key from the 'bob' you played before {both}; "
                                   "accepting it, as nobody is here to ask")
    assert judgement.refusal("alice") == (f"alice did not accept key {fingerprint(new)} for 'bob': it is not the key "
                                          "they played with under that name")
    assert judgement.refused_line() == f"'bob' has a different key from the 'bob' you played before {both}, and was " \
                                       "not trusted"


def test_only_the_two_newest_keys_of_a_name_are_named():
    keys = [_key() for _ in range(4)]
    judgement = judge_key({fingerprint(k): "bob" for k in keys}, "bob", _key())
    assert judgement.before == (fingerprint(keys[2]), fingerprint(keys[3]))


# -- known peers: at a table in memory ---------------------------------------------------------


def _known_with(tmp_path: Path, name: str, *keys: bytes) -> KnownPeers:
    known = KnownPeers(tmp_path / "alice-known")
    known.remember((name, key) for key in keys)
    return known


async def _sat_down_and_left(hosted: Hosted, key: Ed25519PrivateKey, name: str = "bob") -> None:
    """A hand-written joiner sits down at a 3-seat table (so no START) and leaves."""
    seat, _ = await hosted.seat(name, key)
    while not hosted.said(f"{name} joined"):
        await trio.sleep(0.1)
    await seat.stream.aclose()
    await trio.testing.wait_all_tasks_blocked()


async def test_unattended_a_known_name_with_a_new_key_is_accepted_with_a_warning_and_not_yet_remembered(
        tmp_path, nursery, autojump_clock):
    old, new = _key(), Ed25519PrivateKey.generate()
    new_print = fingerprint(new.public_key().public_bytes_raw())
    known = _known_with(tmp_path, "bob", old)
    hosted = Hosted(tmp_path, nursery, players=3, known=known)  # a bot host: nobody to ask
    await _sat_down_and_left(hosted, new)
    (warning,) = [line for line in hosted.lines if "different key" in line]
    assert warning == (f"Warning: 'bob' has a different key from the 'bob' you played before (now {new_print}, "
                       f"before {fingerprint(old)}); accepting it, as nobody is here to ask")
    assert known.load() == {fingerprint(old): "bob"}  # remembered only once a game starts


async def test_a_persons_yes_is_remembered_at_once(tmp_path, nursery, autojump_clock):
    """Given once, whether or not the game happens: bob sits down and leaves before START, and
    his key is known from then on."""
    known = KnownPeers(tmp_path / "alice-known")
    asked: list[str] = []

    async def yes(question: str) -> bool:
        asked.append(question)
        return True

    hosted = Hosted(tmp_path, nursery, players=3, known=known, ask=yes)
    key = Ed25519PrivateKey.generate()
    await _sat_down_and_left(hosted, key)
    print_ = fingerprint(key.public_key().public_bytes_raw())
    assert asked == [f"New player 'bob' with key {print_}. Trust it? [y/N] "]
    assert known.load() == {print_: "bob"}


@pytest.mark.parametrize("before", ["nobody", "another bob"])
async def test_a_persons_no_is_told_to_the_refused_and_a_known_key_is_not_asked_about(tmp_path, nursery,
                                                                                    autojump_clock, before):
    """The person refuses bob's key: bob is told by whom and which key, in one line; the host's
    person reads why; nothing is remembered. The same person is never asked about a key they
    played with: the old bob then sits down and plays without a question."""
    old = Ed25519PrivateKey.generate()
    old_print = fingerprint(old.public_key().public_bytes_raw())
    known = _known_with(tmp_path, "bob" if before == "another bob" else "dave", old.public_key().public_bytes_raw())
    asked: list[str] = []

    async def no_to_strangers(question: str) -> bool:
        asked.append(question)
        return False

    hosted = Hosted(tmp_path, nursery, known=known, ask=no_to_strangers)
    new = Ed25519PrivateKey.generate()
    new_print = fingerprint(new.public_key().public_bytes_raw())
    with pytest.raises(Refused) as refused:
        await net.join(options("bob", new, tmp=tmp_path), "alice.lan", 7878, connect=hosted.network.connector())
    if before == "another bob":
        said = f"alice did not accept key {new_print} for 'bob': it is not the key they played with under that name"
        line = (f"Refused: 'bob' has a different key from the 'bob' you played before (now {new_print}, before "
                f"{old_print}), and was not trusted")
        assert old_print in asked[0] and new_print in asked[0]
    else:
        said, line = f"alice did not accept your key {new_print}", f"Refused: bob (key {new_print}) was not trusted"
    assert str(refused.value) == f"alice (the host) refused us: {said}"
    assert line in hosted.lines and len(asked) == 1
    assert new_print not in known.load()
    name = "bob" if before == "another bob" else "dave"
    record = await net.join(options(name, old, tmp=tmp_path / "again"), "alice.lan", 7878,
                            connect=hosted.network.connector("10.0.0.2"))
    assert isinstance(record, net.GameRecord) and len(asked) == 1  # no question about a key played with
    assert known.load() == {old_print: name}


async def test_a_known_name_with_a_new_key_is_accepted_by_a_bot_host_with_a_warning(tmp_path, autojump_clock):
    """Identity is the key, the name a label: bob comes back with a new key (or someone else
    calls himself bob). A bot host, with nobody to ask, plays with him, but says plainly that
    this is not the key it played with as bob before; then it knows both keys."""
    known = KnownPeers(tmp_path / "alice-known")
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    prints = [fingerprint(key.public_key().public_bytes_raw()) for key in keys]
    lines: list[list[str]] = []
    for number, key in enumerate(keys):
        table = tmp_path / f"table-{number}"
        async with trio.open_nursery() as nursery:
            hosted = Hosted(table, nursery, known=known)
            record = await net.join(options("bob", key, tmp=table, seed=1), "alice.lan", 7878,
                                    connect=hosted.network.connector())
        assert isinstance(record, net.GameRecord) and isinstance(hosted.result, net.GameRecord)
        lines.append(hosted.lines)
    assert not [line for line in lines[0] if "different key" in line]
    (warning,) = [line for line in lines[1] if "different key" in line]
    assert "'bob'" in warning and prints[0] in warning and prints[1] in warning
    text = known.path.read_text()
    assert f"{prints[0]} bob\n" in text and f"{prints[1]} bob\n" in text


async def test_strangers_saying_hello_leave_nothing_behind_nor_lock_the_real_bob_out(tmp_path, nursery,
                                                                                     autojump_clock):
    """A stranger says HELLO as bob and leaves, and many others after him: the host remembers
    none of them, and the real bob then plays. After the game each peer knows the others."""
    alice_known = KnownPeers(tmp_path / "alice-known")
    hosted = Hosted(tmp_path, nursery, players=3, known=alice_known)
    for number, name in enumerate(["bob"] + [f"stranger{i}" for i in range(20)]):
        await _sat_down_and_left(hosted, Ed25519PrivateKey.generate(), name)
        assert hosted.said(f"{name} left before the game began")
    assert not alice_known.path.exists()
    bob_key, carol_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    bob_known, carol_known = KnownPeers(tmp_path / "bob-known"), KnownPeers(tmp_path / "carol-known")
    bob = await hosted.join("bob", seed=1, source="10.0.0.2", key=bob_key, known=bob_known)
    while not hosted.said("bob joined"):
        await trio.sleep(0.1)
    carol = await hosted.join("carol", seed=2, source="10.0.0.3", key=carol_key, known=carol_known)
    ends = [await hosted.end(), await bob(), await carol()]
    assert all(isinstance(end, net.GameRecord) for end in ends), ends
    alice_print = fingerprint(hosted.options.key.public_key().public_bytes_raw())
    bob_print, carol_print = (fingerprint(k.public_key().public_bytes_raw()) for k in (bob_key, carol_key))
    assert alice_known.load() == {bob_print: "bob", carol_print: "carol"}
    assert bob_known.load() == {alice_print: "alice", carol_print: "carol"}
    assert _mode(alice_known.path) == 0o600


async def test_players_listed_in_a_start_are_not_remembered_before_the_game_starts(tmp_path, nursery,
                                                                                   autojump_clock):
    """bob's START lists a third player, dora, who never signs an ACCEPT (to bob, what a player
    made up by a hostile host amounts to): the game never starts, and nobody remembers anybody."""
    alice_known, bob_known = KnownPeers(tmp_path / "alice-known"), KnownPeers(tmp_path / "bob-known")
    hosted = Hosted(tmp_path, nursery, players=3, known=alice_known, wait=10.0)
    bob = await hosted.join("bob", seed=1, source="10.0.0.2", known=bob_known)
    while not hosted.said("bob joined"):
        await trio.sleep(0.1)
    dora, _ = await hosted.seat("dora", source="10.0.0.4")
    await vouch_until_start(dora)  # START, listing alice, bob and dora
    assert await dora.receive_payload() is not None  # bob's ACCEPT, relayed: bob took START
    await dora.stream.aclose()
    hosted_end, bob_end = await hosted.end(), await bob()
    assert isinstance(hosted_end, TableError) and isinstance(bob_end, TableError)
    assert str(hosted_end) == "dora (seat 2) lost connection and did not return within 0:10"
    assert str(bob_end) == "alice (seat 0) stopped the game: dora (seat 2) lost connection and did not return within 0:10"
    assert not bob_known.path.exists() and not alice_known.path.exists()
