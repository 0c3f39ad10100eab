"""The full-screen table as a value: what it shows and what a key does, with no terminal.

``TableModel`` takes what happens (the session's events, the table's news of connections, a
local match, our person's keys) with the time as a value, and holds what the screen draws:
the title's status, the table and its score rows, the hand's cells, the history, the popups,
the message line and the line that says how the table's connections stand. The urwid view
(``fullscreen.py``) draws it and runs the trio side (our move awaited, a hint's thread, the
clock); so every rule below is tested without a terminal (tests/test_table_model.py).

Rules it keeps:

- The score rows are the game's own (``GameText.table``), made again whenever the points
  change: at every hand's end the table is drawn once more with the new points, and stays
  until the next hand is dealt (item 2 of issue 23).
- A popup is one of three kinds (``Closing``). An alert that arrived unasked ("your box is
  open") closes at any key, which then does its own work too, so a card typed over it is
  typed whole. A hand's or the match's end must be acknowledged: only Enter, space or Esc
  close it, and that key does nothing else (none of them types a card); a later hand's end
  takes the place of one not yet acknowledged (a spectator's hands go on while it reads). A
  popup the person asked for (the last trick) closes at any key, which does nothing else, as
  the rules do.
- An alert already true of the first table this screen shows of a hand is not popped up but
  said on the message line: at a deal no alert holds, so it was shown before the program
  stopped (a resumed game).
- A seat away from the table, and our own connection to the host while it is lost, stay on
  the connection line with the time left, counted down from the clock, until they change.
  While we are cut off from the host a move is refused with a line that says why: it would
  reach nobody.
- Keys while it is not our turn are refused with a message and kept nowhere.
- Table talk (when our person talks: ``talk_open``): ``/`` opens a one-line input, whatever
  the turn, where every key is the line's until Enter says it (``1``, ``2``, ``3`` alone say
  the presets) or Esc closes it. A line said at the table is on the message line, and in the
  history's last ``TALK_KEPT`` lines of talk, after the game's entries.
- A spectator (``sit`` with no seat: ``watching``) sees the table from the public view
  (``HandState.view(None)``): every seat by name with its counts, no hand of its own, no move
  asked of it. ``l``, ``?``, PgUp/PgDn and the popups work as for a seat; ``LEAVE_KEY`` leaves
  at any moment, popups or not (the game goes on without it); any other key says what the keys
  do, ``/`` that a spectator only hears the talk.

Pure: no trio, no urwid, no clock (``now`` is passed in).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from p2pwhist import text
from p2pwhist.cards import CardError
from p2pwhist.games.base import Cell, EngineMisuse, GameText, HandResult, HandState, Play, View
from p2pwhist.games.match import Match
from p2pwhist.session import CUT_HAND, HOST
from p2pwhist.session_events import Awaiting, Dealing, HandOver, MatchOver, SessionEvent, Settled, TableChanged
from p2pwhist.table import MAX_CHAT, PRESETS, Heard, Notice, Presence, chat_line, notice_line, typed_line
from p2pwhist.text import Style, clock

THINKING_SHOWN_AFTER = 3.0  # seconds: a computer player moves well within this, so no clock flickers for it
MAX_TYPED = 12
ACKNOWLEDGE_KEYS = frozenset({"enter", " ", "esc"})  # none of them is part of a typed move
LAST_TRICK_KEY = "l"  # no move is typed with an l
TALK_KEY = "/"  # no move is typed with a slash
TALK_KEPT = 50  # lines of table talk the history keeps: a long evening's talk must not fill memory
TALK_SHOWN = 40  # characters of the line being typed shown on the message line (its end)
LEAVE_KEY = "q"  # a spectator's only: a seat types moves with a q (QS)


class Closing(enum.Enum):
    """How a popup closes, and what the key that closes it does besides."""

    PASSES = "passes"  # an alert that came unasked: any key closes it, then does its own work
    ACKNOWLEDGED = "acknowledged"  # a hand's or the match's end: Enter, space or Esc, which do nothing else
    ASKED = "asked"  # the person opened it (the last trick): any key closes it and does nothing else


@dataclass(frozen=True, slots=True)
class Popup:
    body: str
    closing: Closing

    def closed_by(self, key: str) -> bool:
        return self.closing is not Closing.ACKNOWLEDGED or key in ACKNOWLEDGE_KEYS

    def footer(self, more: int) -> str:
        """The popup's last line: how it closes (and how many wait behind it)."""
        waiting = f" ({more} more)" if more else ""
        if self.closing is Closing.ACKNOWLEDGED:
            return f"Press Enter, space or Esc{waiting}"
        if self.closing is Closing.PASSES:
            return f"Press any key{waiting}: it counts on the table too (Esc only closes this)"
        return f"Press any key{waiting}"


