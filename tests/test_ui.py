"""The terminal interface: a person's seat driven through text, the spectator, and rendering."""

from __future__ import annotations

import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from helpers import turns
from test_every_game_properties import peer_of, random_hand

from p2pwhist import text
from p2pwhist.cards import Card, Suit
from p2pwhist.games.base import HandResult, HonourPolicy, Play
from p2pwhist.games.bots import RandomBot
from p2pwhist.games.boxwhist.engine import TRICKS_PER_HAND, BoxWhist, BoxWhistHand, BoxWhistView, Revoke
from p2pwhist.games.match import Match, MatchLength
from p2pwhist.games.registry import GAMES
from p2pwhist.local import play_hand, play_match, shuffled_deck
from p2pwhist.text import Style
from p2pwhist.ui import InputClosed, TerminalPlayer, Watcher
from p2pwhist.ui.terminal import broken, help_text, hint_bot, style_for, wants_color

REPO = Path(__file__).resolve().parent.parent
WORDS = GAMES["boxwhist"].text
ANSI = "\x1b["
SYMBOLS = "♠♥♦♣"


def typed(card: Card, turn: int) -> str:
    """The card as a person might type it, in one of the accepted spellings."""
    spellings = [card.ascii, card.ascii.lower(), str(card).lower()]
    if card.rank == 10:
        spellings.append(f"T{card.suit.letter.lower()}")
    return spellings[turn % len(spellings)]


class Keyboard:
    """Types for the person: plans each turn from the view the player was handed.

    The first turn types garbage, a box card (refused: the box is closed), ``?``, and then the
    first play the ``?`` answer listed, read back from the output. The first time it holds the
    suit led and another suit, it tries the other suit (refused) first. Otherwise it types a
    legal play, in a different spelling each turn.
    """

    def __init__(self, output: io.StringIO) -> None:
        self.output = output
        self.view: BoxWhistView | None = None
        self.expected: Play | None = None
        self.queue: list[str | Callable[[], str]] = []
        self.turns = 0
        self.lines = 0
        self.tried_revoke = False

    def readline(self) -> str:
        self.lines += 1
        assert self.lines < 10_000, "the player keeps asking: it refused a legal play"
        if not self.queue:
            self.queue = self._plan()
        item = self.queue.pop(0)
        return (item() if callable(item) else item) + "\n"

    def _plan(self) -> list[str | Callable[[], str]]:
        view = self.view
        assert view is not None
        self.turns += 1
        if self.turns == 1:
            return ["xyzzy", "box 1", "?", self._first_listed]
        if view.trick and not self.tried_revoke:
            led = view.trick[0].card.suit
            off = [card for card in view.hand.values() if card.suit is not led]
            if off and any(card.suit is led for card in view.hand.values()):
                self.tried_revoke = True
                return [typed(off[0], self.turns), self._legal()]
        return [self._legal()]

    def _legal(self) -> str:
        view = self.view
        move = view.legal_moves[self.turns % len(view.legal_moves)]
        self.expected = move
        if move.position in view.hand:
            return typed(view.hand[move.position], self.turns)
        return next(f"box {slot}" for slot, position, _ in view.box if position == move.position)

    def _first_listed(self) -> str:
        screen = re.sub(r"\x1b\[[0-9;]*m", "", self.output.getvalue())  # as a person reads it
        listed = [line for line in screen.splitlines() if "You may play: " in line][-1]
        text = listed.split("You may play: ")[1].split()[0]
        self.expected = self.view.parse_move(text)
        return text


class Spy:
    """Hands the view to the keyboard, then checks the player returned what was typed."""

    def __init__(self, player: TerminalPlayer, keyboard: Keyboard) -> None:
        self.player = player
        self.keyboard = keyboard
        self.hand_over = player.hand_over

    def choose(self, view: BoxWhistView) -> Play:
        self.keyboard.view = view
        move = self.player.choose(view)
        assert move == self.keyboard.expected
        return move


