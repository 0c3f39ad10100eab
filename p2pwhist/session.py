"""One peer's side of a whole match: a pure state machine over signed messages.

Everything that decides which message is legal next lives here (``protocol/session.md``):

- The game is one log. Its messages form a hash chain: message N carries N and the hash of
  message N−1, and is signed by its sender. Exactly one seat may send each message, fixed by
  the protocol's schedule below, so every honest peer expects the same sender and kind at
  every step; a message from anyone else is out of turn.
- Schedule (version 2): START (host) · ACCEPT from each joiner · the cut (a shuffled pack; each
  seat is shown one card by the secrets) · then per hand: HAND (host: another hand, or the
  end) · SHUFFLE, LOCK from each seat in order · PLAY by the seat to act, with KEYS only where
  the next mover needs them (§4) · SECRET from each seat, each followed by the same seat's
  COMMIT to the next hand's deck · and at the end FINAL from each seat. ABORT may come from
  any seat at any time and ends the game. Between hands of an open match each seat says
  whether to play on, the first "no" ending it; in a match of set hands whose winner the
  hands left cannot change (log version 4), each seat says whether to stop, the first "play
  on" playing on (§2, the early stop).
- Every received message is checked before it changes anything: chain, sender, kind,
  signature, then its body with the deck module (``p2pwhist.deck``) and the rules engine
  (``p2pwhist.games``). A failure is a ``RemoteError`` naming the seat at fault; after any
  error the session is over and every later call fails.
- Moves and the host's decision to play on come in from the caller: the session says what it
  needs (``need``) and makes our message from it (``produce``). Randomness comes from the
  secret source given at construction.
- What a user interface shows goes out as typed events (``p2pwhist.session_events``): a seat
  taken, a deal, the table, a move, a result, whom the log waits for. The caller drains them
  (``take_events``) after each message; nothing else of the session need be read to follow it.

The session never mentions a particular game: it drives any ``Game`` through its interface.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Generator, Generic, Iterable, TypeAlias, TypeVar, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.bodies import (
    Abort,
    Accept,
    Body,
    CardPlay,
    Dispute,
    Forfeit,
    MatchSigned,
    NextHand,
    Table,
    kind_of_type,
    one_line,
)
from p2pwhist.cards import Card
from p2pwhist.deck import (
    Claim,
    Commitment,
    Deck,
    DeckParams,
    LocalDeckError,
    LockPass,
    PositionKeys,
    RemoteDeckError,
    Revealed,
    SecretReveal,
    ShufflePass,
    UnattributedDeckError,
)
from p2pwhist.games.base import (
    ConfigError,
    EngineMisuse,
    HandResult,
    HandState,
    HonourPolicy,
    IllegalMove,
    Play,
    audit,
    best_score,
)
from p2pwhist.games.match import Match
from p2pwhist.session_events import (
    Awaiting,
    Dealing,
    Forfeited,
    HandOver,
    MatchOver,
    Moved,
    Outcome,
    Seated,
    SessionEvent,
    Settled,
    TableChanged,
    Why,
)
from p2pwhist.signed import (
    GENESIS_PREV,
    Kind,
    SignatureError,
    SignedMessage,
    parse,
    public_bytes,
    seal,
)

HOST = 0
SECRET_SIZE = 32
EARLY_STOP_VERSION = 4  # the log version from which a settled match may stop early (session.md §2)
CUT_HAND = 0  # the deck protocol's hand number for the cut; real hands count from 1


class SessionError(Exception):
    """The game cannot go on."""


class LocalError(SessionError):
    """We asked the session for something the protocol does not allow now."""


class RemoteError(SessionError):
    """Seat ``seat`` broke the protocol; ``seq`` is the offending message, if one arrived."""

    def __init__(self, seat: int, reason: str, seq: int | None = None) -> None:
        self.seat = seat
        self.reason = reason
        self.seq = seq
        super().__init__(f"seat {seat}: {reason}")


class BadMessage(RemoteError):
    """A message that is malformed or not validly signed by the seat it names: it proves
    nothing about that seat, so the connection that carried it is blamed."""


class BrokenChain(RemoteError):
    """A validly signed message that does not follow the log: replayed, reordered, dropped or
    forked. An honest relay would not have forwarded it, so the carrying connection is blamed."""


class Convicted(RemoteError):
    """The protocol itself reached this verdict (a dispute settled by the audit): every peer
    derives it from the log, so nobody needs to be told. ``seq`` is the message that completed
    the audit's input, where the verdict lands (session.md §5)."""


class Aborted(SessionError):
    """Seat ``seat`` stopped the game and said why, naming ``culprit`` if it blames a seat."""

    def __init__(self, seat: int, reason: str, culprit: int | None = None) -> None:
        self.seat = seat
        self.reason = reason
        self.culprit = culprit
        super().__init__(f"seat {seat} stopped the game: {reason}")


@dataclass(frozen=True)
class _Ended:
    """Why no further hand is played (``_another_hand``): the set hands or time are over, or
    ``declined``, the seat whose "no" ended an open match, or ``stopped``, every seat agreed
    to stop a match of set length whose winner the hands left could not change."""

    declined: int | None = None
    stopped: bool = False


class Need(enum.Enum):
    """What the session needs before our next message can be made."""

    PEER = "a message from another seat"
    SEND = "nothing: call produce()"
    MOVE = "our move"
    DECISION = "the host's decision: is the match's time up?"
    WISH = "our wish: another hand of an open match?"
    STOP = "our answer: stop a match of set length now that its winner is settled?"
    DONE = "nothing: the match is over"


