"""A person at a terminal, as a seat or a spectator: the input/output loop around the game's
own screens (its ``GameText``, from the registry), for any game.

Plain text on the streams it is given (no curses). Every call is synchronous and keeps its
state on the instance, never in the module, so a networked session may call
``TerminalPlayer.choose`` from a worker thread while another player's terminal is driven
elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import random
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

import trio

from p2pwhist import text
from p2pwhist.cards import CardError, Suit
from p2pwhist.games.base import BotFactory, EngineMisuse, GameEntry, GameText, HandResult, HandState, Play, View
from p2pwhist.games.bots import DEFAULT_LEVEL, Runner, Searching, in_turn, make_bot
from p2pwhist.games.match import Match
from p2pwhist.text import Style

PROMPT = "Your play: "
LINE_WIDTH = 80  # the columns the tables keep (tests/test_every_game_text.py), and long lines here
SAY_COMMAND = "/say "  # no move begins with a slash
# The commands every game shares, for the help after the game's own lines (``help_text``).
COMMANDS_HELP = """\
  table  show the table again
  h      a hint: what the computer would play, and why; Enter then plays it
  help   show this
  quit   leave the game (so does Ctrl-D)"""
_SYMBOLS = "".join(suit.symbol for suit in Suit)


class InputClosed(Exception):
    """The person closed the input (Ctrl-D, end of file) or typed ``quit``: no move will come."""


def wants_color(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only for a terminal that is not "dumb", unless NO_COLOR is set (no-color.org)."""
    environ = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb" and not environ.get("NO_COLOR")