def human_match(players: int, seed: int, hands: int = 2, color: bool = False) -> tuple[Match, str]:
    rng = random.Random(seed)
    output = io.StringIO()
    keyboard = Keyboard(output)
    player = TerminalPlayer(0, WORDS, keyboard, output, color=color)  # type: ignore[arg-type]
    spy = Spy(player, keyboard)
    bots = [spy] + [RandomBot(rng) for _ in range(players - 1)]
    match = play_match(BoxWhist(players), MatchLength(hands=hands), bots, rng, on_hand=player.hand_over)
    player.match_over(match)
    return match, output.getvalue()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_person_plays_a_match_through_text(players: int) -> None:
    match, out = human_match(players, seed=players)
    assert len(match.results) == 2
    lines = out.splitlines()
    # Garbage, a closed box, an off-suit card: each gets one line with its reason.
    assert any(line.endswith("'xyzzy' is not a card (try QS, 10h or q♠)") for line in lines)
    assert re.search(r"Not allowed: (the box may not be used|a lead must come from the hand)", out)
    assert "Not allowed: must follow suit from the hand (holds " in out
    assert "You may play: " in out
    # Each trick is reported, the last ones of each hand after the final prompt too.
    last = TRICKS_PER_HAND[players]
    assert out.count(f"Trick {last}: ") == 2
    assert len(re.findall(r"^== Hand [12]: \w+ deals?; trumps are ", out, re.M)) == 2  # one header a hand
    assert "Hand 2 over" in out and "Hands won:  You " in out
    names = text.seat_names(players, 0)
    assert lines[-1] == text.match_line(names, match.points, match.winner) + "."


def test_a_spectator_is_told_each_trick_once_with_the_cards_drawn_after_it() -> None:
    """``follow`` after every move and again after its reveals, as a networked spectator's
    session calls it: a trick is printed once, when the stack cards drawn after it are revealed
    (never "a card not yet revealed"), and the hand's end prints the rest."""
    game = BoxWhist(2)
    full, cards, rng = random_hand(game, 3)
    peer = peer_of(game, full, cards, 0)
    out = io.StringIO()
    player = TerminalPlayer(0, WORDS, io.StringIO(), out)
    while not full.is_over:
        known = full.visible_to(0)
        move = rng.choice(full.legal_moves())
        peer.learn(move.position, cards[move.position])  # claimed, or revealed if played blind
        full.apply(move)
        peer.apply(move)
        player.follow(peer.view(0))
        for p in sorted(peer.visible_to(0) - known):
            peer.learn(p, cards[p])
        player.follow(peer.view(0))
    player.hand_over(peer, full.result())
    said = out.getvalue()
    assert "not yet revealed" not in said
    assert [said.count(f"Trick {n}: ") for n in range(1, TRICKS_PER_HAND[2] + 1)] == [1] * TRICKS_PER_HAND[2]
    assert said.index(f"Trick {TRICKS_PER_HAND[2]}: ") < said.index("Hand 1 over")


def test_a_hand_still_being_dealt_is_followed_once_it_can_be_read() -> None:
    """The line interface follows every table change, the deal's too: before the trump card is
    revealed the hand cannot be read, so nothing is said, and its header comes once it can."""
    game = BoxWhist(2)
    full, cards, _ = random_hand(game, 3)
    out = io.StringIO()
    player = TerminalPlayer(0, WORDS, io.StringIO(), out)
    player.follow(game.new_hand(full.dealer, (), [None] * len(cards), HonourPolicy.RECORD).view(0))
    assert out.getvalue() == ""
    player.follow(full.view(0))
    player.follow(full.view(0))
    assert out.getvalue().count("== Hand 1: ") == 1


def test_the_score_from_earlier_hands_is_shown() -> None:
    match, out = human_match(2, seed=5, hands=2)
    second = out[out.index("Hand 1 over") :]
    you, north = match.results[0].points
    assert f"Hands won:  You {you}, North {north}" in second


def test_end_of_input_raises_input_closed() -> None:
    rng = random.Random(1)
    output = io.StringIO()
    player = TerminalPlayer(0, WORDS, io.StringIO("xyzzy\n"), output, color=False)
    with pytest.raises(InputClosed):
        play_match(BoxWhist(2), MatchLength(hands=1), [player, RandomBot(rng)], rng)
    assert output.getvalue().endswith("Your play: ")


