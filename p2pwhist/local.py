"""Play hands and matches between bots in one process, with no network.

Chance comes from the ``random.Random`` passed in: the cut and each hand's deck order.
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

from p2pwhist.bots import Bot
from p2pwhist.games.base import Game, HandResult, HandState, Play
from p2pwhist.games.match import Match, MatchLength

OnMove = Callable[[HandState, int, Play], None]


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


def play_match(
    game: Game,
    length: MatchLength,
    bots: Sequence[Bot],
    rng: random.Random,
    on_hand: Callable[[HandState, HandResult], None] | None = None,
    on_move: OnMove | None = None,
) -> Match:
    """A whole match of ``length.hands`` hands (the local runner has no clock)."""
    if length.hands is None:
        raise ValueError("the local runner plays a set number of hands")
    match = Match.after_cut(game, length, rng.sample(game.deck(), game.players))
    while not match.is_over():
        hand = match.start_hand(shuffled_deck(game, rng))
        result = play_hand(hand, bots, on_move)
        match.record(result)
        if on_hand:
            on_hand(hand, result)
    return match
