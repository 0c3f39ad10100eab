"""A transcript's Ed25519 signatures checked in a helper process, a window ahead of ``verify``.

Checking one signature takes ``cryptography`` about 0.2 ms and holds Python's GIL, which made
it the largest single cost of ``verify`` (about 0.6 s of a 50-hand match): no thread can share
it, a second process can. So ``verify`` reads the file a window of messages ahead, this
module's helper checks those signatures on another core, and the session judges each message
with its signature already vouched for.

The helper only ever vouches. A message it calls good skips the session's own signature check
(``Session.receive_parsed(..., signature_checked=True)``); everything else (a bad signature, a
seat the table does not have, a helper that could not start or died) is checked in the
verifier's process exactly as before. So the verdict is the same whatever the helper does.

The helper is ``_helper_main`` in a new interpreter with the verifier's own import path, so it
runs this very module wherever the verifier's came from. It imports msgpack and cryptography
alone, and starts in about a tenth of a second. Its standard input is a msgpack stream: first
the table's keys (a list of 32-byte Ed25519 public keys, by seat), then one
``[seat, signed, signature]`` per message; for each message it writes one byte to standard
output, 1 if ``signature`` is the seat's signature of ``signed``, else 0, in order.
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Self, cast

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pwhist.wire import WireError

if TYPE_CHECKING:  # the helper imports nothing of p2pwhist but this module
    from p2pwhist.signed import SignedMessage

WINDOW = 256  # messages read ahead; a message is at most wire.MAX_FRAME bytes, so 16 MiB at worst
FLUSH_EVERY = 16  # verdicts the helper writes at a time: soon enough that the verifier never waits long
# The helper's command: -I keeps the environment and the working directory out, and the
# verifier's own sys.path (the arguments) puts back exactly where it imports from.
HELPER = "import sys; sys.path[:] = sys.argv[1:]; from p2pwhist.signatures import _helper_main; _helper_main()"


class CheckedAhead:
    """The messages of ``stream``, each with whether the helper vouched for its signature by
    the seat it names (``keys[seat]``).

    The first window is left to the verifier, while the helper starts; a stream shorter than
    that never starts one. What ``stream`` raises is raised in its turn, after every message
    before it. Use it as a context manager: leaving stops the helper."""

    def __init__(self, stream: Iterator[SignedMessage], keys: Sequence[bytes], window: int = WINDOW) -> None:
        self._stream = stream
        self._keys = list(keys)
        self._window = window
        self._ahead: deque[tuple[SignedMessage, bool]] = deque()  # read, and whether the helper has it
        self._raised: BaseException | None = None  # what the stream raised after those
        self._ended = False
        self._helper: subprocess.Popen[bytes] | None = None
        self._started = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> tuple[SignedMessage, bool]:
        if len(self._ahead) <= self._window // 2 and not self._ended:
            self._read_ahead()
        if not self._ahead:
            if self._raised is not None:
                raised, self._raised = self._raised, None
                raise raised
            raise StopIteration
        message, sent = self._ahead.popleft()
        return message, sent and self._vouched()

    def close(self) -> None:
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.kill()
            helper.wait()
            for pipe in helper.stdin, helper.stdout:
                try:
                    pipe.close()  # type: ignore[union-attr]
                except OSError:  # what was left to write to it, now dead
                    pass

    def _read_ahead(self) -> None:
        first = not self._started
        batch: list[SignedMessage] = []
        try:
            while len(self._ahead) + len(batch) < self._window:
                batch.append(next(self._stream))
        except StopIteration:
            self._ended = True
        except WireError as error:  # a damaged file (TranscriptError), raised in its turn
            self._ended, self._raised = True, error
        if first:
            self._started = True
            if not self._ended:
                self._helper = _start_helper(self._keys)
            self._ahead.extend((message, False) for message in batch)
            return
        sent = self._send(batch)
        self._ahead.extend((message, sent) for message in batch)

    def _send(self, batch: list[SignedMessage]) -> bool:
        """Hand ``batch`` to the helper; False if there is none (any more)."""
        if self._helper is None:
            return False
        items = [[message.seat, message.signed, message.signature] for message in batch]
        try:
            self._helper.stdin.write(b"".join(msgpack.packb(item) for item in items))  # type: ignore[union-attr]
            self._helper.stdin.flush()  # type: ignore[union-attr]
        except OSError:  # it died: what it was sent and never answered is checked here
            return False
        return True

    def _vouched(self) -> bool:
        """The helper's verdict on the next message it was sent; False if it died first."""
        if self._helper is None:
            return False
        try:
            verdict = self._helper.stdout.read(1)  # type: ignore[union-attr]
        except OSError:
            verdict = b""
        if not verdict:  # the helper is gone: every later message is checked here
            self.close()
            return False
        return verdict == b"\x01"


def _start_helper(keys: list[bytes]) -> subprocess.Popen[bytes] | None:
    """The helper process, given the table's keys; None if it cannot be started."""
    if not sys.executable:
        return None
    try:
        helper = subprocess.Popen([sys.executable, "-I", "-c", HELPER, *sys.path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    try:
        helper.stdin.write(msgpack.packb(keys))  # type: ignore[union-attr]
    except OSError:
        helper.kill()
        helper.wait()
        return None
    return helper


def _helper_main() -> None:
    """The helper: verdicts for the messages on standard input (see the module docstring)."""
    # Standard input is the verifier's pipe (``_start_helper``), which Python reads through a
    # BufferedReader: its read1 returns what has arrived, without waiting for more.
    source, out = cast(io.BufferedReader, sys.stdin.buffer), sys.stdout.buffer
    unpacker = msgpack.Unpacker(max_buffer_size=1 << 24)
    keys: list[Ed25519PublicKey | None] | None = None
    while chunk := source.read1(1 << 16):
        unpacker.feed(chunk)
        verdicts = bytearray()
        for item in unpacker:
            if keys is None:
                keys = [_public_key(key) for key in item]
                continue
            seat, signed, signature = item
            key = keys[seat] if type(seat) is int and 0 <= seat < len(keys) else None
            good = False
            if key is not None:
                try:
                    key.verify(signature, signed)
                    good = True
                except (InvalidSignature, TypeError, ValueError):
                    pass
            verdicts.append(good)
            if len(verdicts) == FLUSH_EVERY:
                out.write(verdicts)
                out.flush()
                verdicts.clear()
        out.write(verdicts)
        out.flush()


def _public_key(key: object) -> Ed25519PublicKey | None:
    """A seat's key, or None for one no signature can match."""
    try:
        return Ed25519PublicKey.from_public_bytes(key)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
