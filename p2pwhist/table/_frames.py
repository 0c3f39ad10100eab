"""Every frame outside the game's log, as a typed value: decoded once, where it arrives.

A connection carries two kinds of frame (protocol/wire.md §2): the signed messages of the log,
each an msgpack array, which only the session reads (``Logged`` carries their bytes there
untouched), and the unsigned frames around them, each a map of exactly one label. There is one
reader per direction: ``read_from_joiner`` for what a host may receive, ``read_from_host`` for
what a joiner may receive, and ``read_for_spectator`` for what a spectator may. Each returns
one of the frozen dataclasses below or raises ``FrameError``; nothing after it sees a raw
value. Which frame may come when is the table's machines' business (``_lobby``, ``_relay``,
``_joiner``, ``_gallery``, ``_spectator``): a reader sees one frame and no context.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from p2pwhist.bodies import (
    MAX_REASON,
    MAX_SEATS,
    NONCE_SIZE,
    BodyError,
    Player,
    check_name,
    read_bytes,
    read_config,
    read_int,
    read_key,
    read_map,
    read_seat_or_nil,
    read_text,
)
from p2pwhist.wire import WireError, describe, pack, unpack

# The version of the frames outside the log a peer speaks, said in HELLO and WELCOME: version 3
# brought the lobby's (LOBBY, VOUCH, WELCOME's game). The log has its own version, in START
# (``bodies.LOG_VERSION``, 3 since START carries the table's time limits, 4 since a settled
# match may stop early): an older peer, of frames 3 and log 2 or 3, passes the door and refuses
# our START in one line naming the versions; we still play a table of log version 3, and
# version-2 transcripts still resume and verify.
PROTOCOL_VERSION = 3
GAME_ID_SIZE = 32  # SHA-256 of START (session.md §3)
PROOF_SIZE = 64  # an Ed25519 signature
MAX_COUNT = 2**32 - 1  # messages in a log, on the wire


class FrameError(WireError):
    """A frame that is not one its reader takes."""


# -- a joiner's frames -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """A joiner's first frame: its protocol version, name and public key. Any version decodes,
    so that the host can say which one it speaks."""

    LABEL: ClassVar[str] = "hello"
    version: int
    name: str
    key: bytes

    def fields(self) -> dict[str, Any]:
        return {"version": self.version, "name": self.name, "key": self.key}

    @classmethod
    def from_fields(cls, body: Any) -> Hello:
        body = read_map(body, {"version", "name", "key"}, "a HELLO")
        return cls(read_int(body["version"], 0, MAX_COUNT, "a protocol version"),
                   read_config(lambda: check_name(body["name"])), read_key(body["key"], "a public key"))

    @property
    def player(self) -> Player:
        return Player(self.name, self.key)


@dataclass(frozen=True, slots=True)
class Ready:
    """A joiner's answer to WELCOME when it sits down at a new table: it trusts the host."""

    LABEL: ClassVar[str] = "ready"

    def fields(self) -> Any:
        return True

    @classmethod
    def from_fields(cls, body: Any) -> Ready:
        if body is not True:
            raise FrameError(f"a READY says true, not {describe(body)}")
        return cls()


REJOIN_DOMAIN = b"p2pwhist rejoin v1\x00"


@dataclass(frozen=True, slots=True)
class Rejoin:
    """A returning joiner's answer to WELCOME, instead of READY: the game it returns to (its
    id), its seat, how many messages of the log it holds and the hash of the last, and its
    signature over these and the WELCOME's nonce (``statement``), which proves it holds the
    seat's key now, not merely once."""

    LABEL: ClassVar[str] = "rejoin"
    game: bytes
    seat: int
    have: int
    head: bytes
    proof: bytes

    @staticmethod
    def statement(game: bytes, seat: int, have: int, head: bytes, nonce: bytes) -> bytes:
        return REJOIN_DOMAIN + game + bytes([seat]) + have.to_bytes(4, "big") + head + nonce

    def fields(self) -> dict[str, Any]:
        return {"game": self.game, "seat": self.seat, "have": self.have, "head": self.head, "proof": self.proof}

    @classmethod
    def from_fields(cls, body: Any) -> Rejoin:
        body = read_map(body, {"game", "seat", "have", "head", "proof"}, "a REJOIN")
        return cls(read_bytes(body["game"], GAME_ID_SIZE, "the game id"),
                   read_int(body["seat"], 1, MAX_SEATS - 1, "a joiner's seat"),
                   read_int(body["have"], 1, MAX_COUNT, "a message count"),
                   read_bytes(body["head"], 32, "the head"), read_bytes(body["proof"], PROOF_SIZE, "the proof"))


