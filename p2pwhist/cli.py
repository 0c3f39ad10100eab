"""The ``p2pwhist`` command: argument parsing and user-facing errors, nothing else.

Every user mistake or peer failure ends in one line on stderr and a non-zero exit code,
never a traceback:

- 1: the game stopped, or never started, because of a peer or the network: unreachable,
  refused us (full table, name taken, changed key), disconnected, silent past the timeout,
  broke the protocol or the rules, or runs another protocol version or a game configuration
  this program cannot accept. A version or configuration mismatch is 1, not 2, on purpose:
  it comes from the other side, and nothing on our own command line would fix it.
  ``verify`` and ``show`` also exit 1 for a transcript that is readable but not a valid game.
- 2: our own usage or local configuration: bad arguments, an unreadable identity file, a
  file that is not a transcript at all.
- 130: interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Sequence

import trio

from p2pwhist.bodies import check_name
from p2pwhist.bots import DEFAULT_LEVEL, LEVELS, Bot, check_level, make_bot
from p2pwhist.games.base import ConfigError, Game, GameEntry, GameText, HandResult
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES, game_entry
from p2pwhist.home import (
    HomeError,
    KnownPeers,
    command_path,
    identity_fingerprint,
    load_identity,
    secrets_path,
    unfinished_games,
)
from p2pwhist.local import LocalMatch, play_match
from p2pwhist.net import (
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_WAIT,
    Agent,
    GameRecord,
    HostOptions,
    NetError,
    PeerOptions,
    host,
    join,
    parse_address,
    unfinished,
)
from p2pwhist.session import Session
from p2pwhist.signed import Kind, SignedMessage, fingerprint
from p2pwhist.text import YOU, match_line
from p2pwhist.transcript import TranscriptError, read_transcript
from p2pwhist.ui import InputClosed, TerminalPlayer, Watcher
from p2pwhist.ui.fullscreen import FullScreenPlayer, can_go_full_screen
from p2pwhist.ui.scoresheet import scoresheet
from p2pwhist.ui.terminal import hint_bot
from p2pwhist.verify import verify

EXIT_PEER = 1
EXIT_USAGE = 2

DESCRIPTION = """\
Card games for 2 to 6 players who share no server and need not trust each other:
Box Whist (--game boxwhist, 2-4 players) and Bradley's Box (--game box, 2-6 players).

  p2pwhist play              play against the computer on this machine
  p2pwhist host              start a table others can join
  p2pwhist join HOST[:PORT]  sit down at someone's table
  p2pwhist resume [FILE]     go back to a game that stopped (a crash, Ctrl-C, a lost connection)
  p2pwhist rules [GAME]      how to play a game (without GAME: the games)
  p2pwhist verify FILE       check a recorded game
  p2pwhist show FILE         print a recorded game like a score sheet

Set P2PWHIST_HOME to keep identity, known peers and saved games somewhere else
(default ~/.local/share/p2pwhist), e.g. to run several peers on one machine.
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError("must be between 0 and 86400 seconds")
    return value


# Every game has these bots (its registry entry says which it has).
BOT_NAMES = sorted(set().union(*(entry.bots for entry in GAMES.values())))


def _game_arguments(parser: argparse.ArgumentParser, players_help: str) -> None:
    """--game, --players and --variant, checked against the game's entry by ``_game``."""
    games = ", ".join(f"{name} ({min(e.players)}-{max(e.players)} players, default {e.default_players})"
                      for name, e in GAMES.items())
    parser.add_argument("--game", choices=sorted(GAMES), default="boxwhist", help=f"the game: {games} (default boxwhist)")
    parser.add_argument("--players", type=int, help=players_help)
    variants = "; ".join(f"{name}: {'|'.join(e.options['variant'])}" for name, e in GAMES.items() if "variant" in e.options)
    parser.add_argument("--variant", help=f"the rules' variant, for games that have one ({variants}; the first is the default)")


