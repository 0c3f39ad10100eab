"""Box Whist in words: its screens, its score-sheet lines, its rules for players, and its entry
in the game registry (``p2pwhist.games.GAMES``).

Secrecy: the player's screens (``table``, ``legal``, ``finished_lines``) read the seat's
``BoxWhistView`` only, which holds no card the seat may not know, so they cannot show a closed
box; a spectator's table is the same screens read from the public view (no seat: every seat's
counts, no hand or box of its own). The line spectator's ``deal`` and ``move`` and the record
read the whole hand: ``deal`` only when every seat is a bot, ``move`` a hand that knows only
the cards played, and the record only once the audit has revealed every card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from p2pwhist.cards import Card, Suit, format_cards, sort_for_display
from p2pwhist.games.base import PLAYS, Cell, HandResult, IllegalMove, Play
from p2pwhist.games.boxwhist.engine import (
    TRICKS_PER_HAND,
    BoxWhistHand,
    BoxWhistView,
    Illegal,
    TrickPlay,
    TrickResult,
)
from p2pwhist.text import (
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

# Reads the card at a deck position, None if the reader may not know it (``BoxWhistView.card``).
CardAt = Callable[[int], "Card | None"]

RULES = """\
Box Whist: whist for 2, 3 or 4 players, each with a hand and a face-down box.

The deal. With 2 players each gets 11 cards and a box of 4; with 3, 8 and a box of 3 (the 2 of
clubs is left out); with 4, 6 and a box of 2. The rest is the stack, face down, its top card
turned face up. The lowest cut deals first (ace low); then the deal passes left.

Trumps. In the first hand the dealer's last card is shown to all and its suit is trumps; after
that trumps follow the sequence hearts, clubs, diamonds, spades.

Play. The player left of the dealer leads; the winner of a trick leads the next. Follow suit
from your hand if you can. If you cannot, play any hand card, or a box card once you may look
at your box. You may look at your box once you have won a trick. A player whose hand is empty
plays from the box, blind if it is still closed. Following suit is on honour: nobody sees your
hand, but every card is checked at the end of the hand, and a revoke loses you the hand.

The stack. While the stack lasts, the trick's winner takes the face-up card and every other
player draws the next card and shows it, so everyone always knows those cards.

Winning. Most tricks wins the hand (equal most: a draw). Most hands won wins the match."""

TYPING = """\
Type a card to play it: rank then suit, e.g. QS, 10h, Th or q♠ (a ten: T or 10).
Type box N to play the card in slot N of your box, e.g. box 2.
  ?      list the plays the rules allow you now"""


def trumps(trump: Suit | None, style: Style) -> str:
    return "no trumps" if trump is None else f"{style.suit(trump)} ({trump.name.lower()})"


def trick_plays(plays: Sequence[TrickPlay], names: Sequence[str], style: Style) -> str:
    """"North Q♠, You K♠ (box)": who played what, box cards marked."""
    return ", ".join(
        f"{names[play.seat]} {style.card(play.card)}{' (box)' if play.from_box else ''}" for play in plays
    )


def trick_outcome(trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """"North wins; North takes 7♦, you draw 2♣." The first draw is the exposed card (rule 9)."""

    def drawn(position: int) -> str:
        card = card_at(position)
        return "a card not yet revealed" if card is None else style.card(card)

    text = f"{style.bold(says(names[trick.winner], 'wins'))}"
    if trick.draws:
        first, *rest = trick.draws
        draws = [f"{says_within(names[first.seat], 'takes')} {drawn(first.position)}"]
        draws += [f"{says_within(names[draw.seat], 'draws')} {drawn(draw.position)}" for draw in rest]
        text += "; " + ", ".join(draws)
    return text + "."


def trick_result(number: int, trick: TrickResult, names: Sequence[str], style: Style, card_at: CardAt) -> str:
    """A completed trick on two lines: the plays, then the winner and the stack cards taken."""
    plays = trick_plays(trick.plays, names, style)
    return f"Trick {number}: {plays}\n  {trick_outcome(trick, names, style, card_at)}"


def _header(dealer: str, trump: Suit | None, style: Style, hand_no: int) -> str:
    return style.bold(f"== Hand {hand_no}: {says(dealer, 'deals')}; trumps are {trumps(trump, style)} ==")


def _box(view: BoxWhistView, seat: int, style: Style) -> str:
    """The box of ``seat``, the view's own."""
    box = view.box
    if not box:
        return "empty"
    if view.may_look[seat]:
        return "  ".join(f"box {slot} = {style.card(card)}" for slot, _, card in box if card is not None)
    text = f"closed ({plural(len(box), 'card')}); you may look once you win a trick"
    if not view.hand:
        text = f"closed ({plural(len(box), 'card')}); your hand is empty, so you play it blind"
    return text


