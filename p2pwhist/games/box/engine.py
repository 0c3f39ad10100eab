"""Box, by Richard Bradley, for 2 to 6 players: the rules engine.

Everything that affects play lives here, and each rule cites its number in
``protocol/rules-box.md`` (which quotes the seed sentence it interprets):

- the pack and its order (rule 1), the table and the first dealer (rule 2);
- the deal layout: which deck positions are each seat's box and hand, and the pile (rule 3);
- the opener's lead (rule 4), laying equal or lower (rule 5), taking from the box (rule 6);
- the end of a round (rule 7) and the draws after it (rule 8);
- what is on honour and what is refused outright (rule 9);
- the end of the game (rule 10) and its points (rule 11).

``variant="pagat"`` reads rules 7, 10 and 11 as pagat.com does; everything else is shared.

A game of Box is one ``BoxHand`` (one deal); the match plays several. The phases of a game,
with the moves that leave them (every move is a ``Play`` of a deck position)::

    LAY     --lay a hand card / a box card that stands-->      LAY (next seat)
    LAY     --a box card that stands, pagat, extras held-->    RESTOCK (same seat)
    LAY     --a box card too high-->                           LAY (next round: rules 7-8)
    RESTOCK --put an extra card into the box-->                LAY (next seat)
    any     --a box emptied (rule 10)-->                       OVER

Invariants the tests check: every card is at exactly one place (a box, a hand, the pile, the
round in progress, set aside, an extra pile); a seat may see its hand and the cards it drew,
never a closed box card (its own included) nor the pile; a view never holds a card its seat
may not know.

Termination: every game ends. Within a round nobody draws, so a round lays at most the hand
cards held at its start plus the box cards taken in it; and a round ends only on a box card,
so every round takes at least one. Each box take lowers the potential
``2 × (cards in boxes) + (cards in extra piles)`` by at least one: a take that stands costs 2
(and a pagat restock after it gives back 1: an extra card becomes a box card), a too-high take
moves a box card to an extra pile (pagat) or out of play (seed), −1 or −2. The potential starts
at ``8 × players`` and is never negative, so there are finitely many takes, rounds and moves;
and the game is over at the latest when the boxes run out (rule 10).

The state is mutable, in the style of OpenSpiel's Python games; it is still pure: no I/O, no
clock, no randomness.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from p2pwhist.cards import CARDS, Card, CardError
from p2pwhist.games.base import (
    PLAYS,
    ConfigError,
    EngineMisuse,
    HandResult,
    HonourPolicy,
    IllegalMove,
    Play,
    box_slot,
    learn_card,
    lowest_cut,
)
from p2pwhist.wire import describe

# Rule 2: the seed's table is four; Box works for any table whose deal fits one pack.
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = 2, 6, 4
# Rule 3: eight cards a seat, four to the box (dealt first) and four to the hand.
BOX_SIZE = 4
HAND_SIZE = 4  # also the size rule 8 draws back up to
DECK_SIZE = len(CARDS)


class Variant(enum.StrEnum):
    """Whose reading of the rules (rules 7, 10, 11): the seed text's, or pagat.com's."""

    SEED = "seed"
    PAGAT = "pagat"


class Phase(enum.Enum):
    LAY = "lay"  # the seat to act lays a hand card or takes a box card
    RESTOCK = "restock"  # pagat rule 7: the seat puts one of its extra cards into its box
    OVER = "over"


class Act(enum.Enum):
    """What a move does, which follows from where its position is."""

    LAY = "lay"  # a hand card
    TAKE = "take"  # a box card, turned face up (rule 6)
    RESTOCK = "restock"  # an extra card into the box (pagat rule 7)


class BoxIllegal(enum.Enum):
    """Why Box refuses a move. ``IllegalMove.reason`` holds one of these (its ``value`` is the
    rule in words, which is all ``IllegalMove`` reads)."""

    GAME_OVER = "the game is over"
    NOT_YOUR_TURN = "it is not this player's turn"
    NOT_YOUR_CARD = "that card is not in the player's hand or box"
    TOO_HIGH = "a hand card must be equal to or lower than the card to beat"
    OPEN_FROM_HAND = "an opener with cards in the hand opens from the hand, not the box"
    LEAD_HIGHEST = "the opener must lay the highest card of the hand"
    MUST_LAY = "a player holding a card equal to or lower must lay it, not take from the box"
    RESTOCK_FIRST = "the player must first put a card from the extra pile into the box"


# Rule 9: the breaches nobody can see in play (they need the player's hand). The others are
# provable from public knowledge and are always refused.
ON_HONOUR = frozenset({BoxIllegal.LEAD_HIGHEST, BoxIllegal.MUST_LAY})


def _refuse(reason: BoxIllegal, seat: int, detail: str = "") -> IllegalMove:
    return IllegalMove(reason, seat, detail)


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each deck position goes at the deal (rule 3), for one table size and dealer.

    The deal goes round the table one card at a time, starting left of the dealer, eight
    rounds; the first four rounds go to the boxes (the box is chosen "without looking", so
    fixed positions of a shuffled deck are as good as any), the last four to the hands.
    Position ``r * players + i`` is round ``r``'s card for the ``i``-th seat left of the dealer.
    """

    boxes: tuple[tuple[int, ...], ...]  # per seat, in slot order (slot 1 first)
    hands: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]  # top first

    @staticmethod
    @functools.cache
    def of(players: int, dealer: int) -> Layout:
        boxes: list[list[int]] = [[] for _ in range(players)]
        hands: list[list[int]] = [[] for _ in range(players)]
        for round_ in range(BOX_SIZE + HAND_SIZE):
            for i in range(players):
                seat = (dealer + 1 + i) % players
                (boxes if round_ < BOX_SIZE else hands)[seat].append(round_ * players + i)
        dealt = (BOX_SIZE + HAND_SIZE) * players
        return Layout(tuple(map(tuple, boxes)), tuple(map(tuple, hands)), tuple(range(dealt, DECK_SIZE)))


