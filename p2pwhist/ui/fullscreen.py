"""The full-screen table: a seat played by a person, drawn with urwid inside the running trio
program (``urwid.TrioEventLoop``, ``run_async``), for any game.

Everything game-specific comes from the game's ``GameText`` (the registry's entry) and the
seat's ``View``: the table (``table``), the hand as selectable cells (``cells``), the history
(``finished_lines``), the standing alerts (``notices``), the results and the rules. This module
names no game.

The screen, top to bottom: a title line that says whose turn it is, or what the game waits for
("Waiting for North... 12 s", "Waiting for North to shuffle the cards..."), the table as the
seat knows it, the seat's cards (legal ones highlighted, suit colours), the history of every
trick or round so far, a line for typing and messages, and the keys.

Rules the screen keeps:

- It is redrawn the moment anything happens (``on_event`` gets each of the session's events,
  ``choose`` is called when our move is wanted), and once a second while someone thinks.
- Input while it is not our turn is never kept: the keys are refused with a message, so a card
  typed early is not played later, before its player has seen the trick.
- An event that matters (the end of a hand or the match, an alert such as "your box is open")
  stays on screen until a key is pressed; that key is never played.
- Everything runs on the trio loop, so ``choose`` is a coroutine; only a hint (``h``) thinks
  in a worker thread, which ends before ``choose`` returns: the view it reads is live.
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
from p2pwhist.cards import CardError
from p2pwhist.games.base import BotFactory, Cell, EngineMisuse, GameText, HandResult, HandState, Play, View
from p2pwhist.games.match import Match
from p2pwhist.games.registry import game_entry
from p2pwhist.session import CUT_HAND
from p2pwhist.session_events import (
    Awaiting,
    Dealing,
    HandOver,
    MatchOver,
    Moved,
    Seated,
    SessionEvent,
    Settled,
    TableChanged,
)
from p2pwhist.text import Style
from p2pwhist.ui.terminal import can_print_symbols, hint, hint_bot

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

THINKING_SHOWN_AFTER = 3.0  # seconds: a computer player moves well within this, so no clock flickers for it
_RED_CARD = re.compile(r"(?:10|[2-9JQKA])[\u2665\u2666]")  # a red card as Style writes it with symbols
_MAX_TYPED = 12


def wants_color(environ: Mapping[str, str] | None = None) -> bool:
    """Colour unless NO_COLOR is set to anything non-empty (no-color.org)."""
    environ = os.environ if environ is None else environ
    return not environ.get("NO_COLOR")


def keys_help(words: GameText, hints: bool) -> str:
    """The keys line at the bottom: how the game's moves are typed, and the hint key only for a
    game that gives hints."""
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


class _Root(urwid.WidgetWrap):
    """Takes every key itself (no widget inside is selectable) and hands it to the table."""

    def __init__(self, inner: urwid.Widget, on_key: Callable[[str], None]) -> None:
        super().__init__(inner)
        self._on_key = on_key

    def selectable(self) -> bool:
        return True

    def keypress(self, size: tuple[int, ...], key: str) -> str | None:
        self._on_key(key)
        return None

    def set_inner(self, inner: urwid.Widget) -> None:
        self._w = inner


class _Stack(urwid.WidgetWrap):
    """The table, a rule, the hand, the history, top to bottom. The hand is always whole; on a
    short screen the table gives up its last lines before the history drops below a few lines."""

    HISTORY_MIN = 4  # rows, its title included

    def __init__(self, table: urwid.Text, hand: urwid.Text, history: urwid.Widget) -> None:
        self._table, self._hand = table, hand
        self._pile = urwid.Pile([
            ("given", 1, urwid.Filler(table, valign="top")),
            ("pack", urwid.Divider("\u2500")),
            ("pack", hand),
            ("weight", 1, history),
        ])
        super().__init__(self._pile)

    def render(self, size: tuple[int, int], focus: bool = False) -> urwid.Canvas:
        cols, rows = size
        room = rows - 1 - self._hand.rows((cols,)) - self.HISTORY_MIN
        height = max(0, min(self._table.rows((cols,)), room))
        self._pile.contents[0] = (self._pile.contents[0][0], self._pile.options("given", height))
        return super().render(size, focus)


class FullScreenPlayer:
    """A seat played by a person on a full-screen table.

    Use: ``await run(main)`` runs ``main()`` (the peer's whole game) with the screen beside it;
    the screen opens at the first ``on_event`` (so anything printed before the game starts,
    such as a host's join commands, stays readable) and closes when ``main`` returns, once
    every standing event has been seen. ``on_event(event)`` follows the game from the
    session's events (``Session.take_events``); ``choose(view)`` is the seat's agent (a coroutine).

    ``screen`` replaces the terminal (tests, the benchmark); ``color`` None means NO_COLOR decides.
    """

    def __init__(self, *, color: bool | None = None, screen: urwid.display.BaseScreen | None = None) -> None:
        self.words: GameText = None  # type: ignore[assignment]  # set by ``sit`` (at START)
        self.hints: BotFactory | None = None  # the bot whose moves are hints (``terminal.hint_bot``)
        self.seat = 0
        self.names: tuple[str, ...] = ()
        self.style = Style(color=False, symbols=can_print_symbols(sys.stdout))  # urwid does the colour
        self.color = wants_color() if color is None else color
        self.hand_no = 0
        self.points: tuple[int, ...] | None = None
        self.view: View | None = None  # the hand on screen, None between hands
        self.table_text = ""  # what the screen shows of it, made as it changes (not on every redraw)
        self.cells: list[Cell] = []
        self.history_now: list[str] = []
        self.focus = 0  # index into cells
        self.typed = ""
        self.message = ""
        self.history_before: list[str] = []  # entries of the hands already over
        self.events: list[str] = []  # standing events, oldest first, each shown until a key
        self.rules_open = False
        self.turn_seat: int | None = None
        self.turn_since = 0.0
        self.status = "Shuffling and dealing..."
        self._notices_seen: set[str] = set()
        self._results = 0
        self._match_shown = False
        self._move: trio.Event | None = None
        self._answer: trio.Event | None = None  # set while "another hand?" or "stop now?" is asked
        self._question = ""  # the one asked
        self._wish = True
        self._chosen: Play | None = None
        self._helpers: trio.Nursery | None = None  # open while our move is awaited: a hint thinks in it
        self._hinting = False  # a hint is thinking
        self._move_made = threading.Event()  # this turn's, set by our move: a hint thinking stops
        self._open = trio.Event()
        self._dismissed: trio.Event | None = None  # set when a key dismisses a standing event
        self._loop: urwid.MainLoop | None = None
        self._running = False

        self._title = urwid.Text("", wrap="clip")
        self._table = urwid.Text("")
        self._hand = urwid.Text("")
        self._walker = urwid.SimpleFocusListWalker([])
        self._history_shown: list[str] = []
        self._history = urwid.ListBox(self._walker)
        self._line = urwid.Text("", wrap="clip")
        self._keys = urwid.Text(("help", ""), wrap="clip")  # the game's, once it is known (``sit``)
        history_box = urwid.LineBox(self._history, title="History", title_align="left",
                                    tlcorner="\u2500", tline="\u2500", lline=" ", trcorner="\u2500", rline=" ",
                                    blcorner=" ", bline=" ", brcorner=" ")
        body = _Stack(self._table, self._hand, history_box)
        self._frame = urwid.Frame(urwid.Padding(body, left=1, right=1), header=urwid.AttrMap(self._title, "title"),
                                  footer=urwid.Pile([self._line, self._keys]))
        self._root = _Root(self._frame, self._key)
        self._screen = screen

    def sit(self, words: GameText, seat: int, names: Sequence[str], hints: BotFactory | None = None) -> None:
        """The game's words, our seat, every seat's name (ours is "You") and the bot whose moves
        are hints (``terminal.hint_bot``; None: no hints)."""
        self.words, self.seat, self.names, self.hints = words, seat, tuple(names), hints
        self._keys.set_text(("help", keys_help(words, hints is not None)))

    # -- running -------------------------------------------------------------------------------

    async def run(self, main: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``main(*args)`` with the screen; return its result once the person has seen every
        standing event (the last hand's result). An error in ``main`` closes the screen at once."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._show)
            result = await main(*args)
            if self._open.is_set():
                self._set_status(None, "The match is over. Press any key to leave.")
                if not self._match_shown:  # e.g. a timed match: its end was not foreseen
                    self._add_event("The match is over.")
                self.refresh()
                while self.events:
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
            try:
                self.refresh()
                self._loop.set_alarm_in(1, self._tick)
                task_status.started()
                await event_loop.run_async()
            finally:
                self._running = False

    def _tick(self, loop: urwid.MainLoop, _data: object) -> None:
        """Once a second: the clock of whoever is thinking."""
        if self.turn_seat is not None and self.turn_seat != self.seat:
            self._draw_title()
            self._draw()
        loop.set_alarm_in(1, self._tick)

    def _draw(self) -> None:
        if self._running and self._loop is not None:
            self._loop.draw_screen()

    def report(self, line: str) -> None:
        """A line from the network edge (a seat lost its connection, is back, is slow): on the
        message line while the screen is open (printing would tear it), else printed, and kept
        for the message line when the screen opens over it (a resumed game's first line)."""
        self.message = line
        if not self._running:
            print(line, flush=True)
            return
        self.refresh()

    # -- following the game ----------------------------------------------------------------------

    def on_event(self, event: SessionEvent) -> None:
        """Redraw what ``event``, one of the session's (``Session.take_events``), changed."""
        if isinstance(event, Moved):
            return  # drawn with the TableChanged that follows it, once its cards are revealed
        self._open.set()
        if isinstance(event, TableChanged):
            self._show_hand(event.match)
        elif isinstance(event, Seated):  # the game, the seats and the names
            assert event.seat is not None, "the full-screen table is a seat's"
            names = [player.name for player in event.table.players]
            names[event.seat] = text.YOU
            entry = game_entry(event.table.game)
            self.sit(entry.text, event.seat, names, hint_bot(entry))
        elif isinstance(event, Dealing):
            self._set_status(None, "Cutting for the deal..." if event.hand == CUT_HAND
                             else f"Shuffling and dealing hand {event.hand}...")
        elif isinstance(event, HandOver):
            self.hand_over(event.hand, event.result, event.points)
        elif isinstance(event, Settled):  # the stop question follows
            self._add_event(event.line(self.names) + ".")
        elif isinstance(event, MatchOver):
            self.match_over(event.outcome.line(self.names))
        elif isinstance(event, Awaiting):  # a new wait, even for the same seat: its clock starts now
            self.turn_seat, self.turn_since = event.seat, trio.current_time()
            self.status = event.why.line(self.names[event.seat])
        self.refresh()

    def follow(self, match: Match) -> None:
        """After anything that changed ``match`` (a move, a hand's result): redraw what changed.
        ``sit`` first. The local runner (``cli._play_local``) calls this before each turn and
        after each hand; the networked game is followed by its session's events (``on_event``)."""
        self._open.set()
        self._show_hand(match)
        if len(match.results) > self._results:
            self._results = len(match.results)
            self.hand_over(match.hands[-1], match.results[-1], match.points)
            if match.is_over():
                self.match_over(text.match_line(self.names, match.points, match.winner) + ".")
            else:
                self._set_status(None, "Shuffling and dealing the next hand...")
        self.refresh()

    def _show_hand(self, match: Match) -> None:
        """The hand in progress in ``match``, if one is (or the one just played out, until its
        result is recorded)."""
        hand = match.hands[-1] if match.hands else None
        if hand is not None and len(match.results) < len(match.hands):
            self.show(hand.view(self.seat), len(match.hands), match.points)
            if hand.view(self.seat).turn is None:
                self._set_status(None, "The hand is over: every card is being checked...")

    def show(self, view: View, hand_no: int, points: Sequence[int] | None) -> None:
        """The table as ``view`` knows it, in hand ``hand_no`` of the match."""
        if hand_no != self.hand_no:
            self.hand_no = hand_no
            self._notices_seen = set()
        self.points = tuple(points) if points is not None else None
        try:  # the whole table at once: a hand still being dealt cannot be read yet
            table = self.words.table(view, self.names, self.style, self.hand_no, self.points)
            cells = self.words.cells(view)
            history = self._hand_history(view)
        except EngineMisuse:
            self._set_status(None, "Dealing...")
            return
        self.view, self.table_text, self.cells, self.history_now = view, table, cells, history
        for notice in self.words.notices(view):
            if notice not in self._notices_seen:
                self._notices_seen.add(notice)
                self._add_event(notice)
        turn = view.turn
        if turn is None:
            self._set_status(None, "The hand is over.")
        elif turn == self.seat:
            legal = len(view.legal_moves)
            self._set_status(turn, "Your turn: one play, press Enter to make it." if legal == 1 else "Your turn.")
        else:
            self._set_status(turn, f"Waiting for {self.names[turn]}...")

    def hand_over(self, hand: HandState, result: HandResult, points: Sequence[int]) -> None:
        """The hand's result, in the history and as a standing event (with any breach proven)."""
        view = hand.view(self.seat)
        self.show(view, self.hand_no or 1, points)
        self.history_before += self.history_now
        self.history_before.append(f"Hand {self.hand_no}: {self.words.result_line(result, self.names)}")
        self.view = None
        self.cells = []
        body = self.words.hand_result(hand, result, self.names, self.style, self.hand_no)
        self._add_event(body + "\n" + text.row("Points", text.tally(self.names, points)))

    def match_over(self, line: str) -> None:
        """The match's end in words (``Outcome.line``: why, and the result), added to the hand's
        result if that is still on screen."""
        self._match_shown = True
        if self.events:
            self.events[-1] += "\n\n" + line
        else:
            self._add_event(line)

    def _hand_history(self, view: View) -> list[str]:
        header = self.words.header(view, self.names, self.style, self.hand_no)
        return [header, *self.words.finished_lines(view, 0, self.names, self.style)]

    def _add_event(self, body: str) -> None:
        self.events.append(body)

    def _set_status(self, turn: int | None, status: str) -> None:
        if turn != self.turn_seat:
            self.turn_seat = turn
            self.turn_since = trio.current_time()
        self.status = status

    # -- choosing a move -------------------------------------------------------------------------

    async def choose(self, view: View) -> Play:
        """Wait for the person to choose a legal move (nothing typed before now is kept)."""
        self._open.set()
        self.typed = ""
        self.message = ""
        self.view = view
        self._move = moved = trio.Event()
        self._chosen = None
        self._hinting = False
        self._move_made = threading.Event()
        self.show(view, self.hand_no or 1, self.points)
        legal = [i for i, cell in enumerate(self._cells()) if cell.legal]
        self.focus = legal[0] if legal else 0
        self.refresh()
        try:
            async with trio.open_nursery() as self._helpers:
                await moved.wait()  # then the nursery waits for a hint's thread, which the move stops
        finally:
            self._move = None
            self._helpers = None
        assert self._chosen is not None
        move, self._chosen = self._chosen, None
        return move

    async def another_hand(self) -> bool:
        """Whether to play another hand of an open match: asked once every event is seen."""
        return await self._ask("Another hand?  y / Enter: yes    n: no (ends the match)")

    async def stop_early(self) -> bool:
        """Whether to stop a match whose winner is settled (``Settled``, shown before)."""
        return await self._ask("Stop now?  y / Enter: stop (if everyone agrees)    n: play on")

    async def _ask(self, question: str) -> bool:
        """A yes or no question, Enter meaning yes."""
        self._open.set()
        self._question = question
        self._answer = trio.Event()
        self._wish = True
        self.refresh()
        try:
            await self._answer.wait()
        finally:
            self._answer = None
        self.refresh()
        return self._wish

    def _cells(self) -> list[Cell]:
        return self.cells if self.view is not None else []

    def _key(self, key: str) -> None:
        if not isinstance(key, str) or key == "window resize":
            return
        if self.rules_open:
            self._rules_key(key)
            return
        if self.events:  # a standing event takes the key that dismisses it
            self.events.pop(0)
            if self._dismissed is not None:
                self._dismissed.set()
            self.refresh()
            return
        if self._answer is not None:
            if key.lower() in ("y", "n", "enter"):
                self._wish = key.lower() != "n"
                self._answer.set()
            return
        if key in ("?", "f1") and not self.typed:
            self._open_rules()
            return
        if key in ("page up", "page down"):
            self._scroll_history(-1 if key == "page up" else 1)
            return
        if self._move is None:  # not our turn: refuse, and keep nothing
            self.typed = ""
            if key in ("enter", " ", "backspace", "esc") or len(key) == 1:
                waiting = "" if self.turn_seat is None else f": waiting for {self.names[self.turn_seat]}"
                self.message = f"Not your turn{waiting}. Nothing you type now is kept."
            self.refresh()
            return
        self._move_key(key)
        self.refresh()

    def _move_key(self, key: str) -> None:
        cells = self.cells
        legal = [i for i, cell in enumerate(cells) if cell.legal]
        if key in ("left", "up", "right", "down") and legal:
            step = -1 if key in ("left", "up") else 1
            at = legal.index(self.focus) if self.focus in legal else 0
            self.focus = legal[(at + step) % len(legal)]
            self.typed = ""
            self.message = ""
        elif key == "backspace":
            self.typed = self.typed[:-1]
        elif key == "esc":
            self.typed = ""
            self.message = ""
        elif key == "h" and not self.typed:
            self._ask_hint()
        elif key == "enter" or (key == " " and not self.typed):
            if self.typed:
                self._play_typed()
            elif cells and cells[self.focus].legal:
                self._play(cells[self.focus].move)
        elif len(key) == 1 and key.isprintable() and len(self.typed) < _MAX_TYPED:
            self.typed += key
            self.message = ""

    def _ask_hint(self) -> None:
        """Think of a hint off the event loop (the screen says so meanwhile), then show it."""
        self.message = "Hint: thinking\u2026"
        if not self._hinting:
            assert self._helpers is not None  # open while our move is awaited
            self._hinting = True
            self._helpers.start_soon(self._hint, self.view, self._move_made)

    async def _hint(self, view: View, move_made: threading.Event) -> None:
        def clock() -> float:  # out of time once the move is made: the bot stops within a playout
            return math.inf if move_made.is_set() else time.perf_counter()

        line = await trio.to_thread.run_sync(hint, self.hints, view, clock, abandon_on_cancel=True)
        self._hinting = False
        if not move_made.is_set():  # else the move was made meanwhile: the hint is moot
            self.message = line
            self.refresh()

    def _play_typed(self) -> None:
        assert self.view is not None
        typed, self.typed = self.typed.strip(), ""
        try:
            move = self.view.parse_move(typed)
        except CardError as error:
            self.message = str(error)
            return
        self._play(move)

    def _play(self, move: Play) -> None:
        assert self.view is not None and self._move is not None
        refused = self.view.refusal(move)
        if refused is not None:
            self.message = self.words.refusal(refused).replace(" Type ? to list your plays.", "") \
                .replace(" Type ? to list your moves.", "")
            return
        # The screen stops asking at once (the key's redraw), before the game has taken the move.
        self._chosen = move
        self._move.set()
        self._move = None
        self._move_made.set()
        self.message = f"You played {self.view.describe_move(move)}."
        self._set_status(None, "")

    # -- the rules screen and the history ---------------------------------------------------------

    def _open_rules(self) -> None:
        self.rules_open = True
        # The rules are written for an 80-column terminal: each paragraph is let flow to the width.
        paragraphs = [" ".join(part.split("\n")) for part in re.split(r"\n\s*\n", self.words.rules.strip())]
        lines = [urwid.Padding(urwid.Text(_markup(paragraph)), left=1, right=1) for paragraph in paragraphs]
        lines = [item for line in lines for item in (line, urwid.Divider())][:-1]
        self._rules = urwid.ListBox(urwid.SimpleFocusListWalker(lines))
        self.refresh()

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
        self._draw()

    # -- drawing ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Every widget from the state, then the screen (when open)."""
        self._draw_title()
        if self.view is not None:
            self._table.set_text(_lines_markup(self.table_text))
        elif self.hand_no == 0:
            self._table.set_text(f"{self.words.title}: {', '.join(self.names)}")
        self._hand.set_text(self._hand_markup())
        self._fill_history()
        if self.message:
            line: list[Any] = [("message", self.message)]
        elif self._move is not None:
            line = ["> ", ("label", self.typed), "_"]
        else:
            line = [""]
        self._line.set_text(line)
        self._root.set_inner(self._overlaid())
        self._draw()

    def _draw_title(self) -> None:
        status = self.status
        if self.turn_seat is not None and self.turn_seat != self.seat:
            thought = trio.current_time() - self.turn_since
            if thought >= THINKING_SHOWN_AFTER:
                status += f" {int(thought)} s"
        hand = f" \u00b7 Hand {self.hand_no}" if self.hand_no else ""
        points = f" \u00b7 {text.tally(self.names, self.points)}" if self.points and self.hand_no > 1 else ""
        attr = "turn" if self._move is not None else "title"
        self._title.set_text([f" {self.words.title}{hand}{points} \u00b7 ", (attr, f" {status} ")])

    def _hand_markup(self) -> list[Any]:
        if self._move is None and self.view is None:
            return [""]
        cells = self._cells() if self.view is not None else []
        if not cells:
            return [("dim", "(no cards)")]
        markup: list[Any] = []
        group = None
        for index, cell in enumerate(cells):
            if cell.group != group:
                if group is not None:
                    markup.append("\n")
                group = cell.group
                markup.append(("label", f"{group + ':':<{text.LABEL - 1}}"))
            red = cell.card is not None and cell.card.suit.is_red
            shown = cell.label if cell.card is None or cell.label == str(cell.card) else f"{cell.label} {cell.card}"
            shown = self.style.fit(shown)
            if self._move is not None and index == self.focus and cell.legal:
                attr = "focus red" if red else "focus"
            elif self._move is not None and cell.legal:
                attr = "legal red" if red else "legal"
            elif self._move is not None:
                attr = "dim"
            else:
                attr = "red" if red else None
            markup.append((attr, f" {shown} ") if attr else f" {shown} ")
        return markup

    def _fill_history(self) -> None:
        entries = list(self.history_before)
        if self.view is not None:
            entries += self.history_now
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
        if self.rules_open:
            box = urwid.LineBox(self._rules, title=f"{self.words.title}: the rules (any other key closes)")
            return urwid.Overlay(box, self._frame, "center", ("relative", 96), "middle", ("relative", 92))
        if self.events:
            body = urwid.Text(_lines_markup(self.events[0]))
            more = f" ({len(self.events) - 1} more)" if len(self.events) > 1 else ""
            footer = urwid.Text(("event title", f"Press any key{more}"), align="center")
            box = urwid.AttrMap(urwid.LineBox(urwid.Pile([body, urwid.Divider(), footer])), "event")
            return urwid.Overlay(box, self._frame, "center", ("relative", 86), "middle", "pack")
        if self._answer is not None:
            body = urwid.Text(("event title", self._question), align="center")
            box = urwid.AttrMap(urwid.LineBox(body), "event")
            return urwid.Overlay(box, self._frame, "center", ("relative", 70), "middle", "pack")
        return self._frame
