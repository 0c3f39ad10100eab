"""Match play (rule 12 of protocol/rules-boxwhist.md), for any game.

A match is a sequence of hands that ends after a set number of hands, or once a set time has
passed: no new hand starts after it. The clock lives at the edge; this module is told whether
the time is up. The deal passes to the left each hand. Each hand gives each seat the points
its game's rules say (``HandResult.points``); the overall winner has the most points, and equal
most is a drawn match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2pwhist.cards import Card
from p2pwhist.games.base import ConfigError, Game, HandResult, HandState, best_score
from p2pwhist.wire import describe

# A generous cap, so that a hostile configuration cannot announce an endless match.
MAX_HANDS = 1000
MAX_MINUTES = 24 * 60


@dataclass(frozen=True)
class MatchLength:
    """When a match ends: after ``hands`` hands, or after ``minutes``, whichever comes first;
    with neither, it is *open*: it goes on "as long as both players wish" (Box Whist's seed),
    until a player says no after a hand (the session asks each in turn), or ``MAX_HANDS``."""

    hands: int | None = None
    minutes: int | None = None

    @property
    def open(self) -> bool:
        return self.hands is None and self.minutes is None

    def __post_init__(self) -> None:
        for name, value, cap in (("hands", self.hands, MAX_HANDS), ("minutes", self.minutes, MAX_MINUTES)):
            if value is not None and (type(value) is not int or not 1 <= value <= cap):
                raise ConfigError(f"{name} must be a whole number in 1..{cap}, not {describe(value)}")

    def to_wire(self) -> dict[str, Any]:
        return {"hands": self.hands, "minutes": self.minutes}

    @staticmethod
    def from_wire(obj: object) -> MatchLength:
        if not isinstance(obj, dict) or set(obj) != {"hands", "minutes"}:
            raise ConfigError(f"not a match length: {describe(obj)}")
        return MatchLength(obj["hands"], obj["minutes"])


@dataclass
class Match:
    game: Game
    length: MatchLength
    first_dealer: int
    hands: list[HandState] = field(default_factory=list)
    results: list[HandResult] = field(default_factory=list)
    forfeited: int | None = None  # the seat that left the match, which loses it


    @staticmethod
    def after_cut(game: Game, length: MatchLength, cut: Sequence[Card]) -> Match:
        return Match(game, length, game.first_dealer(cut))

    @property
    def next_dealer(self) -> int:
        return (self.first_dealer + len(self.hands)) % self.game.players

    def is_over(self, time_up: bool = False) -> bool:
        """Whether no further hand starts; ``time_up`` counts only once a hand was played (a
        match plays at least one, however long the cut took)."""
        if len(self.results) < len(self.hands):
            return False  # a hand is in progress
        hands = self.length.hands or MAX_HANDS
        return time_up and bool(self.hands) or len(self.hands) >= min(hands, MAX_HANDS)

    @property
    def settled(self) -> int | None:
        """The seat that wins this match of set length whatever the hands left give, while
        some are left: every other seat trails it by more than those hands could give it
        (the game's ``most_hand_points`` each), so none can catch up, nor draw level. None
        while a hand is in progress, with no hand left, in a match of no set length (its end
        is not foreseen), or while another seat could still catch up."""
        if self.length.hands is None or len(self.results) < len(self.hands) or self.forfeited is not None:
            return None
        left = self.length.hands - len(self.hands)
        points, leader = self.points, self.winner
        if left <= 0 or leader is None:
            return None
        reach = left * self.game.most_hand_points
        return leader if all(points[seat] + reach < points[leader] for seat in range(len(points)) if seat != leader) \
            else None

    def start_hand(self, cards: Sequence[Card | None] | None = None, **options: Any) -> HandState:
        if len(self.results) < len(self.hands):
            raise ConfigError("the previous hand has not been recorded")
        hand = self.game.new_hand(self.next_dealer, self.hands, cards, **options)
        self.hands.append(hand)
        return hand

    def record(self, result: HandResult) -> None:
        if len(self.results) >= len(self.hands):
            raise ConfigError("no hand in progress")
        self.results.append(result)

    @property
    def points(self) -> tuple[int, ...]:
        """Each seat's points so far: the sum of what each hand gave it (``HandResult.points``)."""
        return tuple(map(sum, zip(*(result.points for result in self.results)))) or (0,) * self.game.players

    def forfeit(self, seat: int) -> None:
        """``seat`` leaves the match and loses it: a hand in progress is scored as it stands,
        lost by ``seat``, and the match goes to the seat with the most points among the rest."""
        if len(self.results) < len(self.hands):
            self.results.append(self.hands[-1].result(left=frozenset({seat})))
        self.forfeited = seat

    @property
    def winner(self) -> int | None:
        """The seat with the most points, or None: equal most is a drawn match. A seat that
        forfeited wins nothing and shares in no result: where the others share the most, nobody
        wins, which is no draw (session.md §7.3)."""
        return best_score(self.points, frozenset() if self.forfeited is None else frozenset({self.forfeited}))
