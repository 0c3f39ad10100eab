"""The full-screen table: a seat played by a person, or a spectator's table from no seat,
drawn with urwid inside the running trio program (``urwid.TrioEventLoop``, ``run_async``), for
any game.

Everything game-specific comes from the game's ``GameText`` (the registry's entry) and the
seat's ``View``: the table (``table``), the hand as selectable cells (``cells``), the history
(``finished_lines``), the standing alerts (``notices``), the results and the rules. This module
names no game.

The screen, top to bottom: a title line that says whose turn it is, or what the game waits for
("Waiting for North... 12 s", "Waiting for North to shuffle the cards..."), the table as the
seat knows it, the seat's cards (legal ones highlighted, suit colours), the history of every
trick or round so far, a line saying who is away and for how long (only while someone is), a
line for typing and messages, and the keys.

What the table shows and what a key does is ``model.TableModel``, a value with no terminal;
this module draws it with urwid and runs its trio side:

- It is redrawn the moment anything happens (``on_event`` gets each of the session's events,
  ``news`` the table's word on its connections, ``choose`` is called when our move is wanted),
  and once a second while a clock runs (someone thinking, someone away).
- Everything runs on the trio loop, so ``choose`` is a coroutine; only a hint (``h``) thinks
  in a worker thread, which ends before ``choose`` returns: the view it reads is live. The
  hint's card is then chosen, so that Enter plays it (``TableModel.hinted``).
- Narrower than ``MIN_COLS``, or too short to show this table and hand whole, the screen says
  only "make the terminal at least MIN_COLS x MIN_ROWS", the size where every table of every
  game fits: a table cut short (no trumps, no trick, no score) would mislead.
- When our turn comes after someone else's, the terminal bell rings and the window title says
  so (unless ``quiet``); with ``auto_forced``, a move that is our only legal one is made for us
  after ``FORCED_PAUSE``, always the same, whatever the hand holds.
- A spectator's screen (``Seated`` with no seat) is the same screen read from the public view:
  the title says "watching", the hand pane says that we hold no seat, and ``q`` leaves at once,
  ending ``main`` (``run`` then returns None; the game goes on without us).
"""

from __future__ import annotations

import math
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import trio
import urwid

from p2pwhist import text
from p2pwhist.games.base import BotFactory, GameText, Play, View
from p2pwhist.games.match import Match
from p2pwhist.games.registry import game_entry
from p2pwhist.session_events import Moved, Seated, SessionEvent
from p2pwhist.table import Heard, Notice
from p2pwhist.text import Style
from p2pwhist.ui.model import LAST_TRICK_KEY, LEAVE_KEY, KeyResult, TableModel
from p2pwhist.ui.terminal import Thinking, can_print_symbols, hint, hint_bot

T = TypeVar("T")

# (name, foreground, background, monochrome): the last is used with NO_COLOR or a mono terminal.
PALETTE = [
    ("title", "white,bold", "dark blue", "standout"),
    ("turn", "black,bold", "yellow", "standout"),
    ("red", "light red", "default", ""),
    ("legal", "black", "light gray", "underline"),
    ("legal red", "dark red", "light gray", "underline"),
    ("focus", "white,bold", "dark green", "standout"),
    ("focus red", "light red,bold", "dark green", "standout"),
    ("dim", "dark gray", "default", ""),
    ("label", "bold", "default", "bold"),
    ("event", "white", "dark red", ""),
    ("event title", "yellow,bold", "dark red", "bold"),
    ("message", "yellow", "default", "bold"),
    ("help", "light gray", "default", ""),
]

_RED_CARD = re.compile(r"(?:10|[2-9JQKA])[\u2665\u2666]")  # a red card as Style writes it with symbols
# The smallest terminal every table fits in whole, with its hand, title, typing line, a seat
# away and two lines of history: the tallest, Box Whist for 4 and Box for 5 or 6, need 25
# rows at 60 columns; narrower, the title's status is cut off and the tables grow taller as
# their lines wrap. Measured over random deals of every game and table size, with the bots'
# names (tests/test_table_model.py checks it stays true).
MIN_COLS, MIN_ROWS = 60, 25
META = "meta "  # how urwid names a key read together with a leading Esc (or typed with Alt)
# The pause before a forced move is made for us: the same every time, so its length tells
# nothing of the hand (a person's other moves take as long as they take).
FORCED_PAUSE = 1.5
TITLE = "p2pwhist"  # the window title, which says so when it is our turn
# xterm's window operations (ctlseqs): keep the title the terminal had, and give it back at the end.
_PUSH_TITLE, _POP_TITLE = "\x1b[22;0t", "\x1b[23;0t"


