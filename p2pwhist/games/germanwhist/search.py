"""A determinized search player for German Whist (PIMC, as ``bots.box_search`` does for Box).

For each decision with a choice the bot samples deals consistent with what its seat knows,
plays every legal move on each sampled deal and then the hand out with the heuristic's rules for
both seats (``heuristic.GermanWhistHeuristicBot``, each seat reading its own view of the sampled
deal), and plays the move with the best total score (``Searching.vote``: the budget, the time
cap and the levels are the shared machinery's). The vote weighs one move for each run of
equivalent cards (``bots.distinct_moves``: cards of a suit with no card still to be played between them
win and lose the same tricks, and the same turned card), so its deals go to moves that differ:
in the stack phase, 5.8 distinct moves of 8.8 legal ones on average (decisions with a choice,
100 hands of the heuristic's play).

What a sample respects (derived from the view only, never from its state):

- every card the seat may see: its hand and its face-down draws, every turned and played card;
- where every card sits: positions are fixed (rule 2), and the view's finished tricks say which
  stack positions each seat took, so the other hand's positions are known, only not its cards;
- voids: when the other seat did not follow the suit led (rule 5), none of the cards then in
  its hand was of that suit. Every position in a hand is a fixed deck position, so this forbids
  the suit at those positions; the cards it draws later are free.

A sample is a full deck; the hand is rebuilt on it by replaying the moves made so far, on the
engine itself (``GermanWhistHand``: a playout is a few dozen moves, so no separate simulator).

With ``inference`` (off: measured no better), each deal is the pick of
``CANDIDATES`` sampled ones, each as likely to be picked as the other seat's last ``RECENT``
moves were on it, had it held what the deal gives it, under the heuristic as a model of its
play (``games.bots.PlayModel``, as Box Whist's inference weighs its deals; sampling
importance resampling, since the vote counts every deal alike). Head to head against the
search without it at equal time (both stopped by the clock at 0.3 s a move, 400 deal pairs,
``scripts/duplicate.py --game germanwhist --search 'search(inference=on)' --opponents search
--playouts 100000 --time-limit 0.3 --seed 12 --jobs 2``) it won 0.489 of 800 decided hands
(0.454-0.523), deal pairs won/lost 63/72: no gain, as in Box Whist.

Measured against the heuristic (each deck played in both seats; this shared 2-core machine):
with a greedy playout (win the trick cheaply for a turned card from the ten up or a trump, else
play low) 300 playouts only equalled the heuristic (0.500 of 80 decided hands); with the
heuristic's rules in the playouts, at the normal level (200 playouts), 0.637 of 80 decided hands
(40 decks, no clock), and by ``scripts/duplicate.py --game germanwhist --seed 5`` (the level's
0.9 s cap on the clock) 0.65 of 60 (95% interval by deal 0.567-0.733; deal pairs won/lost 9/0),
0.21 s a move on average, 0.91 s at most, none over the cap by 10%. Over 400 deal pairs
(``--opponents heuristic --time-limit 0 --seed 11 --jobs 2``: the normal level's 200 playouts then,
no clock): 0.674 of 800 decided hands (0.640-0.705), deal pairs won/lost 156/17, in 53 minutes
of both cores. The heuristic costs about 60 µs a decision (on an older machine, before its
counts were made once per decision, which took its time to 0.6 and the search's to 0.67), so
a playout from the first trick took about 3 ms, 2 ms since: the budgets below, 1.5 times those
measured above (40, 200, 800), keep each level within its cap as the old ones did. On the
same 400 deal pairs (seed 11, no clock, both cores), the normal level's 300 playouts took 0.6925
of 800 decided hands (0.660-0.724), pairs won/lost 166/12, 0.267 s a move; with equivalent
cards merged as well (what plays now), 0.7013 (0.669-0.732), pairs won/lost 166/5, 0.213 s a
move on average and 1.80 s at most (the end solved exactly, no clock), in 37 minutes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import ClassVar, cast

from p2pwhist.cards import Card, card_mask
from p2pwhist.games.base import PLAYS, HonourPolicy, Play
from p2pwhist.games.bots import MODEL, Budget, Searching, Weighed, distinct_moves
from p2pwhist.games.doubledummy import OutOfTime, Position, Solver
from p2pwhist.games.germanwhist.engine import DECK_SIZE, GermanWhistHand, dealt_hand
from p2pwhist.games.germanwhist.heuristic import GermanWhistHeuristicBot

__all__ = ["GermanWhistSearchBot"]

_SAMPLE_TRIES = 20  # constrained deals retried before the voids are dropped (a dishonest seat)
# Inference: the other seat's last RECENT moves are asked about (each costs one heuristic
# decision), and a deal is picked from CANDIDATES sampled ones by how likely they make them.
RECENT = 8
CANDIDATES = 4
# Each scoring trick of margin adds this much to a won hand's 1 (breaks ties between moves that
# win or lose every sample).
_MARGIN_WEIGHT = 0.02


class _Knowledge:
    """What the seat to move knows: the cards at the positions it may see, the positions whose
    card it may not, and for each of those the suits it cannot hold (voids)."""

    def __init__(self, view) -> None:
        self.seat = seat = view.seat
        other = 1 - seat
        self.dealer = view.dealer
        self.known = [view.card(p) for p in range(DECK_SIZE)]
        plays = [play for trick in view.tricks for play in trick.plays] + list(view.trick)
        self.moves = [play.position for play in plays]
        # The other seat's last moves, which inference asks the model about (indices into moves).
        self.asked = frozenset([i for i, play in enumerate(plays) if play.seat == other][-RECENT:])
        forbidden: dict[int, set[int]] = {}
        hands = [set(dealt_hand(s, view.dealer)) for s in range(2)]

        def note(plays) -> None:
            led = int(plays[0].card) // 13
            for play in plays:
                if play.seat == other and int(play.card) // 13 != led:
                    for p in hands[other]:
                        if self.known[p] is None:
                            forbidden.setdefault(p, set()).add(led)
                hands[play.seat].discard(play.position)

        for trick in view.tricks:
            note(trick.plays)
            if trick.won is not None:
                hands[trick.winner].add(trick.won)
                hands[1 - trick.winner].add(trick.drawn)
        if view.trick:
            note(view.trick)
        self.forbidden = forbidden
        self.unknown = [p for p in range(DECK_SIZE) if self.known[p] is None]
        known_cards = {int(c) for c in self.known if c is not None}
        self.unseen = [c for c in range(DECK_SIZE) if c not in known_cards]

    def sample(self, rng: random.Random) -> list[int]:
        """A full deck consistent with the knowledge: the unseen cards at the unknown positions,
        the most constrained positions first."""
        order = sorted(self.unknown, key=lambda p: -len(self.forbidden.get(p, ())))
        for _ in range(_SAMPLE_TRIES):
            cards = list(self.known)
            pool = list(self.unseen)
            rng.shuffle(pool)
            for p in order:
                banned = self.forbidden.get(p)
                i = next((i for i, c in enumerate(pool) if not banned or c // 13 not in banned), None)
                if i is None:
                    break
                cards[p] = pool.pop(i)
            else:
                return cards  # type: ignore[return-value]
        cards = list(self.known)
        pool = list(self.unseen)
        rng.shuffle(pool)
        for p in self.unknown:
            cards[p] = pool.pop()
        return cards  # type: ignore[return-value]


def _deal(game, knowledge: _Knowledge, seat: int, moves: list[Play], inference: bool,
          rng: random.Random) -> Callable[[int], float]:
    """One deal sampled from ``knowledge``, the hand so far replayed on it; returns how choice i
    of ``moves`` scores on it, played out by the heuristic's rules for both seats. With
    ``inference``, the deal is the pick of ``CANDIDATES`` sampled ones, each as likely to be
    picked as the other seat's asked moves were under the heuristic as a model of its play."""
    policy = GermanWhistHeuristicBot(rng)  # deterministic: the rng is never drawn from
    root = _sampled(game, knowledge, policy if inference else None, rng)

    def play(i: int) -> float:
        hand = root.clone()
        hand.apply(moves[i])
        while not hand.is_over:
            hand.apply(policy.choose(hand.view(hand.turn)))
        mine, theirs = hand.scores[seat], hand.scores[1 - seat]
        won = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        return won + _MARGIN_WEIGHT * (mine - theirs)

    return play