@dataclass(frozen=True)
class Box:
    """The game configuration all peers agree on before play (the rules' *options*)."""

    name: ClassVar[str] = "box"
    # Rule 11: a game gives each seat that did not lose 1 point (seed) or its one winner 1 (pagat).
    most_hand_points: ClassVar[int] = 1
    players: int = DEFAULT_PLAYERS
    variant: Variant = Variant.SEED

    def __post_init__(self) -> None:
        players = self.players
        if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ConfigError(f"Box is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {describe(players)}")
        if type(self.variant) is not Variant:
            if type(self.variant) is not str or self.variant not in {v.value for v in Variant}:
                raise ConfigError(f"the variant is 'seed' or 'pagat', not {describe(self.variant)}")
            object.__setattr__(self, "variant", Variant(self.variant))

    def deck(self) -> tuple[Card, ...]:
        """Rule 1: one full pack."""
        return CARDS

    def first_dealer(self, cut: Sequence[Card]) -> int:
        """Rule 2: by lot, as in Box Whist: the lowest cut deals, ace low; equal ranks by suit,
        hearts lowest."""
        return lowest_cut(self.players, cut)

    def new_hand(
        self,
        dealer: int,
        previous: Sequence[BoxHand] = (),
        cards: Sequence[Card | None] | None = None,
        honour: HonourPolicy = HonourPolicy.REFUSE,
    ) -> BoxHand:
        """A fresh game (one deal). ``cards`` is the deck in position order, None where
        unknown. Games do not depend on one another, so ``previous`` is not read."""
        return BoxHand(self, dealer, cards, honour)

    def to_wire(self) -> dict[str, Any]:
        return {"game": self.name, "players": self.players, "variant": self.variant.value}

    @staticmethod
    def from_wire(obj: object) -> Box:
        if not isinstance(obj, dict) or set(obj) != {"game", "players", "variant"} or obj["game"] != Box.name:
            raise ConfigError(f"not a Box configuration: {describe(obj)}")
        return Box(obj["players"], obj["variant"])


