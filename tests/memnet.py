"""A network in memory, for tables played inside one trio run with a mock clock.

``MemoryNetwork`` hands a host a listener (``listen``) and a joiner a connect function
(``connect``): each connection is a ``trio.testing.memory_stream_pair``, whose host side says
where it comes from (``remote``, which the host's admission limits count). Nothing touches a
socket, so timeouts of minutes pass in milliseconds under ``MockClock(autojump_threshold=0)``.

``table`` runs a whole match this way (a host and its joiners as tasks, bots choosing at once
on the event loop), and ``Seat`` wraps a hand-written peer's end of a connection with frames.
"""

from __future__ import annotations

import errno
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist import net
from p2pwhist.bots import RandomBot
from p2pwhist.games.base import Game
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.table import PROTOCOL_VERSION, Hello, Ready, encode, read_from_host
from p2pwhist.wire import LENGTH, frame

NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")


class MemoryListener(trio.abc.Listener[trio.abc.Stream]):
    def __init__(self) -> None:
        self._in, self._out = trio.open_memory_channel[trio.abc.Stream](0)

    async def accept(self) -> trio.abc.Stream:
        return await self._out.receive()

    async def aclose(self) -> None:
        await self._out.aclose()


@dataclass
class MemoryNetwork:
    """Who listens where, and the connections made. Every joiner's address is 10.0.0.N."""

    listeners: dict[tuple[str, int], MemoryListener] = field(default_factory=dict)
    opened: int = 0

    def listen(self, address: str = "alice.lan", port: int = 7878) -> MemoryListener:
        listener = self.listeners[(address, port)] = MemoryListener()
        return listener

    async def connect(self, address: str, port: int, source: str = "10.0.0.1") -> trio.abc.Stream:
        listener = self.listeners.get((address, port))
        if listener is None:
            raise OSError(errno.ECONNREFUSED, "Connection refused")
        ours, theirs = trio.testing.memory_stream_pair()
        self.opened += 1
        theirs.remote = (source, f"{source}:{40000 + self.opened}")  # type: ignore[attr-defined]
        await listener._in.send(theirs)
        return ours

    def connector(self, source: str = "10.0.0.1"):
        return lambda address, port: self.connect(address, port, source)


class Seat:
    """A hand-written peer's end of a connection: frames in and out, each with a deadline."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = b""

    async def send(self, frame_value: Any) -> None:
        await self.stream.send_all(frame(encode(frame_value)))

    async def send_payload(self, payload: bytes) -> None:
        await self.stream.send_all(frame(payload))

    async def receive_payload(self) -> bytes | None:
        """The next frame's payload; None once the other side has closed."""
        while True:
            if len(self.buffer) >= LENGTH.size:
                (size,) = LENGTH.unpack(self.buffer[:LENGTH.size])
                if len(self.buffer) >= LENGTH.size + size:
                    payload = self.buffer[LENGTH.size:LENGTH.size + size]
                    self.buffer = self.buffer[LENGTH.size + size:]
                    return payload
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                return None
            if not data:
                return None
            self.buffer += data

    async def receive(self) -> Any:
        payload = await self.receive_payload()
        assert payload is not None, "the other side closed the connection"
        return read_from_host(payload)

    async def hello(self, name: str, key: Ed25519PrivateKey, version: int = PROTOCOL_VERSION) -> Any:
        await self.send(Hello(version, name, key.public_key().public_bytes_raw()))
        return await self.receive()

    async def sit(self, name: str, key: Ed25519PrivateKey) -> Any:
        """HELLO, then READY to the WELCOME: the host's first LOBBY."""
        welcome = await self.hello(name, key)
        await self.send(Ready())
        return welcome


def options(name: str, key: Ed25519PrivateKey | None = None, tmp: Path | None = None, *, seed: int = 0,
            lines: list[str] | None = None, **extra: Any) -> net.PeerOptions:
    """A peer's options for an in-memory table: a random bot choosing on the event loop (a
    thread would let the mock clock jump past every deadline while it thinks)."""
    bot = RandomBot(random.Random(seed))
    return net.PeerOptions(name, key or Ed25519PrivateKey.generate(), net.Agent(bot.choose, False),
                           tmp / f"{name}.p2pw" if tmp else None,
                           report=(lines.append if lines is not None else lambda line: None), **extra)


@dataclass
class Played:
    records: list[net.GameRecord | Exception]
    lines: list[list[str]]


async def table(tmp: Path, players: int = 2, game: Game | None = None, hands: int = 1,
                network: MemoryNetwork | None = None, **extra: Any) -> Played:
    """A whole match in memory: the host alice and joiners bob, carol... arriving one by one."""
    game = game or BoxWhist(players)
    network = network or MemoryNetwork()
    lines: list[list[str]] = [[] for _ in range(game.players)]
    records: list[net.GameRecord | Exception] = [RuntimeError("did not finish")] * game.players
    peers = [options(NAMES[seat], tmp=tmp, seed=seat, lines=lines[seat], **extra) for seat in range(game.players)]

    async def seat_task(seat: int, play) -> None:
        try:
            records[seat] = await play()
        except (net.NetError, Exception) as error:  # noqa: BLE001 (kept for the test to judge)
            records[seat] = error

    async with trio.open_nursery() as nursery:
        listener = network.listen()
        host_options = net.HostOptions(game, MatchLength(hands=hands))
        nursery.start_soon(seat_task, 0, lambda: net.host(peers[0], host_options, [listener]))
        for seat in range(1, game.players):
            nursery.start_soon(seat_task, seat, lambda s=seat: net.join(
                peers[s], "alice.lan", 7878, connect=network.connector(f"10.0.0.{s}")))
            while not any(f"{seat + 1}/{game.players} seated" in line for line in lines[0]):
                await trio.sleep(0.01)
    return Played(records, lines)
