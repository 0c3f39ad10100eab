"""A fast rule-of-thumb player for Box (``p2pwhist/games/box/engine.py``), 2 to 6 players, both variants.

The bot reads only its seat's ``BoxView`` (its hand, every card turned face up, the public
sizes of hands, boxes and extra piles) and decides with a few rules, no search. A Box player
has few choices (rule numbers are those of ``protocol/rules-box.md``): the opener must lay the
highest hand card (rule 4), a player who can lay must (rules 5-6: on honour, refused in local
play). What is left to choose:

(a) which hand card to lay, of those equal to or lower than the card to beat;
(b) which box slot to take, which matters only when some box cards are known: under pagat a
    card put back from the extra pile stays face up for all (rule 7);
(c) under pagat, which extra card to put back into the box (rule 7).

The rules are one function, ``pick``, over any kind of move: the bot applies it to its view,
and the search bot (``search.py``) to every seat in its playouts.

What the bot does, and why:

(a) Lay the *highest* card that passes. The card to beat only ever falls within a round, so a
    player is caught (and must risk a box card, rule 6) when the card to beat drops below its
    lowest hand card: low cards are what keep a player safe, high cards are worth nothing but
    the lead, which the opener must make with its highest card anyway. Laying high also keeps
    the card to beat up for the seats that follow, but that helps random opponents less than
    keeping our low cards helps us.
(b) Take the box card most likely to stand: a known card equal or lower (surely), else a
    closed one (it stands with the share of unseen cards that are equal or lower: card
    counting over every card we have seen), else a known card too high. Every take costs the
    box card either way; one that stands keeps the round going without handing anything to
    the player before us (pagat: a too-high card becomes that player's extra card), and under
    pagat a standing take is free for a player with extra cards (one goes back into the box).
    Of known cards that stand we take the highest (the lower one stands on more cards later);
    of sure failures we give away the highest known card (a high extra card is the least use
    to the player who gets it). An empty-handed opener's card always stands: it spends its
    highest known card, which would otherwise only stand on a higher card to beat.
(c) Put back the *lowest* extra card: once in the box it is known to all, and we can take it
    on purpose when it will stand; a low card stands on more.

Measured in ``scripts/bench_engine.py``'s setting: 4 players, this bot in one seat against three
``RandomBot`` seats, the seat rotating; 8000 games a line unless noted (standard error about
0.005; ideas compared on the same decks). Seed rules: the share of games lost (fair 0.25, goal
0.15). Pagat's: the share of games won (fair 0.25).

    seed rules                                                         lost
    a random legal move (the baseline)                                 0.263
    lay the lowest card that passes                                    0.348
    lay the highest card that passes: (a)                              0.182, 0.186 (two runs)
    (a), but the lowest when the next seat's hand is empty
      (it must take: make its take fail)                               0.177, 0.194 (no effect)
    (a), but the lowest when the next seat's box holds one card
      (its take would end the game): any box of ours / ours >= 2       0.190 / 0.189
    (a), but the lowest when the next box is smaller than ours /
      holds at most two cards                                          0.200 / 0.197
    1-ply Monte Carlo over (a) (every card that passes, 150 sampled
      deals and rollouts each; an experiment, 0.6 s a game)            0.194 (1200 games)

    pagat's rules                                                      won
    a random legal move                                                0.248
    (a), a random box slot and extra card                              0.355
    the lowest card that passes, then (b)-(c)                          0.209
    (a)-(c), without (b)'s chance test (see below)                     0.382; 0.394 (16000)
      ... put back the highest / a random extra card                   0.329 / 0.361
      ... of known cards that stand, take the lowest                   0.391; 0.395 (16000)
      ... a known too-high card before a closed one                    0.345
      ... a closed card only if it stands with a chance of at least
          0.1 / 0.25 (card counting), else a known too-high card       0.392 / 0.377 (16000)
      ... a closed card only if its chance is above 0 ((b), kept:
          the chance is rarely 0, and a closed card is then no better) 0.392 (16000)
      ... an empty-handed opener takes a closed card / its lowest
          known card                                                   0.387 / 0.383
      ... the lowest card when the next seat's hand is empty           0.387
    (a)-(c), this module                                               0.381; 0.389 (bench, 4000)
    At 2 players (fair 0.5): seed lost 0.384 (random 0.501), pagat won 0.606; at 6 (fair 1/6):
    seed lost 0.134 (random 0.170), pagat won 0.236 (4000 games each).

The goal of 0.15 lost under the seed rules is out of reach for any rule on what this bot may
choose. A rollout study of 661 decisions with two or more ranks to choose from (every rank, 400
sampled deals each, (a) afterwards) found the best alternative better than (a) by 0.002 a
decision on average (noise included), about 0.006 a game over the three such decisions a game
offers; the Monte Carlo bot above, which plays the rollouts' best card each time, did no
better than (a). The deviations that looked promising (make a seat that must take, or that is one
card from losing, fail) cost more in low cards than they gain.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from p2pwhist.games.base import Play
from p2pwhist.games.box.engine import BoxView, Phase

__all__ = ["BoxHeuristicBot", "pick"]

M = TypeVar("M", bound=Hashable)

_COPIES = 4  # cards of each rank in the pack (rules-box.md rule 1); suits do not matter


def _stand_chance(view: BoxView, to_beat: int) -> float:
    """The chance that a closed box card is equal to or lower than ``to_beat`` (a rank): the
    share of the cards this seat has not seen that are. Every closed card is one of them (the
    deck's unseen cards are spread over boxes, other hands and the pile alike)."""
    seen = [0] * 15
    for card in view.known.values():
        seen[card.rank] += 1
    unseen = [_COPIES - seen[rank] for rank in range(2, 15)]
    total = sum(unseen)
    return sum(unseen[: to_beat - 1]) / total if total else 0.0


class BoxHeuristicBot:
    """Lays its highest card that passes, takes the box card most likely to stand, puts back
    its lowest extra card; see the module docstring for the reasons and the measurements.

    Deterministic for a given view and ``rng``: the ``rng`` picks only among closed box cards,
    which this seat cannot tell apart."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: BoxView) -> Play:
        moves, seat = view.legal_moves, view.seat
        if not moves or seat is None:  # a spectator's view (no seat) has no moves either
            raise ValueError(f"seat {seat} has no move: it is not its turn or the game is over")
        if len(moves) == 1:
            return moves[0]
        rank = {m: card.rank for m in moves if (card := view.card(m.position)) is not None}
        to_beat = view.to_beat
        return pick(moves, rank, view.phase is Phase.RESTOCK, moves[0].position in view.hands[seat],
                    None if to_beat is None else to_beat.rank, self.rng,
                    lambda: to_beat is not None and _stand_chance(view, to_beat.rank) > 0)


def pick(moves: Sequence[M], rank: Mapping[M, int], restock: bool, laying: bool, to_beat: int | None,
         rng: random.Random, closed_may_stand: Callable[[], bool]) -> M:
    """The rules (a)-(c) of the module docstring over any kind of move (``Play``s for the bot,
    deck positions for ``search``'s playouts): ``rank`` holds the moves whose card the
    player knows (every move but a closed box card), ``to_beat`` the rank to beat (None for
    an opener) and ``closed_may_stand`` says (when asked) whether a closed box card may stand."""
    if restock:  # (c): every extra card is known
        return min(moves, key=rank.__getitem__)
    if laying:  # (a) (an opener's moves are all of its highest rank)
        return max(moves, key=rank.__getitem__)
    # (b): the box slot most likely to stand.
    closed = [m for m in moves if m not in rank]
    if to_beat is None:  # an empty-handed opener: every card stands
        if rank:
            return max(rank, key=rank.__getitem__)
        return rng.choice(closed)
    stands = [m for m in rank if rank[m] <= to_beat]
    if stands:
        return max(stands, key=rank.__getitem__)
    if closed and closed_may_stand():
        return rng.choice(closed)
    if rank:  # all fail: give away the highest known card, keep the closed ones
        return max(rank, key=rank.__getitem__)
    return rng.choice(closed)
