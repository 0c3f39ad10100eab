"""The body of every kind of message, as a typed value: decoded once, where peer input enters.

A signed message's body arrives as a msgpack value that anyone may have written. ``decode``
turns it into one of the frozen dataclasses below, or raises ``BodyError``; nothing after it
sees the raw value. Every body checks its exact key set and the exact type and range of each
field (``bool`` is not an ``int``), as the deck's messages do (``p2pwhist.deck``), and each
type knows its wire form (``protocol/session.md`` §3). Which body may come when, and whether
its values fit the game (a result equal to ours, a culprit who sits at the table) is the
session's to judge: a decoder sees one value and no context.

The unsigned frames outside the log (HELLO, WELCOME, LOBBY, NOTICE and the rest) are the
table's (``p2pwhist.table``); they share the field readers below.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, TypeAlias, TypeVar

from p2pwhist.deck import (
    Claim,
    Commitment,
    DeckError,
    LockPass,
    PositionKeys,
    SecretReveal,
    ShufflePass,
    decode_message,
)
from p2pwhist.games.base import ConfigError, Game
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import UnknownGame, game_from_wire
from p2pwhist.identity import PUBLIC_KEY_SIZE, fingerprint
from p2pwhist.limits import DEFAULT_TIMEOUT, DEFAULT_WAIT, MAX_LIMIT, MIN_MOVE, MIN_WAIT
from p2pwhist.wire import WireError, describe

# The version of the log's format (START says it): see protocol/session.md §8. Version 3 added
# the table's time limits to START; a log of version 2 (which agreed none) is still read, to
# verify and resume the games it holds. Version 4 added the early stop of a match whose winner
# is settled (session.md §2); a log of version 3 is played, resumed and verified without it.
LOG_VERSION = 4
READ_VERSIONS = (2, 3, 4)
MAX_SEATS = 6  # a seat number on the wire is 0..MAX_SEATS−1
MAX_NAME = 32
NONCE_SIZE = 32
MAX_REASON = 200  # characters of a reason carried in ABORT and DISPUTE
MAX_COUNT = 1000  # a score or a number of points: no match has more hands (games.match)


class BodyError(WireError):
    """A value that is not the body its message's kind requires."""


class UnknownTable(BodyError):
    """A START of a protocol version or a game this program does not know. It is not judged
    malformed: the rules it would be judged by are not here, which accuses nobody
    (session.md §3)."""


class Kind(enum.Enum):
    """What a message is; the wire carries the value."""

    START = "start"  # the host's configuration and seating: the genesis message
    ACCEPT = "accept"  # a joiner binds its key to the configuration
    HAND = "hand"  # the host starts the next hand (or, with ``more`` false, ends the match)
    COMMIT = "commit"  # deck protocol messages (p2pwhist.deck)
    SHUFFLE = "shuffle"
    LOCK = "lock"
    KEYS = "keys"
    PLAY = "play"  # a move with the played card's key
    SECRET = "secret"  # end-of-hand reveal of a seat's hand secret
    FINAL = "final"  # a seat's signature on the match result
    DISPUTE = "dispute"  # a seat found a bad reveal: every secret is called in, the audit judges
    ABORT = "abort"  # a seat stops the game and says why
    FORFEIT = "forfeit"  # the seat due stayed away or took too long: it loses (session.md §7)


# -- field readers: each raises BodyError with a short description, never a repr ------------


def read_map(obj: Any, keys: set[str], what: str) -> dict[str, Any]:
    if type(obj) is not dict or set(obj) != keys:
        raise BodyError(f"{what} is a map of exactly {', '.join(sorted(keys)) or 'nothing'}, not {describe(obj)}")
    return obj


def read_int(obj: Any, low: int, high: int, what: str) -> int:
    if type(obj) is not int or not low <= obj <= high:
        raise BodyError(f"{what} is a whole number in {low}..{high}, not {describe(obj)}")
    return obj


def read_seat_or_nil(obj: Any, what: str) -> int | None:
    return None if obj is None else read_int(obj, 0, MAX_SEATS - 1, what)


def read_ints(obj: Any, low: int, high: int, what: str) -> tuple[int, ...]:
    if type(obj) is not list or len(obj) > MAX_SEATS:
        raise BodyError(f"{what} is an array of at most {MAX_SEATS}, not {describe(obj)}")
    return tuple(read_int(item, low, high, what) for item in obj)


