#!/usr/bin/env python3
"""Duplicate play for 2-player Box Whist: the search bot against the heuristic (and random).

Each deal (a shuffled deck and a dealer, alternating from deal to deal) is played twice with
the seats swapped, so the luck of the deal and of the seat cancels and only the difference
in play counts. For each pairing it prints the number of deal pairs, the share of decided
hands (draws left out) the search bot won with a 95% Wilson interval, the number of pairs
the search bot won on balance, and the mean and maximum seconds the search bot spent per
move (moves with one legal choice included: they cost nothing). The LAST line is one JSON
object with the same figures.

    python scripts/duplicate.py [--pairs N] [--playouts P] [--opponents heuristic,random]
                                [--seed S] [--time-limit SECONDS]

``--time-limit`` gives the bot the clock (``time.perf_counter``) and a per-move cap; without
it the budget is the playout count alone and a run is repeatable from its seed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.bots import RandomBot
from p2pwhist.bots.heuristic import HeuristicBot
from p2pwhist.bots.search import DEFAULT_PLAYOUTS, SearchBot
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.local import shuffled_deck

OPPONENTS = {"heuristic": HeuristicBot, "random": RandomBot}
Z95 = 1.959964


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial share."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def duel(opponent: str, pairs: int, playouts: int, seed: int, time_limit: float | None) -> dict:
    game = BoxWhist(2)
    rng = random.Random(seed)
    won = decided = pairs_won = pairs_lost = 0
    moves = 0
    spent = 0.0
    slowest = 0.0
    started = time.perf_counter()
    for number in range(pairs):
        deck = shuffled_deck(game, rng)
        dealer = number % 2
        bot_seed = rng.randrange(1 << 30)
        balance = 0
        for search_seat in (0, 1):
            hand = game.new_hand(dealer, (), deck)
            bots = [None, None]
            bots[search_seat] = SearchBot(random.Random(bot_seed), playouts,
                                          time.perf_counter if time_limit else None, time_limit)
            bots[1 - search_seat] = OPPONENTS[opponent](random.Random(bot_seed + 1))
            while (seat := hand.turn) is not None:
                view = hand.view(seat)
                if seat == search_seat:
                    t0 = time.perf_counter()
                    move = bots[seat].choose(view)
                    dt = time.perf_counter() - t0
                    moves += 1
                    spent += dt
                    slowest = max(slowest, dt)
                else:
                    move = bots[seat].choose(view)
                hand.apply(move)
            points = hand.result().points
            if sum(points):
                decided += 1
                won += points[search_seat]
                balance += 1 if points[search_seat] else -1
        pairs_won += balance > 0
        pairs_lost += balance < 0
    low, high = wilson(won, decided)
    return {
        "pairing": f"search vs {opponent}",
        "players": 2,
        "pairs": pairs,
        "hands_decided": decided,
        "search_won": won,
        "share": round(won / decided, 4) if decided else None,
        "ci95": [round(low, 4), round(high, 4)],
        "pairs_won": pairs_won,
        "pairs_lost": pairs_lost,
        "mean_s_per_move": round(spent / moves, 4) if moves else None,
        "max_s_per_move": round(slowest, 4),
        "playouts": playouts,
        "time_limit": time_limit,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS)
    parser.add_argument("--opponents", default="heuristic,random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=None)
    args = parser.parse_args()
    results = []
    for opponent in args.opponents.split(","):
        r = duel(opponent, args.pairs, args.playouts, args.seed, args.time_limit)
        results.append(r)
        print(f"{r['pairing']}: {r['pairs']} deal pairs, {r['hands_decided']} decided hands, "
              f"search won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
              f"pairs won/lost {r['pairs_won']}/{r['pairs_lost']}; "
              f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}; {r['seconds']} s", flush=True)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
