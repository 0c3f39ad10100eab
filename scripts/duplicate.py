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
nothing), and (``per_deal``) each pair's hands won and decided, for ``scripts/paired.py``. This
needs a hand's points to be 1 to its single winner, none on a draw.

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
fair share of that deal's points, and (``per_deal``) each deal's search points and all its
points, so that ``scripts/paired.py`` can compare two runs on the same deals deal by deal.

Every 20 deals a progress line goes to stderr (the deals done, the wins or points so far,
the seconds); a kill (SIGTERM) or Ctrl-C stops the run and its worker processes. The LAST line
is one JSON object with the same figures. Each result names its ``game`` and
gives the game's options by name (in rotations ``variant`` is always there, None for a game
without one).

    python scripts/duplicate.py [--game NAME] [--players N] [--NAME VALUE | --option NAME=VALUE ...]
                                [--pairs N] [--level easy|normal|hard] [--playouts P]
                                [--time-limit SECONDS] [--opponents heuristic,random]
                                [--search SPEC] [--workers W] [--jobs J]
                                [--mode auto|pairs|rotations] [--seed S] [--max-seconds SECONDS]

A bot is named as its game's registry names it, with its maker's switches if any:
``--opponents 'heuristic;search(pimc=off,endgame=off,inference=off)'`` measures the search bot
against the heuristic and against itself with three techniques off (for Box Whist, the ISMCTS of
before issue 25); ``--search 'search(inference=off)'`` measures the search bot with one off (an
ablation). ``--workers`` splits the measured bot's every move over that many processes (both
cores: ``p2pwhist.cores``); ``--jobs`` plays that many deals at once, one per process, which
changes nothing in the games (each deal's deck, dealer and seeds come from ``--seed`` in deal
order) but their timing, since the jobs share the machine.

``--pairs`` is the number of deals (a pair in ``pairs`` mode, a rotation otherwise).
``--max-seconds`` stops starting new deals once a pairing has run that long (the figures are
then over the deals completed).

``--level`` gives the bot a level's budget (``budgets`` of the game's search bot, in its
folder's ``search.py``): its playouts (for Box Whist's, ISMCTS iterations at 2 players), its
further counts if any (Box Whist's PIMC playouts at 3 and 4, ``pimc_playouts``), its per-move
cap, with the clock (``time.perf_counter``), and its switches if any (Box Whist's easy plays
with inference off). ``--playouts`` and ``--time-limit`` set the first and the cap by hand,
``--search`` the others (``'search(pimc_playouts=500)'``). Without a time limit the budget is
the counts alone and a run is repeatable from its seed.

A searching opponent plays at the measured bot's budget (playouts, counts and cap), without its
level's switches, unless ``--opponent-level`` gives it a level of its own (that level's
budget and switches; a cap only when the measured bot has one) or its spec says otherwise
(``'search(playouts=1000)'``). So a head to head of levels is ``--level hard --opponent-level
normal``; ``--level hard --opponents search`` is hard's budget on both sides. Each result gives
both budgets (``playouts``, ``opponent_playouts``, None for an opponent that does not search).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2pwhist.games.base import ConfigError, GameEntry
from p2pwhist.games.bots import LEVELS, searches
from p2pwhist.games.registry import GAMES, chosen, options_offered
from p2pwhist.local import shuffled_deck

