#!/usr/bin/env python3
"""PIMC against ISMCTS for 2-player Box Whist, at the same time budget per move: which search
should ``--bot search`` use? (issue 12: choose the technique by measurement, not by name)

- ISMCTS is ``p2pwhist.games.boxwhist.search.SearchBot``, the shipped bot: single-observer ISMCTS
  (SO-ISMCTS: Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search", IEEE
  TCIAIG 4(2), 2012), one tree over the moves made since the root, a fresh sampled deal per
  iteration (its module docstring says more).
- PIMC (perfect-information Monte Carlo, as GIB for bridge: Ginsberg, JAIR 14, 2001) is
  ``PIMCBot`` here, the baseline it replaced, built on the same parts (``Knowledge`` samples
  the deals, ``_Sim`` plays them, ``_policy`` plays the playouts, ``_score`` scores them) so
  that only the search differs: per move, sample deals consistent with the view, play every
  legal move on each followed by a greedy playout (all moves on the same deal: common random
  numbers), and play the move with the best total score (``Searching.vote``). Its known flaw
  is strategy fusion: each sample is played as if every card were seen.

Duplicate play, head to head: each deal (deck and dealer, alternating) is played twice with
the seats swapped. Both bots get the same per-move time cap and a budget of playouts too large
to reach first, so the time decides; or, with ``--shipped``, the normal level each bot has or
had: ISMCTS's iterations (``SearchBot.budgets``), PIMC's 500 playouts (``PIMC_NORMAL``), both
capped at the normal level's seconds. It prints the share of decided hands ISMCTS won with a
95% Wilson interval, the pairs each won on balance, and each bot's playouts (or iterations)
per second and seconds per move; the LAST line is one JSON object with the same figures.

    python scripts/compare_search.py [--pairs N] [--time-limit SECONDS | --shipped] [--uct C] [--seed S]

With time budgets the moves depend on the machine's speed and load, so a run is not exactly
repeatable; the deals are (from ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplicate import PairTally, play_timed  # scripts/duplicate.py

from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.boxwhist.search import UCT, Knowledge, SearchBot, _playout, _score, _Sim
from p2pwhist.local import shuffled_deck

# A budget nobody reaches within the time cap: the clock decides.
UNREACHED = 10**7
# PIMC's playouts at the normal level when it was the shipped search (500 over all legal moves).
PIMC_NORMAL = 500


class PIMCBot(SearchBot):
    """PIMC over sampled deals with greedy playouts (see the module docstring): ``SearchBot``
    with its search replaced, ``playouts`` counting playouts over all legal moves."""

    def search(self, k: Knowledge, moves: list[Play], deadline: float | None) -> Play:
        # ``vote`` keeps its own deadline, from its start: later than ``deadline`` by the
        # building of ``k``, well under a millisecond.
        seat, rng = k.seat, self.rng

        def deal() -> Callable[[int], float]:
            hands, boxes, stack, my_box = k.sample(rng)
            cards_at = {**k.hand, **my_box}

            def play(i: int) -> float:
                sim = _Sim(k.players, k.trump, [h[:] for h in hands], [b[:] for b in boxes], k.may_look[:], stack[:],
                           k.trick[:], k.turn, k.tricks_won[:])  # the deal afresh for each move
                sim.apply(cards_at[moves[i].position])
                _playout(sim, rng)
                return _score(sim.won, seat)

            return play

        return moves[self.vote(len(moves), deal)]


def compare(pairs: int, time_limit: float, seed: int, uct: float, shipped: bool = False) -> dict:
    """Head to head at ``time_limit`` a move each, or (``shipped``) at each bot's normal level."""
    normal = SearchBot.budgets["normal"]
    if shipped:
        time_limit = normal.seconds
    ismcts_budget, pimc_budget = (normal.playouts, PIMC_NORMAL) if shipped else (UNREACHED, UNREACHED)
    game = BoxWhist(2)
    rng = random.Random(seed)
    tally = PairTally()
    stats = {name: {"moves": 0, "seconds": 0.0, "slowest": 0.0, "playouts": 0} for name in ("pimc", "ismcts")}
    started = time.perf_counter()
    for number in range(pairs):
        deck = shuffled_deck(game, rng)
        bot_seed = rng.randrange(1 << 30)
        for ismcts_seat in (0, 1):
            hand = game.new_hand(number % 2, (), deck)
            ismcts = _Counting(SearchBot(random.Random(bot_seed), ismcts_budget, time.perf_counter, time_limit, uct))
            pimc = _Counting(PIMCBot(random.Random(bot_seed + 1), pimc_budget, time.perf_counter, time_limit))
            times = play_timed(hand, [pimc, ismcts] if ismcts_seat else [ismcts, pimc])
            for name, seat, bot in (("ismcts", ismcts_seat, ismcts), ("pimc", 1 - ismcts_seat, pimc)):
                s = stats[name]
                s["moves"] += len(times[seat])
                s["seconds"] += sum(times[seat])
                s["slowest"] = max([s["slowest"], *times[seat]])
                s["playouts"] += bot.playouts
            tally.hand(hand.result().points, ismcts_seat)
        tally.end_pair()
    result = {
        "pairing": "ismcts vs pimc",
        "game": "boxwhist",
        "players": 2,
        "pairs": pairs,
        **tally.figures("ismcts"),
        "time_limit": time_limit,
        "budgets": {"ismcts": ismcts_budget, "pimc": pimc_budget} if shipped else "unreached",
        "uct": uct,
        "seconds": round(time.perf_counter() - started, 1),
    }
    for name, s in stats.items():
        result[f"{name}_mean_s_per_move"] = round(s["seconds"] / s["moves"], 4) if s["moves"] else None
        result[f"{name}_max_s_per_move"] = round(s["slowest"], 4)
        # PIMC counts a deal played out with every legal move as one sample: playouts are
        # samples x moves; ISMCTS one playout per iteration.
        result[f"{name}_playouts_per_s"] = round(s["playouts"] / s["seconds"]) if s["seconds"] else None
    return result


class _Counting:
    """Counts a search bot's playouts (or iterations) over a hand."""

    def __init__(self, bot) -> None:
        self.bot = bot
        self.playouts = 0

    def choose(self, view) -> Play:
        move = self.bot.choose(view)
        per_sample = len(view.legal_moves) if isinstance(self.bot, PIMCBot) else 1
        self.playouts += self.bot.last_samples * per_sample
        return move


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--time-limit", type=float, default=0.1, help="seconds per move, for both bots")
    parser.add_argument("--uct", type=float, default=UCT)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shipped", action="store_true",
                        help="each bot at its normal level's budget (ISMCTS iterations, PIMC's 500 playouts), not the time")
    args = parser.parse_args()
    r = compare(args.pairs, args.time_limit, args.seed, args.uct, args.shipped)
    print(f"ISMCTS vs PIMC, 2-player Box Whist, {r['time_limit']} s a move each: {r['pairs']} deal pairs, "
          f"{r['hands_decided']} decided hands; ISMCTS won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
          f"pairs won/lost by ISMCTS {r['ismcts_pairs_won']}/{r['ismcts_pairs_lost']}", flush=True)
    for name in ("pimc", "ismcts"):
        print(f"  {name}: {r[f'{name}_playouts_per_s']} playouts/s, s/move mean {r[f'{name}_mean_s_per_move']} "
              f"max {r[f'{name}_max_s_per_move']}", flush=True)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
