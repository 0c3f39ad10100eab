"""Text for the terminal: pure functions from what a seat may know to the lines it is shown.

Nothing here reads input, writes output or looks at the environment. A ``Style`` says whether
to colour and whether suit symbols can be printed; every function returns a string, without a
final newline.

Secrecy: the player's screens (``table``, ``legal``, and ``trick_result`` reading cards with
``BoxWhistView.card``) are drawn from its view only, which holds no card the seat may not know,
so they cannot show a closed box. Only the spectator's screens (``deal``, ``play``) read the
whole state, and the spectator is used only when every seat is a bot.

Apart from the suit symbols, which ``Style.fit`` turns into letters, every string is ASCII, so
any terminal encoding can print it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from p2pwhist.cards import Card, Suit, sort_for_display
from p2pwhist.games.base import HandResult, Illegal, IllegalMove, Play
from p2pwhist.games.boxwhist import (
    TRICKS_PER_HAND,
    BoxWhistHand,
    BoxWhistView,
    Revoke,
    TrickPlay,
    TrickResult,
)
from p2pwhist.games.match import Match

# ANSI / ECMA-48 "select graphic rendition" codes.
RED = "\x1b[31m"
BOLD = "\x1b[1m"
RESET = "\x1b[0m"

YOU = "You"
# Seats go clockwise, so the seat after yours (the next to play) sits on your left: if you are
# South, that is West, as at a bridge table. The spectator sees seat 0 as South.
_COMPASS = {2: ("South", "North"), 3: ("South", "West", "East"), 4: ("South", "West", "North", "East")}
_LETTERS = str.maketrans({s.symbol: s.letter for s in Suit} | {"♡": "H", "♢": "D", "♧": "C", "♤": "S"})
_LABEL = 12  # width of the labels down the left of the table

# Reads the card at a deck position, None if the reader may not know it (``BoxWhistView.card``).
CardAt = Callable[[int], "Card | None"]

HELP = """\
Type a card to play it: rank then suit, e.g. QS, 10h, Th or q♠ (T or 10 is a ten).
Type box N to play the card in slot N of your box, e.g. box 2.
  ?      list the plays the rules allow you now
  table  show the table again
  help   show this
  quit   leave the game (so does Ctrl-D)"""


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


def says(name: str, verb: str) -> str:
    """``says("West", "wins")`` is "West wins"; ``says("You", "wins")`` is "You win"."""
    return f"{name} {verb.removesuffix('s') if name == YOU else verb}"


def cards_by_suit(cards: Iterable[Card], style: Style) -> str:
    """Sorted for display, with a wider gap between suits."""
    groups = itertools.groupby(sort_for_display(cards), key=lambda card: card.suit)
    return "  ".join(" ".join(style.card(card) for card in group) for _, group in groups) or "none"


def trumps(trump: Suit | None, style: Style) -> str:
    return "no trumps" if trump is None else f"{style.suit(trump)} ({trump.name.lower()})"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _tally(names: Sequence[str], counts: Sequence[int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in zip(names, counts))


def _row(label: str, text: str) -> str:
    return f"{label + ':' if label else '':<{_LABEL}}{text}"


# -- tricks ---------------------------------------------------------------------------------


def trick_plays(plays: Sequence[TrickPlay], names: Sequence[str], style: Style) -> str:
    """"North Q♠, You K♠ (box)": who played what, box cards marked."""
    return ", ".join(
        f"{names[play.seat]} {style.card(play.card)}{' (box)' if play.from_box else ''}" for play in plays
    )


def trick_outcome(trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """"North wins; North takes 7♦, You draw 2♣." The first draw is the exposed card (rule 9)."""

    def drawn(position: int) -> str:
        card = card_at(position)
        return "a card not yet revealed" if card is None else style.card(card)

    text = f"{style.bold(says(names[trick.winner], 'wins'))}"
    if trick.draws:
        first, *rest = trick.draws
        draws = [f"{says(names[first.seat], 'takes')} {drawn(first.position)}"]
        draws += [f"{says(names[draw.seat], 'draws')} {drawn(draw.position)}" for draw in rest]
        text += "; " + ", ".join(draws)
    return text + "."


def trick_result(number: int, trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """A completed trick on two lines: the plays, then the winner and the stack cards taken."""
    plays = trick_plays(trick.plays, names, style)
    return f"Trick {number}: {plays}\n  {trick_outcome(trick, names, style, card_at)}"


# -- the player's screens (from its view only) ----------------------------------------------


def hand_header(dealer: str, trump: Suit | None, style: Style, hand_no: int) -> str:
    """"== Hand 2: North deals; trumps are ♣ (clubs) ==" (the dealer by name)."""
    return style.bold(f"== Hand {hand_no}: {says(dealer, 'deals')}; trumps are {trumps(trump, style)} ==")


def _box(view: BoxWhistView, style: Style) -> str:
    box = view.box
    if not box:
        return "empty"
    if view.may_look[view.seat]:
        return "  ".join(f"box {slot} = {style.card(card)}" for slot, _, card in box if card is not None)
    text = f"closed ({_plural(len(box), 'card')}); you may look once you win a trick"
    if not view.hand:
        text = f"closed ({_plural(len(box), 'card')}); your hand is empty, so you play it blind"
    return text


def table(
    view: BoxWhistView,
    names: Sequence[str],
    style: Style,
    hand_no: int | None = None,
    hands_won: Sequence[int] | None = None,
) -> str:
    """Everything ``view.seat`` may know of the table, as it is asked to play."""
    me, n = view.seat, view.players
    title = f"Trick {len(view.tricks) + 1} of {TRICKS_PER_HAND[n]}"
    lines = [style.bold(f"-- {f'Hand {hand_no}, ' if hand_no else ''}{title} --")]
    lines.append(_row("Trumps", f"{trumps(view.trump, style)}; {says(names[view.dealer], 'deals')}"))
    if view.exposed is None:
        lines.append(_row("Stack", "empty: play out hands and boxes"))
    else:
        lines.append(_row("Stack", f"{style.card(view.exposed)} face up, {_plural(view.stack_size, 'card')}"))
    lines.append(_row("Trick", trick_plays(view.trick, names, style) if view.trick else "nothing played yet"))
    for seat in ((me + k) % n for k in range(1, n)):
        text = f"{_plural(view.hand_sizes[seat], 'card')} in hand, box {view.box_sizes[seat]}"
        text += f" ({'open' if view.may_look[seat] else 'closed'})"
        known = view.known_hand_cards(seat)
        if known:
            text += f"; holds {cards_by_suit(known, style)}"
        lines.append(_row(names[seat], text))
    lines.append(_row("Tricks won", _tally(names, view.tricks_won)))
    if hands_won is not None:
        lines.append(_row("Hands won", _tally(names, hands_won)))
    lines.append(_row("Your hand", cards_by_suit(view.hand.values(), style)))
    lines.append(_row("Your box", _box(view, style)))
    return "\n".join(lines)


def legal(view: BoxWhistView, style: Style) -> str:
    """The plays the rules allow ``view.seat`` now, each written the way it can be typed."""
    moves = view.legal_moves
    if not moves:
        return "It is not your turn."
    hand = view.hand
    box = {position: (slot, card) for slot, position, card in view.box}
    from_hand = [hand[move.position] for move in moves if move.position in hand]
    from_box = [box[move.position] for move in moves if move.position in box]
    parts = []
    if from_hand:
        parts.append(" ".join(style.card(card) for card in sort_for_display(from_hand)))
    if from_box:
        slots = ", ".join(f"box {slot}" + ("" if card is None else f" ({style.card(card)})") for slot, card in from_box)
        blind = " (blind)" if any(card is None for _, card in from_box) else ""
        parts.append(("or from your box: " if from_hand else "") + slots + blind)
    return "You may play: " + "; ".join(parts)


def help_text(view: BoxWhistView, style: Style) -> str:
    return f"{style.fit(HELP)}\n{legal(view, style)}"


def refusal(refused: IllegalMove) -> str:
    """One line for a move the rules refuse."""
    detail = f" ({refused.detail})" if refused.detail and refused.reason is not Illegal.NOT_YOUR_CARD else ""
    return f"Not allowed: {refused.reason.value}{detail}. Type ? to list your plays."


# -- results --------------------------------------------------------------------------------


def hand_result(
    result: HandResult,
    names: Sequence[str],
    style: Style,
    hand_no: int | None = None,
    revokes: Sequence[Revoke] = (),
) -> str:
    """Tricks per seat, the seats that lost by a breach, and who won (or that it is drawn)."""
    head = f"Hand {hand_no} over" if hand_no else "Hand over"
    lines = [style.bold(f"== {head}. Tricks: {_tally(names, result.scores)} ==")]
    for seat in sorted(result.offenders):
        tricks = [str(revoke.trick + 1) for revoke in revokes if revoke.seat == seat]
        breach = f"revoked (trick {', '.join(tricks)})" if tricks else "broke the rules"
        lines.append(f"{names[seat]} {breach} and may not win the hand.")
    if result.winner is None:
        lines.append("The hand is drawn.")
    else:
        lines.append(style.bold(f"{says(names[result.winner], 'wins')} the hand."))
    return "\n".join(lines)


def match_result(match: Match, names: Sequence[str], style: Style) -> str:
    """The final table: each hand's tricks and winner, hands won per seat, the match winner."""
    width = max(len(name) for name in names) + 2
    lines = [style.bold(f"== Match over after {_plural(len(match.results), 'hand')} ==")]
    lines.append("Hand" + "".join(f"{name:>{width}}" for name in names) + "  Winner")
    for number, result in enumerate(match.results, start=1):
        winner = "drawn" if result.winner is None else names[result.winner]
        lines.append(f"{number:<4}" + "".join(f"{score:>{width}}" for score in result.scores) + f"  {winner}")
    lines.append(f"Hands won: {_tally(names, match.hands_won)}")
    if match.winner is None:
        lines.append(style.bold("The match is drawn."))
    else:
        lines.append(style.bold(f"{says(names[match.winner], 'wins')} the match."))
    return "\n".join(lines)


