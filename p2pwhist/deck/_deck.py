"""One seat's view of the deck protocol: a state machine with no I/O (protocol/deck.md §5–7).

Everything that changes the state lives in this file. The rules it keeps:

- Commitments first, from every seat, in any order. Then the shuffle passes in seat order,
  then the lock passes in seat order; a pass out of turn is the sender's fault. The session
  must deliver messages in causal order (a message after everything its sender had seen
  before sending it), as a relay through one host or per-sender logs do.
- Once the final deck is fixed, seats publish position keys and claim cards in any order.
  A seat learns the card at a position as soon as it holds every other seat's key for it.
- Revealing a secret ends the hand: from then on only secrets are taken, until every seat's
  secret is in (``DONE``) and ``audit(params, deck.record)`` can judge the hand.
- A peer's error puts the deck in ``ERROR``: every later call fails, except those revealing
  and taking secrets, which the audit needs. An unattributed fault (a reveal that decrypts to
  no card, or to one already seen) does not: the position stays unknown and the deck goes on,
  so that the session can call for every secret at a moment all seats agree on.
- Checks of form and turn come before a message is recorded, and such a message is dropped.
  A message that passes them is recorded before its cryptographic checks (on-curve points,
  decryption, claim, commitment opening), so that the audit sees the evidence.
- Each received point is validated when first used, and only the work needed is done: the
  seat that encrypts a deck next validates all of it on receipt (its point objects are
  reused for its pass), and a final-deck point is validated when it is first decrypted.
  Counts, lengths, x < p and distinctness are checked on every deck at once.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from p2pwhist.cards import Card
from p2pwhist.deck import _passes
from p2pwhist.deck._audit import AuditResult, DeckRecord, Published, audit
from p2pwhist.deck._curve import CardEncodings, Point, point
from p2pwhist.deck._errors import (
    LocalDeckError,
    MessageFormatError,
    RemoteDeckError,
    Step,
    UnattributedDeckError,
)
from p2pwhist.deck._keys import SECRET_BYTES, SeatKeys, commitment
from p2pwhist.deck._messages import (
    Claim,
    Commitment,
    LockPass,
    Message,
    PositionKey,
    PositionKeys,
    SecretReveal,
    ShufflePass,
    decode_message,
)
from p2pwhist.deck._params import DeckParams


class Phase(enum.Enum):
    COMMITTING = "committing"  # waiting for every seat's commitment
    SHUFFLING = "shuffling"  # shuffle passes, seat 0 first
    LOCKING = "locking"  # lock passes, seat 0 first
    REVEALING = "revealing"  # the final deck is fixed: keys and claims
    OPENING = "opening"  # the hand is over: secrets are being revealed
    DONE = "done"  # every secret is in: time for audit()
    ERROR = "error"  # a peer broke the protocol: only secrets are taken, for the audit


# What a peer may send in each phase (h11's transitions as data). Inside a phase, the handler
# checks turn and content, and the phase moves on when its step is complete.
_ACCEPTS: dict[Phase, frozenset[type]] = {
    Phase.COMMITTING: frozenset({Commitment, SecretReveal}),
    Phase.SHUFFLING: frozenset({ShufflePass, SecretReveal}),
    Phase.LOCKING: frozenset({LockPass, SecretReveal}),
    Phase.REVEALING: frozenset({PositionKeys, Claim, SecretReveal}),
    Phase.OPENING: frozenset({SecretReveal}),
    Phase.DONE: frozenset(),
    Phase.ERROR: frozenset({SecretReveal}),
}


@dataclass(frozen=True, slots=True)
class Revealed:
    """This seat has just learnt the card at a position of the final deck."""

    position: int
    card: Card


@dataclass(frozen=True, slots=True)
class _Own:
    """What a seat holds and an observer does not: its number, its secret and the keys from it."""

    seat: int
    secret: bytes
    keys: SeatKeys


class Deck:
    """One seat's part in dealing one hand's deck; see the package docstring for its use."""

    def __init__(self, params: DeckParams, seat: int | None, secret: bytes | None) -> None:
        """A seat's deck; ``seat`` and ``secret`` None make an observer (see ``observer``)."""
        if type(params) is not DeckParams:
            raise LocalDeckError(f"params must be DeckParams, not {type(params).__name__}")
        keys = None
        if seat is not None:
            params.check_seat(seat)
            if type(secret) is not bytes or len(secret) != SECRET_BYTES:
                raise LocalDeckError(f"the secret must be {SECRET_BYTES} bytes of OS randomness")
            keys = SeatKeys(params, seat, secret)
        elif secret is not None:
            raise LocalDeckError("an observer has no secret")
        self.params = params
        self.seat = seat
        self._secret = secret
        self._keys = keys
        self._others = tuple(s for s in range(params.seats) if s != seat)
        self._phase = Phase.COMMITTING
        self._commitments: list[bytes | None] = [None] * params.seats
        self._passes: list[tuple[bytes, ...]] = []  # the shuffle passes, then the lock passes
        self._next_input: Sequence[Point] = ()  # the validated deck this seat encrypts next
        self._final_points: dict[int, Point] = {}  # final-deck points validated so far
        # position → {seat: the key it published}, this seat's own included once it published
        self._keys_at: list[dict[int, int]] = [{} for _ in range(params.size)]
        self._published: list[Published] = []
        self._cards: dict[int, Card] = {}
        self._position_of: dict[Card, int] = {}
        self._secrets: list[bytes | None] = [None] * params.seats

    @staticmethod
    def observer(params: DeckParams) -> Deck:
        """A deck that holds no seat: it takes every message, checks what anyone can check
        (order, form, claims, public reveals) and keeps the record for ``audit``, but makes no
        message and learns only cards revealed to all. The transcript verifier uses it."""
        return Deck(params, None, None)

    # Queries

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def turn(self) -> int | None:
        """The seat whose pass comes next, while passes are being made."""
        if self._phase in (Phase.SHUFFLING, Phase.LOCKING):
            return len(self._passes) % self.params.seats
        return None

    @property
    def final_deck(self) -> tuple[bytes, ...] | None:
        """The x-coordinates of the final deck, once every lock pass is in."""
        return self._passes[-1] if len(self._passes) == 2 * self.params.seats else None

    def known_card(self, position: int) -> Card | None:
        """The card at ``position`` if it has been revealed to this seat."""
        return self._cards.get(position)

    def public_card(self, position: int) -> Card | None:
        """The card that ``position`` decrypts to with the keys published for it, once every
        seat has published its key there; None before, or if it decrypts to no card. Every
        seat and an observer read the same card, unlike ``known_card``, which stays None for a
        seat that saw that card at another position (the reveal is then an anomaly)."""
        self._check_position(position)
        keys = self._keys_at[position]
        if len(keys) < self.params.seats:
            return None
        known = self._cards.get(position)
        if known is not None:  # found with the same keys, its own included
            return known
        return self._encodings.card_at.get(_passes.decrypt(self._final_point(position), keys.values()))

    @property
    def known_cards(self) -> dict[int, Card]:
        """Every card revealed to this seat so far, by position (a copy)."""
        return dict(self._cards)

    @property
    def record(self) -> DeckRecord:
        """Everything published so far, for ``audit``."""
        seats = self.params.seats
        return DeckRecord(
            commitments=tuple(self._commitments),
            shuffle_passes=tuple(self._passes[:seats]),
            lock_passes=tuple(self._passes[seats:]),
            published=tuple(self._published),
            secrets=tuple(self._secrets),
        )

    def audit(self) -> AuditResult:
        """``audit`` of this deck's record, reusing the card encodings this seat computed and
        leaving out the final positions where it found the card with the right keys."""
        return audit(self.params, self.record, self._encodings, own=self.seat, known=self._cards)

    @cached_property
    def _encodings(self) -> CardEncodings:
        return CardEncodings.of(self.params)

    # Actions: each returns the message to broadcast and records it as sent.

    def commit(self) -> Commitment:
        own = self._require(Phase.COMMITTING, "commit")
        if self._commitments[own.seat] is not None:
            raise LocalDeckError("this seat has already committed")
        message = Commitment(commitment(self.params, own.seat, own.secret))
        self._take_commitment(own.seat, message.digest)
        return message

    def shuffle_pass(self) -> ShufflePass:
        own = self._require_turn(Phase.SHUFFLING, "shuffle")
        deck = self._encodings.points if not self._passes else self._next_input
        message = ShufflePass(_passes.shuffle_pass(deck, own.keys))
        self._take_pass(message.points)
        return message

    def lock_pass(self) -> LockPass:
        own = self._require_turn(Phase.LOCKING, "lock")
        message = LockPass(_passes.lock_pass(self._next_input, own.keys))
        self._take_pass(message.points)
        return message

    def keys_for(self, positions: Iterable[int]) -> PositionKeys:
        """This seat's keys for ``positions``: to reveal them to the seats that hold all others."""
        own = self._require(Phase.REVEALING, "publish keys")
        chosen = list(positions)
        if not chosen:
            raise LocalDeckError("publish keys for at least one position")
        for position in chosen:
            self._check_position(position)
        chosen = sorted(set(chosen))
        message = PositionKeys(tuple(PositionKey(j, own.keys.position_keys[j]) for j in chosen))
        self._published.append(Published(own.seat, message))
        for j in chosen:
            self._keys_at[j][own.seat] = own.keys.position_keys[j]
        return message

    def claim(self, position: int) -> Claim:
        """Play the card at ``position``, which was revealed to this seat."""
        own = self._require(Phase.REVEALING, "claim a card")
        self._check_position(position)
        card = self._cards.get(position)
        if card is None:
            raise LocalDeckError(f"position {position} was not revealed to seat {own.seat}")
        message = Claim(position, card, own.keys.position_keys[position])
        self._published.append(Published(own.seat, message))
        self._keys_at[position][own.seat] = message.key
        return message

    def reveal_secret(self) -> SecretReveal:
        """End the hand: this seat's secret, for everyone to audit it."""
        own = self._own("an observer has no secret to reveal")
        if self._commitments[own.seat] is None:
            raise LocalDeckError("a seat reveals its secret only after committing to it")
        if self._secrets[own.seat] is not None:
            raise LocalDeckError("this seat has already revealed its secret")
        self._take_secret(own.seat, own.secret)
        return SecretReveal(own.secret)

    # Peer input

    def receive_wire(self, sender: int, obj: Any) -> tuple[Revealed, ...]:
        """``receive`` for a message still in wire form (as msgpack unpacked it)."""
        self.params.check_seat(sender)
        try:
            message = decode_message(obj)
        except MessageFormatError as error:
            self._phase = Phase.ERROR
            raise RemoteDeckError(sender, error.step, error.reason) from None
        return self.receive(sender, message)

    def receive(self, sender: int, message: Message) -> tuple[Revealed, ...]:
        """Take a message from seat ``sender``; return the cards it revealed to this seat.

        Raises ``RemoteDeckError`` naming the sender if the message breaks the protocol, and
        ``UnattributedDeckError`` if a decrypted position shows that somebody cheated.
        """
        self.params.check_seat(sender)
        if sender == self.seat:
            raise LocalDeckError("a seat's own messages are recorded when it makes them")
        handler = _HANDLERS.get(type(message))
        if handler is None:
            raise LocalDeckError(f"not a deck message: {message!r}")
        if self._phase is Phase.ERROR and type(message) is not SecretReveal:
            raise LocalDeckError("the deck stopped at an error: only secrets are taken now")
        try:
            if type(message) not in _ACCEPTS[self._phase]:
                raise RemoteDeckError(
                    sender, message.TYPE.step, f"out of order: the deck is {self._phase.value}"
                )
            return handler(self, sender, message)
        except RemoteDeckError:
            self._phase = Phase.ERROR
            raise
        # An UnattributedDeckError leaves the deck as it was, the bad position unknown: the
        # session goes on until it can call for every secret and the audit names the cheater.

    def _on_commitment(self, sender: int, message: Commitment) -> tuple[Revealed, ...]:
        if self._commitments[sender] is not None:
            raise RemoteDeckError(sender, Step.COMMITMENT, "committed twice")
        self._take_commitment(sender, message.digest)
        return ()

    def _on_pass(self, sender: int, message: ShufflePass | LockPass) -> tuple[Revealed, ...]:
        step = message.TYPE.step
        if sender != self.turn:
            raise RemoteDeckError(sender, step, f"out of turn: seat {self.turn} passes next")
        if len(message.points) != self.params.size:
            raise RemoteDeckError(
                sender, step, f"{len(message.points)} points for a deck of {self.params.size}"
            )
        self._take_pass(message.points)
        if self.final_deck is not None:
            # The final deck: every seat, and an observer, validates all of it now (deck.md §6),
            # so that a bad point is blamed at this message by everyone alike.
            self._final_points = {j: self._valid_point(sender, step, j, x) for j, x in enumerate(message.points)}
        elif self.turn == self.seat:  # this seat encrypts the deck next: validate all of it now
            self._next_input = [
                self._valid_point(sender, step, j, x) for j, x in enumerate(message.points)
            ]
        return ()

    def _on_position_keys(self, sender: int, message: PositionKeys) -> tuple[Revealed, ...]:
        for k in message.keys:
            self._check_key(sender, Step.POSITION_KEY, k.position, k.key)
        self._published.append(Published(sender, message))
        for k in message.keys:
            self._keys_at[k.position][sender] = k.key
        return tuple(
            self._decrypt(j)
            for j in message.positions
            if j not in self._cards and all(s in self._keys_at[j] for s in self._others)
        )

    def _on_claim(self, sender: int, message: Claim) -> tuple[Revealed, ...]:
        position, card = message.position, message.card
        self._check_key(sender, Step.CLAIM, position, message.key)
        if card not in self.params.cards:
            raise RemoteDeckError(
                sender, Step.CLAIM, f"claims {card}, which is not in this deck", position
            )
        # Whoever knows the card held every other seat's key, this seat's included.
        missing = [
            s for s in range(self.params.seats) if s != sender and s not in self._keys_at[position]
        ]
        if missing:
            raise RemoteDeckError(
                sender,
                Step.CLAIM,
                f"claims a card not revealed to it: seats {missing} "
                "have not published their keys for this position",
                position,
            )
        self._published.append(Published(sender, message))
        self._keys_at[position][sender] = message.key
        known = self._cards.get(position)
        if known is not None:
            if known != card:
                raise RemoteDeckError(
                    sender, Step.CLAIM, f"claims {card}, but the card there is {known}", position
                )
            return ()
        keys = self._all_keys(position)
        if _passes.encrypt(self._encodings.point_of(card), keys) != self._passes[-1][position]:
            raise RemoteDeckError(
                sender, Step.CLAIM, f"claims {card}, which is not the card there", position
            )
        return (self._learn(position, card),)

    def _on_secret(self, sender: int, message: SecretReveal) -> tuple[Revealed, ...]:
        if self._commitments[sender] is None:
            raise RemoteDeckError(
                sender, Step.SECRET, "revealed a secret without having committed to one"
            )
        if self._secrets[sender] is not None:
            raise RemoteDeckError(sender, Step.SECRET, "revealed its secret twice")
        self._take_secret(sender, message.secret)
        if commitment(self.params, sender, message.secret) != self._commitments[sender]:
            raise RemoteDeckError(sender, Step.SECRET, "the secret does not open its commitment")
        return ()

    # State changes shared by actions and received messages

    def _take_commitment(self, seat: int, digest: bytes) -> None:
        self._commitments[seat] = digest
        if all(c is not None for c in self._commitments):
            self._phase = Phase.SHUFFLING

    def _take_pass(self, points: tuple[bytes, ...]) -> None:
        self._passes.append(points)
        self._next_input = ()
        if len(self._passes) == self.params.seats:
            self._phase = Phase.LOCKING
        elif len(self._passes) == 2 * self.params.seats:
            self._phase = Phase.REVEALING

    def _take_secret(self, seat: int, secret: bytes) -> None:
        self._secrets[seat] = secret
        if self._phase is not Phase.ERROR:
            self._phase = Phase.DONE if all(s is not None for s in self._secrets) else Phase.OPENING

    def _all_keys(self, position: int) -> list[int]:
        """Every seat's key for ``position``: the others' as published, and this seat's own."""
        keys = dict(self._keys_at[position])
        if self.seat is not None and self._keys is not None:
            keys[self.seat] = self._keys.position_keys[position]
        return list(keys.values())

    def _decrypt(self, position: int) -> Revealed:
        x = _passes.decrypt(self._final_point(position), self._all_keys(position))
        card = self._encodings.card_at.get(x)
        if card is None:
            raise UnattributedDeckError(self._others, Step.REVEAL, position, "decrypts to no card")
        return self._learn(position, card)

    def _learn(self, position: int, card: Card) -> Revealed:
        seen = self._position_of.get(card)
        if seen is not None:
            raise UnattributedDeckError(
                self._others,
                Step.REVEAL,
                position,
                f"decrypts to {card}, already seen at position {seen}",
            )
        self._cards[position] = card
        self._position_of[card] = position
        return Revealed(position, card)

    # Checks

    def _final_point(self, position: int) -> Point:
        q = self._final_points.get(position)
        if q is None:
            last_seat = self.params.seats - 1
            q = self._valid_point(last_seat, Step.LOCK_PASS, position, self._passes[-1][position])
            self._final_points[position] = q
        return q

    @staticmethod
    def _valid_point(sender: int, step: Step, position: int, x: bytes) -> Point:
        q = point(x)
        if q is None:
            raise RemoteDeckError(sender, step, "not the x-coordinate of a curve point", position)
        return q

    def _check_key(self, sender: int, step: Step, position: int, key: int) -> None:
        if position >= self.params.size:
            raise RemoteDeckError(
                sender, step, f"no such position in a deck of {self.params.size}", position
            )
        earlier = self._keys_at[position].get(sender)
        if earlier is not None and earlier != key:
            raise RemoteDeckError(
                sender, step, "differs from the key it published before", position
            )

    def _check_position(self, position: int) -> None:
        if type(position) is not int or not 0 <= position < self.params.size:
            raise LocalDeckError(
                f"position must be an int in 0..{self.params.size - 1}, not {position!r}"
            )

    def _own(self, refusal: str) -> _Own:
        """This seat's own part; ``refusal`` is the error for an observer, which has none."""
        if self.seat is None or self._secret is None or self._keys is None:
            raise LocalDeckError(refusal)
        return _Own(self.seat, self._secret, self._keys)

    def _require(self, phase: Phase, action: str) -> _Own:
        own = self._own(f"an observer cannot {action}")
        if self._phase is not phase:
            raise LocalDeckError(f"cannot {action}: the deck is {self._phase.value}")
        return own

    def _require_turn(self, phase: Phase, action: str) -> _Own:
        own = self._require(phase, action)
        if self.turn != own.seat:
            raise LocalDeckError(f"cannot {action}: it is seat {self.turn}'s turn")
        return own


_HANDLERS: dict[type, Callable[[Deck, int, Any], tuple[Revealed, ...]]] = {
    Commitment: Deck._on_commitment,
    ShufflePass: Deck._on_pass,
    LockPass: Deck._on_pass,
    PositionKeys: Deck._on_position_keys,
    Claim: Deck._on_claim,
    SecretReveal: Deck._on_secret,
}
