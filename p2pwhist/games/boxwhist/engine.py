"""Box Whist, for 2, 3 or 4 players: the rules engine.

Everything that affects play lives here, and each rule cites its number in
``protocol/rules-boxwhist.md`` (which quotes the seed sentence it interprets):

- the deal layout: which deck position goes to which seat's hand or box, and the stack (rule 2);
- the trump of each hand (rule 4), the first lead (rule 5), legal plays (rules 6-7),
  the trick winner (rule 8), the stack draws (rule 9), the end of the hand (rule 10) and its
  winner (rule 11).

Invariants the tests check: every card is at exactly one place (a hand, a box, the stack, the
trick in progress or a won trick); during the stack phase a seat that plays from its hand
keeps its hand size; a view never holds a card its seat may not know.

The state is mutable and cheap to ``clone`` (bots search by copying it), in the style of
OpenSpiel's Python games; it is still pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from p2pwhist.cards import CARDS, Card, CardError, Suit, deck_without
from p2pwhist.games.base import (
    PLAYS,
    ConfigError,
    EngineMisuse,
    HandResult,
    HonourPolicy,
    IllegalMove,
    Play,
    best_score,
    box_slot,
    learn_card,
    lowest_cut,
)
from p2pwhist.wire import describe


class Illegal(enum.Enum):
    """Why Box Whist refuses a move: the rule in words."""

    HAND_OVER = "the hand is over"
    NOT_YOUR_TURN = "it is not this player's turn"
    NOT_YOUR_CARD = "that card is not in the player's hand or box"
    MUST_FOLLOW_SUIT = "must follow suit from the hand"
    LEAD_FROM_HAND = "a lead must come from the hand while the hand has cards"
    BOX_CLOSED = "the box may not be used before winning a trick (nor played blind while holding hand cards)"


def trick_strength(card: int, led: int, trump: int | None) -> int:
    """Rule 8: a trump beats the suit led, which beats any other suit; within a suit, the rank.
    Cards and suits as their codes (a ``Card`` and a ``Suit`` are ints), so that a bot can
    call it on plain ints."""
    suit = card // 13
    return card % 13 + (100 if suit == trump else 50 if suit == led else 0)


# Rule 2: cards per seat as (hand, box); the rest of the deck is the stack.
DEAL_SIZES = {2: (11, 4), 3: (8, 3), 4: (6, 2)}
# Rule 1: the 3-handed game removes the two of clubs.
THREE_HANDED_DECK = deck_without(Card.parse("2C"))
# Rule 4 default: the order attested on a court-whist scorecard (protocol/rules-boxwhist.md, rule 4).
DEFAULT_TRUMP_SEQUENCE: tuple[Suit | None, ...] = (Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS, Suit.SPADES)
# Rule 10.
TRICKS_PER_HAND = {2: 26, 3: 17, 4: 13}
# Every third round of the deal goes to the box, so box cards are "not consecutive" (rule 2).
BOX_ROUND_PERIOD = 3


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each deck position goes at the deal (rule 2), for one seat count and dealer.

    The deal goes round the table one card at a time, starting left of the dealer; every
    third round goes to the boxes until they are full. Positions are dealt in order, so
    position ``r * players + i`` is round ``r``'s card for the ``i``-th seat left of the dealer.
    """

    hands: tuple[tuple[int, ...], ...]
    boxes: tuple[tuple[int, ...], ...]
    stack: tuple[int, ...]  # top first
    trump_card: int  # the dealer's last dealt hand card (rule 4)

    @staticmethod
    @functools.cache
    def of(players: int, dealer: int, deck_size: int) -> Layout:
        hand_size, box_size = DEAL_SIZES[players]
        hands: list[list[int]] = [[] for _ in range(players)]
        boxes: list[list[int]] = [[] for _ in range(players)]
        rounds = hand_size + box_size
        box_rounds = 0
        for round_ in range(rounds):
            to_box = (round_ + 1) % BOX_ROUND_PERIOD == 0 and box_rounds < box_size
            box_rounds += to_box
            for i in range(players):
                seat = (dealer + 1 + i) % players
                (boxes if to_box else hands)[seat].append(round_ * players + i)
        dealt = rounds * players
        return Layout(
            hands=tuple(map(tuple, hands)),
            boxes=tuple(map(tuple, boxes)),
            stack=tuple(range(dealt, deck_size)),
            trump_card=hands[dealer][-1],
        )


