"""The end-of-hand audit: recompute everything from the revealed secrets (protocol/deck.md §8).

Without shuffle proofs a cheat in a pass or a key is only sure to be caught here. Every seat
reveals its secret; the audit checks each secret against its commitment, compares the final
deck with the one the secrets give (and, only if it differs, recomputes each pass in turn to
find the first that does not follow from its author's secret), compares every published key
with the key the secret derives, and every claim with the card actually at that position. It
stops at the first deviation, naming its seat and step; for a clean hand it also returns the
position → card map of the final deck, which the game layer needs for its own audit. Final
positions the auditor already found live with the right keys cost nothing.

A missing message is the fault of the seat that owed it: a pass never sent (or rejected live),
a secret never revealed. The audit reads only the record, so any third party can run it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from p2pwhist.cards import Card
from p2pwhist.deck._curve import CardEncodings, N, multiply, scalar
from p2pwhist.deck._errors import LocalDeckError, Step
from p2pwhist.deck._keys import SeatKeys, commitment
from p2pwhist.deck._messages import Claim, PositionKeys
from p2pwhist.deck._params import DeckParams


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
          own: int | None = None, known: Mapping[int, Card] | None = None) -> AuditResult:
    """Judge a hand's record; see the module docstring and protocol/deck.md §8.

    ``encodings`` saves hashing the cards to the curve again when the caller already holds
    them for these parameters (``Deck.audit`` passes its own).

    ``known`` is the card the caller found at each final position with every seat's key
    (deck.md §7; ``Deck.known_cards``), ``own`` the seat whose keys the caller used itself
    (``Deck.audit`` passes its seat; an observer, none). Where every other seat published the
    key its secret derives and the card is the one the secrets put there, the final deck is
    right without a multiplication (deck.md §8, "What an audit may leave out"); the verdict is
    the same."""
    if len(record.commitments) != params.seats or len(record.secrets) != params.seats:
        raise LocalDeckError(
            f"a record for {params.seats} seats needs a commitment and a secret slot per seat"
        )
    for seat, digest in enumerate(record.commitments):
        if digest is None:
            return _found(seat, Step.COMMITMENT, None, "never committed to a secret")
    if encodings is None or encodings.cards != params.cards:
        encodings = CardEncodings.of(params)
    keys = _every_seats_keys(params, record)
    if keys is not None:
        # Every pass sent and every secret opens: the final deck decides (§8 step 2).
        source, factors = _start(params)
        for step in (Step.SHUFFLE_PASS, Step.LOCK_PASS):
            for seat_keys in keys:
                source, factors = _after(step, seat_keys, source, factors)
        vouched = _checked_live(params, record, keys, source, known, own) if known else set()
        if _first_difference(encodings, source, factors, record.lock_passes[-1], vouched) is None:
            cards = tuple(params.cards[i] for i in source)
            for entry in record.published:
                deviation = _check_published(entry, keys[entry.seat], cards)
                if deviation is not None:
                    return AuditResult(deviation, cards)
            return AuditResult(None, cards)
    walked = _walk(params, record, encodings)
    assert walked is not None, "every pass was sent and follows from its secret, yet the final deck differs"
    return walked


def _every_seats_keys(params: DeckParams, record: DeckRecord) -> list[SeatKeys] | None:
    """Each seat's keys, if every pass was sent and every secret opens its commitment."""
    if len(record.shuffle_passes) < params.seats or len(record.lock_passes) < params.seats:
        return None
    opened = [_opened(params, record, seat) for seat in range(params.seats)]
    keys = [seat_keys for seat_keys in opened if isinstance(seat_keys, SeatKeys)]
    return keys if len(keys) == params.seats else None


def _walk(params: DeckParams, record: DeckRecord, encodings: CardEncodings) -> AuditResult | None:
    """§8 step 2 pass by pass: the first pass never sent, secret not opening its commitment
    before its seat's shuffle pass, or pass not following from its secret and the published
    deck before it (which pins the fault on its author: its input was honest up to there).
    None if there is none."""
    keys: list[SeatKeys] = []
    source, factors = _start(params)
    for step, published_passes in (Step.SHUFFLE_PASS, record.shuffle_passes), (Step.LOCK_PASS, record.lock_passes):
        for seat in range(params.seats):
            if seat >= len(published_passes):
                return _found(seat, step, None, "never sent its pass")
            if step is Step.SHUFFLE_PASS:
                opened = _opened(params, record, seat)
                if isinstance(opened, AuditResult):
                    return opened
                keys.append(opened)
            source, factors = _after(step, keys[seat], source, factors)
            position = _first_difference(encodings, source, factors, published_passes[seat], set())
            if position is not None:
                return _found(seat, step, position, "does not follow from its committed secret and the deck before it")
    return None


