"""How fast the full-screen table redraws after an event.

``render_ms``: the median time, over every move of a hand of each game, from an event (a move
applied) to the screen written: the table, the hand's cells, the history, and urwid's redraw of
a 120x40 terminal (``FullScreenPlayer.show`` plus its redraw, as ``on_event`` does). The screen
is urwid's real terminal driver writing to /dev/null, sized 120x40. Goal: at most 20 ms.

``event_to_screen_ms``: two people over loopback, each ``p2pwhist`` in its own pseudo-terminal
(pexpect, read through the pyte terminal emulator, both from the test extra): the median time
from the Enter that plays a card on one screen to the other screen showing that card, over
``--plays`` plays of Box Whist. It includes signing, the host's relay, the other peer's checks,
its redraw and the pseudo-terminal, and the 5 ms at which this script polls. Goal: 100 ms.

Prints one line per figure, then one JSON object as the last line.

    python scripts/bench_ui.py [--hands N] [--plays N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time

import trio
import urwid

from p2pwhist.games.registry import GAMES
from p2pwhist.ui.fullscreen import FullScreenPlayer

COLS, ROWS = 120, 40
GOAL_MS = 20.0
CASES = [("boxwhist", 2), ("box", 4)]


class _Screen(urwid.display.raw.Screen):
    """urwid's terminal driver, with a fixed size (its output is not a terminal)."""

    def get_cols_rows(self) -> tuple[int, int]:
        return COLS, ROWS


async def _times(name: str, players: int, hands: int, rng: random.Random) -> list[float]:
    entry = GAMES[name]
    game = entry.make(players)
    master, slave = os.openpty()  # the screen's input: a terminal it may set to raw mode
    with os.fdopen(os.open(os.devnull, os.O_WRONLY), "w", encoding="utf-8") as sink:
        ui = FullScreenPlayer(screen=_Screen(input=os.fdopen(slave, "rb", buffering=0), output=sink))
        ui.sit(entry.text, 0, ["You", *(f"Bot-{seat}" for seat in range(1, players))])
        times: list[float] = []
        async with trio.open_nursery() as nursery:
            await nursery.start(ui.open_screen)
            bots = [entry.bots["heuristic"](rng) for _ in range(players)]
            for number in range(1, hands + 1):
                deck = list(game.deck())
                rng.shuffle(deck)
                hand = game.new_hand(number % players, [], deck)
                while (seat := hand.current_seat) is not None:
                    hand.apply(bots[seat].choose(hand.view(seat)))
                    start = time.perf_counter()
                    ui.show(hand.view(0), number, (0,) * players)
                    ui.refresh()  # what on_event does after show
                    times.append((time.perf_counter() - start) * 1000)
            nursery.cancel_scope.cancel()
    os.close(master)
    return times


_POPUP = re.compile(r"Press (any key|Enter, space or Esc)")  # a popup's last line
SUITS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


class _Terminal:
    """One ``p2pwhist`` command in an 80x24 pseudo-terminal, and the screen it drew."""

    def __init__(self, args: list[str], home: str) -> None:
        import pexpect
        import pyte

        env = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "P2PWHIST_HOME": home}
        self._timeout = pexpect.TIMEOUT
        self._eof = pexpect.EOF
        self.child = pexpect.spawn(sys.executable, ["-m", "p2pwhist", *args], env=env, dimensions=(24, 80),
                                   encoding="utf-8", codec_errors="replace")
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.Stream(self.screen)

    def pump(self, wait: float = 0.005) -> None:
        try:
            self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=wait))
        except (self._timeout, self._eof):
            pass

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    @property
    def title(self) -> str:
        return self.screen.display[0]


def _until(ready, terminals: list[_Terminal], deadline: float = 30.0) -> float:
    """Pump every terminal until ``ready()``; the time it became true."""
    end = time.perf_counter() + deadline
    while time.perf_counter() < end:
        for terminal in terminals:
            terminal.pump()
        if ready():
            return time.perf_counter()
    raise RuntimeError("the screens did not show what was awaited within 30 s")


