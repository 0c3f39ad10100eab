"""German Whist in words: its screens, its score-sheet lines and its rules for players.

Secrecy: the player's screens (``table``, ``legal``, ``finished_lines``, ``cells``) read the
seat's ``GermanWhistView`` only, which holds no card the seat may not know, so they cannot show
the card the other seat drew face down; a spectator's table is the same screens read from the
public view (no seat: both seats' counts, no hand of its own). The line spectator's ``deal`` and
``move`` and the record read the whole hand: ``deal`` only when every seat is a bot, ``move`` a
hand that knows only the cards played and turned, and the record only once the audit has
revealed every card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from p2pwhist.cards import Card, Suit, format_cards, sort_for_display
from p2pwhist.games.base import PLAYS, Cell, HandResult, IllegalMove, Play
from p2pwhist.games.germanwhist.engine import (
    PLAYERS,
    STACK,
    TRICKS_PER_HAND,
    GermanWhistHand,
    GermanWhistView,
    Illegal,
    Scoring,
    TrickPlay,
    TrickResult,
    dealt_hand,
)
from p2pwhist.text import (
    YOU,
    Style,
    breach_record,
    cards_by_suit,
    hand_over_lines,
    others,
    plural,
    point_winner,
    refusal_line,
    row,
    says,
    says_within,
    tally,
    tricks_line,
)

# Reads the card at a deck position, None if the reader may not know it (``GermanWhistView.card``).
CardAt = Callable[[int], "Card | None"]

RULES = """\
German Whist: whist for 2 players, in two halves.

The deal. Each player gets 13 cards; the other 26 are the stack, face down, its top card turned
face up. The suit of that first turned card is trumps for the whole hand. The lower cut deals
first (ace low); then the deal alternates.

Play. The non-dealer leads; the winner of a trick leads the next. Follow suit if you can; if
you cannot, play any card. The highest trump wins, or else the highest card of the suit led.
Following suit is on honour: nobody sees your hand, but every card is checked at the end of
the hand, and a revoke loses you the hand.

The first 13 tricks are played for the turned card: the winner takes it into the hand, the
loser takes the next card of the stack without showing it, and the next card is turned. So you
choose: win a good turned card, or lose the trick to a poor one and take a card unseen.

