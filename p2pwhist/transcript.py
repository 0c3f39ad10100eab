"""The transcript file: every signed message of a game, verbatim, in log order.

Layout (``protocol/wire.md``): the 8-byte magic ``P2PWHST1``, then one frame per message
(4-byte big-endian length, then the message's exact bytes). The file is append-only and
written as the game goes; ``sync`` forces it to disk, which the session does at least once a
hand, so a crash loses nothing already agreed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from p2pwhist.home import HomeError, create_private, reopen_private
from p2pwhist.signed import ForeignStart, SignatureError, SignedMessage, parse
from p2pwhist.wire import LENGTH, MAX_FRAME, FrameBuffer, WireError, frame

MAGIC = b"P2PWHST1"
READ_CHUNK = 64 * 1024
NOT_A_TRANSCRIPT = f"not a p2pwhist transcript (no {MAGIC.decode()} header)"


class TranscriptError(WireError):
    """What cannot be read of a transcript: the message at position ``index`` (its frame is
    not a message, or announces more than a frame may hold), or, with ``index`` None, the file
    as a whole (missing, unreadable, not a transcript), which ``path`` names. ``reason`` says
    why, without the place, for a line that names the file already (``p2pwhist stats``)."""

    def __init__(self, reason: str, index: int | None = None, path: Path | None = None) -> None:
        self.reason = reason
        self.index = index
        if index is not None:
            super().__init__(f"message {index}: {reason}")
        else:
            super().__init__(reason if path is None else f"{path}: {reason}")


class TornTranscript(TranscriptError):
    """The file ends inside message ``index``, ``stray`` bytes into it: a crash while it was
    written (wire.md §4)."""

    def __init__(self, stray: int, index: int) -> None:
        self.stray = stray
        super().__init__(f"the file ends inside a message ({stray} stray bytes)", index)


class TranscriptWriter:
    def __init__(self, path: Path, reopen: bool = False) -> None:
        """Create the file: never over an existing file or through a symbolic link (a
        transcript is never overwritten, nor written where someone else planted a file to
        read it), mode 0600; ``TranscriptError`` in one line if it cannot be. With ``reopen``,
        append to the file of an unfinished game instead (``read_unfinished`` first)."""
        self.path = path
        try:
            fd = reopen_private(path, "the transcript") if reopen else create_private(path, "the transcript")
        except HomeError as error:
            raise TranscriptError(str(error)) from None
        self._file = os.fdopen(fd, "ab")
        if not reopen:
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


def read_transcript(path: Path) -> Iterator[SignedMessage]:
    """Each message of the file in turn, parsed (structure and body; signatures and the chain
    are the verifier's job), read a chunk at a time: a reader that stops at the first bad
    message has read little more than it, and memory is bounded by the largest frame, not by
    the file. Raises ``TranscriptError`` when it reaches something unreadable. A whole frame
    that is not a message raises it in its turn, and reading on gives the messages after it:
    the recording peer's ABORT that answers it says whom to blame (session.md §5). A frame
    announcing more than the limit, or the file ending inside a frame, ends the reading."""
    return _RaisedInTurn(_messages(path))


class _RaisedInTurn:
    """The messages of ``items``, each error among them raised in its turn."""

    def __init__(self, items: Iterator[SignedMessage | TranscriptError]) -> None:
        self._items = items

    def __iter__(self) -> _RaisedInTurn:
        return self

    def __next__(self) -> SignedMessage:
        item = next(self._items)
        if isinstance(item, TranscriptError):
            raise item
        return item


def _messages(path: Path) -> Iterator[SignedMessage | TranscriptError]:
    """``read_transcript``'s messages, with what cannot be read of the file as errors in their
    place; after an error with no ``index``, or a frame that cannot be read, nothing more."""
    try:
        file = path.open("rb")
    except OSError as error:
        yield TranscriptError(error.strerror or str(error), path=path)
        return
    with file:
        try:
            if file.read(len(MAGIC)) != MAGIC:
                yield TranscriptError(NOT_A_TRANSCRIPT, path=path)
                return
            buffer = FrameBuffer()
            index = 0
            while True:
                try:
                    raw = buffer.next_frame()
                except WireError as error:
                    yield TranscriptError(str(error), index)
                    return
                if raw is None:
                    chunk = file.read(READ_CHUNK)
                    if not chunk:
                        break
                    buffer.feed(chunk)
                    continue
                try:
                    message: SignedMessage | TranscriptError = parse(raw)
                except ForeignStart as error:
                    if index == 0:  # the whole file is of a version or a game not known here
                        yield TranscriptError(str(error), path=path)
                        return
                    message = TranscriptError(str(error), index)  # later, it is a malformed message
                except SignatureError as error:
                    message = TranscriptError(str(error), index)
                yield message
                index += 1
        except OSError as error:
            yield TranscriptError(error.strerror or str(error), path=path)
            return
    if buffer.pending:
        yield TornTranscript(buffer.pending, index)


def read_unfinished(path: Path) -> list[SignedMessage]:
    """The messages of an unfinished game's transcript, to resume it: every whole message.
    A crash while a message was being written leaves part of it at the end; that part is cut
    off the file, since it was never sent (every message is written before it is sent) or
    will come again from the others."""
    messages: list[SignedMessage] = []
    try:
        with path.open("rb") as file:
            if file.read(len(MAGIC)) != MAGIC:
                raise TranscriptError(NOT_A_TRANSCRIPT, path=path)
            whole = len(MAGIC)  # where the last whole message ends
            while len(header := file.read(LENGTH.size)) == LENGTH.size:
                (size,) = LENGTH.unpack(header)
                if size > MAX_FRAME:
                    raise TranscriptError(f"a frame of {size} bytes, over the {MAX_FRAME}-byte limit", len(messages))
                raw = file.read(size)
                if len(raw) < size:
                    break
                try:
                    messages.append(parse(raw))
                except SignatureError as error:
                    raise TranscriptError(str(error), len(messages)) from None
                whole = file.tell()
        if whole < path.stat().st_size:
            os.truncate(path, whole)
    except OSError as error:
        raise TranscriptError(error.strerror or str(error), path=path) from None
    if not messages:
        raise TranscriptError("no message in it", path=path)
    return messages
