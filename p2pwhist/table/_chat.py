"""Table talk: lines the seated players say to each other during the game, outside the log.

The rules it keeps (protocol/wire.md §2.7):

- A line is signed by the seat that says it (``Chat.statement``: the game id, the seat, a
  count that rises with every line, the text). Every receiver checks the signature against
  that seat's key in START, so the host that passes lines on cannot forge one, nor replay one
  from another game; and takes a seat's lines only in rising count, so it cannot replay one
  later or reorder them. It can still drop lines: any relay can.
- Talk is never part of the game: it is not in the log, not in the hash chain, not recorded,
  and nothing a line says or fails to say changes the game. A bad line (a wrong seat, a bad
  signature, an old count, one too many) is dropped quietly and counted (``dropped``): it
  proves nothing worth a connection, and a line must never end a game.
- A seat says at most ``LINES`` lines within any ``WINDOW`` seconds: its own peer refuses
  more (``say``), and the host drops more (``take``), over a window ``SLACK`` shorter, so that
  lines delayed unequally on their way are not dropped. Counting comes before the signature,
  so a flood costs the host no more than ``LINES`` checks a window per seat.
- What a person sees of a line (``shown``) has no control or format characters: no terminal
  escape, line break or change of writing direction reaches a screen.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pwhist.bodies import Player
from p2pwhist.table._actions import Action, ConnId, Heard, Send
from p2pwhist.table._frames import MAX_CHAT, MAX_CHAT_COUNT, Chat, encode

# A few lines at a time is talk; more is a flood. Five in ten seconds lets a person answer
# several quickly, and bounds what one seat makes everyone else read and check.
LINES = 5
WINDOW = 10.0
# The host counts over a window this much shorter: two of an honest seat's lines sent
# ``WINDOW`` apart may arrive closer together, when the first waited behind a long frame.
SLACK = 2.0
# What a person may say with one key (in the full-screen table's input, by number).
PRESETS = ("good hand", "well played", "thinking…")
# Unicode categories never shown: controls (terminal escapes, line breaks: Cc), format
# characters (writing-direction overrides, zero-width joiners: Cf), line and paragraph
# separators (Zl, Zp), and code points that are no characters at all (Cs, Co, Cn).
_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def shown(text: str) -> str:
    """``text`` as a person may see it: one line, with nothing that a terminal would take as
    anything but a character to print. A line break or tab is a space, and spaces run together."""
    kept = (" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch) not in _HIDDEN)
    return " ".join("".join(kept).split())


def typed_line(typed: str) -> str:
    """What a person typed to say means: a preset's number (``1``: "good hand"), or the text."""
    typed = typed.strip()
    return PRESETS[int(typed) - 1] if typed in {str(n) for n in range(1, len(PRESETS) + 1)} else typed


def chat_line(heard: Heard) -> str:
    """A line of talk as the line interface and the history print it."""
    return f"{'You' if heard.ours else heard.name} said: {heard.text}"


def relay_chat(chat: Chat, conns: Iterable[ConnId]) -> list[Action]:
    """The host passing a line it took on, to each of ``conns`` (seats, and any connection
    that may read the table's talk): one payload, the line as decoded, so only lines the host
    checked and could read go out."""
    payload = encode(chat)
    return [Send(conn, payload) for conn in conns]


class Talk:
    """One peer's table talk in a game: the lines it says (``say``) and takes (``take``).
    ``players`` are START's, ``seat`` ours (None: a peer that says nothing), ``sign`` signs
    with our seat's key."""

    def __init__(self, game: bytes, players: Sequence[Player], seat: int | None,
                 sign: Callable[[bytes], bytes] | None) -> None:
        self.game = game
        self.players = list(players)
        self.seat = seat
        self._sign = sign
        self.count = -1  # the count of our last line
        self.said: deque[float] = deque(maxlen=LINES)  # when we said our last lines
        self.counts: dict[int, int] = {}  # the highest count taken from each seat
        self.arrived: dict[int, deque[float]] = {}  # host: when each seat's last lines arrived
        self.dropped = 0

    def say(self, text: str, clock_ms: int, now: float) -> Chat | str:
        """Our line, signed, or why it is not said. ``clock_ms`` is the wall clock in
        milliseconds: a count starts from it, so a peer restarted in the game (which has
        forgotten its last count) still counts up from where it was, saying fewer than a line
        a millisecond."""
        text = shown(text)
        if self.seat is None or self._sign is None:
            return "only a seated player talks at the table"
        if not text:
            return "nothing to say"
        if len(text) > MAX_CHAT:
            return f"a line is at most {MAX_CHAT} characters; this one has {len(text)}"
        if len(self.said) == LINES and now - self.said[0] < WINDOW:
            return f"at most {LINES} lines in {WINDOW:g} s: wait {self.said[0] + WINDOW - now:.0f} s"
        count = min(max(self.count + 1, clock_ms), MAX_CHAT_COUNT)
        if count <= self.count:
            return "this game has had all the lines it can"
        self.count = count
        self.said.append(now)
        return Chat(self.seat, count, text, self._sign(Chat.statement(self.game, self.seat, count, text)))

    def take(self, chat: Chat, now: float, via: int | None = None) -> Heard | None:
        """A line from another seat, for our person, or None: dropped (and counted). ``via``:
        the seat whose connection carried it, on the host, which also counts each seat's
        lines (the window less ``SLACK``); a joiner's lines all come from the host."""
        heard = self._checked(chat, now, via)
        if heard is None:
            self.dropped += 1
        return heard

    def _checked(self, chat: Chat, now: float, via: int | None) -> Heard | None:
        """``take``'s line if it passes every check, else None."""
        if via is not None:
            if chat.seat != via:
                return None
            arrived = self.arrived.setdefault(via, deque(maxlen=LINES))
            if len(arrived) == LINES and now - arrived[0] < WINDOW - SLACK:
                return None
            arrived.append(now)
        if chat.seat == self.seat or chat.seat >= len(self.players) or chat.count <= self.counts.get(chat.seat, -1):
            return None
        try:
            Ed25519PublicKey.from_public_bytes(self.players[chat.seat].key).verify(
                chat.proof, Chat.statement(self.game, chat.seat, chat.count, chat.text))
        except (InvalidSignature, ValueError):
            return None
        self.counts[chat.seat] = chat.count
        return self.heard(chat)

    def heard(self, chat: Chat) -> Heard:
        """A line as our person sees it."""
        return Heard(chat.seat, self.players[chat.seat].name, shown(chat.text), chat.seat == self.seat)
