"""An adversary between real p2pwhist processes, for ``scripts/chaos.py --adversary``: a path
that withholds or stalls one honest joiner's traffic, and a crowd that storms the host's door.

Every attack has one victim, an honest joiner whose connection to the host goes through an
``AdversaryProxy`` (a ``netutil.CutProxy`` that reads what the joiner sends one whole frame at
a time, and logs every frame both ways), and one of three kinds:

- ``withhold``: the first signed message of the log the joiner sends at place ``at`` or later
  (the proxy reads each message's place, so it is that very message, however fast the bots
  play), or, in ``DONE_SHARE`` of them, its answer to the host's DONE, is dropped whole; the
  connection stays up. The joiner must deliver the message again: the host's NOTICE that the
  seat is slow while its message is out sends it back through a REJOIN, and a message of its
  own that follows the lost one out of the chain makes the host drop the connection, with the
  same effect. A lost DONE answer leaves the host to its end exchange's deadline.
- ``stall``: once the victim's transcript holds ``at`` messages, every current connection of
  the victim stops forwarding one way (``up``, joiner to host; ``down``; or ``both``) for
  ``seconds``, then either flows again (what was held arrives late) or both its ends get a RST
  (``reset``: what was held is lost, and the joiner reconnects). The longest stall is
  ``STALL_SHARE`` of the shorter of the table's limits: a path silent for longer than the limit
  looks, to the table, exactly like a seat that is gone, and that seat forfeits by the rules.
  (The host's 20 s send deadline is not reached this way: it is past the per-move limit's
  floor, and what the host writes to a stalled joiner meanwhile is a few kilobytes, which the
  kernel's buffers take.)
- ``storm``: once the victim's transcript holds ``at`` messages (in the match's first
  ``STORM_BEFORE``), for ``seconds``, ``rate`` connections a second to the host's port from the
  victim's address (all of loopback is one /24, which the door counts as one network), each
  of one of ``STORM_KINDS`` at random, none ever read: silent, a length prefix cut short,
  garbage bytes, a frame announcing 2 GB, a HELLO of another version, a stranger's HELLO and a
  REJOIN, and HELLOs with the victim's own (public) key, then either a REJOIN of valid shape
  (the game id, seat, count and head as the victim's transcript has them, which anyone on the
  path can read) with a proof made without the key, or nothing; ``IMPOSTOR_SHARE`` of the
  storms are of those impostors alone, which race the victim's own HELLO and REJOIN (a newer
  HELLO for a seated key takes the place of the older). In ``STORM_CUT_SHARE`` of them
  the victim's connection is reset ``cut`` seconds into the storm, so that it comes back through
  the crowded door. A storm holds at most ``STORM_HELD`` sockets (the oldest go first) and
  closes them all at its end.

``play_with_attack`` plays a match with one attack and says what it saw (``AttackRun``),
leaving the proxy's log in the match's folder (``proxy.log``). This module is chaos.py's: it
imports ``netutil`` from ``tests/``, which chaos.py puts on the path first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import random
import secrets
import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from netutil import (
    NAMES,
    POLL,
    CutProxy,
    Ended,
    Finished,
    FrameCounter,
    Peers,
    frames_of,
    host_on_free_port,
    verified,
)

from p2pwhist.signed import parse, public_bytes
from p2pwhist.table import PROTOCOL_VERSION, Done, FrameError, Hello, Logged, Rejoin, encode, read_from_joiner
from p2pwhist.wire import LENGTH, MAX_FRAME, WireError, frame, unpack

KINDS = ("withhold", "stall", "storm")
DIRECTIONS = ("up", "down", "both")
# The longest stall, as a share of the shorter of the table's limits: the clock of the message
# a stall delays may have run a little before it (bots answer in milliseconds), and a reset
# stall's joiner takes a moment to come back. 0.6 leaves 4 s of a 10 s floor.
STALL_SHARE = 0.6
STALL_LEAST = 0.5
DONE_SHARE = 0.2  # of the withholds: the answer to DONE, not a message
STORM_KINDS = ("silent", "short", "garbage", "huge", "version", "stranger", "impostor", "mute")
IMPOSTORS = ("impostor", "mute")  # a storm of these alone races the victim's own HELLO and REJOIN for its seat
IMPOSTOR_SHARE = 1 / 3  # of the storms
STORM_HELD = 400  # sockets a storm holds open at once, at most
STORM_CUT_SHARE = 2 / 3  # of the storms: the victim's connection is reset during it, so it comes back through the crowd
STORM_CUT_AFTER = (0.2, 0.8)  # seconds into the storm: the door is crowded by then, and the match (a few s) not over
STORM_BEFORE = 0.6  # a storm strikes in the match's first 60%: one as it ends meets a door nobody needs
FAULT_POLL = 0.005


@dataclass(frozen=True)
class Attack:
    """One attack on one match (the module docstring): its ``kind``, its ``victim`` (a joiner:
    1.. in the order started), and when it strikes: a stall or a storm once the victim's
    transcript holds ``at`` messages, a withheld message at the victim's first at place ``at``
    or later (a withheld DONE answer whenever it comes)."""

    victim: int
    kind: str
    at: int
    target: str = "message"  # withhold: "message" or "done"
    direction: str = "both"  # stall
    seconds: float = 0.0  # stall, storm
    reset: bool = False  # stall: end with a RST, what was held lost; else flow again
    rate: float = 0.0  # storm: connections a second
    cut: float | None = None  # storm: reset the victim's connection this many seconds into it
    impostors: bool = False  # storm: only HELLOs with the victim's key (and REJOINs without it)

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.victim > 0, "the adversary is on a joiner's path"
        assert self.at >= 1
        assert self.target in ("message", "done") and self.direction in DIRECTIONS

    def describe(self, names: tuple[str, ...] = NAMES) -> str:
        name = names[self.victim]
        if self.kind == "withhold":
            if self.target == "done":
                return f"withhold {name}'s answer to DONE"
            return f"withhold {name}'s first message from message {self.at} on"
        if self.kind == "stall":
            end = "then reset" if self.reset else "then flow"
            return f"stall {name}'s connection {self.direction} at message {self.at} for {self.seconds:.1f} s, {end}"
        cut = f", {name}'s connection reset {self.cut:.1f} s in" if self.cut is not None else ""
        crowd = f"impostors of {name}" if self.impostors else "connections"
        return f"storm at message {self.at}: {self.rate:.0f} {crowd}/s for {self.seconds:.1f} s{cut}"


def choose_attack(kind: str, victim: int, length: int, rng: random.Random, timeout: float, wait: float,
                  end_share: float = 0.25, end_span: int = 8) -> Attack:
    """A random attack of ``kind`` on ``victim`` in a match of ``length`` messages. A withhold or
    a stall strikes, in ``end_share`` of them, in the match's last ``end_span`` messages, where
    the last FINALs and the end exchange are; a storm, in the match's first ``STORM_BEFORE``."""
    first = max(1, length - end_span) if rng.random() < end_share else 1
    at = rng.randint(first, length - 1)
    if kind == "withhold":
        return Attack(victim, kind, at, target="done" if rng.random() < DONE_SHARE else "message")
    if kind == "stall":
        most = STALL_SHARE * min(timeout, wait)
        return Attack(victim, kind, at, direction=rng.choice(DIRECTIONS),
                      seconds=round(rng.uniform(STALL_LEAST, most), 1), reset=rng.random() < 0.5)
    seconds = round(rng.uniform(2.0, 8.0), 1)
    cut = round(rng.uniform(*STORM_CUT_AFTER), 1) \
        if rng.random() < STORM_CUT_SHARE else None
    return Attack(victim, kind, rng.randint(1, int(length * STORM_BEFORE)), seconds=seconds,
                  rate=round(rng.uniform(20, 100)), cut=cut, impostors=rng.random() < IMPOSTOR_SHARE)


