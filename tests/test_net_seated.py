"""``net.host`` tells ``HostOptions.seated`` how many joiners are seated, as it changes: what
``p2pwhist play`` waits for before it starts its next bot, each named by its seat, and, for the
last, before it waits for the match. Here as ``play`` does it, with joiners in this process
over loopback TCP.

Found with tests/test_ui.py: the joiner that takes the last seat also starts the game (START,
in the same step of the host's machine), after which the lobby holds no seats; a count read
only from the lobby never reached the table's size, and ``play`` waited for ever after its
match was over."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist import net
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.session import Outcome


@pytest.mark.parametrize("players", [2, 3])
async def test_play_hears_of_every_seat_taken_and_its_match_ends(tmp_path: Path, players: int) -> None:
    counts: list[int] = []
    seated = [trio.Event() for _ in range(players)]  # seated[k]: k joiners are seated
    results: list[Outcome] = []

    def options(seat: int) -> net.PeerOptions:
        return net.PeerOptions(f"p{seat}", Ed25519PrivateKey.generate(),
                               net.Agent(RandomBot(random.Random(seat)).choose, False), tmp_path / f"{seat}.p2pw",
                               timeout=10, wait=10, report=lambda line: None)

    def told(count: int) -> None:
        counts.append(count)
        seated[count].set()

    async def hosting(task_status=trio.TASK_STATUS_IGNORED) -> None:
        table = net.HostOptions(BoxWhist(players), MatchLength(hands=1), 0, "127.0.0.1", seated=told)
        results.append((await net.host(options(0), table, task_status=task_status)).outcome)

    async def joining(seat: int, port: int) -> None:
        results.append((await net.join(options(seat), "127.0.0.1", port)).outcome)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(hosting)
            for seat in range(1, players):  # one at a time, as play starts its bots
                nursery.start_soon(joining, seat, port)
                with trio.fail_after(20):
                    await seated[seat].wait()
    assert counts == list(range(1, players)), counts
    assert len(results) == players and all(r == results[0] for r in results), results
