"""Wall time of a networked hand between separate processes, beside its lower bound.

``hand_s``: the host runs in this process (``p2pwhist.net.host`` with a random bot) and every
joiner is a separate ``python -m p2pwhist join --bot random`` process, all on loopback TCP.
A hand's time runs from the host's HAND message to the hand's last message before the next
HAND (its last SECRET and COMMIT), as the host sees them (the cut and the match's start are
not part of a hand); the figure is the median hand.

``bound_s``: what the same hand cannot go faster than, measured in this same run:
- the elliptic-curve work on the critical path: the same protocol is replayed with every
  seat's session in this process, counting each EC primitive (point decompression, a key
  object, which costs a fixed-base multiplication, and an ECDH multiplication) done by the
  sender of each message plus the busiest of its receivers (they work in parallel), each
  count times its measured unit cost;
- one Ed25519 signature and one verification per message;
- half a loopback round trip per leg (below): a message waits for the one before it only when
  another seat sent that one.

``box_hand_s``: the same measurement for Bradley's Box with 4 players (the seed's table): the
median wall time of one game of Box (one deal, one hand) between processes.

``hops``, keyed by seat count (2, 3, 4): the sequential network legs in one hand of Box Whist,
the mean over the hands of a match between random bots played through real sessions in this
process (``p2pwhist.inprocess``: the same log that processes make). A *leg* is one one-way
transmission on the critical path. Every message waits for the one before it (the log is one
chain, §2 of protocol/session.md), and every joiner's only link is to the host, seat 0, which
relays. So each message, in log order, adds the legs from the previous message's sender to its
own: 0 if the same seat sent both (it sends on without waiting), 1 between the host and a
joiner (either way), 2 from one joiner to another (joiner→host→joiner). A hand is its HAND
message up to the message before the next HAND, so its first leg is the one from the previous
hand's last message into its HAND; per hand the legs therefore tile the match, and a hand's
wall time (as measured below) spans all its legs but that first one. With 2 players hops is
the number of changes of sender. Each run's games differ (the seats' keys, so the game id and
the deal, are new each time), and a hand's legs vary with who wins which trick (a 2-player
hand between about 51 and 63): the mean of 20 hands moves by about ±1 from run to run.
Printed beside it: the legs by the kind of the message that adds them, the joiner→joiner
transitions (2 legs each), and the legs a hand would need if its KEYS messages cost nothing
(removed from the log).

``wan_hand_s``, keyed 2 and 3: ``hand_s`` again (host in this process, joiner processes with
``--bot random``, the same start and end of a hand, median over every hand of --wan-runs
matches of --wan-hands hands), but every joiner connects to a TCP proxy that forwards to the
host and holds each chunk it reads for --delay seconds (default 25 ms) before writing it on,
in order, in each direction: a fixed one-way latency, no bandwidth limit. The proxy is code in
this script, run as a separate process (``--proxy PORT``) so that neither the host's CPU work
nor the GIL delays its forwarding. Its measured round trip is printed first, and beside each
hand the legs in it (from the host's transcript) times the delay, the part of the hand that
latency alone accounts for.

``verify_s``: the median wall time of reading and verifying (``p2pwhist verify``'s logic:
``verify(read_transcript(path))``) the transcript of a --verify-hands-hand (default 50)
2-player Box Whist match between random bots, made as ``scripts/bench_verify.py`` makes one.

``--baseline DIR`` measures another version too, in the same run: DIR holds a copy of another
p2pwhist (say the last commit's, ``git archive HEAD | tar -x -C DIR``), whose own
``scripts/bench_net.py`` runs in a subprocess with DIR first on the path (so its joiner
processes are that version too) and the same options, one part at a time, each just before
the same part here: a shared machine's drift then touches both alike. Its lines are printed
with a ``baseline |`` prefix, its figures as its own script defines them.

The last line is one JSON object: {"hand_s": {"2": …, "3": …}, "bound_s": {…}, "ratio": {…},
"box_hand_s": …, "hops": {"2": …, "3": …, "4": …}, "wan_hand_s": {"2": …, "3": …},
"verify_s": …}, with the same for the baseline under "baseline"; --skip leaves a part's keys
out. The machine may be shared: compare figures of one run, not across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
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
from bench_verify import time_verify, write_match  # this script's folder is on sys.path
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.deck import _audit, _curve, _deck, _passes
from p2pwhist.games.base import Game
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.box.engine import Box
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.inprocess import open_table, random_match
from p2pwhist.net import Agent, GameRecord, HostOptions, PeerOptions, host
from p2pwhist.session import CUT_HAND, HOST, Need
from p2pwhist.session_events import Dealing, HandOver, SessionEvent
from p2pwhist.signed import Kind, SignedMessage
from p2pwhist.transcript import read_transcript
from p2pwhist.wire import FrameBuffer, frame

SAMPLES = 300


# -- the measured hand -----------------------------------------------------------------------


async def networked_hands(game: Game, hands: int, delay: float = 0.0) -> tuple[list[float], list[SignedMessage]]:
    """Seconds per hand, seen by a host in this process playing joiner processes, and the
    host's log; with ``delay``, the joiners reach the host through a proxy with that latency."""
    players = game.players
    starts: list[float] = []  # when each hand's HAND message was taken
    ends: list[float] = []  # when its last message was, which gives its result

    def on_event(event: SessionEvent) -> None:
        if isinstance(event, Dealing) and event.hand != CUT_HAND:
            starts.append(trio.current_time())
        elif isinstance(event, HandOver):
            ends.append(trio.current_time())

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as home:
        options = PeerOptions(name="host", key=Ed25519PrivateKey.generate(), agent=Agent(RandomBot(rng).choose, False),
                              transcript=Path(home) / "host.p2pw", timeout=60, report=lambda line: None,
                              on_event=on_event)
        table = HostOptions(game, MatchLength(hands=hands), 0, "127.0.0.1")
        records: list[GameRecord] = []
        hosted = trio.Event()

        async def hosting(task_status=trio.TASK_STATUS_IGNORED) -> None:
            try:
                records.append(await host(options, table, task_status=task_status))
            finally:
                hosted.set()

        async with trio.open_nursery() as nursery:
            port = await nursery.start(hosting)
            async with proxied(port, delay) as port:  # the proxy lives until the host is done
                async with trio.open_nursery() as joiners:
                    for seat in range(1, players):
                        command = [sys.executable, "-m", "p2pwhist", "join", f"127.0.0.1:{port}", "--bot", "random",
                                   "--name", f"joiner{seat}", "--transcript", f"{home}/j{seat}.p2pw"]
                        env = {**os.environ, "P2PWHIST_HOME": f"{home}/j{seat}"}
                        joiners.start_soon(lambda c=command, e=env: trio.run_process(c, stdout=subprocess.DEVNULL, env=e))
                await hosted.wait()
        log = list(read_transcript(records[0].transcript))
    return [end - start for start, end in zip(starts, ends, strict=True)], log


