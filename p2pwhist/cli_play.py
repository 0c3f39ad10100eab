"""The commands that play: ``play``, ``host``, ``join`` and ``resume`` (``p2pwhist.cli`` parses
them and turns their errors into one line).

They need trio, the network and the full-screen table, which take longer to import than
``verify`` takes to check a short game: ``cli`` imports this module only to run one of them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import secrets
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pwhist.addresses import parse_address
from p2pwhist.bodies import Table, check_name
from p2pwhist.bot_homes import (
    bot_home,
    bot_key,
    bot_transcript,
    check_bots_folder,
    make_bots_folder,
    remove_bots_folder,
    sweep_bots_folders,
)
from p2pwhist.cores import Cores
from p2pwhist.gamefiles import our_unfinished, started_by, unfinished
from p2pwhist.games.base import BotFactory, ConfigError, EngineMisuse, Game, GameEntry, GameText, Play, View
from p2pwhist.games.bots import DEFAULT_LEVEL, Bot, check_level, make_bot
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import chosen, game_entry, options_offered
from p2pwhist.home import (
    HomeError,
    KnownPeers,
    Remembered,
    identity_fingerprint,
    load_identity,
    new_transcript_path,
    secrets_path,
)
from p2pwhist.identity import same_fingerprint
from p2pwhist.limits import DEFAULT_TIMEOUT, DEFAULT_WAIT, MIN_WAIT
from p2pwhist.local import LocalMatch, play_match
from p2pwhist.net import (
    Agent,
    GameRecord,
    HostOptions,
    NetError,
    PeerOptions,
    host,
    join,
    watch,
)
from p2pwhist.reach.lan import HEAR_SECONDS, Heard, NoTable, hear_tables
from p2pwhist.session_events import Awaiting, HandOver, MatchOver, Moved, Seated, SessionEvent, Settled, TableChanged
from p2pwhist.table import Heard as TableHeard
from p2pwhist.table import chat_line
from p2pwhist.text import YOU, check_line, hand_line, match_line, match_summary
from p2pwhist.transcript import TranscriptError, read_transcript
from p2pwhist.ui import InputClosed, TerminalPlayer, Watcher
from p2pwhist.ui.fullscreen import FullScreenPlayer, can_go_full_screen
from p2pwhist.ui.terminal import TerminalQuestions, Thinking, hint_bot, style_for
from p2pwhist.verify import verify

# Lines a person may say before the table has taken them: more, typed faster than the edge
# passes them on, are not said (the table would refuse them anyway: at most a few in ten seconds).
SAID_AHEAD = 4


_CORES: dict[int | None, Cores] = {}  # this process's worker pools, by --cores (one per program run)


def _thinking(args: argparse.Namespace) -> Thinking:
    """How this program's search bots think: at ``--level`` (the default level if none), each
    move over ``--cores`` processes (every core if none; ``p2pwhist.cores``)."""
    cores = _CORES.setdefault(args.cores, Cores(args.cores))
    return Thinking(args.level or DEFAULT_LEVEL, cores.workers, cores.run)


def _hinting(args: argparse.Namespace) -> Thinking:
    """How a person's hints think: at the level they chose, in this process, since a hint stops
    thinking the moment its person moves (its clock, a closure, cannot go to another process)."""
    return Thinking(args.level or DEFAULT_LEVEL)


def _full_screen(args: argparse.Namespace, person: bool) -> FullScreenPlayer | None:
    """The full-screen table for a person at a real terminal, unless --plain."""
    if not person or not _at_screen(args):
        return None
    return FullScreenPlayer(quiet=args.quiet, auto_forced=_auto_forced(args.auto_forced), thinking=_hinting(args))


def _at_screen(args: argparse.Namespace) -> bool:
    """A person at a real terminal who did not ask for lines (``--plain``)."""
    return not args.plain and can_go_full_screen()


def _auto_forced(given: bool | None) -> bool:
    """``--auto-forced`` or ``--no-auto-forced``, remembered as the person's choice; neither:
    the choice they last made (off until they make one)."""
    remembered = Remembered.auto_forced()
    if given is None:
        return remembered.load() == "on"
    try:
        remembered.save("on" if given else "off")
    except HomeError as error:
        print(f"p2pwhist: your --auto-forced choice is not remembered: {error}", file=sys.stderr)
    return given


class _Display:
    """What a playing peer shows: a person's table and prompts, or a bot's progress lines.

    With ``watch``, a bot plays and the table is shown from its seat as the game goes."""

    def __init__(self, bot: str | None, watch: bool = False, full: FullScreenPlayer | None = None,
                 level: str | None = None, chat: bool = False, thinking: Thinking = Thinking(),
                 hinting: Thinking = Thinking()) -> None:
        self.full = full  # the full-screen table, which then shows everything
        self.bot_name = bot
        self.level = level  # the search bot's as given (None: its default)
        self.thinking = thinking  # how the search bot thinks
        self.hinting = hinting  # how the hints think
        self.bot: Steady | None = None  # made once the game is known: a joiner learns it from START
        self.watch = watch
        self.ui: TerminalPlayer | None = None  # made once the seat and the names are known
        self.words: GameText | None = None
        self.seat = 0
        self.names: list[str] = []  # every seat's name, as its player chose it
        self.told_hands = 0  # the hands whose results were printed as lines as they ended (a bot's)
        # Table talk, for a person who has not said --no-chat: what they say, on its way to the
        # table; a bot says nothing, and is shown nothing.
        self.talk = trio.open_memory_channel[str](SAID_AHEAD) if chat and bot is None else None
        if self.talk is not None and full is not None:
            full.allow_talk(self._say)

    def agent(self) -> Agent:
        if self.full is not None:
            return Agent(self.full.choose, threaded=False, wish=self.full.another_hand, stop=self.full.stop_early)
        if self.bot_name is not None:
            # In a worker thread: a searching bot thinks for up to a second, and the peer must
            # stay responsive meanwhile (the host relays, timeouts run).
            return Agent(lambda view: self._bot().choose(view), threaded=True)
        return Agent(lambda view: self._terminal().choose(view), threaded=True,
                     wish=lambda: self._terminal().another_hand(), stop=lambda: self._terminal().stop_early())

    # The agent is made before the game is known, and asks for these once it is.

    def _bot(self) -> Steady:
        assert self.bot is not None, "made at START, before any move is asked for"
        return self.bot

    def _terminal(self) -> TerminalPlayer:
        assert self.ui is not None, "made at START, before anything is asked"
        return self.ui

    def talk_options(self) -> dict[str, Any]:
        """The edge's ends of table talk (``PeerOptions.hear``, ``say``): none without it."""
        if self.talk is None:
            return {}
        return {"hear": self.full.heard if self.full is not None else self._print_heard, "say": self.talk[1]}

    def _say(self, text: str) -> None:
        """A line our person says, on the event loop; one said too fast for the table is not said."""
        assert self.talk is not None
        try:
            self.talk[0].send_nowait(text)
        except trio.WouldBlock:
            self.report("Not said: the table has not taken your last lines yet.")

    def _say_from_thread(self, text: str) -> None:
        """``_say`` from the line interface's thread."""
        trio.from_thread.run_sync(self._say, text)

    def report(self, line: str) -> None:
        """A line from the network edge: on the full-screen table's message line, or as a line
        of its own, even while a question waits for the person (``TerminalPlayer.interject``)."""
        if self.full is not None:
            self.full.report(line)
        elif self.ui is not None:
            self.ui.interject(line)
        else:
            print(line, flush=True)

    def _print_heard(self, heard: TableHeard) -> None:
        self.report(chat_line(heard))

    def on_event(self, event: SessionEvent) -> None:
        """Show one of the session's events (``Session.take_events``): on the full-screen table
        if there is one, else as lines."""
        if isinstance(event, Seated):
            self._sit(event.table, event.seat)
        if self.full is not None:
            self.full.on_event(event)
        elif isinstance(event, TableChanged):  # a card played or revealed
            if self.ui is not None:  # show each trick or round as it ends, its stack draws revealed
                self.ui.follow(event.hand.view(self.seat))
        elif isinstance(event, Awaiting):
            # A person waiting is told for whom, when a player chooses (a move, another hand?):
            # every other message comes at once.
            if self.ui is not None and not self.watch and event.why.is_choice:
                print(event.why.line(self.names[event.seat]), flush=True)
        elif isinstance(event, HandOver):
            if self.ui is not None:
                self.ui.hand_over(event.hand, event.result)
            else:
                assert self.words is not None
                print(hand_line(event.number, event.result, self.names, self.words.result_line) + ".", flush=True)
                self.told_hands = event.number
        elif isinstance(event, Settled):  # the stop question follows
            print(f"{event.line(self.names)}.", flush=True)

    def _sit(self, table: Table, seat: int | None) -> None:
        """The game is known (START): its words, the bot that plays, the line interface."""
        assert seat is not None, "a playing peer holds a seat"
        entry = game_entry(table.game)
        self.words, self.seat, self.names = entry.text, seat, [p.name for p in table.players]
        if self.bot_name is not None:
            # OS-seeded and on the real clock: the edge may be random and read the time.
            thinking = self.thinking
            self.bot = Steady(make_bot(_game_bot(entry, self.bot_name, self.level), random.Random(), self.level,
                                       time.perf_counter, thinking.workers, thinking.runner))
        if self.full is None and (self.bot_name is None or self.watch):
            names = list(self.names)
            if not self.watch:
                names[seat] = YOU
            said = None if self.talk is None or self.watch else self._say_from_thread
            self.ui = TerminalPlayer(seat, self.words, sys.stdin, sys.stdout, names=names, hints=hint_bot(entry),
                                     say=said, thinking=self.hinting)

    def run(self, main, *args):
        """``trio.run(main, *args)``, with the full-screen table beside it if there is one."""
        return _trio_run(self.full.run, main, *args) if self.full is not None else _trio_run(main, *args)

    def finish(self, record: GameRecord) -> None:
        """The match's end, after the table (line or full-screen) is gone (``_finish``)."""
        _finish(record, self.told_hands)


