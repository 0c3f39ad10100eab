"""German Whist, for 2 players: the rules engine.

Everything that affects play lives here, and each rule cites its number in
``protocol/rules-germanwhist.md``:

- the deal layout: which deck position goes to which hand, and the stack (rule 2);
- trumps, the first turned card's suit (rule 3); the first lead (rule 4); legal plays (rule 5);
  the trick winner (rule 6); the stack draws, the winner's public and the loser's private
  (rule 7); the end of the hand (rule 8) and its winner under the chosen scoring (rule 9).

Invariants the tests check: every card is at exactly one place (a hand, the stack, the trick in
progress or a won trick); while the stack lasts both hands keep 13 cards; a view never holds a
card its seat may not know: above all, never the card the other seat drew face down, nor a
face-down stack card.

The state is mutable and cheap to ``clone`` (the search bot plays out sampled deals on copies);
it is still pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from p2pwhist.cards import CARDS, Card, CardError, Suit
from p2pwhist.games.base import (
    PLAYS,
    ConfigError,
    EngineMisuse,
    HandResult,
    HonourPolicy,
    IllegalMove,
    Play,
    best_score,
    learn_card,
    lowest_cut,
)
from p2pwhist.wire import describe

PLAYERS = 2  # rule 1
HAND_SIZE = 13  # rule 2
DECK_SIZE = len(CARDS)
STACK = tuple(range(PLAYERS * HAND_SIZE, DECK_SIZE))  # rule 2: positions 26..51, top first
TRUMP_CARD = STACK[0]  # rule 3: the first turned card names trumps
STACK_TRICKS = len(STACK) // PLAYERS  # rule 7: each stack trick takes two stack cards
TRICKS_PER_HAND = DECK_SIZE // PLAYERS  # rule 8


class Scoring(enum.Enum):
    """Rule 9: which tricks count towards the hand's winner (the option sources differ on)."""

    LAST13 = "last13"  # only the 13 tricks played after the stack is gone
    ALL26 = "all26"  # every trick, the stack tricks too


class Illegal(enum.Enum):
    """Why German Whist refuses a move: the rule in words."""

    HAND_OVER = "the hand is over"
    NOT_YOUR_TURN = "it is not this player's turn"
    NOT_YOUR_CARD = "that card is not in the player's hand"
    MUST_FOLLOW_SUIT = "must follow suit"


def trick_strength(card: int, led: int, trump: int) -> int:
    """Rule 6: a trump beats the suit led, which beats any other suit; within a suit, the rank.
    Cards and suits as their codes, so that a bot can call it on plain ints."""
    suit = card // 13
    return card % 13 + (100 if suit == trump else 50 if suit == led else 0)


def dealt_hand(seat: int, dealer: int) -> tuple[int, ...]:
    """Rule 2: the deal alternates one card at a time from the non-dealer, so the non-dealer
    gets the even positions 0..24 and the dealer the odd ones 1..25."""
    first = (seat - dealer - 1) % PLAYERS
    return tuple(range(first, PLAYERS * HAND_SIZE, PLAYERS))


@dataclass(frozen=True)
class GermanWhist:
    """The game configuration both peers agree on before play (the rules' *options*)."""

    name: ClassVar[str] = "germanwhist"
    most_hand_points: ClassVar[int] = 1  # rule 9: 1 to the hand's winner, none for a draw
    players: int = PLAYERS
    variant: Scoring = Scoring.LAST13  # rule 9

    def __post_init__(self) -> None:
        if type(self.players) is not int or self.players != PLAYERS:
            raise ConfigError(f"German Whist is for 2 players, not {describe(self.players)}")
        if type(self.variant) is not Scoring:
            names = {scoring.value for scoring in Scoring}
            if type(self.variant) is not str or self.variant not in names:
                raise ConfigError(f"the scoring is {' or '.join(sorted(names))}, not {describe(self.variant)}")
            object.__setattr__(self, "variant", Scoring(self.variant))

    def deck(self) -> tuple[Card, ...]:
        return CARDS

    def first_dealer(self, cut: Sequence[Card]) -> int:
        """Rule 2: the lower cut deals, ace low; equal ranks by suit, hearts lowest."""
        return lowest_cut(self.players, cut)

    def new_hand(self, dealer: int, previous: Sequence[GermanWhistHand] = (),
                 cards: Sequence[Card | None] | None = None,
                 honour: HonourPolicy = HonourPolicy.REFUSE) -> GermanWhistHand:
        """A fresh hand (hands are independent: ``previous`` is unused). ``cards`` is the deck
        in position order, None where unknown."""
        return GermanWhistHand(self, dealer, cards, honour)

    def to_wire(self) -> dict[str, Any]:
        return {"game": self.name, "players": self.players, "variant": self.variant.value}

    @staticmethod
    def from_wire(obj: object) -> GermanWhist:
        if not isinstance(obj, dict) or set(obj) != {"game", "players", "variant"} or obj["game"] != GermanWhist.name:
            raise ConfigError(f"not a German Whist configuration: {describe(obj)}")
        return GermanWhist(obj["players"], obj["variant"])


