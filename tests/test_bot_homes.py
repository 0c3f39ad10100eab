"""``play``'s bots' temporary homes: held while their match runs, removed after it, and those left
by a ``play`` killed outright (``kill -9``) removed by the next one. Real processes where only a
process shows it: a lock the kernel drops when its holder is killed."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pwhist import bot_homes
from p2pwhist.bot_homes import HELD, PREFIX, remove_abandoned

# A process that makes a bots' folder, says where, and waits to be killed.
_HOLDER = """
import time
from p2pwhist.bot_homes import bot_homes
with bot_homes() as folder:
    (folder / "bot1").mkdir()
    (folder / "bot1" / "key").write_bytes(b"secret")
    print(folder, flush=True)
    time.sleep(120)
"""


@pytest.fixture
def temporary(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return tmp_path


def _holder(where: Path) -> tuple[subprocess.Popen, Path]:
    process = subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(where)})
    return process, Path(process.stdout.readline().strip())


def test_a_folder_is_held_while_its_match_runs_and_removed_after(temporary):
    with bot_homes.bot_homes() as folder:
        assert folder.parent == temporary and folder.name.startswith(PREFIX) and (folder / HELD).exists()
        assert remove_abandoned(temporary) == [] and folder.exists()
    assert not folder.exists()


def test_a_play_killed_outright_leaves_its_folder_to_the_next(tmp_path):
    process, folder = _holder(tmp_path)
    try:
        assert remove_abandoned(tmp_path) == [] and (folder / "bot1" / "key").exists()  # its play runs
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    assert folder.exists()  # nothing ran to remove it
    assert remove_abandoned(tmp_path) == [folder] and not folder.exists()


def test_what_is_not_a_bots_folder_of_ours_is_left(tmp_path):
    victim = tmp_path / "victim"  # somebody's folder, made to look abandoned
    victim.mkdir()
    (victim / HELD).touch()
    (tmp_path / f"{PREFIX}link").symlink_to(victim)
    (tmp_path / f"{PREFIX}file").write_bytes(b"")
    (tmp_path / f"{PREFIX}being-made").mkdir()  # no held file yet: a play is making it
    other = tmp_path / f"{PREFIX}elsewhere"  # held by a link to a file elsewhere
    other.mkdir()
    (other / HELD).symlink_to(victim / HELD)
    assert remove_abandoned(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["victim", f"{PREFIX}link", f"{PREFIX}file", f"{PREFIX}being-made", f"{PREFIX}elsewhere"])
    assert (victim / HELD).exists()


def _session(leader: int) -> list[int]:
    """The processes of the session ``leader`` began (``start_new_session``), by /proc."""
    members = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[3]) == leader:  # after the name: state, parent, group, session
            members.append(int(stat_file.parent.name))
    return members


def test_a_play_killed_outright_its_bots_end_and_the_next_play_removes_their_folder(tmp_path):
    """End to end: ``play`` killed with ``kill -9`` mid-match. Its bots, which try to reach their
    host again, end by themselves after the table's wait (they tried for five minutes); the next
    ``play`` removes the folder it left (it used to stay, bots' keys and deck secrets in it)."""
    env = {**os.environ, "P2PWHIST_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    out = tmp_path / "out"
    with out.open("w") as written:
        killed = subprocess.Popen([sys.executable, "-m", "p2pwhist", "play", "--watch", "--plain", "--bot", "random",
                                   "--hands", "1000"], stdout=written, stderr=subprocess.STDOUT, env=env,
                                  start_new_session=True)
    try:
        end = time.monotonic() + 60
        while "Trick 2:" not in out.read_text() and killed.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert "Trick 2:" in out.read_text(), out.read_text()
        left = list(tmp_path.glob(f"{PREFIX}*"))
        bots = [pid for pid in _session(killed.pid) if pid != killed.pid]
        assert len(left) == 1 and len(bots) == 1, (left, bots)
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
    end = time.monotonic() + 120  # the wait is 10 s: far within this
    while _session(killed.pid) and time.monotonic() < end:
        time.sleep(0.2)
    assert _session(killed.pid) == [], "the bot still runs"
    assert left[0].exists()  # nothing ran to remove it
    game = subprocess.run([sys.executable, "-m", "p2pwhist", "play", "--watch", "--plain", "--bot", "random",
                           "--hands", "1"], capture_output=True, text=True, timeout=120, env=env)
    assert game.returncode == 0, game.stderr
    assert not list(tmp_path.glob(f"{PREFIX}*"))  # neither the killed play's folder nor its own


def test_a_computer_player_keeps_one_private_key_in_the_persons_home(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    path = bot_homes.bot_key("search-hard-1")
    assert path == tmp_path / "home" / "bots" / "search-hard-1.pem"
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    made = path.read_bytes()
    assert bot_homes.bot_key("search-hard-1") == path and path.read_bytes() == made  # the same key again
    assert bot_homes.bot_key("search-1").read_bytes() != made  # another player, another key
