"""Play hands and matches in one process, with no network.

Chance comes from the ``random.Random`` passed in: the cut and each hand's deck order.

A match is played one move at a time by ``LocalMatch``: whoever drives it asks whose turn it
is, gets that seat's move however it likes and hands it back. ``play_match`` drives it with a
bot in every seat, synchronously; the command line's full-screen table drives the same object
inside its event loop, awaiting the person's move and running each bot in a worker thread
(``cli._local_turns``). Nothing here knows about an event loop or a screen.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2pwhist.games.base import Game, HandResult, HandState, Play, View
from p2pwhist.games.bots import Bot
from p2pwhist.games.match import Match, MatchLength

OnMove = Callable[[HandState, int, Play], None]
OnHand = Callable[[HandState, HandResult], None]


def play_hand(hand: HandState, bots: Sequence[Bot], on_move: OnMove | None = None) -> HandResult:
    """Let each seat's bot move until the hand is over; ``on_move`` sees each move applied."""
    while (seat := hand.current_seat) is not None:
        move = bots[seat].choose(hand.view(seat))
        hand.apply(move)
        if on_move:
            on_move(hand, seat, move)
    return hand.result()


def shuffled_deck(game: Game, rng: random.Random) -> list:
    deck = list(game.deck())
    rng.shuffle(deck)
    return deck


@dataclass(frozen=True)
class Turn:
    """``seat`` is to move in ``hand``."""

    hand: HandState
    seat: int

    def view(self) -> View:
        """What the seat to move may know: for its bot or its person."""
        return self.hand.view(self.seat)


class LocalMatch:
    """A match of ``length.hands`` hands (the local runner has no clock), one move at a time:
    ``next_turn()`` says who is to move (dealing each hand when it is due), ``play(move)``
    makes that seat's move and records the hand's result when the move ends it."""

    def __init__(self, game: Game, length: MatchLength, rng: random.Random) -> None:
        if length.hands is None:
            raise ValueError("the local runner plays a set number of hands")
        self.rng = rng
        self.match = Match.after_cut(game, length, rng.sample(game.deck(), game.players))

    @property
    def hand(self) -> HandState | None:
        """The hand in progress, or the last one (None before the first)."""
        return self.match.hands[-1] if self.match.hands else None

    def next_turn(self) -> Turn | None:
        """The seat to move next, in a new hand if the last one is over; None once the match is over."""
        match = self.match
        if len(match.results) == len(match.hands):
            if match.is_over():
                return None
            match.start_hand(shuffled_deck(match.game, self.rng))
        hand = self.hand
        assert hand is not None and hand.current_seat is not None, "a hand starts with a move to make"
        return Turn(hand, hand.current_seat)

    def play(self, move: Play) -> HandResult | None:
        """Make the move of the seat to move; if it ends the hand, the hand's result (recorded)."""
        hand = self.hand
        assert hand is not None
        hand.apply(move)
        if hand.current_seat is not None:
            return None
        result = hand.result()
        self.match.record(result)
        return result


def play_match(
    game: Game,
    length: MatchLength,
    bots: Sequence[Bot],
    rng: random.Random,
    on_hand: OnHand | None = None,
    on_move: OnMove | None = None,
) -> Match:
    """A whole match with a bot in every seat; ``on_move`` sees each move applied, ``on_hand``
    each hand's result once the match has recorded it."""
    local = LocalMatch(game, length, rng)
    while (turn := local.next_turn()) is not None:
        move = bots[turn.seat].choose(turn.view())
        result = local.play(move)
        if on_move:
            on_move(turn.hand, turn.seat, move)
        if result is not None and on_hand:
            on_hand(turn.hand, result)
    return local.match