def test_a_line_from_the_table_while_a_person_types_comes_on_its_own_line_then_the_question_again() -> None:
    """The table's news (a seat is slow, lost, back) or talk may come while the person's
    answer is awaited: it goes on a line of its own, not after "Your play: ", which is asked
    again below it; once answered, such a line is printed as it comes."""
    news = "Waiting for bob for 0:15; they forfeit in 0:45."

    class Keyboard(io.StringIO):
        def readline(self, size: int = -1) -> str:
            player.interject(news)  # the edge's thread says it while the person types
            return super().readline(size)

    output = io.StringIO()
    player = TerminalPlayer(0, WORDS, Keyboard("quit\n"), output, color=False)
    with pytest.raises(InputClosed):
        play_match(BoxWhist(2), MatchLength(hands=1), [player, RandomBot(random.Random(1))], random.Random(1))
    assert output.getvalue().endswith(f"Your play: \n{news}\nYour play: ")
    player.interject("bob is back.")  # answered (the terminal echoed the line end): as it comes
    assert output.getvalue().endswith(f"\n{news}\nYour play: bob is back.\n")


def test_quit_raises_input_closed() -> None:
    rng = random.Random(1)
    player = TerminalPlayer(0, WORDS, io.StringIO("help\nquit\nQS\n"), io.StringIO(), color=False)
    with pytest.raises(InputClosed, match="left the game"):
        play_match(BoxWhist(2), MatchLength(hands=1), [player, RandomBot(rng)], rng)


def test_help_explains_the_input_and_lists_the_plays() -> None:
    hand = _hand(2, seed=1)
    text = help_text(WORDS, hand.view(hand.current_seat), Style())
    assert "box N" in text and "QS" in text and "Ctrl-D" in text
    assert text.splitlines()[-1].startswith("You may play: ")


# -- secrecy: a closed box is never shown ---------------------------------------------------


def _hand(players: int, seed: int) -> BoxWhistHand:
    game = BoxWhist(players)
    return game.new_hand(seed % players, (), shuffled_deck(game, random.Random(seed)))


def _closed_box_cards(hand: BoxWhistHand, seat: int) -> list[str]:
    if hand.may_look[seat]:
        return []
    return [str(hand.cards[position]) for position in hand.boxes[seat]]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_table_never_shows_a_closed_box(players: int) -> None:
    checked = 0
    for seed in range(10):
        hand, rng = _hand(players, seed), random.Random(seed)
        while not hand.is_over:
            for seat in range(players):
                view = hand.view(seat)
                shown = WORDS.table(view, text.seat_names(players, seat), Style(), 1, [0] * players)
                shown += WORDS.legal(view, Style()) + help_text(WORDS, view, Style())
                for card in _closed_box_cards(hand, seat):
                    assert card not in shown, f"seat {seat}'s closed box card {card} was shown"
                    checked += 1
            hand.apply(rng.choice(hand.legal_moves()))
    assert checked > 200


def test_a_persons_screen_never_shows_its_closed_box() -> None:
    """Everything the player printed while its box was closed, checked at each turn."""
    checked = 0
    for seed in range(6):
        hand, rng = _hand(2, seed), random.Random(seed)
        output = io.StringIO()
        keyboard = Keyboard(output)
        keyboard.turns = 1  # skip the first-turn script
        player = TerminalPlayer(0, WORDS, keyboard, output, color=False)  # type: ignore[arg-type]

        class Checked(Spy):
            def choose(self, view: BoxWhistView) -> Play:
                hidden, start = _closed_box_cards(hand, 0), len(output.getvalue())
                move = super().choose(view)
                screen = output.getvalue()[start:]
                assert screen.count("Your box:") == 1
                for card in hidden:
                    assert card not in screen
                nonlocal checked
                checked += len(hidden)
                return move

        play_hand(hand, [Checked(player, keyboard), RandomBot(rng)])
    assert checked > 20


def test_blind_play_is_explained() -> None:
    for seed in range(200):
        hand, rng = _hand(4, seed), random.Random(seed)
        while not hand.is_over:
            seat = hand.current_seat
            view = hand.view(seat)
            if not view.hand and not view.may_look[seat]:
                table = WORDS.table(view, text.seat_names(4, seat), Style())
                assert "your hand is empty, so you play it blind" in table
                slots = ", ".join(f"box {slot}" for slot, _, _ in view.box)
                assert WORDS.legal(view, Style()) == f"You may play: {slots} (blind)"
                for card in _closed_box_cards(hand, seat):
                    assert card not in table
                return
            hand.apply(rng.choice(hand.legal_moves()))
    pytest.fail("no blind play in 200 random hands")


