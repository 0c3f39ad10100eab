"""Per-user state on disk: the identity key, known peers, saved games.

Everything lives under one directory: ``$P2PWHIST_HOME`` if set, else
``$XDG_DATA_HOME/p2pwhist`` (``~/.local/share/p2pwhist``). Setting ``P2PWHIST_HOME`` lets
several peers run on one machine, each with its own identity.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.signed import fingerprint, public_bytes


class HomeError(Exception):
    """A problem with the user's saved state, described in one line."""


def home_dir() -> Path:
    if env := os.environ.get("P2PWHIST_HOME"):
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "p2pwhist"


def _private_file(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


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
    try:
        fd = _private_file(path)
    except OSError as error:
        raise HomeError(f"cannot create the identity key {path}: {error.strerror}") from None
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    return key


class ChangedKey(HomeError):
    """A known peer came back with a different key: refuse, as SSH does."""


@dataclass
class KnownPeers:
    """Trust on first use: the key each peer name was first seen with (like ``known_hosts``)."""

    path: Path

    @staticmethod
    def default() -> KnownPeers:
        return KnownPeers(home_dir() / "known_peers")

    def _load(self) -> dict[str, str]:
        known: dict[str, str] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                name, _, print_ = line.rpartition(" ")
                if name:
                    known[name] = print_
        return known

    def check(self, name: str, public_key: bytes, remember: bool) -> bool:
        """True if the peer is known with this key, or new and now remembered.

        A known name with another key raises ``ChangedKey``; a new one is remembered only if
        ``remember`` (the caller asked the user, or runs unattended)."""
        print_ = fingerprint(public_key)
        known = self._load().get(name)
        if known == print_:
            return True
        if known is not None:
            raise ChangedKey(
                f"{name!r} presented key {print_}, but was known as {known}: refusing "
                f"(if the key really changed, delete that line from {self.path})"
            )
        if not remember:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"{name} {print_}\n")
        return True


def new_transcript_path(game_id: bytes) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return home_dir() / "games" / f"{stamp}-{game_id.hex()[:8]}.p2pw"


def identity_fingerprint(key: Ed25519PrivateKey) -> str:
    return fingerprint(public_bytes(key.public_key()))