def _sampled(game, knowledge: _Knowledge, model: GermanWhistHeuristicBot | None,
             rng: random.Random) -> GermanWhistHand:
    """A deal sampled from ``knowledge``, the hand so far replayed on it; with a ``model``, the
    pick of ``CANDIDATES`` sampled deals, each as likely to be picked as the other seat's asked
    moves were on it under the model."""
    if model is None or not knowledge.asked:
        return _replayed(game, knowledge, knowledge.sample(rng), None)[0]
    replayed = [_replayed(game, knowledge, knowledge.sample(rng), model) for _ in range(CANDIDATES)]
    return rng.choices([hand for hand, _ in replayed], weights=[weight for _, weight in replayed])[0]


def _replayed(game, knowledge: _Knowledge, cards: list[int],
              model: GermanWhistHeuristicBot | None) -> tuple[GermanWhistHand, float]:
    """The hand so far replayed on a sampled deck, and how likely the other seat's asked moves
    were on it under ``model`` (1 without one): the view it had at each is exactly what it saw."""
    hand = GermanWhistHand(game, knowledge.dealer, cards, HonourPolicy.RECORD)
    weight = 1.0
    for i, position in enumerate(knowledge.moves):
        if model is not None and i in knowledge.asked:
            view = hand.view(hand.turn)
            legal = view.legal_moves
            if len(legal) > 1:
                made = next(k for k, move in enumerate(legal) if move.position == position)
                weight *= MODEL.chance(model.scores(view), made)
        hand.apply(PLAYS[position])
    return hand, weight