@dataclass(frozen=True)
class BoxWhist:
    """The game configuration all peers agree on before play (the rules' *options*)."""

    name: ClassVar[str] = "boxwhist"
    most_hand_points: ClassVar[int] = 1  # rule 11: 1 to the hand's winner, none for a draw
    players: int = 2
    # Rule 4: the rotation of trumps from hand to hand; None is a no-trump hand.
    trump_sequence: tuple[Suit | None, ...] = DEFAULT_TRUMP_SEQUENCE

    def __post_init__(self) -> None:
        if type(self.players) is not int or self.players not in DEAL_SIZES:
            raise ConfigError(f"Box Whist is for 2, 3 or 4 players, not {self.players!r}")
        suits = [t for t in self.trump_sequence if t is not None]
        if sorted(suits) != list(Suit) or len(self.trump_sequence) - len(suits) > 1:
            raise ConfigError("the trump sequence must name each suit once, with at most one no-trump hand")

    def deck(self) -> tuple[Card, ...]:
        return THREE_HANDED_DECK if self.players == 3 else CARDS

    def first_dealer(self, cut: Sequence[Card]) -> int:
        """Rule 3: the lowest cut deals, ace low; equal ranks by suit, hearts lowest."""
        return lowest_cut(self.players, cut)

    def trump_after(self, trump: Suit | None) -> Suit | None:
        """Rule 4: the next hand's trump in the sequence."""
        i = self.trump_sequence.index(trump)
        return self.trump_sequence[(i + 1) % len(self.trump_sequence)]

    def new_hand(
        self,
        dealer: int,
        previous: Sequence[BoxWhistHand] = (),
        cards: Sequence[Card | None] | None = None,
        honour: HonourPolicy = HonourPolicy.REFUSE,
    ) -> BoxWhistHand:
        """A fresh hand. ``cards`` is the deck in position order, None where unknown."""
        trump = self.trump_after(previous[-1].trump) if previous else TURN_UP
        return BoxWhistHand(self, dealer, trump, cards, honour)

    def to_wire(self) -> dict[str, Any]:
        return {
            "game": self.name,
            "players": self.players,
            "trumps": [4 if t is None else int(t) for t in self.trump_sequence],
        }

    @staticmethod
    def from_wire(obj: object) -> BoxWhist:
        if not isinstance(obj, dict) or set(obj) != {"game", "players", "trumps"} or obj["game"] != BoxWhist.name:
            raise ConfigError(f"not a Box Whist configuration: {describe(obj)}")
        trumps = obj["trumps"]
        if not isinstance(trumps, list) or len(trumps) > 5 \
                or any(type(t) is not int or not 0 <= t <= 4 for t in trumps):
            raise ConfigError(f"bad trump sequence: {describe(trumps)}")
        return BoxWhist(obj["players"], tuple(None if t == 4 else Suit(t) for t in trumps))


class _TurnUp:
    """Marker: the first hand's trump is the suit of the dealer's last hand card (rule 4)."""

    def __repr__(self) -> str:
        return "TURN_UP"

    def __reduce__(self) -> str:
        return "TURN_UP"  # unpickled as the one marker (a search's parts go to other processes)


TURN_UP = _TurnUp()


@dataclass(frozen=True, slots=True)
class TrickPlay:
    seat: int
    position: int
    card: Card
    from_box: bool


@dataclass(frozen=True, slots=True)
class StackDraw:
    """A stack card taken after a trick. Every draw is public (rule 9), but a peer learns the
    card only once the deck protocol has revealed it, so the draw names the position: read
    the card with ``BoxWhistView.card``."""

    seat: int
    position: int


@dataclass(frozen=True, slots=True)
class TrickResult:
    plays: tuple[TrickPlay, ...]
    winner: int
    draws: tuple[StackDraw, ...]


@dataclass(frozen=True, slots=True)
class Revoke:
    """Rule 6 broken: ``seat`` did not follow suit from the hand, though able to."""

    seat: int
    trick: int  # 0-based trick number
    position: int