def _title(words: str) -> str:
    """OSC 2: set the window title (xterm, and the terminals that follow it)."""
    return f"\x1b]2;{words}\x07"


def wants_color(environ: Mapping[str, str] | None = None) -> bool:
    """Colour unless NO_COLOR is set to anything non-empty (no-color.org)."""
    environ = os.environ if environ is None else environ
    return not environ.get("NO_COLOR")


def keys_help(words: GameText, hints: bool, watching: bool = False) -> str:
    """The keys line at the bottom: how the game's moves are typed, and the hint key only for a
    game that gives hints; a spectator's, who types no move."""
    if watching:
        return f"{LAST_TRICK_KEY} last trick  ? rules  PgUp/PgDn history  {LEAVE_KEY} or Ctrl-C quit"
    hint = "  h hint" if hints else ""
    return f"\u2190\u2192 choose  Enter play  or type {words.typed}{hint}  ? rules  PgUp/PgDn history  Ctrl-C quit"


def can_go_full_screen(environ: Mapping[str, str] | None = None) -> bool:
    """A person at a real terminal: stdin and stdout are terminals and TERM is set and not dumb."""
    environ = os.environ if environ is None else environ
    term = environ.get("TERM", "")
    return sys.stdin.isatty() and sys.stdout.isatty() and term not in ("", "dumb")


def _markup(line: str) -> list[Any]:
    """A line of the game's text with its red cards in red."""
    parts: list[Any] = []
    last = 0
    for found in _RED_CARD.finditer(line):
        if found.start() > last:
            parts.append(line[last:found.start()])
        parts.append(("red", found.group()))
        last = found.end()
    parts.append(line[last:])
    return parts


def _lines_markup(block: str) -> list[Any]:
    markup: list[Any] = []
    for number, line in enumerate(block.split("\n")):
        if number:
            markup.append("\n")
        markup.extend(_markup(line))
    return markup


class _Hanging(urwid.StandardTextLayout):
    """Each line of a table laid out with the rows it wraps onto indented by ``indent``
    columns, under its value, not under its label (``text.row``)."""

    def __init__(self, indent: int) -> None:
        super().__init__()
        self.indent = indent

    def layout(self, text: str | bytes, width: int, align: Any, wrap: Any) -> list[list[tuple[Any, ...]]]:
        if width <= 2 * self.indent or not isinstance(text, str):  # too narrow to indent
            return super().layout(text, width, align, wrap)
        rows: list[list[tuple[Any, ...]]] = []
        start = 0  # of the line in ``text``: a line's layout counts from its own start
        for line in text.split("\n"):
            first, *wrapped = super().layout(line, width, align, wrap)
            rows.append(_shifted(first, start))
            if wrapped:
                rest = wrapped[0][0][1]  # where the second row starts, past the space it broke at
                rest += len(line[rest:]) - len(line[rest:].lstrip(" "))  # and any more (a gap between suits)
                for row in super().layout(line[rest:], width - self.indent, align, wrap):
                    rows.append([(self.indent, start + rest), *_shifted(row, start + rest)])
            start += len(line) + 1
        return rows


def _shifted(row: list[tuple[Any, ...]], by: int) -> list[tuple[Any, ...]]:
    """A row of a layout (segments: columns and the offsets into the text) moved ``by``
    characters on: a text segment's start and end, a padding's or an insertion's offset."""
    return [(segment[0], segment[1] + by, segment[2] + by) if len(segment) == 3 and isinstance(segment[2], int)
            else (segment[0], segment[1] + by, *segment[2:]) for segment in row]


