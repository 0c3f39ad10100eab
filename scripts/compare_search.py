#!/usr/bin/env python3
"""PIMC against ISMCTS for 2-player Box Whist, at the same time budget per move: which search
should ``--bot search`` use? (issue 12: choose the technique by measurement, not by name)

- PIMC is ``p2pwhist.bots.search.SearchBot``: per move, sample deals consistent with the view,
  play every legal move on each followed by a greedy playout, vote.
- ISMCTS is the single-observer variant (SO-ISMCTS: Cowling, Powley and Whitehouse, "Information
  Set Monte Carlo Tree Search", IEEE TCIAIG 4(2), 2012), built here on the same parts as PIMC
  (``Knowledge`` samples a determinization per iteration, ``_Sim`` plays it, ``_policy`` plays
  the rollouts, ``_score`` scores them) so that only the search differs. One tree, whose nodes
  are the moves made since the root (so every determinization shares it); each iteration
  descends by UCB1 over the moves legal in *that* determinization, counting for each child how
  often it was available (the availability count replaces the parent's visits in UCB1, since
  the opponent's legal moves change from one determinization to the next), adds one node,
  plays out greedily and backs up each mover's own score. The move played is the root's most
  visited child. Like OpenSpiel's ``ismcts.py`` (UCT selection, ``MAX_VISIT_COUNT`` final
  policy, a fresh world sample per simulation), except that nodes are keyed by the move
  history rather than by the mover's information state string, which is SO-ISMCTS proper.

Duplicate play, head to head: each deal (deck and dealer, alternating) is played twice with
the seats swapped. Both bots get the same per-move time cap and a budget of playouts too large
to reach first, so the time decides. It prints the share of decided hands ISMCTS won with a
95% Wilson interval, the pairs each won on balance, and each bot's playouts (or iterations)
per second and seconds per move; the LAST line is one JSON object with the same figures.

    python scripts/compare_search.py [--pairs N] [--time-limit SECONDS] [--uct C] [--seed S]

With time budgets the moves depend on the machine's speed and load, so a run is not exactly
repeatable; the deals are (from ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplicate import PairTally, play_timed  # scripts/duplicate.py

from p2pwhist.bots.search import Knowledge, SearchBot, _playout, _score, _Sim
from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.local import shuffled_deck

# UCB1's exploration constant. Scores are about -1 to 1 (a hand lost or won, plus 0.02 a
# trick of margin); sqrt(2)/2 is the usual choice for rewards in [0, 1] scaled to this range.
DEFAULT_UCT = 0.7
BLIND = -1  # the child for a closed box card played blind (rule 7): a chance move, not a choice
# Budgets nobody reaches within the time cap: the clock decides.
UNREACHED = 10**7


class _Node:
    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 1


class ISMCTSBot(SearchBot):
    """SO-ISMCTS for Box Whist; see the module docstring. As ``SearchBot`` but for the search:
    ``playouts`` is the number of iterations (one determinization and one playout each)."""

    def __init__(self, rng: random.Random, playouts: int, clock: Callable[[], float] | None = None,
                 time_limit: float | None = None, uct: float = DEFAULT_UCT) -> None:
        super().__init__(rng, playouts, clock, time_limit)
        self.uct = uct

    def search(self, k: Knowledge, moves: list[Play]) -> Play:
        clock = self.clock
        deadline = None if clock is None or self.time_limit is None else clock() + self.time_limit
        rng, uct = self.rng, self.uct
        root = _Node()
        by_card = {}
        for _ in range(self.playouts):
            if deadline is not None and self.last_samples and clock() >= deadline:  # type: ignore[misc]
                break
            hands, boxes, stack, my_box = k.sample(rng)
            if not by_card:  # a box card may be played only once open: the same in every sample
                cards_at = {**k.hand, **my_box}
                by_card = {cards_at[move.position]: move for move in moves}
            sim = _Sim(k.players, k.trump, hands, boxes, k.may_look[:], stack, k.trick[:], k.turn, k.tricks_won[:])
            node = root
            path = []
            while sim.turn is not None:
                seat = sim.turn
                cards, blind = sim.legal()
                choices = [BLIND] if blind and not sim.may_look[seat] else cards
                children = node.children
                untried = []
                for key in choices:
                    child = children.get(key)
                    if child is None:
                        untried.append(key)
                    else:
                        child.avail += 1
                if untried:
                    key = rng.choice(untried)
                    child = children[key] = _Node()
                else:
                    key = max(choices, key=lambda c: children[c].total / children[c].visits
                              + uct * math.sqrt(math.log(children[c].avail) / children[c].visits))
                    child = children[key]
                sim.apply(rng.choice(cards) if key == BLIND else key)
                path.append((child, seat))
                node = child
                if untried:
                    break
            _playout(sim, rng)
            for child, seat in path:
                child.visits += 1
                child.total += _score(sim.won, seat)
            self.last_samples += 1
        best = max(root.children.items(), key=lambda item: (item[1].visits, -item[0]))[0]
        return by_card[best]


def compare(pairs: int, time_limit: float, seed: int, uct: float) -> dict:
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
            ismcts = _Counting(ISMCTSBot(random.Random(bot_seed), UNREACHED, time.perf_counter, time_limit, uct))
            pimc = _Counting(SearchBot(random.Random(bot_seed + 1), UNREACHED, time.perf_counter, time_limit))
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
        per_sample = len(view.legal_moves) if isinstance(self.bot, SearchBot) else 1
        self.playouts += self.bot.last_samples * per_sample
        return move


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--time-limit", type=float, default=0.1, help="seconds per move, for both bots")
    parser.add_argument("--uct", type=float, default=DEFAULT_UCT)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    r = compare(args.pairs, args.time_limit, args.seed, args.uct)
    print(f"ISMCTS vs PIMC, 2-player Box Whist, {r['time_limit']} s a move each: {r['pairs']} deal pairs, "
          f"{r['hands_decided']} decided hands; ISMCTS won {r['share']} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}); "
          f"pairs won/lost by ISMCTS {r['ismcts_pairs_won']}/{r['ismcts_pairs_lost']}", flush=True)
    for name in ("pimc", "ismcts"):
        print(f"  {name}: {r[f'{name}_playouts_per_s']} playouts/s, s/move mean {r[f'{name}_mean_s_per_move']} "
              f"max {r[f'{name}_max_s_per_move']}", flush=True)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