def start_message(key: Ed25519PrivateKey, table: Table) -> SignedMessage:
    """The host's genesis message."""
    if table.players[HOST].key != public_bytes(key.public_key()):
        raise LocalError("the host sits in seat 0")
    return seal(key, 0, GENESIS_PREV, HOST, table)


# What a turn waits for, in the words of ``session_events``: what the seat's player is asked
# for, if anything; else what the body is.
_WHY_OF_NEED = {Need.MOVE: Why.MOVE, Need.WISH: Why.WISH, Need.STOP: Why.STOP, Need.DECISION: Why.DECISION}
_WHY_OF_BODY: dict[type, Why] = {
    Accept: Why.ACCEPT, Commitment: Why.COMMIT, ShufflePass: Why.SHUFFLE, LockPass: Why.SHUFFLE,
    PositionKeys: Why.KEYS, SecretReveal: Why.SECRET, Forfeit: Why.FORFEIT, MatchSigned: Why.FINAL,
}

BodyT_co = TypeVar("BodyT_co", bound=Body, covariant=True)
_ErrorT = TypeVar("_ErrorT", bound=SessionError)
# A deck message that is a log message's whole body (a claim travels inside a PLAY).
_DeckBody: TypeAlias = Commitment | ShufflePass | LockPass | PositionKeys | SecretReveal


@dataclass(frozen=True)
class _Turn(Generic[BodyT_co]):
    """The next message the schedule expects: its sender and the type of its body (which fixes
    its kind), and, for our own seat, what we need from outside and how to make the body from it."""

    seat: int
    body: type[BodyT_co]
    need: Need = Need.SEND
    make: Callable[[Any], BodyT_co] | None = None

    @property
    def kind(self) -> Kind:
        return kind_of_type(self.body)

    @property
    def why(self) -> Why:
        return _WHY_OF_NEED.get(self.need) or _WHY_OF_BODY[self.body]

    def body_of(self, message: SignedMessage) -> BodyT_co:
        """The body of ``message``, taken for this turn: ``Session._take`` made sure that it is
        a ``body``, so the schedule reads it as one."""
        return cast(BodyT_co, message.body)


Script = Generator[_Turn, SignedMessage, None]


