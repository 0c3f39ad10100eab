"""A verified game as a score sheet, modelled on PBN (Portable Bridge Notation).

Each hand opens with ``[Tag "value"]`` pairs (game, players, hand, dealer, trumps, date), then
each seat's starting hand and box, one line per trick (the cards in the order played, the
winner, and the stack cards taken), and the result. The match table closes the sheet. Cards
come from the end-of-hand audit, so every card is known, boxes included.
"""

from __future__ import annotations

from p2pwhist.cards import format_cards, sort_for_display
from p2pwhist.games.base import HandResult
from p2pwhist.games.boxwhist import BoxWhistHand
from p2pwhist.verify import Verdict


def _tag(name: str, value: object) -> str:
    return f'[{name} "{value}"]'


def _hand(number: int, hand: BoxWhistHand, result: HandResult, names: list[str], date: str) -> list[str]:
    cards = hand.cards
    lines = [
        _tag("Game", hand.game.name),
        _tag("Players", ", ".join(names)),
        _tag("Hand", number),
        _tag("Dealer", names[hand.dealer]),
        _tag("Trumps", hand.tags()["trump"]),
        _tag("Date", date or "?"),
    ]
    for seat, name in enumerate(names):
        dealt = format_cards(sort_for_display(cards[p] for p in hand.layout.hands[seat]))
        boxed = format_cards(cards[p] for p in hand.layout.boxes[seat])
        lines.append(f"{name}: {dealt} | box {boxed}")
    lines.append(f"Stack: {format_cards(cards[p] for p in hand.layout.stack)}")
    for number_, trick in enumerate(hand.tricks, start=1):
        plays = ", ".join(f"{names[p.seat]} {p.card}{' (box)' if p.from_box else ''}" for p in trick.plays)
        line = f"{number_:2}. {plays}; {names[trick.winner]} wins"
        if trick.draws:
            line += "; takes " + ", ".join(f"{names[d.seat]} {cards[d.position]}" for d in trick.draws)
        lines.append(line)
    tricks = ", ".join(f"{name} {score}" for name, score in zip(names, result.scores))
    outcome = "drawn" if result.winner is None else f"{names[result.winner]} wins"
    lines.append(f"Result: {tricks}; {outcome}")
    for revoke in hand.revokes:
        lines.append(f"Revoke: {names[revoke.seat]} did not follow suit in trick {revoke.trick + 1}")
    for seat in sorted(result.offenders - {r.seat for r in hand.revokes}):
        lines.append(f"Forfeit: {names[seat]} was caught breaking the deck protocol")
    return lines


def scoresheet(verdict: Verdict) -> str:
    session = verdict.session
    if session is None or session.match is None:
        return "No hand was played."
    names = [p.name for p in session.table.players]
    match = session.match
    out: list[str] = []
    for number, (result, full) in enumerate(zip(match.results, session.audited), start=1):
        if full is None:
            out.append(f"Hand {number}: the deck audit failed, so its cards are unknown")
        else:
            out += _hand(number, full, result, names, session.table.date)
        out.append("")
    width = max(len(n) for n in names) + 2
    out.append("Hand  " + "".join(f"{n:>{width}}" for n in names) + "  Winner")
    for number, result in enumerate(match.results, start=1):
        winner = "drawn" if result.winner is None else names[result.winner]
        out.append(f"{number:<6}" + "".join(f"{s:>{width}}" for s in result.scores) + f"  {winner}")
    won = ", ".join(f"{n} {w}" for n, w in zip(names, match.hands_won))
    verdict_line = "a drawn match" if match.winner is None else f"{names[match.winner]} wins the match"
    out.append(f"Hands won: {won}; {verdict_line}.")
    if not verdict.complete:
        out.append(f"Unfinished: {verdict.stopped}")
    return "\n".join(out)
