"""The end-of-hand audit: recompute everything from the revealed secrets (protocol/deck.md §8).

Without shuffle proofs a cheat in a pass or a key is only sure to be caught here. Every seat
reveals its secret; the audit checks each secret against its commitment, replays each pass on
the published deck before it, compares every published key with the key the secret derives,
and every claim with the card actually at that position. It walks the hand in protocol order
and stops at the first deviation, naming its seat and step; for a clean hand it also returns
the position → card map of the final deck, which the game layer needs for its own audit.

A missing message is the fault of the seat that owed it: a pass never sent (or rejected live),
a secret never revealed. The audit reads only the record, so any third party can run it.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pwhist.cards import Card
from p2pwhist.deck._curve import CardEncodings, point
from p2pwhist.deck._errors import LocalDeckError, Step
from p2pwhist.deck._keys import SeatKeys, commitment
from p2pwhist.deck._messages import Claim, PositionKeys
from p2pwhist.deck._params import DeckParams
from p2pwhist.deck._passes import lock_pass, shuffle_pass


@dataclass(frozen=True, slots=True)
class Published:
    """A reveal message (keys or a claim) and the seat that published it."""

    seat: int
    message: PositionKeys | Claim


@dataclass(frozen=True, slots=True)
class DeckRecord:
    """Everything published in one hand, as ``Deck.record`` keeps it.

    ``commitments`` and ``secrets`` are indexed by seat (None where none arrived); the passes
    are in seat order as far as the hand got; ``published`` is in publication order.
    """

    commitments: tuple[bytes | None, ...]
    shuffle_passes: tuple[tuple[bytes, ...], ...]
    lock_passes: tuple[tuple[bytes, ...], ...]
    published: tuple[Published, ...]
    secrets: tuple[bytes | None, ...]


@dataclass(frozen=True, slots=True)
class Deviation:
    """The first thing a seat did that its secret and the protocol do not allow."""

    seat: int
    step: Step
    position: int | None
    detail: str

    def __str__(self) -> str:
        where = "" if self.position is None else f" at position {self.position}"
        return f"seat {self.seat}, {self.step.value}{where}: {self.detail}"


@dataclass(frozen=True, slots=True)
class AuditResult:
    """``deviation`` is None for a clean hand. ``cards[j]`` is the card at final position j;
    it is known (even with a deviation) once every pass has checked out, else None."""

    deviation: Deviation | None
    cards: tuple[Card, ...] | None

    @property
    def clean(self) -> bool:
        return self.deviation is None


def audit(params: DeckParams, record: DeckRecord, encodings: CardEncodings | None = None,
          own: int | None = None) -> AuditResult:
    """Judge a hand's record; see the module docstring and protocol/deck.md §8.

    ``encodings`` saves hashing the cards to the curve again when the caller already holds
    them for these parameters (``Deck.audit`` passes its own). ``own`` is the seat whose
    passes the caller computed itself (``Deck.audit`` passes its seat; an observer, none):
    they are what it sent, so they are not computed again."""
    if len(record.commitments) != params.seats or len(record.secrets) != params.seats:
        raise LocalDeckError(
            f"a record for {params.seats} seats needs a commitment and a secret slot per seat"
        )
    for seat, digest in enumerate(record.commitments):
        if digest is None:
            return _found(seat, Step.COMMITMENT, None, "never committed to a secret")

    keys: list[SeatKeys] = []
    if encodings is None or encodings.cards != params.cards:
        encodings = CardEncodings.of(params)
    deck = encodings.points
    stages = (
        (Step.SHUFFLE_PASS, shuffle_pass, record.shuffle_passes),
        (Step.LOCK_PASS, lock_pass, record.lock_passes),
    )
    for step, replay, published_passes in stages:
        for seat in range(params.seats):
            if seat >= len(published_passes):
                return _found(seat, step, None, "never sent its pass")
            if step is Step.SHUFFLE_PASS:
                secret = record.secrets[seat]
                if secret is None:
                    return _found(seat, Step.SECRET, None, "never revealed its secret")
                if commitment(params, seat, secret) != record.commitments[seat]:
                    return _found(
                        seat, Step.SECRET, None, "the revealed secret does not open its commitment"
                    )
                keys.append(SeatKeys(params, seat, secret))
            published = published_passes[seat]
            expected = published if seat == own else replay(deck, keys[seat])
            if published != expected:
                return _found(
                    seat,
                    step,
                    _first_difference(expected, published),
                    "does not follow from its committed secret and the deck before it",
                )
            if step is Step.SHUFFLE_PASS or seat < params.seats - 1:
                # Equal to what we computed, so every point is valid: point() cannot fail.
                deck = [point(x) for x in published]

    cards = _card_map(params, keys)
    for entry in record.published:
        deviation = _check_published(entry, keys[entry.seat], cards)
        if deviation is not None:
            return AuditResult(deviation, cards)
    return AuditResult(None, cards)


def _found(seat: int, step: Step, position: int | None, detail: str) -> AuditResult:
    return AuditResult(Deviation(seat, step, position, detail), None)


def _first_difference(expected: tuple[bytes, ...], published: tuple[bytes, ...]) -> int:
    for position, (want, got) in enumerate(zip(expected, published)):
        if want != got:
            return position
    return min(len(expected), len(published))


def _card_map(params: DeckParams, keys: list[SeatKeys]) -> tuple[Card, ...]:
    """Follow each final position back through every seat's permutation to its card code.

    Lock passes keep positions, and shuffle pass output j takes input permutation[j].
    """
    cards = []
    for position in range(params.size):
        index = position
        for seat_keys in reversed(keys):
            index = seat_keys.permutation[index]
        cards.append(params.cards[index])
    return tuple(cards)


def _check_published(entry: Published, keys: SeatKeys, cards: tuple[Card, ...]) -> Deviation | None:
    message = entry.message
    pairs = (
        [(k.position, k.key) for k in message.keys]
        if isinstance(message, PositionKeys)
        else [(message.position, message.key)]
    )
    for position, key in pairs:
        if position >= len(cards):
            return Deviation(
                entry.seat, Step.POSITION_KEY, position, "published a key for no position"
            )
        if key != keys.position_keys[position]:
            return Deviation(
                entry.seat,
                Step.POSITION_KEY,
                position,
                "published a key its committed secret does not derive",
            )
    if isinstance(message, Claim) and message.card != cards[message.position]:
        return Deviation(
            entry.seat,
            Step.CLAIM,
            message.position,
            f"claimed {message.card} but the card there is {cards[message.position]}",
        )
    return None