def _finish(record: GameRecord, told_hands: int = 0) -> None:
    """The match's end, after the table (line or full-screen) is gone: hand by hand (but the
    first ``told_hands``, already printed as lines as they ended), who left and why, the
    result, and how to check the transcript."""
    names = [p.name for p in record.table.players]
    outcome = record.outcome
    assert outcome is not None
    left = outcome.forfeited
    for line in match_summary(names, outcome.hands, game_entry(record.table.game).text.result_line)[told_hands:]:
        print(line)
    reason = outcome.reason(names)  # who left, or declined, or that everyone agreed to stop
    if reason is not None:
        print(f"{reason}.")
    print(f"Match over. {match_line(names, outcome.points, outcome.winner, None if left is None else left.seat)}.")
    print(check_line(record.transcript), flush=True)


def _trio_run(main, *args):
    """``trio.run``, with Ctrl-C (and the hang-up and kill that ``cli`` turns into it) raised
    only where a cancellation could be, at a checkpoint: never between two steps of a
    machine's update, a transcript's write, or the making and the awaiting of a coroutine
    (which Python then warns of). Every wait on a thread gives up at once when cancelled, so
    this costs no delay."""
    return trio.run(main, *args, restrict_keyboard_interrupt_to_checkpoints=True)


class Steady:
    """A bot whose forced moves (its only legal one, which a searching bot makes at once)
    take as long as its last real choice did: how soon a move comes then tells the table
    nothing of what the bot holds. Blocking (it sleeps): call it in a worker thread."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.usual = 0.0  # seconds its last choice among several took

    def choose(self, view: View) -> Play:
        asked = time.monotonic()
        move = self.bot.choose(view)
        took = time.monotonic() - asked
        if len(view.legal_moves) > 1:
            self.usual = took
        else:
            time.sleep(max(0.0, self.usual - took))
        return move


def _asker(bot: str | None):
    """How to ask the person at the terminal about a key we never played with; None when
    nobody is there (a bot, no terminal): new keys are then accepted (wire.md §5)."""
    if bot or not sys.stdin.isatty():
        return None
    return TerminalQuestions(sys.stdin, sys.stdout).ask


def _going_on(transcript: Path | None, key: Ed25519PrivateKey) -> Path | None:
    """The unfinished game of ours that ``--transcript`` names (its secrets file beside it), to
    go on with; None for a new game. Any other file there is never overwritten: a
    ``ConfigError``. Found now, not once the game began (its files are made with O_EXCL then)."""
    if transcript is None:
        return None
    saved = secrets_path(transcript)
    if os.path.lexists(transcript) and os.path.lexists(saved):
        return unfinished(transcript, key).path
    if os.path.lexists(transcript):  # a file, or a symbolic link even to nowhere
        raise ConfigError(f"{transcript} already exists: a transcript is never overwritten")
    if os.path.lexists(saved):
        raise ConfigError(f"{saved} already exists: a secrets file is never reused (whoever made it "
                          "could read your cards; remove it if it is yours)")
    return None


def _options(args: argparse.Namespace, display: _Display) -> PeerOptions:
    """What ``host`` and ``join`` share. A ``--transcript`` that exists is the game to go on
    with if it is an unfinished game of ours; otherwise it is never overwritten."""
    key = load_identity(args.identity)
    resume = _going_on(args.transcript, key)
    name = _person_name(args.name, _at_terminal(args.bot))
    known = KnownPeers.default()
    return PeerOptions(
        name=name,
        key=key,
        agent=display.agent(),
        transcript=args.transcript,
        # The table's limits, a host's to set (START carries them); a joiner plays by the table's.
        timeout=getattr(args, "timeout", DEFAULT_TIMEOUT),
        known=known,
        ask=_asker(args.bot),
        report=display.report,
        news=display.full.news if display.full is not None else None,
        on_event=display.on_event,
        wait=getattr(args, "wait", DEFAULT_WAIT),
        command=args.argv,
        resume=resume,
        **display.talk_options(),
    )


def _finished(args: argparse.Namespace) -> bool:
    """Whether ``--transcript`` names a game that is over (no secrets file beside it), which
    this same command, run again after it ended, only reports: the match's result, once."""
    path = args.transcript
    if path is None or not os.path.isfile(path) or os.path.islink(path) or os.path.lexists(secrets_path(path)):
        return False
    try:
        verdict = verify(read_transcript(path))
    except TranscriptError:
        return False  # not a transcript: ``_options`` refuses to overwrite it
    if not verdict.valid or verdict.session is None or verdict.session.outcome is None:
        return False
    outcome, names = verdict.session.outcome, [p.name for p in verdict.session.table.players]
    left = outcome.forfeited
    print(f"{path} holds a match that is over. "
          f"{match_line(names, outcome.points, outcome.winner, None if left is None else left.seat)}.")
    return True


