"""A fast rule-of-thumb player for Box Whist, for 2, 3 or 4 players.

The bot reads only its seat's view (the public ``BoxWhistView`` API: never ``view._state``)
and decides each move with one cheap evaluation, no search and no rollouts:

    score(card) = P(win the trick | play card) * W  -  V(card)

- ``V(card)`` is the card's *future value*: what keeping it is worth, in tricks to come.
  It comes from card counting: the number of cards of its suit still out that beat it (not
  played, not ours), whether it is a trump, and, for a box card, how hard a box card is to use
  (only when void in the led suit, or once the hand is empty).
- ``W`` is what winning this trick is worth: the trick itself, plus, during the stack phase,
  the difference between the exposed card (the winner's prize) and the face-down card a loser
  draws (rule 9).
- ``P(win)`` is exact when we play last; otherwise each seat still to play is assumed to beat
  our card whenever it can, and the chance that it can comes from what it may hold: the cards
  it is known to hold (shown stack draws), the suits it has shown void in, and how the unseen
  cards spread over the unseen hand slots, the boxes and the face-down stack.

Spending a card costs the same whether the trick is won or lost, so the formula alone gives the
classic play: win with the cheapest card that wins, spend a good card or a trump only for a
valuable exposed card and let the worthless ones go, follow low when the trick cannot be won,
second hand low unless its high card is likely to hold, last hand high, use an open box card
(a trump there is a free extra trump) when void, and save the high trumps. A few small terms break
ties: discard from short suits (a void opens the box and ruffs), lower cards first.

Why card counting stays exact enough with hidden hands: every card that reaches a hand after
the deal is shown to all (the exposed card, and each drawn card, rule 9), so a seat that once
showed void in a suit holds, of that suit, exactly the cards seen entering its hand since.
"""

from __future__ import annotations

import functools
import random

from p2pwhist.cards import card_mask
from p2pwhist.games.base import Play
from p2pwhist.games.boxwhist.engine import trick_strength

__all__ = ["HeuristicBot"]

# Cards as plain ints (their codes): suit = code // 13, rank = code % 13 + 2.

# The weights below were tuned by duels between variants of this bot (each deck played with
# the variant in every seat, 3000-4000 hands per trial), then checked against RandomBot with
# scripts/bench_engine.py. They are weights on the scale of one trick, not probabilities.
#
# Future value of a card by how many outstanding cards of its suit beat it (the last entry
# for any more). Trumps weigh more than a trick: a bot that spends them only for valuable
# exposed cards, and keeps them as ruffs, wins more hands than one that values them at the
# chance they win a trick.
_PLAIN_VALUE = (0.50, 0.25, 0.10, 0.04, 0.02, 0.01)
_TRUMP_VALUE = (1.20, 1.10, 1.00, 0.90, 0.82, 0.76, 0.70)
# A box card other than a trump wins only when we are void in its suit and it is led, or once
# the hand is empty: it is worth less than the same card in the hand.
_BOX_PLAIN_FACTOR = 0.75
# How much the exposed card's value (over a face-down draw) adds to winning a stack trick,
# divided by the number of rivals: at two players the prize not won goes to the one rival, at
# more it strengthens only one of several. (Measured: 3.0 beats 1.0-2.5 and 4.0-5.0 at two
# players; 1.5 beats 3.0 at three.) A bonus for the first trick won (it opens the box, rule 7)
# was tried at 0.3-1.0 and lost hands at two and four players: it is left out.
_PRIZE_WEIGHT = 3.0
# Tie-breakers (much smaller than the value differences above).
_RANK_TIEBREAK = 0.0005
_SHORT_SUIT_BONUS = 0.02


def _value(higher_out: int, is_trump: bool) -> float:
    table = _TRUMP_VALUE if is_trump else _PLAIN_VALUE
    return table[higher_out] if higher_out < len(table) else table[-1]


# A suit's cards as a rank mask: bit r - 2 for rank r (a card's code is suit * 13 + rank - 2).
_SUIT_MASK = (1 << 13) - 1


def _above(ranks: int, index: int) -> int:
    """How many of the rank mask ``ranks`` are above the rank index ``index`` (rank - 2)."""
    return (ranks >> (index + 1)).bit_count()


def _by_suit(cards: int) -> list[int]:
    """A card mask as four rank masks, one per suit."""
    return [(cards >> (13 * suit)) & _SUIT_MASK for suit in range(4)]


_deck_mask = functools.lru_cache(maxsize=4)(card_mask)  # a game has one deck: there are two