class BoxWhistHand:
    """One hand of Box Whist. Positions refer to the shuffled deck; see ``Layout``.

    Attributes are public for the audit and the bots' search, read-only by convention:
    change the state only through ``apply`` and ``learn``.
    """

    hands: list[list[int]]  # positions in each seat's hand
    boxes: list[list[int]]  # positions left in each seat's box
    may_look: list[bool]  # rule 7: has the seat won a trick this hand?
    stack: list[int]  # top first; the top card is face up (the exposed card)
    trick: list[TrickPlay]  # the trick in progress
    turn: int | None  # None once the hand is over
    tricks: list[TrickResult]
    public: set[int]  # positions every seat may know
    revokes: list[Revoke]

    def __init__(
        self,
        game: BoxWhist,
        dealer: int,
        trump: Suit | None | _TurnUp,
        cards: Sequence[Card | None] | None,
        honour: HonourPolicy = HonourPolicy.REFUSE,
    ) -> None:
        n = game.players
        deck_size = len(game.deck())
        if not 0 <= dealer < n:
            raise EngineMisuse(f"dealer must be a seat in 0..{n - 1}, not {dealer!r}")
        if cards is None:
            cards = [None] * deck_size
        if len(cards) != deck_size:
            raise EngineMisuse(f"a {n}-player deck has {deck_size} positions, not {len(cards)}")
        self.game = game
        self.dealer = dealer
        self.trump_rule = trump
        self.cards = [None if c is None else Card(c) for c in cards]
        self.honour = honour
        self.layout = layout = Layout.of(n, dealer, deck_size)
        self.hands = [list(h) for h in layout.hands]
        self.boxes = [list(b) for b in layout.boxes]
        self.may_look = [False] * n
        self.stack = list(layout.stack)
        self.trick = []
        self.leader = self.turn = (dealer + 1) % n  # rule 5
        self.tricks_won = [0] * n
        self.tricks = []
        self.public = {self.stack[0]}
        if trump is TURN_UP:
            self.public.add(layout.trump_card)
        self.revokes = []

    def clone(self) -> BoxWhistHand:
        """An independent copy, for the search bot's playouts (the immutable records, the
        game, the layout and the finished tricks, are shared)."""
        other = BoxWhistHand.__new__(BoxWhistHand)
        other.game, other.dealer, other.trump_rule, other.honour = self.game, self.dealer, self.trump_rule, self.honour
        other.layout = self.layout
        other.cards = list(self.cards)
        other.hands = [list(hand) for hand in self.hands]
        other.boxes = [list(box) for box in self.boxes]
        other.may_look = list(self.may_look)
        other.stack = list(self.stack)
        other.trick = list(self.trick)
        other.leader, other.turn = self.leader, self.turn
        other.tricks_won = list(self.tricks_won)
        other.tricks = list(self.tricks)
        other.public = set(self.public)
        other.revokes = list(self.revokes)
        return other

    # -- static facts --------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.game.players

    @property
    def trump(self) -> Suit | None:
        if self.trump_rule is not TURN_UP:
            return self.trump_rule  # type: ignore[return-value]
        card = self.cards[self.layout.trump_card]
        if card is None:
            raise EngineMisuse("the trump card (the dealer's last hand card) has not been revealed")
        return card.suit

    # -- whose turn, what is legal -------------------------------------------------------

    @property
    def current_seat(self) -> int | None:
        return self.turn

    @property
    def is_over(self) -> bool:
        return self.turn is None

    @property
    def exposed(self) -> int | None:
        """Position of the face-up stack card, if the stack lasts."""
        return self.stack[0] if self.stack else None

    def legal_moves(self) -> list[Play]:
        """Rules 6-7 for the seat to act, which must be known to this state."""
        seat = self.turn
        if seat is None:
            return []
        hand = self.hands[seat]
        if not hand:
            return [PLAYS[p] for p in self.boxes[seat]]  # rule 7: open or blind
        if not self.trick:
            return [PLAYS[p] for p in hand]  # a lead comes from the hand
        led = self.trick[0].card.suit
        cards = self.cards
        following = [PLAYS[p] for p in hand if cards[p].suit is led]  # type: ignore[union-attr]
        if following:
            return following
        moves = [PLAYS[p] for p in hand]
        if self.may_look[seat]:
            moves += [PLAYS[p] for p in self.boxes[seat]]
        return moves

    def apply(self, move: Play) -> None:
        """Play a card, refusing it with an ``IllegalMove`` that says which rule it breaks.

        The card at the position must be known to this state (a peer learns it when the
        player reveals it). Following suit is checked only when this state knows the whole
        hand of the player; otherwise it is on honour until the end-of-hand audit.
        """
        seat, from_box, revoke = self._validate(move, self.honour)
        position = move.position
        card = self.cards[position]
        if card is None:
            raise EngineMisuse(f"position {position} must be revealed before it is played")
        if revoke:
            self.revokes.append(Revoke(seat, len(self.tricks), position))
        (self.boxes if from_box else self.hands)[seat].remove(position)
        self.public.add(position)
        self.trick.append(TrickPlay(seat, position, card, from_box))
        if len(self.trick) < self.players:
            self.turn = (seat + 1) % self.players
        else:
            self._finish_trick()

    def check(self, move: Play) -> None:
        """Raise the ``IllegalMove`` that ``apply`` would, without playing. Works before the
        card is revealed: only following suit needs it, and a blind box card never follows."""
        self._validate(move, self.honour)

    def refusal(self, move: Play) -> IllegalMove | None:
        """Why the rules refuse ``move`` for the seat to act, or None if it is legal.

        A seat's own move is always judged strictly, whatever the revoke policy."""
        try:
            self._validate(move, HonourPolicy.REFUSE)
        except IllegalMove as refused:
            return refused
        return None

    def _validate(self, move: Play, policy: HonourPolicy) -> tuple[int, bool, bool]:
        """Rules 6-7: (seat, from the box?, is a revoke to record?) or ``IllegalMove``."""
        seat = self.turn
        if seat is None:
            raise IllegalMove(Illegal.HAND_OVER, -1)
        position = move.position
        hand = self.hands[seat]
        from_box = position in self.boxes[seat]
        if not from_box and position not in hand:
            raise IllegalMove(Illegal.NOT_YOUR_CARD, seat, f"position {position}")
        if from_box and hand:
            if not self.trick:
                raise IllegalMove(Illegal.LEAD_FROM_HAND, seat)
            if not self.may_look[seat]:
                raise IllegalMove(Illegal.BOX_CLOSED, seat)
        if not self.trick or not hand:
            return seat, from_box, False
        led = self.trick[0].card.suit
        card = self.cards[position]
        if not from_box and card is not None and card.suit is led:
            return seat, from_box, False
        cards = self.cards
        if any(cards[p] is None for p in hand):
            return seat, from_box, False  # not knowable here: on honour until the audit
        if not any(cards[p].suit is led for p in hand):  # type: ignore[union-attr]
            return seat, from_box, False
        if policy is HonourPolicy.REFUSE:
            raise IllegalMove(Illegal.MUST_FOLLOW_SUIT, seat, f"holds {_suit_name(led)}")
        return seat, from_box, True

    def _finish_trick(self) -> None:
        """Rules 8-10: the winner, the stack draws, the next leader or the end."""
        plays = self.trick
        trump = self.trump
        led = plays[0].card.suit

        winner = max(plays, key=lambda play: trick_strength(play.card, led, trump)).seat
        self.tricks_won[winner] += 1
        self.may_look[winner] = True
        draws: list[StackDraw] = []
        if self.stack:
            n = self.players
            for i in range(n):
                seat = (winner + i) % n
                position = self.stack.pop(0)
                self.hands[seat].append(position)
                self.public.add(position)
                draws.append(StackDraw(seat, position))
            if self.stack:
                self.public.add(self.stack[0])  # the last drawer turns the next card
        self.tricks.append(TrickResult(tuple(plays), winner, tuple(draws)))
        self.trick = []
        self.leader = winner
        over = not any(self.hands) and not any(self.boxes)
        self.turn = None if over else winner

    # -- knowledge -----------------------------------------------------------------------

    def visible_to(self, seat: int | None) -> frozenset[int]:
        """Positions whose card ``seat`` may know now: the public ones, its dealt hand, and
        its box once it has won a trick (rule 7). No seat (a spectator): the public ones."""
        if seat is None:
            return frozenset(self.public)
        known = self.public | set(self.layout.hands[seat])
        if self.may_look[seat]:
            known |= set(self.layout.boxes[seat])
        return frozenset(known)

    def learn(self, position: int, card: Card) -> None:
        learn_card(self.cards, position, card)

    def view(self, seat: int | None) -> BoxWhistView:
        return BoxWhistView(self, seat)

    # -- the outcome ---------------------------------------------------------------------

    def result(self, offenders: frozenset[int] = frozenset(), left: frozenset[int] = frozenset()) -> HandResult:
        """Rule 11: most tricks wins; a proven offender loses; equal most is a draw. A hand
        cut short by a forfeit (``left`` the seat that left) is scored as it stands, and the
        seat that left loses it as an offender would."""
        if not self.is_over and not (offenders or left):
            raise EngineMisuse("the hand is not over")
        offenders = frozenset(offenders) | {r.seat for r in self.revokes}
        winner = best_score(self.tricks_won, offenders | left)
        return HandResult(tuple(self.tricks_won), offenders,
                          tuple(int(seat == winner) for seat in range(self.players)), frozenset(left))

    def __repr__(self) -> str:
        return f"<BoxWhistHand players={self.players} dealer={self.dealer} tricks={len(self.tricks)} turn={self.turn}>"

    def tags(self) -> dict[str, str]:
        if self.trump_rule is TURN_UP and self.cards[self.layout.trump_card] is None:
            # A hand forfeited before every seat published its key for the trump card
            # (session.md §7.3): nobody ever learns it. "?" as for any card never revealed.
            return {"trumps": "?"}
        trump = self.trump
        return {"trumps": "no trumps" if trump is None else trump.name.lower()}