@dataclass(frozen=True, slots=True)
class Vouch:
    """A seated joiner's answer about another player at the table, before START: whether it
    plays with the key ``key`` (a ``Lobby`` lists the players it has not answered about)."""

    LABEL: ClassVar[str] = "vouch"
    key: bytes
    trust: bool

    def fields(self) -> dict[str, Any]:
        return {"key": self.key, "trust": self.trust}

    @classmethod
    def from_fields(cls, body: Any) -> Vouch:
        body = read_map(body, {"key", "trust"}, "a VOUCH")
        if type(body["trust"]) is not bool:
            raise FrameError(f"a VOUCH's trust is true or false, not {describe(body['trust'])}")
        return cls(read_key(body["key"], "a player's key"), body["trust"])


@dataclass(frozen=True, slots=True)
class Done:
    """The end of a game's log, said by the host once the joiner holds all of it, and
    answered in kind by the joiner: ``have`` is the length of the sender's log."""

    LABEL: ClassVar[str] = "done"
    have: int

    def fields(self) -> dict[str, Any]:
        return {"have": self.have}

    @classmethod
    def from_fields(cls, body: Any) -> Done:
        return cls(read_int(read_map(body, {"have"}, "a DONE")["have"], 1, MAX_COUNT, "a message count"))


@dataclass(frozen=True, slots=True)
class Watch:
    """A spectator's first and only frame: it takes no seat and proves nothing, and asks to be
    sent the log so far and every message appended to it (wire.md §2.6). ``version`` as HELLO's,
    so that the host can say which one it speaks."""

    LABEL: ClassVar[str] = "watch"
    version: int

    def fields(self) -> dict[str, Any]:
        return {"version": self.version}

    @classmethod
    def from_fields(cls, body: Any) -> Watch:
        return cls(read_int(read_map(body, {"version"}, "a WATCH")["version"], 0, MAX_COUNT, "a protocol version"))


@dataclass(frozen=True, slots=True)
class Logged:
    """A frame that is not a map: a signed message of the log, for the session to judge
    (``Session.check``). Its bytes are kept verbatim: they are what the chain hashes."""

    raw: bytes


class Presence(enum.Enum):
    """Why the table waits for a seat, as the host tells the others (``Notice``)."""

    GONE = "gone"  # its connection was lost: the table waits for it to return
    BACK = "back"  # it returned
    SLOW = "slow"  # it is connected, and has not moved for a while


