"""A fast rule-of-thumb player for German Whist.

The bot reads only its seat's view (the public ``GermanWhistView`` API, never ``view._state``)
and decides each move with one cheap evaluation, no search:

    score(card) = P(win the trick | play card) * W  -  V(card)

- ``V(card)`` is what keeping the card is worth for the scoring tricks to come, from card
  counting: how many cards still out (not played, not ours) beat it, and whether it is a trump.
- ``W`` is what winning this trick is worth. While the stack lasts (rule 7) the winner takes the
  turned card and the loser a face-down card: ``W`` is the turned card's value less the mean
  value of a card still unseen, weighed by ``_PRIZE_WEIGHT``. A high turned card is worth
  winning, a low one worth losing, so the formula wins it with the cheapest card that wins, or
  dumps the lowest card when it is low. After the stack (rule 9) every trick counts: ``W`` is
  one trick (under the ``all26`` scoring a stack trick also counts one).
- ``P(win)`` is exact when we play second; when we lead, the other seat is assumed to beat our
  card when it can, with what it is known to hold (the turned cards it won) and the chance that
  its unknown cards include a beater. Once the stack is gone every card not ours and not played
  is in the other hand, so the count is exact and ``P(win)`` is 0 or 1.
"""

from __future__ import annotations

import random

from p2pwhist.games.base import Play
from p2pwhist.games.germanwhist.engine import Scoring, trick_strength

__all__ = ["GermanWhistHeuristicBot"]

# The weights were tuned by duels between variants of this bot (each deck played with the
# variant in either seat, 1000 hands a trial, against RandomBot and against the first version),
# on the scale of one scoring trick. Future value of a card by how many outstanding cards of its
# suit beat it (the last entry for more). A plain card is worth little unless it is the top of
# its suit (the other hand may ruff or overtake it, and more cards come); trumps are worth about
# a trick each whatever their rank, since any trump wins a trick against a void: halving the
# plain values and flattening the trump values each won about 0.6-0.7 of the hands against the
# first version (whose values were 0.8, 0.45, 0.2... and 1.2 down to 0.45).
_PLAIN_VALUE = (0.40, 0.15, 0.05, 0.02, 0.01, 0.005)
_TRUMP_VALUE = (1.20, 1.15, 1.10, 1.05, 1.00, 0.95, 0.90)
# How much the turned card's value over an unseen card's adds to winning a stack trick: the
# prize goes to us and the face-down card's chance to the other seat, so the difference counts
# about twice (measured: 2.0 beats 0.5 and 1.0, and equals 1.5 to 3.0).
_PRIZE_WEIGHT = 2.0
_RANK_TIEBREAK = 0.0005  # lower cards first among equals
_SHORT_SUIT_BONUS = 0.02  # discard from a short suit: a void lets us ruff later


def _value(higher_out: int, is_trump: bool) -> float:
    table = _TRUMP_VALUE if is_trump else _PLAIN_VALUE
    return table[min(higher_out, len(table) - 1)]


class GermanWhistHeuristicBot:
    """Card counting plus a one-move evaluation; see the module docstring. Deterministic: the
    ``rng`` is taken for the bot interface only."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view) -> Play:
        moves = view.legal_moves
        if len(moves) == 1:
            return moves[0]
        scores = self.scores(view)
        return moves[max(range(len(moves)), key=scores.__getitem__)]  # of equal scores, the first

    def scores(self, view) -> list[float]:
        """The score of each of ``view.legal_moves``, in their order (the module docstring's
        formula): ``choose`` plays the best, and a searching bot asks how likely a move was."""
        moves = view.legal_moves
        hand = {p: int(c) for p, c in view.hand.items()}
        trump = int(view.trump)
        other = 1 - view.seat
        played = {int(play.card) for trick in view.tricks for play in trick.plays}
        played |= {int(play.card) for play in view.trick}
        turned = view.turned
        out = set(range(52)) - played - set(hand.values())  # not ours, not played: may beat ours
        known = {int(c) for c in view.known_hand_cards(other)}
        unseen = out - known - ({int(turned)} if turned is not None else set())
        # For each suit and rank, how many cards of that suit still out rank above it.
        is_out = [[False] * 13 for _ in range(4)]
        for c in out:
            is_out[c // 13][c % 13] = True
        above = []
        for ranks in is_out:
            counts, higher = [0] * 13, 0
            for rank in range(12, -1, -1):
                counts[rank] = higher
                higher += ranks[rank]
            above.append(counts)

        def value(card: int) -> float:
            suit, rank = divmod(card, 13)
            return _value(above[suit][rank], suit == trump)

        # The other hand's unknown cards are a share of the unseen ones (the rest is the
        # face-down stack); once the stack is gone the share is 1.
        unknown_slots = view.hand_sizes[other] - len(known)
        share = unknown_slots / len(unseen) if unseen else 0.0
        known_suits = {c // 13 for c in known}
        unseen_by_suit = [0] * 4
        for c in unseen:
            unseen_by_suit[c // 13] += 1

        def p_beaten(card: int) -> float:
            """Chance that the other seat, playing second, can beat ``card`` led: with a higher
            card of its suit, or a trump if it is not one (rule 6)."""
            led, rank = divmod(card, 13)
            higher = [c for c in out if c // 13 == led and c % 13 > rank]
            if any(c in known for c in higher) or (led != trump and trump in known_suits):
                return 1.0
            p_void = 0.0 if led in known_suits else (1.0 - share) ** unseen_by_suit[led]
            # A beater of the led suit, or (when void in it) a trump.
            p_follow_beat = 1.0 - (1.0 - share) ** sum(1 for c in higher if c in unseen)
            p_ruff = 1.0 - (1.0 - share) ** unseen_by_suit[trump] if led != trump else 0.0
            return min(1.0, p_follow_beat + p_void * p_ruff)

        if turned is not None:
            mean_unseen = sum(map(value, unseen)) / len(unseen) if unseen else 0.0
            worth = _PRIZE_WEIGHT * (value(int(turned)) - mean_unseen)
            if view.variant is Scoring.ALL26:
                worth += 1.0
        else:
            worth = 1.0
        suit_len = [0] * 4
        for c in hand.values():
            suit_len[c // 13] += 1
        trick = view.trick
        scores = []
        for move in moves:
            card = hand[move.position]
            if trick:
                first = int(trick[0].card)
                led = first // 13
                p_win = float(trick_strength(card, led, trump) > trick_strength(first, led, trump))
            else:
                p_win = 1.0 - p_beaten(card)
            score = p_win * worth - value(card) - _RANK_TIEBREAK * (card % 13)
            if trick and card // 13 != int(trick[0].card) // 13:
                score += _SHORT_SUIT_BONUS / suit_len[card // 13]
            scores.append(score)
        return scores