def _chosen(args: argparse.Namespace) -> tuple[GameEntry, Game]:
    """The game ``--game``, ``--players`` and the game options given (``--NAME``) name."""
    given = {name: getattr(args, name) for name in options_offered() if getattr(args, name) is not None}
    return chosen(args.game, args.players, given)


def _game_bot(entry: GameEntry, name: str, level: str | None) -> BotFactory:
    """The bot ``name`` of ``entry``'s game, able to play at ``level``, or a ``ConfigError``
    that says plainly what the game lacks."""
    if name not in entry.bots:
        raise ConfigError(f"{entry.name} has no {name!r} bot (it has {', '.join(entry.bots)})")
    if level is not None and entry.search_bot is None:
        raise ConfigError(f"{entry.name} has no search bot, so no levels")
    check_level(entry.bots[name], level)
    return entry.bots[name]


def host_command(args: argparse.Namespace) -> int:
    if _finished(args):
        return 0
    _, game = _chosen(args)
    length = MatchLength(hands=args.hands, minutes=args.minutes)  # neither: an open match
    display = _Display(args.bot, full=_full_screen(args, args.bot is None), level=args.level, chat=not args.no_chat,
                       thinking=_thinking(args), hinting=_hinting(args))
    options = _options(args, display)
    if options.resume is None and args.transcript is None:
        options.resume = started_by(args.argv)  # the very same command again: its game goes on
        if options.resume is None:
            _say_what_waits(options.key, options.report)
    options.spectators, options.delay = args.spectators, args.delay
    table = HostOptions(game, length, args.port, args.bind, announce=not args.no_announce, map_port=not args.no_map)
    with _telling_where(args, options):
        record = display.run(host, options, table)
    display.finish(record)
    return 0