# -- sequential legs -------------------------------------------------------------------------


def legs(previous: int, sender: int) -> int:
    """One-way transmissions between a message by ``previous`` and the next, by ``sender``."""
    if previous == sender:
        return 0
    return 1 if HOST in (previous, sender) else 2


def hand_legs(log: list[SignedMessage], free: frozenset[Kind] = frozenset()) -> list[Counter[str]]:
    """Each hand's legs, by the kind of the message that adds them; messages of a ``free``
    kind are left out of the log first, as if they cost nothing."""
    log = [m for m in log if m.kind not in free]
    starts = [i for i, m in enumerate(log) if m.kind is Kind.HAND]  # the last one ends the match
    hands = []
    for a, b in itertools.pairwise(starts):
        counts: Counter[str] = Counter()
        for i in range(a, b):
            counts[log[i].kind.value] += legs(log[i - 1].seat, log[i].seat)
        hands.append(counts)
    return hands


def hops(players: int, hands: int) -> tuple[float, Counter[str], float, float]:
    """The mean legs per hand, their mean by kind, and the mean legs without KEYS messages and
    the mean relayed (joiner to joiner) transitions, over one match of ``hands`` hands."""
    log = random_match(BoxWhist(players), hands=hands, seed=players)[0].log
    per_hand = hand_legs(log)
    by_kind = Counter({k: v / hands for k, v in sum(per_hand, Counter()).items()})
    keyless = statistics.mean(sum(h.values()) for h in hand_legs(log, frozenset({Kind.KEYS})))
    starts = [i for i, m in enumerate(log) if m.kind is Kind.HAND]
    relayed = sum(legs(log[i - 1].seat, log[i].seat) == 2 for i in range(starts[0], starts[-1])) / hands
    return float(statistics.mean(sum(h.values()) for h in per_hand)), by_kind, keyless, relayed