@dataclass(frozen=True, slots=True)
class Lay:
    """A card laid in a round: from the hand, or a box card turned face up (rule 6)."""

    seat: int
    position: int
    card: Card
    from_box: bool


@dataclass(frozen=True, slots=True)
class Draw:
    """Pile cards taken after a round (rule 8). The cards are the drawer's secret; the
    positions (and so the count) are public."""

    seat: int
    positions: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.positions)


@dataclass(frozen=True, slots=True)
class Restock:
    """Pagat rule 7: an extra card (public: it was turned face up) put into the box."""

    seat: int
    position: int
    card: Card
    slot: int  # the box slot it went to, from 1


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A finished round (or the round the game ended in)."""

    opener: int
    lays: tuple[Lay, ...]
    too_high: Lay | None  # the box card that ended the round and who turned it; None if the game ended first
    extra_to: int | None  # pagat rule 7: who received ``too_high`` as an extra card
    restocks: tuple[Restock, ...]
    draws: tuple[Draw, ...]


@dataclass(frozen=True, slots=True)
class Violation:
    """A breach of a rule played on honour (rule 9), proven with the player's hand known."""

    seat: int
    round: int  # 0-based
    position: int
    rule: BoxIllegal


def _judge(
    seat: int,
    phase: Phase,
    hand: Mapping[int, Card | None],
    box: Collection[int | None],  # an empty slot (None) is no move's
    extras: Collection[int],
    to_beat: Card | None,
    move: Play,
    card: Card | None,
) -> tuple[Act, BoxIllegal | None]:
    """Rules 4-7 for ``seat``, to act: what ``move`` does and the breach on honour it commits,
    if one is provable from what is known (``None`` for unknown cards); ``IllegalMove`` for a
    move that is wrong whatever the unknown cards are.

    One function for the state and for a seat's view, so both judge alike: a seat knows its
    own hand, and nothing else (its box cards, another's hand) decides its move's legality."""
    position = move.position
    if phase is Phase.OVER:
        raise _refuse(BoxIllegal.GAME_OVER, seat)
    if phase is Phase.RESTOCK:  # pagat rule 7
        if position not in extras:
            raise _refuse(BoxIllegal.RESTOCK_FIRST, seat, f"position {position}")
        return Act.RESTOCK, None
    if position in hand:
        if to_beat is None:  # rule 4: the opener lays the highest hand card
            if card is not None and any(c is not None and c.rank > card.rank for c in hand.values()):
                return Act.LAY, BoxIllegal.LEAD_HIGHEST
            return Act.LAY, None
        if card is not None and card.rank > to_beat.rank:  # rule 5
            raise _refuse(BoxIllegal.TOO_HIGH, seat, f"{card} on {to_beat}")
        return Act.LAY, None
    if position in box:
        if to_beat is None:
            if hand:  # rule 4: public knowledge, since hand sizes are public
                raise _refuse(BoxIllegal.OPEN_FROM_HAND, seat)
            return Act.TAKE, None
        if any(c is not None and c.rank <= to_beat.rank for c in hand.values()):  # rules 5-6
            return Act.TAKE, BoxIllegal.MUST_LAY
        return Act.TAKE, None
    raise _refuse(BoxIllegal.NOT_YOUR_CARD, seat, f"position {position}")