@contextlib.contextmanager
def _telling_where(args: argparse.Namespace, options: PeerOptions) -> Iterator[None]:
    """However the game ends, ``args.transcript`` then names its transcript if one was made or
    reopened (``options.transcript``): stopped by Ctrl-C, ``p2pwhist.cli`` says how to go back
    to it, or where it is kept."""
    try:
        yield
    finally:
        args.transcript = options.transcript


def _say_what_waits(key: Ed25519PrivateKey, report: Callable[[str], None]) -> None:
    """One line when an unfinished game of ``key``'s waits while we start another table."""
    waiting = our_unfinished(key)
    if waiting:
        game = waiting[0]
        report(f"An unfinished game ({game.describe()}) is waiting in {game.path}: "
               f"p2pwhist resume {game.path} goes back to it. This is a new table.")


def join_command(args: argparse.Namespace) -> int:
    if args.stop_with_input and args.bot is None:  # it reads standard input: a person's keys would go to it
        raise ConfigError("--stop-with-input is for a computer player (--bot), whose input nobody types into")
    if args.address is None:
        _choose_table(args)
    address, port = parse_address(args.address)
    if _finished(args):
        return 0
    display = _Display(args.bot, full=_full_screen(args, args.bot is None), level=args.level, chat=not args.no_chat,
                       thinking=_thinking(args), hinting=_hinting(args))
    options = _options(args, display)
    print(f"Your key fingerprint is {identity_fingerprint(options.key)}", flush=True)
    # The very same command again, for a game it started: the host may be restarting too, so
    # keep trying within the wait; once it answers, its WELCOME says whether that game goes on.
    patient = options.resume is None and started_by(args.argv) is not None
    playing = partial(join, options, address, port, args.expect, None, patient)
    with _telling_where(args, options):
        record = display.run(_until_input_closes, playing) if args.stop_with_input else display.run(playing)
    display.finish(record)
    return 0