# -- the delaying proxy ----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def proxied(port: int, delay: float):
    """The port to connect to for ``port`` on loopback: a delaying proxy's (a process of this
    script, stopped on exit), or ``port`` itself if ``delay`` is 0."""
    if not delay:
        yield port
        return
    command = [sys.executable, __file__, "--proxy", str(port), "--delay", str(delay)]
    process = await trio.lowlevel.open_process(command, stdout=subprocess.PIPE)
    try:
        line = b""
        while not line.endswith(b"\n"):
            chunk = await process.stdout.receive_some(64)
            if not chunk:
                raise RuntimeError("the proxy stopped before it listened")
            line += chunk
        yield int(line)
    finally:
        process.kill()
        await process.wait()
        await process.stdout.aclose()


async def serve_proxy(target: int, delay: float) -> None:
    """Listen on loopback and forward every connection to ``target`` on loopback, each
    direction delayed by ``delay`` seconds; print the port listened on, then serve forever."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    print(listeners[0].socket.getsockname()[1], flush=True)

    async def connection(client: trio.SocketStream) -> None:
        try:
            async with client, await trio.open_tcp_stream("127.0.0.1", target) as server, \
                    trio.open_nursery() as nursery:
                nursery.start_soon(delayed, client, server, delay)
                nursery.start_soon(delayed, server, client, delay)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # one end went away: so does the other

    await trio.serve_listeners(connection, listeners)


async def delayed(source: trio.SocketStream, sink: trio.SocketStream, delay: float) -> None:
    """Write to ``sink`` each chunk read from ``source``, ``delay`` seconds after it was read,
    in order; then pass on the end of the stream."""
    send, receive = trio.open_memory_channel[tuple[float, bytes]](math.inf)

    async def read() -> None:
        async with send:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                while data := await source.receive_some(65536):
                    send.send_nowait((trio.current_time() + delay, data))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read)
        async with receive:
            async for due, data in receive:
                await trio.sleep_until(due)
                await sink.send_all(data)
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await sink.send_eof()


async def proxy_round_trip(delay: float, count: int = 10) -> float:
    """Seconds for a small frame to go through the proxy to an echo task and back."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")

    async def echo(stream) -> None:
        async with stream:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                while data := await stream.receive_some(65536):
                    await stream.send_all(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, echo, listeners)
        async with proxied(listeners[0].socket.getsockname()[1], delay) as port:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            times = []
            for _ in range(count):
                start = time.perf_counter()
                await stream.send_all(frame(b"x" * 200))
                buffer = FrameBuffer()
                while buffer.next_frame() is None:
                    buffer.feed(await stream.receive_some(65536))
                times.append(time.perf_counter() - start)
            await stream.aclose()
        nursery.cancel_scope.cancel()
    return statistics.median(times)


# -- the bound -------------------------------------------------------------------------------