def _game(args: argparse.Namespace) -> tuple[GameEntry, Game]:
    """The game the arguments ask for, or a usage error naming what the game allows."""
    entry = GAMES[args.game]
    players = entry.default_players if args.players is None else args.players
    if players not in entry.players:
        raise ConfigError(f"{args.game} is for {', '.join(map(str, entry.players))} players, not {players}")
    options = {}
    if args.variant is not None:
        variants = entry.options.get("variant")
        if variants is None:
            raise ConfigError(f"{args.game} has no variants")
        if args.variant not in variants:
            raise ConfigError(f"{args.game}'s variants are {', '.join(variants)}, not {args.variant!r}")
        options["variant"] = args.variant
    return entry, entry.make(players, **options)


def _peer_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bot", choices=BOT_NAMES, help="let a computer player play this seat")
    _level_argument(parser)
    parser.add_argument("--name", help="your name at the table (default: your login name)")
    parser.add_argument("--transcript", type=Path, help="where to write the game's transcript "
                        "(default: a new file under $P2PWHIST_HOME/games)")
    parser.add_argument("--identity", type=Path, help="your key file (default: $P2PWHIST_HOME/identity.pem, "
                        "created on first use)")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT,
                        help="the most seconds a player may take over one move (or any message); past it they "
                        f"forfeit the match, and the others are told as the time runs (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--wait", type=_seconds, default=DEFAULT_WAIT,
                        help="seconds the table waits for a player whose connection was lost to come back (they "
                        "run the same command again, or p2pwhist resume; a joiner reconnects by itself); past it "
                        f"they forfeit the match (default {DEFAULT_WAIT:g})")
    _plain_argument(parser)


def _level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--level", choices=LEVELS, help="how long the search bot thinks: easy (at most a quarter "
                        "of a second a move), normal (under a second) or hard (under three seconds); "
                        f"default {DEFAULT_LEVEL}")


def _plain_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plain", action="store_true", help="the line interface, not the full-screen table "
                        "(which is the default for a person at a terminal)")


