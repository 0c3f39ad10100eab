"""The ``p2pwhist`` command: argument parsing and user-facing errors, nothing else.

Every user mistake ends in one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Sequence

from p2pwhist.bots import BOTS
from p2pwhist.games.base import ConfigError
from p2pwhist.games.boxwhist import BoxWhist
from p2pwhist.games.match import MatchLength

EXIT_USAGE = 2

DESCRIPTION = """\
Box Whist for 2 to 4 players who share no server and need not trust each other.

  p2pwhist play            play against the computer on this machine
  p2pwhist host            start a table others can join
  p2pwhist join HOST:PORT  sit down at someone's table
  p2pwhist verify FILE     check a recorded game
  p2pwhist show FILE       print a recorded game like a score sheet
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p2pwhist", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    play = commands.add_parser("play", help="play against the computer (or watch bots play)")
    play.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="seats at the table (default 2)")
    play.add_argument("--hands", type=_positive_int, default=3, help="hands in the match (default 3)")
    play.add_argument("--bot", choices=sorted(BOTS), default="heuristic", help="the computer players (default heuristic)")
    play.add_argument("--watch", action="store_true", help="bots in every seat; show the game as it goes")
    play.add_argument("--seed", type=int, help="repeat a particular game (local play only)")

    for name, text in (
        ("host", "start a table and wait for the other players (not built yet)"),
        ("join", "join a table at HOST:PORT (not built yet)"),
        ("verify", "check a recorded game's transcript (not built yet)"),
        ("show", "print a recorded game as a score sheet (not built yet)"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "play":
            return _play(args)
    except ConfigError as error:
        print(f"p2pwhist: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\np2pwhist: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        sys.stderr.close()
        return 1
    print(f"p2pwhist {args.command}: not built yet", file=sys.stderr)
    return EXIT_USAGE


def _play(args: argparse.Namespace) -> int:
    from p2pwhist.local import play_match
    from p2pwhist.ui import InputClosed, TerminalPlayer, Watcher

    rng = random.Random(args.seed)
    game = BoxWhist(args.players)
    bots = [BOTS[args.bot](rng) for _ in range(args.players)]
    ui = Watcher(sys.stdout) if args.watch else TerminalPlayer(0, sys.stdin, sys.stdout)
    if not args.watch:
        bots[0] = ui
    on_move = ui.on_move if isinstance(ui, Watcher) else None
    try:
        match = play_match(game, MatchLength(hands=args.hands), bots, rng, on_hand=ui.hand_over, on_move=on_move)
    except InputClosed as closed:
        print(f"\np2pwhist: {closed}", file=sys.stderr)
        return 1
    ui.match_over(match)
    return 0
