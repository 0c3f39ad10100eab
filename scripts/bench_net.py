"""Wall time of a networked hand between separate processes, beside its lower bound.

``hand_s``: the host runs in this process (``p2pwhist.net.host`` with a random bot) and every
joiner is a separate ``python -m p2pwhist join --bot random`` process, all on loopback TCP.
A hand's time runs from the host's HAND message to the hand's last RESULT, as the host sees
them (the cut and the match's start are not part of a hand); the figure is the median hand.

``bound_s``: what the same hand cannot go faster than, measured in this same run:
- the elliptic-curve work on the critical path: the same protocol is replayed with every
  seat's session in this process, counting each EC primitive (point decompression, a key
  object, which costs a fixed-base multiplication, and an ECDH multiplication) done by the
  sender of each message plus the busiest of its receivers (they work in parallel), each
  count times its measured unit cost;
- one Ed25519 signature and one verification per message;
- one loopback round trip per message: every message waits for the one before it.

``box_hand_s``: the same measurement for Bradley's Box with 4 players (the seed's table): the
median wall time of one game of Box (one deal, one hand) between processes.

The last line is one JSON object: {"hand_s": {"2": …, "3": …}, "bound_s": {…}, "ratio": {…},
"box_hand_s": …}.
The machine may be shared: compare figures of one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bots import RandomBot
from p2pwhist.deck import _audit, _curve, _deck, _passes
from p2pwhist.games.base import Game
from p2pwhist.games.box import Box
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table
from p2pwhist.net import Agent, HostOptions, PeerOptions, host
from p2pwhist.session import Need, Session
from p2pwhist.signed import Kind, SignedMessage
from p2pwhist.wire import FrameBuffer, frame

SAMPLES = 300


# -- the measured hand -----------------------------------------------------------------------


async def networked_hands(game: Game, hands: int) -> list[float]:
    """Seconds per hand, seen by a host in this process playing joiner processes."""
    players = game.players
    marks: list[tuple[str, float]] = []

    def on_event(session: Session, message: SignedMessage) -> None:
        if message.kind in (Kind.HAND, Kind.RESULT):
            marks.append((message.kind.value, trio.current_time()))

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as home:
        options = PeerOptions(name="host", key=Ed25519PrivateKey.generate(), agent=Agent(RandomBot(rng).choose, False),
                              transcript=Path(home) / "host.p2pw", timeout=60, report=lambda line: None,
                              on_event=on_event)
        table = HostOptions(game, MatchLength(hands=hands), 0, "127.0.0.1")
        async with trio.open_nursery() as nursery:
            port = await nursery.start(lambda task_status: host(options, table, task_status=task_status))
            for seat in range(1, players):
                command = [sys.executable, "-m", "p2pwhist", "join", f"127.0.0.1:{port}", "--bot", "random",
                           "--name", f"joiner{seat}", "--timeout", "60", "--transcript", f"{home}/j{seat}.p2pw"]
                env = {**os.environ, "P2PWHIST_HOME": f"{home}/j{seat}"}
                nursery.start_soon(lambda c=command, e=env: trio.run_process(c, stdout=subprocess.DEVNULL, env=e))
    ends: dict[float, float] = {}  # a hand's start → its last RESULT so far
    for kind, at in marks:
        if kind == "hand":
            started = at
        else:
            ends[started] = at
    return [end - start for start, end in ends.items()]


# -- the bound -------------------------------------------------------------------------------


class Counting:
    """Counts the EC primitives the deck module performs, by wrapping them where they are used."""

    KINDS = ("point", "scalar", "multiply")

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._patched: list[tuple[object, str, object]] = []

    def __enter__(self) -> Counting:
        for module, name in ((_curve, "point"), (_deck, "point"), (_audit, "point"),
                             (_passes, "scalar"), (_passes, "multiply")):
            original = getattr(module, name)
            self._patched.append((module, name, original))
            setattr(module, name, self._wrap(name, original))
        return self

    def _wrap(self, name, original):
        def counted(*args):
            self.counts[name] += 1
            return original(*args)

        return counted

    def __exit__(self, *exc: object) -> None:
        for module, name, original in self._patched:
            setattr(module, name, original)

    def take(self) -> Counter[str]:
        taken, self.counts = self.counts, Counter()
        return taken


def critical_path(players: int, hands: int) -> tuple[Counter[str], float]:
    """EC primitives on the critical path of an average hand, and its messages."""
    sessions = open_table(BoxWhist(players), MatchLength(hands=hands), random.Random(2))
    bots = [RandomBot(random.Random(seat)) for seat in range(players)]
    total: Counter[str] = Counter()
    messages = 0
    in_hand = False
    with Counting() as counting:
        while not all(s.need is Need.DONE for s in sessions):
            actor = next(s for s in sessions if s.need not in (Need.PEER, Need.DONE))
            counting.take()
            message = actor.produce(bots[actor.seat].choose(actor.view()) if actor.need is Need.MOVE else False)
            path = counting.take()
            busiest: Counter[str] = Counter()
            for other in sessions:
                if other is not actor:
                    other.receive(message.raw, actor.seat)
                    work = counting.take()
                    if weight(work) > weight(busiest):
                        busiest = work
            if message.kind is Kind.HAND:
                in_hand = message.body.more
            if in_hand:
                total += path + busiest
                messages += 1
    return Counter({k: v / hands for k, v in total.items()}), messages / hands


UNIT: dict[str, float] = {}


def weight(counts: Counter[str]) -> float:
    return sum(UNIT.get(kind, 1.0) * n for kind, n in counts.items())


def measure_units() -> dict[str, float]:
    """Seconds per EC primitive and per signature operation, measured now."""
    rng = random.Random(3)
    xs = [_curve.encode_card(i.to_bytes(4, "big"), i % 52)[0] for i in range(SAMPLES)]
    keys = [rng.randrange(1, _curve.N) for _ in range(SAMPLES)]

    def per(action, items) -> float:
        start = time.perf_counter()
        for item in items:
            action(item)
        return (time.perf_counter() - start) / len(items)

    points = [_curve.point(x) for x in xs]
    scalars = [_curve.scalar(k) for k in keys[:10]]
    signer = Ed25519PrivateKey.generate()
    public = signer.public_key()
    signature = signer.sign(b"m" * 200)
    return {
        "point": per(_curve.point, xs),
        "scalar": per(_curve.scalar, keys),
        "multiply": per(lambda q: _curve.multiply(scalars[0], q), points),
        "sign": per(lambda _: signer.sign(b"m" * 200), range(SAMPLES)),
        "verify": per(lambda _: public.verify(signature, b"m" * 200), range(SAMPLES)),
    }


async def loopback_round_trip() -> float:
    """Seconds for a small frame to go to another task over loopback TCP and back."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def echo(stream) -> None:
        async with stream:
            while data := await stream.receive_some(65536):
                await stream.send_all(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, echo, listeners)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        payload = frame(b"x" * 200)
        start = time.perf_counter()
        for _ in range(SAMPLES):
            await stream.send_all(payload)
            buffer = FrameBuffer()
            while buffer.next_frame() is None:
                buffer.feed(await stream.receive_some(65536))
        elapsed = (time.perf_counter() - start) / SAMPLES
        await stream.aclose()
        nursery.cancel_scope.cancel()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=5, help="hands per measured match (default 5)")
    args = parser.parse_args()
    UNIT.update(measure_units())
    rtt = trio.run(loopback_round_trip)
    print("unit costs (µs): " + ", ".join(f"{k} {v * 1e6:.1f}" for k, v in UNIT.items()) + f", loopback round trip {rtt * 1e6:.1f}")
    result: dict[str, dict[str, float] | float] = {"hand_s": {}, "bound_s": {}, "ratio": {}}
    for players in (2, 3):
        hands = trio.run(networked_hands, BoxWhist(players), args.hands)
        counts, messages = critical_path(players, args.hands)
        ec = weight(counts)
        signing = messages * (UNIT["sign"] + UNIT["verify"])
        bound = ec + signing + messages * rtt
        hand = statistics.median(hands)
        print(f"{players} players: hands {', '.join(f'{h:.3f}' for h in hands)} s; median {hand:.3f} s")
        print(f"    bound {bound:.3f} s = EC {ec:.3f} ({', '.join(f'{k} {v:.0f}' for k, v in sorted(counts.items()))})"
              f" + signatures {signing:.3f} + {messages:.0f} messages × round trip {messages * rtt:.3f}")
        result["hand_s"][str(players)] = round(hand, 4)
        result["bound_s"][str(players)] = round(bound, 4)
        result["ratio"][str(players)] = round(hand / bound, 2)
    box_hands = trio.run(networked_hands, Box(4), args.hands)
    box_hand = statistics.median(box_hands)
    print(f"Box, 4 players: games {', '.join(f'{h:.3f}' for h in box_hands)} s; median {box_hand:.3f} s")
    result["box_hand_s"] = round(box_hand, 4)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