def _full_screen(args: argparse.Namespace, person: bool) -> FullScreenPlayer | None:
    """The full-screen table for a person at a real terminal, unless --plain."""
    return FullScreenPlayer() if person and not args.plain and can_go_full_screen() else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p2pwhist", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.set_defaults(argv=None)  # how the program was run, set by ``main``
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    play = commands.add_parser("play", help="play against the computer (or watch bots play)",
                               description="Start a table on this machine with computer players as real peers "
                               "over loopback TCP, and play one seat yourself.")
    _game_arguments(play, "seats at the table (default: the game's usual number)")
    play.add_argument("--hands", type=_positive_int, default=3, help="hands (games of Box) in the match (default 3)")
    play.add_argument("--bot", choices=BOT_NAMES, help="the computer players (default: the game's strongest that "
                      "answers within about a second: search, at its normal level, for boxwhist; heuristic for box)")
    _level_argument(play)
    play.add_argument("--watch", action="store_true", help="bots in every seat; show the game as it goes")
    play.add_argument("--local", action="store_true", help="play in this process, without the network "
                      "or the card-dealing protocol (fast; nothing to verify)")
    play.add_argument("--seed", type=int, help="with --local: repeat a particular game")
    _plain_argument(play)

    host_ = commands.add_parser("host", help="start a table and wait for the other players",
                                description="Listen for players, then play a match as seat 0. Prints the "
                                "command the others should run at each address of this machine they might "
                                "reach (LAN and VPN addresses, IPv4 and IPv6; loopback last, for this machine "
                                "only), each with your key's fingerprint.")
    _game_arguments(host_, "seats at the table, yours included (default: the game's usual number)")
    host_.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"TCP port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    host_.add_argument("--bind", help="address to listen on (default: every address of this machine); "
                       "the join command printed is then for this address only")
    length = host_.add_mutually_exclusive_group()
    length.add_argument("--hands", type=_positive_int, help="play this many hands (games of Box)")
    length.add_argument("--minutes", type=_positive_int, help="start no new hand after this many minutes "
                        "(with neither: play on as long as everyone wishes; after each hand each person "
                        "is asked, and the first 'no' ends the match)")
    _peer_arguments(host_)

    join_ = commands.add_parser("join", help="join a table at HOST[:PORT]",
                                description="Connect to a host and play the seat it gives you.")
    join_.add_argument("address", metavar="HOST[:PORT]",
                       help=f"the host's address, as it printed it: a name or IPv4 address, or an IPv6 address "
                       f"in brackets ([2001:db8::1]), with :PORT unless the port is {DEFAULT_PORT}")
    join_.add_argument("--expect", metavar="FINGERPRINT", help="refuse the host unless its key has this "
                       "fingerprint; when it has, you are not asked whether to trust the host")
    _peer_arguments(join_)

    verify_ = commands.add_parser("verify", help="check a recorded game's transcript",
                                  description="Check every signature, the chain, every deck step (recomputed from "
                                  "the revealed secrets), every move with every card known, and every result. "
                                  "Exit 0: valid; 1: invalid (the first bad message and who is responsible); "
                                  "2: unreadable file.")
    verify_.add_argument("path", type=Path, metavar="FILE", help="a transcript (.p2pw) file")
    verify_.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    show = commands.add_parser("show", help="print a recorded game as a score sheet",
                               description="Print each hand like a PBN record: tags, the deal, one line per trick, "
                               "the result; then the match table. The game is verified first.")
    show.add_argument("path", type=Path, metavar="FILE", help="a transcript (.p2pw) file")

    resume = commands.add_parser("resume", help="go back to a game that stopped",
                                 description="Go on with a game this peer left before its end (a crash, Ctrl-C, a "
                                 "lost connection), from its transcript and the secrets saved beside it: run the "
                                 "command that started it again. The same command run again does the same. The "
                                 "others keep the table open for --wait seconds (default 300).")
    resume.add_argument("path", type=Path, nargs="?", metavar="FILE",
                        help="the game's transcript (default: the newest unfinished game in $P2PWHIST_HOME/games)")

    rules = commands.add_parser("rules", help="how to play a game",
                                description="Print a game's rules, written for players. Without GAME, list "
                                "the games: their players and variants.")
    rules.add_argument("game", nargs="?", metavar="GAME", help=f"the game: {', '.join(GAMES)}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # ``p2pwhist resume`` runs it again
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    commands = {"play": _play, "host": _host, "join": _join, "resume": _resume, "rules": _rules,
                "verify": _verify, "show": _show}
    try:
        return commands[args.command](args)
    except BaseException as raised:  # noqa: BLE001 (sorted below; anything else propagates)
        error = _leaf(raised)
        if isinstance(error, (ConfigError, HomeError, TranscriptError)):
            print(f"p2pwhist: {error}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(error, (NetError, InputClosed)):
            print(f"p2pwhist: {error}", file=sys.stderr)
            return EXIT_PEER
        if isinstance(error, KeyboardInterrupt):
            print("\np2pwhist: interrupted", file=sys.stderr)
            path = getattr(args, "transcript", None) or getattr(args, "path", None)
            if args.command in ("host", "join", "resume") and \
                    (unfinished_games() or path is not None and secrets_path(path).exists()):
                print("p2pwhist: to go back to the game, run the same command again, or p2pwhist resume, before "
                      "the others stop waiting (--wait, 5 minutes unless they chose otherwise)", file=sys.stderr)
            return 130
        if isinstance(error, BrokenPipeError):  # output piped into e.g. `head`, which stopped reading
            sys.stderr.close()
            return EXIT_PEER
        raise


def _leaf(error: BaseException) -> BaseException:
    """The error that matters inside trio's exception groups (nurseries always raise groups)."""
    while isinstance(error, BaseExceptionGroup):
        leaves = [e for e in error.exceptions if not isinstance(e, trio.Cancelled)]
        error = (leaves or list(error.exceptions))[0]
    return error


# -- the games' rules -----------------------------------------------------------------------


def _rules(args: argparse.Namespace) -> int:
    if args.game is None:
        print(_games_list())
        return 0
    entry = GAMES.get(args.game)
    if entry is None:
        raise ConfigError(f"there is no game {args.game!r}; the games are {', '.join(GAMES)}")
    print(entry.text.rules.rstrip("\n"))
    return 0


def _games_list() -> str:
    """The games, one a line: name, title, table sizes, variants; then how to read the rules."""
    width = max(map(len, GAMES))
    titles = max(len(entry.text.title) for entry in GAMES.values())
    lines = ["The games:"]
    for name, entry in GAMES.items():
        line = f"  {name:<{width}}  {entry.text.title:<{titles}}  {_player_counts(entry.players)} players " \
               f"(usually {entry.default_players})"
        if "variant" in entry.options:
            first, *others = entry.options["variant"]
            line += f"; variants {', '.join([f'{first} (the default)', *others])}"
        lines.append(line)
    lines += ["", "p2pwhist rules GAME prints a game's rules, e.g. p2pwhist rules " + next(iter(GAMES)) + ";",
              "play one with --game GAME (and --players N, --variant V)."]
    return "\n".join(lines)


def _player_counts(counts: tuple[int, ...]) -> str:
    """2 to 6; 2 or 4; 2, 3 or 5."""
    if len(counts) > 2 and list(counts) == list(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]} to {counts[-1]}"
    if len(counts) == 1:
        return str(counts[0])
    return f"{', '.join(map(str, counts[:-1]))} or {counts[-1]}"


# -- records -------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    verdict = verify(read_transcript(args.path))
    if args.json:
        print(json.dumps(verdict.to_json()))
    elif verdict.valid:
        table = verdict.session.table  # type: ignore[union-attr]
        players = ", ".join(f"{p.name} ({p.fingerprint})" for p in table.players)
        state = "complete" if verdict.complete else "unfinished"
        print(f"valid, {state}: {table.game.name}, {len(verdict.hands)} hands, players {players}")
        session = verdict.session
        names = [p.name for p in table.players]
        leaver, outcome = session.leaver, session.outcome  # type: ignore[union-attr]
        if leaver is not None and outcome is not None:
            print(f"{names[leaver.seat]} (seat {leaver.seat}) left the match at message {leaver.seq} and "
                  f"forfeits it: {leaver.reason}")
            print(match_line(names, outcome.points, outcome.winner, leaver.seat))
        elif verdict.complete and session.match is not None:  # type: ignore[union-attr]
            print(match_line(names, session.match.points, session.match.winner))  # type: ignore[union-attr]
        if verdict.stopped:
            print(f"unfinished: {verdict.stopped}")
        print(f"head {verdict.head.hex()}")
    else:
        print(f"INVALID: {verdict.error}")
    return 0 if verdict.valid else 1


def _show(args: argparse.Namespace) -> int:
    verdict = verify(read_transcript(args.path))
    if not verdict.valid:
        print(f"p2pwhist: {args.path} is not a valid game: {verdict.error}", file=sys.stderr)
        return 1
    print(scoresheet(verdict))
    return 0


# -- networked play ------------------------------------------------------------------------


class _Display:
    """What a playing peer shows: a person's table and prompts, or a bot's progress lines.

    With ``watch``, a bot plays and the table is shown from its seat as the game goes."""

    def __init__(self, bot: str | None, watch: bool = False, full: FullScreenPlayer | None = None,
                 level: str | None = None) -> None:
        self.full = full  # the full-screen table, which then shows everything
        self.bot_name = bot
        self.level = level  # the search bot's (None: its default)
        self.bot = None  # made once the game is known: a joiner learns it from START
        self.watch = watch
        self.ui: TerminalPlayer | None = None  # made once the seat and the names are known
        self.words: GameText | None = None
        self._results = 0
        self._awaited: int | None = None  # the other seat whose move we last said we wait for

    def agent(self) -> Agent:
        if self.full is not None:
            return Agent(self.full.choose, threaded=False, wish=self.full.another_hand)
        if self.bot_name is not None:
            # In a worker thread: a searching bot thinks for up to a second, and the peer must
            # stay responsive meanwhile (the host relays, timeouts run).
            return Agent(lambda view: self.bot.choose(view), threaded=True)  # type: ignore[union-attr]
        return Agent(lambda view: self.ui.choose(view), threaded=True,  # type: ignore[union-attr]
                     wish=lambda: self.ui.another_hand())  # type: ignore[union-attr]

    def on_event(self, session: Session, message: SignedMessage) -> None:
        if self.words is None:  # the first message of the game: START
            entry = game_entry(session.table.game)
            self.words = entry.text
            if self.bot_name is not None:
                if self.bot_name not in entry.bots:
                    raise ConfigError(f"{entry.name} has no {self.bot_name!r} bot (it has {', '.join(entry.bots)})")
                # OS-seeded and on the real clock: the edge may be random and read the time.
                self.bot = make_bot(entry.bots[self.bot_name], random.Random(), self.level, time.perf_counter)
        if self.full is not None:
            self.full.on_event(session, message)
            return
        if self.ui is None and (self.bot_name is None or self.watch):
            names = [p.name for p in session.table.players]
            if not self.watch:
                names[session.seat] = "You"
            self.ui = TerminalPlayer(session.seat, self.words, sys.stdin, sys.stdout, names=names,
                                     hints=hint_bot(game_entry(session.table.game)))
        match = session.match
        if self.ui is not None and message.kind is Kind.PLAY:  # show each trick or round as it ends
            self.ui.follow(session.view())
        if self.ui is not None and not self.watch:
            self._say_whom_we_wait_for(session)
        if match is not None and len(match.results) > self._results:
            self._results = len(match.results)
            result: HandResult = match.results[-1]
            if self.ui is not None:
                self.ui.hand_over(match.hands[-1], result)
            else:
                names = [p.name for p in session.table.players]
                print(f"Hand {self._results}: {self.words.result_line(result, names)}", flush=True)

    def _say_whom_we_wait_for(self, session: Session) -> None:
        """"Waiting for bob..." once each time another seat is to move (the line interface)."""
        seat = session.waiting_for if session.expected_kind is Kind.PLAY else None
        if seat is not None and seat != session.seat and seat != self._awaited:
            print(f"Waiting for {session.table.players[seat].name}...", flush=True)
        self._awaited = seat

    def run(self, main, *args):
        """``trio.run(main, *args)``, with the full-screen table beside it if there is one."""
        return trio.run(self.full.run, main, *args) if self.full is not None else trio.run(main, *args)

    def finish(self, record: GameRecord) -> None:
        names = [p.name for p in record.table.players]
        outcome = record.outcome
        assert outcome is not None
        left = outcome.forfeited
        if left is not None:
            print(f"{names[left.seat]} left the match: {left.reason}.")
        print(f"Match over. {match_line(names, outcome.points, outcome.winner, left and left.seat)}.")
        print(f"Transcript: {record.transcript}")


def _trust_prompt(bot: str | None, known: KnownPeers):
    """Ask the person at the terminal about a key we never played with; None when nobody is
    there (a bot, no terminal): new keys are then accepted (``net._check_trust``)."""
    if bot or not sys.stdin.isatty():
        return None

    async def ask(name: str, key: bytes) -> bool:
        before = known.named(name)[-2:]
        if before:  # the name is known, the key is not: say so plainly, it may be an impostor
            question = (f"This is a different key from the {name!r} you played before (now {fingerprint(key)}, "
                        f"before {' or '.join(before)}): someone else may be using that name. "
                        "Play with this key? [y/N] ")
        else:
            question = f"New player {name!r} with key {fingerprint(key)}. Trust it? [y/N] "
        answer = await trio.to_thread.run_sync(input, question, abandon_on_cancel=True)
        return answer.strip().lower() in ("y", "yes")

    return ask


def _options(args: argparse.Namespace, display: _Display) -> PeerOptions:
    """What ``host`` and ``join`` share. A ``--transcript`` that exists is the game to go on
    with if it is an unfinished game of ours (its secrets file beside it); otherwise it is
    never overwritten."""
    key = load_identity(args.identity)
    resume = None
    if args.transcript is not None:  # found now, not once the game began (the files are made with O_EXCL then)
        saved = secrets_path(args.transcript)
        if os.path.lexists(args.transcript) and os.path.lexists(saved):
            resume = unfinished(args.transcript, key).path
        elif os.path.lexists(args.transcript):  # a file, or a symbolic link even to nowhere
            raise ConfigError(f"{args.transcript} already exists: a transcript is never overwritten")
        elif os.path.lexists(saved):
            raise ConfigError(f"{saved} already exists: a secrets file is never reused (whoever made it "
                              "could read your cards; remove it if it is yours)")
    name = _person_name(args.name)
    known = KnownPeers.default()
    return PeerOptions(
        name=name,
        key=key,
        agent=display.agent(),
        transcript=args.transcript,
        timeout=args.timeout,
        known=known,
        trust_new=_trust_prompt(args.bot, known),
        report=display.full.report if display.full is not None else partial(print, flush=True),
        on_event=display.on_event,
        wait=args.wait,
        command=args.argv,
        resume=resume,
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
          f"{match_line(names, outcome.points, outcome.winner, left and left.seat)}.")
    return True


def _host(args: argparse.Namespace) -> int:
    if _finished(args):
        return 0
    _, game = _game(args)
    length = MatchLength(hands=args.hands, minutes=args.minutes)  # neither: an open match
    display = _Display(args.bot, full=_full_screen(args, args.bot is None), level=args.level)
    options = _options(args, display)
    if options.resume is None and args.transcript is None:
        options.resume = _same_command(args.argv) or _unfinished_table(options, game, length)
    record = display.run(host, options, HostOptions(game, length, args.port, args.bind))
    display.finish(record)
    return 0


def _same_command(argv: list[str]) -> Path | None:
    """The newest unfinished game that this very command line started: running it again
    goes on with that game."""
    for path in unfinished_games():
        try:
            if json.loads(command_path(path).read_text()).get("argv") == argv:
                return path
        except (OSError, ValueError, AttributeError):
            continue
    return None


def _unfinished_table(options: PeerOptions, game: Game, length: MatchLength) -> Path | None:
    """The newest unfinished game we hosted with this very configuration, which running the
    same ``host`` command again goes on with."""
    for path in unfinished_games():
        try:
            found = unfinished(path, options.key)
        except ConfigError:
            continue
        if found.seat == 0 and found.table.game == game and found.table.length == length:
            return path
    return None


def _join(args: argparse.Namespace) -> int:
    address, port = parse_address(args.address)
    if _finished(args):
        return 0
    display = _Display(args.bot, full=_full_screen(args, args.bot is None), level=args.level)
    options = _options(args, display)
    if options.resume is None and args.transcript is None:
        options.resume = _same_command(args.argv)
    print(f"Your key fingerprint is {identity_fingerprint(options.key)}", flush=True)
    record = display.run(join, options, address, port, args.expect)
    display.finish(record)
    return 0


def _resume(args: argparse.Namespace) -> int:
    """Run again the command that started the unfinished game, with its transcript named."""
    if args.path is None:
        games = unfinished_games()
        if not games:
            raise ConfigError("there is no unfinished game to resume in $P2PWHIST_HOME/games")
        args.path = games[0]
    if not args.path.is_file():
        raise ConfigError(f"there is no file {args.path}")
    if not secrets_path(args.path).is_file():
        raise ConfigError(f"{args.path} is not an unfinished game: the secrets file beside it is gone "
                          "(a game deletes it when it ends)")
    command = command_path(args.path)
    try:
        argv = json.loads(command.read_text())["argv"]
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv[:1] in (["host"], ["join"])):
            raise ValueError("not a command")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"cannot tell how {args.path} was played ({command.name}: {error}); "
                          "run the host or join command that started it again, with --transcript") from None
    if "--transcript" in argv:  # named again below, as an absolute path: we may be elsewhere now
        at = argv.index("--transcript")
        argv = argv[:at] + argv[at + 2 :]
    argv = [*argv, "--transcript", str(args.path.absolute())]
    print(f"Resuming {args.path}: p2pwhist {' '.join(argv)}", flush=True)
    return main(argv)