# -- the path -----------------------------------------------------------------------------------


class AdversaryProxy(CutProxy):
    """A ``CutProxy`` that forwards what the joiner sends one whole frame at a time, so it can
    drop one (``withhold``), and that can stop forwarding either way for a while (``stall``).
    ``log`` holds, with ``time.monotonic()`` of each, what it did and every frame that passed
    (each connection numbered in order, ``>`` to the host, ``<`` from it), for a failed
    trial's folder; ``acted_until`` is when its last action ended (None: none yet)."""

    def __init__(self, upstream: int) -> None:
        self._up: dict[socket.socket, bytearray] = {}  # the joiner's bytes not yet a whole frame
        self._down: dict[socket.socket, bytearray] = {}  # the host's, read for the log only
        self._number: dict[socket.socket, int] = {}  # each pair's client: its connection's number
        self._raw: set[socket.socket] = set()  # pairs forwarded as bytes (a frame over the limit)
        self._armed: str | None = None
        self._from_seq = 0  # withholding a message: the first of the joiner's at this place of the log or later
        self._stalls: list[tuple[float, socket.socket, list[socket.socket], bool]] = []
        self.log: list[tuple[float, str]] = []
        self.withheld: str | None = None  # what was dropped
        self.withheld_at: int | None = None  # its place in the log (a DONE: the length it said)
        self.acted_until: float | None = None
        super().__init__(upstream)

    def withhold(self, target: str, from_seq: int = 0) -> None:
        """Drop the next frame of ``target`` that the joiner sends: "message", a signed message
        of the log at place ``from_seq`` or later; "done", a DONE."""

        def arm() -> None:
            self._armed, self._from_seq = target, from_seq

        self._call("withhold", arm)

    def stall(self, direction: str, seconds: float, reset: bool) -> int:
        """Stop forwarding ``direction`` on every current connection for ``seconds``; then let it
        flow again, or (``reset``) reset both ends. Returns how many connections it stalled."""
        return self._call("stall", lambda: self._stall(direction, seconds, reset))

    # -- in the proxy's thread ------------------------------------------------------------------

    def _note(self, what: str, acted: bool = True) -> None:
        now = time.monotonic()
        self.log.append((now, what))
        if acted:
            self.acted_until = now

    def _accept(self) -> None:
        super()._accept()
        for client in self._clients - self._number.keys():
            self._number[client] = len(self._number) + 1
            self._note(f"#{self._number[client]} accepted", acted=False)

    def _name(self, sock: socket.socket) -> str:
        client = sock if sock in self._clients else self._pairs.get(sock)
        return f"#{self._number.get(client, 0)}"  # type: ignore[arg-type]

    def _logged(self, sock: socket.socket, payload: bytes) -> None:
        self._note(f"{self._name(sock)} {'>' if sock in self._clients else '<'} {_label(payload)}", acted=False)

    def _stall(self, direction: str, seconds: float, reset: bool) -> int:
        until = time.monotonic() + seconds
        clients = list(self._clients)
        for client in clients:
            server = self._pairs[client]
            frozen = {"up": [client], "down": [server], "both": [client, server]}[direction]
            for sock in frozen:
                with contextlib.suppress(KeyError):
                    self._selector.unregister(sock)
            self._stalls.append((until, client, frozen, reset))
        numbers = ", ".join(self._name(client) for client in clients) or "no connection"
        self._note(f"stalled {numbers} {direction} for {seconds:.1f} s, then {'reset' if reset else 'flow'}")
        return len(clients)

    def _next_time(self) -> float | None:
        return min((until for until, *_ in self._stalls), default=None)

    def _on_time(self, now: float) -> None:
        due = [stall for stall in self._stalls if stall[0] <= now]
        self._stalls = [stall for stall in self._stalls if stall[0] > now]
        for _, client, frozen, reset in due:
            name = self._name(client)
            if client not in self._pairs:  # its other end closed meanwhile
                self._note(f"{name}'s stall over: it had closed at its other end meanwhile")
                continue
            if reset:
                self._close_pair(client, reset=True)
                self._note(f"{name}'s stall over: reset both ends, what it held lost")
            else:
                for sock in frozen:
                    self._selector.register(sock, selectors.EVENT_READ)
                self._note(f"{name}'s stall over: flowing again")

    def _forward(self, sock: socket.socket) -> None:
        if sock in self._raw:
            return super()._forward(sock)
        try:
            data = sock.recv(65536)
        except OSError as error:
            self._note(f"{self._name(sock)} {'joiner' if sock in self._clients else 'host'}'s end: {error!r}",
                       acted=False)
            data = b""
        if not data:
            self._note(f"{self._name(sock)} closed by the {'joiner' if sock in self._clients else 'host'}",
                       acted=False)
            return self._close_pair(sock, reset=False)
        if sock not in self._clients:  # the host's: forwarded as it comes, its frames logged
            buffer = self._down.setdefault(sock, bytearray())
            buffer += data
            while len(buffer) >= LENGTH.size and len(buffer) >= LENGTH.size + LENGTH.unpack_from(buffer)[0]:
                size = LENGTH.size + LENGTH.unpack_from(buffer)[0]
                self._logged(sock, bytes(buffer[LENGTH.size:size]))
                del buffer[:size]
            try:
                self._pairs[sock].sendall(data)
            except OSError:
                self._close_pair(sock, reset=False)
            return None
        buffer = self._up.setdefault(sock, bytearray())
        buffer += data
        out = bytearray()
        while len(buffer) >= LENGTH.size:
            (size,) = LENGTH.unpack_from(buffer)
            if size > MAX_FRAME:  # not a p2pwhist joiner's frame: no more frames to tell apart
                self._raw.add(sock)
                break
            if len(buffer) < LENGTH.size + size:
                break
            whole = bytes(buffer[:LENGTH.size + size])
            del buffer[:LENGTH.size + size]
            if self._drops(sock, whole[LENGTH.size:]):
                continue
            self._logged(sock, whole[LENGTH.size:])
            out += whole
        if sock in self._raw:
            out += buffer
            buffer.clear()
        try:
            if out:
                self._pairs[sock].sendall(out)
        except OSError:
            self._close_pair(sock, reset=False)

    def _drops(self, sock: socket.socket, payload: bytes) -> bool:
        if self._armed is None:
            return False
        try:
            said = read_from_joiner(payload)
        except FrameError:
            return False
        if self._armed == "message" and isinstance(said, Logged):
            message = parse(said.raw)
            if message.seq < self._from_seq:
                return False
            what, at = f"message {message.seq} ({message.kind.value.upper()} of seat {message.seat})", message.seq
        elif self._armed == "done" and isinstance(said, Done):
            what, at = f"DONE (have {said.have})", said.have
        else:
            return False
        self._armed = None
        self.withheld, self.withheld_at = what, at
        self._note(f"{self._name(sock)} > withheld {what}")
        return True

    def _close_pair(self, sock: socket.socket, reset: bool) -> None:
        other = self._pairs.get(sock)
        for end in (sock, other):
            self._up.pop(end, None)  # type: ignore[arg-type]
            self._down.pop(end, None)  # type: ignore[arg-type]
            self._raw.discard(end)  # type: ignore[arg-type]
        super()._close_pair(sock, reset)

    def _cut_all(self, reset: bool) -> int:
        if self._pairs:
            self._note(f"cut every connection ({'RST' if reset else 'FIN'})")
        return super()._cut_all(reset)

    def write_log(self, path: Path, began: float) -> None:
        """The log, each line's time in seconds from ``began``."""
        path.write_text("".join(f"{at - began:8.3f} {what}\n" for at, what in self.log))


