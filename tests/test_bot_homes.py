"""``play``'s computer players keep their files beside the match's transcript, so that a match
stopped however it stops goes on where it stopped (``p2pwhist resume``): Ctrl-C, and ``kill -9``,
after which the bots end at once with it (their input closes) instead of waiting for it and then
declaring its person gone. Real processes where only a process shows it: a process killed
outright, and what its children then do."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pwhist import bot_homes
from p2pwhist.games.base import ConfigError
from p2pwhist.home import bots_path, command_path, secrets_path
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify


def test_a_new_matchs_bots_folder_is_private_and_never_one_already_there(tmp_path):
    transcript = tmp_path / "games" / "m.p2pw"
    os.close(bot_homes.make_bots_folder(transcript))
    folder = bots_path(transcript)
    assert folder == tmp_path / "games" / "m.p2pw.bots" and os.stat(folder).st_mode & 0o777 == 0o700
    assert bot_homes.bot_transcript(transcript, 2) == folder / "seat2" / "match.p2pw"
    with pytest.raises(ConfigError, match="already exists: the computer players' files are never reused"):
        bot_homes.make_bots_folder(transcript)
    planted = tmp_path / "games" / "n.p2pw"
    bots_path(planted).symlink_to(tmp_path)  # a link where the folder would go is "already there" too
    with pytest.raises(ConfigError, match="already exists"):
        bot_homes.make_bots_folder(planted)


def test_a_sweep_removes_only_the_bots_folders_no_match_will_use(tmp_path):
    """A ``play`` killed outright before its first hand left its bots' folder with no secrets
    beside it: the next new ``play`` removes it. It keeps a stopped match's (its secrets are
    there), one a ``play`` seating its bots holds, and anything not such a folder."""
    games = tmp_path / "games"
    left = games / "left.p2pw"
    os.close(bot_homes.make_bots_folder(left))  # its play gone: the lock with it
    (bots_path(left) / "seat1").mkdir()
    stopped = games / "stopped.p2pw"
    os.close(bot_homes.make_bots_folder(stopped))
    secrets_path(stopped).write_bytes(b"")
    seating = games / "seating.p2pw"
    held = bot_homes.make_bots_folder(seating)
    outside = tmp_path / "outside"
    outside.mkdir()
    bots_path(games / "link.p2pw").symlink_to(outside)
    try:
        bot_homes.sweep_bots_folders(games)
    finally:
        os.close(held)
    assert sorted(p.name for p in games.iterdir()) == [
        "link.p2pw.bots", "seating.p2pw.bots", "stopped.p2pw.bots", "stopped.p2pw.secrets"]
    assert outside.is_dir()
    bot_homes.sweep_bots_folders(games)  # its play ended without removing it: now it goes
    assert not bots_path(seating).exists() and bots_path(stopped).is_dir()


def test_a_folder_swept_as_it_is_made_is_refused_not_used(tmp_path, monkeypatch):
    """A sweep that takes a new folder's lock between its making and its ``play``'s lock (an
    instant, two plays starting together) removes it: the ``play`` then says so, instead of
    seating its bots in a folder that is gone."""
    transcript = tmp_path / "m.p2pw"
    real_flock = bot_homes.fcntl.flock

    def swept_first(fd, operation):
        monkeypatch.setattr(bot_homes.fcntl, "flock", real_flock)
        bot_homes.sweep_bots_folders(tmp_path)  # no secrets, not yet held: it goes
        real_flock(fd, operation)

    monkeypatch.setattr(bot_homes.fcntl, "flock", swept_first)
    with pytest.raises(ConfigError, match=r"folder .*m\.p2pw\.bots was removed as it was made; try again"):
        bot_homes.make_bots_folder(transcript)
    assert list(tmp_path.iterdir()) == []


def test_a_match_goes_on_only_with_its_bots_folder_which_goes_when_it_ends(tmp_path):
    transcript = tmp_path / "m.p2pw"
    with pytest.raises(ConfigError, match=r"cannot resume .*m\.p2pw: the computer players' files .* are gone"):
        bot_homes.check_bots_folder(transcript)
    bots_path(transcript).symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="are gone"):
        bot_homes.check_bots_folder(transcript)
    bots_path(transcript).unlink()
    os.close(bot_homes.make_bots_folder(transcript))
    (bots_path(transcript) / "seat1").mkdir()
    (bots_path(transcript) / "seat1" / "escape").symlink_to(tmp_path)  # followed by nothing that removes
    bot_homes.check_bots_folder(transcript)
    bot_homes.remove_bots_folder(transcript)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_computer_player_keeps_one_private_key_in_the_persons_home(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    path = bot_homes.bot_key("search-hard-1")
    assert path == tmp_path / "home" / "bots" / "search-hard-1.pem"
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    made = path.read_bytes()
    assert bot_homes.bot_key("search-hard-1") == path and path.read_bytes() == made  # the same key again
    assert bot_homes.bot_key("search-1").read_bytes() != made  # another player, another key


# -- a stopped match goes on ---------------------------------------------------------------------


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


def _stopped_mid_match(tmp_path: Path, how: signal.Signals) -> tuple[dict[str, str], Path]:
    """A ``play --watch`` of 40 hands, sent ``how`` once its first hand is over (to ``play``
    alone, not its bots: ``kill`` as a person or a crash would); its environment and its
    transcript, once every process of it has ended. Beside it, a folder a ``play`` killed before
    its first hand left behind, which this new one removes."""
    env = {**os.environ, "P2PWHIST_HOME": str(tmp_path / "home")}
    for folder in ("home", "home/games", "home/games/left.p2pw.bots", "home/games/left.p2pw.bots/seat1"):
        (tmp_path / folder).mkdir(mode=0o700)
    out = tmp_path / "out"
    with out.open("w") as written:
        stopped = subprocess.Popen([sys.executable, "-m", "p2pwhist", "play", "--watch", "--plain", "--bot", "random",
                                    "--hands", "40"], stdout=written, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    try:
        end = time.monotonic() + 60
        while "Hand 1:" not in out.read_text() and stopped.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert "Hand 1:" in out.read_text() and stopped.poll() is None, out.read_text()
        assert len(_session(stopped.pid)) == 2  # play and its bot
    finally:
        stopped.send_signal(how)
        stopped.wait(timeout=60)
    end = time.monotonic() + 30  # at once, in fact: not after the table's wait (10 s)
    while _session(stopped.pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert _session(stopped.pid) == [], "the bot still runs"
    (transcript,) = (tmp_path / "home" / "games").glob("*.p2pw")
    return env, transcript


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_a_play_stopped_mid_match_goes_on_with_its_bots_where_it_stopped(tmp_path, how):
    """Ctrl-C, or ``kill -9``: the match, its secrets and command and its bots' files stay
    (before, the bots' folder went with play, and the match could not go on), the bots end with
    play at once (before, killed outright, it left them waiting for it, to declare it gone), and
    ``p2pwhist resume`` plays the match to its end, the bots each going on from their own files;
    then they all go but the transcript, valid and complete (and the folder a match killed before
    its first hand left, ``_stopped_mid_match``)."""
    env, transcript = _stopped_mid_match(tmp_path, how)
    kept = [secrets_path(transcript), command_path(transcript), bots_path(transcript)]
    assert all(path.exists() for path in kept)
    assert (bots_path(transcript) / "seat1" / "match.p2pw.secrets").exists()
    before = sum(1 for _ in read_transcript(transcript))
    resumed = subprocess.run([sys.executable, "-m", "p2pwhist", "resume"], capture_output=True, text=True,
                             timeout=300, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith(f"Resuming {transcript}: p2pwhist play --watch")
    assert "Match over. Final points: random-0 " in resumed.stdout
    assert not any(path.exists() for path in kept)
    assert sorted(p.name for p in transcript.parent.iterdir()) == [transcript.name]
    verdict = verify(read_transcript(transcript))
    assert verdict.valid and verdict.complete and len(verdict.hands) > 1  # it stopped in the second hand
    assert len(verdict.session.log) > before and verdict.session.outcome.forfeited is None
