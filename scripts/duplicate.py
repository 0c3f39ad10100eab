#!/usr/bin/env python3
"""Duplicate play: the search bot against the heuristic (and random), for Box Whist (2, 3 or 4
players) and Box (``--game box``, 2 to 6 players, either variant).

Box Whist, 2 players: each deal (a shuffled deck and a dealer, alternating from deal to deal)
is played twice with the seats swapped, so the luck of the deal and of the seat cancels and
only the difference in play counts. For each pairing it prints the number of deal pairs, the
share of decided hands (draws left out) the search bot won with a 95% Wilson interval, the
number of pairs the search bot won on balance, and the mean and maximum seconds the search bot
spent per move (moves with one legal choice included: they cost nothing).

Box Whist at 3 and 4 players (``--players 3|4``), and Box at any table: each deal (deck and
dealer, the dealer moving on one seat from deal to deal) is played once per rotation of the
seats, the search bot in a different seat each time and the opponent bot in every other seat.
The measure is the search seat's share of the points won; its fair share is 1/players (with
the same bot in every seat the rotation gives each seat the same outcome once, exactly
1/players). In Box Whist (1 point to a hand's single winner, none on a draw) that is its share
of the decided hands won. In Box under the seed rules every seat but the loser scores 1, so a
share s means the search seat lost a share 1 - s × (players - 1) of its games (fair: 1/players
lost); under pagat's the winner alone scores, so the share is the games won. The games of one
deal are not independent (the rotation is built to correlate them), so the 95% interval is
clustered by deal: the ratio estimate (search points / all points) with its delta-method
standard error over deals. A Wilson interval over games (``ci95_wilson_hands``), which wrongly
treats them as independent, is in the JSON for comparison only. It also counts the deals on
which the search seat won more (less) than its fair share of that deal's points.

The LAST line is one JSON object with the same figures.

    python scripts/duplicate.py [--game boxwhist|box] [--variant seed|pagat] [--players N]
                                [--pairs N] [--level easy|normal|hard] [--playouts P]
                                [--time-limit SECONDS] [--opponents heuristic,random]
                                [--seed S] [--max-seconds SECONDS]

``--pairs`` is the number of deals (a pair at 2 players of Box Whist, a rotation otherwise).
``--max-seconds`` stops starting new deals once a pairing has run that long (the figures are
then over the deals completed).

``--level`` gives the bot a level's budget (``budgets`` in ``games/boxwhist/search.py`` and
``games/box/search.py``): its playouts (for Box Whist's ISMCTS, iterations) and its per-move
cap, with the clock (``time.perf_counter``). ``--playouts`` and ``--time-limit`` set either by
hand. Without a time limit the budget is the playout count alone and a run is repeatable from
its seed.
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

from p2pwhist.games.bots import LEVELS, RandomBot
from p2pwhist.games.box.engine import Box
from p2pwhist.games.box.heuristic import BoxHeuristicBot
from p2pwhist.games.box.search import BoxSearchBot
from p2pwhist.games.boxwhist.engine import BoxWhist
from p2pwhist.games.boxwhist.heuristic import HeuristicBot
from p2pwhist.games.boxwhist.search import SearchBot
from p2pwhist.local import shuffled_deck

# Per game: its configuration from (players, variant), its search bot, its opponents.
GAMES = {
    "boxwhist": (lambda players, variant: BoxWhist(players), SearchBot,
                 {"heuristic": HeuristicBot, "random": RandomBot}),
    "box": (Box, BoxSearchBot, {"heuristic": BoxHeuristicBot, "random": RandomBot}),
}
Z95 = 1.959964


def play_timed(hand, bots) -> list[list[float]]:
    """Play ``hand`` to its end; for each seat, the seconds each of its moves took."""
    times: list[list[float]] = [[] for _ in bots]
    while (seat := hand.turn) is not None:
        view = hand.view(seat)
        start = time.perf_counter()
        move = bots[seat].choose(view)
        times[seat].append(time.perf_counter() - start)
        hand.apply(move)
    return times


class PairTally:
    """The score of one bot over deal pairs (2 players, seats swapped): decided hands, hands
    won, and the pairs it won and lost on balance."""

    def __init__(self) -> None:
        self.won = self.decided = self.pairs_won = self.pairs_lost = self._balance = 0

    def hand(self, points, seat: int) -> None:
        if sum(points):
            self.decided += 1
            self.won += points[seat]
            self._balance += 1 if points[seat] else -1

    def end_pair(self) -> None:
        self.pairs_won += self._balance > 0
        self.pairs_lost += self._balance < 0
        self._balance = 0

    def figures(self, who: str) -> dict:
        """The JSON figures, ``who`` naming the bot scored."""
        low, high = wilson(self.won, self.decided)
        return {
            "hands_decided": self.decided,
            f"{who}_won": self.won,
            "share": round(self.won / self.decided, 4) if self.decided else None,
            "ci95": [round(low, 4), round(high, 4)],
            f"{who}_pairs_won": self.pairs_won,
            f"{who}_pairs_lost": self.pairs_lost,
        }


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial share."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def over_cap(times: list[float], time_limit: float | None) -> int:
    """How many of ``times`` ran over the cap by more than 10% (a busy machine can stall a
    process: the bot bounds its own work, not the scheduler)."""
    return sum(t > 1.1 * time_limit for t in times) if time_limit else 0


def searcher(bot_class, seed: int, playouts: int, time_limit: float | None):
    return bot_class(random.Random(seed), playouts, time.perf_counter if time_limit else None, time_limit)


def duel(opponent: str, pairs: int, playouts: int, seed: int, time_limit: float | None,
         max_seconds: float | None = None) -> dict:
    """Box Whist, 2 players: each deal played twice, the seats swapped."""
    game = BoxWhist(2)
    _, bot_class, opponents = GAMES["boxwhist"]
    rng = random.Random(seed)
    tally = PairTally()
    moves = 0
    spent = 0.0
    slowest = 0.0
    over = 0
    started = time.perf_counter()
    done = 0
    for number in range(pairs):
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            break
        done += 1
        deck = shuffled_deck(game, rng)
        dealer = number % 2
        bot_seed = rng.randrange(1 << 30)
        for search_seat in (0, 1):
            hand = game.new_hand(dealer, (), deck)
            bots = [None, None]
            bots[search_seat] = searcher(bot_class, bot_seed, playouts, time_limit)
            bots[1 - search_seat] = opponents[opponent](random.Random(bot_seed + 1))
            times = play_timed(hand, bots)[search_seat]
            moves += len(times)
            spent += sum(times)
            slowest = max([slowest, *times])
            over += over_cap(times, time_limit)
            tally.hand(hand.result().points, search_seat)
        tally.end_pair()
    return {
        "game": "boxwhist",
        "pairing": f"search vs {opponent}",
        "players": 2,
        "pairs": done,
        **tally.figures("search"),
        "mean_s_per_move": round(spent / moves, 4) if moves else None,
        "max_s_per_move": round(slowest, 4),
        "moves_over_cap": over,
        "playouts": playouts,
        "time_limit": time_limit,
        "seconds": round(time.perf_counter() - started, 1),
    }


def ratio_ci(per_deal: list[tuple[int, int]], z: float = Z95) -> tuple[float, float]:
    """A 95% interval for sum(search points) / sum(all points) with deals as clusters (delta method)."""
    k = len(per_deal)
    total = sum(d for _, d in per_deal)
    if k < 2 or total == 0:
        return 0.0, 1.0
    r = sum(w for w, _ in per_deal) / total
    var = k / (k - 1) * sum((w - r * d) ** 2 for w, d in per_deal) / (total * total)
    half = z * math.sqrt(var)
    return max(0.0, r - half), min(1.0, r + half)


def rotation(game_name: str, variant: str, opponent: str, players: int, deals: int, playouts: int, seed: int,
             time_limit: float | None, max_seconds: float | None = None, bot_class=None) -> dict:
    """Each deal played once per seat of the search bot (see the docstring); ``bot_class``
    replaces the game's search bot (``scripts/box_ceiling.py``)."""
    make, game_bot, opponents = GAMES[game_name]
    bot_class = bot_class or game_bot
    game = make(players, variant)
    rng = random.Random(seed)
    per_deal: list[tuple[int, int]] = []
    hands = decided = above = below = 0
    moves = 0
    spent = 0.0
    slowest = 0.0
    over = 0
    started = time.perf_counter()
    for number in range(deals):
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            break
        deck = shuffled_deck(game, rng)
        dealer = number % players
        bot_seed = rng.randrange(1 << 30)
        won = scored = 0
        for search_seat in range(players):
            hand = game.new_hand(dealer, (), deck)
            # The opponent in a seat gets the same seed in every rotation it sits there.
            bots = [opponents[opponent](random.Random(bot_seed + 1 + j)) for j in range(players)]
            bots[search_seat] = searcher(bot_class, bot_seed, playouts, time_limit)
            times = play_timed(hand, bots)[search_seat]
            moves += len(times)
            spent += sum(times)
            slowest = max([slowest, *times])
            over += over_cap(times, time_limit)
            hands += 1
            points = hand.result().points
            decided += sum(points) > 0
            scored += sum(points)
            won += points[search_seat]
        per_deal.append((won, scored))
        above += won * players > scored
        below += won * players < scored
    won_total = sum(w for w, _ in per_deal)
    points_total = sum(d for _, d in per_deal)
    low, high = ratio_ci(per_deal)
    wlow, whigh = wilson(won_total, points_total)
    return {
        "game": game_name,
        "variant": variant if game_name == "box" else None,
        "pairing": f"search vs {opponent}",
        "players": players,
        "deals": len(per_deal),
        "hands": hands,
        "hands_decided": decided,
        "points": points_total,
        "search_won": won_total,
        "measure": "share of points won (Box Whist: of decided hands)",
        "share": round(won_total / points_total, 4) if points_total else None,
        "ci95": [round(low, 4), round(high, 4)],
        "ci95_wilson_hands": [round(wlow, 4), round(whigh, 4)],
        "fair_share": round(1 / players, 4),
        "clear_of_fair": (low > 1 / players) if points_total else False,
        "deals_above_fair": above,
        "deals_below_fair": below,
        "mean_s_per_move": round(spent / moves, 4) if moves else None,
        "max_s_per_move": round(slowest, 4),
        "moves_over_cap": over,
        "moves": moves,
        "playouts": playouts,
        "time_limit": time_limit,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="boxwhist")
    parser.add_argument("--variant", choices=("seed", "pagat"), default="seed", help="Box only")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=50, help="deals (pairs at 2 players of Box Whist, else rotations)")
    parser.add_argument("--level", choices=LEVELS, default="normal")
    parser.add_argument("--playouts", type=int, help="default: the level's")
    parser.add_argument("--time-limit", type=float, help="seconds per move, default: the level's; 0 for none")
    parser.add_argument("--opponents", default="heuristic,random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="per pairing: start no new deal after this many seconds")
    args = parser.parse_args()
    make, bot_class, _ = GAMES[args.game]
    make(args.players, args.variant)  # refuses a table the game does not have
    budget = bot_class.budgets[args.level]
    playouts = budget.playouts if args.playouts is None else args.playouts
    time_limit = budget.seconds if args.time_limit is None else args.time_limit or None
    results = []
    for opponent in args.opponents.split(","):
        if args.players != 2 or args.game != "boxwhist":
            r = rotation(args.game, args.variant, opponent, args.players, args.pairs, playouts, args.seed,
                         time_limit, args.max_seconds)
            results.append(r)
            print(f"{r['game']} {r['variant'] or ''} {r['pairing']}, {r['players']} players: {r['deals']} deals x "
                  f"{r['players']} rotations, {r['hands']} games, {r['points']} points; search won "
                  f"{r['search_won']}, share {r['share']} "
                  f"(95% CI by deal {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}; fair share {r['fair_share']:.3f}); "
                  f"deals above/below fair {r['deals_above_fair']}/{r['deals_below_fair']}; "
                  f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}, {r['moves_over_cap']} over the cap "
                  f"by more than 10%; {r['seconds']} s", flush=True)
            continue
        r = duel(opponent, args.pairs, playouts, args.seed, time_limit, args.max_seconds)
        results.append(r)
        print(f"{r['pairing']}: {r['pairs']} deal pairs, {r['hands_decided']} decided hands, "
              f"search won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
              f"pairs won/lost {r['search_pairs_won']}/{r['search_pairs_lost']}; "
              f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}, {r['moves_over_cap']} over the cap "
                  f"by more than 10%; {r['seconds']} s", flush=True)
    print(json.dumps({"level": args.level, "results": results}))


if __name__ == "__main__":
    main()