Winning. Once the stack is gone, the last 13 tricks are played out with the cards in hand, and
most of those 13 wins the hand (a variant counts all 26 tricks; equal is then a draw). Most
hands won wins the match."""

TYPING = """\
Type a card to play it: rank then suit, e.g. QS, 10h, Th or q♠ (a ten: T or 10).
  ?      list the plays the rules allow you now"""


def trumps(trump: Suit, style: Style) -> str:
    return f"{style.suit(trump)} ({trump.name.lower()})"


def trick_plays(plays: Sequence[TrickPlay], names: Sequence[str], style: Style) -> str:
    """"North Q♠, You K♠": who played what."""
    return ", ".join(f"{names[play.seat]} {style.card(play.card)}" for play in plays)


def trick_outcome(trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """"North wins and takes 7♦; you draw a card face down." The loser's draw is named only to
    a reader who may see it (rule 7)."""
    text = style.bold(says(names[trick.winner], "wins"))
    if trick.won is None:
        return text + "."
    won, drawn = card_at(trick.won), card_at(trick.drawn)  # type: ignore[arg-type]
    loser = names[1 - trick.winner]
    took = "a card not yet revealed" if won is None else style.card(won)
    draw = "a card face down" if drawn is None else style.card(drawn)
    takes = "take" if names[trick.winner] == YOU else "takes"
    return f"{text} and {takes} {took}; {says_within(loser, 'draws')} {draw}."


def trick_result(number: int, trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """A completed trick on two lines: the plays, then the winner and the stack cards taken."""
    return f"Trick {number}: {trick_plays(trick.plays, names, style)}\n  {trick_outcome(trick, names, style, card_at)}"


def _header(dealer: str, trump: Suit, style: Style, hand_no: int) -> str:
    return style.bold(f"== Hand {hand_no}: {says(dealer, 'deals')}; trumps are {trumps(trump, style)} ==")


def _counting(variant: Scoring) -> str:
    return "tricks of the last 13" if variant is Scoring.LAST13 else "tricks"


class GermanWhistText:
    """``GameText`` for German Whist."""

    title = "German Whist"
    rules = RULES
    typed = "QS, 10h"
    typing = TYPING

    def header(self, view: GermanWhistView, names: Sequence[str], style: Style, hand_no: int) -> str:
        return _header(names[view.dealer], view.trump, style, hand_no)

    def table(self, view: GermanWhistView, names: Sequence[str], style: Style, hand_no: int | None = None,
              points: Sequence[int] | None = None) -> str:
        """Everything ``view.seat`` may know of the table, as it is asked to play; with no
        seat, both seats' counts and what both may see."""
        if view.turn is None:
            title = "the hand is over"
        else:
            title = f"Trick {len(view.tricks) + 1} of {TRICKS_PER_HAND}"
            title += ", for the turned card" if view.turned is not None else ", for a point"
        lines = [style.bold(f"-- {f'Hand {hand_no}, ' if hand_no else ''}{title} --")]
        lines.append(row("Trumps", f"{trumps(view.trump, style)}; {says(names[view.dealer], 'deals')}"))
        if view.turned is None:
            lines.append(row("Stack", "gone: the last tricks count"))
        else:
            lines.append(row("Stack", f"{style.card(view.turned)} turned, {plural(view.stack_size, 'card')}"))
        lines.append(row("Trick", trick_plays(view.trick, names, style) if view.trick else "nothing played yet"))
        for seat in others(view.seat, PLAYERS):
            text = plural(view.hand_sizes[seat], "card") + " in hand"
            known = view.known_hand_cards(seat)
            if known:
                text += f"; holds {cards_by_suit(known, style)}"
            lines.append(row(names[seat], text))
        lines.append(row("Tricks won", tally(names, view.tricks_won)))
        if view.variant is Scoring.LAST13 and view.turned is None:
            lines.append(row("Counting", tally(names, view.scores)))
        if points is not None:
            lines.append(row("Hands won", tally(names, points)))
        if view.seat is not None:
            lines.append(row("Your hand", cards_by_suit(view.hand.values(), style)))
        return "\n".join(lines)

    def legal(self, view: GermanWhistView, style: Style) -> str:
        moves = view.legal_moves
        if not moves:
            return "It is not your turn."
        hand = view.hand
        ordered = sort_for_display(hand[m.position] for m in moves)
        return "You may play: " + " ".join(style.card(c) for c in ordered)

    def refusal(self, refused: IllegalMove) -> str:
        """One line for a move the rules refuse (a position number means nothing to a person)."""
        return refusal_line(refused.reason.value, None if refused.reason is Illegal.NOT_YOUR_CARD else refused.detail)

    def finished(self, view: GermanWhistView) -> int:
        """The tricks up to the first whose turned card, or the face-down card our seat drew, the
        deck has not yet revealed (rule 7: its line will name them; another seat's draw stays
        face down)."""
        def waiting(trick: TrickResult) -> bool:
            if trick.won is None or trick.drawn is None:  # both, once the stack is gone
                return False
            ours = view.seat == 1 - trick.winner  # we lost it, so drew the face-down card
            return view.card(trick.won) is None or (ours and view.card(trick.drawn) is None)
        return next((n for n, trick in enumerate(view.tricks) if waiting(trick)), len(view.tricks))

    def finished_lines(self, view: GermanWhistView, start: int, names: Sequence[str], style: Style) -> list[str]:
        tricks = view.tricks
        return [trick_result(n + 1, tricks[n], names, style, view.card) for n in range(start, len(tricks))]

    def hand_result(self, hand: GermanWhistHand, result: HandResult, names: Sequence[str], style: Style,
                    hand_no: int | None = None) -> str:
        head = f"Hand {hand_no} over" if hand_no else "Hand over"
        lines = [style.bold(f"== {head}. {_counting(hand.variant).capitalize()}: {tally(names, result.scores)} ==")]
        lines += hand_over_lines(names, result.offenders, result.left, hand.revokes, point_winner(result.points), style)
        return "\n".join(lines)

    def result_line(self, result: HandResult, names: Sequence[str]) -> str:
        return tricks_line(names, result.scores, point_winner(result.points))

    def cells(self, view: GermanWhistView) -> list[Cell]:
        """The hand sorted by suit."""
        legal = {move.position for move in view.legal_moves}
        by_card = {card: p for p, card in view.hand.items()}
        return [Cell(PLAYS[by_card[card]], card, str(card), card.ascii, "Hand", by_card[card] in legal)
                for card in sort_for_display(by_card)]

    def notices(self, view: GermanWhistView) -> list[str]:
        """The moment the tricks start to count."""
        if view.turned is None and view.turn is not None and view.variant is Scoring.LAST13:
            return ["The stack is gone: from now on every trick counts."]
        return []

    def deal(self, hand: GermanWhistHand, names: Sequence[str], style: Style, hand_no: int) -> str:
        """The hand as dealt (for a spectator of bots only)."""
        cards = cast(list[Card], hand.cards)  # bots play a local hand, which knows every card
        lines = [_header(names[hand.dealer], hand.trump, style, hand_no)]
        lines.append(row("Stack", f"{style.card(cards[STACK[0]])} turned, {plural(len(STACK), 'card')}"))
        for seat in range(hand.players):
            lines.append(row(names[seat], cards_by_suit((cards[p] for p in dealt_hand(seat, hand.dealer)), style)))
        return "\n".join(lines)

    def move(self, hand: GermanWhistHand, seat: int, move: Play, names: Sequence[str], style: Style) -> str:
        """What a spectator sees once ``move`` is applied: the play, and the trick if it completed it."""
        finished = not hand.trick
        plays = hand.tricks[-1].plays if finished else hand.trick
        number = len(hand.tricks) if finished else len(hand.tricks) + 1
        lines = []
        if len(plays) == 1:
            stake = ""
            if hand.turned is not None:  # face up, but a spectator's hand learns it only once revealed
                card = hand.cards[hand.turned]
                stake = f", for {'a card not yet revealed' if card is None else style.card(card)}"
            lines.append(f"Trick {number}{stake}:")
        verb = "leads" if len(plays) == 1 else "plays"
        lines.append(f"  {says(names[seat], verb)} {style.card(plays[-1].card)}")
        if finished:
            lines.append(f"  {trick_outcome(hand.tricks[-1], names, style, hand.cards.__getitem__)}")
        return "\n".join(lines)

    def record(self, hand: GermanWhistHand, result: HandResult | None, names: Sequence[str]) -> list[str]:
        """The deal, one line per trick (the cards in the order played, the winner, the stack
        cards taken), the result and any breach, like a PBN record."""
        cards = hand.cards
        lines = [f"{name}: {format_cards(sort_for_display(cards[p] for p in dealt_hand(seat, hand.dealer)))}"
                 for seat, name in enumerate(names)]
        lines.append(f"Stack: {format_cards(cards[p] for p in STACK)}")
        for number, trick in enumerate(hand.tricks, start=1):
            plays = ", ".join(f"{names[p.seat]} {p.card}" for p in trick.plays)
            line = f"{number:2}. {plays}; {names[trick.winner]} wins"
            if trick.won is not None:
                loser = names[1 - trick.winner]
                won, drawn = cards[trick.won], cards[trick.drawn]  # type: ignore[index]
                line += f"; takes {format_cards([won])}, {loser} draws {format_cards([drawn])}"
            lines.append(line)
        if result is None:
            return lines
        winner = point_winner(result.points)
        lines.append(f"Result: {_counting(hand.variant)} {tally(names, result.scores)}; "
                     f"{'drawn' if winner is None else f'{names[winner]} wins'}")
        return lines + breach_record(names, result.offenders, result.left, hand.revokes)