def read_text(obj: Any, limit: int, what: str) -> str:
    """A string a person will read: printable, so no line breaks or terminal escapes."""
    if type(obj) is not str or len(obj) > limit or not obj.isprintable():
        raise BodyError(f"{what} is a printable string of at most {limit} characters, not {describe(obj)}")
    return obj


def one_line(text: str, limit: int = MAX_REASON) -> str:
    """Our own text made fit for a reason field: printable and short."""
    return "".join(ch if ch.isprintable() else " " for ch in text)[:limit]


def check_name(name: object) -> str:
    """A player's name: 1..32 printable characters without surrounding spaces."""
    if type(name) is not str or not 1 <= len(name) <= MAX_NAME or not name.isprintable() or name != name.strip():
        raise ConfigError(f"a name is 1..{MAX_NAME} printable characters, not {describe(name)}")
    return name


def read_key(obj: Any, what: str) -> bytes:
    return read_bytes(obj, PUBLIC_KEY_SIZE, what)


def read_bytes(obj: Any, size: int, what: str) -> bytes:
    if type(obj) is not bytes or len(obj) != size:
        raise BodyError(f"{what} is {size} bytes, not {describe(obj)}")
    return obj


def read_config(read: Callable[[], Any]) -> Any:
    """A configuration read with the games' own parsers, whose refusals are ``ConfigError``."""
    try:
        return read()
    except ConfigError as error:
        raise BodyError(str(error)) from None


# -- START -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Player:
    name: str
    key: bytes  # Ed25519 public key, raw

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    @staticmethod
    def from_wire(obj: Any) -> Player:
        if type(obj) is not list or len(obj) != 2:
            raise BodyError(f"a player is [name, key], not {describe(obj)}")
        return Player(read_config(lambda: check_name(obj[0])), read_key(obj[1], "a player's key"))


@dataclass(frozen=True)
class TimeLimits:
    """The table's time limits, agreed in START, whole seconds: the most a seat may take over
    one message (``move``), and how long the table waits for a seat whose connection was lost
    (``wait``). Every seat times the others by these, never by an option of its own."""

    move: int
    wait: int

    def __post_init__(self) -> None:
        for value, floor, what in ((self.move, MIN_MOVE, "the limit for a move"), (self.wait, MIN_WAIT, "the wait")):
            if type(value) is not int or not floor <= value <= MAX_LIMIT:
                raise ConfigError(f"{what} is {floor} to {MAX_LIMIT} seconds, not {describe(value)}")

    def to_wire(self) -> dict[str, Any]:
        return {"move": self.move, "wait": self.wait}

    @staticmethod
    def from_wire(obj: Any) -> TimeLimits:
        body = read_map(obj, {"move", "wait"}, "the time limits")
        return read_config(lambda: TimeLimits(body["move"], body["wait"]))


DEFAULT_TIMES = TimeLimits(int(DEFAULT_TIMEOUT), int(DEFAULT_WAIT))


@dataclass(frozen=True)
class Table:
    """START's body: the game, the match length, who sits where, and (since version 3) the
    table's time limits."""

    KIND: ClassVar[Kind] = Kind.START
    game: Game
    length: MatchLength
    players: tuple[Player, ...]
    nonce: bytes  # from the host's OS randomness: makes every game's id unique
    date: str = ""  # the host's calendar date, ISO 8601: for the record only, nobody checks it
    times: TimeLimits | None = DEFAULT_TIMES  # None only in a START of version 2, which agreed none
    version: int = LOG_VERSION

    def __post_init__(self) -> None:
        if (self.times is None) != (self.version == 2):
            raise ConfigError("a START of version 3 or later agrees the time limits; one of version 2 has none")

    def to_wire(self) -> dict[str, Any]:
        wire = {
            "version": self.version,
            "game": self.game.to_wire(),
            "length": self.length.to_wire(),
            "players": [[p.name, p.key] for p in self.players],
            "nonce": self.nonce,
            "date": self.date,
        }
        if self.times is not None:
            wire["times"] = self.times.to_wire()
        return wire

    @staticmethod
    def from_wire(obj: Any) -> Table:
        version = obj.get("version") if type(obj) is dict else None
        if type(version) is not int or version not in READ_VERSIONS:
            raise UnknownTable(f"this game speaks protocol version {describe(version)}; this p2pwhist speaks version "
                            f"{LOG_VERSION} and cannot play, resume or verify it")
        keys = {"version", "game", "length", "players", "nonce", "date"} | ({"times"} if version >= 3 else set())
        body = read_map(obj, keys, "a START")
        try:
            game = game_from_wire(body["game"])
        except UnknownGame as error:
            raise UnknownTable(str(error)) from None
        except ConfigError as error:
            raise BodyError(str(error)) from None
        length = read_config(lambda: MatchLength.from_wire(body["length"]))
        if length.hands is not None and length.minutes is not None:
            raise BodyError("a match length names at most one of hands and minutes (session.md §3)")
        players = body["players"]
        if type(players) is not list or len(players) != game.players:
            raise BodyError(f"the game is for {game.players} players, the table lists {describe(players)}")
        seated = tuple(Player.from_wire(p) for p in players)
        if len({p.key for p in seated}) != len(seated):
            raise BodyError("two seats have the same key")
        nonce = body["nonce"]
        if type(nonce) is not bytes or len(nonce) != NONCE_SIZE:
            raise BodyError(f"the nonce is {NONCE_SIZE} bytes, not {describe(nonce)}")
        date = read_text(body["date"], MAX_NAME, "the date")
        times = TimeLimits.from_wire(body["times"]) if version >= 3 else None
        return Table(game, length, seated, nonce, date, times, version)


