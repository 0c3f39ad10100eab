"""The host's whole table as one machine: the door (``Lobby``), then the game (``Peer``) over
the seats' connections (``Relay``), then the end (DONE).

The rules it keeps, beyond those of its parts:

- While a seat's message is due, the table waits ``Limits.timeout`` for it if the seat is
  connected, and no longer than ``Limits.wait`` after its connection was lost if it is not;
  past either the seat forfeits (``Peer.absent``). Every ``Limits.notice_interval`` meanwhile,
  the others and the seat itself are told how long (NOTICE). The host's own messages are
  timed by the joiners (``_joiner``), not here.
- A frame from a seat is read only when that seat's message is due (or during the end, when
  its DONE is): until then it is held and its connection read no further (``reading``).
- Once the log is complete, every joiner that holds all of it is told DONE and must answer it
  in kind within ``Limits.hello``; one whose connection is down, or that did not answer, is
  waited for (within the wait) so that it can come back for what it lacks (wire.md §2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from p2pwhist.bodies import Player
from p2pwhist.session import HOST, Need, Session
from p2pwhist.table._actions import (
    Action,
    Begun,
    BeginFailed,
    Chosen,
    Close,
    ConnId,
    Event,
    Finish,
    Lost,
    Opened,
    Received,
    Send,
    Vetted,
)
from p2pwhist.table._errors import LocalTableError, RemoteTableError
from p2pwhist.table._frames import Done, FrameError, Logged, Notice, Presence, Rejoin, encode, read_from_joiner
from p2pwhist.table._limits import Limits
from p2pwhist.table._lobby import Arrival, Lobby
from p2pwhist.table._peer import Peer, Playing
from p2pwhist.table._relay import Relay
from p2pwhist.table._words import clock
from p2pwhist.wire import MAX_FRAME


@dataclass
class _Ending:
    """The end exchange: the seats not yet known to hold the whole log, and when each of those
    that hold it was told DONE."""

    missing: set[int]
    asked: dict[int, float] = field(default_factory=dict)


class HostMachine(Playing):
    """See the module docstring. ``me`` is the host's player (seat 0), ``seats`` the table's
    size, ``nonce`` a source of fresh 32-byte nonces (OS randomness, from the edge)."""

    def __init__(self, me: Player, seats: int, limits: Limits, nonce: Callable[[], bytes]) -> None:
        self.limits = limits
        self.lobby = Lobby(me, seats, limits, nonce, self._rejoin)
        self.relay: Relay | None = None
        self.peer: Peer | None = None
        self._over = False
        self._due: tuple[int, int | None] | None = None  # (log length, seat) of the message awaited
        self._due_since = 0.0
        self._next_notice = 0.0
        self._ending: _Ending | None = None

    @classmethod
    def returning(cls, session: Session, limits: Limits, nonce: Callable[[], bytes], now: float) -> HostMachine:
        """A host going on with an unfinished game of its own: every joiner is away, and
        returns by itself (REJOIN)."""
        players = session.table.players
        machine = cls(players[HOST], len(players), limits, nonce)
        machine.lobby.begun(session.game_id, players)
        machine._play(session, [None] * len(players), now)
        return machine

    # -- the edge's calls ---------------------------------------------------------------------

    def begin(self, now: float) -> list[Action]:
        """What a returning host does first: shows the game so far, and goes on."""
        if self.peer is None:
            raise LocalTableError("begin is for a returning host; a new table begins at START (Begun)")
        return self._settle(self.peer.begin(now), now)

    @property
    def finished(self) -> bool:
        return self._over

    def handle(self, event: Event, now: float) -> list[Action]:
        if self.finished:
            return []
        out: list[Action]
        if isinstance(event, Opened):
            out = self.lobby.opened(event.conn, event.address, event.where, now)
        elif isinstance(event, Received):
            out = self._received(event.conn, event.payload, now)
        elif isinstance(event, Lost):
            out = self._lost(event, now)
        elif isinstance(event, Vetted):
            out = self.lobby.vetted(event.key, event.trusted, event.judgement, now)
        elif isinstance(event, Chosen):
            out = self.peer.chosen(event.token, event.value, now) if self.peer else []
        elif isinstance(event, Begun):
            out = self._begun(event.session, now)
        elif isinstance(event, BeginFailed):
            return self.lobby.refuse_all(f"{self.lobby.me.name} cannot start the game: {event.error}") + \
                self._finish(event.error)
        else:
            raise LocalTableError(f"a host takes no {type(event).__name__}")
        return self._settle(out, now)

    def tick(self, now: float) -> list[Action]:
        if self.finished:
            return []
        out = self.lobby.tick(now)
        peer, relay, session = self.peer, self.relay, self.peer.session if self.peer else None
        if peer is not None and relay is not None and session is not None and peer.result is None \
                and session.need is Need.PEER and self._due is not None:
            seat = session.waiting_for
            assert seat is not None and seat != HOST
            limit_at = self._due_since + self.limits.timeout
            deadline = self._seat_deadline(seat)
            if now >= deadline:
                reason = (f"took longer than {clock(self.limits.timeout)} over one message" if deadline >= limit_at
                          else f"lost connection and did not return within {clock(self.limits.wait)}")
                out += peer.absent(seat, reason, now)
            elif now >= self._next_notice:
                self._next_notice += self.limits.notice_interval
                presence = Presence.GONE if relay.conn_of[seat] is None else Presence.SLOW
                out += relay.announce(Notice(seat, presence, round(now - self._due_since), round(deadline - now)))
        if self._ending is not None:
            out += self._end_tick(now)
        return self._settle(out, now)

    @property
    def deadline(self) -> float | None:
        if self.finished:
            return None
        times = [self.lobby.deadline]
        peer = self.peer
        if peer is not None and peer.result is None and peer.session.need is Need.PEER and self._due:
            seat = peer.session.waiting_for
            assert seat is not None
            times += [self._seat_deadline(seat), self._next_notice]
        if self._ending is not None:
            times.append(self._end_deadline())
        finite = [t for t in times if t is not None]
        return min(finite) if finite else None

    def frame_limit(self, conn: ConnId) -> int | None:
        """The largest frame we read on ``conn`` next; None: read no more of it."""
        if self.relay is not None and self.relay.seat_of(conn) is not None:
            return MAX_FRAME
        return self.lobby.frame_limit(conn)

    def reading(self, conn: ConnId) -> bool:
        """Whether to read ``conn``'s next frame now: not while one of its frames is held."""
        return self.relay is None or conn not in self.relay.held

    # -- the game -----------------------------------------------------------------------------

    def _begun(self, session: Session, now: float) -> list[Action]:
        conns = self.lobby.begun(session.game_id, session.table.players)
        peer = self._play(session, [None, *conns], now)
        assert self.relay is not None
        return [*self.relay.deliver(peer.raws), *peer.begin(now)]  # START is in our transcript already

    def _play(self, session: Session, conns: list[ConnId | None], now: float) -> Peer:
        names = [p.name for p in session.table.players]
        self.relay = Relay(conns, names, now)
        self.peer = Peer(session, self.relay, now)
        return self.peer

    def _received(self, conn: ConnId, payload: bytes, now: float) -> list[Action]:
        relay, peer = self.relay, self.peer
        seat = relay.seat_of(conn) if relay is not None else None
        if seat is None:
            return self.lobby.received(conn, payload, now) if conn in self.lobby.arrivals else []
        assert relay is not None and peer is not None
        if self._ending is not None:
            return self._answered(seat, conn, payload, now)
        session = peer.session
        if peer.result is not None:
            return []
        if peer.busy or session.need is not Need.PEER or session.waiting_for != seat:
            relay.hold(conn, payload)
            return []
        return self._from_seat(seat, payload, now)

    def _from_seat(self, seat: int, payload: bytes, now: float) -> list[Action]:
        peer = self.peer
        assert peer is not None
        try:
            frame = read_from_joiner(payload)
        except FrameError as error:
            frame = None
            why = f"sent a bad frame: {error}"
        else:
            why = f"sent a {type(frame).__name__.upper()} during the game"
        if not isinstance(frame, Logged):
            name = f"{peer.names[seat]} (seat {seat})"
            return peer.stop(RemoteTableError(f"{name} {why}", seat))
        return peer.take(frame.raw, seat, now)

    def _lost(self, lost: Lost, now: float) -> list[Action]:
        relay, peer = self.relay, self.peer
        seat = relay.lost(lost.conn, now) if relay is not None else None
        if seat is None:
            return self.lobby.lost(lost.conn, lost.reason, lost.bad, now)
        assert peer is not None and relay is not None
        if lost.bad and peer.result is None:  # bytes that are no frame, over its connection
            return peer.stop(RemoteTableError(f"{peer.names[seat]} (seat {seat}) {lost.reason}", seat))
        out: list[Action] = []
        if self._ending is not None:
            self._ending.asked.pop(seat, None)
        session = peer.session
        if peer.result is None and session.leaver is None and session.waiting_for is not None:
            out += relay.announce(relay.gone(seat, self.limits.wait))
        return out

    def _rejoin(self, arrival: Arrival, rejoin: Rejoin, now: float) -> str | list[Action]:
        relay, peer = self.relay, self.peer
        assert relay is not None and peer is not None and arrival.player is not None
        refusal = relay.rejoin_refusal(peer.session, arrival.player.key, rejoin, arrival.nonce, peer.raws)
        if refusal is not None:
            return refusal
        seat = rejoin.seat
        out = relay.take_back(seat, arrival.conn, rejoin.have, peer.raws)
        out += relay.announce(Notice(seat, Presence.BACK, 0, 0))
        if self._ending is not None and seat in self._ending.missing:
            out += self._ask_done(seat, now)
        return out

    def _seat_deadline(self, seat: int) -> float:
        assert self.relay is not None
        limit_at = self._due_since + self.limits.timeout
        if self.relay.conn_of[seat] is not None:
            return limit_at
        return min(limit_at, self.relay.lost_at[seat] + self.limits.wait)

    def _settle(self, out: list[Action], now: float) -> list[Action]:
        """After anything: take a held frame whose seat is now due, restart the clock of a new
        wait, and move on to the end once the game is over."""
        peer, relay = self.peer, self.relay
        while peer is not None and relay is not None and peer.result is None and self._ending is None \
                and not peer.busy:
            session = peer.session
            due = (len(session.log), session.waiting_for) if session.need is Need.PEER else None
            if due != self._due:
                self._due, self._due_since = due, now
                self._next_notice = now + self.limits.notice_interval
            seat = session.waiting_for
            conn = relay.conn_of[seat] if due is not None and seat is not None else None
            if conn is None or conn not in relay.held:
                break
            out += self._from_seat(seat, relay.held.pop(conn), now)  # type: ignore[arg-type]
        if peer is not None and peer.result is not None and self._ending is None and not self.finished:
            session = peer.session
            if session.error is None and session.waiting_for is None:
                leaver = session.leaver
                seats = range(1, len(session.table.players))
                self._ending = _Ending({seat for seat in seats if leaver is None or seat != leaver.seat})
                for seat in sorted(self._ending.missing):
                    out += self._ask_done(seat, now)
                out += self._end_tick(now)
            else:
                out += self._finish(peer.result)
        return out

    # -- the end ------------------------------------------------------------------------------

    def _ask_done(self, seat: int, now: float) -> list[Action]:
        relay, ending, peer = self.relay, self._ending, self.peer
        assert relay is not None and ending is not None and peer is not None
        conn = relay.conn_of[seat]
        if conn is None or relay.delivered.get(conn) != len(peer.raws):
            return []
        ending.asked[seat] = now
        return [Send(conn, encode(Done(len(peer.raws))))]

    def _answered(self, seat: int, conn: ConnId, payload: bytes, now: float) -> list[Action]:
        """A joiner's answer to DONE: the same DONE, or it is treated as gone (it may return)."""
        ending, peer, relay = self._ending, self.peer, self.relay
        assert ending is not None and peer is not None and relay is not None
        if seat not in ending.asked:
            return []
        try:
            frame = read_from_joiner(payload)
        except FrameError:
            frame = None
        if frame == Done(len(peer.raws)):
            ending.missing.discard(seat)
            del ending.asked[seat]
            return self._end_tick(now)
        relay.lost(conn, now)
        del ending.asked[seat]
        return [Close(conn, 0.0), *self._end_tick(now)]

    def _end_deadline(self) -> float:
        ending, relay = self._ending, self.relay
        assert ending is not None and relay is not None
        times = [asked + self.limits.hello for asked in ending.asked.values()]
        away = [relay.lost_at[seat] for seat in ending.missing if seat not in ending.asked and seat in relay.lost_at]
        if away:
            times.append(max(away) + self.limits.wait)
        return min(times) if times else 0.0

    def _end_tick(self, now: float) -> list[Action]:
        ending, relay, peer = self._ending, self.relay, self.peer
        assert ending is not None and relay is not None and peer is not None
        out: list[Action] = []
        for seat, asked in list(ending.asked.items()):
            if now >= asked + self.limits.hello:  # no answer: as for a connection down, it may return
                conn = relay.conn_of[seat]
                del ending.asked[seat]
                if conn is not None:
                    relay.lost(conn, now)
                    out.append(Close(conn, 0.0))
        waiting = [seat for seat in ending.missing if seat in ending.asked or seat not in relay.lost_at
                   or now < relay.lost_at[seat] + self.limits.wait]
        if not waiting:  # done, or they did not come back: their transcripts stay a few messages short
            assert peer.result is not None
            out += self._finish(peer.result)
        return out

    def _finish(self, result) -> list[Action]:
        self._over = True
        out = self.lobby.close()
        if self.relay is not None:
            out += [Close(conn, 2.0, part=True) for conn in self.relay.conn_of if conn is not None]
        return out + [Finish(result)]