def event_to_screen(plays: int) -> list[float]:
    """Milliseconds from a play's Enter on one screen to the card on the other, ``plays`` times."""
    with tempfile.TemporaryDirectory(prefix="p2pwhist-bench-ui-") as homes:
        host = _Terminal(["host", "--port", "0", "--bind", "127.0.0.1", "--hands", "1", "--name", "alice"],
                         f"{homes}/alice")
        _until(lambda: "--expect" in host.text, [host])
        command = next(line for line in host.text.split("\n") if "--expect" in line)
        address = re.search(r"join (\S+)", command).group(1)
        expect = re.search(r"--expect (\S+)", command).group(1)
        guest = _Terminal(["join", address, "--expect", expect, "--name", "bob"], f"{homes}/bob")
        both = [host, guest]
        asked: set[int] = set()

        def seated() -> bool:
            for terminal in both:
                if ("Trust it?" in terminal.text or "this key?" in terminal.text) and id(terminal) not in asked:
                    asked.add(id(terminal))
                    terminal.child.send("y\r")
            return all("Your turn" in t.title or "Waiting for" in t.title for t in both)

        _until(seated, both)
        times = []
        try:
            while len(times) < plays:
                def turn_or_alert() -> bool:
                    return any("Your turn" in t.title or _POPUP.search(t.text) for t in both)

                _until(turn_or_alert, both)
                alerted = next((t for t in both if _POPUP.search(t.text)), None)
                if alerted is not None:  # a popup (an alert, a hand's end): Esc closes it and does nothing else
                    alerted.child.send("\x1b")
                    _until(lambda alerted=alerted: not _POPUP.search(alerted.text), both)
                    continue
                mover = next(t for t in both if "Your turn" in t.title)
                waiter = guest if mover is host else host
                name = "alice" if mover is host else "bob"
                seen: list[tuple[float, str]] = []
                start = time.perf_counter()
                mover.child.send("\r")

                def played(seen=seen, waiter=waiter, mover=mover) -> bool:
                    seen.append((time.perf_counter(), waiter.text))
                    return "You played" in mover.text

                _until(played, both)
                typed = re.search(r"You played (\S+?)\.", mover.text).group(1)
                if typed == "box":  # a blind box card: the other screen names no card to wait for
                    continue
                shown = f"{name} {typed[:-1]}{SUITS[typed[-1]]}"

                def on_screen(seen=seen, waiter=waiter, shown=shown) -> bool:
                    seen.append((time.perf_counter(), waiter.text))
                    return shown in waiter.text

                _until(on_screen, both)
                times.append((next(at for at, text in seen if shown in text) - start) * 1000)
        finally:
            for terminal in both:
                terminal.child.terminate(force=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=3, help="hands of each game to time (default 3)")
    parser.add_argument("--plays", type=int, default=20, help="plays timed between two processes (default 20)")
    args = parser.parse_args()
    rng = random.Random(1)
    figures: dict[str, object] = {"cols": COLS, "rows": ROWS}
    medians = []
    for name, players in CASES:
        times = trio.run(_times, name, players, args.hands, rng)
        median = statistics.median(times)
        medians.append(median)
        worst = max(times)
        print(f"{name} ({players} players): {len(times)} redraws, median {median:.2f} ms, max {worst:.2f} ms")
        figures[f"{name}_render_ms"] = round(median, 3)
    figures["render_ms"] = round(max(medians), 3)
    figures["render_goal_ms"] = GOAL_MS
    if args.plays:
        times = event_to_screen(args.plays)
        median = statistics.median(times)
        print(f"event to screen, two processes over loopback: {len(times)} plays, median {median:.1f} ms, "
              f"max {max(times):.1f} ms")
        figures["event_to_screen_ms"] = round(median, 1)
        figures["event_to_screen_goal_ms"] = 100.0
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