# -- the log's other bodies ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Accept:
    """A joiner binds its key to START: ``{}``."""

    KIND: ClassVar[Kind] = Kind.ACCEPT

    def to_wire(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def from_wire(obj: Any) -> Accept:
        read_map(obj, set(), "an ACCEPT")
        return Accept()


@dataclass(frozen=True, slots=True)
class NextHand:
    """The host's decision between hands: ``{"more": bool}``."""

    KIND: ClassVar[Kind] = Kind.HAND
    more: bool

    def to_wire(self) -> dict[str, Any]:
        return {"more": self.more}

    @staticmethod
    def from_wire(obj: Any) -> NextHand:
        more = read_map(obj, {"more"}, "a HAND")["more"]
        if type(more) is not bool:
            raise BodyError(f"a HAND's more is true or false, not {describe(more)}")
        return NextHand(more)


@dataclass(frozen=True, slots=True)
class CardPlay:
    """A move: a card the player may see, claimed (``{"claim": Claim}``), or a closed box card
    played blind with the player's key for its one position (``{"blind": PositionKeys}``)."""

    KIND: ClassVar[Kind] = Kind.PLAY
    reveal: Claim | PositionKeys

    def __post_init__(self) -> None:
        if isinstance(self.reveal, PositionKeys) and len(self.reveal.keys) != 1:
            raise BodyError("a blind play publishes the key of exactly one position")

    @property
    def blind(self) -> bool:
        return isinstance(self.reveal, PositionKeys)

    @property
    def position(self) -> int:
        return self.reveal.keys[0].position if isinstance(self.reveal, PositionKeys) else self.reveal.position

    def to_wire(self) -> dict[str, Any]:
        return {"blind" if self.blind else "claim": self.reveal.to_wire()}

    @staticmethod
    def from_wire(obj: Any) -> CardPlay:
        if type(obj) is not dict or len(obj) != 1 or not ({"claim", "blind"} & set(obj)):
            raise BodyError(f"a PLAY is {{claim: …}} or {{blind: …}}, not {describe(obj)}")
        ((how, wire),) = obj.items()
        reveal = _deck_message(wire, Claim if how == "claim" else PositionKeys, f"a {how} play")
        return CardPlay(reveal)


@dataclass(frozen=True, slots=True)
class MatchSigned:
    """A seat's signature on the match result: points per seat, and the winner, if any."""

    KIND: ClassVar[Kind] = Kind.FINAL
    points: tuple[int, ...]
    winner: int | None

    def to_wire(self) -> dict[str, Any]:
        return {"points": list(self.points), "winner": self.winner}

    @staticmethod
    def from_wire(obj: Any) -> MatchSigned:
        body = read_map(obj, {"points", "winner"}, "a FINAL")
        return MatchSigned(read_ints(body["points"], 0, MAX_COUNT, "points"),
                           read_seat_or_nil(body["winner"], "the winner"))


@dataclass(frozen=True, slots=True)
class Dispute:
    """A reveal to the sender went wrong (session.md §5)."""

    KIND: ClassVar[Kind] = Kind.DISPUTE
    position: int
    reason: str

    def to_wire(self) -> dict[str, Any]:
        return {"position": self.position, "reason": self.reason}

    @staticmethod
    def from_wire(obj: Any) -> Dispute:
        body = read_map(obj, {"position", "reason"}, "a DISPUTE")
        return Dispute(read_int(body["position"], 0, 255, "the disputed position"),
                       read_text(body["reason"], MAX_REASON, "a reason"))


@dataclass(frozen=True, slots=True)
class Abort:
    """Why the sender stops the game, and the seat it blames, if any."""

    KIND: ClassVar[Kind] = Kind.ABORT
    reason: str
    culprit: int | None

    def to_wire(self) -> dict[str, Any]:
        return {"reason": self.reason, "culprit": self.culprit}

    @staticmethod
    def from_wire(obj: Any) -> Abort:
        body = read_map(obj, {"reason", "culprit"}, "an ABORT")
        return Abort(read_text(body["reason"], MAX_REASON, "a reason"),
                     read_seat_or_nil(body["culprit"], "the culprit"))


@dataclass(frozen=True, slots=True)
class Forfeit:
    """The seat due stayed away past the table's wait, or took longer than the limit for one
    message: it loses (session.md §7). The first remaining seat to say so signs it, every
    other remaining seat signs the same body, then each signs FINAL."""

    KIND: ClassVar[Kind] = Kind.FORFEIT
    seat: int
    reason: str

    def to_wire(self) -> dict[str, Any]:
        return {"seat": self.seat, "reason": self.reason}

    @staticmethod
    def from_wire(obj: Any) -> Forfeit:
        body = read_map(obj, {"seat", "reason"}, "a FORFEIT")
        return Forfeit(read_int(body["seat"], 0, MAX_SEATS - 1, "the seat that forfeits"),
                       read_text(body["reason"], MAX_REASON, "a reason"))


def _deck_message(wire: Any, expected: type, what: str) -> Any:
    try:
        message = decode_message(wire)
    except DeckError as error:
        raise BodyError(f"{what}: {error}") from None
    if type(message) is not expected:
        raise BodyError(f"{what} holds a {type(message).__name__}, not a {expected.__name__}")
    return message


Body: TypeAlias = (Table | Accept | NextHand | Commitment | ShufflePass | LockPass | PositionKeys | CardPlay
                   | SecretReveal | MatchSigned | Dispute | Abort | Forfeit)

# Each kind's body type, and how its wire form is read. The deck's messages are the bodies of
# the deck's kinds as they stand (deck.md §5).
_DECODERS: dict[Kind, Callable[[Any], Body]] = {
    Kind.START: Table.from_wire,
    Kind.ACCEPT: Accept.from_wire,
    Kind.HAND: NextHand.from_wire,
    Kind.COMMIT: lambda wire: _deck_message(wire, Commitment, "a COMMIT"),
    Kind.SHUFFLE: lambda wire: _deck_message(wire, ShufflePass, "a SHUFFLE"),
    Kind.LOCK: lambda wire: _deck_message(wire, LockPass, "a LOCK"),
    Kind.KEYS: lambda wire: _deck_message(wire, PositionKeys, "a KEYS"),
    Kind.PLAY: CardPlay.from_wire,
    Kind.SECRET: lambda wire: _deck_message(wire, SecretReveal, "a SECRET"),
    Kind.FINAL: MatchSigned.from_wire,
    Kind.DISPUTE: Dispute.from_wire,
    Kind.ABORT: Abort.from_wire,
    Kind.FORFEIT: Forfeit.from_wire,
}
_KIND_OF_DECK_MESSAGE: dict[type, Kind] = {
    Commitment: Kind.COMMIT, ShufflePass: Kind.SHUFFLE, LockPass: Kind.LOCK, PositionKeys: Kind.KEYS,
    SecretReveal: Kind.SECRET,
}


def decode(kind: Kind, wire: Any) -> Body:
    """The body of a ``kind`` message from its wire form; raises ``BodyError``."""
    return _DECODERS[kind](wire)


def kind_of(body: Body) -> Kind:
    """The kind of message that carries ``body``."""
    return kind_of_type(type(body))


# Generic so that a type variable bound to Body passes: mypy widens no ``type[T]`` to a union's.
AnyBody = TypeVar("AnyBody", bound=Body)


def kind_of_type(body_type: type[AnyBody]) -> Kind:
    """The kind of message whose body is a ``body_type``."""
    return _KIND_OF_DECK_MESSAGE.get(body_type) or body_type.KIND  # type: ignore[attr-defined]
