"""Fuzz a real ``p2pwhist host`` process over loopback TCP, and report what breaks it.

The host runs as ``python -m p2pwhist host --port 0 --bind 127.0.0.1 --bot random --players 2
--hands 1 --timeout 10 --wait 10 --name host`` with its own temporary ``P2PWHIST_HOME``, its stdout and
stderr in files; the fuzzer speaks protocol version 3 (protocol/wire.md §2: HELLO, WELCOME,
READY, the host's LOBBY news and the joiners' VOUCHes, then START). It sends ``--frames``
frames of these kinds:

- before login, each exchange on a fresh connection, against one long-lived host process:
  ``raw_random`` (unframed random bytes), ``huge_length`` (length prefixes over 64 KiB, up to
  2^32-1, and exactly 64 KiB), ``random_frame`` (framed random bytes), ``bomb`` (msgpack
  values announcing huge arrays, maps, str, bin or ext with little data, over-limit values,
  fan-outs, trailing bytes), ``deep_nest`` (lists and maps nested 500-5000 deep, or around the
  limits, alone or in a HELLO field, within 64 KiB), ``wrong_type`` (well-formed msgpack of the
  wrong shape), ``bad_hello`` (the honest HELLO with its fields' types, sizes and nesting
  mutated, keys added, dropped or renamed), ``cut_frame`` (a frame cut off mid-way, then a FIN
  or a RST) and ``multi_frame`` (several frames in one write);
- the meeting's own frames, as exchanges of several frames (``MeetingScripts``): ``lobby``,
  against the same host, frames out of their place before a seat (a VOUCH, READY, REJOIN or
  DONE before HELLO; a VOUCH, REJOIN while the host seats a new table, DONE, a second HELLO,
  a signed message or a host's own frame instead of READY; a READY that is not true;
  malformed, deep or oversized ones), each of which must be refused in words naming what was
  expected (a REFUSE of other words is a "wrong verdict"), or, over the 1 KiB limit, hung up
  on; and ``seated``, against a second, 3-seat host (a 2-seat table starts as soon as one
  joiner sits, so only a larger one lets a joiner hold a seat and wait): seated, a VOUCH about
  an unknown key, our own, or floods of them, READY twice, a REJOIN, HELLO, DONE or signed
  message, malformed, deep or oversized VOUCHes, a cut connection, and two joiners of which
  the first refuses the second (the second is refused, and refused again when it comes back
  while the first sits). Each must end its connections in time, with the verdict due, and
  the host must then report every seat it gave free again (a line of its stdout);
- ``game_honest`` and ``game_mutated``: as a seated joiner with its own Ed25519 key, an honest
  HELLO, the real ``Session`` built from START and played honestly with the random bot up to a
  chosen message, which is replaced by a validly signed message whose body (points off the
  curve, wrong keys and positions, claims of cards not held, swapped kinds, extra keys, deep
  nesting, huge or negative ints, wrong types) or envelope (seq, prev, seat, kind) is
  mutated; or, one game in ten, by a frame outside the log (a VOUCH, READY, HELLO, DONE,
  REJOIN, a host's LOBBY...). The host must refuse it and end the game cleanly: exit code 1
  and one line on stderr, ``p2pwhist: ...``, naming the sender. A host with ``--hands 1``
  exits after every game; it is restarted whenever it exits. A host that closed our connection
  over a mutated frame ends its game only once its ``--wait`` for us is over (a forfeit by
  absence), so its exit is awaited beside the run (``EXIT_DEADLINE`` as for any game's end,
  then the same checks) while the next frames go to a fresh host, in a copy of the home
  without its saved games (a host run with the same command line would take an unfinished
  game found there over).

Found and printed, one line each: crashes (a "Traceback" on the host's stderr, or an exit
other than 0 or 1 with a one-line "p2pwhist: ..." error, or any exit caused by a pre-login
frame), hangs (no answer or close within 15 s, no START for an honest HELLO, a game that does
not end within 20 s of the mutated frame, a seat the host never reports free), misblames (a
clean exit after a mutated frame whose error does not name the sender), broken games (the host
ended a game that our joiner was still playing honestly) and wrong verdicts (an exchange of the
meeting refused in other words than the protocol's, or not refused). A host can die a few milliseconds after the frame that killed it, so
the recent pre-login frames are replayed one by one, each to a fresh host, to find the one
that crashes a host on its own ("reproduced alone"). Each finding's frame (hex), the frames
sent before it and the host's stderr are saved under ``--out``. Mutations the host accepted
are listed too (some are caught only by the end-of-hand audit, by design), and HELLOs it
seated that wire.md, read strictly, calls malformed. The host's peak memory is the largest
VmHWM (``/proc/PID/status``) read before each host's exit or kill.

A crash costs a host restart, so once one frame label has crashed the host ``--max-repeats``
times it is no longer generated (counted as ``suppressed``).

Usage: python scripts/fuzz_host.py [--frames N] [--seed S] [--out DIR] [--game-every K]
The last line printed is one JSON object: frames, crashes, hangs, wrong_verdicts, peak_rss_mb,
games, kinds (frames per kind), seconds, and more. Exit 0 if no crash and no hang, else 1. ``--seed``
makes the fuzzer's own choices reproducible; the host's deal and keys stay random. A host that
fails to start three times in a row (code mid-edit, say) stops the run early: ``aborted`` says
why, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import secrets
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist import table
from p2pwhist.games.bots import RandomBot
from p2pwhist.limits import MIN_MOVE
from p2pwhist.session import Need, Session
from p2pwhist.signed import SignedMessage, parse, public_bytes, sign
from p2pwhist.table import HANDSHAKE_FRAME, PROTOCOL_VERSION

HOST_LINE = re.compile(r"on port (\d+); your key fingerprint is ([0-9a-f-]+)")
MAX_FRAME = 64 * 1024
ANSWER_DEADLINE = 15.0  # any answer, close, START or next message; longer is a hang
CONNECT_TIMEOUT = 5.0
START_DEADLINE = 30.0  # a fresh host process to print that it listens
HOST_TIMEOUT = MIN_MOVE  # the host's --timeout and --wait for a silent peer: the table's floors
GAME_END_DEADLINE = HOST_TIMEOUT + 15.0  # after the mutated frame, the host must have exited
EXIT_DEADLINE = 15.0
QUIET = 3.0  # after a mutated frame, silence this long while it is our turn: the host took it
MEMORY_EVERY = 250  # pre-login exchanges between VmHWM samples
JOINER_NAME = "fuzzer"
# A pre-login frame this small is refused in words; a larger one the host drops unanswered
# (every frame on a connection that holds no seat in a game: protocol/wire.md §2.5).
ANSWERED = HANDSHAKE_FRAME
LINGER = 0.25  # after a frame left unanswered, how long to watch for the host's crash
RECENT = 6  # frames kept per host, saved with a crash

# NIST P-256, the deck's curve: points travel as 32-byte x-coordinates (p2pwhist/deck/_curve.py)
P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
KINDS = ("start", "accept", "hand", "commit", "shuffle", "lock", "keys", "play", "secret", "final",
         "dispute", "abort")

PRELOGIN_WEIGHTS = {
    "raw_random": 8, "huge_length": 6, "random_frame": 10, "bomb": 12, "deep_nest": 12,
    "wrong_type": 12, "bad_hello": 25, "cut_frame": 8, "multi_frame": 7, "lobby": 8, "seated": 4,
}
# The kinds that are exchanges of several frames (``MeetingScripts``), not one write.
SCRIPTED = ("lobby", "seated")
# Of the games' mutations, this share replaces our message by a frame outside the log (a VOUCH,
# READY, HELLO, DONE, REJOIN, or a host's frame): the host must stop the game naming us.
OUTSIDE_SHARE = 0.1
# Which of our messages a game mutates: its kind, then which occurrence of that kind.
TARGET_WEIGHTS = {"accept": 2, "commit": 1, "shuffle": 2, "lock": 2, "keys": 3, "play": 4, "secret": 1,
                  "final": 1}


# -- msgpack with verbatim pieces ------------------------------------------------------------


class Raw(bytes):
    """msgpack bytes spliced verbatim into an encoded value: deep nests, ext, invalid bytes."""


def enc(value: Any) -> bytes:
    """msgpack of ``value`` in the shortest form (as ``msgpack.packb``), with ``Raw`` spliced in.
    Only ``Raw`` is ever deep, so this never recurses far."""
    if isinstance(value, Raw):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return _header(len(value), 0x90, 0xDC, 0xDD) + b"".join(enc(item) for item in value)
    if isinstance(value, dict):
        return _header(len(value), 0x80, 0xDE, 0xDF) + b"".join(enc(k) + enc(v) for k, v in value.items())
    if type(value) is int and not -(2**63) <= value < 2**64:
        value = 2**64 - 1 if value > 0 else -(2**63)  # msgpack's ints stop there
    return msgpack.packb(value, use_bin_type=True)


def _header(n: int, fix: int, b16: int, b32: int) -> bytes:
    if n < 16:
        return bytes([fix | n])
    if n < 1 << 16:
        return bytes([b16]) + struct.pack(">H", n)
    return bytes([b32]) + struct.pack(">I", n)


def has_raw(value: Any, depth: int = 0) -> bool:
    if isinstance(value, Raw):
        return True
    if depth > 50:
        return True
    if isinstance(value, (list, tuple)):
        return any(has_raw(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(has_raw(k, depth + 1) or has_raw(v, depth + 1) for k, v in value.items())
    return False


def frame(payload: bytes) -> bytes:
    """A frame as the wire has it, with no limit of ours (the host is the one to refuse)."""
    return struct.pack(">I", len(payload)) + payload


def nest(rng: random.Random, depth: int, style: str | None = None, leaf: bytes = b"\xc0") -> tuple[str, Raw]:
    """A value nested ``depth`` deep, and its style: fits 64 KiB for depth up to ~20000."""
    style = style or rng.choice(["list", "map", "mixed", "pair"])
    if style == "list":
        data = b"\x91" * depth + leaf
    elif style == "map":
        data = b"\x81\xa1k" * depth + leaf
    elif style == "mixed":
        data = b"".join(b"\x91" if i % 2 else b"\x81\xa1k" for i in range(depth)) + leaf
    else:  # [[[..., 0], 0], 0]: the nesting closes with data after it
        data = b"\x92" * depth + leaf + b"\x00" * depth
    return style, Raw(data)


def nest_depth(rng: random.Random) -> int:
    if rng.random() < 0.7:
        return rng.randint(500, 5000)
    return rng.choice([8, 9, 16, 64, 255, 256, 999, 1000, 1023, 1024, 1025, 2048, rng.randint(5000, 20000)])


def off_curve_x(rng: random.Random) -> bytes:
    """32 bytes below p that are no point's x-coordinate on P-256."""
    while True:
        x = rng.randrange(P256_P)
        rhs = (x * x * x - 3 * x + P256_B) % P256_P
        if pow(rhs, (P256_P - 1) // 2, P256_P) == P256_P - 1:
            return x.to_bytes(32, "big")


def on_curve_x(rng: random.Random) -> bytes:
    while True:
        x = rng.randrange(P256_P)
        rhs = (x * x * x - 3 * x + P256_B) % P256_P
        if pow(rhs, (P256_P - 1) // 2, P256_P) == 1:
            return x.to_bytes(32, "big")


def weird(rng: random.Random) -> tuple[str, Any]:
    """A value of the wrong type, size, range or nesting, and its name."""
    rb = rng.randbytes
    pool: list[tuple[str, Any]] = [
        ("int0", 0), ("int1", 1), ("int2", 2), ("neg1", -1), ("int_min", -(2**63)), ("uint_max", 2**64 - 1),
        ("int_2_32", 2**32), ("int52", 52), ("true", True), ("false", False), ("nil", None), ("float1", 1.0),
        ("float_half", 0.5), ("nan", float("nan")), ("inf", float("-inf")),
        ("str_empty", ""), ("str", "x"), ("str_1024", "x" * 1024), ("str_1025", "y" * 1025), ("str_nonprint", "\x00\n"),
        ("bin_empty", b""), ("bin31", rb(31)), ("bin32", rb(32)), ("bin33", rb(33)), ("bin64", rb(64)),
        ("bin4k", rb(4096)), ("zero32", bytes(32)), ("ff32", b"\xff" * 32), ("x_eq_p", P256_P.to_bytes(32, "big")),
        ("off_curve", off_curve_x(rng)), ("on_curve", on_curve_x(rng)), ("n32", P256_N.to_bytes(32, "big")),
        ("list_empty", []), ("list1", [0]), ("list256", [0] * 256), ("list257", [0] * 257),
        ("map_empty", {}), ("map1", {"a": 1}), ("map33", {str(i): i for i in range(33)}),
        ("map_intkey", Raw(b"\x81\x01\x01")), ("map_binkey", {b"k": 1}), ("ext", Raw(b"\xd4\x01\x00")),
        ("timestamp", Raw(b"\xd6\xff\x00\x00\x00\x00")), ("bad_utf8", Raw(b"\xa2\xff\xfe")), ("byte_c1", Raw(b"\xc1")),
        ("arr32_bomb", Raw(b"\xdd\xff\xff\xff\xff\xc0")), ("str32_bomb", Raw(b"\xdb\xff\xff\xff\xffab")),
    ]
    if rng.random() < 0.15:
        style, value = nest(rng, nest_depth(rng))
        return f"deep_{style}", value
    return rng.choice(pool)


# -- the host process ------------------------------------------------------------------------


class HostProc:
    """One ``p2pwhist host`` process of ``players`` seats; stdout and stderr go to files in ``logs``."""

    def __init__(self, home: Path, logs: Path, number: int, players: int = 2) -> None:
        self.number = number
        self.players = players
        self.out = logs / f"host-{number}.out"
        self.err = logs / f"host-{number}.err"
        command = [sys.executable, "-m", "p2pwhist", "host", "--port", "0", "--bind", "127.0.0.1",
                   "--bot", "random", "--players", str(players), "--hands", "1", "--timeout", str(HOST_TIMEOUT),
                   "--wait", str(HOST_TIMEOUT), "--name", "host"]
        env = {**os.environ, "P2PWHIST_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        with self.out.open("wb") as stdout, self.err.open("wb") as stderr:
            self.popen = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env)
        self.pid = self.popen.pid
        self.port = 0
        self.peak_kb = 0
        self.recent: deque[Sent] = deque(maxlen=RECENT)
        self.err_seen = 0  # stderr bytes already reported while the host kept running

    def wait_listening(self) -> bool:
        deadline = time.monotonic() + START_DEADLINE
        while time.monotonic() < deadline:
            exited = self.popen.poll() is not None  # read after: the last output is then in
            found = HOST_LINE.search(self.out.read_text(errors="replace"))
            if found:
                self.port = int(found[1])
                return True
            if exited:
                return False
            time.sleep(0.01)
        return False

    def sample_memory(self) -> None:
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return
        found = re.search(r"VmHWM:\s+(\d+)\s+kB", status)
        if found:
            self.peak_kb = max(self.peak_kb, int(found[1]))

    @property
    def code(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.sample_memory()
            self.popen.kill()
        self.popen.wait()

    def stderr(self) -> str:
        try:
            return self.err.read_text(errors="replace")
        except OSError:
            return ""

    def err_size(self) -> int:
        try:
            return self.err.stat().st_size
        except OSError:
            return 0

    def started_game(self) -> bool:
        """Whether the host began a game (it reports the full table, then plays)."""
        try:
            return b"All seats taken" in self.out.read_bytes()
        except OSError:
            return False

    def out_size(self) -> int:
        try:
            return self.out.stat().st_size
        except OSError:
            return 0

    def said_gone(self, names: tuple[str, ...], since: int, deadline: float) -> list[str]:
        """Of ``names``, those the host has not reported gone from its table (a line of its
        stdout from byte ``since`` on: refused, seat free again, leaves the table) by ``deadline``."""
        missing = list(names)
        while missing:
            try:
                with self.out.open("rb") as f:
                    f.seek(since)
                    text = f.read().decode(errors="replace")
            except OSError:
                text = ""
            missing = [name for name in missing if not re.search(
                rf"Refused {name}:|^{name} .*(its seat is free again|no need to answer about them)|; {name} leaves the "
                "table", text, re.MULTILINE)]
            if not missing or time.monotonic() >= deadline or self.code is not None:
                break
            time.sleep(0.01)
        return missing

    def stdout_tail(self, lines: int = 40) -> str:
        try:
            with self.out.open("rb") as f:
                f.seek(max(0, f.seek(0, 2) - 16384))
                return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class Sent:
    kind: str
    label: str  # coarse: the same for every frame of one mutation, whatever its numbers
    detail: str
    data: bytes  # the bytes as written to the socket
    suspicious: bool = False  # no answer where one was due: the likely culprit of a later crash
    finish: str = "wait"  # after writing: wait for the host, or close with a FIN ("fin") or a RST ("rst")
    script: Script | None = None  # an exchange of several frames (the meeting), replayed as a whole


# -- connections -----------------------------------------------------------------------------


TIMEOUT = object()  # read_frame's answer when the deadline passed


class Conn:
    """A blocking loopback connection with a deadline on every operation."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT)
        self.sock.settimeout(ANSWER_DEADLINE)
        self.buffer = bytearray()
        self.eof = False

    def send(self, data: bytes) -> str:
        """'ok', 'closed' (the host hung up first) or 'timeout'."""
        try:
            self.sock.sendall(data)
            return "ok"
        except TimeoutError:
            return "timeout"
        except OSError:
            return "closed"

    def half_close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def read_frame(self, deadline: float) -> bytes | None | object:
        """The next frame's payload, None once the host closed, TIMEOUT at ``deadline``."""
        while True:
            if len(self.buffer) >= 4:
                (size,) = struct.unpack_from(">I", self.buffer)
                if len(self.buffer) >= 4 + size:
                    payload = bytes(self.buffer[4 : 4 + size])
                    del self.buffer[: 4 + size]
                    return payload
            if self.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TIMEOUT
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return TIMEOUT
            except OSError:  # reset
                self.eof = True
                continue
            if not data:
                self.eof = True
            else:
                self.buffer += data

    def close(self, abortive: bool = False) -> None:
        try:
            if abortive:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.sock.close()
        except OSError:
            pass


def decode_any(payload: bytes) -> Any:
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 (the host's bytes: anything may be wrong)
        return None


def message_kind(payload: bytes) -> str | None:
    """The kind named in a signed message's envelope, or None."""
    outer = decode_any(payload)
    if isinstance(outer, list) and len(outer) == 2 and isinstance(outer[0], bytes):
        inner = decode_any(outer[0])
        if isinstance(inner, list) and len(inner) == 5 and isinstance(inner[3], str):
            return inner[3]
    return None


def is_refusal(payload: bytes) -> bool:
    value = decode_any(payload)
    return isinstance(value, dict) and isinstance(value.get("refuse"), str)


def is_welcome(payload: bytes) -> bool:
    value = decode_any(payload)
    return isinstance(value, dict) and isinstance(value.get("welcome"), dict)


def from_host(payload: bytes) -> Any:
    """The host's frame as the table reads it (``table.read_from_host``), or None if it reads
    as none: a frame outside the log is one of the typed frames, a message of the log is
    ``table.Logged``."""
    try:
        return table.read_from_host(payload)
    except table.FrameError:
        return None


def outside(value: Any) -> bytes:
    """A frame outside the log (HELLO, READY, VOUCH...), framed for the wire."""
    return frame(table.encode(value))


# -- our joiner's side of the game --------------------------------------------------------------


def public_raw(key: Ed25519PrivateKey) -> bytes:
    return public_bytes(key.public_key())


def make_session(start_payload: bytes, key: Ed25519PrivateKey) -> Session:
    """Our real session from the host's START, at the seat that holds our key."""
    start = parse(start_payload)
    seat = [p.key for p in start.body.players].index(public_raw(key))
    return Session(start, seat, key, lambda: secrets.token_bytes(32))


def signed_fields(message: SignedMessage) -> list[Any]:
    """[seq, prev, seat, kind, body] of our own message, as the wire has them."""
    return msgpack.unpackb(message.signed, raw=False, strict_map_key=False)


def resign(key: Ed25519PrivateKey, fields: list[Any]) -> bytes:
    """A payload signed by ``key`` over ``fields``: with ``p2pwhist.signed.sign`` when msgpack
    can pack them, else over our own encoding (deep nests, ext, bad bytes, other lengths)."""
    if len(fields) == 5 and not has_raw(fields):
        try:
            return sign(key, *fields)
        except (ValueError, TypeError, OverflowError):
            pass
    signed = enc(fields)
    return msgpack.packb([signed, key.sign(signed)], use_bin_type=True)


# -- pre-login frames ------------------------------------------------------------------------


def hello_value(name: Any, key: Any, version: Any = PROTOCOL_VERSION) -> dict:
    return {"hello": {"version": version, "name": name, "key": key}}


def random_name(rng: random.Random) -> str:
    return f"p{rng.randrange(10**9)}"


def valid_hello(value: Any) -> bool:
    """Whether protocol/wire.md section 2, read strictly, calls this value an honest HELLO:
    exact types (no bool or float for the version), a 1..32-character printable name without
    surrounding spaces, a 32-byte key."""
    if not (type(value) is dict and list(value) == ["hello"] and type(value["hello"]) is dict):
        return False
    body = value["hello"]
    if set(body) != {"version", "name", "key"}:
        return False
    version, name, key = body["version"], body["name"], body["key"]
    return (type(version) is int and version == PROTOCOL_VERSION and type(name) is str and 1 <= len(name) <= 32
            and name.isprintable() and name == name.strip() and name != "host"
            and type(key) is bytes and len(key) == 32)


def complete(data: bytes) -> bool:
    """Whether the host, framing ``data``, reaches a verdict without waiting for more bytes."""
    if len(data) < 4:
        return False
    (size,) = struct.unpack_from(">I", data)
    return size > MAX_FRAME or len(data) >= 4 + size


class Generator:
    """Pre-login frames: each call gives (kind, label, detail, bytes, how to finish)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.valid = False  # whether the last frame made is an honest HELLO (the host must seat it)
        self.joiner_known = False  # the host has seen our joiner's name with its key: now try another key

    def make(self, kind: str) -> tuple[str, str, bytes, str]:
        self.valid = False
        return getattr(self, kind)()

    def _finish_for(self, data: bytes) -> str:
        if complete(data):
            return "wait"
        return self.rng.choice(["fin", "rst"])

    def raw_random(self):
        rng = self.rng
        n = rng.choice([1, 2, 3, 4, 5, 8, 16, 64, 256, 1024, 4096])
        if rng.random() < 0.4:  # a plausible length, then garbage
            size = rng.choice([0, 1, 2, 10, 100, rng.randrange(MAX_FRAME + 1)])
            data = struct.pack(">I", size) + rng.randbytes(n)
            label = "raw_random:small_length"
        else:
            data = rng.randbytes(n)
            label = "raw_random:bytes"
        return label, f"{len(data)} bytes", data, self._finish_for(data)

    def huge_length(self):
        rng = self.rng
        choice = rng.random()
        if choice < 0.15:  # exactly the limit, with a whole payload (a bin or random bytes)
            if rng.random() < 0.5:
                payload = b"\xc6" + struct.pack(">I", MAX_FRAME - 5) + rng.randbytes(MAX_FRAME - 5)
                label = "huge_length:max_bin"
            else:
                payload = rng.randbytes(MAX_FRAME)
                label = "huge_length:max_random"
            return label, f"{len(payload)}", frame(payload), "wait"
        if choice < 0.25:  # one over the limit, with the whole payload sent
            payload = rng.randbytes(MAX_FRAME + 1)
            return "huge_length:over_by_one", str(len(payload)), frame(payload), "wait"
        size = rng.choice([MAX_FRAME + 1, 2**16 + 2**15, 2**24, 2**31 - 1, 2**31, 2**32 - 1,
                           rng.randrange(MAX_FRAME + 1, 2**32)])
        data = struct.pack(">I", size) + rng.randbytes(rng.choice([0, 1, 16, 1000]))
        return "huge_length:announce", str(size), data, "wait"

    def random_frame(self):
        rng = self.rng
        n = rng.choice([0, 1, 2, 3, 8, 32, 100, 1000, 10000])
        payload = rng.randbytes(n)
        return "random_frame:bytes", str(n), frame(payload), "wait"

    def bomb(self):
        rng = self.rng
        few = rng.randbytes(rng.choice([0, 1, 8, 64]))
        big32 = struct.pack(">I", rng.choice([2**32 - 1, 2**31, 2**24, 65537]))
        choices = {
            "array32": lambda: b"\xdd" + big32 + b"\xc0" * len(few),
            "array16": lambda: b"\xdc\xff\xff" + b"\xc0" * len(few),
            "map32": lambda: b"\xdf" + big32 + b"\xa1a\xc0" * (len(few) // 3),
            "map16": lambda: b"\xde\xff\xff" + b"\xa1a\xc0",
            "str32": lambda: b"\xdb" + big32 + few,
            "bin32": lambda: b"\xc6" + big32 + few,
            "ext32": lambda: b"\xc9" + big32 + b"\x01" + few,
            "fixext": lambda: bytes([rng.choice([0xD4, 0xD5, 0xD6, 0xD7, 0xD8]), rng.randrange(256)]) + b"\x00" * 16,
            "timestamp": lambda: b"\xd6\xff" + rng.randbytes(4),
            "timestamp96": lambda: b"\xc7\x0c\xff" + rng.randbytes(12),
            "nested_announce": lambda: b"\x91" * rng.randint(1, 7) + b"\xdd\xff\xff\xff\xff",
            "str_over": lambda: enc("s" * 1025),
            "bin_over_ok": lambda: enc(rng.randbytes(60000)),
            "array_over": lambda: enc([0] * 257),
            "map_over": lambda: enc({str(i): 0 for i in range(33)}),
            "fanout": lambda: enc([[None] * 250] * 250),
            "fanout_maps": lambda: enc([{str(i): [0] * 200 for i in range(30)}] * 10),
            "float_map_key": lambda: b"\x81\xca\x00\x00\x00\x00\xc0",
            "nil_key": lambda: b"\x81\xc0\xc0",
            "trailing": lambda: enc(hello_value(random_name(rng), rng.randbytes(32))) + b"\xc0",
            "nils": lambda: b"\xc0" * rng.choice([2, 1000, MAX_FRAME]),
            "never_used": lambda: b"\xc1",
            "truncated_value": lambda: enc(hello_value(random_name(rng), rng.randbytes(32)))[:-5],
        }
        name = rng.choice(sorted(choices))
        payload = choices[name]()[:MAX_FRAME]
        return f"bomb:{name}", f"{len(payload)} bytes", frame(payload), "wait"

    def deep_nest(self):
        rng = self.rng
        depth = nest_depth(rng)
        style, value = nest(rng, depth)
        where = rng.choice(["top", "top", "hello", "version", "name", "key", "extra"])
        key = rng.randbytes(32)
        if where == "top":
            payload = bytes(value)
        elif where == "hello":
            payload = enc({"hello": value})
        elif where == "extra":
            body = {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": key, "x": value}
            payload = enc({"hello": body})
        else:
            body = {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": key}
            body[where] = value
            payload = enc({"hello": body})
        if len(payload) > MAX_FRAME:
            payload = payload[:MAX_FRAME]
        return f"deep_nest:{where}:{style}", f"depth {depth}", frame(payload), "wait"

    def wrong_type(self):
        rng = self.rng
        key = rng.randbytes(32)
        fake = Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        signed_start = resign(fake, [0, bytes(32), 0, "start", {"version": 1}])
        signed_accept = resign(fake, [1, rng.randbytes(32), 1, "accept", {}])
        choices: dict[str, Any] = {
            "int": 1, "neg": -1, "uint_max": 2**64 - 1, "float": 1.5, "true": True, "nil": None, "str": "hello",
            "bin": b"hello", "list": [], "list_hello": ["hello"], "map": {}, "hello_nil": {"hello": None},
            "hello_list": {"hello": [1, "x", key]}, "hello_str": {"hello": "x"}, "refuse": {"refuse": "x"},
            "hello_extra_outer": {"hello": {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": key}, "x": 1},
            "hello_bin_key": {b"hello": {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": key}},
            "hello_upper": {"HELLO": {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": key}},
            "hello_intkeys": Raw(b"\x81\xa5hello\x83\x01\x01\x02\xa1x\x03\xc4\x01a"),
            "signed_start": Raw(signed_start), "signed_accept": Raw(signed_accept),
            "hello_twice": Raw(b"\x82" + enc("hello") + enc({"version": PROTOCOL_VERSION, "name": "a", "key": key})
                               + enc("hello") + enc({"version": PROTOCOL_VERSION, "name": "b", "key": key})),
        }
        name = rng.choice(sorted(choices))
        return f"wrong_type:{name}", name, frame(enc(choices[name])), "wait"

    def bad_hello(self):
        rng = self.rng
        body: dict[Any, Any] = {"version": PROTOCOL_VERSION, "name": random_name(rng), "key": rng.randbytes(32)}
        labels = []
        for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 3)):
            op = rng.choice(["version", "name", "key", "version", "name", "key", "extra", "missing", "rename",
                             "as_list", "wrapped"])
            if op in ("version", "name", "key"):
                label, value = self._field_value(op)
                body[op] = value
                labels.append(f"{op}={label}")
            elif op == "extra":
                body[rng.choice(["extra", "", "version2", "KEY"])] = weird(rng)[1]
                labels.append("extra_key")
            elif op == "missing" and body:
                del body[rng.choice(sorted(body, key=str))]
                labels.append("missing_key")
            elif op == "rename" and body:
                old = rng.choice(sorted(body, key=str))
                body[rng.choice([f"{old}_", str(old).upper(), str(old).encode() if isinstance(old, str) else "x"])] = body.pop(old)
                labels.append("renamed_key")
            elif op == "as_list":
                body = [body.get("version"), body.get("name"), body.get("key")]  # type: ignore[assignment]
                labels.append("body_list")
                break
            elif op == "wrapped":
                body = {"hello": body}
                labels.append("body_nested")
                break
        label = "bad_hello:" + "+".join(sorted(set(labels)))
        self.valid = valid_hello({"hello": body})
        return label, repr(body)[:200], frame(enc({"hello": body})[:MAX_FRAME]), "wait"

    def _field_value(self, field_name: str) -> tuple[str, Any]:
        rng = self.rng
        if rng.random() < 0.5:
            return weird(rng)
        if field_name == "version":
            return rng.choice([("v0", 0), ("v2", 2), ("true", True), ("float1", 1.0), ("str1", "1"),
                               ("list1", [1]), ("map", {"version": 1}), ("neg", -1), ("uint_max", 2**64 - 1)])
        if field_name == "name":
            return rng.choice([
                ("empty", ""), ("space_lead", " x"), ("space_trail", "x "), ("len32", "n" * 32), ("len33", "n" * 33),
                ("nul", "a\x00b"), ("newline", "a\nb"), ("zero_width", "a\u200bb"), ("rtl", "a\u202eb"),
                ("unicode", "Zoë🂡"), ("emoji32", "🂡" * 32), ("host_name", "host"), ("bytes", b"name"),
                ("tab", "\t"), ("long_1024", "n" * 1024),
                *([("joiner_other_key", JOINER_NAME)] if self.joiner_known else [])])
        return rng.choice([
            ("len0", b""), ("len31", rng.randbytes(31)), ("len33", rng.randbytes(33)), ("len64", rng.randbytes(64)),
            ("zeros32", bytes(32)), ("ones32", b"\xff" * 32), ("str32", "k" * 32), ("int", 5),
            ("list32", list(rng.randbytes(32))), ("random32", rng.randbytes(32))])

    def cut_frame(self):
        rng = self.rng
        source = rng.choice(["hello", "bad_hello", "wrong_type", "bomb"])
        if source == "hello":
            data = frame(enc(hello_value(random_name(rng), rng.randbytes(32))))
        else:
            data = self.make(source)[2]
        if rng.random() < 0.3:
            cut = rng.randint(1, 3)  # mid-header
        else:
            cut = rng.randint(4, max(4, len(data) - 1))
        data = data[:cut]
        self.valid = False  # cut short: never an honest HELLO
        finish = "wait" if complete(data) else rng.choice(["fin", "rst"])
        return f"cut_frame:{source}", f"{cut} bytes", data, finish

    def multi_frame(self):
        rng = self.rng
        n = rng.randint(2, 5)
        parts = []
        labels = []
        honest = rng.random() < 0.01  # an honest HELLO, then junk: WELCOME, then a refusal of the junk
        if honest:
            parts.append(frame(enc(hello_value(random_name(rng), rng.randbytes(32)))))
            labels.append("hello")
            n -= 1
        for _ in range(n):
            kind = rng.choice(["bad_hello", "wrong_type", "random_frame", "bomb"])
            _, _, data, finish = self.make(kind)
            if finish != "wait" or not complete(data):
                continue
            if not parts:
                honest = self.valid  # a mutated HELLO that is still an honest one
            parts.append(data)
            labels.append(kind)
        self.valid = honest
        return "multi_frame:" + (labels[0] if labels else "none"), "+".join(labels), b"".join(parts), "wait"


# -- the meeting: exchanges of several frames (protocol version 3's lobby) ---------------------


@dataclass
class Script:
    """A pre-login exchange of several steps on one or two connections, against a host of
    ``players`` seats. ``steps`` are (connection, what, bytes): "open"; "send" the bytes;
    "welcome", wait for the host's WELCOME; "seated", wait for a LOBBY that gives us a seat
    (LOBBY news in between is skipped); "end", wait for the host to end the connection (as
    below); "rst" or "fin", close the connection. Then every connection still open must end (a REFUSE, or a close) within ``ANSWER_DEADLINE``, LOBBY
    news aside. ``ends`` says, per connection, words its REFUSE must hold (a wrong verdict
    else), or None: a silent close will do. ``leaves``: names the host must report gone from
    its table (stdout) once the exchange is over, so that the next one finds every seat free."""

    players: int
    label: str
    detail: str
    steps: list[tuple[int, str, bytes]]
    ends: tuple[str | None, ...] = (None,)
    leaves: tuple[str, ...] = ()

    @property
    def data(self) -> bytes:
        return b"".join(data for conn, what, data in self.steps if conn == 0 and what == "send")

    @property
    def frames(self) -> int:
        return sum(1 for _, what, _ in self.steps if what == "send")


@dataclass
class ScriptEnd:
    """How a ``Script`` went: ``outcome`` in a word, the REFUSE each connection got (None: a
    silent close), and what went wrong: ``hang`` (no end within the deadline), ``wrong`` (a
    verdict other than the one due), ``early`` (a step's answer never came: the host refused
    or closed first; said, not a finding)."""

    outcome: str
    refusals: dict[int, str | None] = field(default_factory=dict)
    hang: str | None = None
    wrong: str | None = None
    connect_failed: str | None = None


# Refusals that say the host is busy, not what it thinks of the frame: no verdict to check.
BUSY = ("try again shortly",)


def run_script(port: int, script: Script) -> ScriptEnd:
    """Run ``script`` against the host on ``port``; every read has a deadline."""
    conns: dict[int, Conn] = {}
    ended: set[int] = set()
    refusals: dict[int, str | None] = {}
    early: str | None = None
    try:
        for index, what, data in script.steps:
            if what == "open":
                try:
                    conns[index] = Conn(port)
                except OSError as error:
                    return ScriptEnd("connect_failed", connect_failed=str(error))
                continue
            conn = conns[index]
            if index in ended:
                continue
            if what == "send":
                if conn.send(data) == "timeout":
                    return ScriptEnd("hang", hang="the host stopped reading a frame of the meeting for 15 s")
            elif what in ("rst", "fin"):
                conn.close(abortive=what == "rst")
                ended.add(index)
            elif what == "end":
                failed = _end(conn, index, refusals)
                if failed is not None:
                    return failed
                ended.add(index)
            else:  # "welcome" or "seated": skip LOBBY news until the frame due
                found = _await(conn, what)
                if found is TIMEOUT:
                    return ScriptEnd("hang", hang=f"no {what.upper()} within {ANSWER_DEADLINE:g} s in the meeting")
                if found is not True:
                    refusals[index] = found if isinstance(found, str) else None
                    ended.add(index)
                    early = early or f"early_{'refused' if isinstance(found, str) else 'closed'}_at_{what}"
        for index, conn in conns.items():  # every connection still open must now end
            if index not in ended and (failed := _end(conn, index, refusals)) is not None:
                return failed
    finally:
        for conn in conns.values():
            conn.close()
    if early is not None:
        return ScriptEnd(early, refusals)
    wrong = None
    for index, words in enumerate(script.ends):
        got = refusals.get(index)
        if words is not None and (got is None or words not in got) and not (got and any(b in got for b in BUSY)):
            wrong = f"connection {index}: the host's answer is {got!r}, not a REFUSE saying {words!r}"
            break
    refused = [got for got in refusals.values() if got is not None]
    return ScriptEnd("refused" if refused else "closed", refusals, wrong=wrong)


def _end(conn: Conn, index: int, refusals: dict[int, str | None]) -> ScriptEnd | None:
    """Read connection ``index`` until the host closes it (LOBBY news aside), keeping its
    REFUSE's reason in ``refusals``; a ``ScriptEnd`` if it does not end as it should."""
    deadline = time.monotonic() + ANSWER_DEADLINE
    refusals.setdefault(index, None)
    while True:
        payload = conn.read_frame(deadline)
        if payload is TIMEOUT:
            return ScriptEnd("hang", refusals, hang=f"connection {index} of the meeting neither refused "
                             f"nor closed within {ANSWER_DEADLINE:g} s")
        if payload is None:
            return None
        word = from_host(payload)
        if isinstance(word, table.Refuse):
            refusals[index] = word.reason
        elif not isinstance(word, table.Lobby):
            return ScriptEnd("unexpected", refusals, wrong=f"connection {index} got "
                             f"{type(word).__name__ if word is not None else payload[:40].hex()} "
                             "where its end was due")


def _await(conn: Conn, what: str) -> bool | str | None | object:
    """True once the frame due has come (a WELCOME; a LOBBY that seats us); else the REFUSE's
    reason, None for a close, TIMEOUT."""
    deadline = time.monotonic() + ANSWER_DEADLINE
    while True:
        payload = conn.read_frame(deadline)
        if not isinstance(payload, bytes):
            return payload
        word = from_host(payload)
        if isinstance(word, table.Refuse):
            conn.read_frame(deadline)  # the close that follows
            return word.reason
        if what == "welcome" and isinstance(word, table.Welcome):
            return True
        if what == "seated" and isinstance(word, table.Lobby) and word.you is not None:
            return True
        if not isinstance(word, table.Lobby):
            return f"(not a REFUSE: {type(word).__name__ if word is not None else payload[:40].hex()})"


class MeetingScripts:
    """Hostile exchanges of the meeting (wire.md §2.1), where protocol version 3 added LOBBY and
    VOUCH: ``lobby`` against the 2-seat host (frames out of their place, before a seat: each
    refused in words, or an oversized one dropped), ``seated`` against a 3-seat host, where a
    joiner holds a seat and the table waits for the third player (VOUCHes about unknown keys,
    floods of them, READY twice, a REJOIN or HELLO while seated, deep or oversized frames, two
    joiners of which one refuses the other). A 2-seat table starts as soon as one joiner sits,
    so a seated joiner's frames can only be tried at a larger table."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def make(self, kind: str) -> Script:
        return getattr(self, kind)()

    def _joiner(self) -> tuple[str, bytes, bytes]:
        name, key = random_name(self.rng), self.rng.randbytes(32)
        return name, key, outside(table.Hello(PROTOCOL_VERSION, name, key))

    def _rejoin(self) -> bytes:
        rng = self.rng
        return outside(table.Rejoin(rng.randbytes(32), rng.randint(1, 5), rng.randint(1, 500), rng.randbytes(32),
                                    rng.randbytes(64)))

    def _deep(self, label: str) -> tuple[str, bytes]:
        """A frame of the meeting with a deep nest in one of its fields, or alone (a nest of
        arrays alone reads as a message of the log, which is no frame of the meeting either)."""
        rng = self.rng
        depth = nest_depth(rng)
        style, value = nest(rng, depth)
        which = rng.choice(["vouch_key", "vouch_trust", "vouch_extra", "ready", "rejoin_game", "rejoin_seat", "top"])
        if which.startswith("vouch"):
            body: Any = {"key": rng.randbytes(32), "trust": True}
            body[{"vouch_key": "key", "vouch_trust": "trust", "vouch_extra": "x"}[which]] = value
            payload = enc({"vouch": body})
        elif which == "ready":
            payload = enc({"ready": value})
        elif which.startswith("rejoin"):
            body = table.Rejoin(rng.randbytes(32), 1, 1, rng.randbytes(32), rng.randbytes(64)).fields()
            body[which.removeprefix("rejoin_")] = value
            payload = enc({"rejoin": body})
        else:
            payload = bytes(value)
        return f"{label}:deep_{which}:{style}", frame(payload[:MAX_FRAME])

    def _oversized(self, label: str) -> tuple[str, bytes]:
        """A VOUCH (or READY) over the meeting's 1 KiB frame limit, up to 64 KiB."""
        rng = self.rng
        size = rng.choice([HANDSHAKE_FRAME + 1, 2048, 60000])
        if rng.random() < 0.5:
            payload = enc({"vouch": {"key": rng.randbytes(32), "trust": True, "pad": rng.randbytes(size)}})
        else:
            payload = enc({"ready": rng.randbytes(size)})
        return f"{label}:oversized", frame(payload[:MAX_FRAME])

    def _bad_vouch(self) -> tuple[str, bytes]:
        rng = self.rng
        body: dict[Any, Any] = {"key": rng.randbytes(32), "trust": rng.random() < 0.5}
        op = rng.choice(["key", "trust", "extra", "missing", "list"])
        if op in ("key", "trust"):
            name, value = weird(rng)
            if op == "trust" and type(value) is bool or op == "key" and type(value) is bytes and len(value) == 32:
                name, value = "nil", None  # still a good VOUCH: make it a bad one
            body[op] = value
            label = f"{op}={name}"
        elif op == "extra":
            body["extra"], label = 1, "extra_key"
        elif op == "missing":
            del body[rng.choice(["key", "trust"])]
            label = "missing_key"
        else:
            body, label = [body["key"], body["trust"]], "body_list"
        return label, frame(enc({"vouch": body})[:MAX_FRAME])

    def _log_message(self) -> bytes:
        fake = Ed25519PrivateKey.from_private_bytes(self.rng.randbytes(32))
        return frame(resign(fake, [1, self.rng.randbytes(32), 1, "accept", {}]))

    # -- before a seat, at the 2-seat host ---------------------------------------------------

    def lobby(self) -> Script:
        rng = self.rng
        name, key, hello = self._joiner()
        first = [(0, "open", b"")]
        welcomed = [(0, "open", b""), (0, "send", hello), (0, "welcome", b"")]
        host_frames = {
            "lobby": lambda: table.Lobby(2, (table.Hello(3, "a", key).player,), None, ()),
            "welcome": lambda: table.Welcome(PROTOCOL_VERSION, name, key, rng.randbytes(32), None),
            "notice": lambda: table.Notice(0, table.Presence.GONE, 0, 0),
            "resumed": lambda: table.Resumed(1),
            "refuse": lambda: table.Refuse("x"),
        }
        choice = rng.choice(["vouch_first", "ready_first", "rejoin_first", "done_first", "host_frame_first",
                             "vouch_before_ready", "vouch_before_ready", "rejoin_seating", "rejoin_seating",
                             "done_before_ready", "hello_twice", "log_before_ready", "host_frame_before_ready",
                             "bad_vouch_before_ready", "bad_ready", "deep", "deep", "oversized"])
        vouch = outside(table.Vouch(rng.randbytes(32), rng.random() < 0.5))
        if choice == "vouch_first":
            return Script(2, "lobby:vouch_first", "VOUCH before HELLO", first + [(0, "send", vouch)],
                          ("expected a HELLO, not a VOUCH",))
        if choice == "ready_first":
            return Script(2, "lobby:ready_first", "READY before HELLO", first + [(0, "send", outside(table.Ready()))],
                          ("expected a HELLO, not a READY",))
        if choice == "rejoin_first":
            return Script(2, "lobby:rejoin_first", "REJOIN before HELLO", first + [(0, "send", self._rejoin())],
                          ("seating a new table",))
        if choice == "done_first":
            return Script(2, "lobby:done_first", "DONE before HELLO", first + [(0, "send", outside(table.Done(1)))],
                          ("expected a HELLO, not a DONE",))
        if choice == "host_frame_first":
            which = rng.choice(sorted(host_frames))
            return Script(2, f"lobby:host_frame_first:{which}", f"a host's {which.upper()} before HELLO",
                          first + [(0, "send", outside(host_frames[which]()))], ("not a p2pwhist HELLO",))
        if choice == "vouch_before_ready":
            return Script(2, "lobby:vouch_before_ready", "HELLO, VOUCH instead of READY",
                          welcomed + [(0, "send", vouch)], ("expected a READY, not a VOUCH",))
        if choice == "rejoin_seating":
            return Script(2, "lobby:rejoin_seating", "HELLO, REJOIN while the host seats a new table",
                          welcomed + [(0, "send", self._rejoin())], ("seating a new table",))
        if choice == "done_before_ready":
            return Script(2, "lobby:done_before_ready", "HELLO, DONE instead of READY",
                          welcomed + [(0, "send", outside(table.Done(rng.randint(1, 100))))],
                          ("expected a READY, not a DONE",))
        if choice == "hello_twice":
            again = outside(table.Hello(PROTOCOL_VERSION, random_name(rng), rng.randbytes(32)))
            return Script(2, "lobby:hello_twice", "HELLO twice", welcomed + [(0, "send", again)],
                          ("expected a READY, not a HELLO",))
        if choice == "log_before_ready":
            return Script(2, "lobby:log_before_ready", "HELLO, a signed message instead of READY",
                          welcomed + [(0, "send", self._log_message())], ("expected a READY, not a message of the log",))
        if choice == "host_frame_before_ready":
            which = rng.choice(sorted(host_frames))
            return Script(2, f"lobby:host_frame_before_ready:{which}", f"HELLO, a host's {which.upper()}",
                          welcomed + [(0, "send", outside(host_frames[which]()))], ("not a p2pwhist READY",))
        if choice == "bad_vouch_before_ready":
            label, data = self._bad_vouch()
            words = "not a p2pwhist READY" if len(data) <= 4 + HANDSHAKE_FRAME else None
            return Script(2, f"lobby:bad_vouch_before_ready:{label}", "HELLO, a malformed VOUCH",
                          welcomed + [(0, "send", data)], (words,))
        if choice == "bad_ready":
            name_, value = weird(rng)
            if value is True:
                name_, value = "false", False  # a READY that says true is the honest one: it would start a game
            data = frame(enc({"ready": value})[:MAX_FRAME])
            words = "not a p2pwhist READY" if len(data) <= 4 + HANDSHAKE_FRAME else None
            return Script(2, f"lobby:bad_ready:{name_}", "HELLO, a READY that is not true",
                          welcomed + [(0, "send", data)], (words,))
        if choice == "deep":
            before = rng.random() < 0.3  # in place of the HELLO, or after the WELCOME
            label, data = self._deep("lobby")
            words = None if len(data) > 4 + HANDSHAKE_FRAME else "not a p2pwhist HELLO" if before \
                else "not a p2pwhist READY"
            steps = first + [(0, "send", data)] if before else welcomed + [(0, "send", data)]
            return Script(2, label + (":first" if before else ""), "a deep frame of the meeting", steps, (words,))
        label, data = self._oversized("lobby")
        return Script(2, label, f"HELLO, a frame of {len(data) - 4} bytes", welcomed + [(0, "send", data)], (None,))

    # -- seated, at the 3-seat host ----------------------------------------------------------

    def seated(self) -> Script:
        rng = self.rng
        name, key, hello = self._joiner()
        ready, probe = outside(table.Ready()), outside(table.Ready())  # probe: a seated joiner that speaks leaves
        sit = [(0, "open", b""), (0, "send", hello), (0, "welcome", b""), (0, "send", ready), (0, "seated", b"")]
        choice = rng.choice(["vouch_unknown", "vouch_unknown", "vouch_self", "vouch_flood", "ready_twice",
                             "ready_twice_fast", "rejoin_seated", "hello_seated", "done_seated", "log_seated",
                             "bad_vouch", "deep", "oversized", "cut", "pair_refuse", "pair_refuse",
                             "pair_left", "pair_refused_returns"])
        if choice == "vouch_unknown":
            vouch = outside(table.Vouch(rng.randbytes(32), rng.random() < 0.5))
            return Script(3, "seated:vouch_unknown", "seated, a VOUCH about a key nobody holds, then READY",
                          sit + [(0, "send", vouch), (0, "send", probe)], leaves=(name,))
        if choice == "vouch_self":
            vouch = outside(table.Vouch(key, rng.random() < 0.5))
            return Script(3, "seated:vouch_self", "seated, a VOUCH about our own key, then READY",
                          sit + [(0, "send", vouch), (0, "send", probe)], leaves=(name,))
        if choice == "vouch_flood":
            count = rng.choice([10, 50, 200])
            flood = [(0, "send", outside(table.Vouch(rng.randbytes(32), rng.random() < 0.5))) for _ in range(count)]
            return Script(3, "seated:vouch_flood", f"seated, {count} VOUCHes about unknown keys, then READY",
                          sit + flood + [(0, "send", probe)], leaves=(name,))
        if choice == "ready_twice":
            return Script(3, "seated:ready_twice", "seated, READY again", sit + [(0, "send", ready)], leaves=(name,))
        if choice == "ready_twice_fast":  # the second READY while the host decides whether to seat us
            return Script(3, "seated:ready_twice_fast", "HELLO, READY, READY at once",
                          sit[:4] + [(0, "send", ready)], leaves=(name,))
        if choice == "rejoin_seated":
            return Script(3, "seated:rejoin", "seated, a REJOIN", sit + [(0, "send", self._rejoin())], leaves=(name,))
        if choice == "hello_seated":
            again = outside(table.Hello(PROTOCOL_VERSION, name, key))
            return Script(3, "seated:hello", "seated, HELLO again", sit + [(0, "send", again)], leaves=(name,))
        if choice == "done_seated":
            return Script(3, "seated:done", "seated, a DONE", sit + [(0, "send", outside(table.Done(1)))],
                          leaves=(name,))
        if choice == "log_seated":
            return Script(3, "seated:log", "seated, a signed message", sit + [(0, "send", self._log_message())],
                          leaves=(name,))
        if choice == "bad_vouch":  # then READY: a malformed VOUCH taken silently would show as a wrong verdict
            label, data = self._bad_vouch()
            words = "not a p2pwhist VOUCH" if len(data) <= 4 + HANDSHAKE_FRAME else None
            return Script(3, f"seated:bad_vouch:{label}", "seated, a malformed VOUCH",
                          sit + [(0, "send", data), (0, "send", probe)], (words,), leaves=(name,))
        if choice == "deep":
            label, data = self._deep("seated")
            logged = data[4] & 0xF0 == 0x90  # an array: a message of the log, which a seated joiner may not send
            words = "not a p2pwhist VOUCH" if len(data) <= 4 + HANDSHAKE_FRAME and not logged else None
            return Script(3, label, "seated, a deep frame", sit + [(0, "send", data), (0, "send", probe)],
                          (words,), leaves=(name,))
        if choice == "oversized":
            label, data = self._oversized("seated")
            return Script(3, label, f"seated, a frame of {len(data) - 4} bytes", sit + [(0, "send", data)],
                          leaves=(name,))
        if choice == "cut":
            how = rng.choice(["rst", "fin"])
            return Script(3, f"seated:cut_{how}", f"seated, then the connection closed ({how.upper()})",
                          sit + [(0, how, b"")], leaves=(name,))
        # Two joiners at the 3-seat table: both seated, then the first answers about the second.
        other, other_key, other_hello = self._joiner()
        sit_other = [(1, "open", b""), (1, "send", other_hello), (1, "welcome", b""), (1, "send", ready),
                     (1, "seated", b"")]
        refuse = outside(table.Vouch(other_key, False))
        if choice == "pair_refuse":  # the second is refused by the first, who keeps its seat, then leaves
            return Script(3, "seated:pair_refuse", "two seated, the first refuses the second, then leaves",
                          sit + sit_other + [(0, "send", refuse), (0, "send", probe)],
                          (None, f"{name} did not accept you"), leaves=(name, other))
        if choice == "pair_left":  # the second leaves; the first then answers yes about it: nothing happens
            how = rng.choice(["rst", "fin"])
            return Script(3, f"seated:pair_left_{how}", "two seated, the second leaves, the first vouches for it",
                          sit + sit_other + [(1, how, b""), (0, "send", outside(table.Vouch(other_key, True))),
                                             (0, "send", probe)], leaves=(name, other))
        # The second, refused, comes back with the same key while the first still sits: refused again
        # (the first leaves only once that is said: a refusal counts while its author is at the table).
        again = [(2, "open", b""), (2, "send", other_hello), (2, "welcome", b""), (2, "send", ready), (2, "end", b"")]
        return Script(3, "seated:pair_refused_returns", "the first refuses the second, which comes back",
                      sit + sit_other + [(0, "send", refuse), (1, "end", b"")] + again + [(0, "send", probe)],
                      (None, f"{name} did not accept you", f"{name} did not accept you"), leaves=(name, other))


# -- signed-message mutations ----------------------------------------------------------------


def _paths(value: Any, path: tuple = (), depth: int = 0):
    yield path, value
    if depth > 12:
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,), depth + 1)
    elif isinstance(value, dict):
        for k, item in value.items():
            yield from _paths(item, path + (k,), depth + 1)


def _set(root: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node = root
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return root


class Mutator:
    """Mutates our honest message's signed fields [seq, prev, seat, kind, body]."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def mutate(self, fields: list[Any], history: list[list[Any]]) -> tuple[str, list[Any] | bytes]:
        """(coarse label, new fields) or (label, whole payload) for outer-structure mutations."""
        rng = self.rng
        kind = fields[3]
        labels = []
        fields = copy.deepcopy(fields)
        for _ in range(1 if rng.random() < 0.8 else 2):
            roll = rng.random()
            trial = copy.deepcopy(fields)
            try:
                if roll < 0.25:
                    label, trial = self._envelope(trial)
                elif roll < 0.6:
                    label, trial = self._specific(kind, trial)
                elif roll < 0.7:
                    label, trial = self._swap(trial, history)
                else:
                    label, trial = self._generic(trial)
            except (IndexError, KeyError, TypeError, AttributeError, ValueError):
                continue  # a second mutation that does not fit what the first made
            fields = trial
            labels.append(label)
            if not (type(fields) is list and len(fields) == 5):
                break  # the envelope's shape itself changed: nothing more to mutate inside it
        if not labels:
            name, fields[4] = weird(rng)
            labels.append(f"body={name}")
        return f"game:{kind}:" + "+".join(labels), fields

    def outside(self, fields: list[Any], key: Ed25519PrivateKey) -> tuple[str, bytes]:
        """A frame outside the log in place of our message: one a joiner may send at other
        times (wire.md §2), or one only a host sends, or a map of no frame's label."""
        rng = self.rng
        seq, prev = fields[0], fields[1]
        ours = public_raw(key)
        choices = {
            "vouch": lambda: table.Vouch(rng.randbytes(32), rng.random() < 0.5),
            "ready": table.Ready,
            "hello": lambda: table.Hello(PROTOCOL_VERSION, JOINER_NAME, ours),
            "done": lambda: table.Done(max(1, seq)),
            "rejoin": lambda: table.Rejoin(rng.randbytes(32), 1, max(1, seq), prev, rng.randbytes(64)),
            "notice": lambda: table.Notice(1, table.Presence.SLOW, 1, 1),
            "refuse": lambda: table.Refuse("no"),
            "lobby": lambda: table.Lobby(2, (table.Hello(3, "a", ours).player,), None, ()),
        }
        name = rng.choice([*choices, "empty_map", "unknown_label"])
        if name == "empty_map":
            return name, msgpack.packb({})
        if name == "unknown_label":
            return name, msgpack.packb({"vouched": {"key": ours, "trust": True}}, use_bin_type=True)
        return name, table.encode(choices[name]())

    def _envelope(self, fields):
        rng = self.rng
        seq, prev, _, kind, _ = fields
        which = rng.choice(["seq", "prev", "seat", "kind", "shape"])
        if which == "seq":
            name, value = rng.choice([("plus1", seq + 1), ("minus1", seq - 1), ("zero", 0), ("plus1000", seq + 1000),
                                      ("uint_max", 2**64 - 1), *(2 * [weird(rng)])])
            fields[0] = value
        elif which == "prev":
            name, value = rng.choice([("random32", rng.randbytes(32)), ("zeros", bytes(32)), ("len31", prev[:31]),
                                      ("len33", prev + b"\0"), *(2 * [weird(rng)])])
            fields[1] = value
        elif which == "seat":
            name, value = rng.choice([("host", 0), ("seat2", 2), ("seat3", 3), ("seat4", 4), ("255", 255),
                                      *(2 * [weird(rng)])])
            fields[2] = value
        elif which == "kind":
            other = rng.choice([k for k in KINDS if k != kind])
            name, value = rng.choice([(f"swap_{other}", other), ("upper", str(kind).upper()), ("empty", ""),
                                      ("unknown", "cheat"), ("bytes", str(kind).encode()), *(2 * [weird(rng)])])
            fields[3] = value
        else:
            name = rng.choice(["four", "six", "map", "nested_list"])
            if name == "four":
                fields = fields[:4]
            elif name == "six":
                fields = fields + [0]
            elif name == "map":
                return "env.shape=map", Raw(enc(dict(zip(["seq", "prev", "seat", "kind", "body"], fields))))
            else:
                fields = [fields]
            return f"env.shape={name}", fields
        return f"env.{which}={name}", fields

    def _swap(self, fields, history):
        rng = self.rng
        others = [h for h in history if h[3] != fields[3]]
        if others and rng.random() < 0.7:
            other = rng.choice(others)
            fields[4] = copy.deepcopy(other[4])
            return f"swap_body_from={other[3]}", fields
        fields[4] = rng.choice([{}, [], None, 0, {"more": True}, {"reason": "x", "culprit": 0},
                                {"position": 0, "reason": "x"}])
        return "swap_body=other_shape", fields

    def _generic(self, fields):
        rng = self.rng
        body = fields[4]
        nodes = list(_paths(body))
        path, node = rng.choice(nodes)
        op = rng.random()
        if op < 0.55 or not isinstance(node, (list, dict)):
            name, value = weird(rng)
            fields[4] = _set(body, path, value)
            where = "leaf" if not isinstance(node, (list, dict)) else "node"
            return f"body.{where}={name}", fields
        if isinstance(node, dict):
            choice = rng.choice(["extra", "drop", "rename", "intkey"])
            if choice == "extra":
                node[rng.choice(["x", "claim", "blind", "more", "", "position"])] = weird(rng)[1]
            elif choice == "drop" and node:
                del node[rng.choice(list(node))]
            elif choice == "rename" and node:
                old = rng.choice(list(node))
                node[f"{old}!"] = node.pop(old)
            elif choice == "intkey":
                node[7] = 1
            return f"body.map_{choice}", fields
        choice = rng.choice(["drop", "dup", "append", "reverse", "empty", "extend257", "truncate"])
        if choice == "drop" and node:
            node.pop(rng.randrange(len(node)))
        elif choice == "dup" and node:
            node.append(copy.deepcopy(rng.choice(node)))
        elif choice == "append":
            node.append(weird(rng)[1])
        elif choice == "reverse":
            node.reverse()
        elif choice == "empty":
            node.clear()
        elif choice == "extend257":
            node.extend([0] * (257 - len(node)))
        elif choice == "truncate" and node:
            del node[len(node) // 2 :]
        return f"body.list_{choice}", fields

    def _specific(self, kind, fields):
        rng = self.rng
        body = fields[4]
        try:
            if kind in ("shuffle", "lock") and isinstance(body, list) and len(body) == 2:
                points = body[1]
                i = rng.randrange(len(points))
                name = rng.choice(["off_curve", "x_eq_p", "zero", "on_curve", "dup", "drop", "add", "swap_tag",
                                   "swap_two", "len31"])
                if name == "off_curve":
                    points[i] = off_curve_x(rng)
                elif name == "x_eq_p":
                    points[i] = P256_P.to_bytes(32, "big")
                elif name == "zero":
                    points[i] = bytes(32)
                elif name == "on_curve":
                    points[i] = on_curve_x(rng)
                elif name == "dup":
                    points[i] = points[(i + 1) % len(points)]
                elif name == "drop":
                    points.pop(i)
                elif name == "add":
                    points.append(on_curve_x(rng))
                elif name == "swap_tag":
                    body[0] = 5 - body[0]  # shuffle 2 <-> lock 3
                elif name == "swap_two":
                    j = rng.randrange(len(points))
                    points[i], points[j] = points[j], points[i]
                else:
                    points[i] = points[i][:31]
                return f"points.{name}", fields
            if kind == "keys" and isinstance(body, list):
                return self._keys(body, fields, "keys")
            if kind == "play" and isinstance(body, dict):
                ((how, wire),) = body.items()
                if how == "blind":
                    if rng.random() < 0.3:
                        body["claim"] = body.pop("blind")
                        return "play.blind_as_claim", fields
                    return self._keys(wire, fields, "blind")
                name = rng.choice(["position_other", "position_52", "position_neg", "card_other", "card_52",
                                   "card_255", "key_random", "key_zero", "key_n", "as_blind", "both", "tag_keys"])
                if name == "position_other":
                    wire[1] = rng.choice([p for p in range(52) if p != wire[1]])
                elif name == "position_52":
                    wire[1] = 52
                elif name == "position_neg":
                    wire[1] = -1
                elif name == "card_other":
                    wire[2] = rng.choice([c for c in range(52) if c != wire[2]])
                elif name == "card_52":
                    wire[2] = 52
                elif name == "card_255":
                    wire[2] = 255
                elif name == "key_random":
                    wire[3] = rng.randbytes(32)
                elif name == "key_zero":
                    wire[3] = bytes(32)
                elif name == "key_n":
                    wire[3] = P256_N.to_bytes(32, "big")
                elif name == "as_blind":
                    body["blind"] = body.pop("claim")
                elif name == "both":
                    body["blind"] = [4, [[wire[1], wire[3]]]]
                else:
                    wire[0] = 4
                return f"play.claim_{name}", fields
            if kind in ("commit", "secret") and isinstance(body, list) and len(body) == 2:
                name = rng.choice(["random32", "zeros", "len31", "len33", "swap_tag", "int"])
                body[1] = {"random32": rng.randbytes(32), "zeros": bytes(32), "len31": body[1][:31],
                           "len33": body[1] + b"\0", "int": 1}.get(name, body[1])
                if name == "swap_tag":
                    body[0] = 7 - body[0]  # commit 1 <-> secret 6
                return f"{kind}.{name}", fields
            if kind == "final" and isinstance(body, dict):
                name = rng.choice(["points_plus1", "points_bool", "points_float", "points_neg", "points_huge",
                                   "points_short", "winner_other", "winner_5", "winner_true", "winner_nil", "extra"])
                points = body.get("points")
                if name == "points_plus1":
                    points[0] += 1
                elif name == "points_bool":
                    body["points"] = [bool(v) if v in (0, 1) else v for v in points]
                elif name == "points_float":
                    body["points"] = [float(v) for v in points]
                elif name == "points_neg":
                    points[-1] = -points[-1] - 1
                elif name == "points_huge":
                    points[0] = 2**64 - 1
                elif name == "points_short":
                    points.pop()
                elif name == "winner_other":
                    body["winner"] = 1 - body["winner"] if type(body.get("winner")) is int else 0
                elif name == "winner_5":
                    body["winner"] = 5
                elif name == "winner_true":
                    body["winner"] = True
                elif name == "winner_nil":
                    body["winner"] = None if body.get("winner") is not None else 0
                else:
                    body["offenders"] = [1]
                return f"final.{name}", fields
            if kind == "accept":
                name, value = rng.choice([("extra", {"x": 1}), ("list", []), ("nil", None), ("int", 0),
                                          ("more", {"more": True}), ("empty_key", {"": None})])
                fields[4] = value
                return f"accept.{name}", fields
        except (IndexError, KeyError, TypeError, AttributeError, ValueError):
            pass
        return self._generic(fields)

    def _keys(self, body, fields, what):
        rng = self.rng
        pairs = body[1]
        i = rng.randrange(len(pairs))
        name = rng.choice(["position_other", "position_52", "position_neg", "position_huge", "dup_pair",
                           "drop_pair", "extra_pair", "key_zero", "key_one", "key_n", "key_random", "key_len31",
                           "pair_three", "tag_claim"])
        if name == "position_other":
            pairs[i][0] = rng.choice([p for p in range(52) if p != pairs[i][0]])
        elif name == "position_52":
            pairs[i][0] = 52
        elif name == "position_neg":
            pairs[i][0] = -1
        elif name == "position_huge":
            pairs[i][0] = 2**64 - 1
        elif name == "dup_pair":
            pairs.append(copy.deepcopy(pairs[i]))
        elif name == "drop_pair":
            pairs.pop(i)
        elif name == "extra_pair":
            pairs.append([rng.randrange(52), rng.randbytes(32)])
        elif name == "key_zero":
            pairs[i][1] = bytes(32)
        elif name == "key_one":
            pairs[i][1] = (1).to_bytes(32, "big")
        elif name == "key_n":
            pairs[i][1] = P256_N.to_bytes(32, "big")
        elif name == "key_random":
            pairs[i][1] = rng.randbytes(32)
        elif name == "key_len31":
            pairs[i][1] = pairs[i][1][:31]
        elif name == "pair_three":
            pairs[i].append(0)
        else:
            body[0] = 5
        return f"{what}.{name}", fields


# -- crash reports ---------------------------------------------------------------------------


_EXC_LINE = re.compile(r"^(?:[|+\s]*)([A-Za-z_][\w.]*(?:Error|Exception|Group|Exit|Interrupt|Warning)\b.*)$")
_FRAME_LINE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def last_exception_line(stderr: str) -> str:
    """The traceback's last line: the innermost exception, trio's group frames stripped."""
    found = [m[1] for line in stderr.splitlines() if (m := _EXC_LINE.match(line))]
    groups = [f for f in found if "ExceptionGroup" not in f.split(":")[0]]
    if groups:
        return groups[-1]
    if found:
        return found[-1]
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "(no stderr)"


def crash_site(stderr: str) -> str:
    """The innermost p2pwhist (else any) frame of the traceback, as file:line in function."""
    frames = _FRAME_LINE.findall(stderr)
    ours = [f for f in frames if "p2pwhist" in f[0]] or frames
    if not ours:
        return "?"
    path, line, function = ours[-1]
    short = path.split("p2pwhist/", 1)[-1] if "p2pwhist/" in path else os.path.basename(path)
    return f"{short}:{line} in {function}"


@dataclass
class Finding:
    what: str  # crash, hang, misblame
    kind: str
    label: str
    summary: str
    folder: str
    signature: str = ""


@dataclass
class Stats:
    kinds: Counter = field(default_factory=Counter)
    frames: int = 0
    games: int = 0  # games begun by our honest joiner
    mutation_games: int = 0
    honest_games: int = 0
    host_starts: int = 0
    hello_accepted: Counter = field(default_factory=Counter)
    accepted_mutations: Counter = field(default_factory=Counter)
    refused_mutations: int = 0
    suppressed: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    crash_labels: Counter = field(default_factory=Counter)
    crash_signatures: Counter = field(default_factory=Counter)
    peak_kb: int = 0
    anomalies: list[str] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)  # pre-login kind: refused, silent or start
    hello_valid: int = 0  # honest HELLOs among the pre-login frames (each starts a game)
    replays: int = 0  # fresh hosts started to find which frame crashed one


@dataclass
class Ending:
    """A mutated game's host left to end its game while the run goes on (``Fuzzer.end_later``):
    a thread waits up to ``EXIT_DEADLINE`` for its exit, ``exited`` says whether it came."""

    host: HostProc
    label: str
    sent: Sent
    verdict: str
    exited: bool = False
    thread: threading.Thread | None = None

    def start(self) -> None:
        def wait() -> None:
            self.exited = self.host.wait(EXIT_DEADLINE) is not None

        self.thread = threading.Thread(target=wait, daemon=True)
        self.thread.start()


class HostWontStart(Exception):
    """The host process does not get as far as listening (say, the code is mid-edit)."""


class Fuzzer:
    def __init__(self, frames: int, seed: int, out: Path, game_every: int, max_repeats: int,
                 report=print) -> None:
        self.target = frames
        self.rng = random.Random(seed)
        self.seed = seed
        self.out = out
        self.game_every = game_every
        self.max_repeats = max_repeats
        self.report = report
        self.stats = Stats()
        self.gen = Generator(self.rng)
        self.meeting = MeetingScripts(self.rng)
        self.mutator = Mutator(self.rng)
        self.work = Path(tempfile.mkdtemp(prefix="fuzz_host-work-"))
        self.home = self.work / "home"
        self.home.mkdir()
        self.logs = self.work / "logs"
        self.logs.mkdir()
        self.host: HostProc | None = None  # the 2-seat host: every frame but a seated joiner's
        self.lobby_host: HostProc | None = None  # the 3-seat host, at which a joiner can hold a seat and wait
        self.key = Ed25519PrivateKey.from_private_bytes(self.rng.randbytes(32))
        self.exchanges = 0
        self.accepted_parts: set[str] = set()  # HELLO mutations seen accepted: not worth a game again
        self.valid = False  # the pre-login frame in flight is an honest HELLO
        self.startup_failures = 0
        self.ending: list[Ending] = []  # mutated games' hosts whose exit is awaited beside the run

    # -- hosts -------------------------------------------------------------------------------

    def ensure_host(self, players: int = 2) -> HostProc:
        current = self.host if players == 2 else self.lobby_host
        if current is not None and current.code is None:
            return current
        if current is not None:
            self.retire(current)
        while True:
            self.stats.host_starts += 1
            host = HostProc(self.home, self.logs, self.stats.host_starts, players)
            if host.wait_listening():
                self.startup_failures = 0
                if players == 2:
                    self.host = host
                else:
                    self.lobby_host = host
                return host
            host.kill()
            self.startup_failures += 1
            self.finding("startup_failure", host, "startup", "startup", None,
                         f"the host did not start listening (exit {host.code}): "
                         f"{last_exception_line(host.stderr())}")
            if self.startup_failures >= 3:
                raise HostWontStart(f"the host failed to start three times in a row; see {self.out}")

    def retire(self, host: HostProc) -> None:
        host.kill()
        self.stats.peak_kb = max(self.stats.peak_kb, host.peak_kb)
        for path in (host.out, host.err):
            path.unlink(missing_ok=True)
        self.forget(host)

    def forget(self, host: HostProc) -> None:
        if self.host is host:
            self.host = None
        if self.lobby_host is host:
            self.lobby_host = None

    def count(self, sent: Sent, frames: int = 1, host: HostProc | None = None) -> None:
        self.stats.kinds[sent.kind] += frames
        self.stats.frames += frames
        host = host or self.host
        if host is not None:
            host.recent.append(sent)

    # -- findings ----------------------------------------------------------------------------

    def finding(self, what: str, host: HostProc, kind: str, label: str, culprit: Sent | None, why: str,
                note: str = "", original: str | None = None) -> None:
        stderr = host.stderr()
        number = len(self.stats.findings) + 1
        folder = self.out / f"{what}-{number:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        if culprit is not None:
            (folder / "frame.hex").write_text(culprit.data.hex() + "\n")
        (folder / "recent.txt").write_text("".join(
            f"{s.kind} {s.label} ({s.detail[:100]}): {s.data[:4096].hex()}{'...' if len(s.data) > 4096 else ''}\n"
            for s in host.recent))
        (folder / "stderr.txt").write_text(stderr)
        if original is not None:  # the host that died in the run, before the replay
            (folder / "stderr-in-run.txt").write_text(original)
        (folder / "stdout-tail.txt").write_text(host.stdout_tail())
        if what == "crash" and "Traceback" in stderr:
            summary = f"{last_exception_line(stderr)} (at {crash_site(stderr)})"
            signature = f"{crash_site(stderr)}: {last_exception_line(stderr).split(':')[0]}"
        else:
            summary = why
            signature = f"{what}: {why[:80]}"
        info = {"what": what, "kind": kind, "label": label, "why": why, "note": note, "exit_code": host.code,
                "summary": summary, "signature": signature, "seed": self.seed,
                "detail": culprit.detail if culprit else None}
        (folder / "info.json").write_text(json.dumps(info, indent=1) + "\n")
        self.stats.findings.append(Finding(what, kind, label, summary, str(folder), signature))
        if what == "crash":
            self.stats.crash_labels[label] += 1
        self.stats.crash_signatures[(what, signature)] += 1
        extra = f" [{note}]" if note else ""
        self.report(f"{what.upper()} #{number}: {kind} {label}{extra}: exit {host.code}: {summary} -> {folder}")

    def exit_problem(self, host: HostProc) -> str | None:
        """Why this exited host's exit is not a documented one (0, or 1 with one line), or None."""
        code, stderr = host.code, host.stderr()
        if "Traceback" in stderr:
            return "a traceback"
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        if code == 1:
            if len(lines) != 1 or not lines[0].startswith("p2pwhist: "):
                return f"exit 1 with {len(lines)} lines on stderr"
            return None
        if code == 0:
            return None if not lines else "exit 0 with output on stderr"
        return f"exit code {code}"

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        next_game = self.rng.randint(1, self.game_every)
        next_progress = max(self.target // 10, 1)
        self.aborted: str | None = None
        try:
            while self.stats.frames < self.target:
                frames_before = self.stats.frames
                try:
                    if self.stats.frames >= next_game:
                        next_game = self.stats.frames + self.rng.randint(self.game_every // 2,
                                                                         self.game_every * 3 // 2)
                        self.game(self.ensure_host())
                    else:
                        self.prelogin()
                except Exception as error:  # noqa: BLE001 (a fuzzer bug or an API in flux: note it, go on)
                    where = traceback.extract_tb(error.__traceback__)[-1]
                    self.stats.anomalies.append(f"fuzzer error: {type(error).__name__}: {error} "
                                                f"(line {where.lineno} in {where.name})"[:300])
                    for host in (self.host, self.lobby_host):
                        if host is not None:
                            self.retire(host)
                    if self.stats.frames == frames_before:
                        self.stats.frames += 1  # never loop forever on one failing step
                self.settle()
                if self.stats.frames >= next_progress:
                    next_progress += max(self.target // 10, 1)
                    self.progress(started)
        except HostWontStart as error:
            self.aborted = str(error)
            self.report(f"stopping early: {error}")
        finally:
            self.settle(every=True)
            for host in (self.host, self.lobby_host):
                if host is not None:
                    self.retire(host)
            shutil.rmtree(self.work, ignore_errors=True)
        return self.result(started)

    def progress(self, started: float) -> None:
        s = self.stats
        crashes = sum(1 for f in s.findings if f.what == "crash")
        hangs = sum(1 for f in s.findings if f.what == "hang")
        self.report(f"... {s.frames} frames, {s.games} games, {crashes} crashes, {hangs} hangs, "
                    f"{s.host_starts} hosts, {time.monotonic() - started:.0f} s")

    def result(self, started: float) -> dict[str, Any]:
        s = self.stats
        distinct: dict[str, dict] = {}
        for finding in s.findings:
            key = f"{finding.what}: {finding.signature}"
            entry = distinct.setdefault(key, {"what": finding.what, "summary": finding.summary[:300], "count": 0,
                                              "first": finding.folder, "labels": Counter()})
            entry["count"] += 1
            entry["labels"][finding.label] += 1
        for entry in distinct.values():
            labels = entry.pop("labels")
            entry["labels"] = dict(labels.most_common(8))
        return {
            "frames": s.frames,
            "crashes": sum(1 for f in s.findings if f.what == "crash"),
            "hangs": sum(1 for f in s.findings if f.what == "hang"),
            "misblames": sum(1 for f in s.findings if f.what == "misblame"),
            "broken_games": sum(1 for f in s.findings if f.what == "broken_game"),
            "wrong_verdicts": sum(1 for f in s.findings if f.what == "wrong_verdict"),
            "startup_failures": sum(1 for f in s.findings if f.what == "startup_failure"),
            "peak_rss_mb": round(s.peak_kb / 1024, 1),
            "games": s.games,
            "mutation_games": s.mutation_games,
            "honest_games": s.honest_games,
            "refused_mutations": s.refused_mutations,
            "accepted_mutations": sum(s.accepted_mutations.values()),
            "hello_accepted": sum(s.hello_accepted.values()),
            "hello_valid": s.hello_valid,
            "host_starts": s.host_starts,
            "replays": s.replays,
            "suppressed": sum(s.suppressed.values()),
            "kinds": dict(sorted(s.kinds.items())),
            "seconds": round(time.monotonic() - started, 1),
            "seed": self.seed,
            "out": str(self.out),
            "distinct": list(distinct.values()),
            "accepted": dict(s.accepted_mutations.most_common()),
            "hello_accepted_labels": dict(s.hello_accepted.most_common()),
            "anomalies": s.anomalies[:20],
            "prelogin_outcomes": dict(sorted(s.outcomes.items())),
            "aborted": self.aborted,
        }

    # -- pre-login ---------------------------------------------------------------------------

    def pick_prelogin(self) -> tuple[str, str, str, bytes, str, Script | None]:
        kinds = list(PRELOGIN_WEIGHTS)
        weights = list(PRELOGIN_WEIGHTS.values())
        for _ in range(50):
            kind = self.rng.choices(kinds, weights)[0]
            script = None
            if kind in SCRIPTED:
                script = self.meeting.make(kind)
                label, detail, data, finish = script.label, script.detail, script.data, "wait"
                self.gen.valid = False
            else:
                label, detail, data, finish = self.gen.make(kind)
            parts = set(label.split(":", 1)[-1].split("+"))
            if self.stats.crash_labels[label] >= self.max_repeats or (
                    kind in ("bad_hello", "wrong_type", "multi_frame") and parts <= self.accepted_parts):
                self.stats.suppressed[label] += 1  # found already: a crash, or a HELLO wrongly seated
                continue
            break
        self.valid = self.gen.valid
        return kind, label, detail, data, finish, script

    def prelogin(self) -> None:
        kind, label, detail, data, finish, script = self.pick_prelogin()
        if script is not None:
            self.scripted(kind, script)
            return
        host = self.ensure_host()
        sent = Sent(kind, label, detail, data, finish=finish)
        self.exchanges += 1
        if self.exchanges % MEMORY_EVERY == 0:
            host.sample_memory()
        try:
            conn = Conn(host.port)
        except OSError as error:
            self.host_gone(host, f"connect failed: {error}")
            return
        self.count(sent, detail.count("+") + 1 if kind == "multi_frame" else 1, host)
        # One whole frame of at most ANSWERED bytes and nothing after it is always answered:
        # REFUSE, or WELCOME for a HELLO the host takes. (Larger ones the host may drop unread;
        # after more bytes its close may be a reset, which can destroy its answer unread.)
        answer_due = finish == "wait" and kind != "multi_frame" and len(data) >= 4 \
            and len(data) == 4 + struct.unpack_from(">I", data)[0] <= 4 + ANSWERED
        answer_due = answer_due or self.valid  # a valid HELLO first: WELCOME is due
        status = conn.send(data)
        if status == "timeout":
            conn.close(abortive=True)
            self.hang(host, kind, label, sent, "the host stopped reading a pre-login frame for 15 s")
            return
        if finish == "rst":
            conn.close(abortive=True)
            self.check_alive(host, kind, label, sent)
            return
        if finish == "fin":
            conn.half_close()
        deadline = time.monotonic() + ANSWER_DEADLINE
        reply = conn.read_frame(deadline)
        if reply is TIMEOUT:
            conn.close(abortive=True)
            if host.code is None:
                self.hang(host, kind, label, sent, "no answer and no close within 15 s for a pre-login frame")
            else:
                self.host_gone(host, "exited during a pre-login exchange", culprit=sent)
            return
        self.stats.outcomes[f"{kind}:{'silent' if reply is None else 'refused' if is_refusal(reply) else 'welcome'}"] += 1
        if reply is not None and not is_refusal(reply):
            # A HELLO the host would seat: it WELCOMEs us; we leave without READY, which costs
            # the table nothing (the host goes on waiting). (Junk after it, in one write, is
            # refused as no READY: no pre-login frame starts a game.)
            welcomed = is_welcome(reply)
            conn.close()
            if self.valid:
                self.stats.hello_valid += 1
            else:  # the host took a HELLO that the protocol, read strictly, calls malformed
                self.stats.hello_accepted[label] += 1
                self.accepted_parts.update(label.split(":", 1)[-1].split("+"))
            if not welcomed:
                self.stats.anomalies.append(f"{label}: the host answered a pre-login frame with {reply[:60].hex()}")
            self.check_alive(host, kind, label, sent)
            return
        if reply is not None:  # a refusal: the host closes next
            end = conn.read_frame(deadline)
            conn.close()
            if end is TIMEOUT:
                self.hang(host, kind, label, sent, "the host refused but did not close within 15 s")
                return
        else:
            conn.close()
            if answer_due:
                sent.suspicious = True
        self.check_alive(host, kind, label, sent, linger=LINGER if answer_due and reply is None else 0.0)

    def scripted(self, kind: str, script: Script) -> None:
        """An exchange of the meeting (``MeetingScripts``): it must end in time, with the
        verdict due, and the host must report every seat it took free again."""
        host = self.ensure_host(script.players)
        sent = Sent(kind, script.label, script.detail, script.data, script=script)
        self.exchanges += 1
        if self.exchanges % MEMORY_EVERY == 0:
            host.sample_memory()
        since = host.out_size()
        self.count(sent, script.frames, host)
        end = run_script(host.port, script)
        if end.connect_failed is not None:
            self.host_gone(host, f"connect failed: {end.connect_failed}")
            return
        if end.hang is not None:
            if host.code is None:
                self.hang(host, kind, script.label, sent, end.hang)
            else:
                self.host_gone(host, "exited during an exchange of the meeting", culprit=sent)
            return
        self.stats.outcomes[f"{kind}:{end.outcome}"] += 1
        if end.outcome.startswith("early") and len(self.stats.anomalies) < 20:
            self.stats.anomalies.append(f"{script.label}: a step's answer never came: {end.refusals}"[:300])
        if end.wrong is not None:
            host.wait(LINGER)  # a connection closed by a host on its way down says nothing of its verdicts
            if host.code is None:
                self.finding("wrong_verdict", host, kind, script.label, sent, end.wrong)
        if script.leaves and end.outcome in ("refused", "closed") and host.code is None:
            missing = host.said_gone(script.leaves, since, time.monotonic() + ANSWER_DEADLINE)
            if missing and host.code is None:
                self.hang(host, kind, script.label, sent, f"the host never said that {', '.join(missing)} left "
                          "its table: a seat may be held for good")
                return
        self.check_alive(host, kind, script.label, sent, linger=LINGER if end.outcome == "closed" else 0.0)

    def check_alive(self, host: HostProc, kind: str, label: str, sent: Sent, linger: float = 0.0) -> None:
        """After a pre-login exchange the host must still run, and say nothing on stderr.
        ``linger``: how long to watch for a crash on its way (after a frame left unanswered)."""
        end = time.monotonic() + linger
        while host.code is None and host.err_size() <= host.err_seen:
            if time.monotonic() >= end:
                return
            time.sleep(0.01)
        if host.code is None:
            host.wait(2.0)  # a traceback on its way out, most likely
        if host.code is None:  # alive, but it wrote to stderr: report it once
            self.finding("crash", host, kind, label, sent, "the host wrote to stderr and kept running",
                         note="stderr output")
            host.err_seen = host.err_size()
            return
        self.host_gone(host, "the host exited", culprit=sent)

    def host_gone(self, host: HostProc, why: str, culprit: Sent | None = None) -> None:
        """The host exited (or stopped accepting) during pre-login: that is a crash."""
        if host.code is None:
            host.wait(5.0)
        if host.code is None:
            self.hang(host, culprit.kind if culprit else "?", culprit.label if culprit else "?", culprit,
                      f"the host stopped accepting connections ({why})")
            return
        problem = self.exit_problem(host)
        if problem is None and host.started_game():
            # A clean end of a game that a HELLO started, whose START we did not read (a reset
            # may destroy it): not a crash.
            self.stats.outcomes[f"{culprit.kind if culprit else '?'}:start_lost"] += 1
            self.retire(host)
            return
        problem = problem or f"exit {host.code} during pre-login ({why})"
        # The crash may have come from an earlier frame than the one that saw it (a host dies
        # some milliseconds after the frame that kills it): replay the recent frames one by
        # one, each to a fresh host, newest first, and blame the first that crashes one.
        original = host.stderr()
        host.kill()  # dead already; its files stay until the finding is written
        self.forget(host)
        candidates = [s for s in host.recent if s.kind in PRELOGIN_WEIGHTS]
        found = self.replay(candidates, host.players)
        if found is not None:
            culprit, replayed = found
            problem = self.exit_problem(replayed) or f"exit {replayed.code} after this frame alone"
            self.finding("crash", replayed, culprit.kind, culprit.label, culprit, problem,
                         "reproduced alone on a fresh host", original)
            self.retire(replayed)
            self.retire(host)
            return
        note = "not reproduced by any recent frame alone: "
        if culprit is None and candidates:
            suspects = [s for s in candidates if s.suspicious]
            culprit = (suspects or candidates)[-1]
            note += "blamed on the last frame left unanswered" if suspects else "blamed on the last frame"
        else:
            note += "blamed on the frame that saw the host die"
        kind = culprit.kind if culprit else "?"
        label = culprit.label if culprit else "?"
        self.finding("crash", host, kind, label, culprit, problem, note)
        self.retire(host)

    def replay(self, candidates: list[Sent], players: int = 2) -> tuple[Sent, HostProc] | None:
        """The first of ``candidates`` (newest first) that crashes a fresh host of ``players``
        seats on its own, with that host (exited), or None."""
        for sent in reversed(candidates):
            self.stats.replays += 1
            self.stats.host_starts += 1
            host = HostProc(self.home, self.logs, self.stats.host_starts, players)
            if not host.wait_listening():
                self.retire(host)
                continue
            host.recent.append(sent)
            if sent.script is not None:
                run_script(host.port, sent.script)
            else:
                try:
                    conn = Conn(host.port)
                except OSError:
                    self.retire(host)
                    continue
                conn.send(sent.data)
                if sent.finish == "rst":
                    conn.close(abortive=True)
                else:
                    if sent.finish == "fin":
                        conn.half_close()
                    conn.read_frame(time.monotonic() + 5.0)
                    conn.close()
            end = time.monotonic() + 1.0
            while host.code is None and host.err_size() == 0 and time.monotonic() < end:
                time.sleep(0.01)
            if host.code is None and host.err_size() > 0:
                host.wait(5.0)
            if host.code is None and host.err_size() > 0:
                return sent, host  # alive, but it wrote to stderr
            if host.code is not None and (self.exit_problem(host) or not host.started_game()):
                return sent, host
            self.retire(host)
        return None

    def hang(self, host: HostProc, kind: str, label: str, culprit: Sent | None, why: str) -> None:
        host.sample_memory()
        host.kill()
        self.finding("hang", host, kind, label, culprit, why)
        self.retire(host)

    def expect_exit(self, host: HostProc, kind: str, label: str, culprit: Sent, why: str,
                    names: tuple[str, ...] = (), broken: bool = False) -> str | None:
        """Wait for the host to end its game; a crash, hang or misblame is recorded, and with
        ``broken`` (an honest game went wrong) even a clean exit. Returns the host's one-line
        error (or None)."""
        host.wait(EXIT_DEADLINE)
        return self.judge_exit(host, host.code is not None, kind, label, culprit, why, names, broken)

    def judge_exit(self, host: HostProc, exited: bool, kind: str, label: str, culprit: Sent, why: str,
                   names: tuple[str, ...] = (), broken: bool = False) -> str | None:
        """``expect_exit``'s checks once the wait is over; ``exited``: within ``EXIT_DEADLINE``."""
        if not exited:
            self.hang(host, kind, label, culprit, f"the host did not exit within {EXIT_DEADLINE:g} s ({why})")
            return None
        problem = self.exit_problem(host)
        line = host.stderr().strip()
        if problem is not None:
            self.finding("crash", host, kind, label, culprit, f"{problem} ({why})")
        elif broken:
            self.finding("broken_game", host, kind, label, culprit, f"{why}: exit {host.code}: {line[:300]}")
        elif names and host.code == 1 and not any(n in line for n in names):
            self.finding("misblame", host, kind, label, culprit, f"{line[:200]} ({why})")
        self.retire(host)
        return line

    # -- games -------------------------------------------------------------------------------

    def pick_target(self) -> tuple[str, int]:
        kinds = list(TARGET_WEIGHTS)
        kind = self.rng.choices(kinds, list(TARGET_WEIGHTS.values()))[0]
        if kind in ("keys", "play"):
            return kind, self.rng.randint(1, 14)
        if kind in ("commit", "shuffle", "lock", "secret"):
            return kind, self.rng.randint(1, 2)
        return kind, 1

    def game(self, host: HostProc) -> None:

        rng = self.rng
        self.stats.games += 1
        hello = frame(msgpack.packb(hello_value(JOINER_NAME, public_raw(self.key)), use_bin_type=True))
        sent = Sent("game_honest", "game:hello", "honest HELLO", hello)
        try:
            conn = Conn(host.port)
        except OSError as error:
            self.host_gone(host, f"connect failed: {error}")
            return
        self.count(sent)
        conn.send(hello)
        start = conn.read_frame(time.monotonic() + ANSWER_DEADLINE)
        if isinstance(start, bytes) and is_welcome(start):  # we trust any host: READY, the lobby, START
            conn.send(outside(table.Ready()))
            start = self.await_start(conn)
        if start is TIMEOUT:
            conn.close(abortive=True)
            self.hang(host, "game_honest", "game:hello", sent, "no WELCOME and START within 15 s for an honest HELLO")
            return
        if start is None or is_refusal(start):
            conn.close()
            if start is not None:
                why = f"the host refused an honest HELLO: {decode_any(start)!r:.200}"
            else:
                why = "the host closed instead of answering an honest HELLO"
            self.check_alive(host, "game_honest", "game:hello", sent, linger=0.5)
            if self.host is host:
                self.finding("broken_game", host, "game_honest", "game:hello", sent, why)
                self.retire(host)
            return
        self.gen.joiner_known = True
        try:
            session = make_session(start, self.key)
        except Exception as error:  # noqa: BLE001 (the API is in flux: say so, go on)
            conn.close()
            self.stats.anomalies.append(f"could not build the session from START: {type(error).__name__}: {error}")
            self.expect_exit(host, "game_honest", "game:start", sent, "our session failed")
            return
        target_kind, occurrence = self.pick_target()
        bot = RandomBot(random.Random(rng.randrange(2**32)))
        produced: Counter = Counter()
        history: list[list[Any]] = []
        while True:
            need = session.need
            if need is Need.DONE:  # the host says DONE once we hold the whole log; we answer it (wire.md §2.4)
                self.answer_done(conn, len(session.log))
                conn.close()
                self.stats.honest_games += 1
                self.expect_exit(host, "game_honest", "game:honest_end", sent, "an honest game's end")
                return
            if need is Need.PEER:
                payload = conn.read_frame(time.monotonic() + ANSWER_DEADLINE)
                if payload is TIMEOUT:
                    conn.close(abortive=True)
                    self.hang(host, "game_honest", "game:honest", sent, "no message from the host within 15 s")
                    return
                if payload is None:
                    conn.close()
                    self.expect_exit(host, "game_honest", "game:honest", sent, "the host closed during honest play",
                                     broken=True)
                    return
                if isinstance(from_host(payload), table.Notice):
                    continue  # the table waits for someone: for people to read, nothing to take
                try:
                    session.receive(payload, 0)
                except Exception as error:  # noqa: BLE001
                    conn.close()
                    self.expect_exit(host, "game_honest", "game:honest", sent, "our session refused the host's "
                                     f"message: {type(error).__name__}: {error}"[:300], broken=True)
                    return
                continue
            value = bot.choose(session.view()) if need is Need.MOVE else None
            message = session.produce(value)
            kind = message.kind.value
            produced[kind] += 1
            fields = signed_fields(message)
            if (kind == target_kind and produced[kind] == occurrence) or kind == "final":
                self.mutated(host, conn, session, fields, history)
                return
            history.append(fields)
            sent = Sent("game_honest", f"game:{kind}", f"honest {kind} seq {fields[0]}", frame(message.raw))
            self.count(sent)
            if conn.send(sent.data) != "ok":
                conn.close()
                self.expect_exit(host, "game_honest", "game:honest", sent, "the host hung up during honest play",
                                 broken=True)
                return

    def answer_done(self, conn: Conn, have: int) -> None:
        """The end exchange as a joiner does it: the host's DONE, answered in kind. Without an
        answer the host would wait out its --wait for us to return (an anomaly if it never
        says DONE)."""
        deadline = time.monotonic() + ANSWER_DEADLINE
        while isinstance(payload := conn.read_frame(deadline), bytes):
            word = from_host(payload)
            if isinstance(word, table.Done):
                conn.send(outside(table.Done(have)))
                return
            if not isinstance(word, table.Notice):
                break
        said = f"it sent {payload[:40].hex()}" if isinstance(payload, bytes) else \
            "it closed" if payload is None else f"nothing within {ANSWER_DEADLINE:g} s"
        self.stats.anomalies.append(f"no DONE from the host at an honest game's end ({said})")

    def await_start(self, conn: Conn) -> bytes | None | object:
        """After our READY: the host's LOBBY news until START (or a REFUSE, a close, TIMEOUT,
        or any other frame, returned as it came). We answer a VOUCH, yes, for every seated
        player but the host and us, once (a 2-seat table has none to answer about); each LOBBY
        must come within ``ANSWER_DEADLINE`` of the last, and START within ``START_DEADLINE``."""
        vouched: set[bytes] = set()
        until = time.monotonic() + START_DEADLINE
        while True:
            payload = conn.read_frame(min(until, time.monotonic() + ANSWER_DEADLINE))
            if not isinstance(payload, bytes):
                return payload
            news = from_host(payload)
            if not isinstance(news, table.Lobby):
                return payload  # START (a message of the log), a REFUSE, or what the caller reports
            for seat, player in enumerate(news.players):
                if news.you is not None and seat not in (0, news.you) and player.key not in vouched:
                    vouched.add(player.key)
                    conn.send(outside(table.Vouch(player.key, True)))

    def mutated(self, host: HostProc, conn: Conn, session, fields: list[Any], history: list[list[Any]]) -> None:

        honest = resign(self.key, fields)
        for _ in range(50):
            if self.rng.random() < OUTSIDE_SHARE:  # no message at all: a frame outside the log, at our turn
                name, payload = self.mutator.outside(fields, self.key)
                label, new = f"game:{fields[3]}:frame={name}", decode_any(payload)
            else:
                label, new = self.mutator.mutate(fields, history)
                payload = resign(self.key, new) if not isinstance(new, Raw) else self._sign_raw(new)
            if payload == honest:
                continue  # the mutation changed nothing (a key dropped from an empty map, say)
            if self.stats.crash_labels[label] < self.max_repeats:
                break
            self.stats.suppressed[label] += 1
        sent = Sent("game_mutated", label, f"seq {fields[0]} {fields[3]} -> {new!r:.300}", frame(payload))
        self.stats.mutation_games += 1
        host.sample_memory()  # the host exits after this frame
        self.count(sent)
        conn.send(sent.data)
        our_turn = session.need not in (Need.PEER, Need.DONE)
        deadline = time.monotonic() + GAME_END_DEADLINE
        verdict = None
        while verdict is None:
            wait_until = min(deadline, time.monotonic() + QUIET) if our_turn else deadline
            reply = conn.read_frame(wait_until)
            if reply is TIMEOUT:
                if our_turn and time.monotonic() < deadline:
                    verdict = "accepted"  # silent while it is our turn: the host took it
                else:
                    verdict = "silent"
            elif reply is None:
                verdict = "closed"
            elif message_kind(reply) == "abort":
                verdict = "refused"
            else:
                verdict = "accepted"  # the host went on with the game, or waits for our next message (NOTICE)
        conn.close()
        if verdict == "silent":
            host.wait(max(0.0, deadline - time.monotonic()))
            if host.code is None:
                self.hang(host, "game_mutated", label, sent,
                          f"the game did not end within {GAME_END_DEADLINE:g} s of the mutated frame")
                return
        self.end_later(Ending(host, label, sent, verdict))

    def end_later(self, ending: Ending) -> None:
        """Leave a mutated game's host to end its game (a forfeit by absence takes its --wait)
        while the run goes on against a fresh host, in a fresh copy of the home without its
        games; ``settle`` judges it as ``expect_exit`` would have."""
        self.forget(ending.host)
        home = self.work / f"home-{ending.host.number}"
        shutil.copytree(self.home, home, ignore=shutil.ignore_patterns("games"))
        self.home = home
        ending.start()
        self.ending.append(ending)

    def settle(self, every: bool = False) -> None:
        """Judge the mutated games' hosts whose wait for an exit is over (``every``: all of
        them, waiting as long as it takes)."""
        for ending in list(self.ending):
            if every:
                ending.thread.join()
            elif ending.thread.is_alive():
                continue
            self.ending.remove(ending)
            host, label, verdict = ending.host, ending.label, ending.verdict
            self.judge_exit(host, ending.exited, "game_mutated", label, ending.sent,
                            f"after a mutated frame ({verdict})", names=(JOINER_NAME, "seat 1"))
            # 0: it finished the match, with our message in it, unless it closed our connection at
            # once: then it dropped the frame with the connection that carried it, proving nothing,
            # and, the fuzzer not returning, declared its forfeit (session.md §5): a refusal.
            if verdict == "accepted" or (host.code == 0 and verdict != "closed"):
                self.stats.accepted_mutations[label] += 1
            else:
                self.stats.refused_mutations += 1

    def _sign_raw(self, signed: Raw) -> bytes:
        return msgpack.packb([bytes(signed), self.key.sign(bytes(signed))], use_bin_type=True)


def run(frames: int = 100_000, seed: int | None = None, out: str | Path | None = None, game_every: int = 200,
        max_repeats: int = 5, report=None) -> dict[str, Any]:
    """Fuzz fresh host processes with ``frames`` frames; returns the summary (see the module)."""
    seed = secrets.randbelow(2**32) if seed is None else seed
    report = report or (lambda line: print(line, flush=True))
    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="fuzz_host-"))
    out.mkdir(parents=True, exist_ok=True)
    return Fuzzer(frames, seed, out, game_every, max_repeats, report).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=100_000, help="frames to send in all (default 100000)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the fuzzer's choices (default: random)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for crash, hang and misblame reports (default: a new temporary folder)")
    parser.add_argument("--game-every", type=int, default=200,
                        help="about one signed-mutation game per this many frames (default 200); a game costs "
                        "a host process, about 1 s")
    parser.add_argument("--max-repeats", type=int, default=5,
                        help="stop generating a frame label once it crashed the host this often (default 5)")
    args = parser.parse_args(argv)
    summary = run(args.frames, args.seed, args.out, args.game_every, args.max_repeats)
    for entry in summary["distinct"]:
        print(f"distinct {entry['what']} x{entry['count']}: {entry['summary']} (e.g. {entry['first']}; "
              f"labels {entry['labels']})")
    if summary["accepted"]:
        print(f"mutations the host accepted: {summary['accepted']}")
    if summary["hello_accepted_labels"]:
        print(f"HELLOs the host seated though wire.md, read strictly, calls them malformed: "
              f"{summary['hello_accepted_labels']}")
    for anomaly in summary["anomalies"]:
        print(f"anomaly: {anomaly}")
    print("sent: " + ", ".join(f"{kind} {count}" for kind, count in summary["kinds"].items())
          + f"; {summary['games']} games, {summary['host_starts']} host processes")
    print(json.dumps(summary))
    return 0 if summary["crashes"] == 0 and summary["hangs"] == 0 and summary["aborted"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