def test_an_open_box_shows_its_slots() -> None:
    hand, rng = _hand(2, seed=3), random.Random(3)
    while not hand.may_look[0] or hand.current_seat != 0:
        hand.apply(rng.choice(hand.legal_moves()))
    view = hand.view(0)
    table = WORDS.table(view, text.seat_names(2, 0), Style())
    for slot, _, card in view.box:
        assert f"box {slot} = {card}" in table


# -- colour and symbols ---------------------------------------------------------------------


def test_no_colour_codes_when_colour_is_off_and_red_suits_when_on() -> None:
    _, plain = human_match(2, seed=2, hands=1, color=False)
    _, coloured = human_match(2, seed=2, hands=1, color=True)
    assert ANSI not in plain
    assert f"{text.RED}" in coloured and re.search(r"\x1b\[31m(10|[2-9JQKA])[♥♦]\x1b\[0m", coloured)
    assert not re.search(r"\x1b\[31m(10|[2-9JQKA])[♠♣]", coloured)  # black suits stay uncoloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_letters_replace_suit_symbols_when_the_encoding_lacks_them() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    assert style_for(stream, color=False) == Style(color=False, symbols=False)
    rng = random.Random(4)
    watcher = Watcher(WORDS, stream, color=False)
    match = play_match(BoxWhist(3), MatchLength(hands=1), [RandomBot(rng) for _ in range(3)], rng,
                       on_hand=watcher.hand_over, on_move=watcher.on_move)  # fmt: skip
    watcher.match_over(match)
    stream.flush()
    text = raw.getvalue().decode("ascii")  # an encoding error above would have raised
    assert "trumps are " in text and re.search(r"\b(10|[2-9JQKA])[SHDC]\b", text)


def test_a_person_on_an_ascii_terminal_reads_letters() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    rng = random.Random(1)
    player = TerminalPlayer(0, WORDS, io.StringIO("xyzzy\n?\n"), stream, color=False)
    with pytest.raises(InputClosed):
        play_match(BoxWhist(2), MatchLength(hands=1), [player, RandomBot(rng)], rng)
    stream.flush()
    text = raw.getvalue().decode("ascii")
    assert "'xyzzy' is not a card (try QS, 10h or qS)" in text  # the engine's message, made ASCII
    assert re.search(r"You may play: (10|[2-9JQKA])[SHDC]", text)


def test_letter_style_renders_cards_and_engine_messages_in_ascii() -> None:
    style = Style(symbols=False)
    assert style.card(Card.parse("10h")) == "10H"
    assert style.suit(Suit.SPADES) == "S"
    assert style.fit("'x' is not a card (try QS, 10h or q♠)") == "'x' is not a card (try QS, 10h or qS)"
    assert Style(color=True, symbols=False).card(Card.parse("QD")) == f"{text.RED}QD{text.RESET}"


class FakeTerminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_is_automatic_only_on_a_capable_terminal() -> None:
    assert wants_color(FakeTerminal(True), {"TERM": "xterm"})
    assert not wants_color(FakeTerminal(False), {"TERM": "xterm"})
    assert not wants_color(FakeTerminal(True), {"TERM": "dumb"})
    assert not wants_color(FakeTerminal(True), {"TERM": "xterm", "NO_COLOR": "1"})
    assert wants_color(FakeTerminal(True), {"TERM": "xterm", "NO_COLOR": ""})  # set but empty: ignored
    assert not wants_color(io.StringIO(), {"TERM": "xterm"})


# -- results --------------------------------------------------------------------------------


def test_names_seen_from_each_seat() -> None:
    assert text.seat_names(2, 0) == ("You", "North")
    assert text.seat_names(4, 2) == ("North", "East", "You", "West")
    assert text.seat_names(3) == ("South", "West", "East")
    with pytest.raises(ValueError, match="names must name all 2 seats"):
        TerminalPlayer(0, WORDS, io.StringIO(), io.StringIO(), names=["Ann", "Bo", "Cy"]).match_over(
            Match(BoxWhist(2), MatchLength(hands=1), 0)
        )


