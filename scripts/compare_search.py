#!/usr/bin/env python3
"""The search bot against PIMC for 2-player Box Whist, at the same time budget per move or at
each one's normal level (issue 12: choose the technique by measurement, not by name; issue 25:
the search bot must beat the PIMC it replaced).

- The search bot is ``p2pwhist.games.boxwhist.search.SearchBot``, the shipped bot (its module
  docstring says what it does), with its switches if given (``--search 'search(inference=off)'``;
  ``search(pimc=off)`` is its ISMCTS, ``search(pimc=off,endgame=off,inference=off)`` the ISMCTS
  of before issue 25).
- PIMC (perfect-information Monte Carlo, as GIB for bridge: Ginsberg, JAIR 14, 2001) is
  ``PIMCBot`` (``scripts/pimc.py``: a module of its own, so that a job in another process finds
  it), the baseline ISMCTS replaced, built on the same parts (``Knowledge`` samples
  the deals, ``_Sim`` plays them, ``_policy`` plays the playouts, ``_score`` scores them) so
  that only the search differs: per move, sample deals consistent with the view, play every
  legal move on each followed by a greedy playout (all moves on the same deal: common random
  numbers), and play the move with the best total score (``Searching.vote``). Its known flaw
  is strategy fusion: each sample is played as if every card were seen.

Duplicate play, head to head (``scripts/duplicate.py``'s ``duel``): each deal (deck and
dealer, alternating) is played twice with the seats swapped. Both bots get the same per-move
time cap and a budget of playouts too large to reach first, so the time decides; or, with
``--shipped``, the normal level each has or had: the search bot's (``SearchBot.budgets``),
PIMC's 500 playouts (``PIMC_NORMAL``), both capped at the normal level's seconds. It prints
the share of decided hands the search bot won with a 95% Wilson interval, the pairs each won on
balance, and the search bot's seconds per move; the LAST line is one JSON object with the same
figures.

    python scripts/compare_search.py [--pairs N] [--time-limit SECONDS | --shipped] [--search SPEC]
                                     [--seed S] [--jobs J] [--max-seconds SECONDS]

With time budgets the moves depend on the machine's speed and load, so a run is not exactly
repeatable; the deals are (from ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplicate import BotSpec, Setting, duel, figures  # scripts/duplicate.py
from pimc import PIMC_NORMAL, PIMCBot  # scripts/pimc.py

from p2pwhist.games.boxwhist.search import SearchBot

# A budget nobody reaches within the time cap: the clock decides.
UNREACHED = 10**7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--time-limit", type=float, default=0.1, help="seconds per move, for both bots")
    parser.add_argument("--shipped", action="store_true",
                        help="each bot at its normal level's budget (the search bot's, PIMC's 500 playouts), "
                             "not the time")
    parser.add_argument("--search", default="search", help="the search bot with its switches, e.g. "
                        "'search(endgame=off,inference=off)' (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="deals played at once, each in a process (default 1)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="start no new deal after this many seconds (a long run bounded; the pairs played are "
                             "in the result)")
    args = parser.parse_args()
    normal = SearchBot.budgets["normal"]
    time_limit = normal.seconds if args.shipped else args.time_limit
    search, pimc = (normal.playouts, PIMC_NORMAL) if args.shipped else (UNREACHED, UNREACHED)
    subject = BotSpec.parse(args.search)
    subject = BotSpec(subject.name, (("playouts", search), *subject.kwargs))
    setting = Setting("boxwhist", (), 2, subject, BotSpec("pimc", (("playouts", pimc),), maker=PIMCBot), search,
                      time_limit)
    r = duel(setting, args.pairs, args.seed, args.jobs, args.max_seconds)
    r["budgets"] = {"search": search, "pimc": pimc} if args.shipped else "unreached"
    print(f"{r['pairing']}, 2-player Box Whist, {time_limit} s a move each: {figures(r)}; the search bot's s/move "
          f"mean {r['mean_s_per_move']} max {r['max_s_per_move']}", flush=True)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
