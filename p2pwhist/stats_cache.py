"""What ``p2pwhist stats`` verified before, so that a long history is not verified again at
every run (about 70 ms a transcript: ``scripts/bench_stats.py``).

Each transcript's result (``stats.MatchRecord`` or ``stats.NotCounted``) is kept under the
SHA-256 of the file's bytes, hashed before and after it is verified (a file changed meanwhile
is not kept), so that a file changed in any way is verified afresh; and under the program's
version, since another version may judge a transcript otherwise: a cache of another version
is as none. The file (``$P2PWHIST_HOME/stats-cache``) is frames as on the wire
(``wire.FrameBuffer``, ``wire.unpack``'s limits): the version, then one frame per transcript.
It is our own, written privately and replaced whole (a crash leaves the old or the new), but
read as hostile all the same: anything that does not read back whole (``stats.
record_from_wire``), or a file over ``MAX_BYTES``, counts as no cache, never as an error. Each
run keeps only the transcripts it met, so the file grows with the folder, not with time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from p2pwhist import __version__, stats
from p2pwhist.home import home_dir, read_tail, replace_private
from p2pwhist.wire import MAX_FRAME, FrameBuffer, WireError, frame, pack, unpack

__all__ = ["VerifiedCache"]

MAX_BYTES = 64 * 1024 * 1024  # about 200,000 transcripts' results: a larger file is not read
DIGEST_SIZE = hashlib.sha256().digest_size


class VerifiedCache:
    """Transcripts' results by the digest of their bytes (``judge``), read from and saved to
    ``path``."""

    def __init__(self, path: Path, entries: dict[bytes, stats.MatchRecord | stats.NotCounted]) -> None:
        self.path = path
        self._old = entries
        self._new: dict[bytes, stats.MatchRecord | stats.NotCounted] = {}

    @staticmethod
    def load(path: Path | None = None) -> VerifiedCache:
        """The cache at ``path`` (default: in the home), empty if there is none or it cannot be
        read back whole."""
        path = path or home_dir() / "stats-cache"
        try:
            data, skipped = read_tail(path, MAX_BYTES)
            entries = {} if skipped else _entries(data)
        except (OSError, WireError, ValueError):
            entries = {}
        return VerifiedCache(path, entries)

    def judge(self, path: Path, verified: Callable[[Path], stats.MatchRecord | stats.NotCounted]
              ) -> stats.MatchRecord | stats.NotCounted:
        """``verified(path)``, or what it gave before for a file of the same bytes."""
        before = _digest(path)
        if before is not None and (known := self._old.get(before) or self._new.get(before)) is not None:
            self._new[before] = known
            return known
        result = verified(path)
        if before is not None and _digest(path) == before:
            self._new[before] = result
        return result

    def save(self) -> None:
        """Keep the results met in this run, replacing the file whole. ``HomeError`` if it
        cannot be written."""
        frames = [frame(pack([__version__]))]
        for digest, result in self._new.items():
            payload = pack([digest, stats.record_to_wire(result)])
            if len(payload) <= MAX_FRAME:  # a result too large to read back is verified each time
                frames.append(frame(payload))
        replace_private(self.path, b"".join(frames), "the stats cache")


def _digest(path: Path) -> bytes | None:
    """The SHA-256 of the file's bytes, or None if it cannot be read or is no regular file (a
    FIFO would block the reading)."""
    if not path.is_file():
        return None
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").digest()
    except OSError:
        return None


def _entries(data: bytes) -> dict[bytes, stats.MatchRecord | stats.NotCounted]:
    """The cache's results, if it is of this version and reads back whole; else ValueError."""
    buffer = FrameBuffer()
    buffer.feed(data)
    header = buffer.next_frame()
    if header is None or unpack(header) != [__version__]:
        raise ValueError("a cache of another version, or none")
    entries = {}
    while (payload := buffer.next_frame()) is not None:
        value = unpack(payload)
        if type(value) is not list or len(value) != 2 or type(value[0]) is not bytes or len(value[0]) != DIGEST_SIZE:
            raise ValueError("not a transcript's digest and result")
        entries[value[0]] = stats.record_from_wire(value[1])
    if buffer.pending:
        raise ValueError("a torn frame")
    return entries
