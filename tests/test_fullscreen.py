"""The full-screen table as a person uses it: ``p2pwhist`` in a real pseudo-terminal (pexpect),
its output turned into a screen by a VT100 emulator (pyte), keys sent, the screen read.

Every wait has a deadline; nothing asserts how long anything took.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

ENTER = "\r"
DEADLINE = 30.0  # seconds for any one thing to appear on screen


class Terminal:
    """One ``p2pwhist`` command in an 80x24 pseudo-terminal, and the screen it has drawn."""

    def __init__(self, args: list[str], home: Path, cols: int = 80, rows: int = 24) -> None:
        env = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "P2PWHIST_HOME": str(home)}
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(sys.executable, ["-m", "p2pwhist", *args], env=env, dimensions=(rows, cols),
                                   encoding="utf-8", codec_errors="replace")
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        self.closed = False
        self.output = ""  # everything written, for the lines printed after the screen closes

    def pump(self, wait: float = 0.05) -> None:
        """Feed whatever the program wrote to the screen (waiting up to ``wait`` for it)."""
        if self.closed:
            return
        try:
            data = self.child.read_nonblocking(1 << 16, timeout=wait)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self.closed = True
            return
        self.output += data
        self.stream.feed(data)

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def row(self, label: str) -> str:
        """The screen line that starts (after the margin) with ``label``."""
        return next((line for line in self.screen.display if line.strip().startswith(label)), "")

    def wait_for(self, ready: Callable[[str], bool], what: str, others: tuple[Terminal, ...] = (),
                 deadline: float = DEADLINE) -> str:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            self.pump()
            for other in others:  # keep the other program's terminal drained
                other.pump(0)
            if ready(self.text):
                return self.text
            if self.closed:
                break
        raise AssertionError(f"no {what} within {deadline:g} s; the screen:\n{self.text}")

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self) -> int:
        end = time.monotonic() + DEADLINE
        while not self.closed and time.monotonic() < end:
            self.pump(0.2)
        assert self.closed, f"the program did not end; the screen:\n{self.text}"
        self.child.close()
        return self.child.exitstatus

    def kill(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminals(tmp_path):
    started: list[Terminal] = []

    def start(*args: str, home: str = "home") -> Terminal:
        terminal = Terminal(list(args), tmp_path / home)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.kill()


def _cells(terminal: Terminal) -> list[str]:
    """The cards of the "Hand:" row of the hand pane (not the table's "Your hand:" row)."""
    return terminal.row("Hand:").split(":", 1)[1].split()


def _play_out(terminal: Terminal, result: str) -> tuple[str, int]:
    """Play every turn with Enter (the highlighted legal card) and dismiss each standing event,
    until the hand's result (containing ``result``) is on screen; return it and the turns played."""
    turns = 0
    while True:
        screen = terminal.wait_for(lambda s: "Press any key" in s or "Your turn" in s.split("\n")[0],
                                   "turn or event")
        if "Press any key" in screen:
            if result in screen:
                return screen, turns
            terminal.send(" ")  # an alert ("your box is open"): the key dismisses it and is not played
            terminal.wait_for(lambda s, before=screen: s != before, "the alert dismissed")
            continue
        terminal.send(ENTER)
        turns += 1
        terminal.wait_for(lambda s, before=screen: s != before, "the play shown")


def test_a_hand_of_box_whist_against_a_bot(terminals):
    player = terminals("play", "--hands", "1")
    screen = player.wait_for(lambda s: "Your turn" in s or "Waiting for" in s, "the table")
    assert screen.split("\n")[0].lstrip().startswith("Box Whist")
    screen = player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    hand = _cells(player)
    assert len(hand) == 11 and all(re.fullmatch(r"(10|[2-9JQKA])[♠♥♦♣]", card) for card in hand), hand
    assert player.row("Box:").split(":", 1)[1].split() == ["box", "1", "box", "2", "box", "3", "box", "4"]
    assert "History" in screen and "== Hand 1:" in screen
    assert "Trumps:" in screen and "Stack:" in screen

    # A card typed by name: the lowest legal card of our hand, whatever it is.
    card = hand[-1]
    player.send(card.replace("♠", "s").replace("♥", "h").replace("♦", "d").replace("♣", "c"))
    player.wait_for(lambda s: "> " in s and "_" in s, "what we typed")
    player.send(ENTER)
    screen = player.wait_for(lambda s: "You played" in s or "Not allowed" in s, "the play or its refusal")
    if "Not allowed" in screen:  # we had to follow suit: play the highlighted card instead
        player.send("\x1b" + ENTER)

    screen, turns = _play_out(player, "Hand 1 over")
    assert "Tricks:" in screen and ("wins the hand" in screen or "win the hand" in screen or "drawn" in screen)
    assert turns >= 10
    assert "Trick 1:" in player.output  # the history had every trick as it went
    player.send(" ")
    assert player.finish() == 0
    assert "Match over." in player.output


def test_a_game_of_box_against_bots(terminals):
    player = terminals("play", "--game", "box", "--players", "3", "--hands", "1")
    screen = player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    assert screen.split("\n")[0].lstrip().startswith("Box")
    assert "To beat:" in screen and "Pile:" in screen and "History" in screen
    assert 1 <= len(_cells(player)) <= 4
    screen, turns = _play_out(player, "Hand 1 over")
    assert "Box cards left" in screen and ("A point each" in screen or "point" in screen)
    assert turns >= 1
    assert "Round 1:" in player.output
    player.send(" ")
    assert player.finish() == 0
    assert "Match over." in player.output


def _answer_trust(terminal: Terminal, answered: set[int]) -> None:
    """Trust a new player's key, once (the question stays on screen until the table opens)."""
    if ("Trust it?" in terminal.text or "Play with this key?" in terminal.text) and id(terminal) not in answered:
        answered.add(id(terminal))
        terminal.send("y" + ENTER)


def test_two_people_see_each_other_play_and_keys_out_of_turn_are_not_played(terminals):
    host = terminals("host", "--port", "0", "--hands", "1", "--name", "alice", "--bind", "127.0.0.1",
                     home="alice")
    screen = host.wait_for(lambda s: "--expect" in s, "the join command")
    command = next(line for line in screen.split("\n") if "--expect" in line)
    address = re.search(r"join (\S+)", command).group(1)
    expect = re.search(r"--expect (\S+)", command).group(1)
    guest = terminals("join", address, "--expect", expect, "--name", "bob", home="bob")
    both = (host, guest)

    answered: set[int] = set()

    def table_up(terminal: Terminal, other: Terminal) -> None:
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and not ("Your turn" in terminal.text or "Waiting for" in terminal.text):
            terminal.pump()
            other.pump(0)
            _answer_trust(terminal, answered)
        assert "Your turn" in terminal.text or "Waiting for" in terminal.text, terminal.text

    table_up(host, guest)
    table_up(guest, host)

    played = 0
    refused_once = False
    while played < 6:
        end = time.monotonic() + DEADLINE
        mover = waiter = None
        while time.monotonic() < end:
            for terminal in both:
                terminal.pump(0.02)
            for a, b in (both, both[::-1]):
                if "Your turn" in a.text.split("\n")[0] and "Press any key" not in a.text:
                    mover, waiter = a, b
            if mover is not None and "Waiting for" in waiter.text.split("\n")[0]:
                break
            for terminal in both:  # an alert ("your box is open") is dismissed, with one key
                if "Press any key" in terminal.text:
                    terminal.send(" ")
                    terminal.wait_for(lambda s: "Press any key" not in s, "the alert dismissed", others=both)
            mover = None
        assert mover is not None, f"no turn on either screen:\n{host.text}\n----\n{guest.text}"
        name = "alice" if waiter is guest else "bob"
        assert f"Waiting for {name}" in waiter.text.split("\n")[0]
        trick_before = mover.row("Trick:")

        if not refused_once:  # the waiting seat types a card and Enter: refused, and not kept
            waiter.send("QS" + ENTER)
            waiter.wait_for(lambda s: "Not your turn" in s, "the refusal", others=(mover,))
            refused_once = True

        mover.send(ENTER)
        screen = mover.wait_for(lambda s: "You played" in s, "our play", others=(waiter,))
        played += 1
        typed = re.search(r"You played (\S+?)\.", screen).group(1)
        mover_name = "alice" if mover is host else "bob"
        if typed != "box":  # a card we could see: the other screen shows it, with our name
            card = typed[:-1] + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[typed[-1]]
            shown = f"{mover_name} {card}"
            waiter.wait_for(lambda s, shown=shown: shown in s, shown, others=(mover,))
        if trick_before.endswith("nothing played yet"):
            # The waiting seat answers the lead: what it typed was not kept, so it has not played.
            waiter.wait_for(lambda s: "Your turn" in s.split("\n")[0], "its turn", others=(mover,))
            assert waiter.row("> ").strip() == "> _"
            assert "You " not in waiter.row("Trick:")

    for terminal in both:
        terminal.kill()


# -- the games' cells, which the hand pane lays out (GameText.cells) ------------------------------


@pytest.mark.parametrize("name, players, options", [("boxwhist", 2, {}), ("boxwhist", 4, {}), ("box", 4, {}),
                                                    ("box", 3, {"variant": "pagat"})])
def test_cells_are_the_seats_cards_and_the_legal_ones_type_back_as_themselves(name, players, options):
    import random

    from p2pwhist.games.registry import GAMES

    entry = GAMES[name]
    game = entry.make(players, **options)
    rng = random.Random(7)
    for _ in range(3):
        deck = list(game.deck())
        rng.shuffle(deck)
        hand = game.new_hand(0, [], deck)
        while (seat := hand.current_seat) is not None:
            view = hand.view(seat)
            cells = entry.text.cells(view)
            assert {cell.move for cell in cells if cell.legal} == set(view.legal_moves)
            assert len({cell.move for cell in cells}) == len(cells)
            for cell in cells:
                if cell.legal:
                    assert view.parse_move(cell.typed) == cell.move, cell
            other = (seat + 1) % players
            assert not any(cell.legal for cell in entry.text.cells(hand.view(other)))
            assert all(isinstance(line, str) for line in entry.text.notices(view))
            hand.apply(rng.choice(view.legal_moves))
