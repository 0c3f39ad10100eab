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
import contextlib
import importlib.metadata
import json
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import p2pwhist
from p2pwhist import stats
from p2pwhist.bodies import Table
from p2pwhist.games.base import ConfigError, GameEntry
from p2pwhist.games.bots import DEFAULT_LEVEL, LEVELS
from p2pwhist.games.registry import GAMES, options_offered
from p2pwhist.home import HomeError, home_dir, load_identity, saved_games, secrets_path, unfinished_games
from p2pwhist.limits import (
    DEFAULT_PORT,
    DEFAULT_SPECTATORS,
    DEFAULT_TIMEOUT,
    DEFAULT_WAIT,
    MAX_DELAY,
    MAX_LIMIT,
    MAX_SPECTATORS,
    MIN_MOVE,
    MIN_WAIT,
)
from p2pwhist.signed import public_bytes
from p2pwhist.stats_cache import VerifiedCache
from p2pwhist.text import clock, match_line, plural
from p2pwhist.transcript import TranscriptError, read_transcript
from p2pwhist.ui.scoresheet import scoresheet
from p2pwhist.verify import Verdict, first_partings, unreadable, verify

EXIT_PEER = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_GAME = next(iter(GAMES))  # the registry's first


def _player_counts(counts: tuple[int, ...]) -> str:
    """2 to 6; 2 or 4; 2, 3 or 5."""
    if len(counts) > 2 and list(counts) == list(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]} to {counts[-1]}"
    if len(counts) == 1:
        return str(counts[0])
    return f"{', '.join(map(str, counts[:-1]))} or {counts[-1]}"


def _usually(entry: GameEntry, form: str) -> str:
    """The game's usual number of players in ``form`` ("(usually {})"), if it has a choice."""
    return form.format(entry.default_players) if len(entry.players) > 1 else ""


_EVERY_TABLE = tuple(sorted({n for e in GAMES.values() for n in e.players}))
DESCRIPTION = f"""\
Card games for {_player_counts(_EVERY_TABLE)} players who share no server \
and need not trust each other:
{", ".join(f"{e.text.title} (--game {name}, {_player_counts(e.players)} players)" for name, e in GAMES.items())}.

  p2pwhist play                 play against the computer on this machine
  p2pwhist host                 start a table others can join
  p2pwhist join [HOST[:PORT]]   sit down at someone's table (no address: one on this network)
  p2pwhist watch [HOST[:PORT]]  watch a table from no seat, checking every move as it is made
  p2pwhist tables               list the tables announced on this network
  p2pwhist resume [FILE]        go back to a game that stopped (a crash, Ctrl-C, a lost connection)
  p2pwhist rules [GAME]         how to play a game (without GAME: the games)
  p2pwhist verify FILE...       check recorded games (several: where those of one game part)
  p2pwhist stats [FILE...]      who beat whom, from verified recorded games
  p2pwhist show [FILE...]       print recorded games like score sheets (no FILE: the last one)

Set P2PWHIST_HOME to keep identity, known peers and saved games somewhere else
(default ~/.local/share/p2pwhist), e.g. to run several peers on one machine.
"""


def _in_home(name: str) -> str:
    """Where ``name`` is under this user's state directory, as a help text prints it: the real
    path, which ``$P2PWHIST_HOME`` may move ("%" doubled: argparse formats help text)."""
    return str(home_dir() / name).replace("%", "%%")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535 (or 0: any free one), not {value}")
    return value