def _suit_name(suit: Suit) -> str:
    return suit.name.lower()


class BoxWhistView:
    """What one seat may know of a hand: the per-player observer; with ``seat`` None, what
    every seat may know (the public observer, a spectator's), which holds no hand or box.

    A view reads the live state and is valid until the next ``apply``; every card it
    returns is at a position in ``state.visible_to(seat)``.
    """

    __slots__ = ("_state", "seat")

    def __init__(self, state: BoxWhistHand, seat: int | None) -> None:
        self._state = state
        self.seat = seat

    # Public facts.
    @property
    def players(self) -> int:
        return self._state.players

    @property
    def dealer(self) -> int:
        return self._state.dealer

    @property
    def trump(self) -> Suit | None:
        return self._state.trump

    @property
    def game(self) -> BoxWhist:
        return self._state.game

    @property
    def trump_turned(self) -> bool:
        """Whether the dealer's last dealt card named trumps, turned up for all (rule 4)."""
        return self._state.trump_rule is TURN_UP

    @property
    def deck(self) -> tuple[Card, ...]:
        """The cards in play (rule 1: the 3-handed game has no 2♣)."""
        return self._state.game.deck()

    @property
    def turn(self) -> int | None:
        return self._state.turn

    @property
    def exposed(self) -> Card | None:
        position = self._state.exposed
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
    def may_look(self) -> tuple[bool, ...]:
        return tuple(self._state.may_look)

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self._state.hands)

    @property
    def box_sizes(self) -> tuple[int, ...]:
        return tuple(len(b) for b in self._state.boxes)

    def card(self, position: int) -> Card | None:
        """The card at ``position`` if this seat may know it (and it has been revealed)."""
        state = self._state
        return state.cards[position] if position in state.visible_to(self.seat) else None

    def known_hand_cards(self, seat: int) -> tuple[Card, ...]:
        """Cards everyone knows are in ``seat``'s hand: shown stack draws, the turned trump."""
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
    def box(self) -> list[tuple[int, int, Card | None]]:
        """(slot number from 1, position, card or None while closed) for the box cards left.

        Slot numbers are fixed at the deal, so ``box 2`` names the same card all hand.
        """
        state = self._state
        if self.seat is None:
            return []
        open_ = state.may_look[self.seat]
        remaining = set(state.boxes[self.seat])
        return [
            (slot, p, state.cards[p] if open_ else None)
            for slot, p in enumerate(state.layout.boxes[self.seat], start=1)
            if p in remaining
        ]

    @property
    def legal_moves(self) -> list[Play]:
        seat = self.seat
        return self._state.legal_moves() if seat is not None and self._state.turn == seat else []

    def refusal(self, move: Play) -> IllegalMove | None:
        """Why this seat may not play ``move`` now, or None if it may (no seat never may)."""
        if self.seat is None or self._state.turn != self.seat:
            return IllegalMove(Illegal.NOT_YOUR_TURN, -1 if self.seat is None else self.seat)
        return self._state.refusal(move)

    def parse_move(self, text: str) -> Play:
        """Read a move typed by a person: a card (``QS``, ``10h``, ``q♠``) or ``box N``."""
        words = text.lower().split()
        if words and words[0] == "box":
            return box_slot(words, self.box)
        card = Card.parse(text)
        for p, held in self.hand.items():
            if held == card:
                return PLAYS[p]
        for _, p, boxed in self.box:
            if boxed == card:
                return PLAYS[p]
        raise CardError(f"{card} is not in your hand or open box")

    def describe_move(self, move: Play) -> str:
        """How this seat types ``move``: its card as the table shows it (``Q♠``, which a
        ``Style`` without symbols prints as ``QS``), or ``box N`` for a box card it cannot see."""
        card = self.card(move.position)
        if card is not None:
            return str(card)
        slot = next((slot for slot, p, _ in self.box if p == move.position), None)
        return f"box {slot}" if slot is not None else f"position {move.position}"