def _label(payload: bytes) -> str:
    """A frame in a few words: its label (DONE 100), or the message's place, kind and seat."""
    try:
        value = unpack(payload)
    except WireError:
        return f"{len(payload)} bytes that do not decode"
    if isinstance(value, dict) and len(value) == 1:
        (label, body), = value.items()
        if isinstance(body, dict):
            shown = {k: v for k, v in body.items() if isinstance(v, (int, str)) and not isinstance(v, bool)}
            return f"{str(label).upper()} {shown}" if shown else str(label).upper()
        return str(label).upper()
    try:
        message = parse(payload)
    except WireError:
        return f"{len(payload)} bytes, no message"
    return f"message {message.seq} {message.kind.value.upper()} of seat {message.seat}"


# -- the crowd ----------------------------------------------------------------------------------


@dataclass
class Facts:
    """What anyone on the victim's path knows of its game: the id, its seat, its name and
    public key, and how much of the log it holds (``have``, the last message's hash)."""

    game: bytes
    seat: int
    name: str
    key: bytes
    have: int
    head: bytes


def facts_of(transcript: bytes, name: str) -> Facts | None:
    """The ``Facts`` of seat ``name`` from its transcript so far (None before START)."""
    raws = [raw[LENGTH.size:] for raw in frames_of(transcript)]
    if not raws:
        return None
    start = parse(raws[0])
    players = start.body.players
    seat = next(seat for seat, player in enumerate(players) if player.name == name)
    return Facts(hashlib.sha256(raws[0]).digest(), seat, name, players[seat].key, len(raws),
                 hashlib.sha256(raws[-1]).digest())


