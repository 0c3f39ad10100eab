"""Words for people, shared by every game: styles, seat names, tallies and the match's result.

Pure functions from values to strings (no I/O, no environment). A game's own screens are in
its text module (``GameText``, registered with the game in ``p2pwhist.games``); what reads the
same in every game is here, once. Apart from suit symbols, which ``Style.fit`` turns into
letters, every string is ASCII, so any terminal encoding can print it.
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from p2pwhist.cards import Card, Suit, sort_for_display

# ANSI / ECMA-48 "select graphic rendition" codes.
RED = "\x1b[31m"
BOLD = "\x1b[1m"
RESET = "\x1b[0m"

YOU = "You"
# Seats go clockwise, so the seat after yours (the next to play) sits on your left: if you are
# South, that is West, as at a bridge table. The spectator sees seat 0 as South.
_COMPASS = {
    2: ("South", "North"),
    3: ("South", "West", "East"),
    4: ("South", "West", "North", "East"),
    5: ("South", "West", "Northwest", "Northeast", "East"),
    6: ("South", "Southwest", "Northwest", "North", "Northeast", "Southeast"),
}
_LETTERS = str.maketrans({s.symbol: s.letter for s in Suit} | {"♡": "H", "♢": "D", "♧": "C", "♤": "S"})
LABEL = 12  # width of the labels down the left of a table


@dataclass(frozen=True, slots=True)
class Style:
    """How to draw: ANSI colour or not, suit symbols (♠) or letters (S)."""

    color: bool = False
    symbols: bool = True

    def suit(self, suit: Suit) -> str:
        return self._ink(suit.symbol if self.symbols else suit.letter, suit.is_red)

    def card(self, card: Card) -> str:
        return self._ink(str(card) if self.symbols else card.ascii, card.suit.is_red)

    def bold(self, text: str) -> str:
        return f"{BOLD}{text}{RESET}" if self.color else text

    def fit(self, text: str) -> str:
        """Text from elsewhere (an engine's message) made printable in this style."""
        return text if self.symbols else text.translate(_LETTERS)

    def _ink(self, text: str, red: bool) -> str:
        return f"{RED}{text}{RESET}" if self.color and red else text


def seat_names(players: int, me: int | None = None) -> tuple[str, ...]:
    """Compass names seen from ``me`` (who is "You"), or from seat 0 for a spectator."""
    compass = _COMPASS[players]
    base = 0 if me is None else me
    names = [compass[(seat - base) % players] for seat in range(players)]
    if me is not None:
        names[me] = YOU
    return tuple(names)


def others(seat: int | None, players: int) -> list[int]:
    """The seats a table lists besides the reader's, from its left; every seat, from the
    first, for a reader with no seat (a spectator, whose table holds no hand of its own)."""
    if seat is None:
        return list(range(players))
    return [(seat + k) % players for k in range(1, players)]


def says(name: str, verb: str) -> str:
    """``says("West", "wins")`` is "West wins"; ``says("You", "wins")`` is "You win"."""
    return f"{name} {verb.removesuffix('s') if name == YOU else verb}"


def mentioned(name: str) -> str:
    """A name within a sentence, after its start: "you" for "You"."""
    return "you" if name == YOU else name


def says_within(name: str, verb: str) -> str:
    """``says`` within a sentence, after its start: "you lose", "West loses"."""
    return f"{mentioned(name)} {says(name, verb).removeprefix(name + ' ')}"


def clock(seconds: float) -> str:
    """m:ss"""
    whole = max(0, int(seconds + 0.5))
    return f"{whole // 60}:{whole % 60:02d}"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def listed(words: Sequence[str]) -> str:
    """"alice", "alice and carol", "alice, carol and dave"."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def tally(names: Sequence[str], counts: Sequence[int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in zip(names, counts))


class Breach(Protocol):
    """A rule on honour broken in a trick-taking hand (a revoke): who, and in which trick.
    Read-only, so that the games' frozen records (``Revoke``) are breaches."""

    @property
    def seat(self) -> int: ...

    @property
    def trick(self) -> int: ...


def point_winner(points: Sequence[int]) -> int | None:
    """The seat a trick-taking hand gave its one point to, or None: the hand was drawn."""
    return next((seat for seat, point in enumerate(points) if point), None)


def refusal_line(reason: str, detail: str | None, moves: str = "plays") -> str:
    """One line for a move the rules refuse; ``detail`` only where it helps a person."""
    return f"Not allowed: {reason}{f' ({detail})' if detail else ''}. Type ? to list your {moves}."


def hand_over_lines(names: Sequence[str], offenders: Iterable[int], left: Iterable[int], revokes: Sequence[Breach],
                    winner: int | None, style: Style) -> list[str]:
    """After a trick-taking hand's scores: the seats that lost it by a breach, those that lost
    it by leaving the match, then who won."""
    offenders = set(offenders)
    lines = []
    for seat in sorted(offenders):
        tricks = [str(revoke.trick + 1) for revoke in revokes if revoke.seat == seat]
        breach = f"revoked (trick {', '.join(tricks)})" if tricks else "broke the rules"
        lines.append(f"{names[seat]} {breach} and may not win the hand.")
    lines += [left_line(names[seat]) for seat in sorted(set(left) - offenders)]
    lines.append("The hand is drawn." if winner is None else style.bold(f"{says(names[winner], 'wins')} the hand."))
    return lines


def left_line(name: str) -> str:
    """The hand-end line for a seat that lost the hand by leaving the match (a forfeit for
    absence or slowness, or its own ABORT): it may not win, but it broke no rule."""
    return f"{name} left the match and may not win the hand (a forfeit, not a breach of the rules)."


def tricks_line(names: Sequence[str], scores: Sequence[int], winner: int | None) -> str:
    """A trick-taking hand's result in one line: "tricks alice 7, bob 6; won by alice"."""
    return f"tricks {tally(names, scores)}; {'drawn' if winner is None else f'won by {mentioned(names[winner])}'}"


def breach_record(names: Sequence[str], offenders: Iterable[int], left: Iterable[int],
                  revokes: Sequence[Breach]) -> list[str]:
    """A trick-taking hand record's last lines: each revoke, then ``forfeit_record``."""
    lines = [f"Revoke: {names[revoke.seat]} did not follow suit in trick {revoke.trick + 1}" for revoke in revokes]
    return lines + forfeit_record(names, set(offenders) - {revoke.seat for revoke in revokes}, left)


def forfeit_record(names: Sequence[str], caught: Iterable[int], left: Iterable[int]) -> list[str]:
    """A hand record's lines for the seats that lost it other than by a breach of the game's
    rules: ``caught`` breaking the deck protocol (a proven breach), or having ``left`` the match
    (a forfeit for absence, slowness or leaving, which proves no breach: session.md §7.3)."""
    caught = set(caught)
    lines = [f"Breach: {names[seat]} was caught breaking the deck protocol" for seat in sorted(caught)]
    lines += [f"Forfeit: {names[seat]} left the match, which loses the hand but proves no breach"
              for seat in sorted(set(left) - caught)]
    return lines


def row(label: str, text: str) -> str:
    """One line of a table: a label in a fixed-width column, then the text."""
    return f"{label + ':' if label else '':<{LABEL - 1}} {text}"  # a space even after a long name


def cards_by_suit(cards: Iterable[Card], style: Style) -> str:
    """Sorted for display, with a wider gap between suits."""
    groups = itertools.groupby(sort_for_display(cards), key=lambda card: card.suit)
    return "  ".join(" ".join(style.card(card) for card in group) for _, group in groups) or "none"


def match_line(names: Sequence[str], points: Sequence[int], winner: int | None, left: int | None = None) -> str:
    """The match's result in one line: "Final points: alice 2, bob 1; alice wins the match", or with
    ``left`` the seat that left it: "...; bob left and forfeits, so alice wins the match". The
    leaver never shares a result, so a match it left is never drawn: where the others share
    the most, "...; bob left and forfeits, so nobody wins: alice and carol share the most"
    (session.md §7.3)."""
    if winner is not None:
        verdict = f"{says_within(names[winner], 'wins')} the match"
    elif left is None:
        verdict = "a drawn match"
    else:
        remaining = [seat for seat in range(len(points)) if seat != left]
        most = max(points[seat] for seat in remaining)
        verdict = f"nobody wins: {listed([names[seat] for seat in remaining if points[seat] == most])} share the most"
    if left is not None:
        verdict = f"{names[left]} left and forfeits, so {verdict}"
    # "Final": a hand's popup already shows the points so far as "Points:".
    return f"Final points: {tally(names, points)}; {verdict}"


def match_table(names: Sequence[str], per_hand: Sequence[Sequence[int]], points: Sequence[int],
                winner: int | None, first_column: str = "Hand", left: int | None = None) -> list[str]:
    """Points per seat for each hand, then the match's result line (``match_line``)."""
    width = max(len(name) for name in names) + 2
    lines = [f"{first_column:<6}" + "".join(f"{name:>{width}}" for name in names)]
    for number, hand in enumerate(per_hand, start=1):
        lines.append(f"{number:<6}" + "".join(f"{p:>{width}}" for p in hand))
    lines.append(match_line(names, points, winner, left) + ".")
    return lines


class Lost(Protocol):
    """A hand's result as far as the match summary reads it (``HandResult``): the seats that
    lost it by a proven breach, and those that lost it by leaving the match."""

    @property
    def offenders(self) -> frozenset[int]: ...

    @property
    def left(self) -> frozenset[int]: ...


HandOutcome = TypeVar("HandOutcome", bound=Lost)


def hand_line(number: int, result: HandOutcome, names: Sequence[str],
              result_line: Callable[[HandOutcome, Sequence[str]], str]) -> str:
    """One hand's result in its game's words (``result_line``: who won, and the scores that say
    by how much), then any seat that lost it by a proven breach, or by leaving the match, which
    is no breach (session.md §7.3); without a full stop, for the caller to go on."""
    line = f"Hand {number}: {result_line(result, names)}"
    caught = [mentioned(names[seat]) for seat in sorted(result.offenders)]
    gone = [mentioned(names[seat]) for seat in sorted(result.left - result.offenders)]
    if caught:
        line += f"; {listed(caught)} lost it by a proven breach of the rules"
    if gone:
        line += f"; {listed(gone)} left the match and lost it (a forfeit, not a breach)"
    return line


def match_summary(names: Sequence[str], results: Sequence[HandOutcome],
                  result_line: Callable[[HandOutcome, Sequence[str]], str]) -> list[str]:
    """The match hand by hand, for its end: each hand's ``hand_line``."""
    return [hand_line(number, result, names, result_line) + "." for number, result in enumerate(results, start=1)]


def check_line(transcript: Path) -> str:
    """The last line after a match: how to check its transcript, as a command to copy."""
    return f"Check it with: p2pwhist verify {shlex.quote(str(transcript))}"