def _start(params: DeckParams) -> tuple[list[int], list[int]]:
    """The deck before the first pass, the card encodings in card-code order, described as
    ``_after`` describes a deck."""
    return list(range(params.size)), [1] * params.size


def _after(step: Step, keys: SeatKeys, source: list[int], factors: list[int]) -> tuple[list[int], list[int]]:
    """The deck after an honest pass made with ``keys``, from the deck before it. A deck the
    honest passes give is described without curve work (§8, "Passes from the encodings"):
    position j holds x(factors[j] · H(c)), c being ``params.cards[source[j]]``."""
    if step is Step.SHUFFLE_PASS:  # out[j] = d · in[permutation[j]] (§5.2)
        return ([source[i] for i in keys.permutation],
                [factors[i] * keys.deck_key % N for i in keys.permutation])
    inverse = pow(keys.deck_key, -1, N)  # out[j] = (k_j · d⁻¹) · in[j]
    return source, [f * k * inverse % N for f, k in zip(factors, keys.position_keys)]


def _found(seat: int, step: Step, position: int | None, detail: str) -> AuditResult:
    return AuditResult(Deviation(seat, step, position, detail), None)


def _opened(params: DeckParams, record: DeckRecord, seat: int) -> SeatKeys | AuditResult:
    """The keys of ``seat``'s revealed secret, or why the audit stops there (§8 step 2)."""
    secret = record.secrets[seat]
    if secret is None:
        return _found(seat, Step.SECRET, None, "never revealed its secret")
    if commitment(params, seat, secret) != record.commitments[seat]:
        return _found(seat, Step.SECRET, None, "the revealed secret does not open its commitment")
    return SeatKeys(params, seat, secret)


def _first_difference(encodings: CardEncodings, source: list[int], factors: list[int],
                      published: tuple[bytes, ...], skip: set[int]) -> int | None:
    """The first position where ``published`` is not x(factors[j] · encoding of source[j]),
    or None: one multiplication per position but those in ``skip``, and one key object per
    distinct factor (a shuffle pass has a single one, a lock pass one per position)."""
    todo = [j for j in range(min(len(source), len(published))) if j not in skip]
    key_objects = {factor: scalar(factor) for factor in {factors[j] for j in todo}}
    for j in todo:
        if multiply(key_objects[factors[j]], encodings.points[source[j]]) != published[j]:
            return j
    return None if len(published) == len(source) else min(len(source), len(published))


def _checked_live(params: DeckParams, record: DeckRecord, keys: list[SeatKeys], source: list[int],
                  known: Mapping[int, Card], own: int | None) -> set[int]:
    """The positions of ``known`` at which the final deck is right without a multiplication.

    There the caller found the card with every seat's key (§7): the final point is ±(the
    product of those keys)·(the card's encoding). If every seat but ``own`` published its key
    there, each the key its secret derives (``own`` used its own), and the card is the one the
    secrets put there, that is the point the secrets give: the very comparison the audit would
    make, since x(k·P) = x(k·Q) only if P = ±Q."""
    published_by: list[set[int]] = [set() for _ in range(params.size)]
    wrong: set[int] = set()
    for entry in record.published:
        for position, key in _pairs(entry.message):
            if position < params.size:
                published_by[position].add(entry.seat)
                if key != keys[entry.seat].position_keys[position]:
                    wrong.add(position)
    others = set(range(params.seats)) - {own}
    return {
        j for j, card in known.items()
        if 0 <= j < params.size and j not in wrong and others <= published_by[j]
        and card == params.cards[source[j]]
    }


def _pairs(message: PositionKeys | Claim) -> list[tuple[int, int]]:
    """The (position, key) pairs a reveal message publishes."""
    if isinstance(message, PositionKeys):
        return [(k.position, k.key) for k in message.keys]
    return [(message.position, message.key)]


def _check_published(entry: Published, keys: SeatKeys, cards: tuple[Card, ...]) -> Deviation | None:
    message = entry.message
    for position, key in _pairs(message):
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
