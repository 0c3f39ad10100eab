"""Figures for the network edge as pure machines: how fast its lobby runs in memory, and how
long the tests of the edge take now against a baseline checkout, in the same run.

- ``scenarios_per_s``: meetings of a 4-seat table driven through the pure machines alone
  (``table.HostMachine`` and three ``JoinerMachine``s exchanging frames in memory, no trio):
  bob and carol sit down, dave arrives and carol refuses him, erin arrives, everyone vouches,
  and the host's ``Begin`` names alice, bob, carol and erin. Each scenario is checked.
- ``matches_per_s``: whole 2-player Box Whist matches of one hand through the trio driver
  (``net.host`` / ``net.join``) over memory streams under a mock clock, the deck protocol and
  the files included (``tests/memnet.py``).
- ``tests_before_s`` / ``tests_after_s``: the wall time of ``pytest`` on the tests of the edge
  (``BEFORE`` in the baseline checkout given by ``--baseline``, ``AFTER`` here), run in turn,
  before then after, ``--rounds`` times; the medians and their ratio (``tests_ratio``, goal
  under 0.5). Both sets cover the same scenarios: the old process tests were moved into memory
  (the README of each new file says which), and the few that only processes show remain.

Usage: python scripts/bench_lobby.py [--baseline DIR] [--rounds N] [--seconds S]
(``git worktree add /tmp/base dec39ea`` makes the baseline of the redesign). The last line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from p2pwhist.bodies import Player  # noqa: E402
from p2pwhist.table import (  # noqa: E402
    Begin,
    Close,
    Connect,
    HostMachine,
    JoinerMachine,
    Limits,
    Opened,
    Received,
    Send,
    Vet,
    Vetted,
)

# The tests of the network edge before the redesign (processes, mostly), and after it: those
# that cover the same scenarios (in memory, mostly), and the new ones of the edge (the first
# meeting, the frames, the loop), which only make the comparison harder for the new.
SHARED = ["tests/test_resume_processes.py", "tests/test_hostile_input.py", "tests/test_home.py",
          "tests/test_finding.py"]
BEFORE = ["tests/test_lobby.py", "tests/test_rejoin.py", "tests/test_net_e2e.py", "tests/test_net_failures.py",
          *SHARED]
AFTER = ["tests/test_table_lobby.py", "tests/test_table_joiner.py", "tests/test_table_net.py",
         "tests/test_table_play.py", "tests/test_table_door.py", "tests/test_table_arrival.py",
         "tests/test_net_processes.py", "tests/test_unfinished.py", "tests/test_edge.py", "tests/test_frames.py",
         "tests/test_frame_vectors.py", "tests/test_questions.py", *SHARED]


def meeting(keys: dict[str, Ed25519PrivateKey]) -> tuple[str, ...]:
    """One meeting of a 4-seat table through the pure machines; the players START names."""
    limits = Limits()
    alice = Player("alice", keys["alice"].public_key().public_bytes_raw())
    host = HostMachine(alice, 4, limits, lambda: bytes(32))
    joiners: dict[int, JoinerMachine] = {}
    begun: list[Begin] = []
    refuses = {"carol": "dave"}  # whom each joiner's person refuses

    def to_host(conn: int, actions: list) -> None:
        for action in actions:
            if isinstance(action, Send):
                deliver(host.handle(Received(conn, action.payload), 0.0))
            elif isinstance(action, Vet):
                no = refuses.get(joiners[conn].me.name) == action.name
                to_host(conn, joiners[conn].handle(Vetted(action.key, not no), 0.0))

    def deliver(actions: list) -> None:
        for action in actions:
            if isinstance(action, Send) and action.conn in joiners:
                to_host(action.conn, joiners[action.conn].handle(Received(action.conn, action.payload), 0.0))
            elif isinstance(action, Vet):
                deliver(host.handle(Vetted(action.key, True), 0.0))
            elif isinstance(action, Close):
                joiners.pop(action.conn, None)
            elif isinstance(action, Begin):
                begun.append(action)

    for conn, name in enumerate(["bob", "carol", "dave", "erin"], start=1):
        joiner = joiners[conn] = JoinerMachine(name, keys[name], "alice.lan:7878", limits)
        assert joiner.begin(0.0) == [Connect()]
        deliver(host.handle(Opened(conn, f"10.0.0.{conn}", "x"), 0.0))
        to_host(conn, joiner.handle(Opened(conn), 0.0))
    (start,) = begun
    return tuple(player.name for player in start.players)


def scenarios_per_s(seconds: float) -> float:
    keys = {name: Ed25519PrivateKey.generate() for name in ("alice", "bob", "carol", "dave", "erin")}
    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        assert meeting(keys) == ("alice", "bob", "carol", "erin")
        count += 1
    return count / (time.perf_counter() - began)


def matches_per_s(seconds: float) -> float:
    import memnet

    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        with tempfile.TemporaryDirectory() as folder:
            played = trio.run(memnet.table, Path(folder), clock=trio.testing.MockClock(autojump_threshold=0))
        assert all(not isinstance(record, Exception) for record in played.records), played.records
        count += 1
    return count / (time.perf_counter() - began)


def pytest_wall(folder: Path, files: list[str]) -> float:
    """Seconds for ``pytest FILES`` in ``folder``, its own package first on the path, in one
    process (``-n 0``), as before and after alike."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *files],
                          cwd=folder, env={**os.environ, "PYTHONPATH": str(folder)}, capture_output=True, text=True)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"pytest failed in {folder}:\n{done.stdout[-3000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a checkout from before the redesign (tests timed there)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each rate is measured")
    args = parser.parse_args()
    figures: dict[str, object] = {"scenarios_per_s": round(scenarios_per_s(args.seconds), 1),
                                  "matches_per_s": round(matches_per_s(args.seconds), 2)}
    print(f"lobby scenarios: {figures['scenarios_per_s']}/s; whole matches in memory: {figures['matches_per_s']}/s",
          flush=True)
    if args.baseline is not None:
        before, after = [], []
        for _ in range(args.rounds):
            before.append(pytest_wall(args.baseline, BEFORE))
            after.append(pytest_wall(HERE, AFTER))
            print(f"edge tests: before {before[-1]:.1f} s, after {after[-1]:.1f} s", flush=True)
        figures.update(tests_before_s=round(statistics.median(before), 1),
                       tests_after_s=round(statistics.median(after), 1),
                       tests_ratio=round(statistics.median(after) / statistics.median(before), 3))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