class BoxWhistText:
    """``GameText`` for Box Whist."""

    title = "Box Whist"
    rules = RULES
    typed = "QS, box 2"
    typing = TYPING

    def header(self, view: BoxWhistView, names: Sequence[str], style: Style, hand_no: int) -> str:
        """"== Hand 2: North deals; trumps are ♣ (clubs) ==" (the dealer by name)."""
        return _header(names[view.dealer], view.trump, style, hand_no)

    def table(self, view: BoxWhistView, names: Sequence[str], style: Style, hand_no: int | None = None,
              points: Sequence[int] | None = None) -> str:
        """Everything ``view.seat`` may know of the table, as it is asked to play; with no
        seat, every seat's counts and what all may see."""
        n = view.players
        title = "the hand is over" if view.turn is None else f"Trick {len(view.tricks) + 1} of {TRICKS_PER_HAND[n]}"
        lines = [style.bold(f"-- {f'Hand {hand_no}, ' if hand_no else ''}{title} --")]
        lines.append(row("Trumps", f"{trumps(view.trump, style)}; {says(names[view.dealer], 'deals')}"))
        if view.exposed is None:
            lines.append(row("Stack", "empty: play out hands and boxes"))
        else:
            lines.append(row("Stack", f"{style.card(view.exposed)} face up, {plural(view.stack_size, 'card')}"))
        lines.append(row("Trick", trick_plays(view.trick, names, style) if view.trick else "nothing played yet"))
        for seat in others(view.seat, n):
            text = f"{plural(view.hand_sizes[seat], 'card')} in hand, box {view.box_sizes[seat]}"
            text += f" ({'open' if view.may_look[seat] else 'closed'})"
            known = view.known_hand_cards(seat)
            if known:
                text += f"; holds {cards_by_suit(known, style)}"
            lines.append(row(names[seat], text))
        lines.append(row("Tricks won", tally(names, view.tricks_won)))
        if points is not None:
            lines.append(row("Hands won", tally(names, points)))
        if view.seat is not None:
            lines.append(row("Your hand", cards_by_suit(view.hand.values(), style)))
            lines.append(row("Your box", _box(view, view.seat, style)))
        return "\n".join(lines)

    def legal(self, view: BoxWhistView, style: Style) -> str:
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
            slots = ", ".join(f"box {slot}" + ("" if card is None else f" ({style.card(card)})")
                              for slot, card in from_box)
            blind = " (blind)" if any(card is None for _, card in from_box) else ""
            parts.append(("or from your box: " if from_hand else "") + slots + blind)
        return "You may play: " + "; ".join(parts)

    def refusal(self, refused: IllegalMove) -> str:
        """One line for a move the rules refuse (a position number means nothing to a person)."""
        return refusal_line(refused.reason.value, None if refused.reason is Illegal.NOT_YOUR_CARD else refused.detail)

    def finished(self, view: BoxWhistView) -> int:
        """The tricks up to the first whose stack draws the deck has not yet revealed (every seat
        sees them, rule 9: its line will name them)."""
        return next((n for n, trick in enumerate(view.tricks)
                     if any(view.card(draw.position) is None for draw in trick.draws)), len(view.tricks))

    def finished_lines(self, view: BoxWhistView, start: int, names: Sequence[str], style: Style) -> list[str]:
        tricks = view.tricks
        return [trick_result(number + 1, tricks[number], names, style, view.card)
                for number in range(start, len(tricks))]

    def hand_result(self, hand: BoxWhistHand, result: HandResult, names: Sequence[str], style: Style,
                    hand_no: int | None = None) -> str:
        """Tricks per seat, the seats that lost by a breach, and who won (or that it is drawn)."""
        head = f"Hand {hand_no} over" if hand_no else "Hand over"
        lines = [style.bold(f"== {head}. Tricks: {tally(names, result.scores)} ==")]
        lines += hand_over_lines(names, result.offenders, result.left, hand.revokes, point_winner(result.points), style)
        return "\n".join(lines)

    def result_line(self, result: HandResult, names: Sequence[str]) -> str:
        return tricks_line(names, result.scores, point_winner(result.points))

    def cells(self, view: BoxWhistView) -> list[Cell]:
        """The hand sorted by suit, then the box slot by slot (a closed slot shows no card)."""
        legal = {move.position for move in view.legal_moves}
        by_card = {card: p for p, card in view.hand.items()}
        cells = [Cell(PLAYS[by_card[card]], card, str(card), card.ascii, "Hand", by_card[card] in legal)
                 for card in sort_for_display(by_card)]
        cells += [Cell(PLAYS[p], card, f"box {slot}", f"box {slot}", "Box", p in legal) for slot, p, card in view.box]
        return cells

    def notices(self, view: BoxWhistView) -> list[str]:
        """Your box opening (rule: once you win a trick), and playing it blind."""
        if view.seat is None:  # a spectator: no box
            return []
        notices = []
        if view.box and view.may_look[view.seat]:
            notices.append("Your box is open: you won a trick, so you may look at your box and play from it.")
        elif view.box and not view.hand:
            notices.append("Your hand is empty and your box is still closed: you play your box blind.")
        return notices

    def deal(self, hand: BoxWhistHand, names: Sequence[str], style: Style, hand_no: int) -> str:
        """The hand as dealt: every seat's hand and box (for a spectator of bots only)."""
        layout = hand.layout
        cards = cast(list[Card], hand.cards)  # bots play a local hand, which knows every card
        lines = [_header(names[hand.dealer], hand.trump, style, hand_no)]
        if layout.stack:
            exposed = style.card(cards[layout.stack[0]])
            lines.append(row("Stack", f"{exposed} face up, {plural(len(layout.stack), 'card')}"))
        for seat in range(hand.players):
            dealt = [cards[position] for position in layout.hands[seat]]
            box = "  ".join(f"{slot}:{style.card(cards[p])}" for slot, p in enumerate(layout.boxes[seat], start=1))
            lines.append(row(names[seat], cards_by_suit(dealt, style)))
            lines.append(row("", f"box {box}"))
        return "\n".join(lines)

    def move(self, hand: BoxWhistHand, seat: int, move: Play, names: Sequence[str], style: Style) -> str:
        """What a spectator sees once ``move`` is applied: the play, and the trick if it completed it."""
        finished = not hand.trick  # the move completed a trick
        plays = hand.tricks[-1].plays if finished else hand.trick
        number = len(hand.tricks) if finished else len(hand.tricks) + 1
        played = plays[-1]
        lines = []
        if len(plays) == 1:
            stake = ""
            if hand.exposed is not None:  # public, but a spectator's hand learns it only once revealed
                card = hand.cards[hand.exposed]
                stake = f", for {'a card not yet revealed' if card is None else style.card(card)}"
            lines.append(f"Trick {number}{stake}:")
        source = ""
        if played.from_box:
            slot = hand.layout.boxes[seat].index(move.position) + 1
            blind = not any(trick.winner == seat for trick in hand.tricks[: number - 1])
            source = f" from box {slot}{' (blind)' if blind else ''}"
        verb = "leads" if len(plays) == 1 else "plays"
        lines.append(f"  {says(names[seat], verb)} {style.card(played.card)}{source}")
        if finished:
            lines.append(f"  {trick_outcome(hand.tricks[-1], names, style, hand.cards.__getitem__)}")
        return "\n".join(lines)

    def record(self, hand: BoxWhistHand, result: HandResult | None, names: Sequence[str]) -> list[str]:
        """The deal, one line per trick (the cards in the order played, the winner, the stack
        cards taken), the result and any breach, like a PBN record."""
        cards = hand.cards
        lines = []
        for seat, name in enumerate(names):
            dealt = format_cards(sort_for_display(cards[p] for p in hand.layout.hands[seat]))
            boxed = format_cards(cards[p] for p in hand.layout.boxes[seat])
            lines.append(f"{name}: {dealt} | box {boxed}")
        lines.append(f"Stack: {format_cards(cards[p] for p in hand.layout.stack)}")
        for number, trick in enumerate(hand.tricks, start=1):
            plays = ", ".join(f"{names[p.seat]} {p.card}{' (box)' if p.from_box else ''}" for p in trick.plays)
            line = f"{number:2}. {plays}; {names[trick.winner]} wins"
            if trick.draws:
                line += "; takes " + ", ".join(f"{names[d.seat]} {format_cards([cards[d.position]])}"
                                               for d in trick.draws)
            lines.append(line)
        if result is None:  # cut short, with no result: the record so far
            return lines
        winner = point_winner(result.points)
        lines.append(f"Result: {tally(names, result.scores)}; {'drawn' if winner is None else f'{names[winner]} wins'}")
        return lines + breach_record(names, result.offenders, result.left, hand.revokes)

