"""The small interface every game implements, so that code which runs games never names one.

A game is played with one shuffled deck whose cards sit at *positions* 0..N-1 (the deck
protocol's positions). The rules engine deals by position, and a move names the position of
the card played. A state may not know the card at every position: a peer knows only what has
been revealed to it. The engine says who may see each position (``visible_to``); the caller
reveals cards and tells the state with ``learn``. A local game simply knows every card.

Everything here is pure: no I/O, clocks or randomness. Chance (the deck order, the cut) comes
in as values.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from p2pwhist.cards import Card, CardError
from p2pwhist.text import Style
from p2pwhist.wire import describe


@dataclass(frozen=True, slots=True)
class Play:
    """The acting seat plays the card at a deck position (from its hand or its box)."""

    position: int

    def to_wire(self) -> int:
        return self.position

    @staticmethod
    def from_wire(obj: object, deck_size: int) -> Play:
        if type(obj) is not int or not 0 <= obj < deck_size:
            raise ValueError(f"a move is a deck position in 0..{deck_size - 1}, not {describe(obj)}")
        return PLAYS[obj]


# Interned: engines hand out these objects in legal-move lists thousands of times a second.
PLAYS: tuple[Play, ...] = tuple(Play(position) for position in range(52))


class IllegalMove(ValueError):
    """A move the rules refuse. ``seat`` is the seat that tried it; ``reason`` is one of the
    game's own reasons, an enum whose values are the rules in words."""

    def __init__(self, reason: enum.Enum, seat: int, detail: str = "") -> None:
        self.reason = reason
        self.seat = seat
        self.detail = detail
        self.rule = reason.value + (f" ({detail})" if detail else "")  # without the seat
        super().__init__(f"seat {seat}: {self.rule}")


class EngineMisuse(RuntimeError):
    """The caller used the engine wrongly (e.g. applied a card nobody has revealed yet)."""


class HonourPolicy(enum.Enum):
    """What ``apply`` does with a breach it can see of a rule played "on honour", such as
    following suit in whist (no peer sees another's hand, so nobody can check it in play).

    REFUSE suits local play, where the breach is simply illegal. RECORD suits a peer checking
    others' moves and the end-of-hand audit: the breach is established and recorded, and the
    game's rules say what it costs (in Box Whist, the hand).
    """

    REFUSE = "refuse"
    RECORD = "record"


