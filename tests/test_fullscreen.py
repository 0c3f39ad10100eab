"""The full-screen table as a person uses it: ``p2pwhist`` in a real pseudo-terminal (pexpect),
its output turned into a screen by a VT100 emulator (pyte), keys sent, the screen read. What
runs beside the screen's event loop (a hint thinking, a local bot) is tested in this process,
with keys typed into the screen's own pseudo-terminal.

Every wait has a deadline; nothing asserts how long anything took. A whole hand against the
search bot is played at ``--level easy``: the screen is what is tested, and at the default level
each of the bot's moves may take up to a second (its level is the same bot with a smaller budget).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
import urwid

from p2pwhist.cli_play import _local_turns
from p2pwhist.games.base import Play, View
from p2pwhist.games.match import MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.local import LocalMatch
from p2pwhist.ui.fullscreen import FullScreenPlayer, keys_help
from p2pwhist.ui.terminal import hint_bot

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

ENTER = "\r"
ESC = "\x1b"
# The last line of a popup: a hand's end ("Press Enter, space or Esc"), an alert or the last
# trick ("Press any key").
POPUP = re.compile(r"Press (any key|Enter, space or Esc)")
DEADLINE = 30.0  # seconds for any one thing to appear on screen


def _remember_a_name(home: Path) -> None:
    """A person at a terminal is asked their name once (test_names): here it was asked before."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "name").exists():
        (home / "name").write_text(f"{os.environ.get('USER') or 'player'}\n")