def can_print_symbols(stream: TextIO) -> bool:
    """Whether the stream's encoding has the suit symbols (a stream without one takes any str)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        _SYMBOLS.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def style_for(stream: TextIO, color: bool | None = None, environ: Mapping[str, str] | None = None) -> Style:
    """The style for ``stream``: ``color`` None means decide from the stream and the environment."""
    return Style(wants_color(stream, environ) if color is None else color, can_print_symbols(stream))


def help_text(words: GameText, view: View, style: Style) -> str:
    """What ``help`` shows: how a move is typed in this game, the commands, the legal moves."""
    return f"{style.fit(words.typing)}\n{COMMANDS_HELP}\n{words.legal(view, style)}"


def broken(lines: str) -> str:
    """``lines`` with each line wider than ``LINE_WIDTH`` broken between words, its later parts
    indented (a terminal breaks a long line mid-word: the legal plays, a hint). Colour codes
    count as width here, so a coloured line may break a little early, never late."""
    return "\n".join(textwrap.fill(line, LINE_WIDTH, subsequent_indent="  ", break_long_words=False,
                                    break_on_hyphens=False) if len(line) > LINE_WIDTH else line
                      for line in lines.split("\n"))


def hint_bot(entry: GameEntry) -> BotFactory | None:
    """The bot whose moves are hints for a person playing ``entry``'s game: its search bot (None
    if it has none: then it gives no hints)."""
    return entry.search_bot


@dataclass(frozen=True)
class Thinking:
    """How long and on how many cores a hint thinks: the level the person chose (``--level``),
    and the parts of a move with the runner that runs them (``p2pwhist.cores``)."""

    level: str = DEFAULT_LEVEL
    workers: int = 1
    runner: Runner = in_turn


@dataclass(frozen=True)
class Hint:
    """A hint: its line for the person, and the move it names (None when no bot could say)."""

    line: str
    move: Play | None = None


def hint(factory: BotFactory | None, view: View, clock: Callable[[], float] = time.perf_counter,
         thinking: Thinking = Thinking()) -> Hint:
    """What the bot ``factory`` makes (``hint_bot``, as ``thinking`` says, capped on ``clock``)
    would play for ``view``, and why, in a line for the person whose view it is. It never
    raises: a hint must not stop the game."""
    moves = view.legal_moves
    if len(moves) == 1:
        return Hint(f"Only one play: {view.describe_move(moves[0])}.", moves[0])
    if factory is None:
        return Hint("No hint: this game has no search bot.")
    try:
        # Randomness of its own from the OS: asking for a hint changes nothing in a seeded game.
        bot = make_bot(factory, random.Random(), thinking.level, clock, thinking.workers, thinking.runner)
        assert isinstance(bot, Searching), "a hint's bot says why it plays its move"
        move = bot.choose(view)
        # ASCII between the move and why: a line interface may print to an ASCII-only stream.
        return Hint(f"Hint: {view.describe_move(move)} - {bot.why(view.describe_move)}", move)
    except Exception as error:  # noqa: BLE001 (whatever went wrong, the game goes on)
        return Hint(f"No hint: the computer player failed ({type(error).__name__}).")


class _Screen:
    """What the seat and the spectator share: the game's words, an output stream, a style, seat
    names, and the match's points as each hand ends."""

    def __init__(self, words: GameText, outfile: TextIO, color: bool | None, names: Sequence[str] | None,
                 me: int | None) -> None:
        self.words = words
        self.outfile = outfile
        self.style = style_for(outfile, color)
        self._names = tuple(names) if names is not None else None
        self._me = me
        self.points: list[int] | None = None  # the match so far, once a hand has ended
        self.asking: str | None = None  # the question shown, while its answer is awaited

    def names(self, players: int) -> tuple[str, ...]:
        if self._names is None:
            self._names = text.seat_names(players, self._me)
        elif len(self._names) != players:
            raise ValueError(f"names must name all {players} seats, not {len(self._names)}")
        return self._names

    def say(self, line: str, end: str = "\n") -> None:
        self.outfile.write(self.style.fit(line) + end)
        self.outfile.flush()

    def ask(self, question: str, infile: TextIO) -> str:
        """``question`` with no line end, then the line typed (empty at the end of input)."""
        self.say(question, end="")
        self.asking = question
        try:
            return infile.readline()
        finally:
            self.asking = None

    def interject(self, line: str) -> None:
        """A line from elsewhere (the table's news or talk), which may come while a question
        waits: then on a line of its own, not after the question, which is asked again below it
        (what the person had typed is kept by the terminal, and read with what they type next)."""
        asking = self.asking
        self.say(line if asking is None else "\n" + line)
        if asking is not None:
            self.say(asking, end="")

    def hand_over(self, hand: HandState, result: HandResult, hand_no: int) -> None:
        names = self.names(hand.players)
        self.say(self.words.hand_result(hand, result, names, self.style, hand_no))
        self.points = [a + b for a, b in zip(self.points or [0] * hand.players, result.points)]

    def match_over(self, match: Match) -> None:
        """The points hand by hand, each hand's result and who lost it by a breach or by leaving,
        then the match's result."""
        names = self.names(match.game.players)
        title = self.style.bold(f"== Match over after {text.plural(len(match.results), 'hand')} ==")
        table = text.match_table(names, [r.points for r in match.results], match.points, match.winner)
        summary = text.match_summary(names, match.results, self.words.result_line)
        self.say("\n".join([title, *table[:-1], *summary, self.style.bold(table[-1])]))


