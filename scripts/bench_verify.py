"""Time to verify a transcript, as `p2pwhist verify` does it.

A match of HANDS hands (default 50, issue 13's figure) between random bots is played through
real sessions in this process and written to a transcript file (``write_match``); the figure
is the median wall time of reading that file and verifying it (signatures, chain, schedule,
every deck step, each hand's deck audit and full-information replay: ``time_verify``). The
last line is one JSON object: {"verify_s": {"2": …, "3": …}}. ``scripts/bench_net.py`` reports
the 2-player figure too, with these two functions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.inprocess import random_match
from p2pwhist.signed import SignedMessage
from p2pwhist.transcript import TranscriptWriter, read_transcript
from p2pwhist.verify import verify


def write_match(path: Path, players: int, hands: int, seed: int) -> list[SignedMessage]:
    """Play a match of random bots in this process and write its transcript to ``path``."""
    log = random_match(BoxWhist(players), hands=hands, seed=seed)[0].log
    writer = TranscriptWriter(path)
    for message in log:
        writer.append(message)
    writer.close()
    return log


def time_verify(path: Path, hands: int, runs: int) -> list[float]:
    """Seconds to read and verify ``path`` (a complete match of ``hands``), ``runs`` times."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        verdict = verify(read_transcript(path))
        times.append(time.perf_counter() - start)
        assert verdict.valid and verdict.complete and len(verdict.hands) == hands
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=50)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for players in args.players:
            path = Path(folder) / f"{players}.p2pw"
            log = write_match(path, players, args.hands, seed=players)
            times = time_verify(path, args.hands, args.runs)
            figures[str(players)] = round(statistics.median(times), 3)
            print(f"{players} players: {len(log)} messages, {path.stat().st_size} bytes; "
                  f"verify {', '.join(f'{t:.3f}' for t in times)} s")
    print(json.dumps({"verify_s": figures}))


if __name__ == "__main__":
    main()
