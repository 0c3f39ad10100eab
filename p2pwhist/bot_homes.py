"""The computer players' files for ``p2pwhist play``: each bot's home (``$P2PWHIST_HOME``) and
its game's files, in a folder beside the match's transcript (``home.bots_path``), so that a match
stopped by Ctrl-C, a closed terminal or a crash goes on where it stopped (``p2pwhist resume``):
the person's seat from its transcript, each bot from its own. The folder is made, private, when
the match begins and removed when it ends; a match that stopped keeps it, as it keeps its
secrets and its command (``gamefiles``), until it is taken up again and ends. One whose ``play``
was killed outright before its first hand began (no secrets yet, nothing to go on with) the next
new ``play`` in that folder removes (``sweep_bots_folders``): the lock a ``play`` holds on its
new folder tells it apart from one whose match is still being seated.

A bot's key is not in its folder: each computer player keeps one, in the person's home
(``bot_key``), so that it is one player in ``p2pwhist stats`` from match to match.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

from p2pwhist.games.base import ConfigError
from p2pwhist.home import HomeError, bots_path, home_dir, load_identity, secrets_path


def bot_home(transcript: Path, seat: int) -> Path:
    """The home of the bot in ``seat`` of the match recorded in ``transcript``."""
    return bots_path(transcript) / f"seat{seat}"


def bot_transcript(transcript: Path, seat: int) -> Path:
    """The transcript the bot in ``seat`` keeps of that match, in its home."""
    return bot_home(transcript, seat) / "match.p2pw"


def make_bots_folder(transcript: Path) -> int:
    """The bots' folder for a new match, readable by its owner alone; a ``ConfigError`` if
    anything is there already: a folder someone else made could hold what reads the bots'
    cards, and one of ours belongs to another match. Returns the folder open and locked (an
    exclusive ``flock``), to be closed when the match ends: until its first hand's secrets are
    written, the lock alone says the folder is in use (``sweep_bots_folders``)."""
    folder = bots_path(transcript)
    try:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # as the transcript's will be
        folder.mkdir(mode=0o700)
        held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileExistsError:
        raise ConfigError(f"{folder} already exists: the computer players' files are never reused") from None
    except OSError as error:
        raise ConfigError(f"cannot make the computer players' folder {folder}: {error.strerror}") from None
    fcntl.flock(held, fcntl.LOCK_EX)  # a sweep holds it a moment at most
    try:
        ours = os.stat(folder, follow_symlinks=False).st_ino == os.fstat(held).st_ino
    except OSError:
        ours = False
    if not ours:  # swept between its making and its lock: another play's start, just then
        os.close(held)
        raise ConfigError(f"the computer players' folder {folder} was removed as it was made; try again")
    return held


def sweep_bots_folders(games: Path) -> None:
    """Remove the bots' folders in ``games`` that no match will use: those of a ``play`` killed
    outright before its first hand began, with no secrets beside them (nothing to go on with)
    and no ``play`` holding them (one seating its bots holds its own, ``make_bots_folder``).
    A link, or anything that is not such a folder, is left as it is."""
    for folder in games.glob("*.p2pw.bots"):
        transcript = folder.with_name(folder.name.removesuffix(".bots"))
        if secrets_path(transcript).exists():
            continue  # a match stopped: it goes on with these
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # a link, a file, or gone meanwhile
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(folder, ignore_errors=True)  # follows no link
        except OSError:  # a play seating its bots now holds it
            pass
        finally:
            os.close(fd)


def check_bots_folder(transcript: Path) -> None:
    """A ``ConfigError`` unless the match in ``transcript`` still has its bots' folder, to go on."""
    folder = bots_path(transcript)
    if not folder.is_dir() or folder.is_symlink():
        raise ConfigError(f"cannot resume {transcript}: the computer players' files ({folder}) are gone")


def remove_bots_folder(transcript: Path) -> None:
    """Remove the bots' folder of a match that is over: their transcripts are copies of the
    person's, and their secrets protect nothing any more. ``shutil.rmtree`` follows no link."""
    shutil.rmtree(bots_path(transcript), ignore_errors=True)


def bot_key(name: str) -> Path:
    """The key file of the computer player ``name`` (``search-1``, ``search-hard-2``: its kind,
    its level unless normal, and its seat), in this user's home, made on first use. So a
    computer opponent is one player match after match, with a record against the person and a
    rating in ``p2pwhist stats``, not a stranger each time; and a match of bots alone (``play
    --watch``) is theirs, never counted as the person's."""
    path = home_dir() / "bots" / f"{name}.pem"
    if not path.exists():  # read by whoever plays with it, which says so if it cannot
        try:
            load_identity(path)  # makes it
        except HomeError:
            if not path.exists():
                raise  # else another play made it meanwhile
    return path