class _Root(urwid.WidgetWrap):
    """Takes every key itself (no widget inside is selectable) and hands it to the table."""

    def __init__(self, inner: urwid.Widget, on_key: Callable[[str], None], fits: Callable[[int, int], bool]) -> None:
        super().__init__(inner)
        self._on_key = on_key
        self._fits = fits

    def selectable(self) -> bool:
        return True

    def keypress(self, size: tuple[int, ...], key: str) -> str | None:
        # urwid reads Esc and a key pressed within ``complete_wait`` (0.125 s) as one "meta" key,
        # as if typed with Alt. Nothing here is an Alt key: it is Esc, then the key.
        if key.startswith(META):
            self._on_key("esc")
            key = key[len(META):]
        self._on_key(key)
        return None

    def render(self, size: tuple[int, int], focus: bool = False) -> urwid.Canvas:
        cols, rows = size
        if not self._fits(cols, rows):
            words = urwid.Text(f"make the terminal at least {MIN_COLS}\u00d7{MIN_ROWS}", align="center")
            return urwid.Filler(words).render(size, focus)
        return super().render(size, focus)

    def set_inner(self, inner: urwid.Widget) -> None:
        self._w = inner


class _Stack(urwid.WidgetWrap):
    """The table, a rule, the hand, the history, top to bottom. The hand is always whole; on a
    short screen the table gives up its last lines before the history drops below a few lines
    (``FullScreenPlayer`` shows no table so short that it would)."""

    HISTORY_MIN = 2  # rows, its title included

    def __init__(self, table: urwid.Text, hand: urwid.Text, history: urwid.Widget) -> None:
        self._table, self._hand = table, hand
        self._pile = urwid.Pile([
            ("given", 1, urwid.Filler(table, valign="top")),
            ("pack", urwid.Divider("\u2500")),
            ("pack", hand),
            ("weight", 1, history),
        ])
        super().__init__(self._pile)

    def rows_needed(self, cols: int) -> int:
        """The rows that show the table and the hand whole, and the history's least."""
        return self._table.rows((cols,)) + 1 + self._hand.rows((cols,)) + self.HISTORY_MIN

    def render(self, size: tuple[int, int], focus: bool = False) -> urwid.Canvas:
        cols, rows = size
        room = rows - 1 - self._hand.rows((cols,)) - self.HISTORY_MIN
        height = max(0, min(self._table.rows((cols,)), room))
        self._pile.contents[0] = (self._pile.contents[0][0], self._pile.options("given", height))
        return super().render(size, focus)


