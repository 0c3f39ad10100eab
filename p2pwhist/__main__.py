"""The program's door: ``python -m p2pwhist`` and the ``p2pwhist`` command (pyproject.toml).

Loading the program takes most of a second. A Ctrl-C meanwhile, or while the command line is
read, ends it as one during a command does (``cli._run``): in one line and exit status 130,
not a traceback from deep in an import. Nothing has begun then, so there is nothing to say
about going back to a game."""

import sys

# cli.EXIT_INTERRUPTED, written out: importing cli is what a Ctrl-C here interrupts.
INTERRUPTED = 130


def run() -> int:
    try:
        from p2pwhist.cli import main

        return main()
    except KeyboardInterrupt:
        print("\np2pwhist: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(run())
