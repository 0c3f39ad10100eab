"""The host's whole table as one machine: the door (``Lobby``), then the game (``Peer``) over
the seats' connections (``Relay``), then the end (DONE).

The rules it keeps, beyond those of its parts:

- While a seat's message is due, the table waits ``Limits.timeout`` for it if the seat is
  connected, and no longer than ``Limits.wait`` after its connection was lost if it is not;
  past either the seat forfeits (``Peer.absent``). Every ``Limits.notice_interval`` meanwhile,
  the others and the seat itself are told how long (NOTICE). The host's own messages are
  timed by the joiners (``_joiner``), not here.
- A frame from a seat is read only when that seat's message is due (or during the end, when
  its DONE is): until then it is held and its connection read no further (``reading``). A
  CHAT is the exception: table talk is taken whenever it comes, checked, and passed on or
  dropped at once (``_chat``), never held.
- Once the log is complete, every joiner that holds all of it is told DONE and must answer it
  in kind within ``Limits.hello``; one whose connection is down, or that did not answer, is
  waited for (within the wait) so that it can come back for what it lacks (wire.md §2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from p2pwhist.bodies import Player
from p2pwhist.session import HOST, Session
from p2pwhist.table._actions import (
    Action,
    BeginFailed,
    Begun,
    Chosen,
    Close,
    ConnId,
    Event,
    Finish,
    Lost,
    Opened,
    Received,
    Report,
    Say,
    Send,
    Vetted,
)
from p2pwhist.table._chat import Talk, relay_chat
from p2pwhist.table._errors import LocalTableError
from p2pwhist.table._frames import (
    Chat,
    Done,
    FrameError,
    FromJoiner,
    Logged,
    Notice,
    Presence,
    Rejoin,
    Watch,
    encode,
    read_from_joiner,
)
from p2pwhist.table._gallery import Gallery
from p2pwhist.table._limits import HANDSHAKE_FRAME, Limits
from p2pwhist.table._lobby import Arrival, Lobby
from p2pwhist.table._peer import Peer, Playing
from p2pwhist.table._relay import Relay
from p2pwhist.text import clock
from p2pwhist.wire import MAX_FRAME


@dataclass
class _Ending:
    """The end exchange: the seats not yet known to hold the whole log, when each of those that
    hold it was told DONE, how often each came back, and when the exchange ends, answered or
    not (``until``: the wait, from the log's completion, whatever happens meanwhile)."""

    missing: set[int]
    until: float
    asked: dict[int, float] = field(default_factory=dict)
    returns: dict[int, int] = field(default_factory=dict)


class HostMachine(Playing):
    """See the module docstring. ``me`` is the host's player (seat 0), ``seats`` the table's
    size, ``nonce`` a source of fresh 32-byte nonces (OS randomness, from the edge)."""

    def __init__(self, me: Player, seats: int, limits: Limits, nonce: Callable[[], bytes]) -> None:
        self.limits = limits
        self.lobby = Lobby(me, seats, limits, nonce, self._rejoin, self._watch)
        self.gallery = Gallery(limits)
        self.relay: Relay | None = None
        self.peer: Peer | None = None
        self.talk: Talk | None = None  # the table's talk, once the game is under way
        self._over = False
        self._noticed: tuple[int, int] | None = None  # the wait (``Peer.due``) the notices are for
        self._next_notice = 0.0
        self._ending: _Ending | None = None
        self._returns: dict[int, list[float]] = {}  # when each seat came back, within ``Limits.returns_within``

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
        elif isinstance(event, Say):
            out = self._say(event, now)
        else:
            raise LocalTableError(f"a host takes no {type(event).__name__}")
        return self._settle(out, now)

    def tick(self, now: float) -> list[Action]:
        if self.finished:
            return []
        out = self.lobby.tick(now)
        peer, relay = self.peer, self.relay
        if peer is not None and relay is not None and peer.result is None and peer.due is not None:
            out += peer.tick(now)
            seat = peer.due[1]
            limits = peer.limits
            limit_at = peer.due_since + limits.timeout
            deadline = self._seat_deadline(seat)
            if now >= deadline:
                reason = (f"took longer than {clock(limits.timeout)} over one message" if deadline >= limit_at
                          else f"lost connection and did not return within {clock(limits.wait)}")
                out += peer.absent(seat, reason, now)
            elif now >= self._next_notice:
                self._next_notice += limits.notice_interval
                presence = Presence.GONE if relay.conn_of[seat] is None else Presence.SLOW
                out += self._told(relay.announce(Notice(seat, presence, round(now - peer.due_since),
                                                        round(deadline - now))))
        if self._ending is not None:
            out += self._end_tick(now)
        return self._settle(out, now)

    @property
    def deadline(self) -> float | None:
        if self.finished:
            return None
        times = [self.lobby.deadline]
        peer = self.peer
        if peer is not None and peer.result is None and peer.due is not None:
            times += [self._seat_deadline(peer.due[1]), self._next_notice, peer.deadline]
        if self._ending is not None:
            times.append(self._end_deadline())
        times.append(self.gallery.deadline)
        finite = [t for t in times if t is not None]
        return min(finite) if finite else None

    def frame_limit(self, conn: ConnId) -> int | None:
        """The largest frame we read on ``conn`` next; None: read no more of it."""
        if conn in self.gallery:  # a spectator says nothing: read only to hear it go, or speak
            return HANDSHAKE_FRAME
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
        self.peer = Peer(session, self, now, self.limits)
        self.talk = Talk(session.game_id, session.table.players, session.seat, session.signer)
        return self.peer

    # -- the peer's transport: the relay, and a seat's connection dropped ------------------------

    def deliver(self, raws: list[bytes]) -> list[Action]:
        assert self.relay is not None
        return self.relay.deliver(raws)

    def received(self, via: int, length: int) -> None:
        assert self.relay is not None
        self.relay.received(via, length)

    def drop(self, via: int, why: str, now: float) -> list[Action]:
        """A seat's connection carried what proves nothing: dropped; the seat may return."""
        relay, peer = self.relay, self.peer
        assert relay is not None and peer is not None
        conn = relay.conn_of[via] if via < len(relay.conn_of) else None
        if conn is None:
            return []
        out: list[Action] = [Report(f"Dropped {peer.names[via]}'s connection: {why}"), Close(conn, 0.0)]
        return out + self._lost(Lost(conn, why), now)

    def _received(self, conn: ConnId, payload: bytes, now: float) -> list[Action]:
        if conn in self.gallery:
            return self.gallery.spoke(conn)
        relay, peer = self.relay, self.peer
        seat = relay.seat_of(conn) if relay is not None else None
        if seat is None:
            return self.lobby.received(conn, payload, now) if conn in self.lobby.arrivals else []
        assert relay is not None and peer is not None
        frame: FromJoiner | FrameError
        try:
            frame = read_from_joiner(payload)
        except FrameError as error:  # judged where a frame from this seat is judged, as any other
            frame = error
        if isinstance(frame, Chat):  # talk is taken whenever it comes, and never waits behind the game
            return self._heard(seat, frame, now)
        if self._ending is not None:
            return self._answered(seat, conn, frame, now)
        if peer.result is not None:
            return []
        if peer.busy or peer.due is None or peer.due[1] != seat:
            relay.hold(conn, frame)
            return []
        return self._from_seat(seat, frame, now)

    def _from_seat(self, seat: int, frame: FromJoiner | FrameError, now: float) -> list[Action]:
        peer = self.peer
        assert peer is not None
        if isinstance(frame, FrameError):  # bytes that prove nothing: the connection goes, the seat may return
            return self.drop(seat, f"it sent a bad frame: {frame}", now)
        if not isinstance(frame, Logged):
            return self.drop(seat, f"it sent a {type(frame).__name__.upper()} during the game", now)
        return peer.take(frame.raw, seat, now)

    def _lost(self, lost: Lost, now: float) -> list[Action]:
        if lost.conn in self.gallery:
            return self.gallery.lost(lost.conn, lost.reason)
        relay, peer = self.relay, self.peer
        seat = relay.lost(lost.conn, now) if relay is not None else None
        if seat is None:
            return self.lobby.lost(lost.conn, lost.reason, lost.bad, now)
        assert peer is not None and relay is not None
        out: list[Action] = [Report(f"Dropped {peer.names[seat]}'s connection: it {lost.reason}")] if lost.bad else []
        if self._ending is not None:
            self._ending.asked.pop(seat, None)
        session = peer.session
        if peer.result is None and session.leaver is None and session.waiting_for is not None:
            out += self._told(relay.announce_gone(seat, peer.limits.wait))
        return out

    def _rejoin(self, arrival: Arrival, rejoin: Rejoin, now: float) -> str | list[Action]:
        relay, peer, ending = self.relay, self.peer, self._ending
        assert relay is not None and peer is not None and arrival.player is not None
        refusal = relay.rejoin_refusal(peer.session, arrival.player.key, rejoin, arrival.nonce, peer.raws)
        if refusal is not None:
            return refusal
        seat, limits = rejoin.seat, self.limits
        # Only the seat itself gets here (it proved its key): these bound what it makes us do.
        returns = [at for at in self._returns.get(seat, []) if at > now - limits.returns_within]
        if len(returns) >= limits.returns:
            return (f"{peer.names[seat]} came back {len(returns)} times within {clock(limits.returns_within)}; "
                    "try again shortly")
        if ending is not None:
            ending.returns[seat] = ending.returns.get(seat, 0) + 1
            if ending.returns[seat] > limits.returns_at_the_end:
                return "the match is over, and you came back for its last messages often enough"
        self._returns[seat] = [*returns, now]
        out = relay.take_back(seat, arrival.conn, rejoin.have, peer.raws)
        out += self._told(relay.announce_back(seat))
        if ending is not None and seat in ending.missing:
            out += self._ask_done(seat, now)
        return out

    def _seat_deadline(self, seat: int) -> float:
        """When ``seat``, whose message is due, forfeits: past the limit for a move, or, while
        it is away, the wait counted from when its message became due or it left, whichever is
        later (so no seat that co-signs the forfeit has waited less than the shorter limit)."""
        relay, peer = self.relay, self.peer
        assert relay is not None and peer is not None
        limits = peer.limits
        limit_at = peer.due_since + limits.timeout
        if relay.conn_of[seat] is not None:
            return limit_at
        return min(limit_at, max(peer.due_since, relay.lost_at[seat]) + limits.wait)

    def send_timeout(self, conn: ConnId, otherwise: float) -> float:
        """How long a frame queued for ``conn`` may take to leave before the connection is lost:
        a spectator's is short (``Limits.spectator_send``): the table never waits for one."""
        return self.limits.spectator_send if conn in self.gallery else otherwise

    def _watch(self, arrival: Arrival, watch: Watch, now: float) -> str | list[Action]:
        return self.gallery.admit(arrival.conn, arrival.where, watch, self.peer.raws if self.peer else [], now)

    def _settle(self, out: list[Action], now: float) -> list[Action]:
        """After anything: take a held frame whose seat is now due, restart the clock of a new
        wait, and move on to the end once the game is over; the spectators follow the log."""
        peer, relay = self.peer, self.relay
        while peer is not None and relay is not None and peer.result is None and self._ending is None \
                and not peer.busy:
            peer.settle(now)
            if peer.due != self._noticed:
                self._noticed, self._next_notice = peer.due, now + peer.limits.notice_interval
            conn = relay.conn_of[peer.due[1]] if peer.due is not None else None
            if conn is None or conn not in relay.held:
                break
            out += self._from_seat(peer.due[1], relay.held.pop(conn), now)  # type: ignore[index]
        if peer is not None and peer.result is not None and self._ending is None and not self.finished:
            session = peer.session
            if session.error is None and session.waiting_for is None:
                leaver = session.leaver
                seats = range(1, len(session.table.players))
                self._ending = _Ending({seat for seat in seats if leaver is None or seat != leaver.seat},
                                       now + peer.limits.wait)
                for seat in sorted(self._ending.missing):
                    out += self._ask_done(seat, now)
                out += self._end_tick(now)
            else:
                out += self._finish(peer.result)
        if peer is not None and not self.finished:
            out += self.gallery.follow(peer.raws, now)
        return out

    # -- table talk (``_chat``) ------------------------------------------------------------------

    def _say(self, say: Say, now: float) -> list[Action]:
        """Our person's line, to every seat, or a line saying why it was not said."""
        if self.talk is None:
            return [Report("Not said: the table talks once the game has begun.")]
        chat = self.talk.say(say.text, say.clock_ms, now)
        if isinstance(chat, str):
            return [Report(f"Not said: {chat}.")]
        return [self.talk.heard(chat), *self._pass_chat(chat)]

    def _heard(self, seat: int, chat: Chat, now: float) -> list[Action]:
        """A line from ``seat``: for our person and passed on, or dropped quietly (``Talk.take``)."""
        assert self.talk is not None
        heard = self.talk.take(chat, now, via=seat)
        return [] if heard is None else [heard, *self._pass_chat(chat)]

    def _told(self, news: list[Action]) -> list[Action]:
        """The table's news of a seat's connection (``Relay.announce``), for the spectators too."""
        notices = [action.notice for action in news if isinstance(action, Report) and action.notice is not None]
        return news + [send for notice in notices for send in self.gallery.news(notice)]

    def _pass_chat(self, chat: Chat) -> list[Action]:
        """A line the host took or said, to every connection that reads the table's talk but
        the one that said it: the one place the host passes talk on. Spectators hear it too,
        unless they watch with a delay: a line said now could speak of moves they see later."""
        assert self.relay is not None
        spectators = list(self.gallery.watching) if not self.gallery.delay else []
        return relay_chat(chat, [conn for seat, conn in enumerate(self.relay.conn_of)
                                 if conn is not None and seat != chat.seat] + spectators)

    # -- the end ------------------------------------------------------------------------------

    def _ask_done(self, seat: int, now: float) -> list[Action]:
        relay, ending, peer = self.relay, self._ending, self.peer
        assert relay is not None and ending is not None and peer is not None
        conn = relay.conn_of[seat]
        if conn is None or relay.delivered.get(conn) != len(peer.raws):
            return []
        ending.asked[seat] = now
        return [Send(conn, encode(Done(len(peer.raws))))]

    def _answered(self, seat: int, conn: ConnId, frame: FromJoiner | FrameError, now: float) -> list[Action]:
        """A joiner's answer to DONE: the same DONE, or it is treated as gone (it may return)."""
        ending, peer, relay = self._ending, self.peer, self.relay
        assert ending is not None and peer is not None and relay is not None
        if seat not in ending.asked:
            return []
        if frame == Done(len(peer.raws)):
            ending.missing.discard(seat)
            del ending.asked[seat]
            return self._end_tick(now)
        relay.lost(conn, now)
        del ending.asked[seat]
        return [Close(conn, 0.0), *self._end_tick(now)]

    def _end_deadline(self) -> float:
        ending = self._ending
        assert ending is not None
        return min([ending.until, *(asked + self.limits.hello for asked in ending.asked.values())])

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
        if not ending.missing or now >= ending.until:  # done, or the time is up: a transcript stays a message short
            assert peer.result is not None
            out += self._finish(peer.result)
        return out

    def _finish(self, result) -> list[Action]:
        self._over = True
        out = self.gallery.finish(self.peer.raws if self.peer else []) + self.lobby.close()
        if self.relay is not None:
            out += [Close(conn, 2.0, part=True) for conn in self.relay.conn_of if conn is not None]
        return out + [Finish(result)]
