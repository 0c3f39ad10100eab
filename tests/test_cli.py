"""The command line, run as a user would run it: a separate process; or, where only its exit
status and its one line on stderr matter (our own usage mistakes), ``cli.main`` in this
process."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist import cli
from p2pwhist.bodies import LOG_VERSION, Player, Table, TimeLimits
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.home import bots_path, secrets_path
from p2pwhist.session import start_message
from p2pwhist.signed import public_bytes
from p2pwhist.transcript import TranscriptWriter, read_transcript
from p2pwhist.verify import verify


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "p2pwhist", *args], input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0
    for command in ("host", "join", "play", "verify", "show"):
        assert command in out.stdout


@pytest.mark.parametrize("command", ["verify", "show"])
def test_an_unreadable_record_is_a_one_line_usage_error(command, tmp_path):
    for path in (tmp_path / "missing.p2pw", tmp_path / "junk.p2pw"):
        (tmp_path / "junk.p2pw").write_bytes(b"not a transcript")
        out = run(command, str(path))
        assert out.returncode == 2
        assert out.stderr.strip().count("\n") == 0 and str(path) in out.stderr
        assert "Traceback" not in out.stderr


@pytest.mark.parametrize("stop", [signal.SIGHUP, signal.SIGTERM], ids=["hang-up", "kill"])
def test_a_hang_up_or_a_kill_ends_play_as_ctrl_c_does_and_keeps_the_match_to_go_on(stop, tmp_path):
    """The terminal window closed (SIGHUP) or a plain ``kill`` (SIGTERM) in the middle of a
    match: ``play`` ends as Ctrl-C ends it, in words (it used to die at once), and says how
    the match goes on (it used to say only where the match so far was kept: its bots' files
    went with it, and it could not). tests/test_bot_homes.py resumes such a match."""
    out = tmp_path / "out"
    with out.open("w") as written:
        game = subprocess.Popen([sys.executable, "-m", "p2pwhist", "play", "--watch", "--plain", "--bot", "random",
                                 "--hands", "1000"], stdout=written, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "P2PWHIST_HOME": str(tmp_path / "home")})
        end = time.monotonic() + 60
        while "Trick 2:" not in out.read_text() and game.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert "Trick 2:" in out.read_text(), out.read_text()
        game.send_signal(stop)
        _, err = game.communicate(timeout=60)
    # Its last word, as for Ctrl-C (whose KeyboardInterrupt, raised where trio does not protect
    # the code, can rarely leave a coroutine never awaited and Python warning of it just before).
    lines = err.strip().splitlines()
    assert game.returncode == 130 and lines[-2] == "p2pwhist: interrupted", err
    kept = list((tmp_path / "home" / "games").glob("*.p2pw"))
    assert len(kept) == 1 and lines[-1] == f"p2pwhist: the match is kept: p2pwhist resume {kept[0]} goes on with it"
    verdict = verify(read_transcript(kept[0]))
    assert verdict.valid and not verdict.complete and verdict.stopped, verdict
    assert secrets_path(kept[0]).exists() and bots_path(kept[0]).is_dir()
    assert "Traceback" not in err


def test_the_installed_command_runs():
    """The ``p2pwhist`` command pip installs (pyproject's entry point, beside this Python)."""
    command = Path(sys.executable).parent / "p2pwhist"
    if not command.exists():
        assert os.environ.get("CI") != "true", f"{command} is not installed"
        pytest.skip("p2pwhist is not installed beside this Python")
    out = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith(f"p2pwhist {cli.program_version()} ("), out


# A Ctrl-C while the program loads, simulated where it lands: an import deep inside cli's.
_CTRL_C_WHILE_LOADING = """
import sys
from importlib.abc import MetaPathFinder

class CtrlC(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "trio":
            raise KeyboardInterrupt

sys.meta_path.insert(0, CtrlC())
from p2pwhist.__main__ import run
sys.exit(run())
"""


def test_ctrl_c_while_the_program_loads_is_one_line_not_a_traceback():
    """Loading takes most of a second; a Ctrl-C then used to print a traceback from the import."""
    out = subprocess.run([sys.executable, "-c", _CTRL_C_WHILE_LOADING, "play"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == cli.EXIT_INTERRUPTED
    assert out.stderr.strip().splitlines() == ["p2pwhist: interrupted"], out.stderr


def test_bad_option_is_a_usage_error_without_traceback():
    out = run("play", "--players", "5")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_resume_says_plainly_when_there_is_nothing_to_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    nothing = run("resume")
    assert nothing.returncode == 2 and nothing.stderr == "p2pwhist: there is no unfinished game to resume in " \
        f"{tmp_path / 'home' / 'games'}\n"
    missing = run("resume", str(tmp_path / "gone.p2pw"))
    assert missing.returncode == 2 and "there is no file" in missing.stderr and "Traceback" not in missing.stderr
    over = tmp_path / "over.p2pw"
    over.write_bytes(b"P2PWHST1")
    finished = run("resume", str(over))
    assert finished.returncode == 2 and "is not an unfinished game" in finished.stderr


@pytest.mark.parametrize(
    "args, reason",
    [
        (["join", "127.0.0.1:99999"], "is not an address to join"),
        (["join", "127.0.0.1:7878", "--name", " bob"], "a name is"),
        (["host", "--identity", "garbage.pem"], "cannot read the identity key"),
        (["host", "--bind", "no.such.host.invalid"], "cannot listen on no.such.host.invalid"),
        (["host", "--transcript", "garbage.pem"], "already exists: a transcript is never overwritten"),
    ],
    ids=["port", "name", "identity", "bind", "transcript"],
)
def test_our_own_usage_mistakes_exit_2_in_one_line(tmp_path, monkeypatch, capsys, args, reason):
    monkeypatch.setenv("P2PWHIST_HOME", str(tmp_path / "home"))
    (tmp_path / "garbage.pem").write_text("not a key")
    args = [str(tmp_path / a) if a.endswith(".pem") else a for a in args]
    assert cli.main([*args, "--bot", "random"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("p2pwhist: ") and reason in line, err
    assert (tmp_path / "garbage.pem").read_text() == "not a key"  # never overwritten


def _transcript_of(path: Path, times: TimeLimits | None) -> Path:
    """A transcript holding only a START with ``times`` (None: a START of version 2, which
    agreed no limits)."""
    key = Ed25519PrivateKey.generate()
    players = tuple(Player(name, public_bytes(Ed25519PrivateKey.generate().public_key() if seat else
                                                key.public_key())) for seat, name in enumerate(("ann", "bob")))
    table = Table(BoxWhist(2), MatchLength(hands=1), players, bytes(32), "", times, 2 if times is None else LOG_VERSION)
    writer = TranscriptWriter(path)
    writer.append(start_message(key, table))
    writer.close()
    return path


def test_ctrl_c_tells_the_tables_own_wait_or_plainly_that_there_is_one(tmp_path):
    """The words after Ctrl-C in host or join: the wait the game's START holds; the plain
    words where it holds none (an older game's) or cannot be read (it used to fail on the
    former: no limits to read the wait from)."""
    assert cli._within_the_wait(_transcript_of(tmp_path / "new.p2pw", TimeLimits(600, 45))) == \
        "within 0:45 of leaving: the table's wait for a lost player"
    (tmp_path / "junk.p2pw").write_bytes(b"not a transcript")
    plain = "before the others stop waiting (--wait, 5 minutes unless they chose otherwise)"
    for path in (_transcript_of(tmp_path / "old.p2pw", None), tmp_path / "junk.p2pw", tmp_path / "none.p2pw", None):
        assert cli._within_the_wait(path) == plain
