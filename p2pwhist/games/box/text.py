"""Box in words: its screens, its score-sheet lines, its rules for players, and its entry in the
game registry (``p2pwhist.games.registry.GAMES``).

Secrecy: the player's screens (``header``, ``table``, ``legal``, ``help``, ``finished_lines``)
read the seat's ``BoxView`` only, which holds no card the seat may not know, so they cannot show
a closed box card, the pile or another's hand; of the cards drawn after a round they name only
the seat's own. ``hand_result`` and ``result_line`` name no card that was not face up. A
spectator's table is the same screens read from the public view (no seat: every seat's counts,
no hand or box of its own, nobody's draws named). The line spectator's ``deal`` and ``move``
and the record read the whole hand: ``deal`` only when every seat is a bot, ``move`` a hand
that knows only the face-up cards, and the record only once the audit has revealed every card.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from p2pwhist.cards import Card, Rank, format_cards
from p2pwhist.games.base import PLAYS, Cell, HandResult, IllegalMove, Play
from p2pwhist.games.box.engine import (
    BOX_SIZE,
    BoxHand,
    BoxIllegal,
    BoxView,
    Draw,
    Lay,
    Phase,
    Restock,
    RoundRecord,
    Variant,
)
from p2pwhist.text import (
    LABEL,
    YOU,
    Style,
    forfeit_record,
    left_line,
    mentioned,
    others,
    plural,
    refusal_line,
    row,
    says,
    says_within,
    tally,
)

WIDTH = 80  # the terminal the screens are laid out for
_BREAK = re.compile(r"(?<=[,.;:]) ")  # where a long line may break

# Reads the card at a deck position, None if the reader may not know it (``BoxView.card``).
CardAt = Callable[[int], "Card | None"]

RULES = """\
Box, Richard Bradley's game, for 2 to 6 players. The aim: never run out of box
cards.

Cards. Only ranks count, ace high and 2 low; suits do not matter. A card of
equal rank counts as lower.

The deal. Each player gets 8 cards: the first 4 go face down into the player's
box, unseen by anyone, the owner included; the other 4 are the hand. The rest
of the pack is the pile, face down. The lowest cut deals first (ace low); then
the deal passes left.

A round. The player left of the dealer opens the first round by laying the
highest card of the hand. Going left, each player lays a hand card equal to or
lower than the last card laid. A player with no such card, or no hand cards,
takes a card from the box without looking and turns it face up: if it is equal
or lower it counts as laid and play goes on; if it is higher, the round ends. A
player whose hand is empty opens from the box.

After a round its cards are set aside. Starting with the round's opener,
everyone draws from the pile back up to 4 cards in hand: only you see what you
draw, everyone sees how many. The player who turned the too-high card opens the
next round. When the pile is gone, play on with what you hold.

The end. The game ends the moment a player's box is empty: that player loses,
and every other player scores a point.

Honour. Nobody sees your hand, so two rules are on honour: open with your
highest card, and lay a card when you can rather than take from the box. Every
card is checked at the end of the game, and a player who broke either rule
loses it.

Pagat's rules (variant pagat). A too-high box card goes to the extra pile of
the player who laid the card before it. A player whose box card stands and who
holds extra cards puts one of them into the gap in the box; everyone saw it
face up, so everyone knows where it is. A player whose box is empty is out; the
others play on, and the last player with box cards wins the game's only point."""

TYPING = """\
Type a hand card to lay it: rank then suit, e.g. QS, 10h or q♠ (a ten: T or 10).
Type box N to take the card in slot N of your box, unseen: e.g. box 2.
Pagat's rules: type an extra card, e.g. 9c, to put it into your box when asked.
  ?      list the moves the rules allow you now"""

# Rule 9: the breaches on honour, as the end of the game reports them.
BREACHES = {
    BoxIllegal.LEAD_HIGHEST: "did not lead the highest card",
    BoxIllegal.MUST_LAY: "took from the box while holding a card to lay",
}


def by_rank(cards: Iterable[Card]) -> list[Card]:
    """High to low: suits do not matter in Box (spades first among equal ranks, for a fixed order)."""
    return sorted(cards, key=lambda card: (1, 0, 0) if card is None else (0, -card.rank, -card.suit))


