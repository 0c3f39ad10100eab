#!/usr/bin/env python3
"""Duplicate play: a game's search bot against its other bots (by default its heuristic and
random bots), for any registered game at any table it allows, with any of its options.

Every game comes from the registry (``p2pwhist.games.registry``): ``--game`` is one of its
names (default: the registry's first game), ``--players`` one of the entry's table sizes
(default: its ``default_players``), its options given as ``--NAME VALUE`` (``--game G --help``
lists G's) or ``--option NAME=VALUE`` (repeatable), the search bot the entry's ``search_bot``
and the opponents named by ``--opponents`` among the entry's ``bots``. Adding a game needs no
edit here.

At 2 players of a head-to-head game (one whose default table is 2 players: Box Whist, German
Whist), the deals are played in pairs (``--mode pairs``): each deal (a shuffled deck and a
dealer, alternating from deal to deal) is played twice with the seats swapped, so the luck of
the deal and of the seat cancels and only the difference in play counts. For each pairing it
prints the number of deal pairs, the share of decided hands (draws left out) the search bot won
with a 95% Wilson interval, the number of pairs the search bot won on balance, and the mean and
maximum seconds the search bot spent per move (moves with one legal choice included: they cost
nothing). This needs a hand's points to be 1 to its single winner, none on a draw.

Otherwise (``--mode rotations``: more players, or a game whose default table is larger, such as
Box): each deal (deck and dealer, the dealer moving on one seat from deal to deal) is played
once per rotation of the seats, the search bot in a different seat each time and the opponent
bot in every other seat. The measure is the search seat's share of the points won; its fair
share is 1/players (with the same bot in every seat the rotation gives each seat the same
outcome once, exactly 1/players). Where a hand gives 1 point to its single winner and none on a
draw (Box Whist) that is its share of the decided hands won. In Box under the seed rules every
seat but the loser scores 1, so a share s means the search seat lost a share 1 - s × (players -
1) of its games (fair: 1/players lost); under pagat's the winner alone scores, so the share is
the games won. The games of one deal are not independent (the rotation is built to correlate
them), so the 95% interval is clustered by deal: the ratio estimate (search points / all
points) with its delta-method standard error over deals. A Wilson interval over games
(``ci95_wilson_hands``), which wrongly treats them as independent, is in the JSON for
comparison only. It also counts the deals on which the search seat won more (less) than its
fair share of that deal's points.

The LAST line is one JSON object with the same figures. Each result names its ``game`` and
gives the game's options by name (in rotations ``variant`` is always there, None for a game
without one).

    python scripts/duplicate.py [--game NAME] [--players N] [--NAME VALUE | --option NAME=VALUE ...]
                                [--pairs N] [--level easy|normal|hard] [--playouts P]
                                [--time-limit SECONDS] [--opponents heuristic,random]
                                [--mode auto|pairs|rotations] [--seed S] [--max-seconds SECONDS]

``--pairs`` is the number of deals (a pair in ``pairs`` mode, a rotation otherwise).
``--max-seconds`` stops starting new deals once a pairing has run that long (the figures are
then over the deals completed).

``--level`` gives the bot a level's budget (``budgets`` of the game's search bot, in its
folder's ``search.py``): its playouts (for Box Whist's ISMCTS, iterations) and its per-move
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
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.base import ConfigError, GameEntry
from p2pwhist.games.bots import LEVELS
from p2pwhist.games.registry import GAMES, chosen, options_offered
from p2pwhist.local import shuffled_deck

Z95 = 1.959964
MODES = ("auto", "pairs", "rotations")


def all_options(entry: GameEntry, options: Mapping[str, object] | str | None) -> dict:
    """Every option of the game, those not in ``options`` at their defaults. A str is the
    ``variant`` option (``scripts/box_ceiling.py`` passes Box's variant so)."""
    if isinstance(options, str):
        options = {"variant": options}
    given = dict(options or {})
    return {option.name: given.get(option.name, option.default) for option in entry.options}


def head_to_head(entry: GameEntry, players: int) -> bool:
    """Whether ``--mode auto`` plays deal pairs: at 2 players of a game played head to head by
    default. (A ``GameEntry`` does not say how a hand's points are shared; a game whose default
    table is 2 players is taken to give 1 point to a hand's single winner, which
    ``PairTally`` checks hand by hand.)"""
    return players == 2 == entry.default_players


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
        if sum(points) > 1 or max(points) > 1:
            raise ValueError(f"deal pairs need 1 point to a hand's single winner, not {list(points)}: "
                             "use --mode rotations")
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


def duel(game_name: str, options: Mapping[str, object] | None, opponent: str, pairs: int, playouts: int, seed: int,
         time_limit: float | None, max_seconds: float | None = None) -> dict:
    """2 players: each deal played twice, the seats swapped."""
    entry = GAMES[game_name]
    options = all_options(entry, options)
    game = entry.make(2, **options)
    bot_class, opponents = entry.search_bot, entry.bots
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
        "game": game_name,
        **options,
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


def rotation(game_name: str, options: Mapping[str, object] | str | None, opponent: str, players: int, deals: int,
             playouts: int, seed: int, time_limit: float | None, max_seconds: float | None = None,
             bot_class=None) -> dict:
    """Each deal played once per seat of the search bot (see the docstring); ``options`` the
    game's (see ``all_options``); ``bot_class`` replaces the game's search bot
    (``scripts/box_ceiling.py``)."""
    entry = GAMES[game_name]
    options = all_options(entry, options)
    bot_class = bot_class or entry.search_bot
    opponents = entry.bots
    game = entry.make(players, **options)
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
        "variant": None,
        **options,
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


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, GameEntry, dict]:
    """The arguments, the game's entry and the options given (by name); the game's own options
    are offered once ``--game`` is known, so ``--game G --help`` lists them."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--game", choices=list(GAMES), default=next(iter(GAMES)))
    known, _ = first.parse_known_args(argv)
    entry = GAMES[known.game]

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=list(GAMES), default=next(iter(GAMES)),
                        help="a registered game (default: %(default)s)")
    parser.add_argument("--players", type=int, choices=entry.players, default=None,
                        help=f"the table (default: the game's, {entry.default_players})")
    own = {option.name: option for option in entry.options}
    for name, offered in options_offered().items():
        option = own.get(name)
        if option is None:  # another game's: refused by name below, not by argparse
            parser.add_argument(f"--{name}", type=offered.type, default=None, help=argparse.SUPPRESS)
        else:
            parser.add_argument(f"--{name}", type=option.type, choices=option.choices, default=None,
                                help=f"{option.help} (default: {option.default})")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="one of the game's options, by name (repeatable)"
                             + (f": {', '.join(own)}" if own else "; this game has none"))
    parser.add_argument("--pairs", type=int, default=50, help="deals (pairs in pairs mode, else rotations)")
    parser.add_argument("--level", choices=LEVELS, default="normal")
    parser.add_argument("--playouts", type=int, help="default: the level's")
    parser.add_argument("--time-limit", type=float, help="seconds per move, default: the level's; 0 for none")
    parser.add_argument("--opponents", default="heuristic,random",
                        help=f"the game's bots, comma-separated (this game's: {', '.join(entry.bots)})")
    parser.add_argument("--mode", choices=MODES, default="auto",
                        help="pairs (2 players, seats swapped) or rotations; auto: pairs at 2 players of a game "
                             "whose default table is 2 players")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="per pairing: start no new deal after this many seconds")
    args = parser.parse_args(argv)

    options = {name: value for name in options_offered() if (value := getattr(args, name)) is not None}
    for item in args.option:
        name, sep, text = item.partition("=")
        if not sep:
            parser.error(f"--option takes NAME=VALUE, not {item!r}")
        kind = own[name].type if name in own else str
        try:
            options[name] = kind(text)
        except ValueError:
            parser.error(f"--option {name} takes a {kind.__name__}, not {text!r}")
    try:
        chosen(args.game, args.players, options)  # refuses a table or an option the game does not have
    except ConfigError as error:
        parser.error(str(error))
    if entry.search_bot is None:
        parser.error(f"{args.game} has no search bot")
    unknown = [name for name in args.opponents.split(",") if name not in entry.bots]
    if unknown:
        parser.error(f"{args.game} has no {', '.join(unknown)} bot (its bots: {', '.join(entry.bots)})")
    if args.players is None:
        args.players = entry.default_players
    if args.mode == "pairs" and args.players != 2:
        parser.error("--mode pairs is for 2 players")
    return args, entry, options


def main(argv: list[str] | None = None) -> None:
    args, entry, options = parse_args(argv)
    pairs = args.mode == "pairs" or (args.mode == "auto" and head_to_head(entry, args.players))
    budget = entry.search_bot.budgets[args.level]
    playouts = budget.playouts if args.playouts is None else args.playouts
    time_limit = budget.seconds if args.time_limit is None else args.time_limit or None
    results = []
    for opponent in args.opponents.split(","):
        if not pairs:
            r = rotation(args.game, options, opponent, args.players, args.pairs, playouts, args.seed,
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
        r = duel(args.game, options, opponent, args.pairs, playouts, args.seed, time_limit, args.max_seconds)
        results.append(r)
        print(f"{r['pairing']}: {r['pairs']} deal pairs, {r['hands_decided']} decided hands, "
              f"search won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
              f"pairs won/lost {r['search_pairs_won']}/{r['search_pairs_lost']}; "
              f"s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}, {r['moves_over_cap']} over the cap "
              f"by more than 10%; {r['seconds']} s", flush=True)
    print(json.dumps({"level": args.level, "results": results}))


if __name__ == "__main__":
    main()