# The computer players of ``play`` wait for a person: give them a day rather than minutes.
PLAY_BOT_TIMEOUT = 86400.0


def _play(args: argparse.Namespace) -> int:
    """A host in this process (the person, or a watched bot) and bots as separate processes."""
    entry, game = _game(args)
    args.bot = args.bot or entry.default_bot
    if args.bot not in entry.bots:
        raise ConfigError(f"{entry.name} has no {args.bot!r} bot (it has {', '.join(entry.bots)})")
    check_level(entry.bots[args.bot], args.level)
    if args.local:
        return _play_local(args, entry, game)
    display = _Display(args.bot if args.watch else None, watch=args.watch, full=_full_screen(args, not args.watch),
                       level=args.level)
    # No hosting instructions to print, and no known peers: the bots' keys are new every time.
    # A person plays under their own name; a bot is named by its kind and seat.
    options = PeerOptions(name=_bot_name(args.bot, 0) if args.watch else _person_name(None),
                          key=load_identity(None), agent=display.agent(), transcript=None,
                          timeout=PLAY_BOT_TIMEOUT, report=lambda line: None, on_event=display.on_event)

    async def run() -> GameRecord:
        records: list[GameRecord] = []
        seated = [trio.Event() for _ in range(game.players)]  # seated[k]: k joiners are seated

        async def host_task(task_status=trio.TASK_STATUS_IGNORED) -> None:
            table = HostOptions(game, MatchLength(hands=args.hands), 0, "127.0.0.1",
                                seated=lambda count: seated[count].set())
            records.append(await host(options, table, task_status=task_status))

        with tempfile.TemporaryDirectory(prefix="p2pwhist-bots-") as homes:
            async with trio.open_nursery() as nursery:
                port = await nursery.start(host_task)
                for seat in range(1, game.players):  # one at a time, so that each sits where it is named
                    name = _bot_name(args.bot, seat)
                    command = [sys.executable, "-m", "p2pwhist", "join", f"127.0.0.1:{port}", "--bot", args.bot,
                               "--name", name, "--timeout", str(PLAY_BOT_TIMEOUT)]
                    if args.level is not None:
                        command += ["--level", args.level]
                    env = {**os.environ, "P2PWHIST_HOME": str(Path(homes) / f"bot{seat}")}
                    nursery.start_soon(_bot_process, command, env, name)
                    await seated[seat].wait()
        return records[0]

    record = display.run(run)
    display.finish(record)
    return 0


