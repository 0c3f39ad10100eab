"""Cards, suits and ranks: the vocabulary every other module speaks.

A card is a small integer, its *code*: ``suit * 13 + (rank - 2)``, so 0..51. Codes are what
travel in msgpack (one byte each) and what the deck protocol encrypts; ``Card`` is an ``int``
subclass so that a card is its code and costs nothing to compare, hash or encode.

The suit numbering follows the order used when cutting for the deal (hearts lowest, then
diamonds, clubs, spades; see ``protocol/rules-boxwhist.md`` rule 3), so ``Suit`` compares the
way the cut ranks suits.
"""

from __future__ import annotations

import enum
import re
from typing import Iterable, TypeVar


class Suit(enum.IntEnum):
    HEARTS = 0
    DIAMONDS = 1
    CLUBS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        return "HDCS"[self]

    @property
    def symbol(self) -> str:
        return "♥♦♣♠"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)

    def __str__(self) -> str:
        return self.symbol


class Rank(enum.IntEnum):
    """Ace high, as in play. The cut counts the ace low: see ``Card.cut_order``."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def label(self) -> str:
        return _RANK_LABELS[self - 2]

    def __str__(self) -> str:
        return self.label


_RANK_LABELS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
_RANK_BY_TEXT = {label: Rank(i + 2) for i, label in enumerate(_RANK_LABELS)}
_RANK_BY_TEXT["T"] = Rank.TEN
_RANK_BY_TEXT["1"] = Rank.ACE  # rarely typed, but unambiguous: there is no rank 1
_SUIT_BY_TEXT = {s.letter: s for s in Suit} | {s.symbol: s for s in Suit}
_SUIT_BY_TEXT |= {"♡": Suit.HEARTS, "♢": Suit.DIAMONDS, "♧": Suit.CLUBS, "♤": Suit.SPADES}
_CARD_TEXT = re.compile(r"^\s*(10|[2-9TJQKA1])\s*(.)\s*$", re.IGNORECASE)

N_CARDS = 52


class CardError(ValueError):
    """Text or a code that does not name a card."""


class Card(int):
    """One playing card; the integer value is its code (see the module docstring)."""

    __slots__ = ()

    def __new__(cls, code: int) -> Card:
        if type(code) is Card:
            return code
        if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code < N_CARDS:
            raise CardError(f"card code must be an int in 0..{N_CARDS - 1}, not {code!r}")
        return CARDS[code]

    @staticmethod
    def of(rank: Rank | int, suit: Suit | int) -> Card:
        return CARDS[int(suit) * 13 + int(rank) - 2]

    @property
    def suit(self) -> Suit:
        return _SUITS[self]

    @property
    def rank(self) -> Rank:
        return _RANKS[self]

    @property
    def cut_order(self) -> tuple[int, int]:
        """Sort key for cutting: ace low, then suit (hearts lowest)."""
        rank = 1 if self.rank == Rank.ACE else int(self.rank)
        return (rank, int(self.suit))

    @staticmethod
    def parse(text: str) -> Card:
        """Read ``QS``, ``10h``, ``q♠``, ``Th``, ``A♦`` and the like."""
        match = _CARD_TEXT.match(text)
        if not match or match.group(2).upper() not in _SUIT_BY_TEXT:
            raise CardError(f"{text.strip()!r} is not a card (try QS, 10h or q♠)")
        return Card.of(_RANK_BY_TEXT[match.group(1).upper()], _SUIT_BY_TEXT[match.group(2).upper()])

    def __str__(self) -> str:
        return f"{self.rank.label}{self.suit.symbol}"

    @property
    def ascii(self) -> str:
        return f"{self.rank.label}{self.suit.letter}"

    def __repr__(self) -> str:
        return f"Card({self.ascii!r})"

    def __reduce__(self):  # keeps pickling (hypothesis, multiprocessing) to the interned objects
        return (Card, (int(self),))


def _make_card(code: int) -> Card:
    return int.__new__(Card, code)


CARDS: tuple[Card, ...] = tuple(_make_card(code) for code in range(N_CARDS))
_SUITS = tuple(Suit(code // 13) for code in range(N_CARDS))
_RANKS = tuple(Rank(code % 13 + 2) for code in range(N_CARDS))

FULL_DECK: tuple[Card, ...] = CARDS


def deck_without(*removed: Card) -> tuple[Card, ...]:
    return tuple(card for card in CARDS if card not in removed)


def card_mask(cards: Iterable[int]) -> int:
    """The cards as a bit mask, bit i for the card coded i (the bots count cards with these)."""
    return sum(1 << card for card in cards)


def format_cards(cards: Iterable[Card | None]) -> str:
    """Cards in a line; "?" for one never revealed (a record of a hand cut short)."""
    return " ".join("?" if card is None else str(card) for card in cards)


# Cards, or cards some of which are never revealed (None): what is sorted comes back typed alike.
_Shown = TypeVar("_Shown", Card, Card | None)


def sort_for_display(cards: Iterable[_Shown]) -> list[_Shown]:
    """Group by suit (spades, hearts, clubs, diamonds alternate colours), high to low; cards
    never revealed (None) last."""
    order = {Suit.SPADES: 0, Suit.HEARTS: 1, Suit.CLUBS: 2, Suit.DIAMONDS: 3}
    return sorted(cards, key=lambda card: (4, 0) if card is None else (order[card.suit], -card.rank))