def test_hand_result_says_who_won_a_drawn_hand_and_revokes() -> None:
    names, style = ("You", "North"), Style()
    hand = _hand(2, seed=1)
    won = WORDS.hand_result(hand, HandResult((14, 12), frozenset(), (1, 0)), names, style, 3)
    assert won.splitlines() == ["== Hand 3 over. Tricks: You 14, North 12 ==", "You win the hand."]
    drawn = WORDS.hand_result(hand, HandResult((13, 13), frozenset(), (0, 0)), names, style)
    assert drawn.splitlines()[-1] == "The hand is drawn."
    hand.revokes.append(Revoke(0, 4, 17))
    revoked = WORDS.hand_result(hand, HandResult((15, 11), frozenset({0}), (0, 1)), names, style, 1)
    assert "You revoked (trick 5) and may not win the hand." in revoked
    assert revoked.splitlines()[-1] == "North wins the hand."


def test_match_result_is_a_final_table() -> None:
    match = Match(BoxWhist(2), MatchLength(hands=2), 0)
    match.results += [HandResult((14, 12), frozenset(), (1, 0)), HandResult((12, 14), frozenset(), (0, 1))]
    output = io.StringIO()
    player = TerminalPlayer(0, WORDS, io.StringIO(), output, color=False, names=("You", "North"))
    player.match_over(match)
    assert output.getvalue().splitlines()[1:] == [
        "Hand      You  North",
        "1           1      0",
        "2           0      1",
        "Hand 1: tricks You 14, North 12; won by you.",
        "Hand 2: tricks You 12, North 14; won by North.",
        "Final points: You 1, North 1; a drawn match.",
    ]
    match.results.append(HandResult((10, 16), frozenset(), (0, 1)))
    player.match_over(match)
    assert output.getvalue().endswith("Final points: You 1, North 2; North wins the match.\n")


# -- the spectator --------------------------------------------------------------------------


def test_watcher_shows_the_deal_every_play_and_each_trick() -> None:
    rng = random.Random(7)
    output = io.StringIO()
    watcher = Watcher(WORDS, output, color=False)
    match = play_match(BoxWhist(2), MatchLength(hands=2), [RandomBot(rng), RandomBot(rng)], rng,
                       on_hand=watcher.hand_over, on_move=watcher.on_move)  # fmt: skip
    watcher.match_over(match)
    out = output.getvalue()
    hands = [h for h in match.hands if isinstance(h, BoxWhistHand)]
    assert out.count("deals; trumps are") == 2
    for hand in hands:  # each seat's starting hand and box
        for seat, name in enumerate(("South", "North")):
            dealt = [hand.cards[p] for p in hand.layout.hands[seat]]
            assert f"{name + ':':<12}{text.cards_by_suit(dealt, Style())}" in out
    assert len(re.findall(r"^  (South|North) leads ", out, re.M)) == 2 * 26
    assert len(re.findall(r"^  (South|North) plays ", out, re.M)) == 2 * 26
    assert len(re.findall(r"^  (South|North) wins", out, re.M)) == 2 * 26
    assert len(re.findall(r"takes (10|[2-9JQKA])[♠♥♦♣], \w+ draws", out)) == 2 * 11
    assert "Trick 26: " not in out  # every trick was shown as it happened, not again at the end
    assert out.count("Hand 2 over") == 1


def _check_winner_line(out: str) -> None:
    tricks = re.search(r"Hand 1 over\. Tricks: South (\d+), North (\d+)", out)
    assert tricks, out[-500:]
    south, north = map(int, tricks.groups())
    expected = "The hand is drawn." if south == north else f"{'South' if south > north else 'North'} wins the hand."
    assert expected in out


# The last: no --bot, the default bot (the search bot), at its quickest level (a whole hand at the
# default level takes it up to a second a move; what is tested is the watching).
@pytest.mark.parametrize("extra", [["--bot", "random"], ["--bot", "random", "--players", "3"], ["--level", "easy"]])
def test_watch_from_the_command_line(extra: list[str]) -> None:
    if "--bot" not in extra:
        pytest.importorskip("p2pwhist.games.boxwhist.heuristic")  # the default bot
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env.pop("NO_COLOR", None)
    args = [sys.executable, "-m", "p2pwhist", "play", "--local", "--watch", "--hands", "1", "--seed", "1", *extra]
    run = subprocess.run(args, capture_output=True, text=True, encoding="utf-8", env=env, cwd=REPO, timeout=60)
    assert run.returncode == 0, run.stderr
    if "--players" in extra:
        assert re.search(r"^(South|West|East) wins the hand\.$|^The hand is drawn\.$", run.stdout, re.M)
    else:
        _check_winner_line(run.stdout)
    assert ANSI not in run.stdout  # not a terminal: no colour


