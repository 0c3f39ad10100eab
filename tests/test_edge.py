"""The trio loop around a machine (``net._Edge``): it must tell the machine of every event,
once, whatever else is going on; here a stand-in machine makes the loop busy at the worst time."""

from __future__ import annotations

import trio
import trio.testing

from p2pwhist import net
from p2pwhist.table import Finish, Lost, Opened, Received


class Busy:
    """A machine that works ``steps`` steps after its first frame, and finishes once it has
    heard of the end of every connection it was given."""

    def __init__(self, steps: int) -> None:
        self.steps = 0
        self.planned = steps
        self.heard: list[object] = []
        self.expected = 0

    @property
    def busy(self) -> bool:
        return 0 < self.steps < self.planned

    def work(self, now: float) -> list:
        self.steps += 1
        return []

    def handle(self, event, now: float) -> list:
        self.heard.append(event)
        if isinstance(event, Received) and self.steps == 0:
            self.steps = 1  # busy from now on, for a while: the loop does not listen meanwhile
        if sum(isinstance(e, Lost) for e in self.heard) == self.expected:
            return [Finish(RuntimeError("done"))]
        return []

    deadline = None

    def tick(self, now: float) -> list:
        return []

    def frame_limit(self, conn: int) -> int:
        return 1024

    def reading(self, conn: int) -> bool:
        return True


async def test_a_connection_that_ends_while_the_loop_is_busy_is_heard_of(autojump_clock):
    machine = Busy(steps=50)
    machine.expected = 1
    options = net.PeerOptions("alice", None, net.Agent(lambda view: None, False), None)  # type: ignore[arg-type]
    edge = net._Edge(machine, options)  # type: ignore[arg-type]
    ours, theirs = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        async def run() -> None:
            await edge.run([])

        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        await edge.accept(ours)
        await theirs.send_all(b"\x00\x00\x00\x01\xc0")  # one frame: the machine gets busy
        await theirs.aclose()  # and the connection ends meanwhile
        with trio.fail_after(60):
            while edge.result is None:
                await trio.sleep(1)
    assert [type(e).__name__ for e in machine.heard if not isinstance(e, net.Opened)] == ["Received", "Lost"]


class Door(Busy):
    """A machine that knows a connection from its Opened on, as the host's lobby does (of one it
    does not know it reads nothing: ``frame_limit`` None), busy for ``steps`` steps after its
    first frame, and finished by a frame once busy."""

    def __init__(self, steps: int) -> None:
        super().__init__(steps)
        self.known: set[int] = set()

    def handle(self, event, now: float) -> list:
        self.heard.append(event)
        if isinstance(event, Opened):
            self.known.add(event.conn)
        if isinstance(event, Received):
            if self.steps:
                return [Finish(RuntimeError("done"))]
            self.steps = 1
        return []

    def frame_limit(self, conn: int) -> int | None:  # type: ignore[override]
        return 1024 if conn in self.known else None


async def test_a_connection_accepted_while_the_loop_is_busy_is_read(autojump_clock):
    """A newcomer's Opened waits while the loop works; the loop's steps meanwhile must not let
    its reader ask the machine about it: the machine, knowing none, would say read no more, and
    its HELLO would never be read (a resumed host, busy with its own move, lost a joiner so)."""
    machine = Door(steps=50)
    options = net.PeerOptions("alice", None, net.Agent(lambda view: None, False), None)  # type: ignore[arg-type]
    edge = net._Edge(machine, options)  # type: ignore[arg-type]
    first, first_peer = trio.testing.memory_stream_pair()
    second, second_peer = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(edge.run, [])
        await trio.testing.wait_all_tasks_blocked()
        await edge.accept(first)
        await first_peer.send_all(b"\x00\x00\x00\x01\xc0")  # one frame: the machine gets busy
        while not machine.busy:
            await trio.lowlevel.checkpoint()
        await edge.accept(second)  # heard of once the work is done
        await second_peer.send_all(b"\x00\x00\x00\x01\xc0")
        with trio.fail_after(60):
            while edge.result is None:
                await trio.sleep(1)
    assert [type(e).__name__ for e in machine.heard] == ["Opened", "Received", "Opened", "Received"]
