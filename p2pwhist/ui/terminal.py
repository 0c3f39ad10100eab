"""A person at a terminal, as a seat or a spectator: the input/output loop around ``render``.

Plain text on the streams it is given (no curses). Every call is synchronous and keeps its
state on the instance, never in the module, so a networked session may call
``TerminalPlayer.choose`` from a worker thread while another player's terminal is driven
elsewhere.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence, TextIO

from p2pwhist.cards import CardError, Suit
from p2pwhist.games.base import HandResult, Play
from p2pwhist.games.boxwhist import BoxWhistHand, BoxWhistView
from p2pwhist.games.match import Match
from p2pwhist.ui import render
from p2pwhist.ui.render import Style

PROMPT = "Your play: "
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


class _Screen:
    """What the seat and the spectator share: an output stream, a style, seat names."""

    def __init__(self, outfile: TextIO, color: bool | None, names: Sequence[str] | None, me: int | None) -> None:
        self.outfile = outfile
        self.style = style_for(outfile, color)
        self._names = tuple(names) if names is not None else None
        self._me = me

    def names(self, players: int) -> tuple[str, ...]:
        if self._names is None:
            self._names = render.seat_names(players, self._me)
        elif len(self._names) != players:
            raise ValueError(f"names must name all {players} seats, not {len(self._names)}: {self._names!r}")
        return self._names

    def say(self, text: str, end: str = "\n") -> None:
        self.outfile.write(self.style.fit(text) + end)
        self.outfile.flush()


class TerminalPlayer:
    """A seat played by a person: implements the bot protocol ``choose(view) -> Play``.

    Before each prompt it shows the tricks completed since its last turn (with the stack cards
    drawn, which are public) and then the table as the seat may know it. It reads one line per
    attempt from ``infile``: a card (``QS``, ``10h``, ``Th``, ``q♠``), ``box N``, ``?`` (the legal
    plays), ``help``, ``table`` or ``quit``. A line it cannot read or a play the rules refuse gets
    a one-line reason and a new prompt. End of input or ``quit`` raises ``InputClosed``.

    ``names`` are the seats' names, ``names[seat]`` being this player's; by default "You" and
    compass points. ``color`` None means colour when ``outfile`` is a terminal that wants it.
    """

    def __init__(
        self,
        seat: int,
        infile: TextIO,
        outfile: TextIO,
        color: bool | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.seat = seat
        self.infile = infile
        self.screen = _Screen(outfile, color, names, seat)
        self.hand_no = 0  # hands this player has seen start
        self._shown = 0  # tricks of the current hand already shown
        self._in_hand = False
        self._hands_won: list[int] | None = None  # the score, once a hand has ended

    def choose(self, view: BoxWhistView) -> Play:
        names = self.screen.names(view.players)
        style = self.screen.style
        self._catch_up(view, names)
        self.screen.say(render.table(view, names, style, self.hand_no, self._hands_won))
        while True:
            text = self._read_line()
            command = text.lower()
            if not text:
                continue
            elif command == "?":
                self.screen.say(render.legal(view, style))
            elif command == "help":
                self.screen.say(render.help_text(view, style))
            elif command == "table":
                self.screen.say(render.table(view, names, style, self.hand_no, self._hands_won))
            elif command == "quit":
                raise InputClosed("you left the game")
            else:
                try:
                    move = view.parse_move(text)
                except CardError as error:
                    self.screen.say(str(error))
                    continue
                refused = view.refusal(move)
                if refused is None:
                    return move
                self.screen.say(render.refusal(refused))

    def follow(self, view: BoxWhistView) -> None:
        """Show what happened since last shown, without asking for a move: a networked
        spectator follows the game this way, from one seat's view."""
        self._catch_up(view, self.screen.names(view.players))

    def hand_over(self, hand: BoxWhistHand, result: HandResult) -> None:
        """Show the tricks not yet shown and the hand's result, and keep the match score."""
        view = hand.view(self.seat)
        names = self.screen.names(view.players)
        self._catch_up(view, names)
        self.screen.say(render.hand_result(result, names, self.screen.style, self.hand_no, hand.revokes))
        if self._hands_won is None:
            self._hands_won = [0] * view.players
        if result.winner is not None:
            self._hands_won[result.winner] += 1
        self._in_hand = False

    def match_over(self, match: Match) -> None:
        self.screen.say(render.match_result(match, self.screen.names(match.game.players), self.screen.style))

    def _catch_up(self, view: BoxWhistView, names: Sequence[str]) -> None:
        """Announce a new hand if this is one, then the tricks completed since last shown."""
        tricks = view.tricks
        if not self._in_hand or len(tricks) < self._shown:  # fewer tricks: a new hand began
            self.hand_no += 1
            self._in_hand = True
            self._shown = 0
            self.screen.say(render.hand_header(names[view.dealer], view.trump, self.screen.style, self.hand_no))
        for number in range(self._shown, len(tricks)):
            self.screen.say(render.trick_result(number + 1, tricks[number], names, self.screen.style, view.card))
        self._shown = len(tricks)

    def _read_line(self) -> str:
        self.screen.say(PROMPT, end="")
        line = self.infile.readline()
        if not line:
            raise InputClosed("input closed (end of file): you left the game")
        return line.strip()


class Watcher:
    """A spectator of a game between bots: sees every card, so never use it beside a person.

    Pass ``on_move`` to the runner to see each play as it happens; ``hand_over`` shows whatever
    tricks it has not yet shown (all of them, if ``on_move`` was not wired) and the result.
    """

    def __init__(self, outfile: TextIO, color: bool | None = None, names: Sequence[str] | None = None) -> None:
        self.screen = _Screen(outfile, color, names, None)
        self.hand_no = 0
        self._hand: BoxWhistHand | None = None
        self._shown = 0

    def on_move(self, hand: BoxWhistHand, seat: int, move: Play) -> None:
        names = self._start(hand)
        self.screen.say(render.play(hand, seat, move, names, self.screen.style))
        self._shown = len(hand.tricks)

    def hand_over(self, hand: BoxWhistHand, result: HandResult) -> None:
        names = self._start(hand)
        style = self.screen.style
        for number in range(self._shown, len(hand.tricks)):
            self.screen.say(render.trick_result(number + 1, hand.tricks[number], names, style, hand.cards.__getitem__))
        self._shown = len(hand.tricks)
        self.screen.say(render.hand_result(result, names, style, self.hand_no, hand.revokes))

    def match_over(self, match: Match) -> None:
        self.screen.say(render.match_result(match, self.screen.names(match.game.players), self.screen.style))

    def _start(self, hand: BoxWhistHand) -> tuple[str, ...]:
        """Show the deal the first time a hand is seen."""
        names = self.screen.names(hand.players)
        if hand is not self._hand:
            self._hand = hand
            self.hand_no += 1
            self._shown = 0
            self.screen.say(render.deal(hand, names, self.screen.style, self.hand_no))
        return names