class FullScreenPlayer:
    """A seat played by a person on a full-screen table: ``model`` (``TableModel``) drawn.

    Use: ``await run(main)`` runs ``main()`` (the peer's whole game) with the screen beside it;
    the screen opens at the first ``on_event`` (so anything printed before the game starts,
    such as a host's join commands, stays readable) and closes when ``main`` returns, once
    every popup has been closed. ``on_event(event)`` follows the game from the session's events
    (``Session.take_events``), ``news(notice)`` the table's connections; ``choose(view)`` is the
    seat's agent (a coroutine).

    ``screen`` replaces the terminal (tests, the benchmark); ``color`` None means NO_COLOR
    decides; ``quiet``: no bell and no title when our turn comes; ``auto_forced``: our only
    legal move is made for us (``FORCED_PAUSE``).
    """

    def __init__(self, *, color: bool | None = None, screen: urwid.display.BaseScreen | None = None,
                 quiet: bool = False, auto_forced: bool = False, thinking: Thinking = Thinking()) -> None:
        self.model = TableModel(Style(color=False, symbols=can_print_symbols(sys.stdout)))  # urwid does the colour
        self.hints: BotFactory | None = None  # the bot whose moves are hints (``terminal.hint_bot``)
        self.thinking = thinking  # how a hint thinks: the person's level, the cores
        self.color = wants_color() if color is None else color
        self.quiet = quiet
        self.auto_forced = auto_forced
        self.rules_open = False
        self._move: trio.Event | None = None  # set by our move
        self._answer: trio.Event | None = None  # set by the answer to "another hand?"
        self._wish = True
        self._chosen: Play | None = None
        self._helpers: trio.Nursery | None = None  # open while our move is awaited: a hint thinks in it
        self._hinting = False  # a hint is thinking
        self._move_made = threading.Event()  # this turn's, set by our move: a hint thinking stops
        self._open = trio.Event()
        self._dismissed: trio.Event | None = None  # set when a key closes a popup
        self._loop: urwid.MainLoop | None = None
        self._running = False

        self._title = urwid.Text("", wrap="clip")
        self._table = urwid.Text("", layout=_Hanging(text.LABEL))  # a long row wraps under its value
        self._hand = urwid.Text("")
        self._walker = urwid.SimpleFocusListWalker([])
        self._history_shown: list[str] = []
        self._history = urwid.ListBox(self._walker)
        self._connection = urwid.Text(("message", ""))
        self._line = urwid.Text("")  # wrapped: a line from the edge may name a long path
        self._keys = urwid.Text(("help", ""))  # the game's, once it is known (``sit``); wrapped, never cut
        history_box = urwid.LineBox(self._history, title="History", title_align="left",
                                    tlcorner="\u2500", tline="\u2500", lline=" ", trcorner="\u2500", rline=" ",
                                    blcorner=" ", bline=" ", brcorner=" ")
        self._body = _Stack(self._table, self._hand, history_box)
        self._footer = urwid.Pile([self._line, self._keys])
        self._frame = urwid.Frame(urwid.Padding(self._body, left=1, right=1),
                                  header=urwid.AttrMap(self._title, "title"), footer=self._footer)
        self._root = _Root(self._frame, self._key, self.fits)
        self._screen = screen
        self._say: Callable[[str], None] | None = None  # table talk: what our person says, to the table
        self._main: trio.CancelScope | None = None  # ``run``'s main, while it runs: a spectator's q cancels it

    def sit(self, words: GameText, seat: int | None, names: Sequence[str], hints: BotFactory | None = None) -> None:
        """The game's words, our seat (None: we watch), every seat's name (ours is "You") and
        the bot whose moves are hints (``terminal.hint_bot``; None: no hints)."""
        self.model.sit(words, seat, names)
        self.hints = hints
        talk = "  / talk" if self.model.talk_open else ""
        self._keys.set_text(("help", keys_help(words, hints is not None, self.model.watching) + talk))

    def allow_talk(self, say: Callable[[str], None]) -> None:
        """Our person talks at the table (``TALK_KEY``): each line they say goes to ``say``."""
        self._say = say
        self.model.talk_open = True

    def heard(self, heard: Heard) -> None:
        """A line of table talk, said by us or another seat."""
        self.model.heard(heard)
        if self._running:
            self.refresh()

    def fits(self, cols: int, rows: int) -> bool:
        """Whether a cols x rows terminal shows what a move needs: at least ``MIN_COLS`` wide,
        and the table and the hand whole (at ``MIN_ROWS`` every table is)."""
        footer = self._footer.rows((cols,))
        return cols >= MIN_COLS and (rows >= MIN_ROWS or rows >= 1 + self._body.rows_needed(cols - 2) + footer)

    # -- running -------------------------------------------------------------------------------

    async def run(self, main: Callable[..., Awaitable[T]], *args: Any) -> T | None:
        """Run ``main(*args)`` with the screen; return its result once the person has closed
        every popup (the last hand's result). An error in ``main`` closes the screen at once;
        so does a spectator's q, which cancels ``main`` (None is returned)."""
        result = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._show)
            with trio.CancelScope() as self._main:
                result = await main(*args)
            left, self._main = self._main.cancelled_caught, None
            if self._open.is_set() and not left:
                self.model.ended(trio.current_time())
                self.refresh()
                while self.model.popups:
                    self._dismissed = trio.Event()
                    await self._dismissed.wait()
            nursery.cancel_scope.cancel()
        return result

    async def open_screen(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The screen alone, open until cancelled, with no game beside it (``sit`` first): for
        a benchmark or a demonstration. ``task_status.started()`` once it is drawn."""
        self._open.set()
        await self._show(task_status)

    async def _show(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        await self._open.wait()
        event_loop = urwid.TrioEventLoop()
        screen = self._screen or urwid.display.raw.Screen()
        screen.set_terminal_properties(colors=256 if self.color else 1)
        self._loop = urwid.MainLoop(self._root, PALETTE, screen=screen, event_loop=event_loop,
                                    handle_mouse=False)
        with self._loop.start():
            self._running = True
            self._signal(_PUSH_TITLE)
            try:
                self.refresh()
                self._loop.set_alarm_in(1, self._tick)
                task_status.started()
                await event_loop.run_async()
            finally:
                self._signal(_POP_TITLE)
                self._running = False

    def _tick(self, loop: urwid.MainLoop, _data: object) -> None:
        """Once a second: the clocks (someone thinking, someone away)."""
        if self.model.counting:
            self.refresh()
        loop.set_alarm_in(1, self._tick)

    def _draw(self) -> None:
        if self._running and self._loop is not None:
            self._loop.draw_screen()

    def _signal(self, sequence: str) -> None:
        """Tell the terminal itself (the bell, the window title), unless ``quiet``."""
        if self.quiet or not self._running or self._loop is None:
            return
        self._loop.screen.write(sequence)
        self._loop.screen.flush()

    def report(self, line: str) -> None:
        """A line from the network edge (a seat lost its connection, is back, is slow): on the
        message line while the screen is open (printing would tear it), else printed, and kept
        for the message line when the screen opens over it (a resumed game's first line)."""
        self.model.message = line
        if not self._running:
            print(line, flush=True)
            return
        self.refresh()

    def news(self, notice: Notice) -> None:
        """The table's word on a seat's connection (``Report.notice``): kept on screen, the
        time left counted down, until it changes."""
        self.model.news(notice, trio.current_time())
        self.refresh()

    # -- following the game ----------------------------------------------------------------------

    def on_event(self, event: SessionEvent) -> None:
        """Redraw what ``event``, one of the session's (``Session.take_events``), changed."""
        if isinstance(event, Moved):
            return  # drawn with the TableChanged that follows it, once its cards are revealed
        self._open.set()
        if isinstance(event, Seated):  # the game, the seats and the names
            names = [player.name for player in event.table.players]
            entry = game_entry(event.table.game)
            if event.seat is None:  # a spectator: no "You", and no hint for a seat it does not hold
                self.sit(entry.text, None, names)
            else:
                names[event.seat] = text.YOU
                self.sit(entry.text, event.seat, names, hint_bot(entry))
        else:
            self.model.on_event(event, trio.current_time())
        self.refresh()

    def follow(self, match: Match) -> None:
        """After anything that changed ``match`` (a move, a hand's result): redraw what changed.
        ``sit`` first. The local runner (``cli._play_local``) calls this before each turn and
        after each hand; the networked game is followed by its session's events (``on_event``)."""
        self._open.set()
        self.model.follow(match, trio.current_time())
        self.refresh()

    def show(self, view: View, hand_no: int, points: Sequence[int] | None) -> None:
        """The table as ``view`` knows it, in hand ``hand_no`` of the match."""
        self.model.show(view, hand_no, points, trio.current_time())

    # -- choosing a move -------------------------------------------------------------------------

    async def choose(self, view: View) -> Play:
        """Wait for the person to choose a legal move (nothing typed before now is kept)."""
        self._open.set()
        self._move = moved = trio.Event()
        self._chosen = None
        self._hinting = False
        self._move_made = threading.Event()
        if self.model.ask(view, trio.current_time()):
            self._signal(_title(f"{TITLE}: your turn") + "\a")
        self.refresh()
        try:
            async with trio.open_nursery() as self._helpers:
                pause = trio.CancelScope()
                forced = self.model.forced() if self.auto_forced else None
                if forced is not None:
                    self.model.message = self.model.forced_line(forced)
                    self.refresh()
                    self._helpers.start_soon(self._make_forced, forced, pause)
                await moved.wait()  # then the nursery waits for a hint's thread, which the move stops
                pause.cancel()  # the person made the forced move first
        finally:
            self._move = None
            self._helpers = None
        self._signal(_title(TITLE))
        assert self._chosen is not None
        move, self._chosen = self._chosen, None
        return move

    async def _make_forced(self, move: Play, pause: trio.CancelScope) -> None:
        with pause:
            await trio.sleep(FORCED_PAUSE)
        if not pause.cancelled_caught and self.model.asking and self.model.play(move) is not None:
            self._made(move)
            self.refresh()

    async def another_hand(self) -> bool:
        """Whether to play another hand of an open match: asked once every popup is closed."""
        return await self._ask("Another hand?  y / Enter: yes    n: no (ends the match)")

    async def stop_early(self) -> bool:
        """Whether to stop a match whose winner is settled (``Settled``, shown before)."""
        return await self._ask("Stop now?  y / Enter: stop (if everyone agrees)    n: play on")

    async def _ask(self, question: str) -> bool:
        """A yes-or-no question, Enter meaning yes."""
        self._open.set()
        self._answer = trio.Event()
        self._wish = True
        self.model.answer(question)
        self.refresh()
        try:
            await self._answer.wait()
        finally:
            self._answer = None
        self.refresh()
        return self._wish

    def _key(self, key: str) -> None:
        if not isinstance(key, str) or key == "window resize":
            return
        if self.rules_open:
            self._rules_key(key)
            return
        done: KeyResult = self.model.key(key, trio.current_time())
        if done.leave:
            self._leave()
            return
        if done.closed and self._dismissed is not None:
            self._dismissed.set()
        if done.wish is not None and self._answer is not None:
            self._wish = done.wish
            self._answer.set()
        if done.rules:
            self._open_rules()
        if done.scroll:
            self._scroll_history(done.scroll)
        if done.hint:
            self._ask_hint()
        if done.move is not None:
            self._made(done.move)
        if done.say is not None and self._say is not None:
            self._say(done.say)
        self.refresh()

    def _leave(self) -> None:
        """A spectator stops watching: ``main`` is cancelled, or, once it is over, the popups
        still to acknowledge are closed."""
        if self._main is not None:
            self._main.cancel()
        self.model.popups.clear()
        if self._dismissed is not None:
            self._dismissed.set()

    def _made(self, move: Play) -> None:
        """The model took ``move``: the game gets it (the screen stopped asking at the key)."""
        assert self._move is not None
        self._chosen = move
        self._move.set()
        self._move = None
        self._move_made.set()

    def _ask_hint(self) -> None:
        """Think of a hint off the event loop (the model says so meanwhile), then show it."""
        if not self._hinting:
            view = self.model.view
            assert self._helpers is not None and view is not None  # both set while our move is awaited
            self._hinting = True
            self._helpers.start_soon(self._hint, view, self._move_made)

    async def _hint(self, view: View, move_made: threading.Event) -> None:
        def clock() -> float:  # out of time once the move is made: the bot stops within a playout
            return math.inf if move_made.is_set() else time.perf_counter()

        said = await trio.to_thread.run_sync(hint, self.hints, view, clock, self.thinking, abandon_on_cancel=True)
        self._hinting = False
        if not move_made.is_set():  # else the move was made meanwhile: the hint is moot
            self.model.hinted(said.line, said.move)
            self.refresh()

    # -- the rules screen and the history ---------------------------------------------------------

    def _open_rules(self) -> None:
        self.rules_open = True
        # The rules are written for an 80-column terminal: each paragraph is let flow to the width.
        rules = self.model.words.rules
        paragraphs = [" ".join(part.split("\n")) for part in re.split(r"\n\s*\n", rules.strip())]
        lines = [urwid.Padding(urwid.Text(_markup(paragraph)), left=1, right=1) for paragraph in paragraphs]
        lines = [item for line in lines for item in (line, urwid.Divider())][:-1]
        self._rules = urwid.ListBox(urwid.SimpleFocusListWalker(lines))

    def _rules_key(self, key: str) -> None:
        if key in ("up", "down", "page up", "page down"):
            size = self._loop.screen.get_cols_rows() if self._loop else (80, 24)
            self._rules.keypress((max(size[0] - 8, 10), max(size[1] - 6, 3)), key)
        else:
            self.rules_open = False
        self.refresh()

    def _scroll_history(self, direction: int) -> None:
        if not self._walker:
            return
        _, at = self._walker.get_focus()
        at = max(0, min(len(self._walker) - 1, (at or 0) + direction * 5))
        self._walker.set_focus(at)

    # -- drawing ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Every widget from the model, then the screen (when open)."""
        model, now = self.model, trio.current_time()
        hand = f" \u00b7 Hand {model.hand_no}" if model.hand_no else ""
        watching = " (watching)" if model.watching else ""
        attr = "turn" if model.asking else "title"
        self._title.set_text([f" {model.words.title}{watching}{hand} \u00b7 ",
                              (attr, f" {model.title_status(now)} ")])
        if model.hand_no:
            self._table.set_text(_lines_markup(model.table_text))
        else:
            self._table.set_text(f"{model.words.title}: {', '.join(model.names)}")
        self._hand.set_text(self._hand_markup())
        self._fill_history()
        if model.talking is not None:
            line: list[Any] = [("label", model.talk_prompt())]
        elif model.message:
            line = [("message", model.message)]
        elif model.asking:
            line = ["> ", ("label", model.typed), "_"]
        else:
            line = [""]
        self._line.set_text(line)
        connection = model.connection_line(now)
        self._connection.set_text(("message", connection))
        shown = [self._connection, self._line, self._keys] if connection else [self._line, self._keys]
        if [widget for widget, _ in self._footer.contents] != shown:
            self._footer.contents = [(widget, self._footer.options()) for widget in shown]
        self._root.set_inner(self._overlaid())
        self._draw()

    def _hand_markup(self) -> list[Any]:
        model = self.model
        if model.view is None:
            return [""]
        if model.watching:
            return [("dim", "Watching \u2014 you hold no seat: every card shown is public.")]
        if not model.cells:
            return [("dim", "(no cards)")]
        markup: list[Any] = []
        group = None
        for index, cell in enumerate(model.cells):
            if cell.group != group:
                if group is not None:
                    markup.append("\n")
                group = cell.group
                markup.append(("label", f"{group + ':':<{text.LABEL - 1}}"))
            red = cell.card is not None and cell.card.suit.is_red
            shown = cell.label if cell.card is None or cell.label == str(cell.card) else f"{cell.label} {cell.card}"
            shown = model.style.fit(shown)
            attr: str | None
            if model.asking and index == model.focus and cell.legal:
                attr = "focus red" if red else "focus"
            elif model.asking and cell.legal:
                attr = "legal red" if red else "legal"
            elif model.asking:
                attr = "dim"
            else:
                attr = "red" if red else None
            markup.append((attr, f" {shown} ") if attr else f" {shown} ")
        return markup

    def _fill_history(self) -> None:
        entries = self.model.history()
        shown = self._history_shown
        same = 0  # entries only ever grow within a match: keep the widgets of the unchanged start
        while same < min(len(shown), len(entries)) and shown[same] == entries[same]:
            same += 1
        if same == len(shown) == len(entries):
            return
        self._history_shown = entries
        self._walker[same:] = [urwid.Text(_lines_markup(entry)) for entry in entries[same:]]
        if entries:
            self._walker.set_focus(len(entries) - 1)

    def _overlaid(self) -> urwid.Widget:
        model = self.model
        if self.rules_open:
            box = urwid.LineBox(self._rules, title=f"{model.words.title}: the rules (any other key closes)")
            return urwid.Overlay(box, self._frame, "center", ("relative", 96), "middle", ("relative", 92))
        if model.popups:
            popup = model.popups[0]
            body = urwid.Text(_lines_markup(popup.body))
            footer = urwid.Text(("event title", popup.footer(len(model.popups) - 1)), align="center")
            box = urwid.AttrMap(urwid.LineBox(urwid.Pile([body, urwid.Divider(), footer])), "event")
            return urwid.Overlay(box, self._frame, "center", ("relative", 86), "middle", "pack")
        if model.answering:
            body = urwid.Text(("event title", model.question), align="center")
            box = urwid.AttrMap(urwid.LineBox(body), "event")
            return urwid.Overlay(box, self._frame, "center", ("relative", 70), "middle", "pack")
        return self._frame