@dataclass(frozen=True, slots=True)
class KeyResult:
    """What a key asks of the view besides redrawing: a popup closed (``closed``), our move
    (``move``), the answer to "another hand?" (``wish``), a hint, the rules, the history
    scrolled (``scroll``: -1 up, 1 down)."""

    closed: bool = False
    move: Play | None = None
    wish: bool | None = None
    hint: bool = False
    rules: bool = False
    scroll: int = 0
    say: str | None = None  # a line of table talk to say
    leave: bool = False  # a spectator stops watching


class TableModel:
    """See the module docstring. ``sit`` first, with the game's words, our seat (None for a
    spectator) and every seat's name (ours is "You")."""

    def __init__(self, style: Style) -> None:
        self.style = style
        self.words: GameText = None  # type: ignore[assignment]  # set by ``sit`` (at START)
        self.seat: int | None = 0
        self.names: tuple[str, ...] = ()
        self.hand_no = 0
        self.points: tuple[int, ...] | None = None
        self.view: View | None = None  # the hand in play on screen, None between hands
        self.table_text = ""  # the table as last drawn: kept between hands, with the points after the last
        self.cells: list[Cell] = []
        self.history_before: list[str] = []  # entries of the hands already over
        self.history_now: list[str] = []
        self.last_trick: str | None = None  # the trick or round finished last, as the game writes it
        self.popups: list[Popup] = []  # oldest first, each shown until a key closes it
        self.message = ""
        self.status = "Shuffling and dealing..."
        self.turn_seat: int | None = None
        self.turn_since = 0.0
        self.focus = 0  # index into cells
        self._hint_asked_at: int | None = None  # the focus when a hint was asked, until it comes
        self.typed = ""
        self.asking = False  # our move is wanted
        self.answering = False  # a question about the match is asked (``answer``)
        self.question = ""
        self.away: dict[int, float] = {}  # seat -> when it forfeits; for a joiner, HOST: our link to the host
        self.match_shown = False
        self._results = 0  # hands whose result was shown (``follow``)
        self._alerts_seen: set[str] = set()
        self._ours_last = False  # the last turn seen was ours: the next one of ours is no news
        self.talk_open = False  # our person talks at the table (not with --no-chat)
        self.talking: str | None = None  # the line being typed to say, while the input is open
        self.talk: deque[str] = deque(maxlen=TALK_KEPT)

    def sit(self, words: GameText, seat: int | None, names: Sequence[str]) -> None:
        self.words, self.seat, self.names = words, seat, tuple(names)

    @property
    def watching(self) -> bool:
        """We hold no seat: a spectator, shown the public view, asked for nothing."""
        return self.seat is None

    # -- following the game ------------------------------------------------------------------

    def on_event(self, event: SessionEvent, now: float) -> None:
        """What a session's event (``Session.take_events``) changes; ``Seated`` and ``Moved``
        are the view's (``Moved`` is drawn with the ``TableChanged`` that follows it)."""
        if isinstance(event, TableChanged):
            self._show_hand(event.match, now)
        elif isinstance(event, Dealing):
            self._set_status(None, "Cutting for the deal..." if event.hand == CUT_HAND
                             else f"Shuffling and dealing hand {event.hand}...", now)
        elif isinstance(event, HandOver):
            self.hand_over(event.hand, event.result, event.points, now)
        elif isinstance(event, Settled):  # the question whether to stop follows
            self._after_result(event.line(self.names) + ".")
        elif isinstance(event, MatchOver):
            self.away.clear()  # nobody is waited for any more
            self.match_over(event.outcome.line(self.names))
        elif isinstance(event, Awaiting):  # a new wait, even for the same seat: its clock starts now
            self.turn_seat, self.turn_since = event.seat, now
            self._ours_last = False
            self.status = event.why.line(self.names[event.seat])

    def follow(self, match: Match, now: float) -> None:
        """After anything that changed ``match`` in this process (``cli._play_local``)."""
        self._show_hand(match, now)
        if len(match.results) > self._results:
            self._results = len(match.results)
            self.hand_over(match.hands[-1], match.results[-1], match.points, now)
            if match.is_over():
                self.match_over(text.match_line(self.names, match.points, match.winner) + ".")
            else:
                self._set_status(None, "Shuffling and dealing the next hand...", now)

    def _show_hand(self, match: Match, now: float) -> None:
        """The hand in progress, if one is (or the one just played out, until its result)."""
        hand = match.hands[-1] if match.hands else None
        if hand is not None and len(match.results) < len(match.hands):
            view = hand.view(self.seat)
            self.show(view, len(match.hands), match.points, now)
            if view.turn is None:
                self._set_status(None, "The hand is over: every card is being checked...", now)

    def show(self, view: View, hand_no: int, points: Sequence[int] | None, now: float) -> None:
        """The table as ``view`` knows it, in hand ``hand_no`` of the match."""
        first = hand_no != self.hand_no  # the first table of this hand on this screen
        try:  # the whole table at once: a hand still being dealt cannot be read yet
            table = self.words.table(view, self.names, self.style, hand_no, points)
            cells = self.words.cells(view)
            header = self.words.header(view, self.names, self.style, hand_no)
            finished = self.words.finished_lines(view, 0, self.names, self.style)
        except EngineMisuse:
            self._set_status(None, "Dealing...", now)
            return
        if first:
            self.hand_no, self._alerts_seen = hand_no, set()
        self.points = tuple(points) if points is not None else None
        self.view, self.table_text, self.cells = view, table, cells
        self.history_now = [header, *finished]
        if finished:
            self.last_trick = finished[-1]
        for alert in self.words.notices(view):
            if alert not in self._alerts_seen:
                self._alerts_seen.add(alert)
                if first:
                    self.message = alert
                else:
                    self.popups.append(Popup(alert, Closing.PASSES))
        turn = view.turn
        if turn is None:
            self._set_status(None, "The hand is over.", now)
        elif turn == self.seat:
            legal = len(view.legal_moves)
            self._set_status(turn, "Your turn: one play, press Enter to make it." if legal == 1 else "Your turn.", now)
        else:
            self._ours_last = False
            self._set_status(turn, f"Waiting for {self.names[turn]}...", now)

    def hand_over(self, hand: HandState, result: HandResult, points: Sequence[int], now: float) -> None:
        """The hand's result: the table once more with the new points, the history, and a
        popup to acknowledge (with any breach proven)."""
        self.show(hand.view(self.seat), self.hand_no or 1, points, now)
        self.history_before += self.history_now
        self.history_before.append(f"Hand {self.hand_no}: {self.words.result_line(result, self.names)}")
        self.history_now = []
        self.view, self.cells = None, []
        body = self.words.hand_result(hand, result, self.names, self.style, self.hand_no)
        # An earlier hand's end still up (a spectator's: the game goes on while it reads) gives
        # way to this one, so that hands played fast do not pile up, each wanting a key: the
        # history keeps each hand's line.
        self.popups = [popup for popup in self.popups if popup.closing is not Closing.ACKNOWLEDGED]
        self.popups.append(Popup(body + "\n" + text.row("Points", text.tally(self.names, points)),
                                 Closing.ACKNOWLEDGED))

    def match_over(self, line: str) -> None:
        """The match's end in words (``Outcome.line``: why, and the result), added to the
        hand's result if that is still to be acknowledged."""
        self.match_shown = True
        self._after_result(line)

    def _after_result(self, line: str) -> None:
        """``line`` added to the hand's result if that is still to be acknowledged, else in a
        popup of its own."""
        last = self.popups[-1] if self.popups else None
        if last is not None and last.closing is Closing.ACKNOWLEDGED:
            self.popups[-1] = Popup(last.body + "\n\n" + line, Closing.ACKNOWLEDGED)
        else:
            self.popups.append(Popup(line, Closing.ACKNOWLEDGED))

    def ended(self, now: float) -> None:
        """``main`` returned: the match is over, whether or not its end was foreseen."""
        self._set_status(None, "The match is over. Press Enter to leave.", now)
        if not self.match_shown:  # e.g. a timed match
            self.popups.append(Popup("The match is over.", Closing.ACKNOWLEDGED))

    # -- the table's connections -----------------------------------------------------------------

    def news(self, notice: Notice, now: float) -> None:
        """The table's word on a seat (``p2pwhist.table.Notice``): gone, with the time it has
        left to return; back; slow to move. A joiner's own link to the host comes as news of
        the host (seat 0): while it is lost, the host is gone for us, and forfeits at the end."""
        if notice.presence is Presence.GONE:
            self.away[notice.seat] = now + notice.left
        elif notice.presence is Presence.BACK:
            self.away.pop(notice.seat, None)
            self.message = "Back at the table." if self._cut_off_seat(notice.seat) else \
                notice_line(notice, self.names, self.seat)
        else:  # slow: connected after all
            self.away.pop(notice.seat, None)
            self.message = notice_line(notice, self.names, self.seat)

    @property
    def cut_off(self) -> bool:
        """We are a joiner whose connection to the host is lost: nothing we do reaches anyone."""
        return any(self._cut_off_seat(seat) for seat in self.away)

    def _cut_off_seat(self, seat: int) -> bool:
        return seat == HOST and self.seat not in (HOST, None)

    def connection_line(self, now: float) -> str:
        """Who is away and the time each has left, counted down; empty when everyone is here."""
        lines = []
        for seat, until in sorted(self.away.items()):
            left = max(0.0, until - now)
            if self._cut_off_seat(seat):
                lines.append(f"Lost the connection to {self.names[HOST]}, the host: reconnecting "
                             f"({clock(left)} left, then they forfeit).")
            elif left == 0:  # the wait is over: the table settles when that seat's message is due
                lines.append(f"{self.names[seat]} did not return in time, and forfeits once a move of theirs "
                             "is due.")
            else:
                lines.append(notice_line(Notice(seat, Presence.GONE, 0, round(left)), self.names, self.seat))
        return " ".join(lines)

    @property
    def counting(self) -> bool:
        """Whether what is shown changes with the clock alone: someone thinking, or away."""
        return bool(self.away) or (self.turn_seat is not None and self.turn_seat != self.seat)

    # -- the title ---------------------------------------------------------------------------------

    def title_status(self, now: float) -> str:
        """The status, with the seconds someone else has been thinking once they count."""
        status = self.status
        if self.turn_seat is not None and self.turn_seat != self.seat:
            thought = now - self.turn_since
            if thought >= THINKING_SHOWN_AFTER:
                status += f" {int(thought)} s"
        return status

    def history(self) -> list[str]:
        return self.history_before + (self.history_now if self.view is not None else []) + list(self.talk)

    # -- table talk ----------------------------------------------------------------------------

    def heard(self, heard: Heard) -> None:
        """A line said at the table (by us too): on the message line, and kept in the history."""
        line = chat_line(heard)
        self.talk.append(line)
        self.message = line

    def talk_prompt(self) -> str:
        """The message line while a line is typed to say."""
        assert self.talking is not None
        presets = ", ".join(f"{n} {said}" for n, said in enumerate(PRESETS, 1))
        return f"Say: {self.talking[-TALK_SHOWN:]}_  (Enter says it; alone, {presets}; Esc: nothing)"

    def _talk_key(self, key: str) -> str | None:
        """A key while the talk input is open: the line to say, once Enter says it."""
        assert self.talking is not None
        if key == "esc":
            self.talking = None
        elif key == "enter":
            said, self.talking = typed_line(self.talking), None
            return said or None
        elif key == "backspace":
            self.talking = self.talking[:-1]
        elif len(key) == 1 and key.isprintable() and len(self.talking) < MAX_CHAT:
            self.talking += key
        return None

    def _set_status(self, turn: int | None, status: str, now: float) -> None:
        if turn != self.turn_seat:
            self.turn_seat, self.turn_since = turn, now
        self.status = status

    # -- our move ----------------------------------------------------------------------------------

    def ask(self, view: View, now: float) -> bool:
        """Our move is wanted in ``view`` (nothing typed before now is kept). Whether that is
        news: our turn after someone else's (the view rings the bell)."""
        self.asking, self.typed, self.message = True, "", ""
        self.show(view, self.hand_no or 1, self.points, now)
        self.view = view
        legal = [i for i, cell in enumerate(self.cells) if cell.legal]
        self.focus = legal[0] if legal else 0
        self._hint_asked_at = None
        news, self._ours_last = not self._ours_last, True
        return news

    def forced(self) -> Play | None:
        """Our one legal move, if we have only one and are still asked for it."""
        moves = self.view.legal_moves if self.asking and self.view is not None else []
        return moves[0] if len(moves) == 1 else None

    def forced_line(self, move: Play) -> str:
        assert self.view is not None
        return f"Your only play, {self.view.describe_move(move)}, is made for you in a moment (--auto-forced)."

    def answer(self, question: str) -> None:
        """A yes-or-no ``question`` about the match is asked ("another hand?", "stop now?"),
        y or Enter meaning yes."""
        self.answering = True
        self.question = question

    def key(self, key: str, now: float) -> KeyResult:
        """What ``key`` does (urwid's name for it: "enter", "left", "a")."""
        if self.watching and key == LEAVE_KEY:
            return KeyResult(leave=True)
        closed = False
        if self.popups:
            popup = self.popups[0]
            if not popup.closed_by(key):
                return KeyResult()
            self.popups.pop(0)
            closed = True
            if popup.closing is not Closing.PASSES or key == "esc":
                return KeyResult(closed=True)
        if self.talking is not None:
            return KeyResult(closed=closed, say=self._talk_key(key))
        if key == TALK_KEY and self.talk_open and not self.typed:
            self.talking = ""
            return KeyResult(closed=closed)
        if self.answering:
            if key.lower() in ("y", "n", "enter"):
                self.answering = False
                return KeyResult(closed=closed, wish=key.lower() != "n")
            return KeyResult(closed=closed)
        if key in ("?", "f1") and not self.typed:
            return KeyResult(closed=closed, rules=True)
        if key in ("page up", "page down"):
            return KeyResult(closed=closed, scroll=-1 if key == "page up" else 1)
        if key == LAST_TRICK_KEY and not self.typed:
            body = self.last_trick or "No trick or round has been played out yet."
            self.popups.insert(0, Popup(body, Closing.ASKED))
            return KeyResult(closed=closed)
        if not self.asking:  # not our turn: refuse, and keep nothing
            self.typed = ""
            if key in ("enter", " ", "backspace", "esc") or len(key) == 1:
                self.message = self._not_asked(key, now)
            return KeyResult(closed=closed)
        return KeyResult(closed=closed, move=self._move_key(key), hint=key == "h" and not self.typed)

    def hinted(self, line: str, move: Play | None) -> None:
        """A hint asked for this turn has come (``terminal.hint``): its line on the message line,
        and its move chosen, so that Enter plays it, unless the person chose a card or typed
        while it was thought of."""
        asked_at, self._hint_asked_at = self._hint_asked_at, None
        self.message = line
        if self.asking and not self.typed and self.focus == asked_at:
            self.focus = next((i for i, cell in enumerate(self.cells) if cell.legal and cell.move == move), self.focus)

    def _not_asked(self, key: str, now: float) -> str:
        """Why a key does nothing while no move of ours is wanted."""
        if not self.watching:
            return f"Not your turn{self._waiting_for(now)}. Nothing you type now is kept."
        if key == TALK_KEY:
            return "A spectator hears the table talk, but cannot talk."
        return "You are watching from no seat: nothing to play (the keys are below)."

    def _waiting_for(self, now: float) -> str:
        seat = self.turn_seat
        if seat is None:
            return ""
        if seat in self.away:
            return f": waiting for {self.names[seat]} to return ({clock(max(0.0, self.away[seat] - now))} left)"
        return f": waiting for {self.names[seat]}"

    def _move_key(self, key: str) -> Play | None:
        cells = self.cells
        legal = [i for i, cell in enumerate(cells) if cell.legal]
        if key in ("left", "up", "right", "down") and legal:
            step = -1 if key in ("left", "up") else 1
            at = legal.index(self.focus) if self.focus in legal else 0
            self.focus = legal[(at + step) % len(legal)]
            self.typed, self.message = "", ""
        elif key == "backspace":
            self.typed = self.typed[:-1]
        elif key == "esc":
            self.typed, self.message = "", ""
        elif key == "h" and not self.typed:
            self.message = "Hint: thinking\u2026"
            self._hint_asked_at = self.focus
        elif key == "enter" or (key == " " and not self.typed):
            if self.typed:
                return self._play_typed()
            if cells and cells[self.focus].legal:
                return self.play(cells[self.focus].move)
        elif len(key) == 1 and key.isprintable() and len(self.typed) < MAX_TYPED:
            self.typed += key
            self.message = ""
        return None

    def _play_typed(self) -> Play | None:
        assert self.view is not None
        typed, self.typed = self.typed.strip(), ""
        try:
            move = self.view.parse_move(typed)
        except CardError as error:
            self.message = str(error)
            return None
        return self.play(move)

    def play(self, move: Play) -> Play | None:
        """``move``, if it may be made now; else None, and the message says why not."""
        assert self.view is not None and self.asking
        refused = self.view.refusal(move)
        if refused is not None:
            self.message = self.words.refusal(refused).replace(" Type ? to list your plays.", "") \
                .replace(" Type ? to list your moves.", "")
            return None
        if self.cut_off:
            self.message = (f"Not played: the connection to {self.names[HOST]}, the host, is lost, so no move "
                            "reaches the table. Play it again once you are back.")
            return None
        # The screen stops asking at once, before the game has taken the move.
        self.asking = False
        self.message = f"You played {self.view.describe_move(move)}."
        self.status, self.turn_seat = "", None
        return move