def _cards(cards: Iterable[Card], style: Style) -> str:
    return " ".join(style.card(card) for card in by_rank(cards)) or "none"


def _wrap(text: str, indent: str) -> str:
    """A line too long for the terminal, broken after a comma, colon or full stop (so that a
    name stays with its card or count), its continuation indented."""
    lines, line = [], ""
    for chunk in _BREAK.split(text):
        if line and len(line) + 1 + len(chunk) > WIDTH:
            lines.append(line)
            line = indent + chunk.lstrip()
        else:
            line = f"{line} {chunk}" if line else chunk
    return "\n".join(lines + [line])


def _row(label: str, text: str) -> str:
    return _wrap(row(label, text), " " * LABEL)


def _verb(name: str, verb: str) -> str:
    """``verb`` as ``name`` does it: "puts", or "put" for "You"."""
    return says(name, verb)[len(name) + 1:]


def _possessive(name: str) -> str:
    return "your" if name == YOU else f"{name}'s"


def _lays(lays: Sequence[Lay], names: Sequence[str], style: Style, restocks: Sequence[Restock] = ()) -> str:
    """"West K♠, North 10♦ (box), East 5♣ (box; puts 9♥ into box 3)": who laid what, box cards
    marked, each with the extra card its player put back (pagat rule 7)."""
    after = _restocked(lays, restocks)
    parts = []
    for lay in lays:
        text = f"{names[lay.seat]} {style.card(lay.card)}"
        if lay.from_box:
            restock = after.get(lay.position)
            put = "" if restock is None else \
                f"; {_verb(names[lay.seat], 'puts')} {style.card(restock.card)} into box {restock.slot}"
            text += f" (box{put})"
        parts.append(text)
    return ", ".join(parts)


def _restocked(lays: Sequence[Lay], restocks: Sequence[Restock]) -> dict[int, Restock]:
    """The restock that followed each box card laid, by the box card's position.

    A round's restocks are recorded apart from its lays, but they pair up exactly: extra cards
    come only at the end of a round, so within a round a seat restocks after each of its box
    cards that stand until its extra pile is empty, and never after that."""
    pending = {seat: [r for r in restocks if r.seat == seat] for seat in {r.seat for r in restocks}}
    after = {}
    for lay in lays:
        queue = pending.get(lay.seat)
        if lay.from_box and queue:
            after[lay.position] = queue.pop(0)
    return after


def _emptied(rounds: Sequence[RoundRecord], number: int, players: int) -> list[int]:
    """The seats whose box round ``number`` (from 1) emptied (public: box takes and restocks are)."""
    left = [BOX_SIZE] * players
    before = left
    for record in rounds[:number]:
        before = list(left)
        for lay in (*record.lays, *filter(None, [record.too_high])):
            left[lay.seat] -= lay.from_box
        for restock in record.restocks:
            left[restock.seat] += 1
    return [seat for seat in range(players) if before[seat] and not left[seat]]