class Storm:
    """``rate`` connections a second to ``127.0.0.1:port`` for ``seconds``, in a thread of its
    own (the module docstring). ``facts`` gives what the impostors claim (None: they send
    nothing they cannot make). ``made`` counts the connections by kind, ``failed`` those that
    could not be opened or written to (the host refused or dropped them first)."""

    def __init__(self, port: int, rate: float, seconds: float, facts: Callable[[], Facts | None],
                 rng: random.Random, kinds: tuple[str, ...] = STORM_KINDS) -> None:
        self.port, self.rate, self.seconds, self.facts, self.kinds = port, rate, seconds, facts, kinds
        self.rng = random.Random(rng.random())  # its own: the thread draws while the harness does
        self.made: Counter[str] = Counter()
        self.failed = 0
        self.ended: float | None = None
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"Storm:{port}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        began = time.monotonic()
        try:
            number = 0
            while not self._stop.is_set() and time.monotonic() < began + self.seconds:
                kind = self.rng.choice(self.kinds)
                self._open(kind)
                number += 1
                self._stop.wait(max(0.0, began + number / self.rate - time.monotonic()))
        finally:
            for sock in self._held:
                sock.close()
            self._held.clear()
            self.ended = time.monotonic()

    def _open(self, kind: str) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=1.0)
        except OSError:
            self.failed += 1
            return
        self.made[kind] += 1
        self._held.append(sock)
        if len(self._held) > STORM_HELD:
            self._held.pop(0).close()
        try:
            sock.setblocking(False)  # never wait on the host: a send it does not take is dropped
            sock.send(self._bytes(kind))
        except OSError:
            self.failed += 1

    def _bytes(self, kind: str) -> bytes:
        rng = self.rng
        if kind == "silent":
            return b""
        if kind == "short":
            return bytes(rng.randrange(256) for _ in range(rng.randint(1, 3)))
        if kind == "garbage":
            return bytes(rng.randrange(256) for _ in range(rng.randint(8, 64)))
        if kind == "huge":
            return LENGTH.pack(2**31) + b"\x81"
        stranger = public_bytes(Ed25519PrivateKey.generate().public_key())
        if kind == "version":
            return frame(encode(Hello(PROTOCOL_VERSION - 1, "old", stranger)))
        facts = self.facts()
        if facts is None:  # before START: a stranger is all one can be
            return frame(encode(Hello(PROTOCOL_VERSION, f"guest{rng.randrange(1000)}", stranger)))
        proof = secrets.token_bytes(64)
        rejoin = frame(encode(Rejoin(facts.game, facts.seat, facts.have, facts.head, proof)))
        if kind == "stranger":
            return frame(encode(Hello(PROTOCOL_VERSION, f"guest{rng.randrange(1000)}", stranger))) + rejoin
        hello = frame(encode(Hello(PROTOCOL_VERSION, facts.name, facts.key)))
        return hello + rejoin if kind == "impostor" else hello  # "mute": holds a seated key's slot


