"""A verified game as a score sheet, modelled on PBN (Portable Bridge Notation), for any game.

Each hand opens with ``[Tag "value"]`` pairs (game, players, hand, dealer, the game's own tags,
date), then the game's record of the hand (its ``GameText.record``: the deal, one line per
trick or round, the result), and the match table closes the sheet. Cards come from the
end-of-hand audit, so every card is known, boxes included.
"""

from __future__ import annotations

from p2pwhist.games.registry import game_entry
from p2pwhist.text import match_table, tally
from p2pwhist.verify import Verdict


def _tag(name: str, value: object) -> str:
    return f'[{name} "{value}"]'


def scoresheet(verdict: Verdict) -> str:
    session = verdict.session
    if session is None or session.match is None:
        return "No hand was played."
    table = session.table
    words = game_entry(table.game).text
    names = [p.name for p in table.players]
    match = session.match
    settlement = verdict.settlement
    out: list[str] = []
    for number, hand in enumerate(match.hands, start=1):
        audited = number <= len(session.audited)
        full = session.audited[number - 1] if audited else hand  # cut short: what was seen of it
        result = match.results[number - 1] if number <= len(match.results) else None
        if full is None:
            out += [f"Hand {number}: the deck audit failed, so its cards are unknown", ""]
            continue
        out += [_tag("Game", table.game.name), _tag("Players", ", ".join(names)), _tag("Hand", number),
                _tag("Dealer", names[full.dealer])]
        out += [_tag(name.capitalize(), value) for name, value in full.tags().items()]
        out.append(_tag("Date", table.date or "?"))
        if not audited:
            out.append(_tag("Status", "cut short: cards never revealed are shown as ?"))
        out += words.record(full, result, names)
        out.append("")
    out += match_table(names, [r.points for r in match.results], match.points, match.winner,
                       left=None if settlement is None else settlement.seat)
    if settlement is not None:
        out.append(settlement.line(names))
    elif not verdict.complete:
        out[-1] = f"Points so far: {tally(names, match.points)}; the match was not finished."
    if not verdict.complete:
        out.append(f"Unfinished: {verdict.stopped}")
    return "\n".join(out)
