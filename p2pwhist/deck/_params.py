"""What every seat of one hand must agree on before the deck protocol starts.

The byte contexts built here go into every hash and key derivation of the hand, so that a
card encoding, a commitment or a key of one game, hand or seat is useless in any other
(protocol/deck.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pwhist.cards import N_CARDS, Card
from p2pwhist.deck._errors import LocalDeckError

MAX_GAME_ID_BYTES = 255  # the game id is length-prefixed by one byte in every context
MAX_HAND = 2**32 - 1  # the hand number travels as 4 bytes in every context
MAX_SEATS = 255  # a seat (and a position: a deck has at most N_CARDS) is one byte


@dataclass(frozen=True, slots=True)
class DeckParams:
    """One hand's deck: the game it belongs to, the card set and the number of seats.

    ``cards`` may be given in any order; it is kept sorted by card code, which is the order of
    the initial deck (protocol/deck.md §4).
    """

    game_id: bytes
    hand: int
    cards: tuple[Card, ...]
    seats: int

    def __post_init__(self) -> None:
        if type(self.game_id) is not bytes or not 1 <= len(self.game_id) <= MAX_GAME_ID_BYTES:
            raise LocalDeckError(
                f"game_id must be 1..{MAX_GAME_ID_BYTES} bytes, not {self.game_id!r}"
            )
        if type(self.hand) is not int or not 0 <= self.hand <= MAX_HAND:
            raise LocalDeckError(f"hand must be an int in 0..{MAX_HAND}, not {self.hand!r}")
        if type(self.seats) is not int or not 2 <= self.seats <= MAX_SEATS:
            raise LocalDeckError(f"seats must be an int in 2..{MAX_SEATS}, not {self.seats!r}")
        codes = tuple(self.cards)
        if not codes or not all(type(c) in (int, Card) and 0 <= c < N_CARDS for c in codes):
            raise LocalDeckError(
                f"cards must be card codes in 0..{N_CARDS - 1}, not {self.cards!r}"
            )
        if len(set(codes)) != len(codes):
            raise LocalDeckError(f"cards must be distinct, not {self.cards!r}")
        object.__setattr__(self, "cards", tuple(sorted(Card(c) for c in codes)))

    @property
    def size(self) -> int:
        """The number of cards, hence of positions."""
        return len(self.cards)

    def hand_context(self) -> bytes:
        """``u8(len(game_id)) || game_id || u32be(hand)``: names the hand (deck.md §3)."""
        return bytes([len(self.game_id)]) + self.game_id + self.hand.to_bytes(4, "big")

    def seat_context(self, seat: int) -> bytes:
        """``hand_context || u8(seat)``: names one seat's part in the hand (deck.md §3)."""
        return self.hand_context() + bytes([seat])

    def check_seat(self, seat: int) -> None:
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise LocalDeckError(f"seat must be an int in 0..{self.seats - 1}, not {seat!r}")