class _Knowledge:
    """What the seat to move knows, digested for one decision. The cards are bit masks (bit i
    for the card coded i; per suit, a rank mask): the heuristic runs in every playout of the
    search bot, where counting cards above a rank is a popcount instead of a scan."""

    __slots__ = (
        "seat", "players", "trump", "unknown_by_suit", "out_by_suit", "known", "void",
        "p_hand", "p_box", "hand_sizes", "box_sizes", "may_look", "slots_by_suit",
    )
    known: list[list[int]]  # per seat, the cards of its hand that every seat knows

    def __init__(self, view, hand: dict[int, int], box_open: dict[int, int]) -> None:
        seat = self.seat = view.seat
        n = self.players = view.players
        trump = view.trump
        self.trump = -1 if trump is None else int(trump)
        ours = card_mask(hand.values()) | card_mask(box_open.values())
        void = self.void = [[False] * 4 for _ in range(n)]
        played = 0
        current = view.trick
        for plays in [trick.plays for trick in view.tricks] + ([current] if current else []):
            led = plays[0].card // 13
            for play in plays:
                card = play.card  # a Card is an int
                played |= 1 << card
                if play.from_box or card // 13 != led:
                    void[play.seat][led] = True  # no original card of the led suit left
        seen = ours | played
        known = self.known = [[] for _ in range(n)]
        for other in range(n):
            if other != seat:
                cards = [int(c) for c in view.known_hand_cards(other)]
                known[other] = cards
                seen |= card_mask(cards)
        exposed = view.exposed
        if exposed is not None:
            seen |= 1 << int(exposed)
        deck = _deck_mask(view.deck)
        unknown = deck & ~seen
        self.unknown_by_suit = _by_suit(unknown)
        # Outstanding: cards that are not ours and not yet played (they may still beat ours).
        out = deck & ~played & ~ours
        self.out_by_suit = _by_suit(out)

        hand_sizes = self.hand_sizes = view.hand_sizes
        box_sizes = self.box_sizes = view.box_sizes
        may_look = self.may_look = view.may_look
        unseen_hand = [0 if j == seat else hand_sizes[j] - len(known[j]) for j in range(n)]
        elsewhere = sum(box_sizes[j] for j in range(n) if j != seat)
        if not may_look[seat]:
            elsewhere += box_sizes[seat]
        stack = view.stack_size
        if stack:
            elsewhere += stack - 1  # the face-down part
        self.p_hand = [[0.0] * 4 for _ in range(n)]
        self.p_box = [[0.0] * 4 for _ in range(n)]
        self.slots_by_suit = [0] * 4
        for s in range(4):
            slots = elsewhere + sum(unseen_hand[j] for j in range(n) if j != seat and not void[j][s])
            self.slots_by_suit[s] = slots
            if slots <= 0:
                continue
            for j in range(n):
                if j == seat:
                    continue
                if not void[j][s]:
                    self.p_hand[j][s] = unseen_hand[j] / slots
                self.p_box[j][s] = box_sizes[j] / slots

    # -- future value of a card --------------------------------------------------------------

    def value(self, card: int, in_box: bool = False) -> float:
        suit, index = divmod(card, 13)
        is_trump = suit == self.trump
        v = _value(_above(self.out_by_suit[suit], index), is_trump)
        if in_box and not is_trump:
            v *= _BOX_PLAIN_FACTOR
        return v

    # -- can a seat still to play beat the best card? ----------------------------------------

    def p_beat(self, other: int, best: int, led: int) -> float:
        """Chance that ``other``, playing later in this trick, can beat ``best``."""
        trump = self.trump
        b_suit, b_index = divmod(best, 13)
        best_is_trump = b_suit == trump
        known = self.known[other]
        unknown = self.unknown_by_suit

        def beaters(suit: int) -> int:  # unknown cards of ``suit`` that beat ``best``
            if suit == b_suit:
                return _above(unknown[suit], b_index)
            if suit == trump and not best_is_trump:
                return unknown[suit].bit_count()
            return 0

        def known_beats(card: int) -> bool:
            s, i = divmod(card, 13)
            return (s == b_suit and i > b_index) or (s == trump and not best_is_trump)

        # Box cards: usable when void in the led suit (or when the hand is empty).
        box_n = self.box_sizes[other]
        if box_n and (self.may_look[other] or self.hand_sizes[other] == 0):
            box_beaters = beaters(led) + (beaters(trump) if trump >= 0 and trump != led else 0)
            p_box_beat = 1.0 - (1.0 - self.p_box[other][led]) ** box_beaters
            if not self.may_look[other]:  # played blind: one card at random
                p_box_beat = min(1.0, box_beaters / max(1, self.slots_by_suit[led]))
        else:
            p_box_beat = 0.0

        if self.hand_sizes[other] == 0:
            return p_box_beat

        p_led = self.p_hand[other][led]
        has_led_known = any(c // 13 == led for c in known)
        # Following suit: beats with a higher card of the led suit (unless best is a ruff).
        if any(c // 13 == led and known_beats(c) for c in known):
            return 1.0
        p_follow_beat = 1.0 - (1.0 - p_led) ** beaters(led) if led == b_suit else 0.0
        if has_led_known:
            return p_follow_beat
        p_void = (1.0 - p_led) ** unknown[led].bit_count()
        # Void in the led suit: a trump from the hand, or a box card.
        if trump >= 0 and trump != led:
            if any(c // 13 == trump and known_beats(c) for c in known):
                p_ruff = 1.0
            else:
                p_ruff = 1.0 - (1.0 - self.p_hand[other][trump]) ** beaters(trump)
        else:
            p_ruff = 0.0
        p_void_beat = 1.0 - (1.0 - p_ruff) * (1.0 - p_box_beat)
        return p_follow_beat + p_void * p_void_beat

    def average_draw_value(self) -> float:
        """Expected future value, to us, of a face-down stack card."""
        total = 0.0
        count = 0
        trump = self.trump
        for s in range(4):
            out = self.out_by_suit[s]
            ranks = self.unknown_by_suit[s]
            while ranks:
                low = ranks & -ranks
                total += _value(_above(out, low.bit_length() - 1), s == trump)
                count += 1
                ranks ^= low
        return total / count if count else 0.0


class HeuristicBot:
    """Card counting plus a one-move evaluation; see the module docstring.

    Deterministic for a given view, except when forced to play a closed box blind, where
    it picks a card with the ``rng`` passed in.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view) -> Play:
        moves = view.legal_moves
        if len(moves) == 1:
            return moves[0]
        weighed = self.weigh(view)
        if not weighed:
            # Only a closed box is left (rule 7: played blind): nothing to choose on.
            return self.rng.choice(moves)
        best_score, choice = weighed[0][1], weighed[0][0]
        for move, score in weighed[1:]:
            if score > best_score:
                best_score, choice = score, move
        return choice

    def weigh(self, view) -> list[tuple[Play, float]]:
        """Each legal move the seat can judge, in the order of ``legal_moves``, with its score
        (see the module docstring): ``choose`` plays the first of the highest. Empty when only
        a closed box is left (played blind: nothing to judge). A search bot reads these as a
        model of how another seat plays (``boxwhist.inference``)."""
        moves = view.legal_moves
        hand = {p: int(c) for p, c in view.hand.items() if c is not None}
        box_open = {p: int(c) for _, p, c in view.box if c is not None}
        cards = {**hand, **box_open}
        # A box card not yet revealed to us (an open box mid-reveal) is never chosen over a
        # known card: we cannot judge it.
        moves = [m for m in moves if m.position in cards]
        if not moves:
            return []
        k = _Knowledge(view, hand, box_open)
        seat, n, trump = k.seat, k.players, k.trump
        trick = view.trick
        led = int(trick[0].card) // 13 if trick else -1
        best = None
        if trick:
            best = max((int(p.card) for p in trick), key=lambda c: trick_strength(c, led, trump))
        later = [(seat + i) % n for i in range(1, n - len(trick))]

        # What winning this trick is worth.
        worth = 1.0
        exposed = view.exposed
        if exposed is not None:
            worth += _PRIZE_WEIGHT / (n - 1) * (k.value(int(exposed)) - k.average_draw_value())

        suit_len = [0] * 4
        for c in hand.values():
            suit_len[c // 13] += 1

        weighed = []
        for move in moves:
            card = cards[move.position]
            in_box = move.position in box_open
            suit = card // 13
            lead_suit = led if led >= 0 else suit
            if best is not None and trick_strength(card, led, trump) <= trick_strength(best, led, trump):
                p_win = 0.0
            else:
                p_win = 1.0
                for other in later:
                    p_win *= 1.0 - k.p_beat(other, card, lead_suit)
            score = p_win * worth - k.value(card, in_box) - _RANK_TIEBREAK * (card % 13)
            if led >= 0 and suit != led and not in_box:
                # A discard (or ruff) from the hand: shortening a short suit brings a void.
                score += _SHORT_SUIT_BONUS / suit_len[suit]
            weighed.append((move, score))
        return weighed
