#!/usr/bin/env python3
"""Duplicate play for Box Whist (2, 3 or 4 players): the search bot against the heuristic (and random).

2 players: each deal (a shuffled deck and a dealer, alternating from deal to deal) is played
twice with the seats swapped, so the luck of the deal and of the seat cancels and only the
difference in play counts. For each pairing it prints the number of deal pairs, the share of
decided hands (draws left out) the search bot won with a 95% Wilson interval, the number of
pairs the search bot won on balance, and the mean and maximum seconds the search bot spent per
move (moves with one legal choice included: they cost nothing).

3 and 4 players (``--players 3|4``): each deal (deck and dealer, the dealer moving on one seat
from deal to deal) is played once per rotation of the seats, that is 3 or 4 times, the search
bot in a different seat each time and the opponent bot in every other seat. The measure is the
search seat's share of the points won, which in Box Whist (1 point to a hand's single winner,
none on a draw) is its share of the decided hands won; its fair share is 1/players (with the
same bot in every seat the rotation gives each seat the same outcome once, exactly 1/players).
The hands of one deal are not independent (the rotation is built to correlate them), so the
95% interval is clustered by deal: the ratio estimate (points won / decided hands) with its
delta-method standard error over deals. A Wilson interval over hands (``ci95_wilson_hands``),
which wrongly treats them as independent, is in the JSON for comparison only. It also counts
the deals on which the search seat won more (less) than its fair share of that deal's decided
hands.

The LAST line is one JSON object with the same figures.

    python scripts/duplicate.py [--players 2|3|4] [--pairs N] [--playouts P]
                                [--opponents heuristic,random] [--seed S]
                                [--time-limit SECONDS] [--max-seconds SECONDS]

``--pairs`` is the number of deals (a pair at 2 players, a rotation at 3 and 4).
``--max-seconds`` stops starting new deals once a pairing has run that long (the figures are
then over the deals completed).

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


def play_timed(hand, bots, timed_seat: int) -> list[float]:
    """Play ``hand`` to its end; the seconds each of ``timed_seat``'s moves took."""
    times = []
    while (seat := hand.turn) is not None:
        view = hand.view(seat)
        start = time.perf_counter()
        move = bots[seat].choose(view)
        if seat == timed_seat:
            times.append(time.perf_counter() - start)
        hand.apply(move)
    return times


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial share."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def duel(opponent: str, pairs: int, playouts: int, seed: int, time_limit: float | None,
         max_seconds: float | None = None) -> dict:
    game = BoxWhist(2)
    rng = random.Random(seed)
    won = decided = pairs_won = pairs_lost = 0
    moves = 0
    spent = 0.0
    slowest = 0.0
    started = time.perf_counter()
    done = 0
    for number in range(pairs):
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            break
        done += 1
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
            times = play_timed(hand, bots, search_seat)
            moves += len(times)
            spent += sum(times)
            slowest = max([slowest, *times])
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
        "pairs": done,
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


def ratio_ci(per_deal: list[tuple[int, int]], z: float = Z95) -> tuple[float, float]:
    """A 95% interval for sum(wins) / sum(decided) with deals as clusters (delta method)."""
    k = len(per_deal)
    total = sum(d for _, d in per_deal)
    if k < 2 or total == 0:
        return 0.0, 1.0
    r = sum(w for w, _ in per_deal) / total
    var = k / (k - 1) * sum((w - r * d) ** 2 for w, d in per_deal) / (total * total)
    half = z * math.sqrt(var)
    return max(0.0, r - half), min(1.0, r + half)


def rotation(opponent: str, players: int, deals: int, playouts: int, seed: int,
             time_limit: float | None, max_seconds: float | None = None) -> dict:
    """3 or 4 players: each deal played once per seat of the search bot (see the docstring)."""
    game = BoxWhist(players)
    rng = random.Random(seed)
    per_deal: list[tuple[int, int]] = []
    hands = above = below = 0
    moves = 0
    spent = 0.0
    slowest = 0.0
    started = time.perf_counter()
    for number in range(deals):
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            break
        deck = shuffled_deck(game, rng)
        dealer = number % players
        bot_seed = rng.randrange(1 << 30)
        won = decided = 0
        for search_seat in range(players):
            hand = game.new_hand(dealer, (), deck)
            # The opponent in a seat gets the same seed in every rotation it sits there.
            bots = [OPPONENTS[opponent](random.Random(bot_seed + 1 + j)) for j in range(players)]
            bots[search_seat] = SearchBot(random.Random(bot_seed), playouts,
                                          time.perf_counter if time_limit else None, time_limit)
            times = play_timed(hand, bots, search_seat)
            moves += len(times)
            spent += sum(times)
            slowest = max([slowest, *times])
            hands += 1
            points = hand.result().points
            if sum(points):
                decided += 1
                won += points[search_seat]
        per_deal.append((won, decided))
        above += won * players > decided
        below += won * players < decided
    won_total = sum(w for w, _ in per_deal)
    decided_total = sum(d for _, d in per_deal)
    low, high = ratio_ci(per_deal)
    wlow, whigh = wilson(won_total, decided_total)
    return {
        "pairing": f"search vs {opponent}",
        "players": players,
        "deals": len(per_deal),
        "hands": hands,
        "hands_decided": decided_total,
        "search_won": won_total,
        "measure": "share of decided hands won (= share of points won)",
        "share": round(won_total / decided_total, 4) if decided_total else None,
        "ci95": [round(low, 4), round(high, 4)],
        "ci95_wilson_hands": [round(wlow, 4), round(whigh, 4)],
        "fair_share": round(1 / players, 4),
        "clear_of_fair": (low > 1 / players) if decided_total else False,
        "deals_above_fair": above,
        "deals_below_fair": below,
        "mean_s_per_move": round(spent / moves, 4) if moves else None,
        "max_s_per_move": round(slowest, 4),
        "moves": moves,
        "playouts": playouts,
        "time_limit": time_limit,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--pairs", type=int, default=50, help="deals (pairs at 2 players, rotations at 3 and 4)")
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS)
    parser.add_argument("--opponents", default="heuristic,random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="per pairing: start no new deal after this many seconds")
    args = parser.parse_args()
    results = []
    for opponent in args.opponents.split(","):
        if args.players != 2:
            r = rotation(opponent, args.players, args.pairs, args.playouts, args.seed, args.time_limit,
                         args.max_seconds)
            results.append(r)
            print(f"{r['pairing']}, {r['players']} players: {r['deals']} deals x {r['players']} rotations, "
                  f"{r['hands']} hands, {r['hands_decided']} decided; search won {r['search_won']}, "
                  f"share of decided hands (= of points) {r['share']} "
                  f"(95% CI by deal {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}; fair share {r['fair_share']:.3f}); "
                  f"deals above/below fair {r['deals_above_fair']}/{r['deals_below_fair']}; "
                  f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}; {r['seconds']} s", flush=True)
            continue
        r = duel(opponent, args.pairs, args.playouts, args.seed, args.time_limit, args.max_seconds)
        results.append(r)
        print(f"{r['pairing']}: {r['pairs']} deal pairs, {r['hands_decided']} decided hands, "
              f"search won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
              f"pairs won/lost {r['pairs_won']}/{r['pairs_lost']}; "
              f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}; {r['seconds']} s", flush=True)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