# -- one match ------------------------------------------------------------------------------------


@dataclass
class AttackRun(Ended):
    """What ``play_with_attack`` saw. ``struck``: the messages in the victim's transcript when
    the attack struck (a withheld message: its place in the log; a withheld DONE: the length it
    said; None: it never struck). ``acted_until``: when the adversary's last action ended (the
    frame dropped, the stall over, the storm's last socket closed); ``bound``: the time by which
    every process had to have ended (``play_with_attack``); ``ended``: when each did, as polled
    every 20 ms (None: killed at the deadline). Times are ``time.monotonic()``."""

    players: int
    attack: Attack
    transcripts: list[Path]
    began: float = 0.0
    struck: int | None = None
    withheld: str | None = None
    stalled: int = 0
    cut: int = 0  # a storm's reset of the victim's connection: the connections it closed
    storm: dict[str, int] = field(default_factory=dict)
    storm_failed: int = 0
    connections: int = 0  # the victim's, through the proxy
    acted_until: float | None = None
    bound: float | None = None
    ended: list[float | None] = field(default_factory=list)
    ends: list[Finished | None] = field(default_factory=list)
    verdicts: list[Finished | None] = field(default_factory=list)  # ``verify --json`` on each transcript
    hung: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def root(self) -> Path:
        return self.transcripts[0].parent

    def describe(self) -> str:
        return f"{self.players} players, {self.attack.describe()}"

    @property
    def missed(self) -> bool:
        """The attack found nothing to strike at (the match, or the victim's part in it, was
        over by message ``at``): the trial says nothing, and is run again with a smaller ``at``.
        A DONE answer that never came to be withheld is not that: it is a failure."""
        if self.error or (self.attack.kind == "withhold" and self.attack.target == "done"):
            return False
        missed = self.struck is None or (self.attack.kind == "stall" and self.stalled == 0)
        return missed and self.problems() == self.attack_problems()  # else what went wrong is a failure

    def attack_problems(self) -> list[str]:
        if self.error:
            return [self.error]
        name = NAMES[self.attack.victim]
        if self.struck is None:
            if self.attack.kind == "withhold":
                what = "DONE" if self.attack.target == "done" else f"message from message {self.attack.at} on"
                return [f"{name} sent no {what} to withhold"]
            return [f"the match ended before {name}'s transcript held {self.attack.at} messages"]
        if self.attack.kind == "stall" and self.stalled == 0:
            return [f"{name} had no connection open through the proxy to stall"]
        return []

    def verdict_problems(self) -> tuple[list[str], list[str]]:
        """What ``verify --json`` says of each transcript that is wrong: (not valid and
        complete, a forfeit or a fork)."""
        invalid, forfeits = [], []
        for name, finished in zip(NAMES, self.verdicts):
            if finished is None:
                continue  # no transcript: said by unlike_transcripts
            try:
                verdict = json.loads(finished.out)
            except ValueError:
                invalid.append(f"verify --json on {name}'s transcript printed no JSON: {finished.err.strip()[:200]}")
                continue
            if not (verdict.get("valid") and verdict.get("complete")):
                error = verdict.get("error") or {}
                said = error.get("reason") or verdict.get("stopped") or "not complete"
                invalid.append(f"{name}'s transcript: valid {verdict.get('valid')}, complete "
                               f"{verdict.get('complete')}: {said}")
            forfeit, fork = verdict.get("forfeit"), verdict.get("fork")
            if forfeit:
                forfeits.append(f"{name}'s transcript: {forfeit.get('name')} forfeits at message {forfeit.get('seq')} "
                                f"({forfeit.get('reason')}), signed by seats {forfeit.get('signed_by')}")
            if fork:
                forfeits.append(f"{name}'s transcript: a fork at message {fork.get('seq')}: seat "
                                f"{fork.get('declared_by')} declared seat {fork.get('accused')} absent")
        return invalid, forfeits

    def time_problems(self) -> list[str]:
        if self.bound is None:
            return []
        return [f"{name} ended {end - self.bound:.1f} s past its bound ({end - self.began:.1f} s after the start)"
                for name, end in zip(NAMES, self.ended) if end is not None and end > self.bound]

    def problems(self) -> list[str]:
        problems = self.attack_problems()
        if self.error:
            return problems
        problems += self.exit_problems()
        if not self.hung:
            invalid, forfeits = self.verdict_problems()
            problems += forfeits + self.unlike_transcripts() + invalid
        return problems + self.time_problems()

    def seconds(self) -> float:
        ends = [end for end in self.ended if end is not None]
        return max(ends) - self.began if ends else float("nan")