class TerminalPlayer:
    """A seat played by a person: implements the bot protocol ``choose(view) -> Play``.

    Before each prompt it shows the tricks completed since its last turn (with the stack cards
    drawn, which are public) and then the table as the seat may know it. It reads one line per
    attempt from ``infile``: a card (``QS``, ``10h``, ``Th``, ``q♠``), ``box N``, ``?`` (the legal
    plays), ``h`` or ``hint``, ``help``, ``table`` or ``quit``. A line it cannot read or a play the
    rules refuse gets a one-line reason and a new prompt. End of input or ``quit`` raises
    ``InputClosed``.

    With ``say`` (table talk), a line ``/say TEXT`` at any prompt says TEXT at the table
    (``/say 1`` says the first preset, "good hand"), and the prompt comes again.

    ``words`` are the game's screens (``GAMES[name].text``). ``names`` are the seats' names,
    ``names[seat]`` being this player's; by default "You" and compass points. ``color`` None
    means colour when ``outfile`` is a terminal that wants it. ``hints`` is the bot whose moves
    are the hints (``hint_bot``), thinking as ``thinking`` says; it thinks in ``choose``'s
    thread, which a networked session runs off its event loop.
    """

    def __init__(
        self,
        seat: int,
        words: GameText,
        infile: TextIO,
        outfile: TextIO,
        color: bool | None = None,
        names: Sequence[str] | None = None,
        hints: BotFactory | None = None,
        say: Callable[[str], None] | None = None,
        thinking: Thinking = Thinking(),
    ) -> None:
        self.seat = seat
        self.hints = hints
        self.thinking = thinking
        self.say = say
        self.infile = infile
        self.screen = _Screen(words, outfile, color, names, seat)
        self.hand_no = 0  # hands this player has seen start
        self._shown = 0  # tricks or rounds of the current hand already shown
        self._in_hand = False

    def choose(self, view: View) -> Play:
        words, style = self.screen.words, self.screen.style
        names = self.screen.names(view.players)
        self._catch_up(view, names)
        self.screen.say(words.table(view, names, style, self.hand_no, self.screen.points))
        moves = view.legal_moves
        only = moves[0] if len(moves) == 1 else None
        if only is not None:
            self.screen.say(broken(f"Your only play is {view.describe_move(only)}: press Enter to play it."))
        offered = only  # what an empty line plays: the only move, or the last hint's
        _discard_typed_ahead(self.infile)
        while True:
            line = self._read_line()
            command = line.lower()
            if not line:
                if offered is not None:
                    return offered
                continue
            elif command == "?":
                self.screen.say(broken(words.legal(view, style)))
            elif command in ("h", "hint"):
                said = hint(self.hints, view, thinking=self.thinking)
                self.screen.say(broken(said.line))
                if said.move is not None and said.move != only:  # as the full screen's Enter plays its card
                    offered = said.move
                    self.screen.say("Press Enter to play it, or type another play.")
            elif command == "help":
                self.screen.say(broken(help_text(words, view, style)))
            elif command == "table":
                self.screen.say(words.table(view, names, style, self.hand_no, self.screen.points))
            elif command == "quit":
                raise InputClosed("you left the game")
            elif self.say is not None and command.startswith(SAY_COMMAND):
                self.say(line[len(SAY_COMMAND):])
            else:
                try:
                    move = view.parse_move(line)
                except CardError as error:
                    self.screen.say(str(error))
                    continue
                refused = view.refusal(move)
                if refused is None:
                    return move
                self.screen.say(words.refusal(refused))

    def another_hand(self) -> bool:
        """Ask whether to play another hand of an open match; Enter means yes."""
        return self._yes_or_no("Another hand? [Y/n] ")

    def stop_early(self) -> bool:
        """Ask whether to stop a match whose winner is settled (said just before); Enter means yes."""
        return self._yes_or_no("Stop now, if everyone agrees? [Y/n] ")

    def _yes_or_no(self, question: str) -> bool:
        _discard_typed_ahead(self.infile)
        while True:
            line = self.screen.ask(question, self.infile)
            if not line:
                raise InputClosed("input closed (end of file): you left the game")
            answer = line.strip().lower()
            if self.say is not None and answer.startswith(SAY_COMMAND):
                self.say(line.strip()[len(SAY_COMMAND):])
                continue
            if answer in ("", "y", "yes"):
                return True
            if answer in ("n", "no"):
                return False

    def interject(self, line: str) -> None:
        """A line from elsewhere (``_Screen.interject``): never after a question on its line."""
        self.screen.interject(line)

    def follow(self, view: View) -> None:
        """Show what happened since last shown, without asking for a move: a networked seat's
        lines follow the game this way, at every card played or revealed, from its view (a
        trick once the stack cards drawn after it are revealed)."""
        try:
            self._catch_up(view, self.screen.names(view.players))
        except EngineMisuse:
            return  # a hand still being dealt cannot be read yet (its trumps unrevealed)

    def hand_over(self, hand: HandState, result: HandResult) -> None:
        """Show the tricks or rounds not yet shown and the hand's result; keep the match's points."""
        view = hand.view(self.seat)
        self._catch_up(view, self.screen.names(view.players), whole=True)
        self.screen.hand_over(hand, result, self.hand_no)
        self._in_hand = False

    def match_over(self, match: Match) -> None:
        self.screen.match_over(match)

    def _catch_up(self, view: View, names: Sequence[str], whole: bool = False) -> None:
        """Announce a new hand if this is one, then the tricks or rounds finished since and told
        in full (``GameText.finished``: a trick's line waits for the stack cards drawn after it),
        or with ``whole`` (the hand is over) every one finished."""
        words, style = self.screen.words, self.screen.style
        told = words.finished(view)
        if not self._in_hand or told < self._shown:  # fewer told: a new hand began
            header = words.header(view, names, style, self.hand_no + 1)  # first: it may not be readable yet
            self.hand_no += 1
            self._in_hand = True
            self._shown = 0
            self.screen.say(header)
        lines = words.finished_lines(view, self._shown, names, style)
        if not whole:
            lines = lines[:max(0, told - self._shown)]
        for line in lines:
            self.screen.say(line)
        self._shown += len(lines)

    def _read_line(self) -> str:
        line = self.screen.ask(PROMPT, self.infile)
        if not line:
            raise InputClosed("input closed (end of file): you left the game")
        return line.strip()