def _person_name(given: str | None) -> str:
    """The name a person plays under: ``--name``, else their login name."""
    return check_name(given or os.environ.get("USER") or os.environ.get("USERNAME") or "player")


def _bot_name(kind: str, seat: int) -> str:
    return f"{kind}-{seat}"


async def _bot_process(command: list[str], env: dict[str, str], name: str) -> None:
    """Run one computer player; if it fails, stop the game with its last words."""
    # trio collects a child's output only with capture_stderr; stderr=PIPE is refused here.
    done = await trio.run_process(command, check=False, stdout=subprocess.DEVNULL, capture_stderr=True, env=env)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines() or [f"exit code {done.returncode}"]
        raise NetError(f"the computer player {name} stopped: {lines[-1]}")


def _play_local(args: argparse.Namespace, entry: GameEntry, game: Game) -> int:
    """The match in this process (``local.LocalMatch``), bots in every seat but the person's
    (seat 0): on the full-screen table at a terminal, whose trio loop then drives the match, else
    on the line interface. ``--watch`` shows the bots' game as lines: the full-screen table has
    no spectator's view, it is always one seat's."""
    rng = random.Random(args.seed)
    # A seeded game repeats exactly: its bots keep to their playout budgets, with no clock.
    clock = None if args.seed is not None else time.perf_counter
    bots = [make_bot(entry.bots[args.bot], rng, args.level, clock) for _ in range(game.players)]
    length = MatchLength(hands=args.hands)
    full = None if args.watch else _full_screen(args, True)
    if full is None:
        ui = (Watcher(entry.text, sys.stdout) if args.watch
              else TerminalPlayer(0, entry.text, sys.stdin, sys.stdout, hints=hint_bot(entry)))
        if not args.watch:
            bots[0] = ui
        on_move = ui.on_move if isinstance(ui, Watcher) else None
        ui.match_over(play_match(game, length, bots, rng, on_hand=ui.hand_over, on_move=on_move))
        return 0

    # Named as in networked play: the person under their own name, each bot by its kind and seat.
    names = [_person_name(None), *(_bot_name(args.bot, seat) for seat in range(1, game.players))]
    full.sit(entry.text, 0, [YOU, *names[1:]], hint_bot(entry))
    local = LocalMatch(game, length, rng)
    trio.run(full.run, _local_turns, full, local, bots)
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
