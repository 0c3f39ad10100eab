"""A determinized search player for Box Whist (PIMC: perfect-information Monte Carlo).

For each decision the bot

1. reads what its seat knows from the public ``BoxWhistView`` API only (never ``view._state``),
2. samples deals consistent with that knowledge (``Knowledge.sample``),
3. on each sampled deal, plays every legal move followed by a playout to the end of the hand
   with a fast perfect-information greedy policy (``_policy``), all moves on the same deal
   (common random numbers), and
4. plays the move with the best total score (a vote weighted by outcome: +1 a won hand,
   -1 a lost one, 0 a draw, plus a small trick-margin term that breaks ties).

This is PIMC as in GIB for bridge (REFERENCE.md section 4), with its known flaw (strategy
fusion: each sample is played as if every card were seen).

What a sample respects (the seat's knowledge, derived from the view):

- its own hand, and its own box once open (rule 7); its closed box stays random;
- every card played (finished tricks and the trick in progress) and the exposed stack card
  (the top of the stack, face up), which are nowhere else;
- every card known to be in another seat's hand (``known_hand_cards``: shown stack draws and
  the turned-up trump, rule 9 and rule 4);
- the number of cards in every place: each hand, each box, the face-down stack;
- voids: a seat that did not follow the suit led from its hand (it played another suit, or a
  box card) held no card of that suit in its hand then (an honest seat, rule 6). Every card
  that enters a hand after the deal is shown (rule 9), so the unknown cards in a hand are all
  dealt cards, in it since the deal: a void once shown holds for all of them.

The state is built directly (``_Sim``: plain int codes, lists), not as a ``BoxWhistHand`` per
sample: a playout is then a few hundred list operations, and a ``BoxWhistHand`` would cost
more to replay than the playout itself. ``tests/test_search_bot.py`` checks ``_Sim`` against
``BoxWhistHand`` move by move (legal moves, tricks won).

Pure: randomness comes in as the ``random.Random`` passed in, time (optional) as a clock
function and a limit; with no clock the budget is the playout count alone, and a run is
repeatable from its seed.

Measured (``scripts/duplicate.py``, against ``HeuristicBot``, normal level: 500 playouts
capped at 0.9 s, on this shared 2-core machine; 95% intervals, by deal at 3 and 4 players):

    2 players, 400 deal pairs    0.649 of 716 decided hands (0.614-0.683), pairs won/lost 154/30;
                                 0.107 s a move on average, 1.22 s at most (a stalled process:
                                 the cap bounds the bot's work, not the machine's scheduler)
    3 players, 108 deals         0.409 of the points (0.364-0.455; fair 0.333)
    4 players, 141 deals         0.296 (0.265-0.328; fair 0.25)
    against RandomBot            0.902 (0.802-0.954) at 2 players, 31 pairs; 0.737 (0.641-0.832)
                                 at 3, 28 deals; 0.566 (0.478-0.654) at 4, 34 deals

The technique, by measurement (``scripts/compare_search.py``: head to head, 2 players, 0.1 s a
move each): single-observer ISMCTS on the same samples, engine and playouts beat this PIMC,
0.581 of 93 decided hands (0.479-0.676) over 50 deal pairs (seed 3) and 0.607 of 107
(0.513-0.695) over 60 (seed 4); together 119 of 200, 0.595 (0.526-0.661), pairs won/lost
31/7. ISMCTS runs about 43,000 iterations a second here (its playouts start deeper in the
hand), PIMC about 12,000 playouts. So ISMCTS should replace this search; it has not yet been
measured against the heuristic over 400 pairs, which is why this module still plays PIMC.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import ClassVar

from p2pwhist.bots import Budget, Searching
from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist import trick_strength

__all__ = ["DEFAULT_PLAYOUTS", "Knowledge", "SearchBot"]

# Playouts per decision (over all legal moves). At 2 players on this 2-core machine (both cores
# busy) 500 playouts took 0.096 s per move on average and at most 0.67 s (the first moves,
# whose playouts run the whole hand); see scripts/duplicate.py.
DEFAULT_PLAYOUTS = 500
# A won hand scores 1; each trick of margin adds this much (breaks ties between moves that
# win or lose every sample, e.g. late in a decided hand).
_MARGIN_WEIGHT = 0.02
# The playout policy's prize rule (see ``_policy``), as rank indexes (rank - 2): a plain
# exposed card below the ten is not worth a trump or a card from the queen up.
_CHEAP_PRIZE_RANK = 8
_COSTLY_RANK = 10
# Rejection tries before the constrained deal (3 and 4 players only; 2 players deal exactly).
_REJECTION_TRIES = 20


class Knowledge:
    """What one seat knows of the hand, digested from its view; samples deals from it."""

    def __init__(self, view) -> None:
        self.seat = seat = view.seat
        self.players = n = view.players
        trump = view.trump
        self.trump = -1 if trump is None else int(trump)
        self.turn = view.turn
        self.hand = {p: int(c) for p, c in view.hand.items()}
        self.box = [(p, None if c is None else int(c)) for _, p, c in view.box]
        self.may_look = list(view.may_look)
        self.tricks_won = list(view.tricks_won)
        self.hand_sizes = list(view.hand_sizes)
        self.box_sizes = list(view.box_sizes)
        self.stack_size = view.stack_size
        exposed = view.exposed
        self.exposed = None if exposed is None else int(exposed)
        self.trick = [(play.seat, int(play.card), play.from_box) for play in view.trick]
        void = self.void = [[False] * 4 for _ in range(n)]
        played: set[int] = set()
        for plays in [t.plays for t in view.tricks] + [view.trick]:
            if not plays:
                continue
            led = int(plays[0].card) // 13
            for play in plays:
                played.add(int(play.card))
                if play.from_box or int(play.card) // 13 != led:
                    void[play.seat][led] = True
        self.known = [[] if j == seat else [int(c) for c in view.known_hand_cards(j)] for j in range(n)]
        seen = set(played) | set(self.hand.values()) | {c for _, c in self.box if c is not None}
        for cards in self.known:
            seen.update(cards)
        if self.exposed is not None:
            seen.add(self.exposed)
        self.unknown = sorted({int(c) for c in view.deck} - seen)
        # How many unknown cards each place holds.
        self.unknown_hand = [0 if j == seat else self.hand_sizes[j] - len(self.known[j]) for j in range(n)]
        self.unknown_box = [self.box_sizes[j] if j != seat else sum(c is None for _, c in self.box) for j in range(n)]
        self.face_down = max(0, self.stack_size - 1)
        if sum(self.unknown_hand) + sum(self.unknown_box) + self.face_down != len(self.unknown):
            raise ValueError("the view's card counts do not add up")  # a view inconsistent with itself

    def sample(self, rng: random.Random) -> tuple[list[list[int]], list[list[int]], list[int], dict[int, int]]:
        """One deal consistent with this knowledge: (hands, boxes, stack top first, my box
        position → card). Uniform over consistent deals at 2 players; at 3 and 4 by rejection,
        then (rarely) by dealing the most constrained hand first."""
        n, seat = self.players, self.seat
        constrained = [j for j in range(n) if j != seat and self.unknown_hand[j] and any(self.void[j])]
        pool = list(self.unknown)
        hidden_hands: list[list[int]] = [[] for _ in range(n)]
        if len(constrained) <= 1:
            # Deal the (at most one) constrained hand from the cards it may hold, uniformly;
            # the rest are exchangeable.
            for j in constrained:
                void = self.void[j]
                allowed = [c for c in pool if not void[c // 13]]
                if len(allowed) < self.unknown_hand[j]:
                    allowed = pool  # no deal meets this void (a dishonest revoke): sample without it
                chosen = rng.sample(allowed, self.unknown_hand[j])
                hidden_hands[j] = chosen
                taken = set(chosen)
                pool = [c for c in pool if c not in taken]
            rng.shuffle(pool)
        else:
            pool, hidden_hands = self._deal_constrained(rng, constrained)
        it = iter(pool)
        hands = [[] for _ in range(n)]
        boxes = [[] for _ in range(n)]
        for j in range(n):
            if j == seat:
                hands[j] = list(self.hand.values())
                continue
            hands[j] = self.known[j] + hidden_hands[j]
            if j not in constrained:
                hands[j] += [next(it) for _ in range(self.unknown_hand[j])]
            boxes[j] = [next(it) for _ in range(self.box_sizes[j])]
        my_box: dict[int, int] = {}
        for p, c in self.box:
            my_box[p] = c if c is not None else next(it)
        boxes[seat] = list(my_box.values())
        stack = [] if self.exposed is None else [self.exposed] + [next(it) for _ in range(self.face_down)]
        return hands, boxes, stack, my_box

    def _deal_constrained(self, rng: random.Random, constrained: list[int]) -> tuple[list[int], list[list[int]]]:
        n = self.players
        for _ in range(_REJECTION_TRIES):
            pool = list(self.unknown)
            rng.shuffle(pool)
            hidden: list[list[int]] = [[] for _ in range(n)]
            ok = True
            i = 0
            for j in constrained:
                hidden[j] = pool[i:i + self.unknown_hand[j]]
                i += self.unknown_hand[j]
                if any(self.void[j][c // 13] for c in hidden[j]):
                    ok = False
                    break
            if ok:
                return pool[i:], hidden
        # Most constrained first (fewest cards allowed), retrying on a dead end.
        for _ in range(200):
            pool = list(self.unknown)
            rng.shuffle(pool)
            hidden = [[] for _ in range(n)]
            order = sorted(constrained, key=lambda j: sum(1 for c in pool if not self.void[j][c // 13]) - self.unknown_hand[j])
            ok = True
            for j in order:
                allowed = [c for c in pool if not self.void[j][c // 13]]
                if len(allowed) < self.unknown_hand[j]:
                    ok = False
                    break
                chosen = allowed[:self.unknown_hand[j]]
                hidden[j] = chosen
                taken = set(chosen)
                pool = [c for c in pool if c not in taken]
            if ok:
                return pool, hidden
        # No deal meets the voids: some seat did not follow suit while holding the suit (on
        # honour, so a dishonest peer can; the audit finds it). Sample without them.
        pool = list(self.unknown)
        rng.shuffle(pool)
        hidden = [[] for _ in range(n)]
        for j in constrained:
            hidden[j], pool = pool[:self.unknown_hand[j]], pool[self.unknown_hand[j]:]
        return pool, hidden


class _Sim:
    """A Box Whist hand in plain ints with every card known: rules 6-10, as ``BoxWhistHand``."""

    __slots__ = ("boxes", "hands", "may_look", "n", "stack", "trick", "trump", "turn", "won")

    def __init__(self, n, trump, hands, boxes, may_look, stack, trick, turn, won) -> None:
        self.n = n
        self.trump = trump
        self.hands = hands
        self.boxes = boxes
        self.may_look = may_look
        self.stack = stack
        self.trick = trick  # [(seat, card, from_box)]
        self.turn = turn
        self.won = won

    def copy(self) -> _Sim:
        return _Sim(self.n, self.trump, [h[:] for h in self.hands], [b[:] for b in self.boxes], self.may_look[:],
                    self.stack[:], self.trick[:], self.turn, self.won[:])

    def legal(self) -> tuple[list[int], bool]:
        """(cards the seat to act may play, are they all from the box?)"""
        seat = self.turn
        hand = self.hands[seat]
        if not hand:
            return self.boxes[seat], True
        if not self.trick:
            return hand, False
        led = self.trick[0][1] // 13
        following = [c for c in hand if c // 13 == led]
        if following:
            return following, False
        if self.may_look[seat]:
            return hand + self.boxes[seat], False
        return hand, False

    def apply(self, card: int) -> None:
        seat = self.turn
        hand = self.hands[seat]
        if card in hand:
            hand.remove(card)
            from_box = False
        else:
            self.boxes[seat].remove(card)
            from_box = True
        trick = self.trick
        trick.append((seat, card, from_box))
        n = self.n
        if len(trick) < n:
            self.turn = (seat + 1) % n
            return
        led = trick[0][1] // 13
        trump = self.trump
        winner = max(trick, key=lambda play: trick_strength(play[1], led, trump))[0]
        self.won[winner] += 1
        self.may_look[winner] = True
        stack = self.stack
        if stack:
            for i in range(n):
                self.hands[(winner + i) % n].append(stack.pop(0))
        self.trick = []
        if any(self.hands) or any(self.boxes):
            self.turn = winner
        else:
            self.turn = None


def _policy(sim: _Sim, rng: random.Random) -> int:
    """A cheap perfect-information greedy move: win the trick with the cheapest card that
    no later seat can beat (unless the prize is small and the card dear), else throw the
    cheapest card; lead a sure winner, else the cheapest card. Cheap means low rank, plain
    suit before trump."""
    moves, blind = sim.legal()
    if len(moves) == 1:
        return moves[0]
    seat = sim.turn
    if blind and not sim.may_look[seat]:
        return rng.choice(moves)  # a closed box is played blind (rule 7)
    trump = sim.trump
    trick = sim.trick
    n = sim.n
    later = [(seat + i) % n for i in range(1, n - len(trick))]
    if trick:
        led = trick[0][1] // 13
        # To win, a card must beat the trick so far and anything a later seat can play.
        bar = max(trick_strength(play[1], led, trump) for play in trick)
        for other in later:
            bar = max(bar, _threat(sim, other, led, trump))
        bars = None
    else:
        led = -1
        bar = 0
        bars = [-2] * 4  # per suit led, computed when first needed
    cheapest = winner = -1
    cheapest_cost = winner_cost = 1000
    for card in moves:
        suit = card // 13
        cost = card % 13 + (20 if suit == trump else 0)
        if cost < cheapest_cost:
            cheapest, cheapest_cost = card, cost
        if cost >= winner_cost:
            continue
        if bars is not None:
            bar = bars[suit]
            if bar == -2:
                bar = bars[suit] = max([_threat(sim, other, suit, trump) for other in later] or [-1])
            lead = suit
        else:
            lead = led
        if trick_strength(card, lead, trump) > bar:
            winner, winner_cost = card, cost
    if winner < 0:
        return cheapest
    stack = sim.stack
    if stack and winner != cheapest:
        # Rule 9: the trick's winner takes the exposed card. Not worth a trump or an honour
        # when that card is a plain one below the ten: throw the cheapest card instead.
        # (Measured, scripts/duplicate.py, 150 deal pairs at 500 playouts, same deals: 0.69 of
        # decided hands against the heuristic with this rule, 0.62 without.)
        prize = stack[0]
        if prize // 13 != trump and prize % 13 < _CHEAP_PRIZE_RANK and (
                winner // 13 == trump or winner % 13 >= _COSTLY_RANK):
            return cheapest
    return winner


def _threat(sim: _Sim, seat: int, led: int, trump: int) -> int:
    """The strongest card ``seat`` may play to a trick led in ``led`` (-1 if none)."""
    hand = sim.hands[seat]
    if not hand:
        cards = sim.boxes[seat]
    else:
        cards = [c for c in hand if c // 13 == led]
        if not cards:
            cards = hand + sim.boxes[seat] if sim.may_look[seat] else hand
    top = -1
    for c in cards:
        suit = c // 13
        s = c % 13 + (100 if suit == trump else 50 if suit == led else 0)
        if s > top:  # noqa: PLR1730 (a call to max is slower in this inner loop)
            top = s
    return top


def _playout(sim: _Sim, rng: random.Random) -> None:
    while sim.turn is not None:
        sim.apply(_policy(sim, rng))


def _score(won: list[int], seat: int) -> float:
    mine = won[seat]
    rival = max(w for j, w in enumerate(won) if j != seat)
    outcome = 1.0 if mine > rival else -1.0 if mine < rival else 0.0
    return outcome + _MARGIN_WEIGHT * (mine - rival)


class SearchBot(Searching):
    """PIMC over sampled deals with greedy playouts; see the module docstring, and
    ``p2pwhist.bots.Searching`` for the budget and the time cap."""

    budgets: ClassVar[Mapping[str, Budget]] = {  # scripts/duplicate.py measures them
        "easy": Budget(playouts=60, seconds=0.25),
        "normal": Budget(playouts=DEFAULT_PLAYOUTS, seconds=0.9),
        "hard": Budget(playouts=3000, seconds=2.7),
    }

    def choose(self, view) -> Play:
        moves = view.legal_moves
        self.last_samples = 0
        if len(moves) == 1:
            return moves[0]
        k = Knowledge(view)
        if not k.hand and not k.may_look[k.seat]:
            return self.rng.choice(moves)  # only a closed box is left: played blind (rule 7)
        return self.search(k, moves)

    def search(self, k: Knowledge, moves: list[Play]) -> Play:
        """The move to play of ``moves`` (two or more), knowing ``k``."""
        seat, rng = k.seat, self.rng

        def deal() -> Callable[[int], float]:
            hands, boxes, stack, my_box = k.sample(rng)
            root = _Sim(k.players, k.trump, hands, boxes, k.may_look[:], stack, k.trick[:], k.turn, k.tricks_won[:])
            cards_at = {**k.hand, **my_box}

            def play(i: int) -> float:
                sim = root.copy()
                sim.apply(cards_at[moves[i].position])
                _playout(sim, rng)
                return _score(sim.won, seat)

            return play

        return moves[self.vote(len(moves), deal)]
