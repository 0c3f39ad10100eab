"""The host's door over memory streams: the real host (``net.host`` around the table's
machines) on a ``MemoryNetwork``, met by hand-written joiners from many source addresses and
by real ones, under the mock clock.

It covers what the host holds for whom (at most 64 handshakes under way, 8 from one network,
a frame of at most 1,024 bytes before a seat: protocol/wire.md §2.5), the HELLOs it refuses
in one line (another protocol version, garbage, not a HELLO, too big), a table that is full,
and a seat freed by a joiner who leaves before START. After each, a genuine joiner still gets
in: one bad connection never ends the table."""

from __future__ import annotations

import re

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import Hosted, Seat, play, seat_at

from p2pwhist import net
from p2pwhist.table import Limits, Refuse, Refused, Welcome, read_from_host
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify
from p2pwhist.wire import LENGTH, pack

LIMITS = Limits()
# protocol/wire.md §2.5: the numbers a user can rely on, not merely whatever Limits says
assert (LIMITS.pending, LIMITS.pending_per_network) == (64, 8)
HANDSHAKE_FRAME = 1024
PARTIAL_HELLO = LENGTH.pack(100) + b"\x81\xa5hello"  # the start of a HELLO of 100 bytes, never finished


class Knock:
    """A connection to the host, read in the background: the frames it got, and whether the
    host has closed it."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat
        self.frames: list[object] = []
        self.closed = False

    async def watch(self) -> None:
        while (payload := await self.seat.receive_payload()) is not None:
            self.frames.append(read_from_host(payload))
        self.closed = True


async def _knock(hosted: Hosted, nursery: trio.Nursery, sources: list[str]) -> list[Knock]:
    """One connection from each of ``sources``, each sending the start of a HELLO and holding."""
    knocks = []
    for source in sources:
        knock = Knock(await hosted.connect(source))
        await knock.seat.stream.send_all(PARTIAL_HELLO)
        nursery.start_soon(knock.watch)
        knocks.append(knock)
    return knocks


async def _genuine(hosted: Hosted, name: str = "bob", source: str = "10.0.0.200") -> None:
    """A genuine joiner gets a WELCOME, then START (the table has 2 seats)."""
    key = Ed25519PrivateKey.generate()
    seat = await hosted.connect(source)
    assert isinstance(await seat.sit(name, key), Welcome)
    session = await seat_at(seat, key)
    assert session.table.players[1].name == name
    await seat.stream.aclose()


@pytest.mark.parametrize("spread", ["many networks", "one network"])
async def test_silent_handshakes_beyond_the_caps_make_room_and_a_joiner_gets_in(tmp_path, autojump_clock, spread):
    """3 times the cap of connections, each holding a HELLO open: at the cap, each newcomer
    takes the place of the oldest, which is told why in one line and hung up on; the newest
    cap's worth are still waited for (their HELLO is not yet due). Spread over 64 networks (3
    from each: under the cap per network), the cap is the 64 in all; from one network (a /24,
    the addresses in it all count together), the cap is its 8. Either way a genuine joiner, from
    any network, even theirs, gets in while they hold theirs: silence cannot keep anyone out."""
    cap, sources, reason = {
        "many networks": (64, [f"10.0.{1 + i % 64}.1" for i in range(3 * 64)],
                          "the host has too many connections waiting to join; try again shortly"),
        "one network": (8, [f"10.0.0.{3 + i}" for i in range(3 * 8)],
                        "too many connections from your network are waiting to join this host; try again shortly"),
    }[spread]
    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery)
        async with trio.open_nursery() as watching:
            knocks = await _knock(hosted, watching, sources)
            await trio.testing.wait_all_tasks_blocked()
            dropped = [knock for knock in knocks if knock.frames]
            assert dropped == knocks[: 2 * cap] and all(k.frames == [Refuse(reason)] for k in dropped)
            await trio.sleep(LIMITS.hello / 2)  # the dropped are closed; the others' HELLO is not due yet
            assert all(knock.closed for knock in dropped)
            held = knocks[2 * cap:]
            assert not any(knock.frames or knock.closed for knock in held)
            await _genuine(hosted, source="10.0.0.200")  # from the crowded network, if one is
            watching.cancel_scope.cancel()
        for knock in knocks:
            await knock.seat.stream.aclose()
        nursery.cancel_scope.cancel()
    # A flood is reported, not line by line: at the 1st, 2nd, 4th... connection that made room.
    flood = [line for line in hosted.lines if reason in line]
    counts = [int(re.search(r"\((\d+) so far\)", line)[1]) for line in flood]
    assert counts == [2**n for n in range(len(counts))] and counts[-1] >= 2 * cap
    assert re.fullmatch(rf"Dropped a joiner at 10\.0\.\d+\.\d+:\d+ to make room for a newer connection: "
                        rf"{re.escape(reason)} \(1 so far\)", flood[0])


def _hello(version: int = 3, name: str = "bob") -> bytes:
    return pack({"hello": {"version": version, "name": name, "key": Ed25519PrivateKey.generate().public_key()
                           .public_bytes_raw()}})


BAD_HELLOS = {
    "version": (lambda seat: seat.send_payload(_hello(99)),
                ("Refused bob: you speak protocol version 99; this host speaks version 3 (both sides need a p2pwhist "
                 "of one protocol version)")),
    "version-1": (lambda seat: seat.send_payload(_hello(1)),
                  "Refused bob: you speak protocol version 1; this host speaks version 3"),
    "garbage": (lambda seat: seat.send_payload(b"\xc1 not msgpack"), "Refused {where}: not a p2pwhist HELLO"),
    "not-hello": (lambda seat: seat.send_payload(pack({"hello": {"name": "bob"}})),
                  "Refused {where}: not a p2pwhist HELLO"),
    "over-the-limit": (lambda seat: seat.stream.send_all(LENGTH.pack(HANDSHAKE_FRAME + 1) + b"\x81\xa5hello"),
                       "Dropped {where}: it sent a frame of 1025 bytes, over the 1024-byte limit"),
    "oversized": (lambda seat: seat.stream.send_all(LENGTH.pack(10 * 2**20) + b"x" * 100),
                  "Dropped {where}: it sent a frame of 10485760 bytes, over the 1024-byte limit"),
}


@pytest.mark.parametrize("send, line", list(BAD_HELLOS.values()), ids=list(BAD_HELLOS))
async def test_a_bad_hello_is_refused_in_one_line_and_the_table_plays_on(tmp_path, nursery, autojump_clock, send, line):
    """A frame the host can read gets a REFUSE saying why, in the words of the host's own line;
    one too big to read (never finished, or announcing megabytes) is hung up on at once,
    without waiting for the rest. Either way only that connection ends: a genuine joiner then
    plays the whole match."""
    hosted = Hosted(tmp_path, nursery)
    bad = await hosted.connect()
    line = line.format(where=f"a joiner at 10.0.0.1:{40000 + hosted.network.opened}")
    await send(bad)
    payload = await bad.receive_payload()
    if line.startswith("Dropped"):
        assert payload is None  # no answer: the host hung up
    else:
        refuse = read_from_host(payload)
        assert isinstance(refuse, Refuse) and refuse.reason.startswith(line.split(": ", 1)[1]), refuse
        assert await bad.receive_payload() is None  # and then hung up
    await trio.testing.wait_all_tasks_blocked()  # the host has said so
    (said,) = [text for text in hosted.lines if text.startswith(("Refused", "Dropped"))]
    assert said.startswith(line), said
    assert not hosted.done.is_set()
    bob, key = await hosted.seat("bob", source="10.0.0.2")
    await play(bob, await seat_at(bob, key), bot="random")
    record = await hosted.end()
    assert isinstance(record, net.GameRecord) and verify(read_transcript(record.transcript)).complete


async def test_a_joiner_to_a_full_table_is_refused_and_the_game_goes_on(tmp_path, nursery, autojump_clock):
    """bob takes the last seat (START goes out at once) and thinks; carol knocks: she is
    refused in one line, and bob and alice play the match to its end."""
    hosted = Hosted(tmp_path, nursery)
    bob, key = await hosted.seat()
    session = await seat_at(bob, key)
    carol = await (await hosted.join("carol"))()
    assert isinstance(carol, Refused)
    assert str(carol) == "the host alice.lan:7878 refused us: the table is full: a game is under way"
    await play(bob, session, bot="random")
    record = await hosted.end()
    assert isinstance(record, net.GameRecord) and verify(read_transcript(record.transcript)).complete
    assert "Refused carol: the table is full: a game is under way" in hosted.lines
    assert [p.name for p in record.table.players] == ["alice", "bob"]


async def test_a_joiner_who_leaves_before_the_table_fills_frees_its_seat(tmp_path, nursery, autojump_clock):
    """dan sits down at a 3-seat table and leaves: his seat is free again, and bob and carol,
    who come after, take seats 1 and 2 and play the match."""
    hosted = Hosted(tmp_path, nursery, players=3)
    dan, _ = await hosted.seat("dan")
    await trio.testing.wait_all_tasks_blocked()
    assert any(line.startswith("dan joined (key ") and line.endswith("; 2/3 seated") for line in hosted.lines)
    await dan.stream.aclose()
    await trio.testing.wait_all_tasks_blocked()
    assert "dan left before the game began; its seat is free again" in hosted.lines
    carol_lines: list[str] = []
    bob = await hosted.join("bob", seed=1, source="10.0.0.2")
    while not hosted.said("bob joined"):
        await trio.sleep(0.1)
    carol = await hosted.join("carol", seed=2, source="10.0.0.3", lines=carol_lines)
    records = [await hosted.end(), await bob(), await carol()]
    assert all(isinstance(r, net.GameRecord) for r in records), records
    assert [p.name for p in records[0].table.players] == ["alice", "bob", "carol"]
    assert any(line.startswith("Seated as carol (seat 2) with alice, bob, carol.") for line in carol_lines)
    assert len({r.transcript.read_bytes() for r in records}) == 1