class ConfigError(ValueError):
    """A game configuration that is malformed or not supported."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """The outcome of one hand, in terms every game shares.

    ``scores`` is the game's per-seat measure of the hand (tricks in Box Whist, box cards left
    in Box); ``offenders`` are seats that lost the hand by a proven breach (a revoke, or a
    cheat the session proved); ``left`` are seats that lost it by leaving the match (a FORFEIT
    for absence or slowness, or their own ABORT), which proves no breach: the hand is scored
    as for an offender, but no screen or record may call it one (session.md §7.3);
    ``points`` are what each seat earns towards the match, as the game's rules say (Box Whist:
    1 to the hand's winner; Box: 1 to each seat that did not lose).
    """

    scores: tuple[int, ...]
    offenders: frozenset[int]
    points: tuple[int, ...]
    left: frozenset[int] = frozenset()

    @property
    def losers(self) -> frozenset[int]:
        """The seats that may not win the hand, whatever their score: by a breach or by leaving."""
        return self.offenders | self.left


def best_score(scores: Sequence[int], excluded: frozenset[int] = frozenset()) -> int | None:
    """The seat with the strictly highest score among those not excluded, else None (a draw)."""
    eligible = [seat for seat in range(len(scores)) if seat not in excluded]
    if not eligible:
        return None
    top = max(scores[seat] for seat in eligible)
    leaders = [seat for seat in eligible if scores[seat] == top]
    return leaders[0] if len(leaders) == 1 else None


class View(Protocol):
    """What one seat may know of a hand (OpenSpiel's per-player observer): never a card the
    seat may not see. Bots and people choose moves from it; the session checks our own move
    with ``refusal`` before signing it.

    With ``seat`` None it is the public observer, a spectator's: only what every seat may see
    (``visible_to(None)``), no hand or box of its own, no legal move, every move refused."""

    @property
    def seat(self) -> int | None: ...

    @property
    def players(self) -> int: ...

    @property
    def dealer(self) -> int: ...

    @property
    def turn(self) -> int | None: ...  # the seat to act, None once the hand is over

    @property
    def legal_moves(self) -> list[Play]: ...  # this seat's, sorted; empty when not its turn

    def card(self, position: int) -> Card | None: ...  # the card there, if this seat may know it

    def refusal(self, move: Play) -> IllegalMove | None: ...  # why this seat may not play it

    def parse_move(self, text: str) -> Play: ...  # a move typed by a person; CardError if not one

    def describe_move(self, move: Play) -> str: ...  # how a person types it back (OpenSpiel's action_to_string)


class HandState(Protocol):
    """One hand in progress: the rules engine proper (OpenSpiel's ``State``)."""

    @property
    def players(self) -> int: ...

    @property
    def dealer(self) -> int: ...

    @property
    def current_seat(self) -> int | None: ...  # None once the hand is over

    @property
    def is_over(self) -> bool: ...

    def legal_moves(self) -> list[Play]: ...

    def apply(self, move: Play) -> None: ...

    def check(self, move: Play) -> None: ...  # apply's refusal, without playing

    def view(self, seat: int | None) -> View: ...  # None: the public observer (``View``)

    # The positions whose card ``seat`` may know now; None: those every seat may know (public).
    def visible_to(self, seat: int | None) -> frozenset[int]: ...

    def learn(self, position: int, card: Card) -> None: ...

    # The hand's result once it is over; before that only with ``left`` (a forfeit: the hand is
    # scored as it stands, the seat that left losing it) or ``offenders`` (a breach the deck
    # audit proved). Both lose the hand alike; the result keeps them apart (``HandResult``).
    def result(self, offenders: frozenset[int] = frozenset(), left: frozenset[int] = frozenset()) -> HandResult: ...

    def tags(self) -> dict[str, str]: ...  # the game's own facts about the hand, for records


# A game's own hand and view types. Its engine and words take its own hands and views only (Box
# Whist's next trump is read from its previous hand), so the interfaces below are generic in them.
HandT = TypeVar("HandT", bound=HandState)
HandT_contra = TypeVar("HandT_contra", bound=HandState, contravariant=True)
ViewT_contra = TypeVar("ViewT_contra", bound=View, contravariant=True)


class Game(Protocol[HandT]):
    """A game: static facts plus a factory of its own hands, ``HandT`` (OpenSpiel's ``Game``)."""

    name: ClassVar[str]
    # The most points one hand gives a seat towards the match (``HandResult.points``): what
    # tells a match of set length that the hands left cannot change its winner (``Match.settled``).
    most_hand_points: ClassVar[int]

    def deck(self) -> tuple[Card, ...]: ...

    @property
    def players(self) -> int: ...

    def first_dealer(self, cut: Sequence[Card]) -> int: ...

    def new_hand(self, dealer: int, previous: Sequence[HandT], cards: Sequence[Card | None] | None = None,
                 honour: HonourPolicy = HonourPolicy.REFUSE) -> HandT: ...

    def to_wire(self) -> dict[str, Any]: ...

    @staticmethod
    def from_wire(obj: object) -> Game[HandT]: ...


def lowest_cut(players: int, cut: Sequence[Card]) -> int:
    """The seat whose cut card is lowest, the ace counting low and equal ranks ordered by suit,
    hearts lowest (the laws of whist): how both games choose the first dealer."""
    if len(cut) != players or len(set(cut)) != players:
        raise EngineMisuse(f"the cut needs {players} different cards, got {list(cut)}")
    return min(range(players), key=lambda seat: Card(cut[seat]).cut_order)


def box_slot(words: Sequence[str], box: Sequence[tuple[int, int, Card | None]]) -> Play:
    """The move ``box N`` typed by a person (``words``: "box", "N"), for a box given as
    (slot number, position, card or None) per card left, as both games' views give it; raises
    ``CardError`` naming the slots there are."""
    slots = {slot: position for slot, position, _ in box}
    if len(words) != 2 or not words[1].isdigit() or int(words[1]) not in slots:
        raise CardError(f"no such box card: choose one of {', '.join(f'box {s}' for s in slots) or 'none'}")
    return PLAYS[slots[int(words[1])]]


def learn_card(cards: list[Card | None], position: int, card: Card) -> None:
    """Record a card the deck protocol revealed at ``position`` of a hand's ``cards``."""
    known = cards[position]
    if known is not None and known != card:
        raise EngineMisuse(f"position {position} is already known as {known}, not {card}")
    cards[position] = Card(card)


def audit(game: Game, dealer: int, previous: Sequence[HandState], cards: Sequence[Card],
          moves: Sequence[Play]) -> HandState:
    """A finished hand replayed with every card known, which records each breach of a rule
    played on honour (``HonourPolicy.RECORD``): a revoke in Box Whist, not leading the highest
    card in Box. Raises ``IllegalMove`` for a move no honest peer could have accepted, and
    ``EngineMisuse`` if the moves stop before the hand is over."""
    hand = game.new_hand(dealer, previous, cards, HonourPolicy.RECORD)
    for move in moves:
        hand.apply(move)
    if not hand.is_over:
        raise EngineMisuse(f"the moves end after {len(moves)} moves, before the hand is over")
    return hand


@dataclass(frozen=True, slots=True)
class Cell:
    """One card the seat holds, as a full-screen hand pane lays it out: selectable, coloured by
    suit, highlighted when ``legal``. ``group`` is the row it sits in, as headed on screen
    ("Hand", "Box", "Extra pile"); ``card`` is None for a card the seat may not look at (a
    closed box card), shown by ``label`` ("box 2"). ``typed`` is how a person types it."""

    move: Play
    card: Card | None
    label: str
    typed: str
    group: str
    legal: bool


class GameText(Protocol[ViewT_contra, HandT_contra]):
    """How a game reads to people: every screen and record line that depends on its rules. A
    player's screens read its ``View`` only, so they cannot show a card it may not see; the
    spectator's (``deal``, ``move``) and the record's read the whole hand. Views and hands are
    the game's own (``ViewT_contra``, ``HandT_contra``)."""

    title: str  # "Box Whist"
    rules: str  # the rules, written for players
    typed: str  # examples of moves as a person types them, for a help line: "QS, box 2"
    # How a move is typed and "?" asked, in lines for the line interface's help, which adds
    # its commands that every game shares and the legal moves (``ui.terminal.help_text``).
    typing: str

    def header(self, view: ViewT_contra, names: Sequence[str], style: Style, hand_no: int) -> str: ...

    def table(self, view: ViewT_contra, names: Sequence[str], style: Style, hand_no: int | None = None,
              points: Sequence[int] | None = None) -> str: ...  # all the seat may know, as it is asked to move

    def legal(self, view: ViewT_contra, style: Style) -> str: ...  # its legal moves, as they are typed

    def refusal(self, refused: IllegalMove) -> str: ...  # one line

    # Tricks or rounds finished and told in full: up to the first whose line names a card the
    # deck has yet to reveal to ``view`` (a stack draw), since the line interface prints each once.
    def finished(self, view: ViewT_contra) -> int: ...

    def finished_lines(self, view: ViewT_contra, start: int, names: Sequence[str], style: Style) -> list[str]: ...

    def hand_result(self, hand: HandT_contra, result: HandResult, names: Sequence[str], style: Style,
                    hand_no: int | None = None) -> str: ...

    def result_line(self, result: HandResult, names: Sequence[str]) -> str: ...  # one line, for logs

    def deal(self, hand: HandT_contra, names: Sequence[str], style: Style, hand_no: int) -> str: ...  # spectator

    def move(self, hand: HandT_contra, seat: int, move: Play, names: Sequence[str],
             style: Style) -> str: ...  # spectator

    # A score sheet's record of a hand; of one cut short, with the cards never revealed as
    # None and ``result`` None if it has none (its forfeit gives it one).
    def record(self, hand: HandT_contra, result: HandResult | None, names: Sequence[str]) -> list[str]: ...

    # For a full-screen interface, which lays out what the strings above only describe.
    def cells(self, view: ViewT_contra) -> list[Cell]: ...  # the seat's cards, in the order the hand pane shows them

    def notices(self, view: ViewT_contra) -> list[str]: ...  # standing facts worth an alert once ("Your box is open")


BotFactory = Callable[[random.Random], Any]  # a bot (``p2pwhist.games.bots.Bot``) from its randomness


@dataclass(frozen=True, slots=True)
class GameOption:
    """One option of a game's configuration (its rules' *options*), as a person chooses it: the
    CLI offers it as ``--NAME``, ``rules`` lists it, and ``make`` takes it as a keyword. Games
    that share an option's name share its ``type`` (the CLI offers it once)."""

    name: str  # the keyword of ``make``, and of the configuration on the wire
    type: type  # how the command line reads a value: str or int
    choices: tuple[Any, ...]  # every value the game allows
    default: Any  # one of ``choices``
    help: str  # what it changes, in a few words for a person

    def __post_init__(self) -> None:
        if self.default not in self.choices:
            raise ValueError(f"option {self.name}: the default {self.default!r} is not one of its choices")


@dataclass(frozen=True)
class GameEntry(Generic[HandT, ViewT_contra]):
    """Everything about one game, the one value a game's folder gives the rest of the program
    (its ``ENTRY``, which ``p2pwhist.games.registry`` finds by the folder's name): what the CLI,
    the UI, the score sheet, verify, the bots and the session look up instead of importing a
    game module (OpenSpiel's ``register_game``). Its types tie the game's words to its own
    hands and views; the registry, which holds every game's, knows them only as ``Any``."""

    name: str  # on the wire and on the command line
    make: Callable[..., Game[HandT]]  # make(players, **options)
    from_wire: Callable[[object], Game[HandT]]
    players: tuple[int, ...]  # the table sizes the game allows
    default_players: int
    options: tuple[GameOption, ...]
    # By name; a game's searching bot (``p2pwhist.games.bots.Searching``), if it has one, is
    # "search": it alone takes levels and gives hints.
    bots: Mapping[str, BotFactory]
    default_bot: str  # the strongest bot that answers within about a second a move
    text: GameText[ViewT_contra, HandT]
    # The reasons (``IllegalMove.reason``) for which a seat's own view refuses a move that
    # breaks a rule played on honour: nobody else can see the breach in play, so a peer
    # checking the move accepts it and the end-of-hand audit (``audit``) finds it. Tests ask
    # a game for such a move through it, to inject a breach without knowing the game.
    on_honour: frozenset[enum.Enum] = frozenset()

    @property
    def search_bot(self) -> BotFactory | None:
        """The bot that takes levels and gives hints; None if the game has none."""
        return self.bots.get("search")
