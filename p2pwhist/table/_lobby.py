"""The host's door: every connection until it plays, and the table until START.

Everything that decides who may sit down, and when the game may start, lives here:

- A connection is admitted within two limits on handshakes under way: ``Limits.pending`` in
  all, and ``pending_per_network`` from one network (a /24 of IPv4, a /64 of IPv6: one home,
  one carrier's NAT, one attacker's range). At either limit the oldest connection that has not
  said who it is (or, during the game, said it is nobody seated) makes room, so silent
  connections cannot keep anyone out; only when none is left is the newcomer refused. It
  then goes through the stages of ``Stage``. What each stage takes is
  the table ``_ACCEPTS``; anything else, or a frame that does not decode, is refused in one
  line naming what was expected, and only that connection ends.
- Before START (``Phase.SEATING``): HELLO, WELCOME, READY; then the host decides whether to
  seat the joiner (``Vet``: a known key at once, a new one perhaps by asking our person, which
  takes as long as they need, within ``Limits.trust``); a seated joiner then says, for each
  other seated player, whether it plays with them (VOUCH). A player refused by another leaves
  the table and everyone else keeps their seat. START goes out (``Begin``) once every seat is
  taken and every seated player has accepted every other. Every joiner that said READY is told
  how the table stands (LOBBY) whenever that changes, and at least every ``Limits.news_every``.
- During the game (``Phase.PLAYING``): a HELLO is a joiner returning to its seat; its REJOIN
  is checked by the host machine (``rejoin``), which then takes the connection for the game.
  A HELLO naming a seated key goes first: it is never made room for, and a newer HELLO naming
  the same key replaces it (the joiner gave up on the older connection, or a stranger copied
  the key, which only the REJOIN's proof settles).
- A seated joiner says nothing but VOUCHes before START; if it closes, or sends anything else,
  it has left and its seat is free again. Before ``Begin`` every frame a joiner sent while it
  was seated has been read, so a joiner may answer START at once.
- In any phase, a first frame WATCH is a spectator's: the host machine (``watch``) admits it
  to the gallery (``_gallery``) or refuses it, and its handshake slot is free either way.

Times come in as values; deadlines (``deadline``) go out, and ``tick`` acts on them.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field

from p2pwhist.bodies import Player
from p2pwhist.identity import fingerprint
from p2pwhist.table._actions import Action, Begin, Close, ConnId, Report, Send, Unvet, Vet
from p2pwhist.table._errors import LocalTableError
from p2pwhist.table._frames import (
    PROTOCOL_VERSION,
    FrameError,
    FromJoiner,
    Hello,
    Logged,
    Ready,
    Refuse,
    Rejoin,
    Vouch,
    Watch,
    Welcome,
    encode,
    read_from_joiner,
)
from p2pwhist.table._frames import (
    Lobby as LobbyNews,
)
from p2pwhist.table._limits import HANDSHAKE_FRAME, Limits
from p2pwhist.table._trust import KeyJudgement
from p2pwhist.table._words import lobby_lines
from p2pwhist.text import clock
from p2pwhist.wire import WireError, describe, unpack

# A refusal of an excess connection is one short line, which a fresh connection's send buffer
# takes at once; one that leaves it no room is not waited for longer than this.
REFUSE_AT_ONCE = 0.05
REFUSE_WITHIN = 2.0


class Phase(enum.Enum):
    SEATING = "seating"  # before START: joiners sit down and accept each other
    STARTING = "starting"  # START is being made (``Begin``): nothing changes meanwhile
    PLAYING = "playing"  # the game is under way: a HELLO is a joiner returning to its seat
    CLOSED = "closed"  # the table is gone: nobody is let in


class Stage(enum.Enum):
    """Where one connection stands before it plays."""

    GREETING = "greeting"  # connected; its HELLO is due
    WELCOMED = "welcomed"  # we said WELCOME; its READY (or its REJOIN, during a game) is due
    VETTING = "vetting"  # it said READY; we decide whether to seat it
    SEATED = "seated"  # it has a seat, and says whether it plays with each other seated player
    LEAVING = "leaving"  # refused or dropped: its connection is closing


# What each stage takes, per phase: a frame of any other type is refused in one line.
_ACCEPTS: dict[tuple[Phase, Stage], frozenset[type]] = {
    (Phase.SEATING, Stage.GREETING): frozenset({Hello, Watch}),
    (Phase.SEATING, Stage.WELCOMED): frozenset({Ready, Vouch}),  # a VOUCH: it does not accept our key
    (Phase.SEATING, Stage.VETTING): frozenset(),  # it waits for us: anything it says is a departure
    (Phase.SEATING, Stage.SEATED): frozenset({Vouch}),
    (Phase.STARTING, Stage.GREETING): frozenset({Hello, Watch}),
    (Phase.PLAYING, Stage.GREETING): frozenset({Hello, Watch}),
    (Phase.PLAYING, Stage.WELCOMED): frozenset({Rejoin}),
}
# The frames a joiner of a stage may be waiting to send, for the words of a refusal.
_EXPECTED = {Stage.GREETING: "a HELLO", Stage.WELCOMED: "a READY", Stage.VETTING: "nothing", Stage.SEATED: "a VOUCH"}
# Stages in which a connection holds one of the limited handshake slots.
_PENDING = frozenset({Stage.GREETING, Stage.WELCOMED, Stage.VETTING})
_CROWDED = "the host has too many connections waiting to join; try again shortly"
_CROWDED_NETWORK = "too many connections from your network are waiting to join this host; try again shortly"


def network_of(address: str) -> str:
    """The network an IP address counts in for the limit per address: its /24 (IPv4) or /64
    (IPv6), a home's or a carrier's NAT's share; an address that is no IP address (a test's
    name) counts alone."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])  # a link-local address's zone is no part of it
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ipaddress.ip_network(f"{ip}/{24 if ip.version == 4 else 64}", strict=False))


