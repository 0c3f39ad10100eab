"""A real joiner (``net.join`` around ``JoinerMachine``) before its game, over memory streams
under the mock clock: a hand-written host (``memnet.FakeHost``) that speaks another protocol
version, or sends a START this program cannot play; and a real host whose key is not the one
the joiner expects (``--expect``). Each ends the joiner in one line naming the host, before it
sits down; the same START in a file is refused by ``verify`` in one line (exit status 2) when
it is of a version or game this program does not know, and judged invalid when malformed;
and a host that lost a would-be joiner this way lost no seat."""

from __future__ import annotations

import json
import secrets

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import FakeHost, Hosted, MemoryNetwork, options

from p2pwhist import cli, net
from p2pwhist.bodies import Player, Table
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.identity import fingerprint
from p2pwhist.session import HOST
from p2pwhist.signed import GENESIS_PREV
from p2pwhist.table import PROTOCOL_VERSION, Ready, RemoteTableError, TableError
from p2pwhist.transcript import MAGIC
from p2pwhist.wire import frame, pack

DEEP = b"\x91" * 995 + b"\xc0"  # a list nested 995 deep: about 1 KB


async def _meet(tmp_path, host, network: MemoryNetwork, **extra) -> net.GameRecord | Exception:
    """A real joiner, bob, against ``host`` (a coroutine function given the host's side of
    bob's connection): bob's end."""
    result: list[net.GameRecord | Exception] = []

    async def joining() -> None:
        try:
            result.append(await net.join(options("bob", tmp=tmp_path, **extra), "alice.lan", 7878,
                                         connect=network.connector()))
        except Exception as error:  # noqa: BLE001 (judged by the test)
            result.append(error)

    fake = FakeHost(network)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(joining)
        side = await fake.accept()
        await host(side)
        with trio.fail_after(60):
            while not result:
                await trio.sleep(1)
        nursery.cancel_scope.cancel()
    return result[0]


@pytest.mark.parametrize(
    "change, reason, known",
    [({"version": 99}, "this game speaks protocol version 99; this p2pwhist speaks version 4", False),
     ({"version": 1}, "this game speaks protocol version 1; this p2pwhist speaks version 4", False),
     ({"game": {"game": "bridge", "players": 2}}, "unknown game 'bridge'", False),
     ({"game": {"game": [1]}}, "unknown game an array of 1", False),
     ({"version": "DEEP"}, "nested more than 8 levels", True),
     ({"players": "EXTRA"}, "the game is for 2 players", True)],
    ids=["version", "version-1", "game", "unhashable-game", "deep-version", "extra-player"],
)
async def test_a_start_this_program_cannot_accept_stops_the_joiner_and_verify(tmp_path, autojump_clock, capsys,
                                                                             change, reason, known):
    """A version or configuration mismatch comes from the other side: the joiner stops with a
    peer's error (exit status 1, see cli.py), naming the host. The same START in a file: of a
    version or a game this program does not know, it is no transcript it can judge (``verify``
    exits 2, one line); malformed by rules it knows, the log is invalid at message 0, blaming
    nobody, since a START that is no START proves nothing of whose it is (session.md §3, §5)."""
    host_key = Ed25519PrivateKey.generate()
    sent: list[bytes] = []

    async def host(side) -> None:
        hello = await side.welcome("alice", host_key)
        assert await side.receive() == Ready()
        players = (Player("alice", host_key.public_key().public_bytes_raw()), hello.player)
        table = Table(BoxWhist(2), MatchLength(hands=1), players, secrets.token_bytes(32), "2026-12-02").to_wire()
        extra = [*table["players"], ["eve", bytes(32)]]
        signed = pack([0, GENESIS_PREV, HOST, "start", {**table, **change}])
        signed = signed.replace(pack("DEEP"), DEEP).replace(pack("EXTRA"), pack(extra))
        payload = pack([signed, host_key.sign(signed)])
        sent.append(payload)
        await side.send_payload(payload)
        assert await side.receive_payload() is None  # no ACCEPT, no ABORT: the joiner hung up

    network = MemoryNetwork()
    result = await _meet(tmp_path, host, network)
    assert isinstance(result, RemoteTableError) and result.seat == HOST
    assert str(result).startswith("alice (the host) sent a bad START: ") and reason in str(result), result
    assert not list(tmp_path.glob("*.p2pw*"))  # bob never sat down: no files

    path = tmp_path / "start.p2pw"
    path.write_bytes(MAGIC + frame(sent[0]))
    capsys.readouterr()
    if known:
        assert cli.main(["verify", "--json", str(path)]) == cli.EXIT_PEER
        verdict = json.loads(capsys.readouterr().out)
        assert not verdict["valid"] and verdict["error"]["seq"] == 0 and verdict["error"]["seat"] is None
        assert reason in verdict["error"]["reason"]
        return
    assert cli.main(["verify", str(path)]) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line.startswith("p2pwhist: ") and reason in line and out == ""


async def test_a_joiner_leaves_a_host_that_speaks_another_protocol_version(tmp_path, autojump_clock):
    """A host of another version welcomes us instead of refusing our HELLO: we say so in one
    line and never sit down."""

    async def host(side) -> None:
        hello = await side.welcome("alice", Ed25519PrivateKey.generate(), version=1)
        assert hello.version == PROTOCOL_VERSION == 3
        assert await side.receive_payload() is None  # no READY: the joiner hung up

    result = await _meet(tmp_path, host, MemoryNetwork())
    assert isinstance(result, RemoteTableError) and result.seat == HOST
    assert str(result) == ("alice (the host) speaks protocol version 1; this p2pwhist speaks version 3 (both sides "
                           "need a p2pwhist of one protocol version)")


async def test_a_joiner_expecting_another_host_key_leaves_in_one_line_and_the_table_waits_on(tmp_path, nursery,
                                                                                           autojump_clock):
    """bob checks the host's key before he sits down: with the wrong one he leaves, saying
    both fingerprints, and the host hears it with its own; the host lost no seat, and seats
    carol, who expects the right key."""
    wrong = "0000-1111-2222-3333-4444-5555-6666-7777"
    hosted = Hosted(tmp_path, nursery)
    right = fingerprint(hosted.options.key.public_key().public_bytes_raw())
    with pytest.raises(TableError) as raised:
        await net.join(options("bob", tmp=tmp_path), "alice.lan", 7878, expect=wrong,
                       connect=hosted.network.connector("10.0.0.2"))
    assert str(raised.value) == f"bob does not sit down: the host's key is {right}, not the expected {wrong}"
    carol = await net.join(options("carol", tmp=tmp_path, seed=2), "alice.lan", 7878, expect=right,
                           connect=hosted.network.connector("10.0.0.3"))
    record = await hosted.end()
    assert isinstance(carol, net.GameRecord) and isinstance(record, net.GameRecord)
    assert [p.name for p in record.table.players] == ["alice", "carol"]
    assert [line for line in hosted.lines if "bob" in line] == [
        "bob is at the door, checking your key before sitting down",
        f"bob did not accept your key {right}, and does not sit down"]
    assert not list(tmp_path.glob("bob*"))