class Counting:
    """Counts the EC primitives the deck module performs, by wrapping them where they are used:
    in every module of the deck that holds ``_curve``'s function under its name (so a module
    that starts or stops using one is counted as it is)."""

    KINDS = ("point", "scalar", "multiply")

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._patched: list[tuple[object, str, object]] = []

    def __enter__(self) -> Counting:
        originals = {name: getattr(_curve, name) for name in self.KINDS}
        for module in (_curve, _deck, _audit, _passes):
            for name, original in originals.items():
                if getattr(module, name, None) is original:
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


def critical_path(players: int, hands: int) -> tuple[Counter[str], float, float]:
    """EC primitives on the critical path of an average hand, its messages and its legs."""
    sessions = open_table(BoxWhist(players), MatchLength(hands=hands), random.Random(2))
    bots = [RandomBot(random.Random(seat)) for seat in range(players)]
    total: Counter[str] = Counter()
    messages = 0
    path_legs = 0
    previous = HOST
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
                path_legs += legs(previous, actor.seat)
            previous = actor.seat
    return Counter({k: v / hands for k, v in total.items()}), messages / hands, path_legs / hands


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


PARTS = ("hand", "hops", "wan", "verify")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=5, help="hands per measured match on loopback (default 5)")
    parser.add_argument("--hop-hands", type=int, default=20, help="hands per match counted for hops (default 20)")
    parser.add_argument("--wan-hands", type=int, default=3, help="hands per match through the proxy (default 3)")
    parser.add_argument("--wan-runs", type=int, default=2, help="matches through the proxy per seat count (default 2)")
    parser.add_argument("--delay", type=float, default=0.025, help="the proxy's one-way delay, seconds (default 0.025)")
    parser.add_argument("--verify-hands", type=int, default=50, help="hands in the verified transcript (default 50)")
    parser.add_argument("--verify-runs", type=int, default=3, help="times it is verified (default 3)")
    parser.add_argument("--skip", action="append", choices=PARTS, default=[],
                        help="leave out a part: hand (hand_s, bound_s, ratio, box_hand_s), hops, wan, verify")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="also measure the p2pwhist copied in DIR, part by part, in this run")
    parser.add_argument("--proxy", type=int, metavar="PORT", help=argparse.SUPPRESS)  # run as the delaying proxy
    args = parser.parse_args()
    if args.proxy is not None:
        trio.run(serve_proxy, args.proxy, args.delay)
        return
    measure = {"hand": lambda: loopback_figures(args.hands), "hops": lambda: hop_figures(args.hop_hands),
               "wan": lambda: wan_figures(args.wan_hands, args.wan_runs, args.delay),
               "verify": lambda: verify_figures(args.verify_hands, args.verify_runs)}
    options = [f"--{name.replace('_', '-')}={getattr(args, name)}"
               for name in ("hands", "hop_hands", "wan_hands", "wan_runs", "delay", "verify_hands", "verify_runs")]
    result: dict[str, dict[str, float] | float] = {}
    baseline: dict[str, dict[str, float] | float] = {}
    for part in PARTS:
        if part not in args.skip:
            if args.baseline:
                baseline.update(baseline_figures(args.baseline, part, options))
            result.update(measure[part]())
    if args.baseline:
        result["baseline"] = baseline  # type: ignore[assignment]
    print(json.dumps(result))


def baseline_figures(folder: Path, part: str, options: list[str]) -> dict[str, dict[str, float] | float]:
    """One part measured by the copy of p2pwhist in ``folder``, with its own script: its lines
    printed with a prefix, its figures from its last line."""
    command = [sys.executable, str(folder / "scripts" / "bench_net.py"), *options,
               *(f"--skip={other}" for other in PARTS if other != part)]
    # Its p2pwhist before any other, in its joiners too (``python -m`` puts the working folder first).
    env = {**os.environ, "PYTHONPATH": str(folder.resolve())}
    lines = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, check=True).stdout.splitlines()
    for line in lines[:-1]:
        print(f"baseline | {line}", flush=True)
    return json.loads(lines[-1])