@dataclass(eq=False)
class Arrival:
    """One connection at the door."""

    conn: ConnId
    address: str  # its IP address
    where: str  # address and port, to name it before its HELLO does
    stage: Stage
    since: float  # when it entered its stage
    player: Player | None = None
    nonce: bytes = b""
    vouched: dict[bytes, bool] = field(default_factory=dict)  # a seated joiner's answers, by key

    @property
    def name(self) -> str:
        return self.player.name if self.player else f"a joiner at {self.where}"

    @property
    def network(self) -> str:
        """The network the per-address limit counts (``network_of``)."""
        return network_of(self.address)

    @property
    def said(self) -> Player:
        """The player its HELLO names: known in every stage after the greeting."""
        if self.player is None:
            raise LocalTableError(f"{self.name} has not said who it is")
        return self.player


class Lobby:
    """The host's door; see the module docstring. ``me`` is the host's own player, ``seats``
    the table's size (the host included), ``nonce`` a source of fresh WELCOME nonces (OS
    randomness, from the edge). ``rejoin`` judges a REJOIN during the game: why it is refused,
    or what follows once the connection is the seat's; ``watch`` the same of a WATCH (a
    spectator, ``_gallery``)."""

    def __init__(self, me: Player, seats: int, limits: Limits, nonce: Callable[[], bytes],
                 rejoin: Callable[[Arrival, Rejoin, float], str | list[Action]],
                 watch: Callable[[Arrival, Watch, float], str | list[Action]]) -> None:
        self.me = me
        self.seats = seats
        self.limits = limits
        self._nonce = nonce
        self._rejoin = rejoin
        self._watch = watch
        self.phase = Phase.SEATING
        self.game: bytes | None = None  # the game under way's id (WELCOME says it)
        self.players: tuple[Player, ...] = ()  # who START seats, once the game is under way
        self.arrivals: dict[ConnId, Arrival] = {}
        self.seated: list[Arrival] = []  # in seat order: seat 1 first
        self.decided: dict[bytes, bool] = {}  # our answers about keys, given once for this table
        self._refused = 0  # connections refused for too many handshakes
        self._evicted = 0  # connections that made room for newer ones
        self._news_at = 0.0  # when every joiner was last told how the table stands
        self._shown: list[str] = []  # what our person was last told of it

    @property
    def taken(self) -> int | None:
        """Seats taken, ours included, while the table seats newcomers; None once it does not
        (START is made or sent, or the table is closed): what an announcement of it says."""
        return 1 + len(self.seated) if self.phase is Phase.SEATING else None

    # -- events --------------------------------------------------------------------------------

    def opened(self, conn: ConnId, address: str, where: str, now: float) -> list[Action]:
        """A new connection: admitted into the greeting stage, making room if it must (the
        module docstring), or refused at once."""
        arrival = Arrival(conn, address, where, Stage.GREETING, now)
        out: list[Action] = []
        reason = "this table is closed" if self.phase is Phase.CLOSED else None
        limits = self.limits
        for most, network, why in ((limits.pending_per_network, arrival.network, _CROWDED_NETWORK),
                                   (limits.pending, None, _CROWDED)):
            if reason is not None:
                break
            crowd = [a for a in self.arrivals.values()
                     if a.stage in _PENDING and (network is None or a.network == network)]
            if len(crowd) < most:
                continue
            unknown = [a for a in crowd if self._may_make_room(a)]
            if not unknown:
                reason = why
                continue
            oldest = min(unknown, key=lambda a: a.since)
            self._evicted += 1
            if self._evicted & (self._evicted - 1) == 0:  # a flood is reported at the 1st, 2nd, 4th, 8th...
                out.append(Report(f"Dropped {oldest.name} to make room for a newer connection: {why} "
                                  f"({self._evicted} so far)"))
            out += self._leave(oldest, why, REFUSE_AT_ONCE)
        self.arrivals[conn] = arrival
        if reason is None:
            return out
        self._refused += 1
        if self._refused & (self._refused - 1) == 0:
            out.append(Report(f"Refused {arrival.name}: {reason} ({self._refused} refused so far)"))
        return out + self._leave(arrival, reason, REFUSE_AT_ONCE)

    def _may_make_room(self, arrival: Arrival) -> bool:
        """Whether ``arrival`` may be dropped for a newcomer: it has not said who it is, or,
        during the game, it is nobody seated. Our own person's question (VETTING) stays."""
        if arrival.stage is Stage.GREETING:
            return True
        seated = self.phase is Phase.PLAYING and arrival.said.key in {p.key for p in self.players[1:]}
        return arrival.stage is Stage.WELCOMED and not seated

    def received(self, conn: ConnId, payload: bytes, now: float) -> list[Action]:
        arrival = self.arrivals[conn]
        if arrival.stage is Stage.LEAVING:
            return []
        try:
            frame = read_from_joiner(payload)
        except FrameError as error:
            return self._refuse(arrival, f"not a p2pwhist {_EXPECTED[arrival.stage].removeprefix('a ')}: {error}")
        if self.phase is Phase.STARTING and arrival.stage is Stage.SEATED:
            return []  # START is being made this very moment: nothing a seated joiner says changes it
        accepted = _ACCEPTS.get((self.phase, arrival.stage), frozenset())
        if type(frame) not in accepted:
            if arrival.stage in (Stage.VETTING, Stage.SEATED):
                why = "spoke before the game began" if arrival.stage is Stage.SEATED else "spoke while we decided"
                return self._unseat(arrival, why, now)
            return self._refuse(arrival, self._unexpected(arrival, frame))
        handler = _HANDLERS[type(frame)]
        return handler(self, arrival, frame, now)

    def lost(self, conn: ConnId, reason: str, bad: bool, now: float) -> list[Action]:
        """``conn`` is gone; ``bad``: it sent bytes that make no frame we take (``reason``)."""
        arrival = self.arrivals.get(conn)
        if arrival is None or arrival.stage is Stage.LEAVING:
            self.arrivals.pop(conn, None)
            return []
        if arrival.stage in (Stage.SEATED, Stage.VETTING):
            return self._unseat(arrival, "left before the game began", now, close=False)
        self._forget(arrival)
        if bad:
            return [Report(f"Dropped {arrival.name}: it {reason}")]
        # One that said who it is gets a line; a nameless connection (a flood) does not.
        checking = self.phase is Phase.SEATING and arrival.stage is Stage.WELCOMED  # perhaps they refused it
        when = ", while checking your key" if checking else ""
        return [Report(f"{arrival.name} left before sitting down{when} ({reason})")] if arrival.player else []

    def vetted(self, key: bytes, trusted: bool, judgement: KeyJudgement | None, now: float) -> list[Action]:
        """Our answer about a key: the joiners vetting with it are seated, or refused."""
        self.decided[key] = trusted
        why = judgement.refusal(self.me.name) if judgement else \
            f"{self.me.name} did not accept your key {fingerprint(key)}"
        out: list[Action] = []
        for arrival in [a for a in self.arrivals.values() if a.stage is Stage.VETTING and a.said.key == key]:
            out += self._seat(arrival, now) if trusted else self._refuse(arrival, why)
        return out

    def tick(self, now: float) -> list[Action]:
        out: list[Action] = []
        limits = self.limits
        for arrival in list(self.arrivals.values()):
            if now < self._deadline_of(arrival):
                continue
            if arrival.stage is Stage.GREETING:
                out += self._drop(arrival, f"no HELLO within {limits.hello:g} s")
            elif arrival.stage is Stage.WELCOMED:
                out += self._drop(arrival, "no answer to our WELCOME in time")
            elif arrival.stage is Stage.VETTING:
                out += self._refuse(arrival, f"{self.me.name} did not decide whether to play with you within "
                                             f"{clock(limits.trust)}")
            elif arrival.stage is Stage.SEATED:
                about = self._undecided_by(arrival)
                out += self._unseat(arrival, f"did not say within {clock(limits.trust)} whether it plays with "
                                             f"{about[0].name}", now)
        if self.phase is Phase.SEATING and now >= self._news_at + limits.news_every:
            out += self._news(now)
        return out

    @property
    def deadline(self) -> float | None:
        times = [self._deadline_of(arrival) for arrival in self.arrivals.values()]
        told = (Stage.VETTING, Stage.SEATED)
        if self.phase is Phase.SEATING and any(a.stage in told for a in self.arrivals.values()):
            times.append(self._news_at + self.limits.news_every)
        finite = [t for t in times if t != float("inf")]
        return min(finite) if finite else None

    def frame_limit(self, conn: ConnId) -> int | None:
        """The largest frame we read on ``conn``; None: read nothing more (it is leaving)."""
        arrival = self.arrivals.get(conn)
        return None if arrival is None or arrival.stage is Stage.LEAVING else HANDSHAKE_FRAME

    def begun(self, game: bytes, players: tuple[Player, ...]) -> list[ConnId]:
        """START has been made (or a game of ours is taken up again): the seated joiners'
        connections now carry the game (returned in seat order), and a HELLO from now on is a
        joiner returning."""
        if self.phase not in (Phase.STARTING, Phase.SEATING) or self.seated and self.phase is Phase.SEATING:
            raise LocalTableError(f"a game begins after Begin, not while the table is {self.phase.value}")
        self.phase, self.game, self.players = Phase.PLAYING, game, players
        conns = [arrival.conn for arrival in self.seated]
        for conn in conns:
            del self.arrivals[conn]
        self.seated = []
        return conns

    def close(self) -> list[Action]:
        """The table is over or failed: refuse everyone still at the door."""
        self.phase = Phase.CLOSED
        out: list[Action] = []
        for arrival in list(self.arrivals.values()):
            if arrival.stage is not Stage.LEAVING:
                out += self._leave(arrival, "this table is closed", REFUSE_WITHIN)
        return out

    def refuse_all(self, reason: str) -> list[Action]:
        """START could not be made: every seated joiner is told why, and the table closes."""
        self.phase = Phase.CLOSED
        out: list[Action] = []
        for arrival in list(self.arrivals.values()):
            if arrival.stage is not Stage.LEAVING:
                out += self._leave(arrival, reason, REFUSE_WITHIN)
        self.seated = []
        return out

    # -- what each frame does (``_ACCEPTS`` says when it may come) -------------------------------

    def _hello(self, arrival: Arrival, hello: Hello, now: float) -> list[Action]:
        player = hello.player
        arrival.player = player
        if hello.version != PROTOCOL_VERSION:
            return self._refuse(arrival, f"you speak protocol version {hello.version}; this host speaks version "
                                         f"{PROTOCOL_VERSION} (both sides need a p2pwhist of one protocol version)")
        out: list[Action] = []
        if self.phase is Phase.PLAYING:
            if player.key not in [p.key for p in self.players[1:]]:
                return self._refuse(arrival, "the table is full: a game is under way")
            for older in [a for a in self.arrivals.values() if a is not arrival and a.stage is Stage.WELCOMED
                          and a.said.key == player.key]:  # the newest HELLO for a seat goes on
                out += self._leave(older, "a newer connection came for this seat", REFUSE_AT_ONCE)
        refusal = self._refusal(arrival) if self.phase is Phase.SEATING else None
        if refusal is not None:
            return self._refuse(arrival, refusal)
        # Our identity, for the joiner to check before it sits down: one that refuses us leaves
        # now, and never holds up or ends the table. The nonce is for one returning.
        arrival.nonce = self._nonce()
        arrival.stage, arrival.since = Stage.WELCOMED, now
        welcome = Welcome(PROTOCOL_VERSION, self.me.name, self.me.key, arrival.nonce, self.game)
        if self.phase is Phase.SEATING:  # our person would otherwise hear nothing while they decide
            out.append(Report(f"{arrival.name} is at the door, checking your key before sitting down"))
        return out + [Send(arrival.conn, encode(welcome))]

    def _ready(self, arrival: Arrival, _: Ready, now: float) -> list[Action]:
        refusal = self._refusal(arrival)
        if refusal is not None:
            return self._refuse(arrival, refusal)
        arrival.stage, arrival.since = Stage.VETTING, now
        key = arrival.said.key
        if key in self.decided:  # asked already at this table: the answer stands
            return self.vetted(key, self.decided[key], None, now)
        out: list[Action] = [Vet(arrival.said.name, key)]
        return out + self._tell(arrival)

    def _vouch(self, arrival: Arrival, vouch: Vouch, now: float) -> list[Action]:
        if arrival.stage is Stage.WELCOMED:
            return self._not_accepted(arrival, vouch)
        others = {other.said.key: other for other in self.seated if other is not arrival}
        about = others.get(vouch.key)
        if about is None:
            return []  # about a player who has left meanwhile: nothing to do
        arrival.vouched[vouch.key] = vouch.trust
        if vouch.trust:
            return self._news(now) + self._start_if_ready()
        line = f"{arrival.name} did not accept {about.name}; {about.name} leaves the table"
        out: list[Action] = [Report(line)]
        out += self._leave(about, f"{arrival.name} did not accept you at this table (your key "
                                  f"{fingerprint(about.said.key)})", REFUSE_WITHIN)
        return out + self._news(now)

    def _not_accepted(self, arrival: Arrival, vouch: Vouch) -> list[Action]:
        """A joiner at the door that does not accept our key, as it says before it hangs up
        (wire.md §2.1): our person hears it, with the fingerprint to compare by another way."""
        if vouch.key != self.me.key or vouch.trust:
            return self._refuse(arrival, self._unexpected(arrival, vouch))
        return self._hang_up(arrival, f"{arrival.name} did not accept your key {fingerprint(self.me.key)}, and does "
                                      "not sit down")

    def _returning(self, arrival: Arrival, rejoin: Rejoin, now: float) -> list[Action]:
        return self._handed_over(arrival, self._rejoin(arrival, rejoin, now))

    def _watching(self, arrival: Arrival, watch: Watch, now: float) -> list[Action]:
        return self._handed_over(arrival, self._watch(arrival, watch, now))

    def _handed_over(self, arrival: Arrival, taken: str | list[Action]) -> list[Action]:
        """The host machine's answer about a connection leaving the door for the game (a seat's
        return, a spectator): why it is refused, or what follows now that it is the game's."""
        if isinstance(taken, str):
            return self._refuse(arrival, taken)
        del self.arrivals[arrival.conn]  # the game's now: its handshake slot is free
        return taken

    # -- seating -------------------------------------------------------------------------------

    def _refusal(self, arrival: Arrival) -> str | None:
        """Why ``arrival`` cannot sit down now, if it cannot."""
        player = arrival.said
        others = [a for a in self.arrivals.values() if a is not arrival and a.stage in (Stage.VETTING, Stage.SEATED)]
        if self.phase is not Phase.SEATING or len(self.seated) >= self.seats - 1:
            return "the table is full"
        if player.name == self.me.name or any(a.said.name == player.name for a in others):
            return f"the name {player.name!r} is taken at this table (join again with another --name)"
        if player.key == self.me.key or any(a.said.key == player.key for a in others):
            return "that key is already seated at this table"
        return None

    def _seat(self, arrival: Arrival, now: float) -> list[Action]:
        refusal = self._refusal(arrival)  # again: the table may have filled while we decided
        if refusal is not None:
            return self._refuse(arrival, refusal)
        player = arrival.said
        refuser = next((other for other in self.seated if other.vouched.get(player.key) is False), None)
        if refuser is not None:
            return self._refuse(arrival, f"{refuser.name} did not accept you at this table (your key "
                                         f"{fingerprint(player.key)})")
        arrival.stage, arrival.since = Stage.SEATED, now
        self.seated.append(arrival)
        line = f"{player.name} joined (key {fingerprint(player.key)}); {len(self.seated) + 1}/{self.seats} seated"
        return [Report(line)] + self._news(now) + self._start_if_ready()

    def _unseat(self, arrival: Arrival, why: str, now: float, close: bool = True) -> list[Action]:
        """A joiner who held a seat, or waited for one, has gone: its seat is free again."""
        out: list[Action] = []
        if arrival.stage is Stage.VETTING:  # the question to our person goes, with this line
            out.append(Unvet(arrival.said.key, f"{arrival.name} {why}; no need to answer about them"))
        else:
            out.append(Report(f"{arrival.name} {why}; its seat is free again"))
        if close:
            out += self._leave(arrival, why, 0.0)
        else:
            self._forget(arrival)
        return out + self._news(now)

    def _start_if_ready(self) -> list[Action]:
        """START, once every seat is taken and every seated player accepted every other."""
        if self.phase is not Phase.SEATING or len(self.seated) != self.seats - 1:
            return []
        if not all(a.vouched.get(b.said.key) is True for a in self.seated for b in self.seated if a is not b):
            return []
        self.phase = Phase.STARTING
        return [Begin((self.me, *(arrival.said for arrival in self.seated)))]

    def _undecided_by(self, arrival: Arrival) -> list[Arrival]:
        """The seated players ``arrival`` has not said it plays with (or not)."""
        return [other for other in self.seated if other is not arrival and other.said.key not in arrival.vouched]

    def _news(self, now: float) -> list[Action]:
        """Tell every joiner that said READY how the table stands, and our person what changed
        in it (what the table waits for: seats, or a player's word on another)."""
        self._news_at = now
        out: list[Action] = []
        for arrival in self.arrivals.values():
            if arrival.stage in (Stage.VETTING, Stage.SEATED):
                out += self._tell(arrival)
        if self.phase is Phase.SEATING:  # the seats were said as each joiner sat down
            lines = lobby_lines(self._standing(None), None)[1:]
            out += [Report(line) for line in lines if line not in self._shown]
            self._shown = lines
        return out

    def _tell(self, arrival: Arrival) -> list[Action]:
        seat = next((number for number, a in enumerate(self.seated, start=1) if a is arrival), None)
        return [Send(arrival.conn, encode(self._standing(seat)))]

    def _standing(self, you: int | None) -> LobbyNews:
        """How the table stands, for the joiner in seat ``you`` (None: one not yet seated)."""
        players = (self.me, *(a.said for a in self.seated))
        seat = {a.conn: number for number, a in enumerate(self.seated, start=1)}
        undecided = tuple((seat[a.conn], seat[b.conn]) for a in self.seated for b in self._undecided_by(a))
        return LobbyNews(self.seats, players, you, undecided)

    # -- leaving ------------------------------------------------------------------------------

    def _refuse(self, arrival: Arrival, reason: str) -> list[Action]:
        line = f"Refused {arrival.name}: {reason}"
        # A question to our person about it goes, with this line.
        out: list[Action] = [Unvet(arrival.said.key, line) if arrival.stage is Stage.VETTING else Report(line)]
        was_seated = arrival in self.seated
        out += self._leave(arrival, reason, REFUSE_WITHIN)
        return out + (self._news(self._news_at) if was_seated else [])

    def _drop(self, arrival: Arrival, why: str) -> list[Action]:
        """Hang up without a word: the other side does not speak p2pwhist, or has gone quiet."""
        return self._hang_up(arrival, f"Dropped {arrival.name}: {why}")

    def _hang_up(self, arrival: Arrival, line: str) -> list[Action]:
        """Say ``line`` to our person and hang up on ``arrival`` without a word."""
        self._forget(arrival)
        arrival.stage = Stage.LEAVING
        self.arrivals[arrival.conn] = arrival
        return [Report(line), Close(arrival.conn, 0.0)]

    def _leave(self, arrival: Arrival, reason: str, within: float) -> list[Action]:
        """Say ``reason`` (best effort, within ``within`` seconds), then hang up."""
        self._forget(arrival)
        arrival.stage = Stage.LEAVING
        self.arrivals[arrival.conn] = arrival
        # A refusal at the door (a flood) is not waited on: the others are parted from properly.
        if not within:
            return [Close(arrival.conn, 0.0)]
        return [Send(arrival.conn, encode(Refuse(reason[:200]))),
                Close(arrival.conn, within, part=within > REFUSE_AT_ONCE)]

    def _forget(self, arrival: Arrival) -> None:
        # The others' answers about its key stay: a joiner who comes back is not asked about
        # twice, and one refused stays refused.
        if arrival in self.seated:
            self.seated.remove(arrival)
        self.arrivals.pop(arrival.conn, None)

    # -- words and times ----------------------------------------------------------------------

    def _unexpected(self, arrival: Arrival, frame: FromJoiner) -> str:
        got = _what(frame.raw) if isinstance(frame, Logged) else f"a {type(frame).__name__.upper()}"
        if self.phase is Phase.PLAYING and isinstance(frame, Ready):
            return "a game is under way at this table"
        if self.phase is Phase.SEATING and isinstance(frame, Rejoin):
            return "this host is seating a new table, not playing the game you return to"
        expected = "a REJOIN" if self.phase is Phase.PLAYING and arrival.stage is Stage.WELCOMED \
            else _EXPECTED[arrival.stage]
        return f"not a p2pwhist {expected.removeprefix('a ')}: expected {expected}, not {got}"

    def _deadline_of(self, arrival: Arrival) -> float:
        limits = self.limits
        if arrival.stage is Stage.GREETING:
            return arrival.since + limits.hello
        if arrival.stage is Stage.WELCOMED:
            # A new joiner's person may be asked about our key; a returning one answers at once.
            return arrival.since + (limits.hello if self.phase is Phase.PLAYING else limits.trust)
        if arrival.stage is Stage.VETTING:
            return arrival.since + limits.trust
        if arrival.stage is Stage.SEATED and self._undecided_by(arrival):
            newest = max(other.since for other in self._undecided_by(arrival))
            return max(arrival.since, newest) + limits.trust
        return float("inf")


def _what(payload: bytes) -> str:
    """What a frame that is not a map is, in words: a message of the log, or something else."""
    if payload and (payload[0] & 0xF0 == 0x90 or payload[0] in (0xDC, 0xDD)):
        return "a message of the log"
    try:
        return describe(unpack(payload))
    except WireError:
        return "malformed msgpack"


_HANDLERS: dict[type, Callable[[Lobby, Arrival, object, float], list[Action]]] = {
    Hello: Lobby._hello,  # type: ignore[dict-item]
    Ready: Lobby._ready,  # type: ignore[dict-item]
    Vouch: Lobby._vouch,  # type: ignore[dict-item]
    Rejoin: Lobby._returning,  # type: ignore[dict-item]
    Watch: Lobby._watching,  # type: ignore[dict-item]
}