# -- the spectator's screens (from the whole state) -----------------------------------------


def deal(hand: BoxWhistHand, names: Sequence[str], style: Style, hand_no: int) -> str:
    """The hand as dealt: every seat's hand and box (for a spectator of bots only)."""
    layout, cards = hand.layout, hand.cards
    lines = [hand_header(names[hand.dealer], hand.trump, style, hand_no)]
    if layout.stack:
        exposed = style.card(cards[layout.stack[0]])  # type: ignore[arg-type]
        lines.append(_row("Stack", f"{exposed} face up, {_plural(len(layout.stack), 'card')}"))
    for seat in range(hand.players):
        dealt = [cards[position] for position in layout.hands[seat]]
        box = "  ".join(f"{slot}:{style.card(cards[p])}" for slot, p in enumerate(layout.boxes[seat], start=1))
        lines.append(_row(names[seat], cards_by_suit(dealt, style)))  # type: ignore[arg-type]
        lines.append(_row("", f"box {box}"))
    return "\n".join(lines)


def play(hand: BoxWhistHand, seat: int, move: Play, names: Sequence[str], style: Style) -> str:
    """What a spectator sees once ``move`` is applied: the play, and the trick if it completed it."""
    finished = not hand.trick  # the move completed a trick
    plays = hand.tricks[-1].plays if finished else hand.trick
    number = len(hand.tricks) if finished else len(hand.tricks) + 1
    played = plays[-1]
    lines = []
    if len(plays) == 1:
        stake = "" if hand.exposed is None else f", for {style.card(hand.cards[hand.exposed])}"  # type: ignore[index]
        lines.append(f"Trick {number}{stake}:")
    source = ""
    if played.from_box:
        slot = hand.layout.boxes[seat].index(move.position) + 1
        blind = not any(trick.winner == seat for trick in hand.tricks[: number - 1])
        source = f" from box {slot}{' (blind)' if blind else ''}"
    lines.append(f"  {says(names[seat], 'leads' if len(plays) == 1 else 'plays')} {style.card(played.card)}{source}")
    if finished:
        lines.append(f"  {trick_outcome(hand.tricks[-1], names, style, hand.cards.__getitem__)}")
    return "\n".join(lines)