@dataclass(frozen=True)
class _Teller:
    """How finished rounds are told: to whom (the names, and whose draws may be named: ``shown``,
    and only if ``card_at`` knows the cards) and in what style."""

    names: Sequence[str]
    style: Style
    variant: Variant
    card_at: CardAt
    shown: Callable[[Draw], bool]

    def round(self, rounds: Sequence[RoundRecord], number: int, over: bool, next_opener: int | None) -> str:
        """Round ``number`` (from 1): the cards laid, the too-high card and who turned it; then
        what followed."""
        record, names, style = rounds[number - 1], self.names, self.style
        laid = _lays(record.lays, names, style, record.restocks)
        if record.too_high is not None:
            laid += f", {names[record.too_high.seat]} {style.card(record.too_high.card)} (box) too high"
        head = _wrap(f"Round {number}: {laid}.", "  ")
        return f"{head}\n{_wrap('  ' + self.outcome(rounds, number, over, next_opener), '  ')}"

    def outcome(self, rounds: Sequence[RoundRecord], number: int, over: bool, next_opener: int | None) -> str:
        """What followed round ``number``: the too-high card's fate (pagat), boxes emptied, the
        draws and the next opener, or the end of the game."""
        record, names = rounds[number - 1], self.names
        parts = []
        if record.extra_to is not None and record.too_high is not None:
            card = self.style.card(record.too_high.card)
            parts.append(f"{card} goes to {_possessive(names[record.extra_to])} extra pile.")
        for seat in _emptied(rounds, number, len(names)):
            box = f"{_possessive(names[seat]).capitalize()} box is empty"
            if self.variant is Variant.SEED:
                parts.append(f"{box}, so {says_within(names[seat], 'loses')} the game.")
            else:
                parts.append(f"{box}: {says_within(names[seat], 'drops')} out.")
        if over and number == len(rounds):
            parts.append("The game is over.")
        elif record.too_high is not None:
            parts.append(self.draws(record.draws))
        if next_opener is not None:
            parts.append(f"{says(names[next_opener], 'opens')} round {number + 1}.")
        return " ".join(parts)

    def draws(self, draws: Sequence[Draw]) -> str:
        """"Draws: You 2 (8♠ 7♦), West 1." Cards only for the draws ``shown`` allows."""
        if not draws:
            return "The pile is empty: nobody draws."
        parts = []
        for draw in draws:
            part = f"{self.names[draw.seat]} {draw.count}"
            cards = [card for p in draw.positions if (card := self.card_at(p)) is not None]
            if self.shown(draw) and len(cards) == draw.count:
                part += f" ({' '.join(self.style.card(card) for card in cards)})"
            parts.append(part)
        return f"Draws: {', '.join(parts)}."


def _header(dealer: str, opener: str, variant: Variant, style: Style, hand_no: int) -> str:
    aim = "an empty box loses" if variant is Variant.SEED else "the last box left wins"
    return style.bold(_wrap(f"== Hand {hand_no}: {says(dealer, 'deals')}, {says(opener, 'opens')}; {aim} ==", "   "))


def _own_box(view: BoxView, seat: int, style: Style) -> str:
    """"3 closed cards (box 1, box 3, box 4)", any card put back (pagat: known to all), and the
    extra pile (pagat): those of ``seat``, the view's own."""
    closed = [f"box {slot}" for slot, _, card in view.box if card is None]
    parts = [f"{plural(len(closed), 'closed card')} ({', '.join(closed)})"] if closed else []
    parts += [f"box {slot} = {style.card(card)}" for slot, _, card in view.box if card is not None]
    if not parts:
        parts.append("empty: you are out" if seat in view.out else "empty")
    if view.extras[seat]:
        parts.append(f"extra pile {_cards(view.extra_cards(seat), style)}")
    return "; ".join(parts)


def _other(view: BoxView, seat: int, style: Style) -> str:
    """What ``view.seat`` knows of another seat: counts, any box card put back, the extra pile."""
    if seat in view.out:
        return "out: no box cards left"
    text = f"{plural(view.hand_sizes[seat], 'card')} in hand, {plural(view.box_sizes[seat], 'box card')}"
    known = [f"box {slot} = {style.card(view.known[p])}"
             for slot, p in enumerate(view.slots[seat], start=1) if p is not None and p in view.known]
    if known:
        text += f" ({', '.join(known)})"
    if view.extras[seat]:
        text += f", extra pile {_cards(view.extra_cards(seat), style)}"
    return text


def _taken_slot(hand: BoxHand) -> int:
    """The box slot (from 1) of the box card the last move took."""
    assert hand.gap is not None
    return hand.gap + 1


def _verdict(result: HandResult, names: Sequence[str]) -> str:
    """Who the points went to, from the points alone: "won by North", "lost by West"."""
    scorers = [seat for seat, point in enumerate(result.points) if point]
    if not scorers:
        return "nobody scores"
    if len(scorers) == 1:
        return f"won by {mentioned(names[scorers[0]])}"
    return "lost by " + ", ".join(mentioned(names[seat]) for seat, point in enumerate(result.points) if not point)