async def _until_input_closes(playing: Callable[[], Awaitable[GameRecord]]) -> GameRecord:
    """``playing()``, unless standard input closes first: then ``InputClosed``, the game kept
    to go on with. ``play`` holds the other end of its computer players' input, so that they
    stop with it however it ends, even killed outright (``_bot_process``), instead of waiting
    for it to come back and then declaring it gone, which would end a match that its person
    can still take up again (``p2pwhist resume``)."""
    records: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        async def play_then_stop_reading() -> None:
            records.append(await playing())
            nursery.cancel_scope.cancel()

        nursery.start_soon(play_then_stop_reading)
        async with trio.lowlevel.FdStream(os.dup(sys.stdin.fileno())) as given:
            while await given.receive_some():  # nothing is written to it: only its end matters
                pass
        raise InputClosed("the play that started this computer player is gone")
    return records[0]


class _Spectating:
    """What a spectator shows, as lines: at each hand, once its table can be read, the table
    from the public view (``HandState.view(None)``: every seat's counts, trumps, the exposed
    card); then each card as it is played (and each trick or round as it ends), each hand's
    result and the points. It holds no seat: every line comes from the public log, in the
    game's own words (``GameText.table``, ``GameText.move``). A move that ends a trick is said
    once the keys round after it has revealed the cards its line names (the stack draws:
    ``GameText.finished``), which comes before the next move."""

    def __init__(self) -> None:
        self.words: GameText | None = None
        self.names: list[str] = []
        self.style = style_for(sys.stdout)
        self.tables_shown = 0  # the hands whose table was shown
        self.moved: tuple[Moved, str] | None = None  # a move not yet said, and its lines as it was made
        self.told_hands = 0  # the hands whose results were said

    def on_event(self, event: SessionEvent) -> None:
        if isinstance(event, Seated):
            self.words, self.names = game_entry(event.table.game).text, [p.name for p in event.table.players]
            return
        words = self.words
        assert words is not None, "START comes first"
        if isinstance(event, TableChanged):
            self._say_move()
            if len(event.match.hands) > self.tables_shown:
                hand_no = len(event.match.hands)
                try:  # a hand still being dealt cannot be read yet (its trumps unrevealed)
                    table = words.table(event.hand.view(None), self.names, self.style, hand_no, event.match.points)
                except EngineMisuse:
                    return
                self.tables_shown = hand_no
                print(table, flush=True)
        elif isinstance(event, Moved):
            self._say_move(waited=True)
            self.moved = (event, words.move(event.hand, event.seat, event.move, self.names, self.style))
            self._say_move()
        elif isinstance(event, HandOver):
            self._say_move(waited=True)
            points = ", ".join(f"{name} {p}" for name, p in zip(self.names, event.points, strict=True))
            print(f"{hand_line(event.number, event.result, self.names, words.result_line)}. Points: {points}",
                  flush=True)
            self.told_hands = event.number
        elif isinstance(event, Settled):
            print(f"{event.line(self.names)}.", flush=True)
        elif isinstance(event, MatchOver):
            self._say_move(waited=True)

    def _say_move(self, waited: bool = False) -> None:
        """The move not yet said, once every trick is told in full; or, ``waited`` (the next
        move or the hand's end came first: the cards were never revealed), as it was made."""
        if self.moved is None:
            return
        event, made = self.moved
        words = self.words
        assert words is not None
        if waited:
            print(made, flush=True)
        else:
            view = event.hand.view(None)
            if words.finished_lines(view, words.finished(view), self.names, self.style):
                return  # a trick not yet told: a card its line names is still to be revealed
            print(words.move(event.hand, event.seat, event.move, self.names, self.style), flush=True)
        self.moved = None


def watch_command(args: argparse.Namespace) -> int:
    """``watch [HOST[:PORT]]``: follow a table from no seat, checking every message as it comes:
    on the full-screen table at a real terminal (unless ``--plain``), else as lines. ``q`` on
    the full screen stops watching, keeping the transcript so far."""
    found = args.address is None
    if found:
        _choose_table(args, watching=True)
    address, port = parse_address(args.address)
    if args.transcript is not None and os.path.lexists(args.transcript):
        raise ConfigError(f"{args.transcript} already exists: a transcript is never overwritten")
    if not found:  # the host sends nothing before its game begins: say what we wait for
        print(f"Watching the table at {args.address}: it shows here once its game has begun.", flush=True)
    full = FullScreenPlayer(quiet=True) if _at_screen(args) else None  # a spectator's turn never comes
    lines = _Spectating()
    hear = None if args.no_chat else full.heard if full is not None else lambda heard: print(chat_line(heard),
                                                                                              flush=True)
    # A spectator signs nothing and proves nothing: a key of the moment stands in for the
    # identity a seat would need, so watching never creates one.
    options = PeerOptions(name="spectator", key=Ed25519PrivateKey.generate(), agent=Agent(_no_moves, threaded=False),
                          transcript=args.transcript, hear=hear,
                          on_event=full.on_event if full is not None else lines.on_event,
                          news=full.news if full is not None else None,
                          report=full.report if full is not None else partial(print, flush=True))
    if full is None:
        record = _trio_run(watch, options, address, port, args.expect)
    else:
        record = _trio_run(full.run, watch, options, address, port, args.expect)
        if record is None:  # q: the transcript so far is a valid prefix of the table's log
            transcript = options.transcript
            # q is read only on the screen, which the game's first event opens: its files are made by then
            assert transcript is not None
            print(f"You stopped watching. The log so far, each message checked, is in {transcript}")
            print(check_line(transcript), flush=True)
            return 0
    _finish(record, lines.told_hands)  # none told on the full screen, which is gone
    return 0


