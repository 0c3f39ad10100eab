"""One seat's side of a game under way, host or joiner alike: what it does with the session.

The session (``p2pwhist.session``) judges every message and makes ours; this machine decides
what follows from it, which used to be the network loop's own logic:

- A message from another seat is checked (``Session.check``: chain, signature, carrier), then
  recorded and passed on, and taken (``Session.take``: its body, the rules, the deck) in the
  next step (``work``). Every peer makes the costly checks of the body itself, so passing a
  message on before them lets the others work while we do.
- Our own messages are made one a step, as soon as the session can make them, each sent before
  the next is made; a move or a wish is asked of our person or bot once (``Choose``, ``Wish``),
  and a message that settles the match meanwhile (a FORFEIT declared against us, an ABORT)
  cancels the question (``Unchoose``).
- Between two steps the edge lets what was sent leave (``busy``), so a step is the unit of
  latency: nothing waits behind work it does not need.
- A seat that stays away, or is too slow, forfeits (``absent``): we sign the FORFEIT, if the
  match has begun and is not settled already.
- Whatever stops the game is said to the others, signed (ABORT), unless every peer reaches the
  verdict from the log itself (``Convicted``) or the seat that stopped it said so already.
  ``result`` then holds the outcome, or the ``TableError`` that says why it stopped.

The transport (the host's relay or a joiner's line to the host) says who holds what of the log
and makes the sends (``Transport``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from p2pwhist.bodies import Forfeit
from p2pwhist.session import (
    HOST,
    Aborted,
    Convicted,
    LocalError,
    Need,
    Outcome,
    RemoteError,
    Session,
    SessionError,
)
from p2pwhist.signed import Kind, SignatureError, SignedMessage, parse
from p2pwhist.table._actions import Action, Choose, Keep, Record, Remember, Show, Unchoose, Wish
from p2pwhist.table._errors import LocalTableError, Refused, RemoteTableError, TableError
from p2pwhist.table._limits import Limits

# A seat co-signs a FORFEIT only once its own clock says the named seat's message has been due
# for the shorter of the table's two limits, less this slack: its clock started a relay's
# latency after the declarer's, and clocks run at slightly different rates (session.md §7.3).
SLACK_SECONDS = 2.0
_ASKED = (Need.MOVE, Need.WISH, Need.STOP)  # what our person or bot is asked (``Choose``, ``Wish``)
SLACK_SHARE = 0.05


class Transport(Protocol):
    """How the log reaches the other seats from this peer."""

    def deliver(self, raws: list[bytes]) -> list[Action]:
        """The sends that give every connected peer what it lacks of ``raws``."""

    def received(self, via: int, length: int) -> None:
        """The message that made the log ``length`` long came over ``via``'s connection."""

    def drop(self, via: int, why: str, now: float) -> list[Action]:
        """``via``'s connection carried what proves nothing against anyone (bytes that are no
        message of ours, a bad signature, a message out of the chain): drop it; the seat may
        come back and send again."""