def test_watch_on_an_ascii_terminal() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="ascii")
    args = [sys.executable, "-m", "p2pwhist", "play", "--local", "--watch", "--hands", "1", "--seed", "2",
            "--bot", "random"]
    run = subprocess.run(args, capture_output=True, env=env, cwd=REPO, timeout=60)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    out = run.stdout.decode("ascii")
    _check_winner_line(out)
    assert not any(symbol in out for symbol in SYMBOLS)


# -- asking the person -------------------------------------------------------------------------


def test_another_hand_is_asked_until_answered_and_enter_means_yes() -> None:
    output = io.StringIO()
    player = TerminalPlayer(0, WORDS, io.StringIO("maybe\nN\n\nyes\n"), output, color=False)
    assert player.another_hand() is False
    assert player.another_hand() is True and player.another_hand() is True
    assert output.getvalue().count("Another hand? [Y/n] ") == 4
    with pytest.raises(InputClosed):
        player.another_hand()


def test_a_single_legal_move_is_played_with_enter() -> None:
    for seed in range(50):
        hand, rng = _hand(2, seed), random.Random(seed)
        while not hand.is_over and len(hand.legal_moves()) != 1:
            hand.apply(rng.choice(hand.legal_moves()))
        if not hand.is_over:
            break
    view = hand.view(hand.current_seat)
    output = io.StringIO()
    player = TerminalPlayer(view.seat, WORDS, io.StringIO("\n"), output, color=False)
    assert player.choose(view) == view.legal_moves[0]
    assert f"Your only play is {view.describe_move(view.legal_moves[0])}: press Enter" in output.getvalue()


def test_h_gives_a_hint_and_the_person_then_plays() -> None:
    """``h`` and ``hint`` each answer with the search bot's play and why; the prompt comes back
    and takes a move (here the last legal one, whatever the hint said)."""
    hand = _hand(2, seed=3)
    view = hand.view(hand.current_seat)
    assert len(view.legal_moves) > 1
    move = view.legal_moves[-1]
    output = io.StringIO()
    keys = io.StringIO(f"h\nhint\n{view.describe_move(move)}\n")
    player = TerminalPlayer(view.seat, WORDS, keys, output, color=False, hints=hint_bot(GAMES["boxwhist"]))
    assert player.choose(view) == move
    said = r"^(?:Your play: )?Hint: (\S+) - wins the hand in about \d+% of the deals tried"
    hints = re.findall(said, output.getvalue(), re.MULTILINE)
    assert len(hints) == 2 and all(view.parse_move(named) in view.legal_moves for named in hints), output.getvalue()


def test_enter_after_a_hint_plays_the_hints_move() -> None:
    """As on the full screen, the hint's move is offered: an empty line plays it (before the
    hint an empty line plays nothing, where there is a choice)."""
    hand = _hand(2, seed=3)
    view = hand.view(hand.current_seat)
    assert len(view.legal_moves) > 1
    output = io.StringIO()
    player = TerminalPlayer(view.seat, WORDS, io.StringIO("\nh\n\n"), output, color=False,
                            hints=hint_bot(GAMES["boxwhist"]))
    move = player.choose(view)
    named = re.search(r"Hint: (\S+) - [^P]*\nPress Enter to play it, or type another play\.$", output.getvalue(),
                      re.MULTILINE)
    assert named and view.parse_move(named.group(1)) == move, output.getvalue()
    # Each of its lines fits 80 columns (the hint's ran to about 100, broken mid-word by the terminal)
    assert all(len(line) <= 80 for line in named.group(0).splitlines()), named.group(0)


def test_lines_typed_before_the_prompt_are_not_played() -> None:
    """A terminal's typed-ahead input is discarded when the prompt appears (pty: a real tty)."""
    import pty

    from p2pwhist.ui.terminal import _discard_typed_ahead

    master, slave = pty.openpty()
    with os.fdopen(slave, "r") as infile:
        os.write(master, b"QS\n")  # typed while another seat was to play
        _discard_typed_ahead(infile)
        os.write(master, b"box 2\n")
        assert infile.readline().strip() == "box 2"
    os.close(master)


