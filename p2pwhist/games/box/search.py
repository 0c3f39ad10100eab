"""A determinized search player for Box (PIMC), 2 to 6 players, both variants.

For each decision with more than one distinct choice the bot

1. reads what its seat knows from the public ``BoxView`` API only (``BoxKnowledge``),
2. samples deals consistent with that knowledge (``BoxKnowledge.sample``),
3. on each sampled deal plays every distinct choice, then plays the game out with the
   heuristic's rules (``heuristic.pick``) for every seat, all choices on the same deal,
4. plays the choice with the best total: the game's points for its seat, plus a small term
   for the box cards it has left at the end (ties between choices that always win or lose).

Rule numbers are those of ``protocol/rules-box.md``. Suits do not matter in Box (rule 1), so
cards of one rank are one choice; closed box cards are one choice too, since nobody knows them
(rule 3): the bot then takes one of them at random, like the heuristic.

What a sample respects (derived from the view, never from ``view``'s state):

- every card the seat may see: its hand and draws, every card laid, turned or put back, every
  extra card (all face up once); they stay where they are;
- the number of cards in every place: each hand, each box (its own closed cards included: they
  are unknown to it too), the pile;
- what an honest seat's moves say about its hand (rule 9): an opener that laid from its hand
  held no higher card (rule 4), and a seat that took from its box held no card equal to or
  lower than the card to beat (rules 5-6). Every hand position is a fixed deck position, so
  each becomes a set of ranks for the positions in that hand at that moment; cards drawn
  later are unconstrained.
- when it can: what a seat's lay says if that seat lays its highest card that passes, as the
  heuristic does (no card above the one laid, up to the card to beat). This is an assumption
  about the other players, not a rule, so a sample drops it when no deal meets it.

The playouts run on ``_BoxSim`` (deck positions and ranks in plain lists), not on ``BoxHand``;
``tests/test_box_search_bot.py`` checks it against ``BoxHand`` move by move.

Pure: randomness comes in as the ``random.Random`` passed in, time (optional) as a clock and a
limit, as for ``search.SearchBot``.

Measured (``scripts/duplicate.py --game box --players 4``: each deal played once with the bot in
each seat, three ``BoxHeuristicBot`` seats against it; share of the points, fair 0.25; 95%
intervals by deal; normal level, 400 playouts, this shared 2-core machine):

    seed rules, 400 deals        0.2512 (0.2467-0.2558): it lost 0.246 of its games;
                                 0.025 s a move on average, 0.47 s at most
    pagat's rules, 236 deals     0.2775 (0.259-0.296); 0.029 s a move, 0.33 s at most
    seed, against RandomBot      0.2662 (0.259-0.273), 200 deals: it lost 0.201 of its games
                                 (the heuristic loses 0.1875 there, bench_engine.py): the
                                 playouts model every seat as the heuristic
    on 80 deals (seed 5), what was tried:
      seed, rule 9 only, one random stream for all choices        0.2469 (0.238-0.255)
      seed, + inferred lays, common random numbers (this module)  0.249 (0.239-0.259)
      pagat, rule 9 only / + inferred lays                        0.275 / 0.291 (0.244-0.306 /
                                                                  0.251-0.330)

Under the seed rules the bot cannot do better than the heuristic, and ``scripts/box_ceiling.py``
says why (100 deals, seed 5): the one choice it has (which card to lay) pays only with cards
nobody may know. Sampled as the view allows, 0.2517 (0.243-0.260); with every other hand
true, 0.2525 (0.244-0.261): knowing the hands gains nothing; with every card true, the boxes
and the pile order too, 0.2725 (0.264-0.281). Pagat's rules add choices that the seen cards
inform (which box slot, which extra card), and there the search wins.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import ClassVar

from p2pwhist.cards import CARDS
from p2pwhist.games.base import Play
from p2pwhist.games.bots import Budget, Searching
from p2pwhist.games.box.engine import HAND_SIZE, Layout, Phase, Variant
from p2pwhist.games.box.heuristic import pick

__all__ = ["BoxKnowledge", "BoxSearchBot"]

# Playouts per decision at the normal level (over all distinct choices).
DEFAULT_PLAYOUTS = 400
# Each box card left at the end adds this much: less than a point's worth over 4 cards.
_BOX_WEIGHT = 0.01
# Random tries (each: a random order, each position given a random card that fits) before the
# greedy deal that always finds a consistent deal when there is one.
_TRIES = 20
_LAY, _RESTOCK, _OVER = 0, 1, 2
_PHASES = {Phase.LAY: _LAY, Phase.RESTOCK: _RESTOCK, Phase.OVER: _OVER}
_LOW, _HIGH = 2, 14  # the ranks, 2 to ace (rule 1)


def _ranks(low: int, high: int) -> int:
    """The ranks from ``low`` to ``high`` as a bit mask (bit r for rank r)."""
    return (1 << (high + 1)) - (1 << low) if low <= high else 0


_ALL = _ranks(_LOW, _HIGH)


class BoxKnowledge:
    """What one seat knows of a game of Box, digested from its view; samples deals from it.

    ``rules[p]`` is the set of ranks (a bit mask, bit r for rank r) the card at hand position
    ``p`` may have by rule 9; ``inferred[p]`` narrows it further by assuming that a seat that
    laid a card on another laid its highest card that passes (as the heuristic does, and as
    good play mostly does): it held no card above the one it laid, up to the card to beat.
    A seat seen to play otherwise (it laid a card its earlier lay said it did not hold) is not
    assumed to. Samples meet ``inferred`` when they can, else ``rules``, else nothing (a seat
    that broke rule 9)."""

    def __init__(self, view) -> None:
        self.seat = seat = view.seat
        self.players = n = view.players
        self.view = view
        known = {p: c.rank for p, c in view.known.items()}
        self.known = known
        layout = Layout.of(n, view.dealer)
        self.pile = list(layout.pile[len(layout.pile) - view.pile_size:]) if view.pile_size else []
        places = [p for j in range(n) if j != seat for p in view.hands[j]]
        places += [p for slots in view.slots for p in slots if p is not None] + self.pile
        self.unknown = [p for p in places if p not in known]
        seen = set(view.known.values())
        self.cards = [int(c) for c in CARDS if c not in seen]  # the unknown cards
        if len(self.cards) != len(self.unknown):
            raise ValueError("the view's card counts do not add up")  # a view inconsistent with itself
        self.rules: dict[int, int] = {}
        self.inferred: dict[int, int] = {}
        hands = [list(h) for h in layout.hands]
        unlike: set[int] = set()  # seats seen not to lay their highest card that passes
        for lays, too_high, draws in [(r.lays, r.too_high, r.draws) for r in view.rounds] + [(view.round, None, ())]:
            to_beat = None
            for lay in (*lays, *([too_high] if too_high else [])):
                hand = hands[lay.seat]
                rank = lay.card.rank
                if not lay.from_box:
                    hand.remove(lay.position)
                    if not self.inferred.get(lay.position, _ALL) >> rank & 1:
                        unlike.add(lay.seat)  # it held this card when it laid a lower one on a higher
                    if to_beat is None:  # rule 4: the opener's highest card
                        self._narrow(hand, _ranks(_LOW, rank), True)
                    else:  # inferred: its highest card that passes
                        self._narrow(hand, _ALL & ~_ranks(rank + 1, to_beat), False)
                elif to_beat is not None:  # rules 5-6: nothing equal or lower in the hand
                    self._narrow(hand, _ranks(to_beat + 1, _HIGH), True)
                to_beat = rank
            for draw in draws:
                hands[draw.seat] += draw.positions
        if [sorted(h) for h in hands] != [sorted(h) for h in view.hands]:
            raise ValueError("the view's rounds do not lead to its hands")
        for j in unlike:  # what such a seat lays says nothing beyond rule 9
            for p in hands[j]:
                if p in self.rules:
                    self.inferred[p] = self.rules[p]
                else:
                    self.inferred.pop(p, None)

    def _narrow(self, positions: list[int], ranks: int, rule: bool) -> None:
        for p in positions:
            if rule:
                self.rules[p] = self.rules.get(p, _ALL) & ranks
            self.inferred[p] = self.inferred.get(p, _ALL) & ranks

    def sample(self, rng: random.Random) -> dict[int, int]:
        """One deal consistent with this knowledge: a card (its code) for every position the
        seat does not know."""
        deal = None
        for masks in (self.inferred, self.rules):
            bounded = [p for p in self.unknown if p in masks]
            for _ in range(_TRIES if bounded else 1):
                deal = self._try(rng, bounded, masks)
                if deal is not None:
                    break
            if deal is not None:
                break
        if deal is None:
            deal = self._greedy(rng, [p for p in self.unknown if p in self.rules])
        taken = set(deal.values())
        rest = [c for c in self.cards if c not in taken]
        rng.shuffle(rest)
        free = iter(rest)
        for p in self.unknown:
            if p not in deal:
                deal[p] = next(free)
        return deal

    def _try(self, rng: random.Random, bounded: list[int], masks: dict[int, int]) -> dict[int, int] | None:
        """The tightest positions first, each a random card that fits; None at a dead end."""
        pool = self.cards[:]
        order = sorted(bounded, key=lambda p: (masks[p].bit_count(), rng.random()))
        deal = {}
        for p in order:
            mask = masks[p]
            fits = [i for i, c in enumerate(pool) if mask >> (c % 13 + 2) & 1]
            if not fits:
                return None
            deal[p] = pool.pop(rng.choice(fits))
        return deal

    def _greedy(self, rng: random.Random, bounded: list[int]) -> dict[int, int]:
        """By lowest upper bound first, each position the lowest card that fits its rule-9
        ranks (an interval): this finds a consistent deal whenever there is one (intervals on
        a line: an earliest-deadline matching), and an honest table's true deal is one. If
        there is none, a seat broke rule 9 (the audit will find it) and its moves say nothing:
        no bounds then."""
        rules = self.rules
        pool = sorted(self.cards, key=lambda c: (c % 13, rng.random()))
        deal = {}
        for p in sorted(bounded, key=lambda p: rules[p].bit_length()):
            card = next((c for c in pool if rules[p] >> (c % 13 + 2) & 1), None)
            if card is None:
                return {}
            pool.remove(card)
            deal[p] = card
        return deal

    def sim(self, deal: dict[int, int]) -> _BoxSim:
        """The game as it stands, on ``deal`` (from ``sample``) and the known cards."""
        view = self.view
        rank = [0] * len(CARDS)
        for p, r in self.known.items():
            rank[p] = r
        for p, c in deal.items():
            rank[p] = c % 13 + 2
        slots = [list(s) for s in view.slots]
        phase = _PHASES[view.phase]
        gap = slots[view.turn].index(None) if phase == _RESTOCK else None  # which empty slot does not matter
        public = {p for s in slots for p in s if p is not None and p in self.known}  # a box card known is known to all
        return _BoxSim(self.players, view.variant is Variant.PAGAT, rank, [list(h) for h in view.hands], slots,
                       [list(e) for e in view.extras], self.pile[:], [(lay.seat, lay.position) for lay in view.round],
                       public, list(view.out), phase, gap, view.opener, view.turn)


class _BoxSim:
    """A game of Box with every card known, in deck positions and ranks: rules 4-10 as ``BoxHand``
    applies them (both variants)."""

    __slots__ = ("extras", "gap", "hands", "lays", "loser", "n", "opener", "out", "pagat", "phase", "pile",
                 "public", "rank", "slots", "turn")

    def __init__(self, n, pagat, rank, hands, slots, extras, pile, lays, public, out, phase, gap, opener,
                 turn) -> None:
        self.n = n
        self.pagat = pagat
        self.rank = rank  # position -> rank, never changed: shared by copies
        self.hands = hands
        self.slots = slots
        self.extras = extras
        self.pile = pile
        self.lays = lays  # the round in progress: (seat, position)
        self.public = public  # box positions whose card every seat knows (put back, pagat rule 7)
        self.out = out
        self.loser: int | None = None
        self.phase = phase
        self.gap = gap
        self.opener = opener
        self.turn = turn

    def copy(self) -> _BoxSim:
        return _BoxSim(self.n, self.pagat, self.rank, [h[:] for h in self.hands], [s[:] for s in self.slots],
                       [e[:] for e in self.extras], self.pile[:], self.lays[:], set(self.public), self.out[:],
                       self.phase, self.gap, self.opener, self.turn)

    def legal(self) -> list[int]:
        """Rules 4-7: the positions the seat to act may play."""
        seat = self.turn
        if self.phase == _RESTOCK:
            return self.extras[seat]
        hand, rank = self.hands[seat], self.rank
        if hand and not self.lays:  # rule 4
            top = max(rank[p] for p in hand)
            return [p for p in hand if rank[p] == top]
        if self.lays:  # rule 5
            bar = rank[self.lays[-1][1]]
            layable = [p for p in hand if rank[p] <= bar]
            if layable:
                return layable
        return [p for p in self.slots[seat] if p is not None]  # rule 6

    def _left(self, seat: int) -> int:
        out = self.out
        for i in range(1, self.n + 1):
            if (seat + i) % self.n not in out:
                return (seat + i) % self.n
        raise AssertionError("no seat left in the game")

    def apply(self, position: int) -> None:
        seat = self.turn
        if self.phase == _RESTOCK:  # pagat rule 7
            self.extras[seat].remove(position)
            self.slots[seat][self.gap] = position
            self.public.add(position)
            self.gap = None
            self.phase = _LAY
            self.turn = self._left(seat)
            return
        hand = self.hands[seat]
        if position in hand:  # rules 4-5
            hand.remove(position)
            self.lays.append((seat, position))
            self.turn = self._left(seat)
            return
        slots = self.slots[seat]  # rule 6
        self.gap = slots.index(position)
        slots[self.gap] = None
        self.public.discard(position)
        if self.lays and self.rank[position] > self.rank[self.lays[-1][1]]:
            self._end_round(seat, position)
            return
        self.lays.append((seat, position))
        if self.pagat and self.extras[seat]:
            self.phase = _RESTOCK
            return
        if all(p is None for p in slots) and self._emptied(seat):
            self._over()
            return
        self.turn = self._left(seat)

    def _emptied(self, seat: int) -> bool:
        """Rule 10: True if ``seat``'s empty box ends the game."""
        if not self.pagat:
            self.loser = seat
            return True
        self.out.append(seat)
        return len(self.out) >= self.n - 1

    def _over(self) -> None:
        self.phase = _OVER
        self.turn = None
        self.lays = []

    def _end_round(self, seat: int, position: int) -> None:
        """Rules 7-8."""
        if self.pagat:
            self.extras[self.lays[-1][0]].append(position)
        if all(p is None for p in self.slots[seat]) and self._emptied(seat):
            self._over()
            return
        out, hands, pile = self.out, self.hands, self.pile
        opener = self.opener if self.opener not in out else self._left(self.opener)
        for i in range(self.n):
            drawer = (opener + i) % self.n
            if drawer not in out:
                want = min(HAND_SIZE - len(hands[drawer]), len(pile))
                if want > 0:
                    hands[drawer] += pile[:want]
                    del pile[:want]
        self.lays = []
        self.opener = self.turn = seat if seat not in out else self._left(seat)

    def points(self, seat: int) -> int:
        """Rule 11 (no offenders: the playouts keep the rules)."""
        if self.pagat:
            return int(seat not in self.out)
        return int(seat != self.loser)

    def policy(self, rng: random.Random) -> int:
        """The heuristic's move for the seat to act, knowing what that seat would know: its
        hand, every box card put back; a closed box card is taken at random."""
        moves = self.legal()
        if len(moves) == 1:
            return moves[0]
        seat, rank = self.turn, self.rank
        hand = self.hands[seat]
        laying = moves[0] in hand
        known = {p: rank[p] for p in moves if laying or self.phase == _RESTOCK or p in self.public}
        to_beat = rank[self.lays[-1][1]] if self.lays else None
        return pick(moves, known, self.phase == _RESTOCK, laying, to_beat, rng, _yes)


