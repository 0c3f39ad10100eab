#!/usr/bin/env python3
"""Benchmark every registered game's engine and heuristic bot, in one process.

Each game comes from the registry (``p2pwhist.games.registry.GAMES``): its engine through its
entry's ``make``, its bots through the entry's ``bots`` ("random" and "heuristic"). Adding a
game adds its figures here with no edit to this script.

Prints human-readable lines, then, as its LAST line, one JSON object:

- for every registered game, at its default table (``default_players``) and default options:
  - ``<game>_hands_per_s``: full hands per second, random bot against random bots, through
    ``local.play_hand``, with a freshly shuffled deck per hand;
  - ``<game>_heuristic_vs_random``: the heuristic's share of the points won, one heuristic
    seat against random bots (fair share 1/players). Each shuffled deck is played once with the
    heuristic in each seat and the dealer moves on from one deck to the next, so seat and
    dealer advantages cancel and the luck of the deal largely does too. In a game whose hand
    gives 1 point to its single winner and none on a draw (Box Whist, German Whist) this is
    the share of the decided hands the heuristic wins;
- the figures the issue notes quote, under their keys of before (each left out if its game is
  no longer registered):
  - Box Whist, 2 players: ``hands_per_s`` (goal: at least 2000; the same figure as
    ``boxwhist_hands_per_s``) and ``heuristic_vs_random``, the share of decided hands (draws
    left out) the heuristic wins against a random bot (goal: at least 0.75; the same figure as
    ``boxwhist_heuristic_vs_random``), with ``heuristic_vs_random_hands``,
    ``heuristic_vs_random_draws`` and the heuristic's own speed, ``heuristic_decisions_per_s``;
    for information ``heuristic_share_3p`` and ``heuristic_share_4p``, the heuristic's share
    of the hands won at 3 and 4 players (one heuristic seat, rotating; fair share 1/players);
  - Box, 4 players: ``box_games_per_s``, whole games per second, four random bots,
    HonourPolicy.REFUSE, every card known to the one state, a freshly shuffled deck per game;
    ``box_heuristic_loss_rate``, under the seed rules, the share of games the heuristic seat
    loses (its box empties first: ``result().points[seat] == 0``) against three random bots
    (fair share 0.25; goal at most 0.15), over ``box_heuristic_games`` games, with
    ``box_heuristic_decisions_per_s``; ``box_pagat_heuristic_win_rate``, the same under
    ``variant="pagat"``, counting the games the heuristic seat wins (fair share 0.25);
- ``seed``.

    python scripts/bench_engine.py [--hands N] [--box-games N] [--seed S]

``--hands`` is the number of heuristic-vs-random hands per game at its default table (and at
2 players of Box Whist; its 3- and 4-player runs play half as many each); ``--box-games`` the
number of Box games per variant for the issue notes' Box figures (at least 2000 for a standard
error of 0.01 or less). A measurement asked for twice with the same game, table, options, count
and seed is run once.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.base import GameEntry  # noqa: E402
from p2pwhist.games.registry import GAMES  # noqa: E402
from p2pwhist.local import play_hand, shuffled_deck  # noqa: E402

SPEED_HANDS = 3000  # random-vs-random hands timed for <game>_hands_per_s
SPEED_GOAL = 2000
STRENGTH_GOAL = 0.75
BOX_SPEED_GAMES = 2000  # random-vs-random Box games timed for box_games_per_s
BOX_PLAYERS = 4  # the seed text's table (rules-box.md rule 2)
BOX_LOSS_GOAL = 0.15


class _Timed:
    """Wraps a bot and adds up the time it spends choosing."""

    def __init__(self, bot) -> None:
        self.bot = bot
        self.seconds = 0.0
        self.calls = 0

    def choose(self, view):
        start = time.perf_counter()
        move = self.bot.choose(view)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return move


def defaults(entry: GameEntry, options: dict | None = None) -> dict:
    """The game's options, those not given at their defaults."""
    given = options or {}
    return {option.name: given.get(option.name, option.default) for option in entry.options}


_measured: dict[tuple, object] = {}


def _once(kind: str, entry: GameEntry, players: int, options: dict, count: int, seed: int, measure):
    key = (kind, entry.name, players, tuple(sorted(options.items())), count, seed)
    if key not in _measured:
        _measured[key] = measure()
    return _measured[key]