class BoxText:
    """``GameText`` for Box."""

    title = "Box"
    rules = RULES
    typed = "QS, box 2"
    typing = TYPING

    def header(self, view: BoxView, names: Sequence[str], style: Style, hand_no: int) -> str:
        """"== Hand 2: North deals, East opens; an empty box loses ==" (the variant's aim)."""
        opener = (view.dealer + 1) % view.players
        return _header(names[view.dealer], names[opener], view.variant, style, hand_no)

    def table(self, view: BoxView, names: Sequence[str], style: Style, hand_no: int | None = None,
              points: Sequence[int] | None = None) -> str:
        """Everything ``view.seat`` may know of the table, as it is asked to move; with no
        seat, every seat's counts and what all may see."""
        me = view.seat
        over = view.phase is Phase.OVER
        title = "the game is over" if over else f"Round {len(view.rounds) + 1}"
        lines = [style.bold(f"-- {f'Hand {hand_no}, ' if hand_no else ''}{title} --")]
        to_beat = view.to_beat
        if not over:
            if to_beat is None:
                opens = "you open: lay your highest card" if view.turn == me else \
                    f"{says(names[view.opener], 'opens')} with the highest card of the hand"
                lines.append(_row("To follow", opens))
            else:
                laid_by = mentioned(names[view.round[-1].seat])
                rank = f"{'an' if to_beat.rank in (Rank.ACE, Rank.EIGHT) else 'a'} {to_beat.rank.label}"
                lines.append(_row("To follow", f"{style.card(to_beat)} (laid by {laid_by}): "
                                               f"lay {rank} or lower, else take a box card"))
            lines.append(_row("Laid", _lays(view.round, names, style) if view.round else "nothing yet this round"))
        for seat in others(me, view.players):
            lines.append(_row(names[seat], _other(view, seat, style)))
        lines.append(_row("Pile", plural(view.pile_size, "card") if view.pile_size else "empty: nobody draws"))
        if view.turn is not None:
            doing = says(names[view.turn], "puts") + " an extra card into the box"
            lines.append(_row("Turn", doing if view.phase is Phase.RESTOCK else names[view.turn]))
        if points is not None:
            lines.append(_row("Points", tally(names, points)))
        if me is not None:
            hand = view.hand.values()
            lines.append(_row("Your hand", _cards(hand, style) if hand else "empty: you take from your box"))
            lines.append(_row("Your box", _own_box(view, me, style)))
        return "\n".join(lines)

    def legal(self, view: BoxView, style: Style) -> str:
        """The moves the rules allow ``view.seat`` now, each written the way it can be typed."""
        moves = view.legal_moves
        if not moves:
            return "It is not your turn."
        positions = {move.position for move in moves}
        if view.phase is Phase.RESTOCK:
            cards = [view.known[p] for p in view.own_extras if p in positions]
            return _wrap(f"Put one of your extra cards into your box: {_cards(cards, style)}", "  ")
        hand = view.hand
        layable = [card for p, card in hand.items() if p in positions]
        if layable:
            opener = " (you open with your highest card)" if view.to_beat is None else ""
            return _wrap(f"You may lay: {_cards(layable, style)}{opener}", "  ")
        slots = ", ".join(f"box {slot}" + ("" if card is None else f" ({style.card(card)})")
                          for slot, p, card in view.box if p in positions)
        why = "Your hand is empty" if not hand else "You have nothing to lay"
        return _wrap(f"{why}: take a box card: {slots}", "  ")

    def refusal(self, refused: IllegalMove) -> str:
        """One line for a move the rules refuse (a position number means nothing to a person)."""
        return refusal_line(refused.reason.value, refused.detail if refused.reason is BoxIllegal.TOO_HIGH else None,
                            "moves")

    def finished(self, view: BoxView) -> int:
        """The rounds up to the first after which our seat drew cards the deck has not yet
        revealed to it (its line will name them, ``_Teller.draws``)."""
        return next((n for n, record in enumerate(view.rounds)
                     if any(draw.seat == view.seat and any(view.card(p) is None for p in draw.positions)
                            for draw in record.draws)), len(view.rounds))

    def finished_lines(self, view: BoxView, start: int, names: Sequence[str], style: Style) -> list[str]:
        """Each round finished since ``start``, in two lines; the seat's own draws by name."""
        rounds = view.rounds
        over = view.phase is Phase.OVER
        teller = _Teller(names, style, view.variant, view.card, lambda draw: draw.seat == view.seat)
        lines = []
        for number in range(start + 1, len(rounds) + 1):
            following = rounds[number].opener if number < len(rounds) else None if over else view.opener
            lines.append(teller.round(rounds, number, over, following))
        return lines

    def hand_result(self, hand: BoxHand, result: HandResult, names: Sequence[str], style: Style,
                    hand_no: int | None = None) -> str:
        """Box cards left, who ran out (seed) or lasted (pagat), the breaches and the points."""
        head = f"Hand {hand_no} over" if hand_no else "Hand over"
        lines = [style.bold(f"== {head} =="), _wrap(f"Box cards left: {tally(names, result.scores)}.", "  ")]
        if hand.variant is Variant.SEED:
            if hand.loser is not None:
                lines.append(f"{says(names[hand.loser], 'runs')} out of box cards.")
        else:
            if hand.out:
                lines.append(f"Out, in order: {', '.join(names[seat] for seat in hand.out)}.")
            if hand.winner is not None and hand.winner in result.losers:
                lines.append(f"{says(names[hand.winner], 'keeps')} box cards longest.")
        for seat in sorted(result.offenders):
            breaches = [f"{BREACHES.get(v.rule, v.rule.value)} (round {v.round + 1})"
                        for v in hand.violations if v.seat == seat]
            lines.append(f"{names[seat]} broke the rules{': ' + '; '.join(breaches) if breaches else ''}, "
                         f"and so {says_within(names[seat], 'loses')}.")
        lines += [left_line(names[seat]) for seat in sorted(result.left - result.offenders)]
        scorers = [names[seat] for seat, point in enumerate(result.points) if point]
        if not scorers:
            lines.append("Nobody scores.")
        elif hand.variant is Variant.PAGAT:
            scorer = scorers[0]
            if hand.winner is not None and names[hand.winner] == scorer:
                lines.append(style.bold(f"{says(scorer, 'keeps')} box cards longest and "
                                        f"{_verb(scorer, 'wins')} the point."))
            else:
                lines.append(style.bold(f"{says(scorer, 'wins')} the point."))
        else:
            lines.append(style.bold(f"A point each: {', '.join(scorers)}."))
        return "\n".join(lines)

    def result_line(self, result: HandResult, names: Sequence[str]) -> str:
        return f"box cards left {tally(names, result.scores)}; {_verdict(result, names)}"

    def cells(self, view: BoxView) -> list[Cell]:
        """The hand high to low, the box slot by slot (a closed slot shows no card), and the
        extra pile (pagat), whose cards are put into the box when asked."""
        legal = {move.position for move in view.legal_moves}
        by_card = {card: p for p, card in view.hand.items()}
        cells = [Cell(PLAYS[by_card[card]], card, str(card), card.ascii, "Hand", by_card[card] in legal)
                 for card in by_rank(by_card)]
        cells += [Cell(PLAYS[p], card, f"box {slot}", f"box {slot}", "Box", p in legal) for slot, p, card in view.box]
        extras = {view.known[p]: p for p in view.own_extras}
        cells += [Cell(PLAYS[extras[card]], card, str(card), card.ascii, "Extra pile", extras[card] in legal)
                  for card in by_rank(extras)]
        return cells

    def notices(self, view: BoxView) -> list[str]:
        """Taking from the box because the hand is empty; being out (pagat)."""
        if view.seat in view.out:
            return ["Your box is empty: you are out of the game."]
        if not view.hand and view.phase is not Phase.OVER and view.box:
            return ["Your hand is empty: you take from your box."]
        return []

    def deal(self, hand: BoxHand, names: Sequence[str], style: Style, hand_no: int) -> str:
        """The game as dealt: every seat's hand and box, slot by slot (for a spectator of bots only)."""
        cards, layout = hand.cards, hand.layout
        opener = (hand.dealer + 1) % hand.players
        lines = [_header(names[hand.dealer], names[opener], hand.variant, style, hand_no)]
        for seat in range(hand.players):
            dealt = _cards((cards[p] for p in layout.hands[seat]), style)  # type: ignore[misc]
            box = " ".join(f"{slot}:{style.card(cards[p])}"  # type: ignore[arg-type]
                           for slot, p in enumerate(layout.boxes[seat], start=1))
            lines.append(_row(names[seat], f"hand {dealt} | box {box}"))
        lines.append(_row("Pile", plural(len(layout.pile), "card")))
        return "\n".join(lines)

    def move(self, hand: BoxHand, seat: int, move: Play, names: Sequence[str], style: Style) -> str:
        """What a spectator sees once ``move`` is applied: the move, and the round if it ended it."""
        position = move.position
        name = names[seat]
        if hand.restocks and hand.restocks[-1].position == position:  # pagat rule 7
            restock = hand.restocks[-1]
            return f"  {says(name, 'puts')} {style.card(restock.card)} into box {restock.slot}"
        ended = not any(lay.position == position for lay in hand.lays)
        lays = hand.rounds[-1].lays if ended else tuple(hand.lays)
        record = hand.rounds[-1] if ended else None
        number = len(hand.rounds) + (not ended)
        lines = []
        if record is not None and record.too_high is not None and record.too_high.position == position:
            card = record.too_high.card
            lines.append(f"  {says(name, 'takes')} box {_taken_slot(hand)}: {style.card(card)}, too high")
        else:
            lay = next(lay for lay in lays if lay.position == position)
            if lays[0] is lay:
                lines.append(f"Round {number}:")
            if lay.from_box:
                lines.append(f"  {says(name, 'takes')} box {_taken_slot(hand)}: {style.card(lay.card)}, which stands")
            else:
                lines.append(f"  {says(name, 'lays')} {style.card(lay.card)}")
        if ended:
            teller = _Teller(names, style, hand.variant, hand.cards.__getitem__, lambda draw: True)
            outcome = teller.outcome(hand.rounds, len(hand.rounds), hand.is_over, None if hand.is_over else hand.opener)
            lines.append(_wrap(f"  {outcome}", "  "))
        return "\n".join(lines)

    def record(self, hand: BoxHand, result: HandResult | None, names: Sequence[str]) -> list[str]:
        """The deal, one line per round (the cards laid in order, the too-high card, the draws),
        the result and each breach, like a PBN record."""
        cards, layout = hand.cards, hand.layout

        def shown(positions: Iterable[int]) -> str:
            return format_cards(cards[p] for p in positions)  # type: ignore[misc]

        lines = []
        for seat, name in enumerate(names):
            lines.append(f"{name}: {format_cards(by_rank(cards[p] for p in layout.hands[seat]))}"  # type: ignore[misc]
                         f" | box {shown(layout.boxes[seat])}")
        lines.append(f"Pile: {shown(layout.pile)}")
        for number, record in enumerate(hand.rounds, start=1):
            line = f"{number:2}. {_lays(record.lays, names, Style(), record.restocks)}"
            if record.too_high is not None:
                line += f", {names[record.too_high.seat]} {record.too_high.card} (box) too high"
            if record.extra_to is not None:
                line += f"; extra to {names[record.extra_to]}"
            if record.draws:
                line += "; draw " + ", ".join(f"{names[d.seat]} {shown(d.positions)}" for d in record.draws)
            lines.append(line)
        if result is None:  # cut short, with no result: the record so far
            return lines
        lines.append(f"Result: box cards left {tally(names, result.scores)}; {_verdict(result, names)}; "
                     f"points {tally(names, result.points)}")
        for v in hand.violations:
            lines.append(f"Breach: {names[v.seat]} {BREACHES.get(v.rule, v.rule.value)} in round {v.round + 1} "
                         f"({cards[v.position]})")
        return lines + forfeit_record(names, result.offenders - {v.seat for v in hand.violations}, result.left)