# -- a host's frames ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    """The host's answer to a HELLO it does not refuse: its own identity, so that the joiner
    can check it before it sits down; a fresh nonce that a returning joiner signs; and the id
    of the game under way, if any (None while the host seats a new table), so that a joiner
    knows at once whether this is a game it may return to."""

    LABEL: ClassVar[str] = "welcome"
    version: int
    name: str
    key: bytes
    nonce: bytes
    game: bytes | None

    def fields(self) -> dict[str, Any]:
        return {"version": self.version, "name": self.name, "key": self.key, "nonce": self.nonce, "game": self.game}

    @classmethod
    def from_fields(cls, body: Any) -> Welcome:
        body = read_map(body, {"version", "name", "key", "nonce", "game"}, "a WELCOME")
        game = None if body["game"] is None else read_bytes(body["game"], GAME_ID_SIZE, "the game id")
        return cls(read_int(body["version"], 0, MAX_COUNT, "a protocol version"),
                   read_config(lambda: check_name(body["name"])), read_key(body["key"], "a public key"),
                   read_bytes(body["nonce"], NONCE_SIZE, "the nonce"), game)

    @property
    def player(self) -> Player:
        return Player(self.name, self.key)


@dataclass(frozen=True, slots=True)
class Refuse:
    """The host will not have this joiner now, and says why in one printable line; it then
    closes the connection."""

    LABEL: ClassVar[str] = "refuse"
    reason: str

    def fields(self) -> str:
        return self.reason

    @classmethod
    def from_fields(cls, body: Any) -> Refuse:
        return cls(read_text(body, MAX_REASON, "a reason"))


@dataclass(frozen=True, slots=True)
class Lobby:
    """The table before START, as the host tells each joiner that has said READY, whenever it
    changes and at least every ``LOBBY_EVERY`` seconds (``_lobby``): the players seated, in
    seat order (the host first), out of ``seats``; the recipient's own seat, or None while the
    host decides whether to seat it; and the pairs (a, b) of seated players where a has not yet
    said whether it plays with b. A joiner answers a VOUCH for every seated player it has not
    answered about. START follows once every seat is taken and every such answer is yes."""

    LABEL: ClassVar[str] = "lobby"
    seats: int
    players: tuple[Player, ...]
    you: int | None
    undecided: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        seated = len(self.players)
        if not 1 <= seated <= self.seats <= MAX_SEATS:
            raise FrameError(f"a LOBBY seats 1..{MAX_SEATS} players, at most its {self.seats} seats")
        if self.you is not None and not 0 < self.you < seated:
            raise FrameError("a LOBBY's you is the recipient's seat among its players, never the host's")
        if any(not (0 <= a < seated and 0 <= b < seated and a != b) for a, b in self.undecided):
            raise FrameError("a LOBBY's undecided pairs name two different seated players")

    def fields(self) -> dict[str, Any]:
        return {"seats": self.seats, "players": [[p.name, p.key] for p in self.players], "you": self.you,
                "undecided": [list(pair) for pair in self.undecided]}

    @classmethod
    def from_fields(cls, body: Any) -> Lobby:
        body = read_map(body, {"seats", "players", "you", "undecided"}, "a LOBBY")
        players, undecided = body["players"], body["undecided"]
        if type(players) is not list or len(players) > MAX_SEATS:
            raise FrameError(f"a LOBBY's players are an array of at most {MAX_SEATS}, not {describe(players)}")
        pairs = MAX_SEATS * (MAX_SEATS - 1)
        if type(undecided) is not list or len(undecided) > pairs:
            raise FrameError(f"a LOBBY's undecided pairs are an array of at most {pairs}, not {describe(undecided)}")
        return cls(read_int(body["seats"], 2, MAX_SEATS, "the seats"),
                   tuple(_player(p) for p in players), read_seat_or_nil(body["you"], "the recipient's seat"),
                   tuple(_pair(p) for p in undecided))


@dataclass(frozen=True, slots=True)
class Resumed:
    """The host's answer to a REJOIN it takes: how many messages its log holds. It then sends
    the messages the joiner lacks, and the joiner sends its own that the host lacks."""

    LABEL: ClassVar[str] = "resumed"
    have: int

    def fields(self) -> dict[str, Any]:
        return {"have": self.have}

    @classmethod
    def from_fields(cls, body: Any) -> Resumed:
        return cls(read_int(read_map(body, {"have"}, "a RESUMED")["have"], 1, MAX_COUNT, "a message count"))


@dataclass(frozen=True, slots=True)
class Notice:
    """An unsigned word from the host during the game, between the log's messages: the table
    waits for ``seat``, which has ``left`` seconds before it forfeits. For people to read only:
    nothing in the game depends on it, so a lying host gains nothing."""

    LABEL: ClassVar[str] = "notice"
    seat: int
    presence: Presence
    waited: int
    left: int

    def fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "presence": self.presence.value, "waited": self.waited, "left": self.left}

    @classmethod
    def from_fields(cls, body: Any) -> Notice:
        body = read_map(body, {"seat", "presence", "waited", "left"}, "a NOTICE")
        presence = body["presence"]
        if type(presence) is not str or presence not in {p.value for p in Presence}:
            raise FrameError(f"a presence is {', '.join(p.value for p in Presence)}, not {describe(presence)}")
        return cls(read_int(body["seat"], 0, MAX_SEATS - 1, "a seat"), Presence(presence),
                   read_int(body["waited"], 0, 86400 * 2, "seconds waited"),
                   read_int(body["left"], 0, 86400 * 2, "seconds left"))


# -- either way: table talk -------------------------------------------------------------------

MAX_CHAT = 200  # characters of a line of table talk: a sentence, not a letter
CHAT_DOMAIN = b"p2pwhist chat v1\x00"
MAX_CHAT_COUNT = 2**64 - 1


@dataclass(frozen=True, slots=True)
class Chat:
    """A line of table talk from seat ``seat``, during the game, outside the log (wire.md §2.7):
    said by a seated player to the host, which passes it on to the others. ``count`` rises with
    every line the seat says, and ``proof`` is the seat's signature over ``statement`` (the game
    id, the seat, the count and the text), so the host can neither forge a line nor replay one
    from another game, nor reorder a seat's lines unnoticed. ``text`` is as signed: it may hold
    anything a string may, and is cleaned only to be shown (``_chat.shown``)."""

    LABEL: ClassVar[str] = "chat"
    seat: int
    count: int
    text: str
    proof: bytes

    @staticmethod
    def statement(game: bytes, seat: int, count: int, text: str) -> bytes:
        return CHAT_DOMAIN + game + bytes([seat]) + count.to_bytes(8, "big") + text.encode()

    def fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "count": self.count, "text": self.text, "proof": self.proof}

    @classmethod
    def from_fields(cls, body: Any) -> Chat:
        body = read_map(body, {"seat", "count", "text", "proof"}, "a CHAT")
        text = body["text"]
        # A surrogate cannot be UTF-8 (msgpack's decoder refuses one), so ``statement`` always encodes.
        if type(text) is not str or not 1 <= len(text) <= MAX_CHAT:
            raise FrameError(f"a CHAT's text is a string of 1 to {MAX_CHAT} characters, not {describe(text)}")
        return cls(read_int(body["seat"], 0, MAX_SEATS - 1, "a seat"),
                   read_int(body["count"], 0, MAX_CHAT_COUNT, "a line's count"), text,
                   read_bytes(body["proof"], PROOF_SIZE, "the proof"))


FromJoiner: TypeAlias = Hello | Ready | Rejoin | Vouch | Done | Watch | Chat | Logged
FromHost: TypeAlias = Welcome | Refuse | Lobby | Resumed | Notice | Done | Chat | Logged
ToSpectator: TypeAlias = Refuse | Done | Chat | Notice | Logged
Framed: TypeAlias = Hello | Ready | Rejoin | Vouch | Done | Welcome | Refuse | Lobby | Resumed | Notice | Watch | Chat


def encode(frame: Framed) -> bytes:
    """The payload of a frame outside the log: a map of its label alone."""
    return pack({frame.LABEL: frame.fields()})


def _reader(*types: type) -> Callable[[bytes], Any]:
    by_label: dict[str, Callable[[Any], Any]] = {t.LABEL: t.from_fields for t in types}  # type: ignore[attr-defined]
    expected = ", ".join(label.upper() for label in by_label)

    def read(payload: bytes) -> Any:
        # A map's first byte is 0x80..0x8f (at most 15 pairs); a message is an array. Only the
        # session decodes a message: it keeps the exact bytes, which its hash chain needs.
        if not payload or payload[0] & 0xF0 != 0x80:
            return Logged(payload)
        try:
            value = unpack(payload)
        except WireError as error:  # malformed, or nested too deep: the machines catch FrameError
            raise FrameError(str(error)) from None
        if len(value) != 1 or next(iter(value)) not in by_label:
            raise FrameError(f"a frame outside the log is a map of one of {expected}, not {_labels(value)}")
        ((label, body),) = value.items()
        try:
            return by_label[label](body)
        except BodyError as error:
            raise FrameError(str(error)) from None

    return read


def _labels(value: dict[Any, Any]) -> str:
    if len(value) != 1:
        return describe(value)
    label = next(iter(value))
    return describe(label) if type(label) is str else f"a map keyed by {describe(label)}"


def _player(value: Any) -> Player:
    if type(value) is not list or len(value) != 2:
        raise FrameError(f"a player is [name, key], not {describe(value)}")
    return Player(read_config(lambda: check_name(value[0])), read_key(value[1], "a player's key"))


def _pair(value: Any) -> tuple[int, int]:
    if type(value) is not list or len(value) != 2:
        raise FrameError(f"an undecided pair is [seat, seat], not {describe(value)}")
    return read_int(value[0], 0, MAX_SEATS - 1, "a seat"), read_int(value[1], 0, MAX_SEATS - 1, "a seat")


# What a host may receive from a connection, and what a joiner may receive from its host.
read_from_joiner: Callable[[bytes], FromJoiner] = _reader(Hello, Ready, Rejoin, Vouch, Done, Watch, Chat)
read_from_host: Callable[[bytes], FromHost] = _reader(Welcome, Refuse, Lobby, Resumed, Notice, Done, Chat)
# What a spectator may receive from the host it watches (``_spectator``).
read_for_spectator: Callable[[bytes], ToSpectator] = _reader(Refuse, Done, Chat, Notice)