def _yes() -> bool:
    return True  # in a playout a closed box card is always worth the try (no card counting)


def _options(view, moves: list[Play]) -> list[list[Play]]:
    """The distinct choices: moves of one known rank are one, and so are the closed box cards."""
    groups: dict[object, list[Play]] = {}
    for move in moves:
        card = view.card(move.position)
        groups.setdefault("closed" if card is None else card.rank, []).append(move)
    return list(groups.values())


def _deal(k: BoxKnowledge, options: list[list[Play]], seat: int, rng: random.Random) -> Callable[[int], float]:
    """One deal sampled from ``k``; returns how option i scores on it, played out by the
    playout policy (the same chances for every option: common random numbers)."""
    root = k.sim(k.sample(rng))
    seed = rng.random()

    def play(i: int) -> float:
        sim = root.copy()
        chance = random.Random(seed)
        sim.apply(chance.choice(options[i]).position)
        while sim.turn is not None:
            sim.apply(sim.policy(chance))
        return sim.points(seat) + _BOX_WEIGHT * sum(p is not None for p in sim.slots[seat])

    return play


class BoxSearchBot(Searching):
    """PIMC over sampled deals with the heuristic's rules in the playouts; see the module
    docstring, and ``p2pwhist.games.bots.Searching`` for the budget and the time cap."""

    budgets: ClassVar[Mapping[str, Budget]] = {  # scripts/duplicate.py --game box measures them
        "easy": Budget(playouts=40, seconds=0.25),
        "normal": Budget(playouts=DEFAULT_PLAYOUTS, seconds=0.9),
        "hard": Budget(playouts=2000, seconds=2.7),
    }
    # The score is the game's points for the seat (rule 11: 1 or 0), plus the small box term.
    score_range = (0.0, 1.0)
    score_words = "scores you a point in about {share:.0%} of the deals tried"

    def choose(self, view) -> Play:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.seat} has no move: it is not its turn or the game is over")
        self.last_samples = 0
        self.last_weighed = ()
        options = _options(view, moves)
        rng = self.rng
        if len(options) == 1:
            return rng.choice(options[0])
        k = self.knowledge(view)
        seat = k.seat

        move = rng.choice(options[self.vote(len(options), _deal, (k, options, seat))])
        # Each choice as one of its moves: the best as the move played.
        self.last_weighed = self.weighed([move if move in option else option[0] for option in options])
        return move

    def knowledge(self, view) -> BoxKnowledge:
        """What the bot knows (``scripts/box_ceiling.py`` gives it more, to measure what more
        knowledge would be worth)."""
        return BoxKnowledge(view)
