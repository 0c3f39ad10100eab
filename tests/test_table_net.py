"""Whole tables in memory: the real host and joiners (``p2pwhist.net`` around the table's
machines) over ``trio.testing`` memory streams, under a mock clock that jumps over every wait.

What used to need separate processes and real seconds (a trust question answered after
minutes, a joiner that leaves meanwhile, a seat that stays away past the wait, a server that
is no p2pwhist host) runs here in milliseconds. Every test asserts what each side ends with and
says, and that the transcripts agree and verify."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from memnet import MemoryNetwork, Seat, options, table

from p2pwhist import net
from p2pwhist.games.box.engine import Box
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.home import KnownPeers
from p2pwhist.identity import fingerprint
from p2pwhist.table import Lobby, Refused, UnattributedTableError, Welcome
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify


def _verified(path) -> tuple[bool, bool]:
    verdict = verify(read_transcript(path))
    return verdict.valid, verdict.complete


@pytest.mark.parametrize("game", [BoxWhist(2), BoxWhist(3), BoxWhist(4), Box(4)], ids=lambda g: f"{g.name}-{g.players}")
async def test_a_match_in_memory_ends_alike_everywhere_and_verifies(tmp_path, autojump_clock, game):
    played = await table(tmp_path, game=game)
    records = played.records
    assert all(isinstance(r, net.GameRecord) for r in records), records
    assert len({r.outcome.points for r in records}) == 1
    texts = {r.transcript.read_bytes() for r in records}
    assert len(texts) == 1
    assert _verified(records[0].transcript) == (True, True)
    assert not list(tmp_path.glob("*.secrets")) and not list(tmp_path.glob("*.command"))


async def test_a_trust_answer_that_takes_minutes_seats_the_joiner_and_is_remembered(tmp_path, autojump_clock):
    """A host who took more than 10 s to answer "Trust it?" crashed the joiner with a
    traceback, and the yes was not saved."""
    network = MemoryNetwork()
    known = KnownPeers(tmp_path / "alice-known")
    asked: list[str] = []

    async def slow_yes(question: str) -> bool:
        asked.append(question)
        await trio.sleep(300)
        return True

    alice_lines: list[str] = []
    bob_lines: list[str] = []
    alice = options("alice", tmp=tmp_path, lines=alice_lines, known=known, ask=slow_yes)
    bob = options("bob", tmp=tmp_path, seed=1, lines=bob_lines)
    records = {}
    async with trio.open_nursery() as nursery:
        listener = network.listen()

        async def hosting():
            records["alice"] = await net.host(alice, net.HostOptions(BoxWhist(2), MatchLength(hands=1)), [listener])

        async def joining():
            records["bob"] = await net.join(bob, "alice.lan", 7878, connect=network.connector())

        nursery.start_soon(hosting)
        nursery.start_soon(joining)
    assert asked and asked[0].startswith("New player 'bob' with key")
    assert isinstance(records["alice"], net.GameRecord) and isinstance(records["bob"], net.GameRecord)
    assert fingerprint(bob.key.public_key().public_bytes_raw()) in known.load()
    assert any(line.startswith("Waiting for alice to accept you; your fingerprint is") for line in bob_lines)


async def test_the_hosts_question_goes_away_with_a_line_when_the_joiner_leaves(tmp_path, autojump_clock):
    network = MemoryNetwork()
    withdrawn = trio.Event()

    async def never_answered(question: str) -> bool:
        try:
            await trio.sleep_forever()
        finally:
            withdrawn.set()

    lines: list[str] = []
    alice = options("alice", tmp=tmp_path, lines=lines, known=KnownPeers(tmp_path / "known"), ask=never_answered)
    async with trio.open_nursery() as nursery:
        listener = network.listen()
        nursery.start_soon(net.host, alice, net.HostOptions(BoxWhist(2), MatchLength(hands=1)), [listener])
        bob = Seat(await network.connect("alice.lan", 7878))
        welcome = await bob.sit("bob", Ed25519PrivateKey.generate())
        assert isinstance(welcome, Welcome)
        news = await bob.receive()
        assert isinstance(news, Lobby) and news.you is None
        await bob.stream.aclose()
        with trio.fail_after(5):
            await withdrawn.wait()
        await trio.sleep(1)
        assert any("bob left before the game began; no need to answer about them" in line for line in lines), lines
        nursery.cancel_scope.cancel()


async def test_one_joiner_refusing_another_keeps_the_table_and_a_newcomer_fills_it(tmp_path, autojump_clock):
    network = MemoryNetwork()

    def no_to(name: str):
        async def ask(question: str) -> bool:
            return f"'{name}'" not in question
        return ask

    peers = [options(name, tmp=tmp_path, seed=seat, known=KnownPeers(tmp_path / f"{name}-known"),
                     ask=no_to("dave") if name == "carol" else None)
             for seat, name in enumerate(["alice", "bob", "carol", "dave", "erin"])]
    results: dict[str, object] = {}

    async def run(name, coroutine):
        try:
            results[name] = await coroutine
        except net.NetError as error:
            results[name] = error

    host_lines: list[str] = []
    peers[0].report = host_lines.append
    async with trio.open_nursery() as nursery:
        listener = network.listen()
        nursery.start_soon(run, "alice", net.host(peers[0], net.HostOptions(BoxWhist(4), MatchLength(hands=1)),
                                                  [listener]))
        for seat, name in enumerate(["bob", "carol", "dave"], start=1):
            nursery.start_soon(run, name, net.join(peers[seat], "alice.lan", 7878,
                                                   connect=network.connector(f"10.0.0.{seat}")))
            await trio.sleep(1)
        with trio.fail_after(600):
            while "dave" not in results:
                await trio.sleep(1)
        nursery.start_soon(run, "erin", net.join(peers[4], "alice.lan", 7878, connect=network.connector("10.0.0.4")))
    assert isinstance(results["dave"], Refused) and "carol did not accept you" in str(results["dave"])
    for name in ("alice", "bob", "carol", "erin"):
        assert isinstance(results[name], net.GameRecord), (name, results[name])
    assert "carol did not accept dave; dave leaves the table" in host_lines
    assert [p.name for p in results["alice"].table.players] == ["alice", "bob", "carol", "erin"]


async def _serve_once(network: MemoryNetwork, reply: bytes | None, close: bool = True):
    """A listener on alice.lan:7878 that answers the first connection with ``reply`` (None: never)."""
    listener = network.listen()

    async def serve():
        stream = await listener.accept()
        await stream.receive_some(1024)  # the HELLO
        if reply is None:
            await trio.sleep_forever()
        await stream.send_all(reply)
        if close:
            await stream.aclose()
        else:
            await trio.sleep_forever()

    return serve


@pytest.mark.parametrize("reply, words", [
    (None, "the host alice.lan:7878 did not answer within 10 s"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "alice.lan:7878 does not speak p2pwhist (it sent 'HTTP/1.1 400 Bad Request')"),
    (bytes.fromhex("15030100020232"), "alice.lan:7878 does not speak p2pwhist (it sent bytes 15 03 01 00 02 02 32)"),
    (b"\x00\x00\x00\x03abc", "alice.lan:7878 does not speak p2pwhist (it sent 'abc')"),
], ids=["silent", "http", "tls", "garbage"])
async def test_something_that_is_not_a_p2pwhist_host_gets_one_line(tmp_path, autojump_clock, reply, words):
    network = MemoryNetwork()
    serve = await _serve_once(network, reply)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        with pytest.raises(net.NetError) as raised:
            await net.join(options("bob", tmp=tmp_path), "alice.lan", 7878, connect=network.connector())
        nursery.cancel_scope.cancel()
    assert str(raised.value) == words


async def test_nobody_listening_is_one_line(tmp_path, autojump_clock):
    with pytest.raises(UnattributedTableError, match="cannot reach the host alice.lan:7878: Connection refused"):
        await net.join(options("bob", tmp=tmp_path), "alice.lan", 7878, connect=MemoryNetwork().connector())
