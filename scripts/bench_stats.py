"""Time `p2pwhist stats` over a folder of transcripts (issue 24's figure).

TRANSCRIPTS matches (default 200) of Box Whist, HANDS hands each (default 3), are played
between random bots through real sessions in this process, at tables of two or three drawn
from a pool of six players who keep their keys from table to table, and written to a folder
(a temporary one, or --folder, whose transcripts are reused if it holds enough). Then
`p2pwhist stats --json FOLDER` runs as a user runs it, in a child process, RUNS times cold (its
home without the stats cache: every transcript verified) and each time at once again warm (the
cache the cold run left); the figures are the median wall times, and their ratio in the same
run. Its counts are checked against the games as played: every match counted, each player's
matches and hands; a warm run must report exactly what the cold one did. The child's peak
memory is printed too. The last line is one JSON object: {"transcripts": 200, "stats_s": …,
"per_transcript_ms": …, "warm_s": …, "cold_over_warm": …, "peak_rss_mb": …}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.match import MatchLength
from p2pwhist.identity import fingerprint
from p2pwhist.inprocess import open_table, run
from p2pwhist.signed import public_bytes
from p2pwhist.transcript import TranscriptWriter

POOL = ("ann", "ben", "cat", "dan", "eve", "fay")
KEYS = {name: Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"bench_stats {name}".encode()).digest())
        for name in POOL}


def seated(index: int) -> list[str]:
    """Who plays match ``index``: two or three of the pool, the same every time."""
    rng = random.Random(index)
    return rng.sample(POOL, rng.choice((2, 3)))


def write_matches(folder: Path, count: int, hands: int) -> None:
    """Play ``count`` matches and write each one's transcript to ``folder``, unless there."""
    for index in range(count):
        path = folder / f"{index:04d}.p2pw"
        if path.exists():
            continue
        names = seated(index)
        rng = random.Random(index)
        sessions = open_table(BoxWhist(len(names)), MatchLength(hands=hands), rng, names,
                              [KEYS[name] for name in names])
        run(sessions, [RandomBot(random.Random(rng.random())) for _ in sessions])
        writer = TranscriptWriter(path)
        for message in sessions[0].log:
            writer.append(message)
        writer.close()


def check(report: dict, count: int, hands: int) -> None:
    """The counts ``stats`` gave against the games as played."""
    assert report["counted"] == count and report["not_counted"] == [], (report["counted"], report["not_counted"])
    matches = Counter(name for index in range(count) for name in seated(index))
    by_fingerprint = {fingerprint(public_bytes(key.public_key())): name for name, key in KEYS.items()}
    for player in report["players"]:
        name = by_fingerprint[player["fingerprint"]]
        assert player["name"] == name and player["matches"]["played"] == matches[name], player
        assert player["hands"]["played"] == matches[name] * hands, player
        assert player["rating"] is not None
    assert len(report["players"]) == len(matches)


def time_stats(folder: Path, home: Path, runs: int) -> tuple[list[float], list[float], float, dict]:
    """Seconds for each cold and each warm run of `p2pwhist stats --json folder`, the largest
    peak memory (MB) of the children, and the report (the same from every run)."""
    environment = {**os.environ, "P2PWHIST_HOME": str(home),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                               os.environ.get("PYTHONPATH")]))}
    cold: list[float] = []
    warm: list[float] = []
    reports = []
    for _ in range(runs):
        (home / "stats-cache").unlink(missing_ok=True)
        for times in (cold, warm):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "p2pwhist", "stats", "--json", str(folder)],
                                  env=environment, capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - start)
            reports.append(json.loads(done.stdout))
    if any(report != reports[0] for report in reports):
        raise SystemExit("a run from the stats cache reported otherwise than one that verified every file")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux: kilobytes
    return cold, warm, peak_mb, reports[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", type=int, default=200)
    parser.add_argument("--hands", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--folder", type=Path, help="make the transcripts here, or reuse those already here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.folder or Path(temporary) / "games"
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        write_matches(folder, args.transcripts, args.hands)
        print(f"{args.transcripts} transcripts in {folder} ({time.perf_counter() - start:.1f} s to make or find)")
        home = Path(temporary) / "home"
        home.mkdir()
        times, warm, peak_mb, report = time_stats(folder, home, args.runs)
        check(report, args.transcripts, args.hands)
        median, warm_median = statistics.median(times), statistics.median(warm)
        print(f"stats over {args.transcripts} transcripts: median {median:.2f} s of {args.runs} cold runs "
              f"({', '.join(f'{t:.2f}' for t in times)}), {1000 * median / args.transcripts:.1f} ms a transcript; "
              f"warm {warm_median:.2f} s ({', '.join(f'{t:.2f}' for t in warm)}), {median / warm_median:.1f} times "
              f"as fast, the same report; peak memory {peak_mb:.0f} MB; counts checked against the games as played")
        for player in report["players"]:
            rating = player["rating"]
            print(f"  {player['name']}: {player['matches']['played']} matches, won {player['matches']['won']}, "
                  f"rating {rating['mu']:.1f} ± {rating['sigma']:.1f}")
        print(json.dumps({"transcripts": args.transcripts, "hands": args.hands, "stats_s": round(median, 3),
                          "per_transcript_ms": round(1000 * median / args.transcripts, 2),
                          "warm_s": round(warm_median, 3), "cold_over_warm": round(median / warm_median, 1),
                          "peak_rss_mb": round(peak_mb, 1)}))


if __name__ == "__main__":
    main()