def random_speed(entry: GameEntry, players: int, options: dict, hands: int, seed: int) -> float:
    """Hands per second, random bots in every seat, the dealer moving on per hand."""
    options = defaults(entry, options)

    def measure() -> float:
        game = entry.make(players, **options)
        rng = random.Random(seed)
        bots = [entry.bots["random"](random.Random(seed + 1 + seat)) for seat in range(players)]
        start = time.perf_counter()
        for i in range(hands):
            play_hand(game.new_hand(i % players, (), cards=shuffled_deck(game, rng)), bots)
        return hands / (time.perf_counter() - start)

    return _once("speed", entry, players, options, hands, seed, measure)


def against_randoms(game, bot, random_bot, hands: int, seed: int):
    """Each deck played once with ``bot`` in each seat in turn and random bots (``random_bot``,
    a factory) elsewhere, the dealer moving on per deck: yields (the bot's seat, the result)
    for ``hands`` hands."""
    rng = random.Random(seed)
    randoms = [random_bot(random.Random(seed + 2 + seat)) for seat in range(game.players)]
    played = deal = 0
    while True:
        deck = shuffled_deck(game, rng)
        dealer = deal % game.players
        deal += 1
        for seat in range(game.players):
            if played >= hands:
                return
            bots = list(randoms)
            bots[seat] = bot
            yield seat, play_hand(game.new_hand(dealer, (), cards=list(deck)), bots)
            played += 1


def heuristic_vs_random(entry: GameEntry, players: int, options: dict, hands: int, seed: int) -> dict:
    """Play ``hands`` hands of the game, each deck once per heuristic seat, and count: the hands
    decided (some seat scored), the heuristic's points and all points, the hands in which the
    heuristic scored nothing (``lost_rate``) and something (``won_rate``)."""
    options = defaults(entry, options)

    def measure() -> dict:
        heuristic = _Timed(entry.bots["heuristic"](random.Random(seed + 1)))
        wins = decided = points = lost = 0
        start = time.perf_counter()
        game = entry.make(players, **options)
        for seat, result in against_randoms(game, heuristic, entry.bots["random"], hands, seed):
            decided += any(result.points)  # a drawn hand gives nobody a point
            points += sum(result.points)
            wins += result.points[seat]
            lost += result.points[seat] == 0
        elapsed = time.perf_counter() - start
        lost_rate = lost / hands
        return {
            "players": players,
            "hands": hands,
            "decided": decided,
            "wins": wins,
            "points": points,
            "share": wins / points if points else 0.0,
            "lost_rate": lost_rate,
            "won_rate": 1 - lost_rate,
            "stderr": (lost_rate * (1 - lost_rate) / hands) ** 0.5,
            "hands_per_s": hands / elapsed,
            "decisions_per_s": heuristic.calls / heuristic.seconds if heuristic.seconds else 0.0,
        }

    return _once("heuristic", entry, players, options, hands, seed, measure)


def every_game(args) -> dict:
    """Each registered game at its default table and options: ``<game>_hands_per_s`` and
    ``<game>_heuristic_vs_random``."""
    figures = {}
    for name, entry in GAMES.items():
        players = entry.default_players
        speed = random_speed(entry, players, {}, SPEED_HANDS, args.seed)
        figures[f"{name}_hands_per_s"] = round(speed, 1)
        line = f"{entry.text.title}: {speed:,.0f} random-vs-random {players}-player hands/s over {SPEED_HANDS} hands"
        if "heuristic" in entry.bots:
            res = heuristic_vs_random(entry, players, {}, max(players, args.hands), args.seed)
            figures[f"{name}_heuristic_vs_random"] = round(res["share"], 4)
            line += (
                f"; heuristic seat won {res['wins']} of {res['points']} points = {res['share']:.3f} "
                f"(fair share {1 / players:.3f}; {res['hands']} hands, {res['decisions_per_s']:,.0f} decisions/s)"
            )
        else:
            line += "; no heuristic bot"
        print(line, flush=True)
    return figures


# The figures the issue notes quote, by the keys they quote them under. Those keys are named
# after two games and measure what is particular to them (Box's variants), so this is the one
# place the script names games: as data, looked up in the registry, each left out if its game
# is no longer registered. A new game needs nothing here: ``every_game`` measures it.
WHIST_FIGURES = "boxwhist"  # hands_per_s, heuristic_vs_random, heuristic_share_3p/4p
BOX_FIGURES = "box"  # box_games_per_s, box_heuristic_loss_rate, box_pagat_heuristic_win_rate