def hop_figures(hop_hands: int) -> dict[str, dict[str, float]]:
    """hops, with the legs by kind printed."""
    figures = {}
    for players in (2, 3, 4):
        mean, by_kind, keyless, relayed = hops(players, hop_hands)
        print(f"{players} players: {mean:.1f} legs a hand (mean of {hop_hands}; {relayed:.1f} relayed "
              f"joiner→joiner); by kind {', '.join(f'{k} {v:.1f}' for k, v in by_kind.most_common())}; "
              f"{keyless:.1f} if KEYS cost nothing", flush=True)
        figures[str(players)] = round(mean, 1)
    return {"hops": figures}


def wan_figures(hands_per_match: int, runs: int, delay: float) -> dict[str, dict[str, float]]:
    """wan_hand_s, with every hand's time and the part of it that latency accounts for."""
    trip = trio.run(proxy_round_trip, delay)
    print(f"proxy: {delay * 1e3:.0f} ms each way, round trip measured {trip * 1e3:.1f} ms")
    figures = {}
    for players in (2, 3):
        times, latency = [], []
        for _ in range(runs):
            hands, log = trio.run(networked_hands, BoxWhist(players), hands_per_match, delay)
            times += hands
            latency += [sum(h.values()) * delay for h in hand_legs(log)]
        hand = statistics.median(times)
        print(f"{players} players through the proxy: hands {', '.join(f'{t:.2f}' for t in times)} s; "
              f"median {hand:.3f} s; legs × delay {', '.join(f'{t:.2f}' for t in latency)} s", flush=True)
        figures[str(players)] = round(hand, 3)
    return {"wan_hand_s": figures}


def verify_figures(hands: int, runs: int) -> dict[str, float]:
    """verify_s."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "verify.p2pw"
        log = write_match(path, 2, hands, seed=2)
        times = time_verify(path, hands, runs)
    verify_s = statistics.median(times)
    print(f"verify, 2 players, {hands} hands ({len(log)} messages): "
          f"{', '.join(f'{t:.2f}' for t in times)} s; median {verify_s:.3f} s", flush=True)
    return {"verify_s": round(verify_s, 3)}


def loopback_figures(hands_per_match: int) -> dict[str, dict[str, float] | float]:
    """hand_s, bound_s, ratio and box_hand_s."""
    UNIT.update(measure_units())
    rtt = trio.run(loopback_round_trip)
    print("unit costs (µs): " + ", ".join(f"{k} {v * 1e6:.1f}" for k, v in UNIT.items()) + f", loopback round trip {rtt * 1e6:.1f}")
    result: dict[str, dict[str, float] | float] = {"hand_s": {}, "bound_s": {}, "ratio": {}}
    for players in (2, 3):
        hands, _ = trio.run(networked_hands, BoxWhist(players), hands_per_match)
        counts, messages, path_legs = critical_path(players, hands_per_match)
        ec = weight(counts)
        signing = messages * (UNIT["sign"] + UNIT["verify"])
        bound = ec + signing + path_legs * rtt / 2
        hand = statistics.median(hands)
        print(f"{players} players: hands {', '.join(f'{h:.3f}' for h in hands)} s; median {hand:.3f} s")
        print(f"    bound {bound:.3f} s = EC {ec:.3f} ({', '.join(f'{k} {v:.0f}' for k, v in sorted(counts.items()))})"
              f" + signatures {signing:.3f} ({messages:.0f} messages) + {path_legs:.0f} legs × half a round trip "
              f"{path_legs * rtt / 2:.3f}")
        result["hand_s"][str(players)] = round(hand, 4)
        result["bound_s"][str(players)] = round(bound, 4)
        result["ratio"][str(players)] = round(hand / bound, 2)
    box_hands, _ = trio.run(networked_hands, Box(4), hands_per_match)
    box_hand = statistics.median(box_hands)
    print(f"Box, 4 players: games {', '.join(f'{h:.3f}' for h in box_hands)} s; median {box_hand:.3f} s")
    result["box_hand_s"] = round(box_hand, 4)
    return result


if __name__ == "__main__":
    main()
