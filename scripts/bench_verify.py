"""Time to verify a 10-hand transcript, as `p2pwhist verify` does it.

A match of HANDS hands between random bots is played through real sessions in this process
and written to a transcript file; the figure is the median wall time of reading that file
and verifying it (signatures, chain, schedule, every deck step, each hand's deck audit and
full-information replay). The last line is one JSON object: {"verify_s": {"2": …, "3": …}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.inprocess import random_match
from p2pwhist.transcript import TranscriptWriter, read_transcript
from p2pwhist.verify import verify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for players in (2, 3):
            log = random_match(BoxWhist(players), hands=args.hands, seed=players)[0].log
            path = Path(folder) / f"{players}.p2pw"
            writer = TranscriptWriter(path)
            for message in log:
                writer.append(message)
            writer.close()
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                verdict = verify(read_transcript(path))
                times.append(time.perf_counter() - start)
                assert verdict.valid and verdict.complete and len(verdict.hands) == args.hands
            figures[str(players)] = round(statistics.median(times), 3)
            print(f"{players} players: {len(log)} messages, {path.stat().st_size} bytes; "
                  f"verify {', '.join(f'{t:.3f}' for t in times)} s")
    print(json.dumps({"verify_s": figures}))


if __name__ == "__main__":
    main()
