"""The full protocol between sessions in one process, with no sockets.

Every seat runs a real ``Session``; each message one makes is handed to all the others, as
the host's relay would. Used by the tests, by the benchmarks and to count the protocol's
messages and bytes (``scripts/protocol_stats.py``).
"""

from __future__ import annotations

import random
from typing import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Player, Table
from p2pwhist.games.base import Game
from p2pwhist.games.bots import Bot, RandomBot
from p2pwhist.games.match import MatchLength
from p2pwhist.session import Need, Session, start_message
from p2pwhist.signed import public_bytes


def open_table(game: Game, length: MatchLength, rng: random.Random,
               names: Sequence[str] | None = None, keys: Sequence[Ed25519PrivateKey] | None = None) -> list[Session]:
    """START a table and give every seat its session; keys and secrets come from ``rng``
    (tests only: real peers use OS randomness), so that one seed plays one game. The players
    are ``names``, by default seat0, seat1, ...; ``keys``, if given, are theirs (the same
    players at several tables)."""
    keys = keys or [Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)) for _ in range(game.players)]
    names = names or [f"seat{i}" for i in range(game.players)]
    players = tuple(Player(name, public_bytes(k.public_key())) for name, k in zip(names, keys, strict=True))
    table = Table(game, length, players, rng.randbytes(32))
    start = start_message(keys[0], table)
    return [Session(start, seat, key, lambda: rng.randbytes(32)) for seat, key in enumerate(keys)]


def run(sessions: Sequence[Session], bots: Sequence[Bot]) -> None:
    """Play until every session is done; raises the first session error."""
    while True:
        actors = [s for s in sessions if s.need not in (Need.PEER, Need.DONE)]
        if not actors:
            if all(s.need is Need.DONE for s in sessions):
                return
            raise RuntimeError("no session can move, but the match is not over")
        actor = actors[0]
        seat = actor.seat
        assert seat is not None  # an observer only ever needs PEER or DONE
        value = bots[seat].choose(actor.view()) if actor.need is Need.MOVE else False
        message = actor.produce(value)
        for other in sessions:
            if other is not actor:
                other.receive(message.raw, seat)


def random_match(game: Game, hands: int = 1, seed: int = 0) -> list[Session]:
    rng = random.Random(seed)
    sessions = open_table(game, MatchLength(hands=hands), rng)
    run(sessions, [RandomBot(rng) for _ in sessions])
    return sessions
