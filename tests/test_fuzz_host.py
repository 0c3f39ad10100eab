"""A short run of scripts/fuzz_host.py against real host processes: no crash, no hang, no wrong
verdict, bounded memory. Hostile pre-login frames on fresh connections, the meeting's frames
out of their place (before a seat at a 2-seat host, and seated at a 3-seat one), and at least
three games in which our joiner, playing honestly, sends one validly signed but mutated message
(the full-length run is ``python scripts/fuzz_host.py``, 100,000 frames)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import fuzz_host

FRAMES = 1200
SEED = 20240607
GAME_EVERY = 300  # about four signed-mutation games: each costs a host process, about 0.7 s


def test_a_short_fuzz_run_finds_no_crash_and_no_hang(tmp_path: Path) -> None:
    summary = fuzz_host.run(FRAMES, SEED, tmp_path / "out", game_every=GAME_EVERY)

    assert summary["aborted"] is None, summary["aborted"]
    assert summary["frames"] >= FRAMES
    assert summary["mutation_games"] >= 3, summary
    assert {"bad_hello", "bomb", "deep_nest", "wrong_type", "cut_frame", "lobby", "seated",
            "game_mutated"} <= set(summary["kinds"])
    found = "\n".join(f"{d['what']} x{d['count']}: {d['summary']} ({d['first']})" for d in summary["distinct"])
    assert summary["crashes"] == 0, found
    assert summary["hangs"] == 0, found
    assert summary["wrong_verdicts"] == 0, found
    assert summary["peak_rss_mb"] < 100, summary["peak_rss_mb"]
