"""Per-user state on disk: the identity key, known peers, the name a person plays under, saved games.

Everything lives under one directory: ``$P2PWHIST_HOME`` if set, else
``$XDG_DATA_HOME/p2pwhist`` (``~/.local/share/p2pwhist``). Setting ``P2PWHIST_HOME`` lets
several peers run on one machine, each with its own identity.

Every file holding something private (the key, each hand's deck secrets, the transcript, the
known peers) is created here with ``create_private``: never over an existing file or through a
symbolic link, and readable by its owner alone.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import MAX_NAME, check_name
from p2pwhist.games.base import ConfigError
from p2pwhist.signed import fingerprint, public_bytes


class HomeError(Exception):
    """A problem with the user's saved state, described in one line."""


def home_dir() -> Path:
    if env := os.environ.get("P2PWHIST_HOME"):
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "p2pwhist"


def create_private(path: Path, what: str) -> int:
    """A new file at ``path``, mode 0600, open for appending: its descriptor.

    ``O_EXCL`` and ``O_NOFOLLOW``: a file already there, or a symbolic link (even one pointing
    nowhere yet), is refused, never reused. Someone who can write the folder could otherwise
    plant it, readable by them, and read what we write (each hand's deck secret: every card).
    The folder is made if missing, readable by its owner alone. Raises ``HomeError`` in one
    line that names ``what`` the file is."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise HomeError(f"{path} already exists: refusing to use it for {what} (whoever made it could read "
                        "what is written there; remove it if it is yours)") from None
    except OSError as error:
        if error.errno == errno.ELOOP:  # a symbolic link, on systems that say so instead of EEXIST
            raise HomeError(f"{path} is a symbolic link: refusing to use it for {what}") from None
        raise HomeError(f"cannot create {what} {path}: {error.strerror}") from None
    try:
        os.fchmod(fd, 0o600)  # exactly 0600 whatever the umask (which can only take bits away)
    except OSError:
        pass
    return fd


def reopen_private(path: Path, what: str) -> int:
    """A file ``create_private`` made earlier (a crashed game's transcript or secrets), open
    for appending: its descriptor. Refused (``HomeError``) unless it is still a regular file,
    not a symbolic link, ours, and readable by us alone: otherwise someone may have swapped it
    meanwhile, and could read what we would add."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise HomeError(f"{path} is a symbolic link: refusing to use it for {what}") from None
        raise HomeError(f"cannot open {what} {path}: {error.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(fd)
        raise HomeError(f"{path} is not a private file of yours (mode {stat.filemode(info.st_mode)}): "
                        f"refusing to use it for {what}")
    return fd


def load_identity(path: Path | None = None) -> Ed25519PrivateKey:
    """The user's Ed25519 key, created from OS randomness on first use."""
    path = path or home_dir() / "identity.pem"
    if path.exists():
        try:
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (ValueError, TypeError, OSError) as error:
            raise HomeError(f"cannot read the identity key {path}: {error}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise HomeError(f"{path} is not an Ed25519 key")
        return key
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    fd = create_private(path, "the identity key")
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    return key


# The known-peers file: at most this many keys (the oldest played are dropped first), and at
# most this many bytes read, from its end (the newest lines). A line is at most about 170 bytes
# (a fingerprint, and a name of at most 32 characters of up to 4 bytes each).
MAX_KNOWN = 1000
MAX_KNOWN_BYTES = 1024 * 1024
MAX_LABEL = 64
_FINGERPRINT = re.compile(r"[0-9a-f]{4}(?:-[0-9a-f]{4}){7}")
_HEADER = "# p2pwhist known peers: FINGERPRINT NAME, oldest first (protocol/wire.md section 5)\n"


def _label_ok(label: str) -> bool:
    return 1 <= len(label) <= MAX_LABEL and label.isprintable() and label == label.strip()


def _known_line(line: bytes) -> tuple[str, str] | None:
    """A line's (fingerprint, name), or None for a comment or a line that is not one.

    ``FINGERPRINT NAME`` is the format; ``NAME FINGERPRINT`` lines (written by earlier
    versions, which keyed trust by name) are read too, and rewritten at the next save."""
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if not text or text.startswith("#"):
        return None
    first, _, rest = text.partition(" ")
    if _FINGERPRINT.fullmatch(first) and _label_ok(rest):
        return first, rest
    rest, _, last = text.rpartition(" ")
    if _FINGERPRINT.fullmatch(last) and _label_ok(rest):
        return last, rest
    return None


@dataclass
class KnownPeers:
    """The keys we have played with, each labelled with the name it last played under.

    A peer's identity is its key; a name is only a label anyone can choose. So trust is keyed
    by fingerprint, and a key is remembered once a game with it has started (every seat signed
    its ACCEPT: ``table.Remember``), or once our person said yes to it, not when someone merely
    says HELLO or is listed in a START. A name known with other keys does not refuse a new one: the caller
    says so plainly (and asks a person), so a stranger who borrows a name cannot lock its
    real owner out.

    The file (``FINGERPRINT NAME`` lines, oldest first) holds at most ``limit`` keys, is read
    at most ``MAX_KNOWN_BYTES`` from its end, and is replaced whole, atomically, at each save.
    Lines that are not entries (garbage, another encoding) are skipped, never fatal."""

    path: Path
    limit: int = MAX_KNOWN

    @staticmethod
    def default() -> KnownPeers:
        return KnownPeers(home_dir() / "known_peers")

    def load(self) -> dict[str, str]:
        """Fingerprint → name, oldest first; empty if there is no file yet. ``HomeError`` if
        the file exists but cannot be read (so a save never overwrites what it could not read)."""
        try:
            data, skip = read_tail(self.path, MAX_KNOWN_BYTES)
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise HomeError(f"cannot read the known peers {self.path}: {error.strerror}") from None
        lines = data.split(b"\n")
        if skip:
            lines = lines[1:]  # begun mid-line
        known: dict[str, str] = {}
        for line in lines:
            if (entry := _known_line(line)) is not None:
                print_, name = entry
                known.pop(print_, None)  # a later line is newer
                known[print_] = name
        return known

    def named(self, name: str) -> list[str]:
        """The fingerprints known under ``name``, oldest first (none if the file is unreadable)."""
        try:
            return [print_ for print_, label in self.load().items() if label == name]
        except HomeError:
            return []

    def remember(self, players: Iterable[tuple[str, bytes]]) -> None:
        """Remember each (name, public key) we have started a game with: a known key's name is
        updated, and it becomes the newest; beyond ``limit`` keys the oldest are dropped."""
        known = self.load()
        for name, key in players:
            if not _label_ok(name):
                continue  # never the case for a checked player name; never a line break in the file
            print_ = fingerprint(key)
            known.pop(print_, None)
            known[print_] = name
        for print_ in list(known)[: max(0, len(known) - self.limit)]:
            del known[print_]
        self._save(known)

    def _save(self, known: dict[str, str]) -> None:
        """Replace the file whole: write a new private file beside it, sync it, rename it over."""
        data = (_HEADER + "".join(f"{print_} {name}\n" for print_, name in known.items())).encode("utf-8")
        replace_private(self.path, data, "the known peers")


def read_tail(path: Path, most: int) -> tuple[bytes, int]:
    """At most the last ``most`` bytes of the regular file ``path``, and how many came before
    them. ``OSError`` if it cannot be opened or read, or is no regular file (a directory, a
    FIFO, a device: nothing to read; O_NONBLOCK, so that a FIFO planted there cannot hang us
    at open)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        skip = max(0, info.st_size - most)
        os.lseek(fd, skip, os.SEEK_SET)
        chunks: list[bytes] = []
        left = most
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), skip
    finally:
        os.close(fd)


def replace_private(path: Path, data: bytes, what: str) -> None:
    """Replace ``path`` whole with ``data`` (``what`` it holds, in words): a new private file
    beside it, synced, then renamed over it, so that a crash leaves the old or the new, never
    a part. ``HomeError`` if it cannot be written."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = create_private(temporary, what)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise HomeError(f"cannot save {what} {path}: {error.strerror}") from None


# A person's small choices, each remembered in a file of its own under $P2PWHIST_HOME: one
# line, read at most MAX_NAME_BYTES (a name of MAX_NAME characters of up to 4 bytes each in
# UTF-8, and its line break); a longer file holds no choice, and no more of it is read.
MAX_NAME_BYTES = MAX_NAME * 4 + 1
SWITCH = ("on", "off")  # how a yes-or-no choice is written


def check_switch(text: str) -> str:
    if text not in SWITCH:
        raise ConfigError(f"not one of {', '.join(SWITCH)}: {text[:10]!r}")
    return text


@dataclass(frozen=True)
class Remembered:
    """One choice of our person's as they last made it: the name they play under (``name``),
    whether their only legal moves are made for them (``auto_forced``). It is no secret, but it
    is written as privately as the rest (``create_private``), replaced whole at each save; and
    whatever the file holds, a hostile or damaged file never stops the program: anything that
    ``check`` refuses, or longer than ``MAX_NAME_BYTES``, counts as no choice."""

    path: Path
    check: Callable[[str], str]  # the text as it may be, or ConfigError
    what: str  # the choice in words, for an error

    @staticmethod
    def name() -> Remembered:
        return Remembered(home_dir() / "name", check_name, "your name")

    @staticmethod
    def auto_forced() -> Remembered:
        return Remembered(home_dir() / "auto-forced", check_switch, "your --auto-forced choice")

    def load(self) -> str | None:
        """The choice, or None: no file, or one that holds no choice."""
        try:
            data, skip = read_tail(self.path, MAX_NAME_BYTES)
        except OSError:
            return None
        if skip:  # longer than any choice
            return None
        try:
            return self.check(data.decode("utf-8").removesuffix("\n"))
        except (UnicodeDecodeError, ConfigError):
            return None

    def save(self, value: str) -> None:
        """Remember ``value`` (a checked one), replacing the file whole. ``HomeError`` if it
        cannot be written."""
        replace_private(self.path, f"{self.check(value)}\n".encode("utf-8"), self.what)


def new_transcript_path(game_id: bytes) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return home_dir() / "games" / f"{stamp}-{game_id.hex()[:8]}.p2pw"


def secrets_path(transcript: Path) -> Path:
    """Where a game's hand secrets are kept, beside its transcript, until the game ends."""
    return transcript.with_name(transcript.name + ".secrets")


def command_path(transcript: Path) -> Path:
    """Where the command that started a peer is kept beside its transcript, for ``p2pwhist
    resume``, until the game ends."""
    return transcript.with_name(transcript.name + ".command")


def saved_games() -> list[Path]:
    """The transcripts under ``$P2PWHIST_HOME/games``, the last written first."""
    def written(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # gone since it was listed
            return 0.0

    try:
        found = [path for path in (home_dir() / "games").glob("*.p2pw") if path.is_file()]
    except OSError:
        return []
    return sorted(found, key=written, reverse=True)


def bots_path(transcript: Path) -> Path:
    """Where the computer players of a ``play`` match keep their homes and their files beside its
    transcript, until the match ends (``bot_homes``)."""
    return transcript.with_name(transcript.name + ".bots")


def unfinished_games() -> list[Path]:
    """The saved games that may be resumed, the last written first: those that still have
    their secrets file, which a game deletes once it is over."""
    return [path for path in saved_games() if secrets_path(path).is_file()]


def identity_fingerprint(key: Ed25519PrivateKey) -> str:
    return fingerprint(public_bytes(key.public_key()))