class Peer:
    """See the module docstring. ``begin`` first, then ``take``, ``chosen``, ``absent`` and
    ``stop`` as things happen; each returns the actions that follow, in order."""

    def __init__(self, session: Session, transport: Transport, now: float, limits: Limits) -> None:
        self.session = session
        self.transport = transport
        times = session.table.times  # the table's own, which every seat signed; a version-2 game has none
        self.limits = limits if times is None else replace(limits, timeout=float(times.move), wait=float(times.wait))
        self.due: tuple[int, int] | None = None  # (log length, seat) of the message the log waits for
        self.due_since = now
        self._held: tuple[SignedMessage, int] | None = None  # a FORFEIT we do not sign yet, and its carrier
        self.names = [player.name for player in session.table.players]
        self.raws = [message.raw for message in session.log]  # the log as recorded, sent from here
        self.result: Outcome | TableError | None = None
        self.started = now  # a timed match's clock starts when this peer starts (or resumes)
        self.choosing: int | None = None  # the token of the question our person or bot answers
        self._tokens = 0
        self._taking: SignedMessage | None = None  # checked and passed on; its body is judged next
        # A resumed peer's transcript holds what its interface must show first.
        self._remembered = len(session.log) > len(session.table.players)

    @property
    def me(self) -> str:
        return self.names[self.session.seat] if self.session.seat is not None else "?"

    def begin(self, now: float) -> list[Action]:
        """START (or all a resumed peer holds) to the interface; then ``work``."""
        return self._shown()

    @property
    def busy(self) -> bool:
        """Whether ``work`` has something to do: a message passed on but not yet taken, a
        message of ours to make, a question to ask, or the end to settle. The edge lets what
        was sent leave before each step, so that the others work while we do."""
        if self.result is not None:
            return False
        if self._taking is not None:
            return True
        need = self.session.need
        return need is not Need.PEER and not (need in _ASKED and self.choosing is not None)

    def work(self, now: float) -> list[Action]:
        """One step: take the message passed on, or make our next message, or ask our person
        or bot for a move or a wish, or settle the end."""
        if self.result is not None:
            return []
        taking, self._taking = self._taking, None
        if taking is not None:
            try:
                self.session.take(taking)
            except RemoteError as error:
                return self._refused(taking.raw, error)
            except SessionError as error:
                return self._stopped(error)
            return self._after(taking)
        session = self.session
        need = session.need
        if need is Need.DONE:
            self.result = self._settled()
            return []
        if need is Need.PEER:
            return []
        if need in _ASKED:
            if self.choosing is not None:
                return []
            self._tokens += 1
            self.choosing = self._tokens
            return [Choose(self.choosing, session.view()) if need is Need.MOVE
                    else Wish(self.choosing, stop=need is Need.STOP)]
        return self._make(self._time_up(now) if need is Need.DECISION else None)

    def chosen(self, token: int, value: object, now: float) -> list[Action]:
        """Our person's or bot's answer; an answer to a question withdrawn is dropped."""
        if token != self.choosing or self.result is not None:
            return []
        self.choosing = None
        return self._make(value)

    def take(self, raw: bytes, via: int, now: float) -> list[Action]:
        """A message for the log from another seat, carried by ``via``'s connection: checked
        (chain, signature, carrier), recorded and passed on now; taken (its body: the rules,
        the deck) by the next ``work``, once it has left for the others.

        What fails the check proves nothing against the seat it names: the connection that
        carried it is dropped, and its seat may come back and send again (``Transport.drop``).
        A FORFEIT naming this seat, which is here, is never signed: it is kept, as the evidence
        it is, and the game is over for us. One naming another seat is signed only once our
        own clock agrees that seat's message has been due long enough (``_forfeit_due``)."""
        if self.result is not None:
            return []
        if self._taking is not None:
            raise LocalTableError("a message came before the one passed on was taken: work first")
        if self._held is not None:  # nothing may follow a FORFEIT before we sign it
            return self.transport.drop(via, "sent on before we signed the forfeit it declared", now)
        session = self.session
        declared = self._forfeit_of_ours(raw)
        if declared is not None:
            return self._forfeited_while_here(raw, declared, via, now)
        try:
            message = session.check(raw, via, fatal=False)
        except RemoteError as error:
            return self.transport.drop(via, error.reason, now)
        out: list[Action] = []
        if self.choosing is not None:  # it settles the match, or it is out of turn: either way, stop asking
            out.append(Unchoose(self.choosing))
            self.choosing = None
        body = message.body
        if isinstance(body, Forfeit) and session.leaver is None and body.seat != session.seat:
            if now < self._forfeit_due():
                self._held = (message, via)
                return out
        self._taking = message
        return out + self._logged(message, via)

    @property
    def deadline(self) -> float | None:
        """When a FORFEIT held until our clock agrees may be signed."""
        return self._forfeit_due() if self._held is not None and self.result is None else None

    def tick(self, now: float) -> list[Action]:
        """Sign the FORFEIT held, once our clock agrees (``deadline``)."""
        if self._held is None or now < self._forfeit_due():
            return []
        (message, via), self._held = self._held, None
        self._taking = message
        return self._logged(message, via)

    def _forfeit_due(self) -> float:
        shortest = min(self.limits.timeout, self.limits.wait)
        return self.due_since + shortest * (1 - SLACK_SHARE) - SLACK_SECONDS

    def settle(self, now: float) -> None:
        """After each step: start the clock of a new wait (``due``, ``due_since``)."""
        session = self.session
        due = (len(session.log), session.waiting_for) if self.result is None and session.need is Need.PEER else None
        if due != self.due:
            self.due, self.due_since = due, now  # type: ignore[assignment]

    def absent(self, seat: int, reason: str, now: float) -> list[Action]:
        """``seat``, whose message is due, stayed away or took too long: it forfeits."""
        if self.result is not None:
            return []
        session = self.session
        who = f"{self.names[seat]} (seat {seat})"
        if session.leaver is not None or session.outcome is not None:
            # The result is settled, but the seats that should sign it cannot be reached (the
            # host is gone for good): the log stays a signature short, and the result stands.
            self.result = session.outcome
            return []
        if not session.begun:  # before every seat accepted, nobody has anything to lose
            return self.stop(TableError(f"{who} {reason}", seat))
        # The reason without the name: every line that shows it names the seat first ("bob
        # left the match: lost connection and did not return within 5:00").
        message = session.forfeit(seat, reason)
        return self._logged(message) + self._after(message)

    def stop(self, error: TableError) -> list[Action]:
        """The game cannot go on for a reason outside the session (the network, a peer's
        frame): say so to the others, signed, blaming ``error.seat``, and stop."""
        if self.result is not None:
            return []
        self.result = error
        return self._abort(str(error), error.seat)

    # -- internals -----------------------------------------------------------------------------

    def _make(self, value: object) -> list[Action]:
        try:
            message = self.session.produce(value)
        except LocalError as error:
            return self._stopped(error)
        return self._logged(message) + self._after(message)

    def _logged(self, message: SignedMessage, via: int | None = None) -> list[Action]:
        """Record ``message``, then pass it on: the transcript is written ahead (wire.md §4)."""
        self.raws.append(message.raw)
        if via is not None:
            self.transport.received(via, len(self.raws))
        # At least once a hand, nothing agreed is lost in a crash.
        sync = message.kind in (Kind.HAND, Kind.FORFEIT)
        return [Record(message, sync), *self.transport.deliver(self.raws)]

    def _after(self, message: SignedMessage) -> list[Action]:
        """What the interface shows of ``message``, and the others' keys once the game began."""
        out = self._shown()
        session = self.session
        log, players = session.log, session.table.players
        # Started means every seat has signed: START and the n-1 ACCEPTs. That is so at one
        # length of the log only; a START listing players who never sign leaves nothing.
        if not self._remembered and len(log) == len(players) and session.error is None \
                and all(m.kind is Kind.ACCEPT for m in log[1:]):
            self._remembered = True
            out.append(Remember(tuple(p for seat, p in enumerate(players) if seat != session.seat)))
        return out

    def _shown(self) -> list[Action]:
        return [Show(event) for event in self.session.take_events()]

    def _settled(self) -> Outcome | TableError:
        error = self.session.error
        if isinstance(error, Convicted):  # a verdict every peer reached from the log
            return RemoteTableError(f"{self.names[error.seat]} (seat {error.seat}): {error.reason}", error.seat)
        assert self.session.outcome is not None, "a session that needs nothing more has an outcome or an error"
        return self.session.outcome

    def _refused(self, raw: bytes, error: RemoteError) -> list[Action]:
        """A message that broke the rules (its body): it is in the log of every seat that took
        it, the evidence; the game stops, said to all."""
        out: list[Action] = [] if self.raws and self.raws[-1] == raw else [Keep(raw)]
        return out + self._stopped(error)

    def _forfeited_while_here(self, raw: bytes, reason: str, via: int, now: float) -> list[Action]:
        """A FORFEIT naming us, who are here: never signed.

        A joiner cannot go on: the host relays no more of its messages. It keeps the FORFEIT
        in its transcript (where a message of its own stands at the same place, the two are the
        evidence of a fork) and stops. The host goes on, as the relay of everyone else's game:
        the declarer has left the table in effect, its connection is dropped, and it forfeits
        if its message comes due and does not come. The declarer's own transcript holds its
        claim; the others never see it."""
        message = parse(raw)
        declarer = self.names[message.seat]
        where = " at the place of a message of ours" if message.seq < len(self.session.log) else ""
        said = f"{declarer} declared{where} that {self.me} forfeits the match ({reason}); {self.me} does not sign " \
            "its own forfeit"
        if self.session.seat == HOST:
            return self.transport.drop(via, said, now)
        self.result = Refused(f"{said}, and keeps the declaration in the transcript")
        return [Keep(raw)]

    def _stopped(self, error: SessionError) -> list[Action]:
        """The session stopped: name whoever stopped it, and tell the others unless they know."""
        names = self.names
        if isinstance(error, Convicted):
            self.result = RemoteTableError(f"{names[error.seat]} (seat {error.seat}): {error.reason}", error.seat)
            return self._shown()
        if isinstance(error, RemoteError):
            self.result = RemoteTableError(f"{names[error.seat]} (seat {error.seat}): {error.reason}", error.seat)
            return self._shown() + self._abort(f"{names[error.seat]} (seat {error.seat}) broke the rules: "
                                               f"{error.reason}", error.seat)
        if isinstance(error, Aborted):
            outcome = self.session.outcome
            # The sender left a match under way: it forfeits, and the match has its result.
            self.result = outcome if outcome is not None else RemoteTableError(
                f"{names[error.seat]} (seat {error.seat}) stopped the game: {error.reason}", error.culprit)
            return self._shown()
        self.result = TableError(f"this program failed: {error}")
        return self._shown() + self._abort(f"{self.me} failed: {error}", None)

    def _abort(self, reason: str, culprit: int | None) -> list[Action]:
        """Our signed reason for stopping, and whom we blame, to the others (best effort)."""
        try:
            message = self.session.abort(reason, culprit)
        except SessionError:
            return []
        return self._logged(message) + self._shown()

    def _forfeit_of_ours(self, raw: bytes) -> str | None:
        """The reason, if ``raw`` is a validly signed FORFEIT naming us, the first one, at the
        log's head or at a place where our own message stands."""
        session = self.session
        try:
            message = parse(raw)
            message.verify(session.table.players[message.seat].key)
        except (SignatureError, IndexError):
            return None
        body = message.body
        if not isinstance(body, Forfeit) or body.seat != session.seat or message.seq > len(session.log) \
                or session.leaver is not None:
            return None
        if message.seq == len(session.log):
            return body.reason if message.prev == session.head else None
        ours = session.log[message.seq]
        return body.reason if ours.seat == session.seat and ours.prev == message.prev else None

    def _time_up(self, now: float) -> bool:
        """The host's clock decides whether a timed match goes on."""
        minutes = self.session.table.length.minutes
        return minutes is not None and now - self.started >= minutes * 60


class Playing:
    """What a host's and a joiner's machines share once their game is under way: their peer's
    steps. The edge calls ``work`` while ``busy``, each time once what was queued has left,
    before it hands in the next event (a frame that came meanwhile waits its turn)."""

    peer: Peer | None

    @property
    def finished(self) -> bool:
        raise NotImplementedError

    @property
    def busy(self) -> bool:
        """Whether ``work`` has a step to do (``Peer.busy``)."""
        return not self.finished and self.peer is not None and self.peer.busy

    def work(self, now: float) -> list[Action]:
        if not self.busy:
            return []
        assert self.peer is not None
        return self._settle(self.peer.work(now), now)

    def _settle(self, out: list[Action], now: float) -> list[Action]:
        """What follows any step or event: the machine's own bookkeeping."""
        raise NotImplementedError
