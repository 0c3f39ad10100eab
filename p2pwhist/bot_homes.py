"""The computer players' homes for ``p2pwhist play``: one temporary folder per match, each bot's
``$P2PWHIST_HOME`` (its key, its transcript, its deck secrets) a folder inside it, all removed
when ``play`` ends, by its result, Ctrl-C, a hang-up or a plain ``kill``.

A process killed outright (``kill -9``, a power cut) removes nothing, so each folder is held:
an exclusive ``flock`` on its ``held`` file for as long as its ``play`` runs. The kernel drops
the lock when the process ends, however it ends, so a folder whose lock can be taken belongs to
a ``play`` that is over, and the next ``play`` removes it (``remove_abandoned``). The lock is
taken before the file gets its name, so no folder is seen unheld while it is being made; and a
folder is removed before its lock is let go, so two players never remove the same one.

Only folders of this user's, not symbolic links, with the prefix below are looked at, in the
temporary folder (``$TMPDIR``); ``shutil.rmtree`` follows no link inside them.

A bot's key is not in its folder: each computer player keeps one, in the person's home
(``bot_key``), so that it is one player in ``p2pwhist stats`` from match to match.
"""

from __future__ import annotations

import contextlib
import fcntl  # Unix only, as play's bots are
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from p2pwhist.home import HomeError, home_dir, load_identity

PREFIX = "p2pwhist-bots-"
HELD = "held"


@contextlib.contextmanager
def bot_homes() -> Iterator[Path]:
    """A new folder for this match's bots, held while the block runs and removed after it;
    folders left by earlier matches killed outright are removed first."""
    remove_abandoned()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    held: int | None = None
    try:
        held = os.open(folder / f"{HELD}.new", os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        fcntl.flock(held, fcntl.LOCK_EX)
        os.rename(folder / f"{HELD}.new", folder / HELD)  # named once locked
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # before the lock goes (see the docstring)
        if held is not None:
            os.close(held)


def remove_abandoned(where: Path | None = None) -> list[Path]:
    """Remove the bots' folders in ``where`` (default: the temporary folder) that no running
    ``play`` holds; return them."""
    where = Path(tempfile.gettempdir()) if where is None else where
    removed = []
    for folder in where.glob(f"{PREFIX}*"):
        try:
            info = folder.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            held = os.open(folder / HELD, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # gone meanwhile, not ours to read, or not held yet (being made)
            continue
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a play runs with it
            continue
        else:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(held)
    return removed


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
