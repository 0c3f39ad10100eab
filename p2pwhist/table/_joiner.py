"""A joiner's whole table as one machine: its arrival at a host, the game over its one
connection to the host (``Peer``), its returns when that connection drops, and the end.

The steps (``Step``) and what each takes from the host (``_ACCEPTS``):

- GREETING: we said HELLO; a WELCOME (or a REFUSE) is due within ``Limits.hello``. Anything
  else, or silence, means the other side does not speak p2pwhist, and we say so in one line.
  A WELCOME names the game the host is playing, if any: one of our unfinished games is taken
  up again (REJOIN); a new table is joined.
- VETTING: we decide whether to play with the host (``--expect``, our known peers, our person:
  as long as they need). Refused, we leave; nobody lost a seat.
- WAITING: we said READY. The host tells us how the table stands (LOBBY), and we say whether
  we play with each other seated player (VOUCH), asking our person where the key is new. A
  host that says nothing for ``Limits.silence`` is gone. START comes once everyone agrees.
- REJOINING: we said REJOIN; RESUMED is due within ``Limits.hello``, then what we lack.
- PLAYING: the game: messages of the log, and the host's NOTICEs and DONE.
- AWAY: the connection was lost (or never made, when we resume), or carried what proves
  nothing against anyone (a bad frame, a message out of the chain), or the host says we are
  due while our message is out (it never got it): we connect again, pausing
  ``Limits.reconnect_first`` and then twice as long each time, up to ``reconnect_most``, and
  the host's RESUMED says what of ours to send again. A refusal meanwhile is tried again too.

The times are the table's, which START carries and every seat signed (``Peer.limits``). The
host forfeits, by our clock, when its own message is due and ``timeout`` passes, or when it
stays out of reach for the ``wait``; while another seat's message is due the host keeps the
time, and if it passes nothing on for ``timeout + wait`` and a notice's interval more (it
would have declared that seat's forfeit by then) it has failed as the relay, and forfeits.
Those bounds run from when the message became due, through any number of returns, so a host
that keeps us coming back gains no time. Once our log is complete we stay until the host says
DONE (it may have crashed before it got our last message), and answer it, within the ``wait``
(then a try and a greeting: ``reconnect_most + hello``) from then, whatever the host sends
meanwhile. A log completed by the forfeit of a host that stayed away ends at once.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import Player, Table
from p2pwhist.identity import fingerprint, same_fingerprint
from p2pwhist.session import HOST, Need, Outcome, Session
from p2pwhist.signed import Kind, SignatureError, SignedMessage, parse
from p2pwhist.table._actions import (
    Action,
    BeginFailed,
    Begun,
    Chosen,
    Close,
    Connect,
    ConnId,
    Event,
    Finish,
    Lost,
    Opened,
    OpenFailed,
    Received,
    Reopen,
    Report,
    Say,
    Send,
    Sit,
    Vet,
    Vetted,
)
from p2pwhist.table._chat import Talk
from p2pwhist.table._errors import LocalTableError, Refused, RemoteTableError, TableError, UnattributedTableError
from p2pwhist.table._frames import (
    PROTOCOL_VERSION,
    Chat,
    Done,
    FrameError,
    FromHost,
    Hello,
    Lobby,
    Logged,
    Notice,
    Presence,
    Ready,
    Refuse,
    Rejoin,
    Resumed,
    Vouch,
    Welcome,
    encode,
    read_from_host,
)
from p2pwhist.table._limits import HANDSHAKE_FRAME, Limits
from p2pwhist.table._peer import Peer, Playing
from p2pwhist.table._words import ShownNotices, lobby_lines, notice_line
from p2pwhist.text import clock
from p2pwhist.wire import MAX_FRAME

# A NOTICE that the table waits for us, while our message is out, means the host never got it,
# unless the two crossed on the way: it is acted on once our message has been out this long.
RESEND_AFTER = 1.0
# How long our last words (an ABORT, DONE, a VOUCH refusing the host) may take to leave.
LAST_WORDS = 2.0


class Step(enum.Enum):
    CONNECTING = "connecting"
    GREETING = "greeting"
    VETTING = "vetting"
    WAITING = "waiting"
    REJOINING = "rejoining"
    PLAYING = "playing"
    AWAY = "away"
    OVER = "over"


# What each step takes from the host; anything else is the host's fault (or, greeting, a sign
# that it is no p2pwhist host at all).
_ACCEPTS: dict[Step, frozenset[type]] = {
    Step.GREETING: frozenset({Welcome, Refuse}),
    Step.VETTING: frozenset({Refuse}),
    Step.WAITING: frozenset({Lobby, Refuse, Logged}),
    Step.REJOINING: frozenset({Resumed, Refuse}),
    Step.PLAYING: frozenset({Logged, Notice, Done, Chat}),
}


@dataclass(frozen=True)
class Resumable:
    """An unfinished game of ours: its id (a host playing it lets us take it up again), and,
    for the words, what it is and where its transcript is."""

    game: bytes
    words: str
    path: str


class JoinerMachine(Playing):
    """See the module docstring. ``where`` is the host's address as the person typed it (for
    the words), ``key`` our private key (HELLO, REJOIN's proof, an ABORT before the game), and
    ``resumable`` our unfinished games, newest first, which a host playing one of them lets us
    take up. ``patient``: a host that cannot be reached, or does not answer, is tried again
    (pausing as after a lost connection) within the wait, as for a game of ours that the same
    command started: the host may be restarting too."""

    def __init__(self, name: str, key: Ed25519PrivateKey, where: str, limits: Limits,
                 expect: str | None = None, resumable: Sequence[Resumable] = (), patient: bool = False) -> None:
        self.me = Player(name, key.public_key().public_bytes_raw())
        self.key = key
        self.where = where
        self.limits = limits
        self.expect = expect
        self.resumable = list(resumable)
        self.patient = patient
        self.patience_until = 0.0
        self.step = Step.CONNECTING
        self.since = 0.0  # when the step began (or, waiting, when the host last spoke)
        self.conn: ConnId | None = None  # the connection being greeted or played on
        self.line: ConnId | None = None  # the connection the log goes out on, once the host said what it holds
        self.delivered = 0  # how much of the log the host holds, as far as we know
        self.host: Welcome | None = None
        self.vetted: dict[bytes, bool] = {}  # our answers about keys, given once
        self.asked: set[bytes] = set()  # keys put to our person (or our known peers) meanwhile
        self.shown: list[str] = []  # the lobby lines last shown
        self.noticed = ShownNotices()
        self.sitting: tuple[SignedMessage, int] | None = None  # START and our seat, while our files are made
        self.peer: Peer | None = None
        self.talk: Talk | None = None  # the table's talk, once the game is under way
        self.lost_at = 0.0
        self.refusal: str | None = None  # why the host last refused our return, until we are back
        self.retry_at: float | None = None
        self.pause = limits.reconnect_first
        self.ending_until: float | None = None  # once our log is complete: when we stop waiting for DONE

    @classmethod
    def returning(cls, session: Session, key: Ed25519PrivateKey, where: str, limits: Limits,
                  now: float) -> JoinerMachine:
        """A joiner going on with an unfinished game of its own: it connects and rejoins."""
        machine = cls(session.table.players[session.seat].name, key, where, limits)  # type: ignore[index]
        machine._play(session, now)
        machine.step, machine.retry_at = Step.AWAY, now
        return machine

    # -- the edge's calls ---------------------------------------------------------------------

    def begin(self, now: float) -> list[Action]:
        if self.peer is not None:  # returning: the game so far, then back to the table
            return self.peer.begin(now) + self.tick(now)
        self.step, self.since = Step.CONNECTING, now
        self.patience_until = now + self.limits.wait if self.patient else now
        return [Connect()]

    @property
    def finished(self) -> bool:
        return self.step is Step.OVER

    def handle(self, event: Event, now: float) -> list[Action]:
        if self.step is Step.OVER:
            return []
        if isinstance(event, Opened):
            out = self._opened(event.conn, now)
        elif isinstance(event, OpenFailed):
            out = self._cannot_reach(event.reason, now)
        elif isinstance(event, Received):
            out = self._received(event.conn, event.payload, now) if event.conn == self.conn else []
        elif isinstance(event, Lost):
            out = self._lost(event, now) if event.conn == self.conn else []
        elif isinstance(event, Vetted):
            out = self._vetted(event, now)
        elif isinstance(event, Chosen):
            out = self.peer.chosen(event.token, event.value, now) if self.peer else []
        elif isinstance(event, Begun):
            out = self._begun(event.session, now)
        elif isinstance(event, BeginFailed):
            out = self._begin_failed(event.error)
        elif isinstance(event, Say):
            out = self._say(event, now)
        else:
            raise LocalTableError(f"a joiner takes no {type(event).__name__}")
        return self._settle(out, now)

    def tick(self, now: float) -> list[Action]:
        if self.step is Step.OVER:
            return []
        out: list[Action] = []
        limits, peer = self.limits, self.peer
        if self.step in (Step.GREETING, Step.REJOINING) and now >= self.since + limits.hello:
            if peer is None and now >= self.patience_until:
                return self._end(UnattributedTableError(f"{self._host_words()} did not answer within "
                                                        f"{limits.hello:g} s"))
            out += self._retry("the host did not answer in time", now)
        elif self.step is Step.WAITING and now >= self.since + limits.silence:
            return self._end(UnattributedTableError(f"{self._host_words()} has said nothing for "
                                                    f"{clock(limits.silence)}: it is gone"))
        if peer is not None and peer.result is None:
            out += peer.tick(now)
            forfeit = self._host_forfeits()
            if forfeit is not None and now >= forfeit[0]:
                out += peer.absent(HOST, forfeit[1], now)
        if peer is None and self.step is Step.AWAY and now >= self.patience_until:
            return self._end(UnattributedTableError(f"cannot reach the host {self.where} within "
                                                    f"{clock(limits.wait)}"))
        if self.step is Step.AWAY and self.retry_at is not None and now >= self.retry_at:
            self.retry_at = None
            self.step, self.since = Step.CONNECTING, now
            out.append(Connect())
        return self._settle(out, now)

    @property
    def deadline(self) -> float | None:
        if self.step is Step.OVER:
            return None
        limits = self.limits
        times: list[float] = []
        if self.step in (Step.GREETING, Step.REJOINING):
            times.append(self.since + limits.hello)
        if self.step is Step.WAITING:
            times.append(self.since + limits.silence)
        if self.step is Step.AWAY and self.retry_at is not None:
            times.append(self.retry_at)
        if self.peer is None and self.step is Step.AWAY:
            times.append(self.patience_until)
        peer = self.peer
        if peer is not None and peer.result is None:
            forfeit = self._host_forfeits()
            times += [forfeit[0]] if forfeit is not None else []
            times += [peer.deadline] if peer.deadline is not None else []
        if self.ending_until is not None:
            times.append(self.ending_until)
        return min(times) if times else None

    def frame_limit(self, conn: ConnId) -> int | None:
        if conn != self.conn:
            return None
        # Until the host has shown it speaks p2pwhist, a frame is a handshake's size: the first
        # bytes of an HTTP or TLS server announce a length in the gigabytes.
        return HANDSHAKE_FRAME if self.step in (Step.GREETING, Step.VETTING) else MAX_FRAME

    def reading(self, conn: ConnId) -> bool:
        # While a FORFEIT waits for our clock to agree, what follows it waits in the connection.
        return self.peer is None or self.peer.deadline is None

    # -- the peer's transport: our one connection to the host -----------------------------------

    def deliver(self, raws: list[bytes]) -> list[Action]:
        if self.line is None:
            return []
        out: list[Action] = [Send(self.line, raw) for raw in raws[self.delivered:]]
        self.delivered = len(raws)
        return out

    def received(self, via: int, length: int) -> None:
        self.delivered = length

    def drop(self, via: int, why: str, now: float) -> list[Action]:
        """The host's connection carried what proves nothing against anyone: we hang up and
        come back, and the host's RESUMED says what of ours to send again."""
        return self._away(f"Dropped the connection to the host ({why})", now)

    # -- connecting and greeting --------------------------------------------------------------

    def _opened(self, conn: ConnId, now: float) -> list[Action]:
        if self.step is not Step.CONNECTING:
            return [Close(conn, 0.0)]
        self.conn, self.step, self.since = conn, Step.GREETING, now
        return [Send(conn, encode(Hello(PROTOCOL_VERSION, self.me.name, self.me.key)))]

    def _cannot_reach(self, reason: str, now: float) -> list[Action]:
        if self.peer is None and now >= self.patience_until:
            return self._end(UnattributedTableError(f"cannot reach the host {self.where}: {reason}"))
        return self._retry(reason, now)

    def _received(self, conn: ConnId, payload: bytes, now: float) -> list[Action]:
        try:
            frame = read_from_host(payload)
        except FrameError as error:
            return self._bad_frame(str(error), payload, now)
        if type(frame) not in _ACCEPTS.get(self.step, frozenset()):
            return self._bad_frame(f"a {type(frame).__name__.upper()} where it may not send one", payload, now)
        if self.step is Step.WAITING:
            self.since = now  # the host spoke: it is there
        return _HANDLERS[type(frame)](self, frame, now)

    def _welcome(self, welcome: Welcome, now: float) -> list[Action]:
        if welcome.version != PROTOCOL_VERSION:  # a host that does not refuse our HELLO's version itself
            return self._end(RemoteTableError(
                f"{welcome.name} (the host) speaks protocol version {welcome.version}; this p2pwhist speaks "
                f"version {PROTOCOL_VERSION} (both sides need a p2pwhist of one protocol version)", HOST))
        self.host = welcome
        if self.peer is not None:  # returning to our game
            session = self.peer.session
            if welcome.key != session.table.players[HOST].key:
                return self._retry(f"{welcome.name} at {self.where} has another key than this game's host", now)
            if welcome.game != session.game_id:
                what = "seating a new table" if welcome.game is None else "playing another game"
                return self._end(Refused(f"{welcome.name} (the host) is {what}, not this game"))
            return self._rejoin(now)
        if self.expect is not None and not same_fingerprint(self.expect, fingerprint(welcome.key)):
            return self._not_accepted(welcome, f"{self.me.name} does not sit down: the host's key is "
                                               f"{fingerprint(welcome.key)}, not the expected {self.expect}")
        if welcome.game is not None:
            if any(game.game == welcome.game for game in self.resumable):  # a game of ours: take it up
                return [Reopen(welcome.game)]
            return self._end(RemoteTableError(f"{welcome.name} (the host) is playing a game in which we hold no "
                                              "seat we can take back (no unfinished transcript of ours)", HOST))
        out = self._waiting_elsewhere(welcome)
        if self.expect is not None:  # --expect, checked above: the fingerprint is the trust
            self.vetted[welcome.key] = True
            return out + self._ready(now)
        self.step, self.since = Step.VETTING, now
        self.asked.add(welcome.key)
        return out + [Vet(welcome.name, welcome.key)]

    def _waiting_elsewhere(self, welcome: Welcome) -> list[Action]:
        """One line for an unfinished game of ours, when the host seats a new table."""
        if not self.resumable:
            return []
        game = self.resumable[0]
        return [Report(f"An unfinished game ({game.words}) is waiting in {game.path}: "
                       f"p2pwhist resume {game.path} goes back to it. This is a new table.")]

    def _not_accepted(self, host: Welcome, why: str) -> list[Action]:
        """We do not accept the host's key: we say so (a VOUCH about it, wire.md §2.1), so that
        its person hears it, and hang up."""
        return self._end(TableError(why), last=encode(Vouch(host.key, False)))

    def _ready(self, now: float) -> list[Action]:
        assert self.conn is not None
        self.step, self.since = Step.WAITING, now
        return [Send(self.conn, encode(Ready()))]

    def _vetted(self, event: Vetted, now: float) -> list[Action]:
        self.asked.discard(event.key)
        self.vetted[event.key] = event.trusted
        if self.step is Step.VETTING and self.host is not None and event.key == self.host.key:
            if not event.trusted:  # our person said no; the edge has said which key, and why
                return self._not_accepted(self.host, f"{self.me.name} does not sit down at {self.host.name}'s table")
            return self._ready(now)
        if self.step is not Step.WAITING or self.conn is None:
            return []
        return [Send(self.conn, encode(Vouch(event.key, event.trusted)))]

    def _lobby(self, lobby: Lobby, now: float) -> list[Action]:
        out: list[Action] = []
        lines = lobby_lines(lobby, fingerprint(self.me.key))
        out += [Report(line) for line in lines if line not in self.shown]
        self.shown = lines
        for seat, player in enumerate(lobby.players):
            if seat in (HOST, lobby.you) or player.key in self.asked:
                continue
            if player.key in self.vetted:  # answered once, and the host keeps our answer about a key
                continue
            self.asked.add(player.key)
            out.append(Vet(player.name, player.key))
        return out

    def _refused(self, refuse: Refuse, now: float) -> list[Action]:
        if self.peer is not None:  # returning: it may be restarting, or want us to pause; we keep trying
            self.refusal = refuse.reason
            return self._retry(f"{self._host_words()} refused us: {refuse.reason}", now)
        return self._end(Refused(f"{self._host_words()} refused us: {refuse.reason}"))

    def _start(self, logged: Logged, now: float) -> list[Action]:
        """START: the table we agreed to, signed by the host that welcomed us."""
        try:
            start = parse(logged.raw)
        except SignatureError as error:
            return self._end(RemoteTableError(f"{self._host_words()} sent a bad START: {error}", HOST))
        if start.kind is not Kind.START:
            return self._end(RemoteTableError(f"{self._host_words()} sent {start.kind.value} instead of START", HOST))
        table = start.body
        assert self.host is not None and isinstance(table, Table)
        if table.times is None:  # a new table agrees its time limits (version 3): an old one is only read
            return self._end(RemoteTableError(f"{self._host_words()} started a table of protocol version "
                                              f"{table.version}, which agrees no time limits", HOST))
        players = table.players
        try:
            start.verify(players[HOST].key)
        except SignatureError as error:
            return self._end(RemoteTableError(f"the host's START is not acceptable: {error}", HOST))
        seats = [seat for seat, player in enumerate(players) if player.key == self.me.key]
        if not seats or seats[0] == HOST:
            return self._end(RemoteTableError("the host's table does not seat us", HOST))
        seat = seats[0]
        refusal: str | None
        if players[HOST].key != self.host.key:
            refusal = "the host signed START with another key than it greeted us with"
        else:
            strangers = [p.name for s, p in enumerate(players) if s not in (HOST, seat) and not self.vetted.get(p.key)]
            refusal = f"the host started without our word on {', '.join(strangers)}" if strangers else None
        if refusal is not None:  # tell the table why we leave, signed, instead of simply hanging up
            notice = Session(start, seat, self.key, None).abort(f"{self.me.name} refuses to play: {refusal}")
            return [Send(self.conn, notice.raw)] + self._end(RemoteTableError(refusal, HOST))  # type: ignore[arg-type]
        self.sitting = (start, seat)
        return [Sit(start, seat)]

    def _begun(self, session: Session, now: float) -> list[Action]:
        peer = self._play(session, now)
        self.line, self.delivered = self.conn, 1  # the host has START, which is all we have
        if self.step is Step.GREETING:  # a game of ours, taken up on this connection
            assert self.host is not None
            if self.host.key != session.table.players[HOST].key:  # anyone may name a game's id
                return self._end(RemoteTableError(f"{self.host.name} at {self.where} names a game of ours, but has "
                                                  "another key than that game's host", HOST))
            return peer.begin(now) + self._rejoin(now)
        self.step, self.since = Step.PLAYING, now
        return peer.begin(now)

    def _begin_failed(self, error: Exception) -> list[Action]:
        """Our files could not be made (a file planted where they go, an unwritable folder):
        the table is told why, signed, instead of our ACCEPT; or an unfinished game of ours
        could not be taken up."""
        out: list[Action] = []
        if self.sitting is not None and self.conn is not None:
            start, seat = self.sitting
            notice = Session(start, seat, self.key, None).abort(f"{self.me.name} cannot start the game: {error}")
            out.append(Send(self.conn, notice.raw))
        return out + self._end(error)

    def _play(self, session: Session, now: float) -> Peer:
        # Until we are at the table (PLAYING), the host counts as away from now: a game taken up
        # again gives the host the whole wait, whatever the clock's origin.
        self.peer, self.lost_at = Peer(session, self, now, self.limits), now
        self.talk = Talk(session.game_id, session.table.players, session.seat, session.signer)
        return self.peer

    # -- returning ------------------------------------------------------------------------------

    def _rejoin(self, now: float) -> list[Action]:
        """Take our seat back (wire.md §2): prove our key over the host's nonce, say how much of
        the log we hold; what we lack comes next, and we send what the host lacks."""
        assert self.peer is not None and self.host is not None and self.conn is not None
        session, raws = self.peer.session, self.peer.raws
        have, head = len(raws), hashlib.sha256(raws[-1]).digest()
        seat = session.seat
        assert seat is not None
        proof = self.key.sign(Rejoin.statement(session.game_id, seat, have, head, self.host.nonce))
        self.step, self.since = Step.REJOINING, now
        self.line = None  # nothing is delivered until the host says what it holds
        return [Send(self.conn, encode(Rejoin(session.game_id, seat, have, head, proof)))]

    def _resumed(self, resumed: Resumed, now: float) -> list[Action]:
        assert self.peer is not None
        self.step, self.since, self.refusal = Step.PLAYING, now, None
        self.line, self.delivered = self.conn, min(resumed.have, len(self.peer.raws))
        self.pause = self.limits.reconnect_first
        return [Report("Back at the table.", Notice(HOST, Presence.BACK, 0, 0)), *self.deliver(self.peer.raws)]

    def _retry(self, why: str, now: float) -> list[Action]:
        """This attempt to return failed: close it, and try again after a pause."""
        out: list[Action] = [Close(self.conn, 0.0)] if self.conn is not None else []
        self.conn, self.line = None, None
        self.step, self.since = Step.AWAY, now
        self.retry_at = now + self.pause
        self.pause = min(self.pause * 2, self.limits.reconnect_most)
        return out

    def _lost(self, event: Lost, now: float) -> list[Action]:
        self.conn = None
        if self.peer is None:
            if self.step is Step.GREETING and event.sample:
                return self._end(RemoteTableError(f"{self.where} does not speak p2pwhist (it sent "
                                                  f"{_said(event.sample)})", HOST))
            if self.step is Step.GREETING and now < self.patience_until:
                return self._retry(event.reason, now)
            return self._end(UnattributedTableError(f"{self._host_words()} {event.reason}", HOST))
        if self.step is Step.PLAYING:
            return self._away(f"Lost the connection to the host ({event.reason})", now)
        return self._retry(event.reason, now)

    def _away(self, why: str, now: float) -> list[Action]:
        """Off the table, lost or dropped: we connect again at once."""
        out: list[Action] = [Close(self.conn, 0.0)] if self.conn is not None else []
        self.conn, self.line = None, None
        self.lost_at = now
        self.step, self.since, self.retry_at = Step.AWAY, now, now
        assert self.peer is not None  # away from a game under way
        return out + [Report(f"{why}; reconnecting...", Notice(HOST, Presence.GONE, 0, round(self.peer.limits.wait)))]

    # -- the game -------------------------------------------------------------------------------

    def _game_frame(self, frame: FromHost, now: float) -> list[Action]:
        peer = self.peer
        assert peer is not None
        if isinstance(frame, Notice):
            names, seat = peer.names, peer.session.seat
            if frame.seat == seat and frame.presence is not Presence.BACK and peer.session.waiting_for != seat \
                    and now - peer.due_since >= RESEND_AFTER:
                # The host waits for our message, which is out (the log waits for another seat,
                # or for nobody: ours completed it): it never got it. Rejoining, we learn what it
                # holds, and send the rest again.
                return self._away("The host has not got our last message", now)
            if frame.seat >= len(names) or (frame.seat, frame.presence) == (seat, Presence.BACK):
                return []
            if not self.noticed.worth_showing(frame, now):
                return []
            return [Report(notice_line(frame, names, seat), frame)]
        if isinstance(frame, Done):
            if self.ending_until is None or peer.result is None:
                return []  # the host's word on an end we have not reached: nothing to answer
            assert self.conn is not None
            return [Send(self.conn, encode(Done(len(peer.raws)))), *self._end(peer.result)]
        assert isinstance(frame, Logged)
        if peer.result is None and (peer.session.need is Need.PEER or peer.choosing is not None):
            return peer.take(frame.raw, HOST, now)
        return []

    def _settle(self, out: list[Action], now: float) -> list[Action]:
        """After anything: restart the clock of a new wait, and move on to the end."""
        peer = self.peer
        if peer is None or self.step is Step.OVER:
            return out
        peer.settle(now)
        session = peer.session
        if peer.result is not None and self.ending_until is None:
            leaver = session.leaver
            if leaver is not None and leaver.seat == HOST and self.step is not Step.PLAYING:
                # We declared the forfeit of a host that stayed away for the whole wait: it has
                # had its time to come back, and nobody is there to say DONE.
                out += self._end(peer.result)
            elif session.error is None and session.waiting_for is None and not isinstance(peer.result, TableError):
                # Our log is complete: we stay for the host's DONE, this long at most. A host
                # that crashed before it got our last message has the wait to be restarted, as
                # any seat has to return, then our next try and a greeting's time. DONE takes no
                # thought: the move limit (a day, for bots) has no part in it.
                limits = peer.limits
                self.ending_until = now + limits.wait + limits.reconnect_most + limits.hello
            else:
                out += self._end(peer.result)
        elif self.ending_until is not None and now >= self.ending_until:
            assert peer.result is not None
            out += self._end(peer.result)  # the host is gone: our log is complete, and it may have all of it
        return out

    def _host_forfeits(self) -> tuple[float, str] | None:
        """When the host forfeits by our clock, and why, during the game (module docstring)."""
        peer = self.peer
        assert peer is not None
        limits, due, since = peer.limits, peer.due, peer.due_since
        times: list[tuple[float, str]] = []
        if self.step is not Step.PLAYING:
            away = f"lost connection and did not return within {clock(limits.wait)}" if self.refusal is None else \
                f"refused our return for {clock(limits.wait)} (the last time: {self.refusal})"
            times.append((self.lost_at + limits.wait, away))
        if due is not None and due[1] == HOST:
            times.append((since + limits.timeout, f"took longer than {clock(limits.timeout)} over one message"))
        elif due is not None:
            bound = limits.timeout + limits.wait + limits.notice_every
            times.append((since + bound, f"passed on nothing from {peer.names[due[1]]} for {clock(bound)}"))
        return min(times) if times else None

    # -- table talk (``_chat``) ------------------------------------------------------------------

    def _say(self, say: Say, now: float) -> list[Action]:
        """Our person's line, to the host, which passes it on; or a line saying why not."""
        if self.talk is None:
            return [Report("Not said: the table talks once the game has begun.")]
        if self.step is not Step.PLAYING or self.conn is None:
            return [Report("Not said: we are not at the table now.")]
        chat = self.talk.say(say.text, say.clock_ms, now)
        if isinstance(chat, str):
            return [Report(f"Not said: {chat}.")]
        return [self.talk.heard(chat), Send(self.conn, encode(chat))]

    def _heard(self, chat: Chat, now: float) -> list[Action]:
        """A line the host passed on: for our person, or dropped quietly (``Talk.take``)."""
        assert self.talk is not None
        heard = self.talk.take(chat, now)
        return [] if heard is None else [heard]

    # -- ending -----------------------------------------------------------------------------------

    def _bad_frame(self, why: str, payload: bytes, now: float) -> list[Action]:
        if self.step is Step.GREETING and self.peer is None:
            return self._end(RemoteTableError(f"{self.where} does not speak p2pwhist (it sent {_said(payload)})", HOST))
        if self.peer is not None and self.step is Step.PLAYING:
            return self.drop(HOST, f"it sent a bad frame: {why}", now)
        if self.peer is not None:
            return self._retry(f"the host sent a bad frame: {why}", now)
        return self._end(RemoteTableError(f"{self._host_words()} sent a bad frame: {why}", HOST))

    def _end(self, result: Outcome | Exception, last: bytes | None = None) -> list[Action]:
        """Done: our last words (an ABORT, DONE, or ``last``, sent here) leave first, at the end
        of a game or with ``last``; a meeting that failed otherwise just hangs up."""
        self.step = Step.OVER
        if self.conn is None:
            return [Finish(result)]
        within = LAST_WORDS if last is not None or self.peer is not None or self.sitting is not None else 0.0
        said: list[Action] = [Send(self.conn, last)] if last is not None else []
        return [*said, Close(self.conn, within, part=within > 0), Finish(result)]

    def _host_words(self) -> str:
        return f"{self.host.name} (the host)" if self.host is not None else f"the host {self.where}"


def _said(data: bytes) -> str:
    """What an unknown server sent, in a few words: its first line if it is text (an HTTP
    status line), else its first bytes in hex (a TLS alert)."""
    head = data[:64]
    text = head.split(b"\r\n")[0].split(b"\n")[0]
    if text and all(32 <= b < 127 for b in text):
        return repr(text[:40].decode("ascii")) + ("..." if len(text) > 40 else "")
    return "bytes " + " ".join(f"{b:02x}" for b in head[:8]) + (" ..." if len(data) > 8 else "")


_HANDLERS: dict[type, Callable[[JoinerMachine, Any, float], list[Action]]] = {
    Welcome: JoinerMachine._welcome,
    Refuse: JoinerMachine._refused,
    Lobby: JoinerMachine._lobby,
    Resumed: JoinerMachine._resumed,
    Logged: lambda self, frame, now: self._start(frame, now) if self.step is Step.WAITING
    else self._game_frame(frame, now),
    Notice: JoinerMachine._game_frame,
    Done: JoinerMachine._game_frame,
    Chat: JoinerMachine._heard,
}
