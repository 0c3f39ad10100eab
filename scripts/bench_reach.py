"""How fast people reach a table with no server, measured with real parts in Linux network
namespaces (as root; the tests' harness, tests/netns.py, builds them):

- ``discover_s``: from ``p2pwhist host`` starting on a bridge to a listener on another host of
  the bridge hearing its table (the listener runs ``hear_tables`` in windows of
  ``--window`` seconds, so the figure is at most that much late); goal at most 2 s.
- ``map_s``: from ``host`` starting in a home behind a router running miniupnpd to its
  join line for the router's external address being printed; goal at most 3 s.
- ``nomap_s``: the same with no miniupnpd: until the host says it could not map; goal at most 5 s.
- ``wan_join_ok``: a joiner in the "internet" namespace joins at the printed external address
  and a 2-player hand is played to its end, both transcripts verify, and after the host exits
  the router holds no mapping.

Each figure is the median over ``--rounds`` runs (their maximum is printed too). The last line
is one JSON object.

    sudo python scripts/bench_reach.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # netns and netutil: the harness the tests use too

from netns import (  # noqa: E402
    ROUTER_WAN,
    HomeRouter,
    Network,
    forwards,
    home_router,
    lan,
    require,
    start_miniupnpd,
)
from netutil import Peer  # noqa: E402

from p2pwhist.transcript import read_transcript  # noqa: E402
from p2pwhist.verify import verify  # noqa: E402

POLL = 0.01
MAPPED = re.compile(r"p2pwhist join (\S+) --expect (\S+)  # from the internet \(port mapped by your router\)")
NOT_MAPPED = "Not reachable from the internet through your router"
# A listener for the bridge: the time (this machine's monotonic clock, which every namespace
# shares) at which it first hears a table, listening in windows of WINDOW seconds.
LISTENER = """
import sys, time
from p2pwhist.reach.lan import hear_tables
window = float(sys.argv[1])
while not hear_tables(window).tables:
    pass
print(time.monotonic(), flush=True)
"""


def printed(peer: Peer, pattern: str | re.Pattern, deadline: float = 30.0) -> tuple[float, re.Match]:
    """When ``peer`` printed a line matching ``pattern`` (within POLL), and the match."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        found = re.search(pattern, peer.out.read_text())
        if found:
            return time.monotonic(), found
        if peer.popen.poll() is not None:
            raise AssertionError(f"{peer.name} exited: {peer.out.read_text()}{peer.err.read_text()}")
        time.sleep(POLL)
    raise AssertionError(f"{peer.name} did not print {pattern!r}: {peer.out.read_text()}")


def discover(root: Path, window: float) -> float:
    with Network(root) as network:
        one, two = lan(network, 2).namespaces
        listener = two.python("listener", "-c", LISTENER, str(window))
        time.sleep(1.0)  # the listener is up and listening before the host starts
        started = time.monotonic()
        one.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--no-map")
        heard = float(listener.finish().out.split()[-1])
        return heard - started


def mapped_game(root: Path) -> tuple[float, bool]:
    """``map_s``, and whether a hand played through the NAT verified and the mapping went."""
    with Network(root) as network:
        house: HomeRouter = home_router(network)
        start_miniupnpd(network, house)
        started = time.monotonic()
        host = house.home.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--hands", "1",
                                   "--no-announce")
        at, found = printed(host, MAPPED)
        where, fp = found[1], found[2]
        joiner = house.internet.p2pwhist("bob", "join", where, "--expect", fp, "--name", "bob", "--bot", "random")
        done = [joiner.finish(), host.finish()]
        ok = where.startswith(ROUTER_WAN) and all(d.code == 0 for d in done)
        for finished in done:
            transcript = re.findall(r"Transcript: (\S+)", finished.out)
            verdict = verify(read_transcript(Path(transcript[-1]))) if transcript else None
            ok = ok and verdict is not None and verdict.valid and verdict.complete
        return at - started, ok and forwards(house) == []


def unmapped(root: Path) -> float:
    with Network(root) as network:
        house = home_router(network)
        started = time.monotonic()
        host = house.home.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--no-announce")
        at, _ = printed(host, NOT_MAPPED)
        return at - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=float, default=0.25, help="the listener's window, seconds")
    args = parser.parse_args()
    try:
        require("nft", "miniupnpd")
    except BaseException as error:  # noqa: BLE001 (the harness skips as pytest does)
        sys.exit(f"bench_reach: {error}")
    figures: dict[str, list[float]] = {"discover_s": [], "map_s": [], "nomap_s": []}
    wan_ok = True
    with tempfile.TemporaryDirectory(prefix="bench-reach-") as folder:
        for round_ in range(args.rounds):
            root = Path(folder) / str(round_)
            figures["discover_s"].append(discover(root / "lan", args.window))
            map_s, ok = mapped_game(root / "wan")
            figures["map_s"].append(map_s)
            wan_ok = wan_ok and ok
            figures["nomap_s"].append(unmapped(root / "nomap"))
            print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in figures.items())
                  + f", wan_join_ok {ok}", flush=True)
    result: dict[str, object] = {name: round(statistics.median(v), 2) for name, v in figures.items()}
    result.update({f"{name}_max": round(max(v), 2) for name, v in figures.items()})
    result.update(wan_join_ok=wan_ok, rounds=args.rounds, window_s=args.window)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
