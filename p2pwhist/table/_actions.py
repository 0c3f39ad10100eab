"""What goes into the table's machines (events) and what comes out (actions): plain values.

The edge (``p2pwhist.net``) owns the connections, the clock, the files, the person and the
bots. It tells a machine what happened, with the time (``HostMachine.handle``,
``JoinerMachine.handle``, ``tick``), and does what the machine answers, in order. A
connection is named by a number the edge gives it (``ConnId``). Sends on one connection keep
their order; a ``Record`` comes before the ``Send`` of the same message, so that every message
is in our transcript before anyone can hold it (protocol/wire.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from p2pwhist.bodies import Player
from p2pwhist.session import Session
from p2pwhist.session_events import Outcome, SessionEvent
from p2pwhist.signed import SignedMessage
from p2pwhist.table._frames import Notice
from p2pwhist.table._trust import KeyJudgement

ConnId: TypeAlias = int


# -- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opened:
    """A connection is open: on a host, a newcomer at ``address`` (its IP address, which the
    admission limits count); on a joiner, its connection to the host."""

    conn: ConnId
    address: str = ""
    where: str = ""  # address and port, as a person reads them


@dataclass(frozen=True, slots=True)
class OpenFailed:
    """A joiner could not connect to the host: the operating system's words."""

    reason: str


@dataclass(frozen=True, slots=True)
class Received:
    """A whole frame came on ``conn``, within the limit the machine set for it (``frame_limit``)."""

    conn: ConnId
    payload: bytes


@dataclass(frozen=True, slots=True)
class Lost:
    """``conn`` is gone: closed or reset by the peer, or its writes stalled; or, ``bad``, it
    sent bytes that make no frame we take. ``sample`` is the start of what it sent last, if
    anything, to say what the other side was."""

    conn: ConnId
    reason: str
    sample: bytes | None = None
    bad: bool = False


@dataclass(frozen=True, slots=True)
class Vetted:
    """Our answer about ``key`` (``Vet``): whether we play with it, and what we know of it
    (None when we keep no memory of keys), which words a refusal."""

    key: bytes
    trusted: bool
    judgement: KeyJudgement | None = None


@dataclass(frozen=True, slots=True)
class Chosen:
    """Our person's or bot's answer to ``Choose`` or ``Wish`` number ``token``."""

    token: int
    value: Any


@dataclass(frozen=True, slots=True)
class Begun:
    """The game's files exist and our session is made (``Begin``, ``Reopen``)."""

    session: Session


@dataclass(frozen=True, slots=True)
class BeginFailed:
    """The game's files could not be made or reopened (``HomeError``, ``TranscriptError``,
    ``ConfigError``: one line saying why, our own problem to fix)."""

    error: Exception


@dataclass(frozen=True, slots=True)
class Say:
    """Our person says ``text`` at the table (table talk, ``_chat``); ``clock_ms`` is the wall
    clock in milliseconds, from which the line's count starts."""

    text: str
    clock_ms: int


Event: TypeAlias = Opened | OpenFailed | Received | Lost | Vetted | Chosen | Begun | BeginFailed | Say


# -- actions -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    conn: ConnId
    payload: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close ``conn`` once what was queued for it is sent, waiting no longer than ``within``
    seconds for that (0: at once). ``part``: then say we are done and hear the peer out before
    closing (briefly), so that our last words (a REFUSE, an ABORT, DONE) are not destroyed by
    the reset a close with unread data sends."""

    conn: ConnId
    within: float
    part: bool = False


@dataclass(frozen=True, slots=True)
class Connect:
    """Open a connection to the host (a joiner); ``Opened`` or ``OpenFailed`` follows."""


@dataclass(frozen=True, slots=True)
class Vet:
    """Decide whether we play with ``key``, which calls itself ``name``: known keys are
    trusted, a new one may be put to our person (``table.judge_key``); ``Vetted`` follows."""

    name: str
    key: bytes


@dataclass(frozen=True, slots=True)
class Unvet:
    """Never mind the question about ``key``: the player it was about has gone, or was refused
    meanwhile. ``line`` says so to our person, once the question is off their screen."""

    key: bytes
    line: str


@dataclass(frozen=True, slots=True)
class Choose:
    """Our person or bot chooses a move for ``view``; ``Chosen`` with the same token follows."""

    token: int
    view: Any


@dataclass(frozen=True, slots=True)
class Wish:
    """Our person says whether to play another hand of an open match (a bot: yes), or with
    ``stop``, whether to stop a match of set length whose winner is settled (a bot: yes)."""

    token: int
    stop: bool = False


@dataclass(frozen=True, slots=True)
class Unchoose:
    """Stop choosing (a message came first that settles the match): its answer is ignored."""

    token: int


@dataclass(frozen=True, slots=True)
class Begin:
    """Host: make START for ``players`` (seat order, ours first), the game's files, and our
    session; ``Begun`` or ``BeginFailed`` follows at once."""

    players: tuple[Player, ...]


@dataclass(frozen=True, slots=True)
class Sit:
    """Joiner: the host's START seats us: make the game's files and our session from it;
    ``Begun`` or ``BeginFailed`` follows at once."""

    start: SignedMessage
    seat: int


@dataclass(frozen=True, slots=True)
class Reopen:
    """Joiner: rebuild our session from the unfinished game with id ``game`` (its transcript
    and saved secrets); ``Begun`` or ``BeginFailed`` follows at once."""

    game: bytes


@dataclass(frozen=True, slots=True)
class Spectate:
    """Spectator: the host's START opens the game we watch: make its transcript and our
    session, which holds no seat (``Session.observe``); ``Begun`` or ``BeginFailed`` follows
    at once."""

    start: SignedMessage


@dataclass(frozen=True, slots=True)
class Record:
    """Append ``message`` to our transcript; ``sync``: and force it to disk."""

    message: SignedMessage
    sync: bool = False


@dataclass(frozen=True, slots=True)
class Keep:
    """Append a message we refused to our transcript, as evidence before our ABORT, if it is
    a message at all (wire.md §4)."""

    raw: bytes


@dataclass(frozen=True, slots=True)
class Show:
    """What the session tells the interface (a move, a hand's end, whom it waits for)."""

    event: SessionEvent


@dataclass(frozen=True, slots=True)
class Report:
    """A line for our person: someone joined, left, is slow, is back. ``notice``: the same news
    of a seat's connection as a value, for a screen that keeps it on show with the time left
    counting down (a joiner's own lost link to the host is news of the host: for it, the host
    is gone, and forfeits when the wait is out)."""

    line: str
    notice: Notice | None = None


@dataclass(frozen=True, slots=True)
class Remember:
    """The game has started (every seat signed): remember the others' keys."""

    players: tuple[Player, ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """The machine is done: the match's outcome, or why it stopped. Whatever is queued is
    sent before the connections close."""

    result: Outcome | Exception


@dataclass(frozen=True, slots=True)
class Heard:
    """A line of table talk for our person: said by ``name`` at ``seat`` (``ours``: by us),
    its ``text`` cleaned to be shown (``_chat.shown``)."""

    seat: int
    name: str
    text: str
    ours: bool = False


Action: TypeAlias = (Send | Close | Connect | Vet | Unvet | Choose | Wish | Unchoose | Begin | Sit | Reopen | Spectate
                     | Record | Keep | Show | Report | Remember | Finish | Heard)