class Terminal:
    """One ``p2pwhist`` command in an 80x24 pseudo-terminal, and the screen it has drawn."""

    def __init__(self, args: list[str], home: Path, cols: int = 80, rows: int = 24,
                 env: dict[str, str] | None = None) -> None:
        # Its temporary files in its home too: a program killed at the test's end leaves them
        # there, not in the machine's /tmp.
        base = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "P2PWHIST_HOME": str(home), "TMPDIR": str(home)}
        base.pop("NO_COLOR", None)
        env = {**base, **(env or {})}
        _remember_a_name(home)
        self.child = pexpect.spawn(sys.executable, ["-m", "p2pwhist", *args], env=env, dimensions=(rows, cols),
                                   encoding="utf-8", codec_errors="replace")
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        self.closed = False
        self.output = ""  # everything written, for the lines printed after the screen closes

    def pump(self, wait: float = 0.05) -> bool:
        """Feed whatever the program wrote to the screen (waiting up to ``wait`` for it); whether
        it wrote anything."""
        if self.closed:
            return False
        try:
            data = self.child.read_nonblocking(1 << 16, timeout=wait)
        except pexpect.TIMEOUT:
            return False
        except pexpect.EOF:
            self.closed = True
            return False
        self.output += data
        self.stream.feed(data)
        return True

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def row(self, label: str) -> str:
        """The screen line that starts (after the margin) with ``label``."""
        return next((line for line in self.screen.display if line.strip().startswith(label)), "")

    def wait_for(self, ready: Callable[[str], bool], what: str, others: tuple[Terminal, ...] = (),
                 deadline: float = DEADLINE, settled: bool = False) -> str:
        """The screen once ``ready`` says so; ``settled``: and the program has written nothing
        for a moment, so the screen is whole (not a redraw half read) before keys are sent on
        what it shows. A program that answers at once (``play --local``) needs this."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            wrote = self.pump()
            for other in others:  # keep the other program's terminal drained
                other.pump(0)
            if not (settled and wrote) and ready(self.text):
                return self.text
            if self.closed:
                break
        raise AssertionError(f"no {what} within {deadline:g} s; the screen:\n{self.text}")

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def resize(self, cols: int, rows: int) -> None:
        """The window changes size: the program gets SIGWINCH, the emulated screen the new size."""
        self.pump(0)  # what was drawn at the old size is drawn at the old size
        self.child.setwinsize(rows, cols)
        self.screen.resize(rows, cols)

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

    def start(*args: str, home: str = "home", env: dict[str, str] | None = None) -> Terminal:
        terminal = Terminal(list(args), tmp_path / home, env=env)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.kill()


def _cells(terminal: Terminal) -> list[str]:
    """The cards of the "Hand:" row of the hand pane (not the table's "Your hand:" row)."""
    return terminal.row("Hand:").split(":", 1)[1].split()


def _popup(screen: str) -> str:
    """The popup on ``screen``, its box alone (not the table beside it), or "" if none."""
    lines = screen.split("\n")
    top = next((i for i, line in enumerate(lines) if "┌" in line and "┐" in line), None)
    if top is None:
        return ""
    left, right = lines[top].index("┌"), lines[top].rindex("┐")
    bottom = next((i for i in range(top + 1, len(lines)) if "└" in lines[i]), len(lines) - 1)
    return "\n".join(line[left:right + 1] for line in lines[top:bottom + 1])


def _play_out(terminal: Terminal, result: str) -> tuple[str, int]:
    """Play every turn with Enter (the highlighted legal card) and dismiss each standing event,
    until the hand's result (containing ``result``) is on screen; return it and the turns played."""
    turns = 0
    while True:
        screen = terminal.wait_for(lambda s: POPUP.search(s) or "Your turn" in s.split("\n")[0],
                                   "turn or event", settled=True)
        if POPUP.search(screen):
            if result in screen:
                return screen, turns
            terminal.send(ESC)  # an alert ("your box is open"): Esc only closes it
            # Wait for that, not for any change (a bot's move): urwid holds a lone Esc a moment
            # in case an escape sequence follows, and a key sent meanwhile comes glued to it, as
            # Alt and that key, which does not acknowledge a hand's result.
            terminal.wait_for(lambda s, before=_popup(screen): _popup(s) != before, "the alert dismissed")
            continue
        terminal.send(ENTER)
        turns += 1
        terminal.wait_for(lambda s, before=screen: s != before, "the play shown")


def test_a_hand_of_box_whist_against_a_bot(terminals):
    player = terminals("play", "--hands", "1", "--level", "easy")  # the search bot, thinking briefly
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
    assert "To follow:" in screen and "Pile:" in screen and "History" in screen
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
                if "Your turn" in a.text.split("\n")[0] and not POPUP.search(a.text):
                    mover, waiter = a, b
            if mover is not None and "Waiting for" in waiter.text.split("\n")[0]:
                break
            for terminal in both:  # an alert ("your box is open") is closed with Esc, which does nothing else
                if POPUP.search(terminal.text):
                    terminal.send(ESC)
                    terminal.wait_for(lambda s: not POPUP.search(s), "the alert closed", others=both)
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
            shown = f"{mover_name} {typed}"  # the card as both tables show it: Q♥
            waiter.wait_for(lambda s, shown=shown: shown in s, shown, others=(mover,))
        if trick_before.endswith("nothing played yet"):
            # The waiting seat answers the lead: what it typed was not kept, so it has not played.
            waiter.wait_for(lambda s: "Your turn" in s.split("\n")[0], "its turn", others=(mover,))
            assert waiter.row("> ").strip() == "> _"
            assert "You " not in waiter.row("Trick:")

    for terminal in both:
        terminal.kill()


def _seated_pair(terminals, *host_args: str) -> tuple[Terminal, Terminal]:
    """alice hosting a 1-hand match (with ``host_args``) and bob joined, both at the table with
    the cards dealt."""
    host = terminals("host", "--port", "0", "--hands", "1", "--name", "alice", "--bind", "127.0.0.1",
                     *host_args, home="alice")
    screen = host.wait_for(lambda s: "--expect" in s, "the join command")
    command = next(line for line in screen.split("\n") if "--expect" in line)
    address = re.search(r"join (\S+)", command).group(1)
    expect = re.search(r"--expect (\S+)", command).group(1)
    guest = terminals("join", address, "--expect", expect, "--name", "bob", home="bob")
    answered: set[int] = set()
    for terminal, other in ((host, guest), (guest, host)):
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and "Trumps:" not in terminal.text:
            terminal.pump()
            other.pump(0)
            _answer_trust(terminal, answered)
        assert "Trumps:" in terminal.text, terminal.text
    return host, guest


LEFT = re.compile(r"bob lost connection; waiting for them to return \((\d+):(\d\d) left\)")


def test_a_peer_killed_mid_hand_is_shown_away_with_its_time_counting_down(terminals):
    host, guest = _seated_pair(terminals)
    guest.child.kill(9)  # no word from bob: its process is simply gone
    seen = []
    for _ in range(2):  # the line as first read, then read again once it has changed
        screen = host.wait_for(lambda s: LEFT.search(s) and (not seen or LEFT.search(s).groups() != seen[-1]),
                               "bob away, the time left changed")
        seen.append(LEFT.search(screen).groups())
    (m1, s1), (m2, s2) = seen
    assert int(m2) * 60 + int(s2) < int(m1) * 60 + int(s1), seen
    assert "Trumps:" in host.text and "Hand:" in host.text  # mid-hand
    host.send(ESC)  # a key (closing a popup, or refused) does not take the line away
    host.wait_for(lambda s, before=host.text: s != before, "the key taken")
    assert LEFT.search(host.wait_for(lambda s: LEFT.search(s), "bob still away")), host.text


def test_a_forfeit_by_absence_is_a_player_who_left_on_every_screen_and_record(terminals, tmp_path):
    """bob's process is killed and he does not return within the table's wait: alice's table
    says he left (a forfeit, not a breach), as do the lines after it, ``show`` and ``verify --json``."""
    host, guest = _seated_pair(terminals, "--wait", "10")
    guest.child.kill(9)
    end = time.monotonic() + DEADLINE
    while "(a forfeit, not a" not in host.text and time.monotonic() < end:
        if "Your turn" in host.text.split("\n")[0]:  # bob forfeits once his move is due: alice leads
            host.send("\r")
        host.pump()
    screen = host.wait_for(lambda s: "(a forfeit, not a" in s, "the hand's end")
    assert "bob left the match and may not win the hand" in screen and "broke" not in screen
    host.send("\r")
    host.wait_for(lambda s: host.closed, "the table closed")
    out = host.output
    assert "bob left the match: lost connection and did not return within 0:10" in out and "caught" not in out
    transcript = re.search(r"p2pwhist verify (\S+)", out).group(1).strip("'")
    shown = subprocess.run([sys.executable, "-m", "p2pwhist", "show", transcript], capture_output=True, text=True,
                           timeout=DEADLINE)
    assert "bob left the match, which loses the hand but proves no breach" in shown.stdout
    checked = subprocess.run([sys.executable, "-m", "p2pwhist", "verify", "--json", transcript], capture_output=True,
                             text=True, timeout=DEADLINE)
    verdict = json.loads(checked.stdout)
    assert verdict["valid"] and [(hand["left"], hand["offenders"]) for hand in verdict["hands"]] == [([1], [])]


# -- play --local: the same table, with the match in this process -------------------------------

CARD = re.compile(r"(?:10|[2-9JQKA])[♠♥♦♣]")
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
F1, DOWN = "\x1bOP", "\x1b[B"


def _hand_pane(terminal: Terminal) -> list[str]:
    """The cards of the hand pane's "Hand:" cells, however many lines they take."""
    rows = terminal.screen.display
    start = next((i for i, line in enumerate(rows) if line.strip().startswith("Hand:")), len(rows))
    cards: list[str] = []
    for number, line in enumerate(rows[start:]):
        if number and (line.strip().startswith(("Box:", "\u2500")) or not line.strip()):
            break
        cards += CARD.findall(line)
    return cards


def _colour_codes(output: str) -> list[str]:
    """The colour parameters of every SGR sequence written: 30-37, 40-47, 90-97, 100-107 and the
    extended colours 38;... and 48;... (bold, underline, reverse and the defaults 39/49 are not)."""
    found = []
    for params in SGR.findall(output):
        for code in params.replace(":", ";").split(";"):
            if code in ("38", "48") or (code.isdigit() and int(code) // 10 in (3, 4, 9, 10) and int(code) % 10 <= 7):
                found.append(params)
                break
    return found


def _drawn_at(cols: int, rows: int, title: str) -> Callable[[str], bool]:
    """The whole table drawn again for a cols x rows window: the title on the first line, the
    keys on the last, wrapped to the width (each written anew at the new size), one rule as
    wide as the window."""
    entry = next(e for e in GAMES.values() if e.text.title == title)
    keys = [row.decode() for row in urwid.Text(keys_help(entry.text, hint_bot(entry) is not None)).render((cols,)).text]

    def ready(screen: str) -> bool:
        lines = screen.split("\n")
        return (len(lines) == rows and lines[0].startswith(f" {title} ") and lines[-len(keys):] == keys
                and any(line == " " + "\u2500" * (cols - 2) + " " for line in lines))
    return ready


def test_play_local_plays_a_whole_hand_of_box_whist_on_the_full_screen_table(terminals):
    player = terminals("play", "--local", "--hands", "1", "--seed", "5", "--level", "easy")
    screen = player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    assert screen.split("\n")[0].lstrip().startswith("Box Whist \u00b7 Hand 1")
    assert len(_hand_pane(player)) == 11 and "Trumps:" in screen and "History" in screen
    assert "search-easy-1" in screen  # named by its kind, its level and its seat, as in networked play
    screen, turns = _play_out(player, "Hand 1 over")
    assert "Hand 1 over. Tricks:" in screen and "Points:" in screen and "the match" in screen
    assert turns >= 10 and "Trick 1:" in player.output
    player.send(" ")
    assert player.finish() == 0
    assert re.search(r"Match over\. .*search-easy-1", player.output)


def test_the_table_redraws_cleanly_after_each_resize_with_the_hand_whole(terminals):
    player = terminals("play", "--local", "--hands", "1", "--seed", "11")
    player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    player.wait_for(_drawn_at(80, 24, "Box Whist"), "the table at 80x24")
    hand = _hand_pane(player)
    assert len(hand) == 11, player.text
    for cols, rows in ((60, 20), (120, 40)):
        player.resize(cols, rows)
        screen = player.wait_for(_drawn_at(cols, rows, "Box Whist"), f"the table drawn again at {cols}x{rows}")
        assert _hand_pane(player) == hand, screen
        assert player.row("Box:").split(":", 1)[1].split() == ["box", "1", "box", "2", "box", "3", "box", "4"]
        assert sum(line.strip().startswith("Hand:") for line in screen.split("\n")) == 1, screen
        assert "Your turn" in screen.split("\n")[0] and "History" in screen and "Trumps:" in screen
    player.resize(40, 12)  # too small for the table: only how large it must be
    screen = player.wait_for(lambda s: "make the terminal at least" in s, "the size asked for at 40x12")
    assert "Trumps:" not in screen and "Hand:" not in screen and "Your turn" not in screen, screen
    player.resize(60, 20)  # large enough again: the table comes back
    player.wait_for(_drawn_at(60, 20, "Box Whist"), "the table drawn again at 60x20")
    assert _hand_pane(player) == hand and "Trumps:" in player.text and "Hands won:" in player.text
    player.send(ENTER)  # and it still plays
    player.wait_for(lambda s: "Trick 1:" in s or POPUP.search(s), "the first trick in the history")
    assert _colour_codes(player.output), "colour is on without NO_COLOR"


def test_no_color_sends_no_colour_codes(terminals):
    player = terminals("play", "--local", "--game", "box", "--players", "3", "--hands", "1", "--seed", "2",
                       env={"NO_COLOR": "1"})
    player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    player.send("?")
    player.wait_for(lambda s: "Box: the rules" in s, "the rules")
    player.send(" ")
    player.wait_for(lambda s: "the rules" not in s, "the rules closed")
    _, turns = _play_out(player, "Hand 1 over")  # every kind of screen: turns, alerts, the result
    assert turns >= 1
    player.send(" ")
    assert player.finish() == 0
    assert not _colour_codes(player.output), sorted(set(_colour_codes(player.output)))
    sgr = [params.split(";") for params in SGR.findall(player.output)]
    assert any("7" in params for params in sgr), "the chosen card is still marked (reverse video)"


def test_h_shows_the_search_bots_play_on_the_message_line_and_the_turn_goes_on(terminals):
    player = terminals("play", "--local", "--hands", "1", "--seed", "5")
    player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn", settled=True)
    assert "h hint" in player.screen.display[-2]  # the keys, wrapped on the last two rows
    hand = _hand_pane(player)
    player.send("h")
    player.wait_for(lambda s: player.row("Hint:") and "thinking" not in player.row("Hint:"), "the hint", settled=True)
    named = re.match(r"Hint: (\S+) - wins the hand in about \d+% of the deals tried", player.row("Hint:").strip())
    assert named, player.text
    card = named.group(1)  # as the table shows it: Q♥
    assert card in hand
    player.send(ENTER)  # and the turn goes on: the hint's card, chosen by the hint, is played
    # "You played 9♦." on the message line, or, if it won the trick (a popup then says the box is
    # open, over that line), in the trick's history line ("Trick 1: search-1 5♦, You 9♦").
    screen = player.wait_for(lambda s: "You played" in s or re.search(r"Trick 1: .*You \S", s), "our play")
    assert f"You played {card}." in screen or re.search(rf"Trick 1: .*You {re.escape(card)}", screen), screen


def test_question_mark_and_f1_open_the_rules_and_any_key_closes_them(terminals):
    player = terminals("play", "--local", "--hands", "1", "--seed", "3")
    player.wait_for(lambda s: "Your turn" in s.split("\n")[0], "our turn")
    hand = _hand_pane(player)
    for opener, closer in (("?", "x"), (F1, ENTER)):
        player.send(opener)
        screen = player.wait_for(lambda s: "Box Whist: the rules" in s, "the rules")
        assert "whist for 2, 3 or 4 players" in screen and "Hand:" not in screen
        player.send(DOWN)  # scrolls the rules: they stay open
        player.wait_for(lambda s, before=screen: s != before, "the rules scrolled")
        assert "Box Whist: the rules" in player.text
        player.send(closer)
        screen = player.wait_for(lambda s: "the rules" not in s, "the rules closed", settled=True)
        # The key that closed them did nothing else: nothing typed, nothing played.
        assert "Your turn" in screen.split("\n")[0] and player.row("> ").strip() == "> _"
        assert _hand_pane(player) == hand and "You played" not in screen


# -- beside the screen's event loop, in this process ---------------------------------------------


class _Screen(urwid.display.raw.Screen):
    """urwid's terminal driver at a fixed size (its output is not a terminal)."""

    def get_cols_rows(self) -> tuple[int, int]:
        return 100, 30


@contextlib.contextmanager
def _keyboard() -> Iterator[tuple[FullScreenPlayer, int]]:
    """A full-screen table on a pseudo-terminal, and the file descriptor to type into it (what
    it draws is thrown away)."""
    typing, terminal = os.openpty()
    with os.fdopen(terminal, "rb", buffering=0) as keys, open(os.devnull, "w", encoding="utf-8") as sink:
        yield FullScreenPlayer(color=False, screen=_Screen(input=keys, output=sink)), typing
    os.close(typing)


async def _until(ready: Callable[[], object], what: str) -> None:
    """Wait for ``ready()`` while the event loop runs (it must be free for this to end)."""
    with trio.move_on_after(DEADLINE):
        while not ready():
            await trio.sleep(0.01)
        return
    raise AssertionError(f"no {what} within {DEADLINE:g} s")


async def test_a_hint_thinks_off_the_event_loop_and_a_move_made_meanwhile_drops_it():
    entry = GAMES["boxwhist"]
    view = LocalMatch(entry.make(2), MatchLength(hands=1), random.Random(0)).next_turn().view()
    assert view.seat == 0
    thinking, go_on = threading.Event(), threading.Event()

    class SlowHints(hint_bot(entry)):
        def choose(self, view: View) -> Play:
            thinking.set()
            go_on.wait(DEADLINE)
            return super().choose(view)

    with _keyboard() as (full, typing):
        full.sit(entry.text, 0, ["You", "North"], SlowHints)
        played: list[Play] = []

        async def person() -> None:
            played.append(await full.choose(view))

        async with trio.open_nursery() as nursery:
            await nursery.start(full.open_screen)
            nursery.start_soon(person)
            await _until(lambda: full.model.status.startswith("Your turn"), "our turn")
            os.write(typing, b"h")
            await _until(thinking.is_set, "hint thinking")
            assert full.model.message == "Hint: thinking\u2026"
            os.write(typing, b"\r")  # Enter plays the highlighted card while the hint thinks
            await _until(lambda: full.model.message.startswith("You played"), "our play")
            go_on.set()
            await _until(lambda: played, "the move returned")
            assert played[0] in view.legal_moves and full.model.message.startswith("You played")  # no hint shown
            nursery.cancel_scope.cancel()


async def test_play_local_bots_think_off_the_event_loop_so_the_screen_takes_keys_meanwhile():
    entry = GAMES["boxwhist"]
    local = LocalMatch(entry.make(2), MatchLength(hands=1), random.Random(1))
    thinking, go_on = threading.Event(), threading.Event()

    class SlowBot:
        def choose(self, view: View) -> Play:
            thinking.set()
            assert go_on.wait(DEADLINE), "the screen took no key while the bot thought"
            return view.legal_moves[0]

    with _keyboard() as (full, typing):
        full.sit(entry.text, 0, ["You", "slow-1"])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(full.run, _local_turns, full, local, [None, SlowBot()])
            await _until(thinking.is_set, "the bot thinking")  # seat 1 leads with this seed
            os.write(typing, b"x")
            await _until(lambda: full.model.message.startswith("Not your turn"), "the key refused")
            go_on.set()
            await _until(lambda: full.model.status.startswith("Your turn"), "our turn after the bot's move")
            nursery.cancel_scope.cancel()


def test_two_people_talk_at_the_table_and_each_sees_the_others_line_with_their_name(terminals):
    """Table talk end to end: alice says the first preset with / 1 Enter, bob types a line;
    each sees the other's line, named, on the message line or in the history."""
    host, guest = _seated_pair(terminals)
    both = (host, guest)
    host.send("/")
    host.wait_for(lambda s: "Say: _" in s, "the talk input", others=(guest,))
    host.send("1" + ENTER)
    guest.wait_for(lambda s: "alice said: good hand" in s, "alice's line", others=(host,))
    host.wait_for(lambda s: "You said: good hand" in s, "alice's own line", others=(guest,))
    guest.send("/gg, bob here" + ENTER)
    host.wait_for(lambda s: "bob said: gg, bob here" in s, "bob's line", others=(guest,))
    for terminal in both:
        terminal.kill()
