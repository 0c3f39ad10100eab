"""What every game's computer players share. A bot sees only its seat's view and returns one of
its legal moves.

Which bots a game has is said by its registry entry (``p2pwhist.games.registry.GAMES``); each
game's own bots live in its folder, and ``RandomBot``, here, plays any game. This module sits in
``games/`` with the interface, below both the games' bots and the code that runs them, so every
import arrow points down to it.

Bots take their randomness as a ``random.Random`` passed in, so a run is repeatable from its
seed and nothing here touches global state.

A searching bot has *levels* (``LEVELS``): each is a ``Budget``, a number of playouts per move
(which makes a run repeatable from its seed) and a hard cap in seconds per move (which needs a
clock, passed in by the caller: the bots never read one themselves). ``make_bot`` builds any
bot from its registry factory, at a level if it has levels.

A searching bot may spread a move over several cores (root parallelism): it runs ``workers``
parts, each the level's whole budget with a seed drawn from its ``rng`` in turn (so N cores
think N times as much in the same time), hands them to a ``Runner``, and adds up what the parts
found. The runner is passed in too: ``in_turn``, here, runs the parts one after the other in
this process; the edge's ``p2pwhist.cores.Cores`` runs them at once in worker processes. Either
way the parts and their sum are the same, so a move depends on the seed and the number of
workers, never on the runner (without a clock).
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeGuard

from p2pwhist.cards import card_mask
from p2pwhist.games.base import BotFactory, ConfigError, Play, View
from p2pwhist.games.doubledummy import equivalent_runs

LEVELS = ("easy", "normal", "hard")
# The level ``play`` and ``--bot search`` use unless told: the strongest whose cap is within
# about a second a move (issue 12); ``hard`` thinks up to three seconds.
DEFAULT_LEVEL = "normal"
MIN_SAMPLES = 4  # deals per decision, however many choices


# Runs ``work(*job)`` for each job and returns the results in the jobs' order. ``work`` is a
# module-level function and the jobs plain values, so that a runner may send them to another
# process.
Runner = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]]


def in_turn(work: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[Any]:
    """The runner of one core: each job in this process, one after the other."""
    return [work(*job) for job in jobs]


# A game's way to sample one deal for ``Searching.vote``: ``deal(*job, rng)`` returns a function
# that plays choice i on that deal to the end and scores it.
Deal = Callable[..., Callable[[int], float]]


def vote_part(deal: Deal, job: tuple[Any, ...], choices: int, deals: int, seed: int,
              clock: Callable[[], float] | None, deadline: float | None) -> tuple[list[float], int]:
    """One part of ``Searching.vote``: ``deals`` sampled deals, every choice played out on each
    (the same deal for all: common random numbers), each choice's total score and the deals
    finished. Once the first deal has been played out with every choice, the clock is read
    before each playout, and at ``deadline`` the part stops: a deal cut short is left out, so
    every choice is judged on the same deals."""
    rng = random.Random(seed)
    totals = [0.0] * choices
    done = 0
    for _ in range(deals):
        play = deal(*job, rng)
        scores = []
        for i in range(choices):
            if deadline is not None and done and clock() >= deadline:  # type: ignore[misc]
                break
            scores.append(play(i))
        if len(scores) < choices:
            break  # out of time: this deal is left out
        totals = [t + x for t, x in zip(totals, scores, strict=True)]
        done += 1
    return totals, done


def distinct_moves(view: Any, moves: Sequence[Play], place: Callable[[Play], object] = lambda move: None) -> list[Play]:
    """One move for each run of equivalent cards among ``moves``, in their order, the run's
    lowest card standing for it (``doubledummy.equivalent_runs``): cards of a suit with no card
    between them still to be played (each one between is among ``moves``, or played in a
    finished trick) win and lose the same tricks, now and after. Moves from different places
    (``place``, e.g. a hand and a box) are never merged. A vote then spends its deals on moves
    that differ. Every card of ``moves`` must be known to ``view``."""
    in_play = ((1 << 52) - 1) & ~card_mask(play.card for trick in view.tricks for play in trick.plays)
    code = {int(view.card(move.position)): move for move in moves}
    lowest: set[int] = set()
    for where in {place(move) for move in code.values()}:
        held = card_mask(card for card, move in code.items() if place(move) == where)
        lowest.update(run[-1] for run in equivalent_runs(held, in_play))
    return [move for card, move in code.items() if card in lowest]


@dataclass(frozen=True)
class PlayModel:
    """A heuristic's scores as a model of how a player plays (inference: how likely a sampled
    deal is, given the moves the other seats made): the best-scored move most often, the others
    by how close they come, and any move sometimes, since no model is the player's real mind.
    Scores are in tricks, and a heuristic's moves differ by a tenth of a trick or more when the
    choice matters."""

    temperature: float
    noise: float

    def __post_init__(self) -> None:
        if not (self.temperature > 0 and 0 <= self.noise <= 1):
            raise ValueError(f"a model needs a temperature above 0 and a noise from 0 to 1, not {self}")

    def odds(self, scores: Sequence[float]) -> list[float]:
        """The odds of each move before the noise, softmax(score / temperature) up to a factor
        (the best move's odds are 1): what a search plays the other seats by when it hedges
        (Box Whist's ``soft`` playouts)."""
        top = max(scores)
        return [math.exp((score - top) / self.temperature) for score in scores]

    def chance(self, scores: Sequence[float], made: int | None) -> float:
        """The chance that a player whose moves score ``scores`` made move ``made`` (an index
        into them; None: a move the model does not know, which only the noise allows):

            (1 - noise) * softmax(score / temperature)[made] + noise / len(scores)
        """
        odds = self.odds(scores)
        model = 0.0 if made is None else odds[made] / sum(odds)
        return (1 - self.noise) * model + self.noise / len(scores)


# The model the search bots infer by. Sharper ones place the unseen cards better against the
# heuristic itself, and did not play better for it (``boxwhist.inference``'s docstring).
MODEL = PlayModel(temperature=0.1, noise=0.1)


def count(name: str, value: object) -> int:
    """``value``, a budget's count (``name`` says which), if it is a positive int (not a bool);
    else a ``ValueError`` saying so."""
    if type(value) is not int or value < 1:
        raise ValueError(f"{name} must be a positive int, not {value!r}")
    return value


class Bot(Protocol):
    def choose(self, view: View) -> Play:  # the game's own view type
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: View) -> Play:
        return self.rng.choice(view.legal_moves)


@dataclass(frozen=True, slots=True)
class Weighed:
    """One move a searching bot weighed for its last decision: ``mean`` is its mean score over
    the ``deals`` sampled deals it was tried on, in the bot's own measure (``Searching.why``
    says what it means to a person)."""

    move: Play
    mean: float
    deals: int


@dataclass(frozen=True, slots=True)
class Budget:
    """A searching bot's budget per move: ``playouts`` (deterministic: sampled deals played
    out, or, for an ISMCTS bot, iterations), capped at ``seconds`` of the clock passed in (the
    bot stops early, never late by more than one playout); ``counts``, further counts of the
    budget for a bot whose searches count differently (Box Whist's: ``playouts`` are its
    ISMCTS's iterations at 2 players, ``pimc_playouts`` its PIMC's playouts at 3 and 4); and
    ``switches``, for a level that plays differently, not only longer (Box Whist's easy reads
    nothing into how the others played). Both are keyword arguments for the bot's maker."""

    playouts: int
    seconds: float
    switches: tuple[tuple[str, object], ...] = ()
    counts: tuple[tuple[str, int], ...] = ()


class Searching(ABC):
    """What the searching bots share (Box Whist's ``boxwhist.search.SearchBot``, PIMC or ISMCTS,
    German Whist's and Box's, PIMC): the budget, its levels (a subclass sets ``budgets``, one
    ``Budget`` per name in ``LEVELS``), what a score means to a person (``why``), and PIMC's
    vote over sampled deals with its time cap (``vote``; ``SearchBot`` keeps its own cap, from
    the call of its ``choose``).

    ``playouts`` is the budget per decision, over all choices (for ``vote``, at least
    ``MIN_SAMPLES`` deals each; by default the default level's). ``clock`` and ``time_limit``
    (seconds), if both given, are a hard cap: in ``vote``, once the first
    deal has been played out with every choice, the clock is read before each playout, and at
    the limit the bot stops and votes over the deals it finished (a deal cut short is left out,
    so every choice is judged on the same deals). It runs over by at most one playout (a
    few milliseconds) besides the first deal (about 30 ms at the start of a 2-player hand of Box
    Whist). Without them the bot reads no clock.

    A subclass also says what its score means to a person (``why``, for a hint): with
    ``score_range`` = (a, b), a move's mean score m stands for about (m - a) / (b - a) of the
    deals tried won, and ``score_words`` says what winning is, with ``{share}`` for that share.
    """

    budgets: ClassVar[Mapping[str, Budget]]
    score_range: ClassVar[tuple[float, float]]
    score_words: ClassVar[str]  # e.g. "wins the hand in about {share:.0%} of the deals tried"

    def __init__(self, rng: random.Random, playouts: int | None = None, clock: Callable[[], float] | None = None,
                 time_limit: float | None = None, workers: int = 1, runner: Runner = in_turn) -> None:
        self.workers = count("workers", workers)  # parts of a move, each the whole budget (see the module docstring)
        self.runner = runner
        if playouts is None:
            playouts = self.budgets[DEFAULT_LEVEL].playouts
        self.rng = rng
        self.playouts = count("playouts", playouts)
        self.clock = clock
        self.time_limit = time_limit
        self.last_samples = 0  # for measurement: deals sampled for the last decision
        # The moves the last decision weighed, best first (empty when it had no choice).
        self.last_weighed: tuple[Weighed, ...] = ()
        self._totals: list[float] = []  # the last vote's total score for each choice

    @abstractmethod
    def choose(self, view: Any) -> Play:  # the game's own view type: a searching bot is a ``Bot``
        ...

    @classmethod
    def at_level(cls, rng: random.Random, level: str, clock: Callable[[], float] | None,
                 workers: int = 1, runner: Runner = in_turn) -> Searching:
        budget = cls.budgets[level]
        return cls(rng, budget.playouts, clock, budget.seconds, workers=workers, runner=runner,
                   **dict(budget.counts), **dict(budget.switches))

    def vote(self, choices: int, deal: Deal, job: tuple[Any, ...], deadline: float | None = None,
             playouts: int | None = None) -> int:
        """The best of ``choices`` by total score over sampled deals: ``deal(*job, rng)``
        samples one and returns a function that plays choice i on it to the end and scores it
        (``deal`` a module-level function and ``job`` plain values: a part may run in another
        process). Each of the ``workers`` parts votes over its own deals (``vote_part``), and
        their totals add up. ``weighed`` then gives every choice's mean score. The time cap
        runs from here unless ``deadline`` (on ``clock``) is given; the playouts are the budget's
        unless ``playouts`` is given (a bot that spends its budget in more than one way)."""
        clock = self.clock
        if deadline is None and clock is not None and self.time_limit is not None:
            deadline = clock() + self.time_limit
        deals = max(MIN_SAMPLES, (playouts or self.playouts) // choices)
        seeds = [self.rng.getrandbits(64) for _ in range(self.workers)]
        parts = self.runner(vote_part, [(deal, job, choices, deals, seed, clock, deadline) for seed in seeds])
        self._totals = [sum(column) for column in zip(*(totals for totals, _ in parts), strict=True)]
        self.last_samples = sum(done for _, done in parts)
        return self._ranked()[0]

    def _ranked(self) -> list[int]:
        """The last vote's choices, best first (of equal totals, the earlier choice)."""
        totals = self._totals
        return sorted(range(len(totals)), key=lambda i: (-totals[i], i))

    def weighed(self, moves: Sequence[Play]) -> tuple[Weighed, ...]:
        """The last vote's choices as ``last_weighed``, best first: ``moves[i]`` stands for
        choice i."""
        deals = self.last_samples  # at least one: the vote always finishes its first deal
        return tuple(Weighed(moves[i], self._totals[i] / deals, deals) for i in self._ranked())

    def why(self, describe: Callable[[Play], str]) -> str:
        """Why the last decision chose its move, in a few words for a person (``describe``
        names a move): how often it won in the deals tried, and the next best move's."""
        if not self.last_weighed:
            return "your plays are all alike here"
        low, high = self.score_range

        def share(weighed: Weighed) -> float:
            return min(1.0, max(0.0, (weighed.mean - low) / (high - low)))

        best, *others = self.last_weighed
        words = self.score_words.format(share=share(best))
        if others:
            words += f" (next best {describe(others[0].move)}, {share(others[0]):.0%})"
        return words


def searches(factory: BotFactory) -> TypeGuard[type[Searching]]:
    """Whether ``factory`` (an entry of a game's ``bots``) makes a searching bot: one with
    levels and a budget."""
    return isinstance(factory, type) and issubclass(factory, Searching)


def check_level(factory: BotFactory, level: str | None) -> None:
    """Refuse a level the bot ``factory`` makes cannot take (None, its default, always does)."""
    if level is None:
        return
    if not searches(factory):
        raise ConfigError("only the search bot has levels")
    if level not in LEVELS:
        raise ConfigError(f"the levels are {', '.join(LEVELS)}, not {level!r}")


def make_bot(factory: BotFactory, rng: random.Random, level: str | None = None,
             clock: Callable[[], float] | None = None, workers: int = 1, runner: Runner = in_turn) -> Bot:
    """The bot ``factory`` makes (an entry of a game's ``bots``): a searching bot at ``level``
    (``DEFAULT_LEVEL`` if None) with ``clock`` for its time cap (no cap without one), its moves
    thought over ``workers`` parts run by ``runner``; any other bot as it is."""
    check_level(factory, level)
    if searches(factory):
        return factory.at_level(rng, level or DEFAULT_LEVEL, clock, workers, runner)
    return factory(rng)