@dataclass(frozen=True, slots=True)
class TrickPlay:
    seat: int
    position: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickResult:
    """A finished trick; while the stack lasts, ``won`` is the turned card the winner took and
    ``drawn`` the face-down card the loser took (rule 7), else both None."""

    plays: tuple[TrickPlay, ...]
    winner: int
    won: int | None
    drawn: int | None

    @property
    def scoring(self) -> bool:
        """Whether the trick was played after the stack was gone (rule 9's last 13)."""
        return self.won is None


@dataclass(frozen=True, slots=True)
class Revoke:
    """Rule 5 broken: ``seat`` did not follow suit, though able to."""

    seat: int
    trick: int  # 0-based trick number
    position: int


class GermanWhistHand:
    """One hand of German Whist. Positions refer to the shuffled deck (rule 2).

    Attributes are public for the audit and the bots, read-only by convention: change the state
    only through ``apply`` and ``learn``.
    """

    hands: list[list[int]]  # positions in each seat's hand
    stack: list[int]  # top first; the top card is face up (the turned card)
    trick: list[TrickPlay]  # the trick in progress
    turn: int | None  # None once the hand is over
    tricks: list[TrickResult]
    public: set[int]  # positions both seats may know
    private: list[set[int]]  # per seat, the positions only it may know (its deal and draws)
    revokes: list[Revoke]

    # ``cards``: Cards, or their codes (the search bot's sampled decks), made Cards here.
    def __init__(self, game: GermanWhist, dealer: int, cards: Sequence[int | None] | None,
                 honour: HonourPolicy = HonourPolicy.REFUSE) -> None:
        if dealer not in range(PLAYERS):
            raise EngineMisuse(f"dealer must be a seat in 0..{PLAYERS - 1}, not {dealer!r}")
        if cards is None:
            cards = [None] * DECK_SIZE
        if len(cards) != DECK_SIZE:
            raise EngineMisuse(f"the deck has {DECK_SIZE} positions, not {len(cards)}")
        self.game = game
        self.dealer = dealer
        self.cards = [None if c is None else Card(c) for c in cards]
        self.honour = honour
        self.hands = [list(dealt_hand(seat, dealer)) for seat in range(PLAYERS)]
        self.private = [set(hand) for hand in self.hands]
        self.stack = list(STACK)
        self.public = {TRUMP_CARD}
        self.trick = []
        self.turn = (dealer + 1) % PLAYERS  # rule 4
        self.tricks = []
        self.tricks_won = [0, 0]
        self.scoring_won = [0, 0]  # tricks won after the stack is gone
        self.revokes = []

    def clone(self) -> GermanWhistHand:
        """An independent copy, for the search bot's playouts (the immutable records, the
        game and the finished tricks' plays, are shared)."""
        other = GermanWhistHand.__new__(GermanWhistHand)
        other.game, other.dealer, other.honour = self.game, self.dealer, self.honour
        other.cards = list(self.cards)
        other.hands = [list(hand) for hand in self.hands]
        other.private = [set(known) for known in self.private]
        other.stack = list(self.stack)
        other.public = set(self.public)
        other.trick = list(self.trick)
        other.turn = self.turn
        other.tricks = list(self.tricks)
        other.tricks_won = list(self.tricks_won)
        other.scoring_won = list(self.scoring_won)
        other.revokes = list(self.revokes)
        return other

    # -- static facts --------------------------------------------------------------------

    players = PLAYERS

    @property
    def variant(self) -> Scoring:
        return self.game.variant

    @property
    def trump(self) -> Suit:
        """Rule 3: the suit of the first turned card, for the whole hand."""
        card = self.cards[TRUMP_CARD]
        if card is None:
            raise EngineMisuse("the first turned card (trumps) has not been revealed")
        return card.suit

    # -- whose turn, what is legal -------------------------------------------------------

    @property
    def current_seat(self) -> int | None:
        return self.turn

    @property
    def is_over(self) -> bool:
        return self.turn is None

    @property
    def turned(self) -> int | None:
        """Position of the face-up stack card, the trick's prize, while the stack lasts."""
        return self.stack[0] if self.stack else None

    def legal_moves(self) -> list[Play]:
        """Rule 5 for the seat to act, whose hand must be known to this state."""
        seat = self.turn
        if seat is None:
            return []
        hand = self.hands[seat]
        if self.trick:
            led = self.trick[0].card.suit
            cards = self.cards
            following = [PLAYS[p] for p in sorted(hand) if cards[p].suit is led]  # type: ignore[union-attr]
            if following:
                return following
        return [PLAYS[p] for p in sorted(hand)]

    def apply(self, move: Play) -> None:
        """Play a card, refusing it with an ``IllegalMove`` that says which rule it breaks.

        The card must be known to this state (a peer learns it when the player reveals it).
        Following suit is checked only when this state knows the player's whole hand; otherwise
        it is on honour until the end-of-hand audit (rule 10).
        """
        seat, revoke = self._validate(move, self.honour)
        position = move.position
        card = self.cards[position]
        if card is None:
            raise EngineMisuse(f"position {position} must be revealed before it is played")
        if revoke:
            self.revokes.append(Revoke(seat, len(self.tricks), position))
        self.hands[seat].remove(position)
        self.public.add(position)
        self.trick.append(TrickPlay(seat, position, card))
        if len(self.trick) < PLAYERS:
            self.turn = 1 - seat
        else:
            self._finish_trick()

    def check(self, move: Play) -> None:
        """Raise the ``IllegalMove`` that ``apply`` would, without playing."""
        self._validate(move, self.honour)

    def refusal(self, move: Play) -> IllegalMove | None:
        """Why the rules refuse ``move`` for the seat to act, or None; always strictly (a seat's
        own move is never a revoke on honour)."""
        try:
            self._validate(move, HonourPolicy.REFUSE)
        except IllegalMove as refused:
            return refused
        return None

    def _validate(self, move: Play, policy: HonourPolicy) -> tuple[int, bool]:
        """Rule 5: (seat, is a revoke to record?) or ``IllegalMove``."""
        seat = self.turn
        if seat is None:
            raise IllegalMove(Illegal.HAND_OVER, -1)
        position = move.position
        hand = self.hands[seat]
        if position not in hand:
            raise IllegalMove(Illegal.NOT_YOUR_CARD, seat, f"position {position}")
        if not self.trick:
            return seat, False
        led = self.trick[0].card.suit
        cards = self.cards
        card = cards[position]
        if card is not None and card.suit is led:
            return seat, False
        if any(cards[p] is None for p in hand):
            return seat, False  # not knowable here: on honour until the audit
        if not any(cards[p].suit is led for p in hand):  # type: ignore[union-attr]
            return seat, False
        if policy is HonourPolicy.REFUSE:
            raise IllegalMove(Illegal.MUST_FOLLOW_SUIT, seat, f"holds {led.name.lower()}")
        return seat, True

    def _finish_trick(self) -> None:
        """Rules 6-8: the winner, the stack draws, the next leader or the end."""
        plays = self.trick
        trump = int(self.trump)
        led = int(plays[0].card) // 13
        winner = max(plays, key=lambda play: trick_strength(play.card, led, trump)).seat
        loser = 1 - winner
        self.tricks_won[winner] += 1
        won = drawn = None
        if self.stack:
            won, drawn = self.stack[0], self.stack[1]
            del self.stack[:2]
            self.hands[winner].append(won)  # the turned card: public already
            self.hands[loser].append(drawn)
            self.private[loser].add(drawn)  # rule 7: the loser's draw is not shown
            if self.stack:
                self.public.add(self.stack[0])  # the next card is turned
        else:
            self.scoring_won[winner] += 1
        self.tricks.append(TrickResult(tuple(plays), winner, won, drawn))
        self.trick = []
        self.turn = winner if self.hands[winner] else None

    # -- knowledge -----------------------------------------------------------------------

    def visible_to(self, seat: int | None) -> frozenset[int]:
        """Positions whose card ``seat`` may know now: the turned and played cards, its own
        dealt hand and the cards it drew face down (rule 7). No seat (a spectator): the turned
        and played cards."""
        return frozenset(self.public if seat is None else self.public | self.private[seat])

    def learn(self, position: int, card: Card) -> None:
        learn_card(self.cards, position, card)

    def view(self, seat: int | None) -> GermanWhistView:
        return GermanWhistView(self, seat)

    # -- the outcome ---------------------------------------------------------------------

    @property
    def scores(self) -> tuple[int, ...]:
        """Rule 9: the tricks that count, per seat, under the game's scoring."""
        return tuple(self.scoring_won if self.variant is Scoring.LAST13 else self.tricks_won)

    def result(self, offenders: frozenset[int] = frozenset(), left: frozenset[int] = frozenset()) -> HandResult:
        """Rule 9: most counting tricks wins; a proven offender loses (rule 10); equal is a
        draw. A hand cut short by a forfeit is scored as it stands, lost by the seat that
        left (``left``) as by an offender."""
        if not self.is_over and not (offenders or left):
            raise EngineMisuse("the hand is not over")
        offenders = frozenset(offenders) | {r.seat for r in self.revokes}
        scores = self.scores
        winner = best_score(scores, offenders | left)
        return HandResult(scores, offenders, tuple(int(seat == winner) for seat in range(PLAYERS)), frozenset(left))

    def tags(self) -> dict[str, str]:
        if self.cards[TRUMP_CARD] is None:
            return {"trumps": "?"}  # a hand forfeited before the turned card's keys were out
        return {"trumps": self.trump.name.lower(), "scoring": self.variant.value}

    def __repr__(self) -> str:
        return f"<GermanWhistHand dealer={self.dealer} tricks={len(self.tricks)} turn={self.turn}>"


