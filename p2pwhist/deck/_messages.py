"""The messages of the deck protocol and their wire form (protocol/deck.md §5).

Every message is a frozen dataclass that validates itself on construction, so a message that
exists is well-formed; whether it fits the hand (right count, its sender's turn) is for the
``Deck`` to judge. On the wire a message is a msgpack array ``[type, field, …]`` of ints, bytes
and arrays; ``from_wire`` reads hostile input strictly: exact Python types (``bool`` is not an
``int``), exact lengths, bounded counts. Points are 32-byte x-coordinates (SEC 1 §2.3.5) and
keys 32-byte big-endian scalars (SEC 1 §2.3.7), never msgpack ints (those stop at 64 bits).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar, Self, TypeAlias

from p2pwhist.cards import N_CARDS, Card
from p2pwhist.deck._curve import SCALAR_BYTES, X_BYTES, N, P
from p2pwhist.deck._errors import MessageFormatError, Step
from p2pwhist.deck._keys import SECRET_BYTES
from p2pwhist.wire import describe

DIGEST_BYTES = 32  # SHA-256
MAX_POSITIONS = N_CARDS  # no deck is longer than the 52 card codes


class MessageType(enum.IntEnum):
    """The first element of a message's wire array."""

    COMMITMENT = 1
    SHUFFLE_PASS = 2
    LOCK_PASS = 3
    POSITION_KEYS = 4
    CLAIM = 5
    SECRET = 6

    @property
    def step(self) -> Step:
        return _STEP_OF_TYPE[self]


_STEP_OF_TYPE = {
    MessageType.COMMITMENT: Step.COMMITMENT,
    MessageType.SHUFFLE_PASS: Step.SHUFFLE_PASS,
    MessageType.LOCK_PASS: Step.LOCK_PASS,
    MessageType.POSITION_KEYS: Step.POSITION_KEY,
    MessageType.CLAIM: Step.CLAIM,
    MessageType.SECRET: Step.SECRET,
}


def _bytes(value: Any, length: int, what: str, step: Step) -> bytes:
    if type(value) is not bytes:
        raise MessageFormatError(f"{what} must be bytes, not {type(value).__name__}", step)
    if len(value) != length:
        raise MessageFormatError(f"{what} must be {length} bytes, not {len(value)}", step)
    return value


def _int(value: Any, low: int, high: int, what: str, step: Step) -> int:
    if type(value) not in (int, Card):
        raise MessageFormatError(f"{what} must be an int, not {type(value).__name__}", step)
    if not low <= value <= high:
        raise MessageFormatError(f"{what} must be in {low}..{high}, not {value}", step)
    return int(value)


def _array(value: Any, low: int, high: int, what: str, step: Step) -> list[Any] | tuple[Any, ...]:
    """A msgpack array: unpackers give lists (or tuples with use_list=False)."""
    if type(value) not in (list, tuple):
        raise MessageFormatError(f"{what} must be an array, not {type(value).__name__}", step)
    if not low <= len(value) <= high:
        raise MessageFormatError(f"{what} must have {low}..{high} items, not {len(value)}", step)
    return value


def _x(value: Any, what: str, step: Step) -> bytes:
    x = _bytes(value, X_BYTES, what, step)
    if int.from_bytes(x, "big") >= P:
        raise MessageFormatError(f"{what} is not below the field prime p", step)
    return x


def _key(value: int, what: str, step: Step) -> int:
    return _int(value, 1, N - 1, what, step)


def _key_from_wire(value: Any, what: str, step: Step) -> int:
    return _key(int.from_bytes(_bytes(value, SCALAR_BYTES, what, step), "big"), what, step)


def _key_to_wire(key: int) -> bytes:
    return key.to_bytes(SCALAR_BYTES, "big")


def _fields(obj: Any, message_type: MessageType, count: int) -> list[Any] | tuple[Any, ...]:
    """The fields after the type tag of a wire array that must be of ``message_type``."""
    step = message_type.step
    array = _array(obj, count + 1, count + 1, f"a {message_type.name} message", step)
    if type(array[0]) is not int or array[0] != message_type:
        raise MessageFormatError(f"expected type {message_type.value}, not {describe(array[0])}", step)
    return array[1:]


@dataclass(frozen=True, slots=True)
class Commitment:
    """SHA-256 commitment to the sender's secret, sent before any pass (deck.md §3)."""

    TYPE: ClassVar[MessageType] = MessageType.COMMITMENT
    digest: bytes

    def __post_init__(self) -> None:
        _bytes(self.digest, DIGEST_BYTES, "commitment", Step.COMMITMENT)

    def to_wire(self) -> list[Any]:
        return [self.TYPE.value, self.digest]

    @classmethod
    def from_wire(cls, obj: Any) -> Commitment:
        (digest,) = _fields(obj, cls.TYPE, 1)
        return cls(digest)