def _discard_typed_ahead(infile: TextIO) -> None:
    """Forget what a person typed while it was not their turn, so that it is not played as
    their move: the terminal's input queue is flushed (a file or a pipe is left alone)."""
    isatty = getattr(infile, "isatty", None)
    if isatty is not None and isatty():
        try:
            import termios  # POSIX terminals only
        except ImportError:
            return
        with contextlib.suppress(OSError, ValueError, termios.error):
            termios.tcflush(infile.fileno(), termios.TCIFLUSH)


class Watcher:
    """A spectator of a game between bots: sees every card, so never use it beside a person.

    Give ``on_move`` to the runner to see each move as it happens, and ``hand_over`` the result.
    """

    def __init__(self, words: GameText, outfile: TextIO, color: bool | None = None,
                 names: Sequence[str] | None = None) -> None:
        self.screen = _Screen(words, outfile, color, names, None)
        self.hand_no = 0
        self._hand: HandState | None = None

    def on_move(self, hand: HandState, seat: int, move: Play) -> None:
        names = self._start(hand)
        self.screen.say(self.screen.words.move(hand, seat, move, names, self.screen.style))

    def hand_over(self, hand: HandState, result: HandResult) -> None:
        self._start(hand)
        self.screen.hand_over(hand, result, self.hand_no)

    def match_over(self, match: Match) -> None:
        self.screen.match_over(match)

    def _start(self, hand: HandState) -> tuple[str, ...]:
        """Show the deal the first time a hand is seen."""
        names = self.screen.names(hand.players)
        if hand is not self._hand:
            self._hand = hand
            self.hand_no += 1
            self.screen.say(self.screen.words.deal(hand, names, self.screen.style, self.hand_no))
        return names


class TerminalQuestions:
    """Yes-or-no questions to the person at a terminal, one at a time, each of which may be
    withdrawn (cancelled) while it waits: the player it was about has gone.

    No thread reads for it: a worker thread blocked in ``input()`` cannot be cancelled, and
    would swallow the next line typed, meant for the next question or a card. Instead it waits
    until the terminal has a line (``trio.lowlevel.wait_readable``) and reads it then; a
    terminal in its usual line mode hands over one line at a time."""

    def __init__(self, infile: TextIO, outfile: TextIO) -> None:
        self.infile = infile
        self.outfile = outfile
        self._one_at_a_time = trio.Lock()

    async def ask(self, question: str) -> bool:
        async with self._one_at_a_time:
            self.outfile.write(question)
            self.outfile.flush()
            try:
                line = await self._line()
            except trio.Cancelled:
                self.outfile.write("(never mind)\n")  # the line that says why follows
                self.outfile.flush()
                raise
        return line.strip().lower() in ("y", "yes")

    async def _line(self) -> str:
        fd = self.infile.fileno()
        await trio.lowlevel.wait_readable(fd)
        data = os.read(fd, 4096)
        if not data:  # end of input: nobody says yes
            return ""
        return data.decode(errors="replace")
