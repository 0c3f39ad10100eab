#!/usr/bin/env python3
"""Benchmark the Box Whist and Box engines and their heuristic bots, in one process.

Prints human-readable lines, then, as its LAST line, one JSON object:

- ``hands_per_s``: full 2-player hands per second, RandomBot against RandomBot, through
  ``local.play_hand``, with a freshly shuffled deck per hand (goal: at least 2000);
- ``heuristic_vs_random``: the share of decided 2-player hands (draws left out) that the
  heuristic bot wins against RandomBot (goal: at least 0.75). Each shuffled deck is played
  twice, once with the heuristic in seat 0 and once in seat 1, and the dealer alternates from
  one deck to the next, so seat and dealer advantages cancel and the luck of the deal largely
  does too;
- for information: the heuristic's share of hands won at 3 and 4 players (one heuristic seat,
  rotating, against random bots; its fair share is 1/players), and the heuristic's own speed;
- Box (``p2pwhist/games/box/engine.py``), 4 players:
  - ``box_games_per_s``: whole games per second, four RandomBots, HonourPolicy.REFUSE, every
    card known to the one state (``Box(4).new_hand(dealer, [], cards)``), a freshly shuffled
    deck per game;
  - ``box_heuristic_loss_rate``: under the seed rules, the share of games that one
    ``BoxHeuristicBot`` seat loses (its box empties first: ``result().points[seat] == 0``)
    against three RandomBots (fair share 0.25; goal at most 0.15). Each deck is played once
    with the heuristic in each seat and the dealer moves on from one deck to the next, as for
    Box Whist above;
  - ``box_pagat_heuristic_win_rate``: the same under ``variant="pagat"``, counting the games
    the heuristic seat wins (the last seat with box cards; fair share 0.25).

    python scripts/bench_engine.py [--hands N] [--box-games N] [--seed S]

``--hands`` is the number of 2-player heuristic-vs-random hands (the 3- and 4-player runs
play half as many each); ``--box-games`` the number of Box games per variant for the
heuristic's figures (at least 2000 for a standard error of 0.01 or less). The default run
takes well under two minutes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.bots import RandomBot  # noqa: E402
from p2pwhist.games.box.engine import Box  # noqa: E402
from p2pwhist.games.box.heuristic import BoxHeuristicBot  # noqa: E402
from p2pwhist.games.boxwhist.engine import BoxWhist  # noqa: E402
from p2pwhist.games.boxwhist.heuristic import HeuristicBot  # noqa: E402
from p2pwhist.local import play_hand, shuffled_deck  # noqa: E402

SPEED_HANDS = 3000  # random-vs-random hands timed for hands_per_s
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


def random_speed(hands: int, seed: int) -> float:
    game = BoxWhist(2)
    rng = random.Random(seed)
    bots = [RandomBot(random.Random(seed + 1)), RandomBot(random.Random(seed + 2))]
    start = time.perf_counter()
    for i in range(hands):
        play_hand(game.new_hand(i % 2, (), cards=shuffled_deck(game, rng)), bots)
    return hands / (time.perf_counter() - start)


def against_randoms(game, bot, hands: int, seed: int):
    """Each deck played once with ``bot`` in each seat in turn and random bots elsewhere, the
    dealer moving on per deck: yields (the bot's seat, the result) for ``hands`` hands."""
    rng = random.Random(seed)
    randoms = [RandomBot(random.Random(seed + 2 + seat)) for seat in range(game.players)]
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


def heuristic_vs_random(players: int, hands: int, seed: int) -> dict:
    """Play ``hands`` hands, each deck once per heuristic seat; count the heuristic's wins."""
    heuristic = _Timed(HeuristicBot(random.Random(seed + 1)))
    wins = decided = 0
    start = time.perf_counter()
    for seat, result in against_randoms(BoxWhist(players), heuristic, hands, seed):
        if any(result.points):  # a drawn hand gives nobody its point
            decided += 1
            wins += result.points[seat]
    elapsed = time.perf_counter() - start
    return {
        "players": players,
        "hands": hands,
        "decided": decided,
        "wins": wins,
        "share": wins / decided if decided else 0.0,
        "hands_per_s": hands / elapsed,
        "decisions_per_s": heuristic.calls / heuristic.seconds if heuristic.seconds else 0.0,
    }


def box_random_speed(games: int, seed: int) -> float:
    game = Box(BOX_PLAYERS)
    rng = random.Random(seed)
    bots = [RandomBot(random.Random(seed + 1 + seat)) for seat in range(BOX_PLAYERS)]
    start = time.perf_counter()
    for i in range(games):
        play_hand(game.new_hand(i % BOX_PLAYERS, [], shuffled_deck(game, rng)), bots)
    return games / (time.perf_counter() - start)


def box_heuristic_vs_random(variant: str, games: int, seed: int) -> dict:
    """Play ``games`` Box games, each deck once per heuristic seat; under the seed rules count
    the games the heuristic seat loses, under pagat's the games it wins."""
    heuristic = _Timed(BoxHeuristicBot(random.Random(seed + 1)))
    counted = 0
    start = time.perf_counter()
    for seat, result in against_randoms(Box(BOX_PLAYERS, variant), heuristic, games, seed):
        counted += result.points[seat] == (0 if variant == "seed" else 1)
    played = games
    elapsed = time.perf_counter() - start
    rate = counted / played
    return {
        "games": played,
        "rate": rate,
        "stderr": (rate * (1 - rate) / played) ** 0.5,
        "games_per_s": played / elapsed,
        "decisions_per_s": heuristic.calls / heuristic.seconds if heuristic.seconds else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=4000, help="2-player heuristic-vs-random hands (default 4000)")
    parser.add_argument(
        "--box-games", type=int, default=4000, help="Box games per variant, heuristic vs random (default 4000)"
    )
    parser.add_argument("--seed", type=int, default=2024, help="seed for decks and bots (default 2024)")
    args = parser.parse_args(argv)
    if args.hands < 2:
        parser.error("--hands must be at least 2")
    if args.box_games < BOX_PLAYERS:
        parser.error(f"--box-games must be at least {BOX_PLAYERS}")

    speed = random_speed(SPEED_HANDS, args.seed)
    print(f"engine: {speed:,.0f} random-vs-random 2-player hands/s over {SPEED_HANDS} hands (goal >= {SPEED_GOAL})")

    two = heuristic_vs_random(2, args.hands, args.seed)
    print(
        f"2 players: heuristic won {two['wins']} of {two['decided']} decided hands = {two['share']:.3f} "
        f"({two['hands'] - two['decided']} drawn of {two['hands']}; goal >= {STRENGTH_GOAL})"
    )
    others = {}
    for players in (3, 4):
        res = others[players] = heuristic_vs_random(players, max(players, args.hands // 2), args.seed + players)
        print(
            f"{players} players: heuristic seat won {res['wins']} of {res['decided']} decided hands = "
            f"{res['share']:.3f} (fair share {1 / players:.3f}; {res['hands']} hands)"
        )
    print(
        f"heuristic speed: {two['decisions_per_s']:,.0f} decisions/s; "
        f"{two['hands_per_s']:,.0f} heuristic-vs-random 2-player hands/s"
    )

    box_speed = box_random_speed(BOX_SPEED_GAMES, args.seed)
    print(
        f"box engine: {box_speed:,.0f} random-vs-random {BOX_PLAYERS}-player Box games/s over {BOX_SPEED_GAMES} games"
    )
    box_seed = box_heuristic_vs_random("seed", args.box_games, args.seed)
    print(
        f"box, seed rules: heuristic seat lost {box_seed['rate']:.3f} ± {box_seed['stderr']:.3f} of "
        f"{box_seed['games']} games (fair share {1 / BOX_PLAYERS:.3f}; goal <= {BOX_LOSS_GOAL})"
    )
    box_pagat = box_heuristic_vs_random("pagat", args.box_games, args.seed + 1)
    print(
        f"box, pagat rules: heuristic seat won {box_pagat['rate']:.3f} ± {box_pagat['stderr']:.3f} of "
        f"{box_pagat['games']} games (fair share {1 / BOX_PLAYERS:.3f})"
    )
    print(
        f"box heuristic speed: {box_seed['decisions_per_s']:,.0f} decisions/s; "
        f"{box_seed['games_per_s']:,.0f} heuristic-vs-random Box games/s"
    )
    print(
        json.dumps(
            {
                "hands_per_s": round(speed, 1),
                "heuristic_vs_random": round(two["share"], 4),
                "heuristic_vs_random_hands": two["hands"],
                "heuristic_vs_random_draws": two["hands"] - two["decided"],
                "heuristic_share_3p": round(others[3]["share"], 4),
                "heuristic_share_4p": round(others[4]["share"], 4),
                "heuristic_decisions_per_s": round(two["decisions_per_s"], 1),
                "box_games_per_s": round(box_speed, 1),
                "box_heuristic_loss_rate": round(box_seed["rate"], 4),
                "box_heuristic_games": box_seed["games"],
                "box_pagat_heuristic_win_rate": round(box_pagat["rate"], 4),
                "box_heuristic_decisions_per_s": round(box_seed["decisions_per_s"], 1),
                "seed": args.seed,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