def _no_moves(view: object) -> Play:
    raise ConfigError("a spectator makes no moves")


def _choose_table(args: argparse.Namespace, watching: bool = False) -> None:
    """``join`` (or ``watch``: ``watching``) with no address: the table heard on this network
    (the one with the ``--expect`` fingerprint, if given), asked of the person when there are
    several. Its address and its fingerprint (as ``--expect``) become the command's, so
    ``resume`` runs a ``join`` that goes back to that host, not a new search. ``NoTable`` when
    there is none to join."""
    verb = "watch" if watching else "join"
    heard = _hear()
    tables = [ad for ad in heard.tables if ad.address is not None
              and (args.expect is None or same_fingerprint(args.expect, ad.fingerprint))]
    if not tables:
        whose = " with that key fingerprint" if args.expect is not None and heard.tables else ""
        raise NoTable(f"no table{whose} heard on this network within {HEAR_SECONDS:g} s: ask the host for the "
                      "join line it printed (p2pwhist join HOST[:PORT] --expect FINGERPRINT)")
    known = _known()
    if len(tables) == 1:
        ad = tables[0]
    elif args.bot is not None or not sys.stdin.isatty():
        raise NoTable(f"several tables heard on this network; {verb} one with its line:\n" + "\n".join(
            f"  {ad.lines(known)[0]}\n    p2pwhist {verb} {ad.where}"
            + ("" if watching else f" --expect {ad.fingerprint}") for ad in tables))
    else:
        print("Tables on this network:")
        for number, ad in enumerate(tables, 1):
            what, whose = ad.lines(known)
            print(f"  {number}. {what}\n     {whose}")
        ad = tables[_pick(len(tables), verb) - 1]
    print(f"{'Watching' if watching else 'Joining'} {ad.host}'s table at {ad.where} (key {ad.fingerprint})",
          flush=True)
    args.address, args.expect = ad.where, ad.fingerprint
    typed = args.argv[1:]
    for at, word in enumerate(typed):  # a --expect given is the one found: it is written once, below
        if word == "--expect":
            del typed[at : at + 2]
            break
        if word.startswith("--expect="):
            del typed[at]
            break
    args.argv = [verb, ad.where, *(() if watching else ("--expect", ad.fingerprint)), *typed]


def _hear() -> Heard:
    """The tables announced on this network, after listening ``HEAR_SECONDS``."""
    print(f"Listening for tables on this network ({HEAR_SECONDS:g} s)...", flush=True)
    heard = hear_tables()
    if heard.rejected:
        print(f"({heard.rejected} announcement{'s' if heard.rejected > 1 else ''} left out: {heard.why})")
    return heard


def _known() -> dict[str, str]:
    """Fingerprint → the name we last played that key under (nothing if it cannot be read)."""
    try:
        return KnownPeers.default().load()
    except HomeError:
        return {}


def _pick(count: int, verb: str) -> int:
    """The number of the table the person picks, from 1 to ``count``, to ``verb`` (join, watch)."""
    while True:
        try:
            answer = input(f"{verb.capitalize()} which table (1 to {count}; Enter for none)? ").strip()
        except EOFError:
            answer = ""
        if not answer:
            raise NoTable("no table chosen")
        if answer.isdigit() and 1 <= int(answer) <= count:
            return int(answer)
        print(f"Type a number from 1 to {count}.")


def tables_command(args: argparse.Namespace) -> int:
    """``tables``: list the tables heard on this network, nothing more."""
    heard = _hear()
    if not heard.tables:
        print(f"No table heard on this network within {HEAR_SECONDS:g} s.")
        return 0
    known = _known()
    print("Tables on this network (join one with its line, or run p2pwhist join to choose):")
    for ad in heard.tables:
        what, whose = ad.lines(known)
        print(f"  {what}\n    {whose}")
        if ad.address is not None:
            print(f"    p2pwhist join {ad.where} --expect {ad.fingerprint}")
    return 0


# The computer players of ``play`` wait for a person: the table gives a move a day, not minutes.
PLAY_BOT_TIMEOUT = 86400
# ``play``'s host is this process, which never loses its bots' connections: a bot that loses its
# own, its ``play`` killed outright (``kill -9``), ends after the least wait, not five minutes.
PLAY_WAIT = MIN_WAIT