class Session:
    """One seat's session, from the host's START message on; see the module docstring.

    Use: while ``need`` is not DONE, either feed peers' messages to ``receive`` (when
    ``need`` is PEER) or call ``produce`` with what ``need`` asks for and send the result;
    after each, hand ``take_events()`` to the user interface.
    """

    def __init__(
        self,
        start: SignedMessage,
        seat: int | None,
        key: Ed25519PrivateKey | None,
        new_secret: Callable[[], bytes] | None,
    ) -> None:
        """``new_secret`` gives each hand's deck secret: ``secrets.token_bytes(32)`` in play (OS
        randomness, protocol/deck.md §10.6), the saved secrets when resuming, fixed bytes in tests.
        With ``seat``, ``key`` and ``new_secret`` None the session is an observer: see ``observe``."""
        table = start.body
        if start.seq != 0 or not isinstance(table, Table) or start.seat != HOST or start.prev != GENESIS_PREV:
            raise RemoteError(HOST, "the first message must be the host's START", start.seq)
        self.table = table
        start.verify(self.table.players[HOST].key)
        if seat is not None and (key is None or self.table.players[seat].key != public_bytes(key.public_key())):
            raise LocalError(f"seat {seat} of this table has another key")
        self.seat = seat
        self._key = key
        self._new_secret = new_secret
        self.game = self.table.game
        self.players = self.game.players
        self.game_id = hashlib.sha256(start.raw).digest()
        self.log: list[SignedMessage] = [start]
        self.match: Match | None = None
        self.hand: HandState | None = None  # the hand in progress, or the last one
        self.deck: Deck | None = None  # its deck
        # each finished hand replayed with every card known; None where the deck audit failed
        self.audited: list[HandState | None] = []
        self.outcome: Outcome | None = None
        self._error: SessionError | None = None
        self._anomaly: UnattributedDeckError | None = None  # a bad reveal we must dispute
        self._blind_round: int | None = None  # a blind card whose keys round is under way
        self._open_deck: Deck | None = None  # the deck whose cards are being revealed
        self._published: list[set[int]] = []  # per seat, the positions it has published keys for
        self._begun = False  # every seat has accepted: from now on, leaving forfeits the match
        self._leaver: Forfeited | None = None
        self._settled: Settled | None = None  # the last settled winner told, for a resume at its question
        self._events: list[SessionEvent] = [Seated(table, seat)]  # not yet drained (``take_events``)
        self._table_changed = False  # the hand's table changed since the last TableChanged
        self._told: tuple[int, Why] | None = None  # the wait last told (or ours): Awaiting comes on a change
        self._script = self._run()
        self._turn: _Turn | None = next(self._script)
        self._tell_turn()

    @classmethod
    def resume(cls, log: list[SignedMessage], seat: int, key: Ed25519PrivateKey,
               new_secret: Callable[[], bytes]) -> Session:
        """Our session rebuilt from our transcript (``log``) and a secret source that gives
        back the secrets we drew, in order, before any new one (session.md §7): every message
        of ours is made again and must come out byte for byte as it was sent. Its events say
        where the game stands, not how it got there (``_tell_present``)."""
        session = cls(log[0], seat, key, new_secret)
        for message in log[1:]:
            session.restore(message)
        session._tell_present()
        return session

    @staticmethod
    def observe(start: SignedMessage) -> Session:
        """A session that holds no seat and only checks: it takes every message of a game (as a
        transcript holds them) with every check a seat makes, but knows only public cards until
        each hand's secrets are revealed. ``p2pwhist verify`` is built on it."""
        return Session(start, None, None, None)

    # -- the caller's side ---------------------------------------------------------------

    @property
    def need(self) -> Need:
        if isinstance(self._error, Convicted):
            return Need.DONE  # the verdict is in ``error``
        self._check_alive()
        if self._turn is None or self._leaver is not None and self._leaver.seat == self.seat:
            return Need.DONE  # over, or over for us: we were declared forfeit
        if self._turn.seat != self.seat:
            return Need.PEER
        return Need.SEND if self._to_dispute is not None else self._turn.need

    @property
    def waiting_for(self) -> int | None:
        """The seat whose message comes next."""
        return None if self._turn is None else self._turn.seat

    @property
    def expected_kind(self) -> Kind | None:
        """The kind of the message the schedule expects next."""
        return None if self._turn is None else self._turn.kind

    @property
    def head(self) -> bytes:
        return self.log[-1].digest

    def view(self) -> Any:
        """Our seat's view of the hand in progress (for choosing a move)."""
        if self.hand is None:
            raise LocalError("no hand in progress")
        return self.hand.view(self.seat)

    def take_events(self) -> list[SessionEvent]:
        """What happened since the last call, oldest first (``p2pwhist.session_events``): drain
        them after every message taken or made, and before, for START or a resumed game."""
        events, self._events = self._events, []
        return events

    def produce(self, value: Any = None) -> SignedMessage:
        """Make, sign and take our next message; ``value`` is what ``need`` asked for."""
        need = self.need
        if need in (Need.PEER, Need.DONE):
            raise LocalError(f"it is not our turn to send (waiting for {need.value})")
        turn = self._turn
        assert turn is not None and turn.make is not None and self._key is not None and self.seat is not None
        anomaly = self._to_dispute
        if anomaly is not None:  # our turn comes: dispute the bad reveal instead
            dispute = Dispute(anomaly.position, one_line(str(anomaly)))
            message = seal(self._key, len(self.log), self.head, self.seat, dispute)
            self._take_dispute(message, dispute)
            return message
        message = seal(self._key, len(self.log), self.head, self.seat, turn.make(value))
        self._take(message)
        return message

    def restore(self, message: SignedMessage) -> None:
        """Take a message of our own transcript: a peer's as received, ours made again from
        what it says (the move, the wish) and the secret source, and refused (``LocalError``)
        unless the result is the very same bytes. Ed25519 signatures are deterministic and
        every deck step is a function of the hand's secret, so an honest transcript always
        matches; one that does not was damaged or edited, and resuming from it could make us
        sign two different messages at one ``seq``."""
        if message.seat != self.seat:
            self.receive_parsed(message, message.seat)
            return
        body = message.body
        if isinstance(body, Forfeit) and self._leaver is None:
            ours = self.forfeit(body.seat, body.reason)
        elif isinstance(body, Abort):
            ours = self.abort(body.reason, body.culprit)
        else:
            if message.kind is not self.expected_kind and message.kind is not Kind.DISPUTE:
                raise LocalError(f"message {message.seq} of our transcript is a {message.kind.value}, "
                                 f"where the log calls for a {self.expected_kind.value if self.expected_kind else 'nothing'}")
            ours = self.produce(self._value_in(message))
        if ours.raw != message.raw:
            raise self._fail(LocalError(f"message {message.seq} of our transcript is not the message this seat "
                                        "makes there: the transcript or the secrets file was changed"))

    def _value_in(self, message: SignedMessage) -> Any:
        """What ``need`` asked for when we made ``message``, read back from it."""
        need, body = self.need, message.body
        if need is Need.MOVE and isinstance(body, CardPlay):
            return Play.from_wire(body.position, len(self.game.deck()))
        if need in (Need.WISH, Need.STOP, Need.DECISION) and isinstance(body, NextHand):
            return body.more if need is Need.WISH else not body.more  # STOP and DECISION ask: stop? time up?
        return None

    def receive(self, raw: bytes, via: int) -> SignedMessage:
        """Check and take a peer's message; ``via`` is the seat whose connection carried it."""
        return self.take(self.check(raw, via))

    def receive_parsed(self, message: SignedMessage, via: int, signature_checked: bool = False) -> SignedMessage:
        """``receive`` for a message already parsed, as ``read_transcript`` yields a file's."""
        return self.take(self.check_parsed(message, via, signature_checked))

    def check(self, raw: bytes, via: int, fatal: bool = True) -> SignedMessage:
        """The envelope checks alone, which change nothing: well formed, validly signed by the
        seat it names, carried by that seat's connection (or the host's), and next in the log.
        A relay forwards what passes, then ``take``s it. A message failing here is blamed on
        ``via``, the connection that carried it: it proves nothing against the seat it names.
        Not ``fatal``, a failure leaves the session as it was: a peer in play drops the
        connection that carried it and goes on (session.md §5); a verifier ends there."""
        self._check_alive()
        try:
            message = parse(raw)
        except SignatureError as error:
            raise self._refuse(BadMessage(via, str(error), len(self.log)), fatal) from None
        return self.check_parsed(message, via, fatal=fatal)

    def check_parsed(self, message: SignedMessage, via: int, signature_checked: bool = False,
                     fatal: bool = True) -> SignedMessage:
        """``check`` for a message already parsed. ``signature_checked`` says the caller has
        checked ``message``'s signature against this table's key for the seat it names
        (``verify`` has a helper process do it, p2pwhist.signatures)."""
        self._check_alive()
        if not signature_checked:
            try:
                players = self.table.players
                message.verify(players[message.seat].key if message.seat < len(players) else b"")
            except SignatureError as error:
                raise self._refuse(BadMessage(via, str(error), len(self.log)), fatal) from None
        seq = len(self.log)
        if via not in (message.seat, HOST):
            # Only the host relays: a joiner's connection carries that joiner's messages alone.
            raise self._refuse(BadMessage(via, f"sent a message signed by seat {message.seat}", seq), fatal)
        if message.seq != seq or message.prev != self.head:
            reason = (
                f"message {message.seq} from seat {message.seat} does not follow this peer's message {seq - 1}: "
                "a reordered, replayed or dropped message, or a relay showing peers different histories"
            )
            raise self._refuse(BrokenChain(via, reason, message.seq), fatal)
        return message

    def _refuse(self, error: RemoteError, fatal: bool) -> RemoteError:
        return self._fail(error) if fatal else error

    def take(self, message: SignedMessage) -> SignedMessage:
        """Take a message that passed ``check``: the schedule, then its body."""
        self._check_alive()
        seq = len(self.log)
        body = message.body  # of the type its kind calls for (``bodies.decode``)
        if isinstance(body, Abort):
            self.log.append(message)
            culprit = body.culprit if body.culprit is not None and body.culprit < self.players else None
            if self._begun and self._leaver is None:
                # Leaving costs the match, whatever the blame (session.md §7.3): the sender's ABORT
                # follows every message we took, so any message it refused is one we found good.
                self._settle_forfeit(message.seat, body.reason, message.seq,
                                     culprit if culprit != message.seat else None)
            raise self._fail(Aborted(message.seat, body.reason, culprit))
        if isinstance(body, Forfeit) and self._leaver is None:
            self._take_forfeit(message, body)
            return message
        turn = self._turn
        if isinstance(body, Dispute) and turn is not None and message.seat == turn.seat:
            self._take_dispute(message, body)
            return message
        if turn is None:
            raise self._refuse_taken(message, RemoteError(message.seat, "sent a message after the match ended", seq))
        if message.seat != turn.seat or message.kind is not turn.kind:
            raise self._refuse_taken(message, RemoteError(
                message.seat, f"sent {message.kind.value} out of turn (expected {turn.kind.value} from seat {turn.seat})", seq))
        if message.seat == self.seat:
            raise self._refuse_taken(message, RemoteError(
                HOST, "relayed a message signed with our own key that we never sent", seq))
        self._take(message)
        return message

    @property
    def signer(self) -> Callable[[bytes], bytes] | None:
        """Signs with our seat's key what we say outside the log (table talk, wire.md §2.6),
        whose statements are prefixed so that none can pass for a message; None: an observer."""
        return self._key.sign if self._key is not None else None

    def abort(self, reason: str, culprit: int | None = None) -> SignedMessage:
        """Our signed notice that we stop the game, and whom we blame, to send to the others
        before leaving (and to keep in our transcript)."""
        if self._key is None or self.seat is None:
            raise LocalError("an observer sends nothing")
        message = seal(self._key, len(self.log), self.head, self.seat, Abort(one_line(reason), culprit))
        self.log.append(message)
        # Leaving costs the match, unless we stop over a message of the culprit's that the log
        # holds and every other seat refuses as we did (a proven breach).
        error = self._error
        proven = isinstance(error, RemoteError) and not isinstance(error, Convicted) and error.seat == culprit \
            and culprit != self.seat
        if self._begun and self._leaver is None and not proven:
            self._settle_forfeit(self.seat, reason, message.seq,
                                 culprit if culprit not in (None, self.seat) else None)
        self._error = self._error or Aborted(self.seat, reason, culprit)
        return message

    def forfeit(self, seat: int, reason: str) -> SignedMessage:
        """Our signed FORFEIT: ``seat``, whose message is due (or the host, our relay), stayed
        away past the table's wait or took longer than the limit, and loses the match
        (session.md §7). The other remaining seats then sign the same, and each signs FINAL."""
        self._check_alive()
        if self._key is None or self.seat is None:
            raise LocalError("an observer sends nothing")
        notice = Forfeit(seat, one_line(reason))
        message = seal(self._key, len(self.log), self.head, self.seat, notice)
        refusal = self._forfeit_refusal(message.seat, notice)
        if refusal is not None:
            raise LocalError(f"we may not declare that forfeit: {refusal}")
        self._take_forfeit(message, notice)
        return message

    @property
    def error(self) -> SessionError | None:
        return self._error

    @property
    def begun(self) -> bool:
        """Whether every seat has accepted: from then on, a seat that leaves forfeits."""
        return self._begun

    @property
    def leaver(self) -> Forfeited | None:
        """The seat that left the match (a FORFEIT, or its own ABORT), if one did."""
        return self._leaver

    # -- internals -----------------------------------------------------------------------

    def _check_alive(self) -> None:
        if self._error is not None:
            raise LocalError(f"the session is over: {self._error}")

    def _fail(self, error: _ErrorT) -> _ErrorT:
        self._error = error
        self._turn = None
        return error

    def _refuse_taken(self, message: SignedMessage, error: RemoteError) -> SessionError:
        """Refuse ``message``, which passed the envelope, for ``error``: it goes in the log
        first, as every peer records it before judging it, so that the evidence is in every
        transcript and our ABORT follows it (session.md §5)."""
        self.log.append(message)
        return self._fail(error)

    def _take(self, message: SignedMessage) -> None:
        """Append ``message``, of our turn or a peer's that ``take`` checked, and run the schedule on."""
        turn = self._turn
        assert turn is not None
        if not isinstance(message.body, turn.body):  # parsing decodes a kind to its body; ``make`` is typed
            raise self._fail(LocalError(f"internal error at message {message.seq}: a {type(message.body).__name__} "
                                        f"where the schedule expects a {turn.body.__name__}"))
        self.log.append(message)
        self._advance(lambda: self._script.send(message), message)

    def _advance(self, step: Callable[[], _Turn], message: SignedMessage) -> None:
        """Run the schedule to its next turn, turning its errors into the session's."""
        try:
            self._turn = step()
        except StopIteration:
            self._turn = None
        except Convicted as verdict:  # reached by every peer from the log: not our failure
            self._fail(verdict)
        except (RemoteError, LocalError) as error:
            raise self._fail(error) from None
        except RemoteDeckError as error:
            raise self._fail(RemoteError(error.seat, error.detail, message.seq)) from None
        except (EngineMisuse, LocalDeckError) as error:  # a bug of ours: end cleanly all the same
            raise self._fail(LocalError(f"internal error at message {message.seq}: {error}")) from None
        self._tell_turn()

    def _tell_turn(self) -> None:
        """Once the schedule has reached its next turn: the table, if it changed and whatever
        it was revealing has arrived (until a round of KEYS is over, a seat's view may hold a
        card drawn but not yet known to it); and whom the log waits for, if that changed."""
        turn = self._turn
        if self._table_changed and (turn is None or turn.kind is not Kind.KEYS):
            assert self.match is not None and self.hand is not None
            self._table_changed = False
            self._events.append(TableChanged(self.match, self.hand))
        told = None if turn is None else (turn.seat, turn.why)
        if told != self._told:
            self._told = told  # ours too: the same wait after our turn is told again
            if turn is not None and turn.seat != self.seat:
                self._events.append(Awaiting(turn.seat, turn.why))

    def _tell_present(self) -> None:
        """Replace the events of a rebuild (``resume``) by where the game stands. Its events
        told the whole game again; a user interface coming back wants the table as it is now,
        not every trick of every hand printed again, nor every hand's result to dismiss."""
        self._events = [Seated(self.table, self.seat)]
        match = self.match
        self._table_changed = match is not None and len(match.results) < len(match.hands)
        if self.outcome is not None:
            self._events.append(MatchOver(self.outcome))
        elif self._turn is not None and self._turn.need is Need.STOP:  # the question asked: why it is
            self._events.append(cast(Settled, self._settled))
        self._told = None
        self._tell_turn()

    def _tell_hand_over(self, match: Match) -> None:
        """The hand just recorded in ``match``: what is left to show of it is its result."""
        self._table_changed = False
        self._events.append(HandOver(len(match.results), match.hands[-1], match.results[-1], match.points))

    def _conclude(self, outcome: Outcome) -> None:
        """The match's result is settled: what is left of the log is the seats' signatures on it."""
        self.outcome = outcome
        self._events.append(MatchOver(outcome))

    def _take_dispute(self, message: SignedMessage, dispute: Dispute) -> None:
        """A seat disputes a reveal, at its turn: every seat reveals its secret, and the audit
        names whoever cheated (or the disputer, if nobody did)."""
        deck = self._open_deck
        self.log.append(message)
        if deck is None:
            raise self._fail(self._remote(message, "disputed a reveal when no deck is being revealed"))
        if self._leaver is not None:  # no audit changes a settled result (session.md §5)
            raise self._fail(self._remote(
                message, "disputed a reveal after a forfeit settled the match: what is left is signatures on its result"))
        self._script = self._dispute(deck, message.seat, dispute.position)
        self._advance(lambda: next(self._script), message)

    def _forfeit_refusal(self, sender: int, notice: Forfeit) -> str | None:
        """Why ``notice``, a FORFEIT from seat ``sender``, may not come now; None if it may."""
        turn = self._turn
        if not self._begun or turn is None:
            return "a forfeit comes only after every seat has accepted and before the match ends"
        if self.outcome is not None:
            return "the match is over: its result follows from the log, whoever signs FINAL"
        if notice.seat == sender:
            return "a seat does not declare its own forfeit: it leaves with ABORT"
        if notice.seat == self.seat:
            return "it names this seat, which is here to say otherwise: a seat never signs its own forfeit"
        if notice.seat >= self.players or notice.seat not in (turn.seat, HOST):
            return (f"it names seat {notice.seat}, but only the seat whose message is due (seat {turn.seat}) "
                    "or the host forfeits")
        return None

    def _take_forfeit(self, message: SignedMessage, notice: Forfeit) -> None:
        """The first FORFEIT (``notice``, the body of ``message``): the match is settled against
        the seat it names, and what is left of the log is the other seats' signatures on it,
        then on the match result."""
        refusal = self._forfeit_refusal(message.seat, notice)
        self.log.append(message)  # refused or not: every peer records it before judging it (session.md §5)
        if refusal is not None:
            raise self._fail(self._remote(message, f"declared a forfeit it may not: {refusal}"))
        self._settle_forfeit(notice.seat, notice.reason, message.seq)
        self._anomaly = None  # the match is settled: a pending dispute no longer matters
        self._script = self._forfeit_signatures(notice, message.seat)
        self._advance(lambda: next(self._script), message)

    def _settle_forfeit(self, seat: int, reason: str, seq: int, blamed: int | None = None) -> None:
        self._leaver = Forfeited(seat, reason, seq, blamed)
        match = self.match
        if match is None:  # during the cut: nobody has points
            points = (0,) * self.players
            self._conclude(Outcome((), points, best_score(points, frozenset({seat})), self._leaver))
            return
        recorded = len(match.results)
        match.forfeit(seat)
        if len(match.results) > recorded:  # the hand in progress, scored as it stands
            self._tell_hand_over(match)
        self._conclude(Outcome(tuple(match.results), match.points, match.winner, self._leaver))

    def _forfeit_signatures(self, notice: Forfeit, first: int) -> Script:
        """After the first FORFEIT: every other remaining seat, in order, signs the same;
        then every remaining seat signs FINAL on the forfeited match's result."""
        for seat in range(self.players):
            if seat not in (notice.seat, first):
                message = yield _Turn(seat, Forfeit, make=lambda _: notice)
                if message.body != notice:
                    raise self._remote(message, "signs a different forfeit")
        assert self.outcome is not None
        yield from self._final_signatures(self.outcome, [seat for seat in range(self.players) if seat != notice.seat])

    def _remote(self, message: SignedMessage, reason: str) -> RemoteError:
        return RemoteError(message.seat, reason, message.seq)

    # -- the schedule --------------------------------------------------------------------

    def _run(self) -> Script:
        n = self.players
        for seat in range(1, n):
            yield _Turn(seat, Accept, make=lambda _: Accept())
        self._begun = True
        self._events.append(Dealing(CUT_HAND))
        cut_deck = self._new_deck(CUT_HAND)
        for seat in range(n):
            yield from self._deck_step(cut_deck, _Turn(seat, Commitment, make=lambda _: cut_deck.commit()))
        yield from self._passes(cut_deck)
        # No keys: every cut card is shown to everyone, so the secrets, which the audit needs
        # anyway, reveal the cut (session.md §2). Each seat commits to hand 1's deck with it.
        deck = self._new_deck(1)
        yield from self._open(cut_deck, deck)
        verdict = cut_deck.audit()
        if verdict.deviation is not None:
            raise Convicted(verdict.deviation.seat, f"cheated in the cut: {verdict.deviation}", len(self.log) - 1)
        assert verdict.cards is not None  # every pass checked out (deck.md §8)
        self.match = match = Match.after_cut(self.game, self.table.length, verdict.cards[:n])
        while (ended := (yield from self._another_hand(match))) is None:
            deck = yield from self._hand(match, deck)
        outcome = Outcome(tuple(match.results), match.points, match.winner, declined=ended.declined,
                          stopped=ended.stopped)
        self._conclude(outcome)
        yield from self._final_signatures(outcome, range(n))

    def _final_signatures(self, outcome: Outcome, seats: Iterable[int]) -> Script:
        """Each of ``seats`` in order signs FINAL on ``outcome``."""
        summary = MatchSigned(outcome.points, outcome.winner)
        for seat in seats:
            turn = _Turn(seat, MatchSigned, make=lambda _: summary)
            message = yield turn
            if message.body != summary:
                raise self._remote(message, f"signs a different match result: {_summary(turn.body_of(message))}")

    def _another_hand(self, match: Match) -> Generator[_Turn, SignedMessage, _Ended | None]:
        """None if another hand is played, else why not (session.md §2). With a set number of
        hands or minutes the host says so, as the configuration requires (its clock decides a
        timed match). In an open match the host starts the first hand; before each later one
        every seat in turn says whether it wishes to play on, and the first "no" ends the
        match. In a match of set hands whose winner the hands left cannot change (log version
        4), every seat in turn is asked whether to stop, and the first "play on" plays on: the
        match stops only if every seat agrees."""
        length = self.table.length
        if length.open and match.hands and not match.is_over():
            for seat in range(self.players):
                turn = _Turn(seat, NextHand, Need.WISH, lambda wish: NextHand(bool(wish)))
                message = yield turn
                if not turn.body_of(message).more:
                    return _Ended(declined=seat)
            return None
        winner = match.settled
        if winner is not None and self.table.version >= EARLY_STOP_VERSION:
            self._settled = Settled(winner, cast(int, length.hands) - len(match.hands))
            self._events.append(self._settled)
            for seat in range(self.players):
                turn = _Turn(seat, NextHand, Need.STOP, lambda stop: NextHand(not stop))
                message = yield turn
                if turn.body_of(message).more:
                    return None
            return _Ended(stopped=True)
        decision = _Turn(HOST, NextHand, Need.DECISION, lambda up: NextHand(not match.is_over(bool(up))))
        message = yield decision
        more = decision.body_of(message).more
        if more and match.is_over(time_up=False) or not more and (length.minutes is None or not match.hands) \
                and not match.is_over():
            raise self._remote(message, "decided the match length against the agreed configuration")
        return None if more else _Ended()

    def _new_deck(self, number: int) -> Deck:
        """Deck ``number`` (0 the cut, then each hand's), with our fresh secret: drawn here, at
        the same place of the schedule on every run, so a rebuilt session (``resume``) asks
        the secret source for the saved secrets in the order they were first drawn."""
        params = DeckParams(self.game_id, number, tuple(self.game.deck()), self.players)
        if self._new_secret is None:
            return Deck.observer(params)
        secret = self._new_secret()
        if not isinstance(secret, bytes) or len(secret) != SECRET_SIZE:
            raise LocalError("the secret source must give 32 bytes of OS randomness")
        return Deck(params, self.seat, secret)

    def _passes(self, deck: Deck) -> Script:
        """Shuffle passes, then lock passes, each seat in order (every seat has committed).
        Starts a new record of which keys each seat has published."""
        self._published = [set() for _ in range(self.players)]
        for seat in range(self.players):
            yield from self._deck_step(deck, _Turn(seat, ShufflePass, make=lambda _: deck.shuffle_pass()))
        for seat in range(self.players):
            yield from self._deck_step(deck, _Turn(seat, LockPass, make=lambda _: deck.lock_pass()))
        self._open_deck = deck

    def _deck_step(self, deck: Deck, turn: _Turn[_DeckBody]) -> Generator[_Turn, SignedMessage, tuple[Revealed, ...]]:
        """Expect one deck message; a peer's goes through the deck module's checks."""
        message = yield turn
        if message.seat == self.seat:
            return ()
        return self._deck_receive(deck, message.seat, turn.body_of(message))

    def _deck_receive(self, deck: Deck, sender: int, body: _DeckBody) -> tuple[Revealed, ...]:
        """A peer's deck message, through the deck module's checks: the cards it reveals to us."""
        try:
            return deck.receive(sender, body)
        except UnattributedDeckError as error:
            self._note_anomaly(error)
            return ()

    @property
    def _to_dispute(self) -> UnattributedDeckError | None:
        """The bad reveal our next message disputes, if any. Not that of a blind card whose
        keys round is under way: the round's end judges it for every seat alike
        (``_blind_card``), so a seat that sees it early sends its keys all the same."""
        anomaly = self._anomaly
        return None if anomaly is None or anomaly.position == self._blind_round else anomaly

    def _note_anomaly(self, error: UnattributedDeckError) -> None:
        """A reveal went wrong, and perhaps only we can see it: we dispute it at our next turn,
        a moment every seat agrees on (session.md §5). An observer waits for the dispute, or
        for the end-of-hand audit."""
        if self._anomaly is None and self.seat is not None:
            self._anomaly = error

    def _keys(self, deck: Deck, hand: HandState, learn: Callable[[Revealed], None]) -> Script:
        """After a message that can let seats see more (the deal's last LOCK, a PLAY), the keys
        the next mover needs (session.md §4.1): its sender publishes everything it owes at
        once (it sends on without waiting); then each other seat that owes a key for a
        position the mover may see, in seat order; then the mover, right before its move.
        Each publishes everything it owes; the rest wait until a mover needs them. Once the
        hand is over nobody moves: the SECRETs reveal every card."""
        mover = hand.current_seat
        if mover is None:  # the hand is over
            return
        seen_by = [hand.visible_to(seat) for seat in range(self.players)]  # unchanged by keys
        sender = self.log[-1].seat
        others = [seat for seat in range(self.players) if seat not in (sender, mover)]
        yield from self._publish(deck, seen_by, [sender], learn)
        yield from self._publish(deck, seen_by, others, learn, needed=seen_by[mover])
        yield from self._publish(deck, seen_by, [mover], learn)

    def _reveal_blind(self, deck: Deck, hand: HandState, position: int, learn: Callable[[Revealed], None]) -> Script:
        """A closed box card played blind is shown to all before the move is applied: every
        seat in order, from seat 0, publishes everything it owes, that card included."""
        seen_by = [hand.visible_to(seat) | {position} for seat in range(self.players)]
        self._blind_round = position
        yield from self._publish(deck, seen_by, range(self.players), learn)
        self._blind_round = None

    def _publish(self, deck: Deck, seen_by: list[frozenset[int]], seats, learn: Callable[[Revealed], None],
                 needed: frozenset[int] | None = None) -> Script:
        """Each of ``seats`` in turn that owes keys (for a position in ``needed``, if given)
        sends one KEYS with every key it owes: its key for each position that some other seat
        may see (``seen_by``) and for which it has not yet published one. A peer's KEYS must
        name exactly those positions."""
        for seat in seats:
            owed = set().union(*(seen_by[:seat] + seen_by[seat + 1 :])) - self._published[seat]
            if not owed or needed is not None and not owed & needed:
                continue
            # ``make`` runs, if at all, while the script waits at this very turn: ``owed`` is this seat's.
            turn = _Turn(seat, PositionKeys, make=lambda _: deck.keys_for(sorted(owed)))  # noqa: B023
            message = yield turn
            if message.seat != self.seat:
                keys = turn.body_of(message)
                if set(keys.positions) != owed:
                    raise self._remote(message, f"published keys for other positions than {sorted(owed)}")
                for item in self._deck_receive(deck, message.seat, keys):
                    learn(item)
            self._published[seat] |= owed

    def _open(self, deck: Deck, then: Deck | None = None) -> Script:
        """Every seat reveals its secret, from the sender of the last message on, in seat order
        (it sends on without waiting); with ``then``, each commits to the next deck right
        after its SECRET, long before that deck's first pass (session.md §2, §8)."""
        self._open_deck = None
        self._anomaly = None  # the audit that follows judges everything
        first = self.log[-1].seat
        for seat in [(first + i) % self.players for i in range(self.players)]:
            yield from self._deck_step(deck, _Turn(seat, SecretReveal, make=lambda _: deck.reveal_secret()))
            if then is not None:
                yield from self._deck_step(then, _Turn(seat, Commitment, make=lambda _: then.commit()))

    def _dispute(self, deck: Deck, accused: int, position: int) -> Script:
        """Every secret, then the audit's verdict, which ends the game (session.md §5)."""
        yield from self._open(deck)
        deviation = deck.audit().deviation
        if deviation is not None:
            raise Convicted(deviation.seat, f"cheated in the deal ({deviation}); found at position {position}",
                            len(self.log) - 1)
        raise Convicted(accused, f"disputed position {position}, which the audit found dealt correctly",
                        len(self.log) - 1)

    def _hand(self, match: Match, deck: Deck) -> Generator[_Turn, SignedMessage, Deck]:
        """One hand on ``deck``, committed to already; returns the next hand's deck, to which
        every seat commits during this hand's SECRETs."""
        number = len(match.hands) + 1
        self._events.append(Dealing(number))
        yield from self._passes(deck)
        self.deck = deck
        self.hand = hand = match.start_hand(honour=HonourPolicy.RECORD)
        self._table_changed = True  # dealt: each seat's cards show once their keys are in

        def learn(revealed: Revealed) -> None:
            hand.learn(revealed.position, revealed.card)
            self._table_changed = True

        moves: list[Play] = []
        yield from self._keys(deck, hand, learn)
        while (mover := hand.current_seat) is not None:  # until the hand is over
            turn = _Turn(mover, CardPlay, Need.MOVE, lambda move: self._make_play(deck, hand, move))
            message = yield turn
            move, blind = self._read_play(message, turn.body_of(message), deck, hand, learn)
            try:
                hand.check(move)  # before a blind card is revealed: its legality needs no card
                if blind:
                    yield from self._reveal_blind(deck, hand, move.position, learn)
                    card = self._blind_card(deck, hand, move.position)
                    if card is None:
                        yield from self._dispute(deck, message.seat, move.position)
                    elif deck.known_card(move.position) is None:  # we saw it elsewhere: noted, disputed at our turn
                        learn(Revealed(move.position, card))
                hand.apply(move)
            except IllegalMove as illegal:
                raise self._remote(message, illegal.rule) from None
            moves.append(move)
            self._events.append(Moved(message.seat, move, hand))
            self._table_changed = True
            yield from self._keys(deck, hand, learn)
        following = self._new_deck(number + 1)
        yield from self._open(deck, following)
        match.record(self._judge(deck, match, hand, moves))
        self._tell_hand_over(match)
        return following

    def _blind_card(self, deck: Deck, hand: HandState, position: int) -> Card | None:
        """The card that a closed box card played blind decrypts to once its keys round is
        over, read from the published keys alike by every seat and a verifier; None if the log
        alone shows it false: it decrypts to no card, or to a card every seat may see at another
        position. Every seat then opens the deck at once, at the same message (session.md §5).
        A card that only some seats saw elsewhere is played on, so that the schedule never
        depends on what one seat knows: each of them noted the anomaly, and disputes it at its
        next turn."""
        card = deck.public_card(position)
        public = frozenset.intersection(*(hand.visible_to(seat) for seat in range(self.players))) - {position}
        if card is None or any(deck.public_card(other) == card for other in public):
            return None
        return card

    def _make_play(self, deck: Deck, hand: HandState, move: Any) -> CardPlay:
        if not isinstance(move, Play):
            raise LocalError(f"a move is a Play, not a {type(move).__name__}")
        refused = hand.view(self.seat).refusal(move)
        if refused is not None:
            raise LocalError(f"our own move is illegal: {refused}")
        if deck.known_card(move.position) is not None:
            return CardPlay(deck.claim(move.position))
        return CardPlay(deck.keys_for([move.position]))  # a closed box, played blind

    def _read_play(self, message: SignedMessage, play: CardPlay, deck: Deck, hand: HandState,
                   learn: Callable[[Revealed], None]) -> tuple[Play, bool]:
        """The move that ``play``, the body of ``message``, makes, and whether it is blind;
        checked against what its sender may see, and the card it claims learnt."""
        position, decoded = play.position, play.reveal
        try:
            move = Play.from_wire(position, len(self.game.deck()))
        except ValueError as error:
            raise self._remote(message, str(error)) from None
        sees = position in hand.visible_to(message.seat)
        if play.blind and sees:
            raise self._remote(message, "played blind a card it may see: a card it may see is claimed")
        if not play.blind and not sees:
            raise self._remote(message, "claims a card it may not see: only a closed box card is played, blind")
        if message.seat != self.seat:
            try:
                revealed = deck.receive(message.seat, decoded)
            except UnattributedDeckError as error:
                # The claim checks out against the deck, but names a card this seat saw
                # elsewhere: a pass duplicated it. Play on with the claimed card, and
                # dispute at our next turn (seats that saw less may not have noticed). A
                # blind card's keys round that follows decides what it is (``_blind_card``).
                self._note_anomaly(error)
                revealed = (Revealed(position, decoded.card),) if isinstance(decoded, Claim) else ()
            for item in revealed:
                learn(item)
        self._published[message.seat].add(position)
        return move, play.blind

    def _judge(self, deck: Deck, match: Match, hand: HandState, moves: list[Play]) -> HandResult:
        """The end-of-hand audit: the deck recomputed from the secrets, then every move
        replayed with every card known, which checks following suit (rule 6)."""
        verdict = deck.audit()
        if verdict.deviation is not None or verdict.cards is None:
            culprit = frozenset({verdict.deviation.seat}) if verdict.deviation else frozenset()
            self.audited.append(None)
            return hand.result(culprit)
        try:
            full = audit(self.game, hand.dealer, match.hands[:-1], verdict.cards, moves)
        except (IllegalMove, ConfigError) as error:  # every peer checked these moves live
            raise LocalError(f"the audit replay refused a move all peers accepted: {error}") from None
        self.audited.append(full)
        return full.result()


def _summary(body: MatchSigned) -> str:
    """A signed match result in words, from its checked fields (no repr of a peer's value)."""
    return f"points {'-'.join(map(str, body.points))}, winner {'none' if body.winner is None else f'seat {body.winner}'}"