Z95 = 1.959964
MODES = ("auto", "pairs", "rotations")
PROGRESS_EVERY = 20  # deals between progress lines on stderr


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
    won, the pairs it won and lost on balance, and (``per_pair``) each pair's hands won and
    decided, so that ``scripts/paired.py`` can compare two runs pair by pair."""

    def __init__(self) -> None:
        self.won = self.decided = self.pairs_won = self.pairs_lost = 0
        self.per_pair: list[tuple[int, int]] = []
        self._pair_start = (0, 0)  # won, decided when the pair began

    def hand(self, points, seat: int) -> None:
        if sum(points) > 1 or max(points) > 1:
            raise ValueError(f"deal pairs need 1 point to a hand's single winner, not {list(points)}: "
                             "use --mode rotations")
        if sum(points):
            self.decided += 1
            self.won += points[seat]

    def end_pair(self) -> None:
        won, decided = self.won - self._pair_start[0], self.decided - self._pair_start[1]
        self.per_pair.append((won, decided))
        self._pair_start = (self.won, self.decided)
        lost = decided - won
        self.pairs_won += won > lost
        self.pairs_lost += won < lost

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


@dataclass(frozen=True)
class BotSpec:
    """A bot by the name its game's registry gives it, with keyword arguments for its maker:
    ``search(endgame=off,inference=off)`` is the search bot with two of its techniques off
    (for a search bot they are its constructor's switches; ``on``/``off`` read as booleans)."""

    name: str
    kwargs: tuple[tuple[str, object], ...] = ()
    maker: Any = None  # a bot class to use instead of the registry's (``scripts/box_ceiling.py``)

    @staticmethod
    def parse(text: str) -> BotSpec:
        name, _, rest = text.strip().partition("(")
        kwargs = []
        for item in filter(None, rest.rstrip(")").split(",") if rest else []):
            key, _, value = item.partition("=")
            kwargs.append((key.strip(), _value(value.strip())))
        return BotSpec(name.strip(), tuple(kwargs))

    def __str__(self) -> str:
        given = ",".join(f"{k}={'on' if v is True else 'off' if v is False else v}" for k, v in self.kwargs)
        return f"{self.name}({given})" if given else self.name


def _value(text: str) -> object:
    if text in ("on", "true"):
        return True
    if text in ("off", "false"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Setting:
    """Everything a deal's games need, as plain values (a job may run in another process): the
    game, the subject (the search bot, as a ``BotSpec``) and its opponent, the budget, and the
    subject's parts per move (``workers``, run on that many cores by ``p2pwhist.cores``)."""

    game: str
    options: tuple[tuple[str, object], ...]
    players: int
    subject: BotSpec
    opponent: BotSpec
    playouts: int
    time_limit: float | None
    workers: int = 1


def factory_of(setting: Setting, spec: BotSpec):
    """The maker of the bot ``spec`` names: its own, else the game registry's."""
    return spec.maker or GAMES[setting.game].bots[spec.name]


def opponent_playouts(setting: Setting) -> int | None:
    """The opponent's budget if it searches (``make`` gives it the subject's unless its spec
    says otherwise), else None."""
    if not searches(factory_of(setting, setting.opponent)):
        return None
    return dict(setting.opponent.kwargs).get("playouts", setting.playouts)  # type: ignore[return-value]


def make(setting: Setting, spec: BotSpec, seed: int, cores):
    """The bot ``spec`` names: a searching bot at the setting's budget (and, the subject, its
    workers), any other bot from its seed."""
    factory = factory_of(setting, spec)
    if searches(factory):
        parallel = {"workers": cores.workers, "runner": cores.run} if cores is not None else {}
        return factory(random.Random(seed), **{"playouts": setting.playouts, "time_limit": setting.time_limit,
                                               "clock": time.perf_counter if setting.time_limit else None,
                                               **parallel, **dict(spec.kwargs)})
    return factory(random.Random(seed))


_CORES = None  # the subject's worker processes, one pool per job process (``Setting.workers``)


def play_deal(setting: Setting, deck, dealer: int, bot_seed: int, seats: list[int]) -> list[tuple]:
    """The deal's games, one per seat of the subject in ``seats``: (points, the subject's seat,
    its seconds per move). Each opponent seat gets the same seed in every game of the deal."""
    global _CORES
    if setting.workers > 1 and _CORES is None:
        from p2pwhist.cores import Cores
        _CORES = Cores(setting.workers)
    entry = GAMES[setting.game]
    game = entry.make(setting.players, **dict(setting.options))
    out = []
    for seat in seats:
        hand = game.new_hand(dealer, (), deck)
        bots = [make(setting, setting.opponent, bot_seed + 1 + j, None) for j in range(setting.players)]
        bots[seat] = make(setting, setting.subject, bot_seed, _CORES)
        times = play_timed(hand, bots)[seat]
        out.append((tuple(hand.result().points), seat, times))
    return out


def deals(setting: Setting, count: int, seed: int, seats_of: Callable[[int], list[int]], jobs: int,
          max_seconds: float | None) -> Iterator[list[tuple]]:
    """Each deal's games in deal order, ``jobs`` deals at a time in worker processes (one
    process: here). The decks, dealers and seeds come from ``seed`` in deal order, so the games
    are the same whatever ``jobs`` (without a time limit). Stops starting deals once
    ``max_seconds`` have passed."""
    entry = GAMES[setting.game]
    game = entry.make(setting.players, **dict(setting.options))
    rng = random.Random(seed)
    tasks = []
    for number in range(count):
        deck = shuffled_deck(game, rng)
        tasks.append((setting, deck, number % setting.players, rng.randrange(1 << 30), seats_of(number)))
    started = time.perf_counter()
    if jobs == 1:
        for task in tasks:
            if max_seconds is not None and time.perf_counter() - started >= max_seconds:
                return
            yield play_deal(*task)
        return
    with multiprocessing.get_context("forkserver").Pool(jobs) as pool:
        for games in pool.imap(_play_task, tasks):
            yield games
            if max_seconds is not None and time.perf_counter() - started >= max_seconds:
                pool.terminate()
                return


def _play_task(task: tuple) -> list[tuple]:
    return play_deal(*task)


class Timing:
    """The subject's seconds per move over a run."""

    def __init__(self, time_limit: float | None) -> None:
        self.time_limit = time_limit
        self.moves = 0
        self.spent = self.slowest = 0.0
        self.over = 0

    def add(self, times: list[float]) -> None:
        self.moves += len(times)
        self.spent += sum(times)
        self.slowest = max([self.slowest, *times])
        self.over += over_cap(times, self.time_limit)

    def figures(self) -> dict:
        return {"mean_s_per_move": round(self.spent / self.moves, 4) if self.moves else None,
                "max_s_per_move": round(self.slowest, 4), "moves_over_cap": self.over, "moves": self.moves}


def progress(line: str, started: float) -> None:
    """A long run's progress on stderr, so that stdout stays the figures alone."""
    print(f"... {line}; {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def duel(setting: Setting, pairs: int, seed: int, jobs: int = 1, max_seconds: float | None = None) -> dict:
    """2 players: each deal played twice, the seats swapped."""
    tally = PairTally()
    timing = Timing(setting.time_limit)
    started = time.perf_counter()
    done = 0
    for games in deals(setting, pairs, seed, lambda number: [0, 1], jobs, max_seconds):
        done += 1
        for points, seat, times in games:
            timing.add(times)
            tally.hand(points, seat)
        tally.end_pair()
        if done % PROGRESS_EVERY == 0:
            progress(f"{done} of {pairs} pairs: {setting.subject} won {tally.won} of {tally.decided} decided hands",
                     started)
    return {
        "game": setting.game,
        **dict(setting.options),
        "pairing": f"{setting.subject} vs {setting.opponent}",
        "players": 2,
        "pairs": done,
        **tally.figures("search"),
        "seed": seed,
        "per_deal": tally.per_pair,  # (search hands won, hands decided) by pair: scripts/paired.py
        **timing.figures(),
        "playouts": setting.playouts,
        "opponent_playouts": opponent_playouts(setting),
        "time_limit": setting.time_limit,
        "workers": setting.workers,
        "jobs": jobs,
        "seconds": round(time.perf_counter() - started, 1),
    }


def ratio_terms(per_deal: list[tuple[int, int]]) -> tuple[float, list[float]]:
    """The ratio sum(search points) / sum(all points) and each deal's term of its delta-method
    linearization, (w - r d) / total: the ratio's variance with deals as clusters is
    k / (k - 1) times their sum of squares (``scripts/paired.py`` differences two runs' terms)."""
    total = sum(d for _, d in per_deal)
    r = sum(w for w, _ in per_deal) / total
    return r, [(w - r * d) / total for w, d in per_deal]


def cluster_half_width(terms: list[float], z: float = Z95) -> float:
    """Half the 95% interval of a sum of per-cluster ``terms`` (at least 2)."""
    k = len(terms)
    return z * math.sqrt(k / (k - 1) * sum(t * t for t in terms))


def ratio_ci(per_deal: list[tuple[int, int]]) -> tuple[float, float]:
    """A 95% interval for sum(search points) / sum(all points) with deals as clusters (delta method)."""
    if len(per_deal) < 2 or not sum(d for _, d in per_deal):
        return 0.0, 1.0
    r, terms = ratio_terms(per_deal)
    half = cluster_half_width(terms)
    return max(0.0, r - half), min(1.0, r + half)


def rotation(setting: Setting, deals_: int, seed: int, jobs: int = 1, max_seconds: float | None = None) -> dict:
    """Each deal played once per seat of the search bot (see the docstring)."""
    players = setting.players
    per_deal: list[tuple[int, int]] = []
    hands = decided = above = below = 0
    timing = Timing(setting.time_limit)
    started = time.perf_counter()
    for games in deals(setting, deals_, seed, lambda number: list(range(players)), jobs, max_seconds):
        won = scored = 0
        for points, seat, times in games:
            timing.add(times)
            hands += 1
            decided += sum(points) > 0
            scored += sum(points)
            won += points[seat]
        per_deal.append((won, scored))
        above += won * players > scored
        below += won * players < scored
        if len(per_deal) % PROGRESS_EVERY == 0:
            progress(f"{len(per_deal)} of {deals_} deals: {setting.subject}'s seat won "
                     f"{sum(w for w, _ in per_deal)} of {sum(d for _, d in per_deal)} points", started)
    won_total = sum(w for w, _ in per_deal)
    points_total = sum(d for _, d in per_deal)
    low, high = ratio_ci(per_deal)
    wlow, whigh = wilson(won_total, points_total)
    return {
        "game": setting.game,
        "variant": None,
        **dict(setting.options),
        "pairing": f"{setting.subject} vs {setting.opponent}",
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
        "seed": seed,
        "per_deal": per_deal,  # (search points, all points) by deal: scripts/paired.py compares two runs
        **timing.figures(),
        "playouts": setting.playouts,
        "opponent_playouts": opponent_playouts(setting),
        "time_limit": setting.time_limit,
        "workers": setting.workers,
        "jobs": jobs,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _bot_list(text: str) -> list[str]:
    """Bots separated by ';', or by ',' outside parentheses."""
    out, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == ";" or (char == "," and depth == 0):
            out.append(current)
            current = ""
        else:
            current += char
    return [item for item in [*out, current] if item.strip()]


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
    parser.add_argument("--opponent-level", choices=LEVELS, default=None,
                        help="the searching opponents' level: its budget, cap and switches (their own switches "
                             "win); default: the measured bot's budget and cap, without its level's switches")
    parser.add_argument("--opponents", default="heuristic,random",
                        help=f"the game's bots, separated by ';' or ',' (this game's: {', '.join(entry.bots)}), each "
                             "with its maker's switches if any: 'search(endgame=off,inference=off)'")
    parser.add_argument("--search", default="search", help="the bot measured: the search bot, with its switches if "
                        "any, e.g. 'search(inference=off)' (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=1, help="the measured bot's parts per move, each on a core "
                        "of its own (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="deals played at once, each in a process (default 1)")
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
    args.opponents = [BotSpec.parse(text) for text in _bot_list(args.opponents)]
    args.search = BotSpec.parse(args.search)
    if args.search.name != next(name for name, bot in entry.bots.items() if bot is entry.search_bot):
        parser.error(f"--search names the search bot, not {args.search.name!r}")
    unknown = [spec.name for spec in args.opponents if spec.name not in entry.bots]
    if unknown:
        parser.error(f"{args.game} has no {', '.join(unknown)} bot (its bots: {', '.join(entry.bots)})")
    if args.players is None:
        args.players = entry.default_players
    if args.mode == "pairs" and args.players != 2:
        parser.error("--mode pairs is for 2 players")
    return args, entry, options


def budgets(r: dict) -> str:
    """A result's budgets in words: a head-to-head's reader must see both sides'."""
    words = f"{r['playouts']} playouts"
    if r["opponent_playouts"] is not None:
        words += f" against {r['opponent_playouts']}"
    return words


def mode_of(r: dict) -> str:
    """Which run a result is of: ``duel``'s ("pairs", which alone counts ``pairs``) or
    ``rotation``'s ("rotations")."""
    return "pairs" if "pairs" in r else "rotations"


def figures(r: dict) -> str:
    """A result's tally, share and balance in words (``duel``'s or ``rotation``'s)."""
    if mode_of(r) == "pairs":
        return (f"{r['pairs']} deal pairs, {r['hands_decided']} decided hands, search won {r['share']} "
                f"(95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
                f"pairs won/lost {r['search_pairs_won']}/{r['search_pairs_lost']}")
    return (f"{r['deals']} deals x {r['players']} rotations, {r['hands']} games, {r['points']} points; "
            f"search won {r['search_won']}, share {r['share']} "
            f"(95% CI by deal {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}; fair share {r['fair_share']:.3f}); "
            f"deals above/below fair {r['deals_above_fair']}/{r['deals_below_fair']}")


def main(argv: list[str] | None = None) -> None:
    # A kill ends the run as Ctrl-C does: the pool's workers stop too (killed at once, they
    # would play on for nobody).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    args, entry, options = parse_args(argv)
    pairs = args.mode == "pairs" or (args.mode == "auto" and head_to_head(entry, args.players))
    budget = entry.search_bot.budgets[args.level]
    playouts = budget.playouts if args.playouts is None else args.playouts
    time_limit = budget.seconds if args.time_limit is None else args.time_limit or None
    # --search's own switches win
    subject = BotSpec(args.search.name, (*budget.counts, *budget.switches, *args.search.kwargs))
    results = []
    for opponent in args.opponents:
        if entry.bots[opponent.name] is entry.search_bot:
            if args.opponent_level is None:  # the subject's budget: its playouts and cap (``make``), its counts
                given: tuple[tuple[str, object], ...] = budget.counts
            else:
                theirs = entry.search_bot.budgets[args.opponent_level]
                cap = (("time_limit", theirs.seconds),) if time_limit else ()  # no clock, no cap: as the subject
                given = (("playouts", theirs.playouts), *cap, *theirs.counts, *theirs.switches)
            opponent = BotSpec(opponent.name, (*given, *opponent.kwargs))  # the spec's own word wins
        setting = Setting(args.game, tuple(all_options(entry, options).items()), args.players, subject, opponent,
                          playouts, time_limit, args.workers)
        r = (duel if pairs else rotation)(setting, args.pairs, args.seed, args.jobs, args.max_seconds)
        results.append(r)
        who = (f"{r['pairing']} ({budgets(r)}):" if pairs else
               f"{r['game']} {r['variant'] or ''} {r['pairing']} ({budgets(r)}), {r['players']} players:")
        print(f"{who} {figures(r)}; s/move mean {r['mean_s_per_move']} max {r['max_s_per_move']}, "
              f"{r['moves_over_cap']} over the cap by more than 10%; {r['seconds']} s", flush=True)
    print(json.dumps({"level": args.level, "results": results}))


if __name__ == "__main__":
    main()