def play_command(args: argparse.Namespace) -> int:
    """A host in this process (the person, or a watched bot) and bots as separate processes.

    The match keeps its files as a host's do, and the bots theirs in a folder beside its
    transcript (``bot_homes``), so that one stopped goes on where it stopped: ``p2pwhist resume``
    runs this command again with ``--transcript``, the person's seat resumes from it and each
    bot from its own."""
    entry, game = _chosen(args)
    args.bot = args.bot or entry.default_bot
    _game_bot(entry, args.bot, args.level)
    if args.local:
        if args.transcript is not None:
            raise ConfigError("a --local match keeps no transcript, so it takes no --transcript")
        return _play_local(args, entry, game)
    if _finished(args):
        return 0
    display = _Display(args.bot if args.watch else None, watch=args.watch, full=_full_screen(args, not args.watch),
                       level=args.level, chat=not args.no_chat, thinking=_thinking(args), hinting=_hinting(args))
    # No hosting instructions to print, and no known peers to ask about. A person plays under
    # their own name and key; a bot, watched in seat 0 or playing another, under its own
    # (``_bot_name``, ``bot_key``), never the person's: a match of bots is not theirs.
    seat_0 = _bot_name(args.bot, 0, args.level) if args.watch else None
    key = load_identity(None if seat_0 is None else bot_key(seat_0))
    resume = _going_on(args.transcript, key)
    if resume is not None:
        check_bots_folder(resume)
    else:
        _say_what_waits(key, display.report)
    # A new match's transcript is named now, not at START as a host's: its bots' folder goes
    # beside it, and they join before START.
    transcript = resume or args.transcript or new_transcript_path(secrets.token_bytes(32))
    options = PeerOptions(name=seat_0 or _person_name(args.name, _at_terminal(None)), key=key, agent=display.agent(),
                          transcript=transcript, resume=resume, command=args.argv,
                          timeout=PLAY_BOT_TIMEOUT, wait=PLAY_WAIT, report=lambda line: None,
                          on_event=display.on_event,
                          **display.talk_options())

    async def run() -> GameRecord:
        records: list[GameRecord] = []
        seated = [trio.Event() for _ in range(game.players)]  # seated[k]: k joiners are seated

        async def host_task(task_status=trio.TASK_STATUS_IGNORED) -> None:
            table = HostOptions(game, MatchLength(hands=args.hands), 0, "127.0.0.1",
                                seated=lambda count: seated[count].set())
            records.append(await host(options, table, task_status=task_status))

        async with trio.open_nursery() as nursery:
            port = await nursery.start(host_task)
            for seat in range(1, game.players):
                name = _bot_name(args.bot, seat, args.level)
                # The same command each time: its transcript is a new game's place, or the game to go on with.
                command = [sys.executable, "-m", "p2pwhist", "join", f"127.0.0.1:{port}", "--bot", args.bot,
                           "--name", name, "--identity", str(bot_key(name)),
                           "--transcript", str(bot_transcript(transcript, seat)), "--stop-with-input"]
                if args.level is not None:
                    command += ["--level", args.level]
                if args.cores is not None:
                    command += ["--cores", str(args.cores)]
                env = {**os.environ, "P2PWHIST_HOME": str(bot_home(transcript, seat))}
                nursery.start_soon(_bot_process, command, env, name)
                if resume is None:  # one at a time, so that each sits where it is named
                    await seated[seat].wait()
        return records[0]

    held = None
    if resume is None:
        sweep_bots_folders(transcript.parent)
        held = make_bots_folder(transcript)
    try:
        with _telling_where(args, options):
            record = display.run(run)
    finally:  # the bots' files live as long as the match's secrets: while it may go on
        if not secrets_path(transcript).exists():  # over, or never begun
            remove_bots_folder(transcript)
        if held is not None:
            os.close(held)
    display.finish(record)
    return 0


def _at_terminal(bot: str | None) -> bool:
    """Whether a person is at a terminal to be asked: not a bot's seat, and a terminal to type on."""
    return bot is None and sys.stdin.isatty() and sys.stdout.isatty()


def _person_name(given: str | None, asking: bool) -> str:
    """The name a person plays under: ``--name``; else the name they chose before (kept in
    ``$P2PWHIST_HOME/name``); else, at a terminal (``asking``), what they answer when asked
    once, their login name (or "player" where it cannot be a name) if they just press Enter;
    else their login name, or "player". A name chosen at a terminal, typed or given with
    ``--name``, is remembered as the next default: the name a person last chose is theirs
    until they choose another. Bots and programs without a terminal never ask and never
    change it."""
    login = _login_name() or "player"
    saved = Remembered.name()
    if given is not None:
        name = check_name(given)
    elif (remembered := saved.load()) is not None:
        return remembered
    elif asking:
        name = _ask_name(login)
    else:
        return login
    if asking and name != saved.load():
        try:
            saved.save(name)
        except HomeError as error:
            print(f"p2pwhist: your name is not remembered: {error}", file=sys.stderr)
    return name