def test_the_plain_interface_says_whom_it_waits_for_and_follows_each_trick(tmp_path: Path) -> None:
    """A networked ``play --plain`` against a bot, in a real pseudo-terminal: each time the
    other seat is to play the screen says so, and the tricks are shown as they end."""
    import pexpect

    env = dict(os.environ, P2PWHIST_HOME=str(tmp_path), NO_COLOR="1", TERM="xterm")
    child = pexpect.spawn(sys.executable, ["-m", "p2pwhist", "play", "--plain", "--hands", "1", "--bot", "random",
                                           "--name", "ann"],
                          cwd=str(REPO), env=env, encoding="utf-8", timeout=60, dimensions=(40, 120))
    child.logfile_read = screen = io.StringIO()
    try:
        while child.expect(["Your play: ", "Match over"]) == 0:
            child.sendline("?")
            child.expect(r"You may play: (box \d|\S+)")
            move = child.match.group(1).rstrip(";,")
            child.expect("Your play: ")  # asked again, after the list
            child.sendline(move)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    out = screen.getvalue()
    assert child.exitstatus == 0, out[-2000:]
    assert out.count("Waiting for random-1...") >= 10  # 26 tricks: the bot leads or follows in each
    assert "Trick 26: " in out and "Hand 1 over" in out


def test_the_plain_interface_says_whom_it_waits_for_only_while_a_player_chooses(capsys) -> None:
    """A move, another hand of an open match and stopping a settled one are worth a line; the
    messages a seat's program sends at once (keys, shuffles, signatures) are not."""
    from p2pwhist.cli_play import _Display
    from p2pwhist.inprocess import open_table
    from p2pwhist.session_events import Awaiting, Seated, Why

    table = open_table(BoxWhist(2), MatchLength(), random.Random(0))[0].table
    display = _Display(None)
    display.on_event(Seated(table, 0))
    for why in Why:
        display.on_event(Awaiting(1, why))
    assert capsys.readouterr().out.splitlines() == ["Waiting for seat1...",
                                                    "seat1 is asked whether to play another hand...",
                                                    "seat1 is asked whether to stop, the winner being settled..."]


def test_a_long_hint_is_broken_between_words_within_80_columns(monkeypatch) -> None:
    """A hint of Box runs to about 90 columns, which a terminal broke mid-word: it is broken
    between words, its later lines indented, every word kept."""
    from p2pwhist.ui import terminal

    hand = _hand(2, seed=3)
    view = hand.view(hand.current_seat)
    move = view.legal_moves[-1]
    long = "Hint: " + " ".join(f"word{n}" for n in range(30))
    monkeypatch.setattr(terminal, "hint", lambda *args, **kwargs: terminal.Hint(long, move))
    output = io.StringIO()
    player = TerminalPlayer(view.seat, WORDS, io.StringIO("h\n\n"), output, color=False,
                            hints=hint_bot(GAMES["boxwhist"]))
    assert player.choose(view) == move
    said = output.getvalue()
    shown = said[said.index("Hint: "):said.index("Press Enter")].splitlines()
    assert len(shown) > 1 and all(len(line) <= 80 for line in shown), shown
    assert all(line.startswith("  ") for line in shown[1:]) and " ".join(" ".join(shown).split()) == long


def test_the_legal_plays_are_broken_between_words_within_80_columns() -> None:
    """"You may play: 3♣; or from your box: box 1 (A♦), …, box 4 (7♦)" ran past 80 columns,
    which a terminal broke inside "(7♦)": every game's list, as ``?`` says it, is broken
    between words, every word kept."""
    plain, long_lines = Style(color=False, symbols=True), 0
    for name, players in (("boxwhist", 2), ("boxwhist", 4), ("box", 4), ("germanwhist", 2)):
        entry = GAMES[name]
        for view in (view for seed in range(3) for view in turns(entry, players, seed)):
            said = entry.text.legal(view, plain)
            shown = broken(said).splitlines()
            long_lines += any(len(line) > 80 for line in said.splitlines())
            assert all(len(line) <= 80 for line in shown), shown
            assert " ".join(" ".join(shown).split()) == " ".join(said.split())
    assert long_lines  # some list ran past 80 columns, and was broken