def play_with_attack(peers: Peers, players: int, hands: int, attack: Attack, *, timeout: int, wait: int,
                     match_s: float, rng: random.Random, deadline: float = 90.0) -> AttackRun:
    """A Box Whist match between ``python -m p2pwhist`` processes with random bots (the host
    alice with ``--timeout`` and ``--wait``, joiners bob, carol...), the victim's connection
    through an ``AdversaryProxy``, in which ``attack`` strikes; then ``verify --json`` on every
    transcript.

    Every process must end by ``bound`` = when the adversary's last action ended + the table's
    ``timeout`` + its ``wait`` + twice ``match_s`` (a whole match of this shape without a fault)
    + 2 s: after the attack, the one message it delayed reaches the host within the per-move
    limit or its seat forfeits; a seat it cut off returns within the wait, and the host's end
    exchange waits no longer than the wait for one that does not answer; the rest of the match
    takes at most a whole match's time (doubled, and 2 s more, for a shared machine). Never
    takes much more than ``deadline`` seconds: what still runs then is killed and named in
    ``hung``."""
    names = NAMES[:players]
    transcripts = [peers.root / f"{name}.p2pw" for name in names]
    run = AttackRun(players, attack, transcripts)
    end_by = time.monotonic() + deadline
    storm: Storm | None = None
    proxy: AdversaryProxy | None = None
    try:
        try:
            host, port, _ = host_on_free_port(
                peers, names[0], "--game", "boxwhist", "--players", str(players), "--hands", str(hands),
                "--bind", "127.0.0.1", "--bot", "random", "--name", names[0], "--transcript", str(transcripts[0]),
                "--timeout", str(timeout), "--wait", str(wait))
        except AssertionError as error:
            run.error = f"the host did not start: {error}"
            return run
        run.began = time.monotonic()
        proxy = AdversaryProxy(port)
        if attack.kind == "withhold":  # armed from the start: the proxy knows each message's place
            proxy.withhold(attack.target, attack.at)
        current = [host]
        for i in range(1, players):
            address = proxy.address if i == attack.victim else f"127.0.0.1:{port}"
            current.append(peers.start(names[i], "join", address, "--bot", "random", "--name", names[i],
                                       "--transcript", str(transcripts[i])))
        victim = current[attack.victim]
        counter = FrameCounter(transcripts[attack.victim])
        ended: list[float | None] = [None] * players

        def watch() -> None:
            now = time.monotonic()
            for i, peer in enumerate(current):
                if ended[i] is None and peer.popen.poll() is not None:
                    ended[i] = now

        timed = attack.kind != "withhold"
        while timed and victim.running and time.monotonic() < end_by and counter.count() < attack.at:
            watch()
            time.sleep(FAULT_POLL)
        if timed and victim.running and counter.count() >= attack.at:
            if attack.kind == "stall":
                run.struck = counter.count()
                run.stalled = proxy.stall(attack.direction, attack.seconds, attack.reset)
            else:
                run.struck = counter.count()
                seen = FrameCounter(transcripts[attack.victim])  # the storm's own: it reads in its thread
                storm = Storm(port, attack.rate, attack.seconds,
                              lambda: facts_of(seen.complete(), names[attack.victim]), rng,
                              IMPOSTORS if attack.impostors else STORM_KINDS)
                storm.start()
                cut_at = time.monotonic() + (attack.cut if attack.cut is not None else math.inf)
                while victim.running and time.monotonic() < min(cut_at, end_by):
                    watch()
                    time.sleep(POLL)
                if attack.cut is not None and victim.running:
                    run.cut = proxy.cut(reset=True)

        while time.monotonic() < end_by and any(peer.running for peer in current):
            watch()
            time.sleep(POLL)
        watch()
        if storm is not None:
            storm.stop()
            run.storm, run.storm_failed = dict(storm.made), storm.failed
        run.withheld = proxy.withheld
        if run.withheld is not None:
            run.struck = proxy.withheld_at
        run.connections = len(proxy.accepted)
        acted = [t for t in (proxy.acted_until, storm.ended if storm else None) if t is not None]
        run.acted_until = max(acted) if acted else None
        if run.acted_until is not None:
            run.bound = run.acted_until + timeout + wait + 2 * match_s + 2.0
        for name, peer in zip(names, current):
            if peer.running:
                peer.popen.kill()
                run.hung.append(name)
            peer.popen.wait()
        run.ended = ended
        run.ends = [None if name in run.hung else Finished(peer.popen.returncode, peer.out.read_text(),
                                                           peer.err.read_text())
                    for name, peer in zip(names, current)]
        run.verdicts = [verified(path, "--json") if path.exists() else None for path in transcripts]
        return run
    finally:
        if storm is not None:
            storm.stop()
        if proxy is not None:
            proxy.close()
            proxy.write_log(peers.root / "proxy.log", run.began)