def whist_figures(entry: GameEntry, args) -> dict:
    speed = random_speed(entry, 2, {}, SPEED_HANDS, args.seed)
    print(f"engine: {speed:,.0f} random-vs-random 2-player hands/s over {SPEED_HANDS} hands (goal >= {SPEED_GOAL})")
    two = heuristic_vs_random(entry, 2, {}, args.hands, args.seed)
    print(
        f"2 players: heuristic won {two['wins']} of {two['decided']} decided hands = {two['share']:.3f} "
        f"({two['hands'] - two['decided']} drawn of {two['hands']}; goal >= {STRENGTH_GOAL})"
    )
    others = {}
    for players in (3, 4):
        res = others[players] = heuristic_vs_random(entry, players, {}, max(players, args.hands // 2),
                                                    args.seed + players)
        print(
            f"{players} players: heuristic seat won {res['wins']} of {res['decided']} decided hands = "
            f"{res['share']:.3f} (fair share {1 / players:.3f}; {res['hands']} hands)"
        )
    print(
        f"heuristic speed: {two['decisions_per_s']:,.0f} decisions/s; "
        f"{two['hands_per_s']:,.0f} heuristic-vs-random 2-player hands/s"
    )
    return {
        "hands_per_s": round(speed, 1),
        "heuristic_vs_random": round(two["share"], 4),
        "heuristic_vs_random_hands": two["hands"],
        "heuristic_vs_random_draws": two["hands"] - two["decided"],
        "heuristic_share_3p": round(others[3]["share"], 4),
        "heuristic_share_4p": round(others[4]["share"], 4),
        "heuristic_decisions_per_s": round(two["decisions_per_s"], 1),
    }


def box_figures(entry: GameEntry, args) -> dict:
    box_speed = random_speed(entry, BOX_PLAYERS, {}, BOX_SPEED_GAMES, args.seed)
    print(
        f"box engine: {box_speed:,.0f} random-vs-random {BOX_PLAYERS}-player Box games/s over {BOX_SPEED_GAMES} games"
    )
    box_seed = heuristic_vs_random(entry, BOX_PLAYERS, {"variant": "seed"}, args.box_games, args.seed)
    print(
        f"box, seed rules: heuristic seat lost {box_seed['lost_rate']:.3f} ± {box_seed['stderr']:.3f} of "
        f"{box_seed['hands']} games (fair share {1 / BOX_PLAYERS:.3f}; goal <= {BOX_LOSS_GOAL})"
    )
    box_pagat = heuristic_vs_random(entry, BOX_PLAYERS, {"variant": "pagat"}, args.box_games, args.seed + 1)
    print(
        f"box, pagat rules: heuristic seat won {box_pagat['won_rate']:.3f} ± {box_pagat['stderr']:.3f} of "
        f"{box_pagat['hands']} games (fair share {1 / BOX_PLAYERS:.3f})"
    )
    print(
        f"box heuristic speed: {box_seed['decisions_per_s']:,.0f} decisions/s; "
        f"{box_seed['hands_per_s']:,.0f} heuristic-vs-random Box games/s"
    )
    return {
        "box_games_per_s": round(box_speed, 1),
        "box_heuristic_loss_rate": round(box_seed["lost_rate"], 4),
        "box_heuristic_games": box_seed["hands"],
        "box_pagat_heuristic_win_rate": round(box_pagat["won_rate"], 4),
        "box_heuristic_decisions_per_s": round(box_seed["decisions_per_s"], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=4000,
                        help="heuristic-vs-random hands per game at its default table, and at 2 players of Box Whist "
                             "(default 4000)")
    parser.add_argument(
        "--box-games", type=int, default=4000, help="Box games per variant, heuristic vs random (default 4000)"
    )
    parser.add_argument("--seed", type=int, default=2024, help="seed for decks and bots (default 2024)")
    args = parser.parse_args(argv)
    if args.hands < 2:
        parser.error("--hands must be at least 2")
    if args.box_games < BOX_PLAYERS:
        parser.error(f"--box-games must be at least {BOX_PLAYERS}")

    figures = {}
    if WHIST_FIGURES in GAMES:
        figures |= whist_figures(GAMES[WHIST_FIGURES], args)
    if BOX_FIGURES in GAMES:
        figures |= box_figures(GAMES[BOX_FIGURES], args)
    figures |= every_game(args)
    print(json.dumps({**figures, "seed": args.seed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