@dataclass(frozen=True, slots=True)
class _DeckPass:
    """A whole deck of points: the output of one pass."""

    TYPE: ClassVar[MessageType]
    points: tuple[bytes, ...]

    def __post_init__(self) -> None:
        step = self.TYPE.step
        if type(self.points) is not tuple:
            raise MessageFormatError(
                f"points must be a tuple, not {type(self.points).__name__}", step
            )
        _array(self.points, 1, MAX_POSITIONS, "points", step)
        for position, x in enumerate(self.points):
            _x(x, f"point {position}", step)
        if len(set(self.points)) != len(self.points):
            raise MessageFormatError("two points have the same x-coordinate", step)

    def to_wire(self) -> list[Any]:
        return [self.TYPE.value, list(self.points)]

    @classmethod
    def from_wire(cls, obj: Any) -> Self:
        (points,) = _fields(obj, cls.TYPE, 1)
        return cls(tuple(_array(points, 1, MAX_POSITIONS, "points", cls.TYPE.step)))


@dataclass(frozen=True, slots=True)
class ShufflePass(_DeckPass):
    """Every card encrypted with the sender's deck key, then permuted (deck.md §5.2)."""

    TYPE: ClassVar[MessageType] = MessageType.SHUFFLE_PASS


@dataclass(frozen=True, slots=True)
class LockPass(_DeckPass):
    """The sender's deck key swapped for its position keys, card by card (deck.md §5.3)."""

    TYPE: ClassVar[MessageType] = MessageType.LOCK_PASS


@dataclass(frozen=True, slots=True)
class PositionKey:
    """The sender's key for one position of the final deck."""

    position: int
    key: int

    def __post_init__(self) -> None:
        _int(self.position, 0, MAX_POSITIONS - 1, "position", Step.POSITION_KEY)
        _key(self.key, "position key", Step.POSITION_KEY)


@dataclass(frozen=True, slots=True)
class PositionKeys:
    """The sender's keys for some positions, in increasing position order (deck.md §5.4)."""

    TYPE: ClassVar[MessageType] = MessageType.POSITION_KEYS
    keys: tuple[PositionKey, ...]

    def __post_init__(self) -> None:
        step = Step.POSITION_KEY
        if type(self.keys) is not tuple or not all(type(k) is PositionKey for k in self.keys):
            raise MessageFormatError("keys must be a tuple of PositionKey", step)
        _array(self.keys, 1, MAX_POSITIONS, "keys", step)
        positions = [k.position for k in self.keys]
        if any(a >= b for a, b in zip(positions, positions[1:])):
            raise MessageFormatError("positions must be strictly increasing", step)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(k.position for k in self.keys)

    def to_wire(self) -> list[Any]:
        return [self.TYPE.value, [[k.position, _key_to_wire(k.key)] for k in self.keys]]

    @classmethod
    def from_wire(cls, obj: Any) -> PositionKeys:
        step = cls.TYPE.step
        (pairs,) = _fields(obj, cls.TYPE, 1)
        keys = []
        for pair in _array(pairs, 1, MAX_POSITIONS, "keys", step):
            position, key = _array(pair, 2, 2, "a position key", step)
            keys.append(
                PositionKey(
                    _int(position, 0, MAX_POSITIONS - 1, "position", step),
                    _key_from_wire(key, "position key", step),
                )
            )
        return cls(tuple(keys))


@dataclass(frozen=True, slots=True)
class Claim:
    """The sender plays ``card`` from ``position``, publishing its own key for it (deck.md §5.5)."""

    TYPE: ClassVar[MessageType] = MessageType.CLAIM
    position: int
    card: Card
    key: int

    def __post_init__(self) -> None:
        step = Step.CLAIM
        _int(self.position, 0, MAX_POSITIONS - 1, "position", step)
        object.__setattr__(self, "card", Card(_int(self.card, 0, N_CARDS - 1, "card", step)))
        _key(self.key, "position key", step)

    def to_wire(self) -> list[Any]:
        return [self.TYPE.value, self.position, int(self.card), _key_to_wire(self.key)]

    @classmethod
    def from_wire(cls, obj: Any) -> Claim:
        position, card, key = _fields(obj, cls.TYPE, 3)
        return cls(position, card, _key_from_wire(key, "position key", cls.TYPE.step))


@dataclass(frozen=True, slots=True)
class SecretReveal:
    """The sender's secret, revealed when the hand is over so that anyone can audit it."""

    TYPE: ClassVar[MessageType] = MessageType.SECRET
    secret: bytes

    def __post_init__(self) -> None:
        _bytes(self.secret, SECRET_BYTES, "secret", Step.SECRET)

    def to_wire(self) -> list[Any]:
        return [self.TYPE.value, self.secret]

    @classmethod
    def from_wire(cls, obj: Any) -> SecretReveal:
        (secret,) = _fields(obj, cls.TYPE, 1)
        return cls(secret)


Message: TypeAlias = Commitment | ShufflePass | LockPass | PositionKeys | Claim | SecretReveal

_CLASS_OF_TYPE: dict[MessageType, type[Message]] = {
    cls.TYPE: cls for cls in (Commitment, ShufflePass, LockPass, PositionKeys, Claim, SecretReveal)
}


def decode_message(obj: Any) -> Message:
    """Parse one message from its wire form; raises ``MessageFormatError`` on any deviation."""
    if type(obj) not in (list, tuple) or not obj:
        raise MessageFormatError(f"a message must be a non-empty array, not {type(obj).__name__}")
    tag = obj[0]
    if type(tag) is not int or tag not in _CLASS_OF_TYPE:
        raise MessageFormatError(f"unknown message type {describe(tag)}")
    return _CLASS_OF_TYPE[MessageType(tag)].from_wire(obj)
