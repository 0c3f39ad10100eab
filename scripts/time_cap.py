#!/usr/bin/env python3
"""Does the search bots' per-move time cap hold? (issue 12: "a per-move time budget is
respected (hard cap, never exceeded by more than 10%)")

For each bot and level measured, the Box Whist search bot (``games/boxwhist/search.py``) at
every level at 2 players (its ISMCTS) and at 3 (its PIMC), the Box search bot
(``games/box/search.py``, 4 players, seed rules) at normal and the German Whist search bot
(``games/germanwhist/search.py``) at every level (``--only NAME``: that bot alone, say
``--only 'germanwhist search'`` or ``--only 'boxwhist search 3p'``),
it plays hands of real games, the bot in seat 0 against the heuristic in every other seat, made
by ``make_bot`` with ``time.perf_counter`` as its clock (as ``p2pwhist play`` makes it), and
times every ``choose`` call that searched (a call with no choice answers at once: left out),
hand after hand until it has timed ``--moves`` calls.
Per bot and level it prints the moves timed, the mean, median, 95th percentile and maximum
seconds per move, and the share of moves at the cap or over (the cap bound: the bot stopped
for the clock, not its budget), over 1.1 × the cap (the issue's limit) and over 1.2 × the cap.

It measures twice: first on the machine as it is (its load average is printed), then with
``--load N`` busy-loop processes competing for the cores (none: 0). The LAST line is one JSON
object with the same figures.

    python scripts/time_cap.py [--moves N] [--load N] [--seed S] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.bots import DEFAULT_LEVEL, LEVELS, make_bot
from p2pwhist.games.box.engine import Box
from p2pwhist.games.box.heuristic import BoxHeuristicBot
from p2pwhist.games.box.search import BoxSearchBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import SearchBot
from p2pwhist.games.germanwhist.engine import GermanWhist
from p2pwhist.games.germanwhist.heuristic import GermanWhistHeuristicBot
from p2pwhist.games.germanwhist.search import GermanWhistSearchBot
from p2pwhist.local import shuffled_deck

# A competitor for the cores: a process that never sleeps.
BUSY_LOOP = [sys.executable, "-c", "while True: pass"]


@dataclass(frozen=True)
class Subject:
    """A searching bot at a level, in a game, against the heuristic."""

    name: str
    game: BoxWhist | Box | GermanWhist
    bot_class: type[SearchBot | BoxSearchBot | GermanWhistSearchBot]
    opponent: type[HeuristicBot | BoxHeuristicBot | GermanWhistHeuristicBot]
    level: str

    @property
    def cap(self) -> float:
        return self.bot_class.budgets[self.level].seconds


SUBJECTS = [Subject("boxwhist search", BoxWhist(2), SearchBot, HeuristicBot, level) for level in LEVELS] + [
    Subject("boxwhist search 3p", BoxWhist(3), SearchBot, HeuristicBot, level) for level in LEVELS] + [
    Subject("box search", Box(4), BoxSearchBot, BoxHeuristicBot, DEFAULT_LEVEL)] + [
    Subject("germanwhist search", GermanWhist(), GermanWhistSearchBot, GermanWhistHeuristicBot, level)
    for level in LEVELS]


def times_per_move(subject: Subject, moves: int, seed: int) -> list[float]:
    """Wall seconds of the subject's first ``moves`` ``choose`` calls that searched (the hand
    in progress played to its end)."""
    game, players = subject.game, subject.game.players
    rng = random.Random(seed)
    times: list[float] = []
    number = 0
    while len(times) < moves:
        hand = game.new_hand(number % players, (), shuffled_deck(game, rng))
        bots = [subject.opponent(random.Random(rng.randrange(1 << 30))) for _ in range(players)]
        bot = make_bot(subject.bot_class, random.Random(rng.randrange(1 << 30)), subject.level, time.perf_counter)
        while (seat := hand.turn) is not None:
            view = hand.view(seat)
            if seat:
                hand.apply(bots[seat].choose(view))
                continue
            start = time.perf_counter()
            move = bot.choose(view)
            seconds = time.perf_counter() - start
            if bot.last_samples:
                times.append(seconds)
            hand.apply(move)
        number += 1
    return times


def figures(subject: Subject, times: list[float], load: int) -> dict:
    cap = subject.cap
    n = len(times)
    return {
        "bot": subject.name,
        "level": subject.level,
        "load": load,
        "cap": cap,
        "moves": n,
        "mean_s": round(statistics.fmean(times), 4),
        "median_s": round(statistics.median(times), 4),
        "p95_s": round(statistics.quantiles(times, n=20, method="inclusive")[-1], 4),
        "max_s": round(max(times), 4),
        "share_at_cap": round(sum(t >= cap for t in times) / n, 4),
        "share_over_cap_1.1": round(sum(t > 1.1 * cap for t in times) / n, 4),
        "share_over_cap_1.2": round(sum(t > 1.2 * cap for t in times) / n, 4),
    }


def measure(subjects: list[Subject], moves: int, seed: int, load: int) -> list[dict]:
    """Each subject, with ``load`` busy-loop processes running meanwhile."""
    competitors = [subprocess.Popen(BUSY_LOOP) for _ in range(load)]
    try:
        rows = []
        for subject in subjects:
            row = figures(subject, times_per_move(subject, moves, seed), load)
            rows.append(row)
            print(f"{row['bot']} {row['level']} (cap {row['cap']} s), {load} busy processes: {row['moves']} moves, "
                  f"s/move mean {row['mean_s']} median {row['median_s']} p95 {row['p95_s']} max {row['max_s']}; "
                  f"at the cap {row['share_at_cap']}, over 1.1x {row['share_over_cap_1.1']}, "
                  f"over 1.2x {row['share_over_cap_1.2']}", flush=True)
        return rows
    finally:
        for process in competitors:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200, help="per bot and level")
    parser.add_argument("--load", type=int, default=2, help="busy-loop processes in the second measurement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=sorted({subject.name for subject in SUBJECTS}),
                        help="measure this bot alone (at each of its levels)")
    args = parser.parse_args()
    subjects = [subject for subject in SUBJECTS if args.only in (None, subject.name)]
    loadavg = [round(x, 2) for x in os.getloadavg()]
    print(f"{os.cpu_count()} cores; load average {loadavg} before the first measurement", flush=True)
    rows = measure(subjects, args.moves, args.seed, 0)
    if args.load:
        rows += measure(subjects, args.moves, args.seed, args.load)
    print(json.dumps({"cores": os.cpu_count(), "load_average_at_start": loadavg, "moves_per_bot": args.moves,
                      "seed": args.seed, "results": rows}))


if __name__ == "__main__":
    main()