class GermanWhistSearchBot(Searching):
    """PIMC over sampled deals with the heuristic's playouts; see the module docstring, and
    ``p2pwhist.games.bots.Searching`` for the budget, the levels and the time cap."""

    budgets: ClassVar[Mapping[str, Budget]] = {
        "easy": Budget(playouts=60, seconds=0.25),
        "normal": Budget(playouts=300, seconds=0.9),
        "hard": Budget(playouts=1200, seconds=2.7),
    }
    # A won hand scores 1 (a draw 0.5), plus the small margin term.
    score_range = (0.0, 1.0)
    score_words = "wins the hand in about {share:.0%} of the deals tried"

    def __init__(self, rng: random.Random, playouts: int | None = None, clock: Callable[[], float] | None = None,
                 time_limit: float | None = None, endgame: bool = True, inference: bool = False,
                 **parallel) -> None:
        super().__init__(rng, playouts, clock, time_limit, **parallel)
        self.endgame = endgame  # solve the end exactly (off: PIMC to the last trick, for comparison)
        self.inference = inference  # pick deals by how the other seat played (off: measured no better)

    def choose(self, view) -> Play:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.seat} has no move: it is not its turn or the hand is over")
        self.last_samples = 0
        self.last_weighed = ()
        if len(moves) == 1:
            return moves[0]
        clock = self.clock
        deadline = None if clock is None or self.time_limit is None else clock() + self.time_limit
        knowledge = _Knowledge(view)
        seat, game = view.seat, view.game
        if self.endgame and not view.stack_size:
            # Half the time to solve it (the most it took: 0.14 s, scripts/bench_solver.py), else PIMC.
            halfway = None if clock is None or deadline is None else clock() + (deadline - clock()) / 2
            solved = self.solve(game, knowledge, moves,
                                None if clock is None or halfway is None else lambda: clock() >= halfway)
            if solved is not None:
                return solved
        # Even a single run is voted on: a move chosen among several takes a choice's time
        # (``cli_play.Steady`` paces only forced moves), and the hint's odds come from the vote.
        distinct = distinct_moves(view, moves)
        move = distinct[self.vote(len(distinct), _deal, (game, knowledge, seat, distinct, self.inference), deadline)]
        self.last_weighed = self.weighed(distinct)
        return move

    def solve(self, game, knowledge: _Knowledge, moves: list[Play], stop: Callable[[], bool] | None) -> Play | None:
        """Once the stack is gone the seat knows every card (those it has not seen are the other
        hand's): the hand is solved exactly, each move valued by the hand's outcome under best
        play and the tricks it ends ahead by, and the best played (of equal values, the first).
        None if ``stop`` said to stop first."""
        hand = GermanWhistHand(game, knowledge.dealer, knowledge.sample(self.rng), HonourPolicy.RECORD)
        for position in knowledge.moves:
            hand.apply(PLAYS[position])
        cards = cast(list[Card], hand.cards)  # a sampled deck: every card known
        turn = hand.turn
        assert turn is not None, "replayed to this seat's move"

        def mask(positions) -> int:
            return card_mask(cards[p] for p in positions)

        led = int(hand.trick[0].card) if hand.trick else -1
        position = Position(hands=(mask(hand.hands[0]), mask(hand.hands[1])), turn=turn, trump=int(hand.trump),
                            led=led)
        scores = hand.scores
        try:
            values = Solver(int(hand.trump), stop=stop).values(position, (scores[0], scores[1]), exact=True)
        except OutOfTime:
            return None
        ranked = sorted(moves, key=lambda move: -values[int(cards[move.position])])
        # A won hand scores 1, a draw 0.5, a loss 0 (``score_range``), plus the margin term.
        self.last_weighed = tuple(Weighed(move, (values[int(cards[move.position])] + 1) / 2, 1) for move in ranked)
        self.last_samples = 1
        return ranked[0]