class GermanWhistView:
    """What one seat may know of a hand: the per-player observer; with ``seat`` None, what
    both seats may know (the public observer, a spectator's), which holds no hand. It reads
    the live state and is valid until the next ``apply``; every card it returns is at a
    position in ``state.visible_to(seat)``."""

    __slots__ = ("_state", "seat")

    def __init__(self, state: GermanWhistHand, seat: int | None) -> None:
        self._state = state
        self.seat = seat

    # Public facts.
    players = PLAYERS

    @property
    def dealer(self) -> int:
        return self._state.dealer

    @property
    def game(self) -> GermanWhist:
        return self._state.game

    @property
    def variant(self) -> Scoring:
        return self._state.variant

    @property
    def trump(self) -> Suit:
        return self._state.trump

    @property
    def turn(self) -> int | None:
        return self._state.turn

    @property
    def turned(self) -> Card | None:
        """The face-up stack card the trick is played for, while the stack lasts."""
        position = self._state.turned
        return None if position is None else self._state.cards[position]

    @property
    def stack_size(self) -> int:
        return len(self._state.stack)

    @property
    def trick(self) -> tuple[TrickPlay, ...]:
        return tuple(self._state.trick)

    @property
    def tricks(self) -> tuple[TrickResult, ...]:
        return tuple(self._state.tricks)

    @property
    def tricks_won(self) -> tuple[int, ...]:
        return tuple(self._state.tricks_won)

    @property
    def scores(self) -> tuple[int, ...]:
        return self._state.scores

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self._state.hands)

    def card(self, position: int) -> Card | None:
        """The card at ``position`` if this seat may know it (and it has been revealed)."""
        state = self._state
        seen = position in state.public or (self.seat is not None and position in state.private[self.seat])
        return state.cards[position] if seen else None

    def known_hand_cards(self, seat: int) -> tuple[Card, ...]:
        """Cards everyone knows are in ``seat``'s hand: the turned cards it won, not yet played."""
        state = self._state
        return tuple(state.cards[p] for p in state.hands[seat] if p in state.public)  # type: ignore[misc]

    # This seat's own cards (none for no seat).
    @property
    def hand(self) -> dict[int, Card]:
        """Position → card for this seat's hand."""
        state = self._state
        if self.seat is None:
            return {}
        return {p: state.cards[p] for p in state.hands[self.seat]}  # type: ignore[misc]

    @property
    def legal_moves(self) -> list[Play]:
        seat = self.seat
        return self._state.legal_moves() if seat is not None and self._state.turn == seat else []

    def refusal(self, move: Play) -> IllegalMove | None:
        if self.seat is None or self._state.turn != self.seat:
            return IllegalMove(Illegal.NOT_YOUR_TURN, -1 if self.seat is None else self.seat)
        return self._state.refusal(move)

    def parse_move(self, text: str) -> Play:
        """Read a card typed by a person: ``QS``, ``10h``, ``q♠``."""
        card = Card.parse(text)
        for p, held in self.hand.items():
            if held == card:
                return PLAYS[p]
        raise CardError(f"{card} is not in your hand")

    def describe_move(self, move: Play) -> str:
        """Its card as the table shows it (``Q♠``, which a ``Style`` without symbols prints as ``QS``)."""
        card = self.card(move.position)
        return str(card) if card is not None else f"position {move.position}"