def _from_0_to(most: int, kind: type[int] | type[float], what: str) -> Callable[[str], int | float]:
    """A number of ``kind`` from 0 to ``most`` (--spectators, --delay); ``what`` names it."""
    def read(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not 0 <= value <= most:  # a NaN fails this too
            raise argparse.ArgumentTypeError(f"{what} 0 to {most}, not {text}")
        return value
    return read


def _limit(floor: int) -> Callable[[str], int]:
    """A time limit of the table: whole seconds, from ``floor`` to ``MAX_LIMIT``."""

    def seconds(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
        if not floor <= value <= MAX_LIMIT:
            raise argparse.ArgumentTypeError(f"must be between {floor} and {MAX_LIMIT} seconds")
        return value

    return seconds


# Every game has these bots (its registry entry says which it has).
BOT_NAMES = sorted(set().union(*(entry.bots for entry in GAMES.values())))


def _game_arguments(parser: argparse.ArgumentParser, players_help: str) -> None:
    """--game, --players and each game's options (``--NAME``, as its entry declares them),
    checked against the chosen game's entry by ``registry.chosen``."""
    games = ", ".join(f"{name} ({_player_counts(e.players)} players{_usually(e, ', default {}')})"
                      for name, e in GAMES.items())
    parser.add_argument("--game", choices=sorted(GAMES), default=DEFAULT_GAME,
                        help=f"the game: {games} (default {DEFAULT_GAME})")
    parser.add_argument("--players", type=int, help=players_help)
    for name, offered in options_offered().items():
        games_with = "; ".join(f"{game}: {option.help}, {'|'.join(map(str, option.choices))}, default {option.default}"
                               for game, e in GAMES.items() for option in e.options if option.name == name)
        parser.add_argument(f"--{name}", type=offered.type, help=f"for {games_with}")


def _peer_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bot", choices=BOT_NAMES, help="let a computer player play this seat")
    _level_argument(parser)
    _name_argument(parser)
    parser.add_argument("--transcript", type=Path, help="where to write the game's transcript "
                        f"(default: a new file under {_in_home('games')})")
    parser.add_argument("--identity", type=Path, help=f"your key file (default: {_in_home('identity.pem')}, "
                        "created on first use)")
    _plain_argument(parser)


def _name_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", help="your name at the table, remembered as your next default (default: the name "
                        "you chose last; at a terminal you are asked once, your login name offered, or "
                        "'player' without one)")


class _Version(argparse.Action):
    """``--version``: the program's version and the protocol's, then exit. The frames' version
    lives with the table, slow to import: it is read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from p2pwhist.bodies import LOG_VERSION
        from p2pwhist.table import PROTOCOL_VERSION

        print(f"p2pwhist {program_version()} (protocol version {PROTOCOL_VERSION}, log version {LOG_VERSION})")
        parser.exit()


def program_version() -> str:
    """The installed package's version, else (run from a source tree) the one it declares."""
    try:
        return importlib.metadata.version("p2pwhist")
    except importlib.metadata.PackageNotFoundError:
        return p2pwhist.__version__


def _limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The table's time limits: the host sets them, START carries them, every seat signs them."""
    parser.add_argument("--timeout", type=_limit(MIN_MOVE), default=DEFAULT_TIMEOUT,
                        help=f"the most seconds a player may take over one move (or any message), {MIN_MOVE} or "
                        "more; past it they forfeit the match, and the others are told as the time runs. Part of "
                        f"the table every player signs (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--wait", type=_limit(MIN_WAIT), default=DEFAULT_WAIT,
                        help=f"seconds, {MIN_WAIT} or more, the table waits for a player whose connection was lost "
                        "to come back (they run the same command again, or p2pwhist resume; a joiner reconnects "
                        f"by itself); past it they forfeit the match (default {DEFAULT_WAIT:g})")


def _level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--level", choices=LEVELS, help="how long the search bot (and a hint) thinks: easy (at "
                        "most a quarter of a second a move), normal (under a second) or hard (under three seconds); "
                        f"default {DEFAULT_LEVEL}")
    parser.add_argument("--cores", type=_positive_int, metavar="N", help="how many of this machine's cores the search "
                        f"bot (and a hint) thinks on at once, each as long as the level says (default: all, "
                        f"{os.cpu_count() or 1} here; a --seed game repeats with the same number)")


def _plain_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plain", action="store_true", help="the line interface, not the full-screen table "
                        "(which is the default for a person at a terminal)")
    parser.add_argument("--quiet", action="store_true", help="on the full-screen table: no bell and no window "
                        "title when your turn comes after someone else's")
    parser.add_argument("--no-chat", action="store_true", help="no table talk: the lines the others say are not "
                        "shown, and you say none (a bot never talks)")
    parser.add_argument("--auto-forced", action=argparse.BooleanOptionalAction, help="on the full-screen table: "
                        "where you have exactly one legal move, it is made for you after a short pause, always the "
                        "same; remembered for your later games until --no-auto-forced (default: off)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p2pwhist", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.set_defaults(argv=None)  # how the program was run, set by ``main``
    parser.add_argument("--version", action=_Version, help="print the program's and the protocol's versions")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    play = commands.add_parser("play", help="play against the computer (or watch bots play)",
                               description="Start a table on this machine with computer players as real peers "
                               "over loopback TCP, and play one seat yourself.")
    _game_arguments(play, "seats at the table (default: the game's usual number)")
    play.add_argument("--hands", type=_positive_int, default=3, help="hands in the match (default 3)")
    defaults = "; ".join(f"{e.default_bot} for {name}" for name, e in GAMES.items())
    play.add_argument("--bot", choices=BOT_NAMES, help="the computer players (default: the game's strongest that "
                      f"answers within about a second: {defaults}; a search bot at its {DEFAULT_LEVEL} level)")
    _level_argument(play)
    _name_argument(play)
    play.add_argument("--watch", action="store_true", help="bots in every seat, each under its own key (the match "
                      "is theirs, not counted as yours); show the game as it goes")
    play.add_argument("--local", action="store_true", help="play in this process, without the network "
                      "or the card-dealing protocol (fast; nothing to verify)")
    play.add_argument("--seed", type=int, help="with --local: repeat a particular game")
    play.add_argument("--transcript", type=Path, help="where to write the match's transcript (default: a new file "
                      f"under {_in_home('games')}); the computer players keep their files beside it until the match "
                      "ends. A match stopped there (Ctrl-C, a closed terminal, a crash) goes on where it stopped: "
                      "p2pwhist resume does this")
    _plain_argument(play)

    host_ = commands.add_parser("host", help="start a table and wait for the other players",
                                description="Listen for players, then play a match as seat 0. Prints the "
                                "command the others should run at each address they might reach, each with your "
                                "key's fingerprint: first your router's external address, if the router agreed to "
                                "forward the port to you (UPnP-IGD or NAT-PMP; the mapping is renewed while the "
                                "table is open and removed when you stop), and a global IPv6 address; then this "
                                "machine's LAN and VPN addresses; loopback last, for this machine only. While a "
                                "seat is free the table is announced on the local network (multicast DNS), where "
                                "'p2pwhist join' with no address finds it.")
    _game_arguments(host_, "seats at the table, yours included (default: the game's usual number)")
    host_.add_argument("--port", type=_port, default=DEFAULT_PORT,
                       help=f"TCP port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    host_.add_argument("--bind", help="address to listen on (default: every address of this machine); "
                       "the join command printed is then for this address only")
    length = host_.add_mutually_exclusive_group()
    length.add_argument("--hands", type=_positive_int, help="play this many hands")
    length.add_argument("--minutes", type=_positive_int, help="start no new hand after this many minutes "
                        "(with neither: play on as long as everyone wishes; after each hand each person "
                        "is asked, and the first 'no' ends the match)")
    host_.add_argument("--no-announce", action="store_true",
                       help="do not announce the table on the local network (it is still joined by address)")
    host_.add_argument("--spectators", type=_from_0_to(MAX_SPECTATORS, int, "spectators are"),
                       default=DEFAULT_SPECTATORS, help="how many may watch at once (p2pwhist watch), seeing only "
                       f"what the signed log shows everyone; 0 to {MAX_SPECTATORS}, 0: none "
                       f"(default {DEFAULT_SPECTATORS})")
    host_.add_argument("--delay", type=_from_0_to(MAX_DELAY, float, "a delay is, in seconds,"), default=0.0,
                       help="seconds by which spectators see each message later than the players; "
                       "with a delay they hear no table talk, nor why the table waits, which would come "
                       "before the moves they speak of (default 0: they see only public cards anyway)")
    host_.add_argument("--no-map", action="store_true", help="do not ask your router to forward the port from the "
                       "internet (the first try takes at most 3 s and failing is never fatal)")
    _peer_arguments(host_)
    _limit_arguments(host_)

    join_ = commands.add_parser("join", help="join a table at HOST[:PORT], or one on this network",
                                description="Connect to a host and play the seat it gives you. With no "
                                "address, listen for tables announced on this network for 2 s and join the one "
                                "heard (or the one you pick, if there are several); its key fingerprint, heard "
                                "with it, is then expected as with --expect.")
    join_.add_argument("address", metavar="HOST[:PORT]", nargs="?",
                       help=f"the host's address, as it printed it: a name or IPv4 address, or an IPv6 address "
                       f"in brackets ([2001:db8::1]), with :PORT unless the port is {DEFAULT_PORT}")
    join_.add_argument("--expect", metavar="FINGERPRINT", help="refuse the host unless its key has this "
                       "fingerprint; when it has, you are not asked whether to trust the host (with no "
                       "address: join the table on this network with this fingerprint)")
    _peer_arguments(join_)
    join_.add_argument("--stop-with-input", action="store_true", help="with --bot: end when standard input closes, "
                       "the game kept to go on with (how the computer players of p2pwhist play end with it, however "
                       "it ends)")

    watch_ = commands.add_parser("watch", help="watch a table at HOST[:PORT], or one on this network",
                                 description="Connect to a host as a spectator: you sit in no seat and see only "
                                 "what the table's signed log shows everyone (each card played, each hand's "
                                 "result), each message checked as it comes, as p2pwhist verify checks it; a "
                                 "message that fails ends the watch in one line. Joining mid-match, you first "
                                 "get the log so far. The host also tells you why the table waits (a seat slow to "
                                 "move, or gone, and the time it has left), unless it shows spectators the game "
                                 "with a --delay. The transcript you keep verifies like a player's. At a "
                                 "terminal the table fills the screen, from no seat's view: every seat's counts, "
                                 "the trick, trumps, the face-up cards, the history and the scores (l: the last "
                                 "trick, q: stop watching); --plain, or output that is not a terminal, gives "
                                 "lines.")
    watch_.add_argument("address", metavar="HOST[:PORT]", nargs="?",
                        help="the host's address, as for join (no address: the table announced on this network)")
    watch_.add_argument("--expect", metavar="FINGERPRINT", help="stop unless the host's key has this fingerprint "
                        "(the one in its join line), before anything is shown or kept; with no address: watch the "
                        "table on this network with this fingerprint (a table heard there is always checked "
                        "against the fingerprint it announced)")
    watch_.add_argument("--transcript", type=Path, help="where to write the game's transcript "
                        f"(default: a new file under {_in_home('games')})")
    watch_.add_argument("--no-chat", action="store_true", help="do not show the players' table talk")
    watch_.add_argument("--plain", action="store_true", help="the line interface, not the full-screen table "
                        "(which is the default at a terminal)")
    watch_.set_defaults(bot=None)  # as ``join`` finds a table on this network

    verify_ = commands.add_parser("verify", help="check recorded games' transcripts",
                                  description="Check every signature, the chain, every deck step (recomputed from "
                                  "the revealed secrets), every move with every card known, and every result; "
                                  "for a match settled by a seat leaving, say what the log proves of it (its own "
                                  "ABORT, or a FORFEIT and who signed it). With several files, each is judged in "
                                  "turn (its verdict's first line names it), then, for files of the same game "
                                  "(the same first message), the first message at which two of them differ: "
                                  "'a.p2pw and b.p2pw part at message 57: a.p2pw holds alice's FORFEIT naming "
                                  "bob, b.p2pw holds bob's PLAY'. A file that ends inside a message is judged as far "
                                  "as it goes. Exit 0: all valid; 1: any invalid (the first bad message, and who "
                                  "is responsible where the log proves it); 2: any file that is no transcript.")
    verify_.add_argument("paths", type=Path, nargs="+", metavar="FILE", help="a transcript (.p2pw) file")
    verify_.add_argument("--json", action="store_true", help="print one JSON object instead of text (for a file "
                         "that is no transcript too: \"valid\" false, and why in \"error\"); each hand lists its "
                         "\"offenders\" (who lost it by a proven breach) and, apart, the seats that \"left\" it (who "
                         "lost it by leaving the match: absent, too slow, or gone, which proves no breach); with "
                         "several files, "
                         "an array of them, in order, each with its \"file\" and where it \"parted\" from another "
                         "file of its game (null if it did not)")
    show = commands.add_parser("show", help="print recorded games as score sheets",
                               description="Print each hand like a PBN record: tags, the deal, one line per trick, "
                               "the result; then the match table. Each game is verified first; one that is not "
                               "valid is named with why instead. With several files, or none, each sheet opens "
                               "with its file's name. Exit 0: all shown; 1: any invalid; 2: any file that is no "
                               "transcript.")
    show.add_argument("paths", type=Path, nargs="*", metavar="FILE",
                      help="a transcript (.p2pw) file; without FILE, the game saved here last (played, watched "
                      "or going on)")

    commands.add_parser("tables", help="list the tables announced on this network",
                        description="Listen for 2 s for tables announced on the local network (multicast DNS) "
                        "and list them: host, game, seats taken, address, key fingerprint (and the name you last "
                        "played that key under), each with the line that joins it. A name in an announcement is "
                        "only a claim: the key is what a join checks.")

    resume = commands.add_parser("resume", help="go back to a game that stopped",
                                 description="Go on with a game this peer left before its end (a crash, Ctrl-C, a "
                                 "lost connection), from its transcript and the secrets saved beside it: run the "
                                 "command that started it again. For host and join, the same command run again "
                                 "does the same, and the others keep the table open for --wait seconds (default "
                                 "300); a match against the computer (play) waits as long as you like, its "
                                 "computer players going on from their own files.")
    resume.add_argument("path", type=Path, nargs="?", metavar="FILE",
                        help=f"the game's transcript (default: the newest unfinished game in {_in_home('games')})")

    stats_ = commands.add_parser("stats", help="who beat whom: records and ratings from recorded games",
                                description=f"Verify every transcript in {_in_home('games')} (and each FILE "
                                "given, or every .p2pw file in a FOLDER given), then count the matches whose result "
                                "the log settles: per player, and per opponent against you (your identity's key, if "
                                "you have one), matches and hands played, won, lost and drawn, forfeits (who left "
                                "the match) and proven breaches; and each player's skill rating (openskill's "
                                "Plackett-Luce model, mean ± uncertainty; ordinal = mean - 3 × uncertainty), "
                                "updated match by match in file-name order (a saved game's name starts with its "
                                "date). A match's ranking is by its final points, equal points a draw; a seat "
                                "that left ranks last; a player wins with the best place alone, draws sharing "
                                "it, and against you wins or loses by its place against yours. A match settled "
                                "by a forfeit only its winner signed is "
                                "counted but not rated. Not counted, each listed with why: a file that does "
                                "not verify (a forged or tampered one), an unfinished game (not even its "
                                "finished hands), and a second file of a game already counted (the same first "
                                f"message). What a file proved is kept in {_in_home('stats-cache')} under the digest "
                                "of its bytes, so that the next run verifies only files new or changed since.")
    stats_.add_argument("paths", type=Path, nargs="*", metavar="FILE", help="a transcript, or a folder of them")
    stats_.add_argument("--json", action="store_true", help="print one JSON object: \"you\" (null without an "
                       "identity) and each of \"players\" (best rated first) with \"name\" (the last seen), "
                       "\"fingerprint\", \"key\" (hex), \"matches\" and \"hands\" ({\"played\", \"won\", "
                       "\"lost\", \"drawn\"}), \"left\", \"breaches\" and \"rating\" ({\"mu\", \"sigma\", "
                       "\"ordinal\"}, or null if never rated); \"opponents\", your record against each (matches "
                       "and hands from your side, \"forfeits\" {\"they_left\", \"we_left\"}, \"breaches\" "
                       "{\"theirs\", \"ours\"}, and their \"rating\"); \"counted\", \"unrated\"; and "
                       "\"not_counted\": [{\"file\", \"reason\" (\"not a transcript\", \"invalid\", "
                       "\"unfinished\" or \"duplicate\"), \"detail\"}]")

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
    with _stopped_as_by_ctrl_c(signal.SIGTERM, signal.SIGHUP):
        return _run(parser, args)


@contextlib.contextmanager
def _stopped_as_by_ctrl_c(*signals: signal.Signals) -> Iterator[None]:
    """While the command runs, a hang-up (the terminal window closed) or a plain ``kill`` stops
    it as Ctrl-C does, not at once: the game is saved with the words to resume it, a router's
    port mapping removed. Where Ctrl-C is ignored (a background job) they keep their default,
    which ends the program at once (the game is kept all the same: every message is written
    before it is sent)."""

    def as_ctrl_c(signum: int, frame: object) -> None:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        else:  # to whichever handler Ctrl-C has now: trio's during a game, Python's own outside
            os.kill(os.getpid(), signal.SIGINT)

    before = {number: signal.signal(number, as_ctrl_c) for number in signals}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The command ``args`` names, with the errors a person may cause said in one line."""
    try:
        if args.command == "resume":  # the command that started the game, run again as it was
            args = _resumed(parser, args)
        return _COMMANDS[args.command](args)
    except BaseException as raised:  # noqa: BLE001 (sorted below; anything else propagates)
        error = _leaf(raised)
        if isinstance(error, (ConfigError, HomeError, TranscriptError)):
            print(f"p2pwhist: {error}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(error, KeyboardInterrupt):
            print("\np2pwhist: interrupted", file=sys.stderr)
            path = getattr(args, "transcript", None) or getattr(args, "path", None)
            if args.command in ("host", "join", "resume") and \
                    (secrets_path(path).exists() if path is not None else unfinished_games()):
                print("p2pwhist: to go back to the game, run the same command again, or p2pwhist resume, "
                      f"{_within_the_wait(path)}", file=sys.stderr)
            elif args.command == "play" and path is not None and secrets_path(path).exists():
                print(f"p2pwhist: the match is kept: p2pwhist resume {shlex.quote(str(path))} goes on with it",
                      file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(error, BrokenPipeError):  # output piped into e.g. `head`, which stopped reading
            sys.stderr.close()
            return EXIT_PEER
        if _from_a_peer(error):
            print(f"p2pwhist: {error}", file=sys.stderr)
            return EXIT_PEER
        raise


def _within_the_wait(transcript: Path | None) -> str:
    """When the others stop waiting for a seat that left the game in ``transcript``: the wait
    its START says, in words."""
    try:
        table = next(read_transcript(transcript)).body if transcript is not None else None
    except (StopIteration, TranscriptError):
        table = None
    if not isinstance(table, Table) or table.times is None:  # not known yet (Ctrl-C before the game
        # began), unreadable, or an older game's START, which agreed no limits: each seat had its own
        return "before the others stop waiting (--wait, 5 minutes unless they chose otherwise)"
    return f"within {clock(table.times.wait)} of leaving: the table's wait for a lost player"


def _resumed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``resume [FILE]``: the play, host or join command that started the unfinished game in FILE
    (default: the newest), with its transcript named, parsed as if typed again."""
    from p2pwhist.gamefiles import resume_argv

    argv = resume_argv(args.path)
    print(f"Resuming {argv[-1]}: p2pwhist {' '.join(argv)}", flush=True)
    again = parser.parse_args(argv)
    again.argv = argv
    return again


def _playing(command: str) -> Callable[[argparse.Namespace], int]:
    """A command that plays, from ``p2pwhist.cli_play``, imported only when one runs."""
    def run(args: argparse.Namespace) -> int:
        from p2pwhist import cli_play

        return getattr(cli_play, f"{command}_command")(args)
    return run


def _from_a_peer(error: BaseException) -> bool:
    """A peer or the network stopped the game, or our own input closed: what only the commands
    that play raise, so their modules are imported here, not for every command."""
    from p2pwhist.reach.lan import NoTable
    from p2pwhist.table import TableError
    from p2pwhist.ui import InputClosed

    return isinstance(error, (TableError, InputClosed, NoTable))


def _leaf(error: BaseException) -> BaseException:
    """The error that matters inside trio's exception groups (nurseries always raise groups)."""
    while isinstance(error, BaseExceptionGroup):
        import trio  # only trio's nurseries raise groups: it is imported already

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
        line = f"  {name:<{width}}  {entry.text.title:<{titles}}  {_player_counts(entry.players)} players" \
               f"{_usually(entry, ' (usually {})')}"
        for option in entry.options:
            choices = [f"{c} (the default)" if c == option.default else str(c) for c in option.choices]
            line += f"; {option.name}s {', '.join(choices)}"
        lines.append(line)
    options = "".join(f", --{name} {name[0].upper()}" for name in options_offered())
    lines += ["", f"p2pwhist rules GAME prints a game's rules, e.g. p2pwhist rules {DEFAULT_GAME};",
              f"play one with --game GAME (and --players N{options})."]
    return "\n".join(lines)


# -- records -------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    paths: list[Path] = args.paths
    if len(paths) == 1:
        try:
            verdict = verify(read_transcript(paths[0]))
        except TranscriptError as error:  # no transcript at all: one line, exit 2, in ``main``
            if args.json:  # and still one JSON object on standard output
                print(json.dumps(unreadable(error).to_json()))
            raise
        print(json.dumps(verdict.to_json()) if args.json else "\n".join(_verdict_lines(verdict)))
        return 0 if verdict.valid else EXIT_PEER
    labels = [str(path) for path in paths]
    # Read together first, a message of each at a time; each file is then judged alone, and
    # only its verdict's words kept, not its log.
    partings = first_partings([read_transcript(path) for path in paths])
    reports: list[dict[str, object]] = []
    missing = invalid = False
    for index, (path, label) in enumerate(zip(paths, labels)):
        try:
            verdict = verify(read_transcript(path))
        except TranscriptError as error:
            missing = True
            print(f"p2pwhist: {label}: {error.reason}", file=sys.stderr)  # the place, once
            reports.append({"file": label, **unreadable(error).to_json(), "parted": None})
            continue
        invalid |= not verdict.valid
        if args.json:
            parted = next((p.to_json(labels) for p in partings if index in p.transcripts), None)
            reports.append({"file": label, **verdict.to_json(), "parted": parted})
        else:
            first, *rest = _verdict_lines(verdict)
            print("\n".join([f"{label}: {first}", *rest, ""]))
    if args.json:
        print(json.dumps(reports))
    else:
        for parting in partings:
            print(parting.line(labels))
    return EXIT_USAGE if missing else EXIT_PEER if invalid else 0


def _verdict_lines(verdict: Verdict) -> list[str]:
    """A verdict in words: valid or not, how the match ended or why it stopped, the head."""
    if not verdict.valid:
        return [f"INVALID: {verdict.error}"]
    session = verdict.session
    assert session is not None  # a valid transcript has a usable START
    table = session.table
    players = ", ".join(f"{p.name} ({p.fingerprint})" for p in table.players)
    state = "complete" if verdict.complete else "unfinished"
    lines = [f"valid, {state}: {table.game.name}, {plural(len(verdict.hands), 'hand')}, players {players}"]
    names = [p.name for p in table.players]
    settlement, outcome = verdict.settlement, session.outcome
    if settlement is not None and outcome is not None:
        lines += [settlement.line(names), match_line(names, outcome.points, outcome.winner, settlement.seat)]
    elif verdict.complete and session.match is not None:
        lines.append(match_line(names, session.match.points, session.match.winner))
    if verdict.stopped:
        lines.append(f"unfinished: {verdict.stopped}")
    lines.append(f"head {verdict.head.hex()}")
    return lines


def _show(args: argparse.Namespace) -> int:
    paths: list[Path] = args.paths or [_last_game()]
    named = len(paths) > 1 or not args.paths  # which file a sheet is, unless it is the one typed
    missing = invalid = shown = False
    for path in paths:
        try:
            verdict = verify(read_transcript(path))
        except TranscriptError as error:  # as ``_run`` says it for one file: a line, exit 2
            missing = True
            print(f"p2pwhist: {path}: {error.reason}", file=sys.stderr)
            continue
        if not verdict.valid:
            invalid = True
            print(f"p2pwhist: {path} is not a valid game: {verdict.error}", file=sys.stderr)
            continue
        if shown:
            print()
        if named:
            print(f"== {path} ==")
        print(scoresheet(verdict))
        shown = True
    return EXIT_USAGE if missing else EXIT_PEER if invalid else 0


def _last_game() -> Path:
    """``show`` with no FILE: the game saved here last, or a ``ConfigError`` saying there is none."""
    saved = saved_games()
    if not saved:
        raise ConfigError(f"no game is saved in {home_dir() / 'games'} yet; name a file: p2pwhist show FILE")
    return saved[0]


def _stats(args: argparse.Namespace) -> int:
    identity = home_dir() / "identity.pem"
    you = public_bytes(load_identity(identity).public_key()) if identity.exists() else None  # never made here
    cache = VerifiedCache.load()
    record = stats.tally(((str(path), cache.judge(path, _match)) for path in _transcripts(args.paths)), you)
    print(json.dumps(record.to_json()) if args.json else "\n".join(stats.lines(record, str(home_dir() / "games"))))
    try:
        cache.save()
    except HomeError as error:  # the figures stand; the next run verifies every file again
        print(f"p2pwhist: {error}", file=sys.stderr)
    return 0


def _transcripts(paths: Sequence[Path]) -> Iterator[Path]:
    """The saved games, then each of ``paths`` (a folder: its .p2pw files), each file once,
    each folder's in name order: a saved game's name starts with its date and time."""
    saved = home_dir() / "games"
    seen = set()
    for path in [saved, *paths]:
        if path.is_dir():
            files = sorted(path.glob("*.p2pw"))
        else:  # a file, or what is not there: a missing FILE is listed as not a transcript
            files = [] if path == saved else [path]
        for file in files:
            if (resolved := file.resolve()) not in seen:
                seen.add(resolved)
                yield file


def _match(path: Path) -> stats.MatchRecord | stats.NotCounted:
    """The match a file proves, verified; its verdict, which holds its whole log, is dropped
    at once."""
    if path.exists() and not path.is_file():  # a FIFO named like a transcript would block the reading
        return stats.NotCounted(stats.Reason.UNREADABLE, "not a regular file")
    try:
        return stats.MatchRecord.from_verdict(verify(read_transcript(path)))
    except TranscriptError as error:  # its reason, without the place: the line names the file
        return stats.NotCounted(stats.Reason.UNREADABLE, error.reason)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "play": _playing("play"), "host": _playing("host"), "join": _playing("join"), "tables": _playing("tables"),
    "watch": _playing("watch"), "rules": _rules, "verify": _verify, "show": _show, "stats": _stats,
}