def _legal(
    seat: int, phase: Phase, hand: Mapping[int, Card | None], box: Collection[int], extras: Collection[int],
    to_beat: Card | None,
) -> list[Play]:
    """Rules 4-7: the moves ``seat`` may make, sorted; its hand must be known."""
    if phase is Phase.OVER:
        return []
    if phase is Phase.RESTOCK:
        return [PLAYS[p] for p in sorted(extras)]
    if any(c is None for c in hand.values()):
        raise EngineMisuse(f"the hand of seat {seat} is not known to this state")
    cards: Mapping[int, Card] = hand  # type: ignore[assignment]
    if to_beat is None and cards:  # rule 4: any one of equal highest
        top = max(c.rank for c in cards.values())
        return [PLAYS[p] for p in sorted(cards) if cards[p].rank == top]
    if to_beat is not None:
        layable = [PLAYS[p] for p in sorted(cards) if cards[p].rank <= to_beat.rank]  # rule 5
        if layable:
            return layable
    return [PLAYS[p] for p in sorted(box)]  # rule 6 (and rule 4's empty-handed opener)


class BoxHand:
    """One game of Box (one deal). Positions refer to the shuffled deck; see ``Layout``.

    Attributes are public for the audit and the score sheet, read-only by convention:
    change the state only through ``apply`` and ``learn``.
    """

    hands: list[list[int]]  # positions in each seat's hand
    slots: list[list[int | None]]  # each seat's box, slot by slot (None: an empty slot)
    extras: list[list[int]]  # pagat rule 7: each seat's extra pile
    pile: list[int]  # top first
    lays: list[Lay]  # the round in progress
    restocks: list[Restock]  # the round in progress
    set_aside: list[int]  # rule 7: out of play
    rounds: list[RoundRecord]
    out: list[int]  # pagat rule 10: seats whose box ran out, in order
    loser: int | None  # seed rule 10: the seat whose box ran out
    turn: int | None  # the seat to act, None once the game is over
    public: set[int]  # positions every seat may know
    seen: list[set[int]]  # positions each seat may know besides: its dealt hand, its draws
    violations: list[Violation]

    def __init__(
        self,
        game: Box,
        dealer: int,
        cards: Sequence[Card | None] | None = None,
        honour: HonourPolicy = HonourPolicy.REFUSE,
    ) -> None:
        n = game.players
        if type(dealer) is not int or not 0 <= dealer < n:
            raise EngineMisuse(f"dealer must be a seat in 0..{n - 1}, not {dealer!r}")
        if cards is None:
            cards = [None] * DECK_SIZE
        if len(cards) != DECK_SIZE:
            raise EngineMisuse(f"the deck has {DECK_SIZE} positions, not {len(cards)}")
        self.game = game
        self.dealer = dealer
        self.cards: list[Card | None] = [None if c is None else Card(c) for c in cards]
        self.honour = honour
        self.layout = layout = Layout.of(n, dealer)
        self.hands = [list(h) for h in layout.hands]
        self.slots = [list(b) for b in layout.boxes]
        self.extras = [[] for _ in range(n)]
        self.pile = list(layout.pile)
        self.lays = []
        self.restocks = []
        self.set_aside = []
        self.rounds = []
        self.out = []
        self.loser = None
        self.public = set()
        self.seen = [set(h) for h in layout.hands]  # rule 3: the hand, seen by its owner only
        self.violations = []
        self.phase = Phase.LAY
        self.gap: int | None = None  # the slot of the last box card taken (pagat rule 7)
        self.opener = self.turn = (dealer + 1) % n  # rule 4

    # -- static facts --------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.game.players

    @property
    def variant(self) -> Variant:
        return self.game.variant

    # -- where things are ----------------------------------------------------------------

    def box(self, seat: int) -> list[int]:
        """The positions in ``seat``'s box, in slot order."""
        return [p for p in self.slots[seat] if p is not None]

    @property
    def to_beat(self) -> Card | None:
        """The last card laid in the round, or None before the opener has laid."""
        return self.lays[-1].card if self.lays else None

    @property
    def active(self) -> list[int]:
        """Seats still in the game (pagat rule 10 puts seats out; the seed game ends first)."""
        return [s for s in range(self.players) if s not in self.out]

    @property
    def winner(self) -> int | None:
        """Pagat rule 10: the last seat with box cards, once the game is over."""
        if self.variant is not Variant.PAGAT or self.phase is not Phase.OVER:
            return None
        return self.active[0]

    def _left_active(self, seat: int) -> int:
        """The first seat still in the game to the left of ``seat``."""
        n = self.players
        for i in range(1, n + 1):
            if (seat + i) % n not in self.out:
                return (seat + i) % n
        raise AssertionError("no seat left in the game")

    # -- whose turn, what is legal -------------------------------------------------------

    @property
    def current_seat(self) -> int | None:
        return self.turn

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def _hand_cards(self, seat: int) -> dict[int, Card | None]:
        return {p: self.cards[p] for p in self.hands[seat]}

    def legal_moves(self) -> list[Play]:
        """Rules 4-7 for the seat to act, whose hand must be known to this state."""
        seat = self.turn
        if seat is None:
            return []
        return _legal(seat, self.phase, self._hand_cards(seat), self.box(seat), self.extras[seat], self.to_beat)

    def _validate(self, move: Play, policy: HonourPolicy) -> tuple[int, Act, BoxIllegal | None]:
        seat = self.turn
        if seat is None:
            raise _refuse(BoxIllegal.GAME_OVER, -1)
        act, breach = _judge(
            seat, self.phase, self._hand_cards(seat), self.slots[seat], self.extras[seat], self.to_beat, move,
            self.cards[move.position],
        )
        if breach is not None and policy is HonourPolicy.REFUSE:
            raise _refuse(breach, seat)
        return seat, act, breach

    def check(self, move: Play) -> None:
        """Raise the ``IllegalMove`` that ``apply`` would, without playing. A box card taken
        blind needs no card: its legality depends on the hand only (rule 6)."""
        self._validate(move, self.honour)

    def refusal(self, move: Play) -> IllegalMove | None:
        """Why the rules refuse ``move`` for the seat to act, or None if it is legal. A seat's
        own move is always judged strictly, whatever the honour policy."""
        try:
            self._validate(move, HonourPolicy.REFUSE)
        except IllegalMove as refused:
            return refused
        return None

    def apply(self, move: Play) -> None:
        """Make a move, refusing it with an ``IllegalMove`` that says which rule it breaks.

        The card at the position must be known to this state: a hand card is claimed, a box
        card is revealed to all before it is applied (session.md §4). Under RECORD a breach on
        honour that this state can prove is recorded in ``violations``, not refused."""
        seat, act, breach = self._validate(move, self.honour)
        position = move.position
        card = self.cards[position]
        if card is None:
            raise EngineMisuse(f"position {position} must be revealed before it is played")
        if breach is not None:
            self.violations.append(Violation(seat, len(self.rounds), position, breach))
        self.public.add(position)  # laid, turned or (pagat) an extra card: all face up once
        if act is Act.RESTOCK:  # pagat rule 7
            self.extras[seat].remove(position)
            slot = self.gap  # the gap the taken card left
            assert slot is not None and self.slots[seat][slot] is None
            self.slots[seat][slot] = position
            self.gap = None
            self.restocks.append(Restock(seat, position, card, slot + 1))
            self.phase = Phase.LAY
            self.turn = self._left_active(seat)
            return
        if act is Act.LAY:  # rules 4-5
            self.hands[seat].remove(position)
            self.lays.append(Lay(seat, position, card, False))
            self.turn = self._left_active(seat)
            return
        self.gap = self.slots[seat].index(position)
        self.slots[seat][self.gap] = None  # rule 6: turned face up for all
        taken = Lay(seat, position, card, True)
        to_beat = self.to_beat
        if to_beat is not None and card.rank > to_beat.rank:
            self._end_round(taken)
            return
        self.lays.append(taken)  # it stands (rule 4: always, for an empty-handed opener)
        if self.variant is Variant.PAGAT and self.extras[seat]:
            self.phase = Phase.RESTOCK  # pagat rule 7: the same seat, before play goes on
            return
        if not self.box(seat) and self._box_emptied(seat):
            self._close_round(None, None, (), over=True)
            return
        self.turn = self._left_active(seat)

    def _box_emptied(self, seat: int) -> bool:
        """Rule 10: ``seat``'s box has run out. True if that ends the game."""
        if self.variant is Variant.SEED:
            self.loser = seat
            return True
        self.out.append(seat)
        return len(self.active) <= 1

    def _end_round(self, too_high: Lay) -> None:
        """Rules 7-8: the round ends on a box card too high for the card to beat."""
        seat = too_high.seat
        extra_to = None
        if self.variant is Variant.PAGAT:  # pagat rule 7: to the player who laid the last card
            extra_to = self.lays[-1].seat
            self.extras[extra_to].append(too_high.position)
        else:
            self.set_aside.append(too_high.position)
        if not self.box(seat) and self._box_emptied(seat):
            self._close_round(too_high, extra_to, (), over=True)
            return
        opener = self.opener if self.opener not in self.out else self._left_active(self.opener)
        draws = []
        for i in range(self.players):  # rule 8: from the round's opener, going left
            drawer = (opener + i) % self.players
            if drawer in self.out:
                continue
            want = min(HAND_SIZE - len(self.hands[drawer]), len(self.pile))
            if want > 0:
                taken = self.pile[:want]
                del self.pile[:want]
                self.hands[drawer] += taken
                self.seen[drawer].update(taken)  # seen by the drawer only
                draws.append(Draw(drawer, tuple(taken)))
        self._close_round(too_high, extra_to, tuple(draws), over=False)
        # Rule 7: the seat that turned the too-high card opens (pagat: the next seat still in).
        self.opener = self.turn = seat if seat not in self.out else self._left_active(seat)

    def _close_round(self, too_high: Lay | None, extra_to: int | None, draws: tuple[Draw, ...], over: bool) -> None:
        """Rule 7: the round's cards go out of play; rule 10: perhaps the game with them."""
        self.set_aside += [lay.position for lay in self.lays]
        self.rounds.append(RoundRecord(self.opener, tuple(self.lays), too_high, extra_to, tuple(self.restocks), draws))
        self.lays = []
        self.restocks = []
        if over:
            self.phase = Phase.OVER
            self.turn = None

    # -- knowledge -----------------------------------------------------------------------

    def visible_to(self, seat: int | None) -> frozenset[int]:
        """Positions whose card ``seat`` may know now: every card laid, turned or put into an
        extra pile (all face up once), its dealt hand and its draws. Never a closed box card,
        its own included (rule 3), nor the pile. No seat (a spectator): the face-up cards."""
        return frozenset(self.public if seat is None else self.public | self.seen[seat])

    def learn(self, position: int, card: Card) -> None:
        learn_card(self.cards, position, card)

    def view(self, seat: int | None) -> BoxView:
        return BoxView.of(self, seat)

    # -- the outcome ---------------------------------------------------------------------

    def result(self, offenders: frozenset[int] = frozenset(), left: frozenset[int] = frozenset()) -> HandResult:
        """Rule 11. ``scores`` are the box cards left; ``points`` the match points.

        A proven offender (a breach on honour found here, or a cheat the session proved)
        loses: under the seed rules every offender scores 0 and every other seat 1, whoever
        emptied a box; under pagat's, the point goes to the seat that lasted longest among
        those that did not offend. If every seat offended, nobody scores. A game cut short by
        a forfeit (``left`` the seat that left, which loses as an offender does) is scored as it
        stands: under pagat's, of the seats still in, the one with the most box cards left has
        lasted longest."""
        if not self.is_over and not (offenders or left):
            raise EngineMisuse("the game is not over")
        offenders = frozenset(offenders) | {v.seat for v in self.violations}
        losers = offenders | left
        scores = tuple(len(self.box(s)) for s in range(self.players))
        if self.variant is Variant.SEED:
            beaten = losers or {self.loser}
            points = tuple(0 if s in beaten else 1 for s in range(self.players))
        else:
            # Lasting longest: in beats out, more box cards beat fewer, a later out an earlier
            # one. A tie at the top goes to nobody: a rule by seat number would hand the host
            # every tied game that a forfeit cuts short (rules-box.md §11).
            still_in = [s for s in self.active if s not in losers]
            if still_in:
                most = max(scores[s] for s in still_in)
                leaders = [s for s in still_in if scores[s] == most]
                champion = leaders[0] if len(leaders) == 1 else None
            else:
                champion = next((s for s in self.out[::-1] if s not in losers), None)
            points = tuple(int(s == champion) for s in range(self.players))
        return HandResult(scores, offenders, points, frozenset(left))

    def tags(self) -> dict[str, str]:
        return {"variant": self.variant.value}

    def __repr__(self) -> str:
        return (
            f"<BoxHand players={self.players} variant={self.variant.value} dealer={self.dealer} "
            f"rounds={len(self.rounds)} turn={self.turn}>"
        )