def _login_name() -> str | None:
    """The login name, if it can be a name at the table."""
    try:
        return check_name(os.environ.get("USER") or os.environ.get("USERNAME") or "")
    except ConfigError:
        return None


def _ask_name(default: str) -> str:
    """Ask the person at the terminal for their name until it is one; Enter takes ``default``."""
    while True:
        try:
            answer = input(f"Your name at the table? [{default}] ").strip()
        except EOFError:
            return default
        if not answer:
            return default
        try:
            return check_name(answer)
        except ConfigError as error:
            print(f"p2pwhist: {error}")


def _bot_name(kind: str, seat: int, level: str | None) -> str:
    """A computer player's name: its kind, its level unless the default, and its seat
    ("search-1", "search-hard-2"), which also names the key it keeps (``bot_key``): another
    level is another opponent in ``p2pwhist stats``."""
    return f"{kind}-{seat}" if level in (None, DEFAULT_LEVEL) else f"{kind}-{level}-{seat}"


async def _bot_process(command: list[str], env: dict[str, str], name: str) -> None:
    """Run one computer player (``join --stop-with-input``); if it fails, stop the game with its
    last words. Its input is a pipe whose other end only this process holds, open until the
    player ends: if this process ends first, however it ends, the player's input closes."""
    given, held = os.pipe()
    try:
        # trio collects a child's output only with capture_stderr; stderr=PIPE is refused here.
        done = await trio.run_process(command, check=False, stdin=given, stdout=subprocess.DEVNULL,
                                      capture_stderr=True, env=env)
    finally:
        os.close(given)
        os.close(held)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines() or [f"exit code {done.returncode}"]
        raise NetError(f"the computer player {name} stopped: {lines[-1]}")


def _play_local(args: argparse.Namespace, entry: GameEntry, game: Game) -> int:
    """The match in this process (``local.LocalMatch``), bots in every seat but the person's
    (seat 0): on the full-screen table at a terminal, whose trio loop then drives the match, else
    on the line interface. ``--watch`` shows the bots' game as lines, every bot's cards as
    dealt: more than the full-screen spectator's table, which is from no seat, shows."""
    rng = random.Random(args.seed)
    # A seeded game repeats exactly: its bots keep to their playout budgets, with no clock.
    clock = None if args.seed is not None else time.perf_counter
    thinking = _thinking(args)
    bots: list[Bot] = [Steady(make_bot(entry.bots[args.bot], rng, args.level, clock, thinking.workers, thinking.runner))
                       for _ in range(game.players)]
    length = MatchLength(hands=args.hands)
    full = None if args.watch else _full_screen(args, True)
    if full is None:
        ui: Watcher | TerminalPlayer
        if args.watch:
            ui = Watcher(entry.text, sys.stdout)
        else:
            ui = TerminalPlayer(0, entry.text, sys.stdin, sys.stdout, hints=hint_bot(entry), thinking=_hinting(args))
            bots[0] = ui
        on_move = ui.on_move if isinstance(ui, Watcher) else None
        ui.match_over(play_match(game, length, bots, rng, on_hand=ui.hand_over, on_move=on_move))
        return 0

    # Named as in networked play: the person under their own name, each bot by its kind and seat.
    person = _person_name(args.name, _at_terminal(None))
    names = [person, *(_bot_name(args.bot, seat, args.level) for seat in range(1, game.players))]
    full.sit(entry.text, 0, [YOU, *names[1:]], hint_bot(entry))
    local = LocalMatch(game, length, rng)
    _trio_run(full.run, _local_turns, full, local, bots)
    match = local.match
    print(f"Match over. {match_line(names, match.points, match.winner)}.")
    return 0


async def _local_turns(full: FullScreenPlayer, local: LocalMatch, bots: Sequence[Bot]) -> None:
    """Play ``local`` to its end on the full-screen table ``full``: the person in seat 0, each
    other seat's bot in a worker thread, so that the screen takes keys and redraws while a bot
    thinks. One thread at a time, as the seeded game's one ``random.Random`` needs."""
    while (turn := local.next_turn()) is not None:
        full.follow(local.match)
        if turn.seat == 0:
            move = await full.choose(turn.view())
        else:
            move = await trio.to_thread.run_sync(bots[turn.seat].choose, turn.view(), abandon_on_cancel=True)
        if local.play(move) is not None:  # the hand is over: its result stays until a key
            full.follow(local.match)
