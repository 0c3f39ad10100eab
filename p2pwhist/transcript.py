"""The transcript file: every signed message of a game, verbatim, in log order.

Layout (``protocol/wire.md``): the 8-byte magic ``P2PWHST1``, then one frame per message
(4-byte big-endian length, then the message's exact bytes). The file is append-only and
written as the game goes; ``sync`` forces it to disk, which the session does at least once a
hand, so a crash loses nothing already agreed.
"""

from __future__ import annotations

import os
from pathlib import Path

from p2pwhist.signed import SignatureError, SignedMessage, parse
from p2pwhist.wire import FrameBuffer, WireError, frame

MAGIC = b"P2PWHST1"
# A game of 1000 hands is about 15 MB of messages; refuse to read files far beyond that.
MAX_FILE = 256 * 1024 * 1024


class TranscriptError(ValueError):
    """A file that is not a readable transcript; ``index`` is the bad message's position."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        self.index = index
        super().__init__(reason if index is None else f"message {index}: {reason}")


class TranscriptWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("xb")  # a transcript is never overwritten
        except OSError as error:
            raise TranscriptError(f"cannot write the transcript {path}: {error.strerror}") from None
        self._file.write(MAGIC)

    def append(self, message: SignedMessage) -> None:
        self._file.write(frame(message.raw))
        self._file.flush()

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()


def read_transcript(path: Path) -> list[SignedMessage]:
    """Parse every message's structure; signatures and the chain are the verifier's job."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE:
            raise TranscriptError(f"{path} is {size} bytes, larger than any transcript")
        data = path.read_bytes()
    except OSError as error:
        raise TranscriptError(f"cannot read {path}: {error.strerror}") from None
    if not data.startswith(MAGIC):
        raise TranscriptError(f"{path} is not a p2pwhist transcript (no {MAGIC.decode()} header)")
    buffer = FrameBuffer()
    buffer.feed(data[len(MAGIC) :])
    messages = []
    while True:
        try:
            raw = buffer.next_frame()
        except WireError as error:
            raise TranscriptError(str(error), len(messages)) from None
        if raw is None:
            break
        try:
            messages.append(parse(raw))
        except SignatureError as error:
            raise TranscriptError(str(error), len(messages)) from None
    if buffer.pending:
        raise TranscriptError(f"the file ends inside a message ({buffer.pending} stray bytes)", len(messages))
    return messages