@dataclass(frozen=True, slots=True)
class BoxView:
    """What one seat may know of a game: the per-player observer; with ``seat`` None, what
    every seat may know (the public observer, a spectator's), which holds no hand or box.

    A snapshot: it holds positions (public: the deal layout and every move are public) and
    only the cards at positions in ``state.visible_to(seat)``, so a bot or a UI given a view
    cannot read a card its seat may not know. Take a new view after every move.
    """

    seat: int | None
    players: int
    dealer: int
    variant: Variant
    phase: Phase
    turn: int | None
    opener: int
    round: tuple[Lay, ...]  # the round in progress, every card face up
    rounds: tuple[RoundRecord, ...]
    hands: tuple[tuple[int, ...], ...]  # positions in each seat's hand
    slots: tuple[tuple[int | None, ...], ...]  # each seat's box, slot by slot
    extras: tuple[tuple[int, ...], ...]  # positions in each seat's extra pile
    pile_size: int
    out: tuple[int, ...]
    known: Mapping[int, Card]  # every card this seat may know, by position

    @staticmethod
    def of(state: BoxHand, seat: int | None) -> BoxView:
        if seat is not None and not 0 <= seat < state.players:
            raise EngineMisuse(f"seat must be in 0..{state.players - 1}, not {seat!r}")
        cards = state.cards
        known = {p: c for p in state.visible_to(seat) if (c := cards[p]) is not None}
        return BoxView(
            seat, state.players, state.dealer, state.variant, state.phase, state.turn, state.opener,
            tuple(state.lays), tuple(state.rounds), tuple(map(tuple, state.hands)), tuple(map(tuple, state.slots)),
            tuple(map(tuple, state.extras)), len(state.pile), tuple(state.out), known,
        )

    # Public facts.
    @property
    def to_beat(self) -> Card | None:
        """The card to beat: the last laid in the round, or None when the opener is to lay."""
        return self.round[-1].card if self.round else None

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(map(len, self.hands))

    @property
    def box_sizes(self) -> tuple[int, ...]:
        return tuple(sum(p is not None for p in b) for b in self.slots)

    def extra_cards(self, seat: int) -> tuple[Card, ...]:
        """``seat``'s extra pile (pagat): cards everyone saw turned face up."""
        return tuple(self.known[p] for p in self.extras[seat])

    def card(self, position: int) -> Card | None:
        """The card at ``position`` if this seat may know it (and it has been revealed)."""
        return self.known.get(position)

    # This seat's own cards (none for no seat).
    @property
    def hand(self) -> dict[int, Card]:
        """Position → card for this seat's hand."""
        if self.seat is None:
            return {}
        return {p: self.known[p] for p in self.hands[self.seat] if p in self.known}

    @property
    def own_extras(self) -> tuple[int, ...]:
        """Positions in this seat's extra pile (pagat)."""
        return () if self.seat is None else self.extras[self.seat]

    @property
    def box(self) -> list[tuple[int, int, Card | None]]:
        """(slot from 1, position, card or None while closed) for this seat's box cards.
        Slots are fixed: ``box 2`` names the same card until it is taken."""
        if self.seat is None:
            return []
        return [
            (slot, p, self.known.get(p)) for slot, p in enumerate(self.slots[self.seat], start=1) if p is not None
        ]

    def _own(self, seat: int) -> tuple[dict[int, Card | None], list[int], tuple[int, ...]]:
        hand: dict[int, Card | None] = {p: self.known.get(p) for p in self.hands[seat]}
        return hand, [p for p in self.slots[seat] if p is not None], self.extras[seat]

    @property
    def legal_moves(self) -> list[Play]:
        if self.seat is None or self.turn != self.seat:
            return []
        hand, box, extras = self._own(self.seat)
        return _legal(self.seat, self.phase, hand, box, extras, self.to_beat)

    def refusal(self, move: Play) -> IllegalMove | None:
        """Why this seat may not make ``move`` now, or None if it may (judged strictly; no
        seat never may)."""
        if self.seat is None:
            return _refuse(BoxIllegal.NOT_YOUR_TURN, -1)
        if self.phase is Phase.OVER:
            return _refuse(BoxIllegal.GAME_OVER, self.seat)
        if self.turn != self.seat:
            return _refuse(BoxIllegal.NOT_YOUR_TURN, self.seat)
        hand, box, extras = self._own(self.seat)
        try:
            card = self.known.get(move.position)
            _, breach = _judge(self.seat, self.phase, hand, box, extras, self.to_beat, move, card)
        except IllegalMove as refused:
            return refused
        return None if breach is None else _refuse(breach, self.seat)

    def check(self, move: Play) -> None:
        """Raise the ``IllegalMove`` that ``refusal`` returns, if any."""
        refused = self.refusal(move)
        if refused is not None:
            raise refused

    # Text.
    def parse_move(self, text: str) -> Play:
        """Read a move typed by a person: a hand card (``QS``, ``10h``, ``q♠``), ``box N``
        (the box card in slot N, taken without looking), or, when putting an extra card into
        the box (pagat), the card (``put QS`` or just ``QS``)."""
        words = text.lower().split()
        if words and words[0] == "box":
            return box_slot(words, self.box)
        restock = bool(words) and words[0] == "put"
        card = Card.parse(" ".join(words[1:]) if restock else text)
        seat = self.seat
        if seat is None:
            raise CardError(f"{card} is in no hand of yours: you hold no seat")
        # A hand card, or (pagat) a known card put back into the box; an extra card first when
        # one is to be put back (a card named elsewhere then reads, and is refused, as itself).
        where, places = "hand", self.hands[seat] + tuple(p for p in self.slots[seat] if p is not None)
        if restock:
            where, places = "extra pile", self.extras[seat]
        elif self.phase is Phase.RESTOCK:
            places = self.extras[seat] + places
        for p in places:
            if self.known.get(p) == card:
                return PLAYS[p]
        raise CardError(f"{card} is not in your {where}")

    def describe_move(self, move: Play) -> str:
        """A move as this seat may read it before it is made: ``Q♠`` (a hand card), ``box 2``
        (a box slot, taken without looking) or ``put Q♠`` (an extra card into the box)."""
        p = move.position
        for seat in range(self.players):
            if p in self.hands[seat]:
                card = self.known.get(p)
                return "a hand card" if card is None else str(card)
            if p in self.slots[seat]:
                return f"box {self.slots[seat].index(p) + 1}"
            if p in self.extras[seat]:
                return f"put {self.known[p]}"
        return f"position {p}"
