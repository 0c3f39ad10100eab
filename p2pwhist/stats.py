"""Who beat whom: counts and skill ratings from verified transcripts, with no I/O.

A transcript is hostile until verified: only a ``Verdict`` that is valid and whose match's
result the log settles (``MatchRecord.from_verdict``) is counted; anything else is ``NotCounted``,
with its reason, and touches no count and no rating. So a forged or tampered transcript can
raise nobody's rating: it does not verify (p2pwhist.verify). What a valid one proves is only
what its keys signed: whoever holds several keys can record real games among them, which
rate those keys, and nobody else's.

The rules kept here, each decided once:

- A match counts once its result is settled in the log: played to its end (FINAL), or settled
  by a seat leaving (its own ABORT, or a FORFEIT: session.md §7.3). A valid transcript that
  stops before that is "unfinished" and not counted at all, not even its finished hands: a
  seat about to lose could otherwise stop the game to keep its loss out of the record, and a
  game resumed later would be counted twice.
- The same game (the same START) is counted once, from the first file of it met; the others
  are listed as duplicates.
- A match's ranking: a seat that left is last, alone (it loses the match whatever its
  points); the others rank by their final points, more is better, equal points share a rank
  (a draw between them). ``won``/``lost``/``drawn`` between two seats compare their ranks.
- A hand's ranking is by the points it gave (``HandResult.points``) in the same way.
- Ratings: openskill's Plackett-Luce model (a Bayesian multiplayer rating with an
  uncertainty), updated match by match in the order given, with the ranking above (ties as
  draws). A match settled by a FORFEIT that no seat without a stake in it signed
  (``Settlement.witnessed`` False: in a two-seat game, the winner alone declares the other
  absent) is counted as the log says, but not rated: its winner alone vouches for it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from p2pwhist.identity import fingerprint
from p2pwhist.text import plural
from p2pwhist.verify import Verdict


@dataclass(frozen=True, slots=True)
class Rating:
    """A skill estimate: ``mu`` and its uncertainty ``sigma`` (openskill's scale: a new player
    is 25 ± 8.33). ``ordinal`` is the conservative figure, mu - 3 sigma, to rank players by."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def __str__(self) -> str:
        return f"{self.mu:.1f} ± {self.sigma:.1f}"

    def to_json(self) -> dict[str, float]:
        return {"mu": round(self.mu, 3), "sigma": round(self.sigma, 3), "ordinal": round(self.ordinal, 3)}


@dataclass(frozen=True, slots=True)
class Seated:
    key: bytes
    name: str


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """What the stats need of one verified match, and nothing else: a counted transcript's
    verdict (which holds its whole log) is reduced to this at once, so that a folder of
    transcripts costs one log's memory at a time."""

    game: bytes  # the START's digest: one game however many files hold it
    players: tuple[Seated, ...]
    ranks: tuple[int, ...]  # each seat's place, 0 the best; equal places are a draw
    hand_ranks: tuple[tuple[int, ...], ...]
    offenders: tuple[frozenset[int], ...]  # each hand's seats caught in a proven breach
    left: int | None  # the seat that left the match (its own ABORT, or a FORFEIT)
    rated: bool  # False for a FORFEIT only those who gain from it signed

    @staticmethod
    def from_verdict(verdict: Verdict) -> MatchRecord | NotCounted:
        """The match a verdict proves, or why it is not counted."""
        if not verdict.valid:
            return NotCounted(Reason.INVALID, str(verdict.error))
        session = verdict.session
        outcome = session.outcome if session is not None else None
        if session is None or outcome is None:
            return NotCounted(Reason.UNFINISHED, verdict.stopped or "the match's result is not in the log")
        left = outcome.forfeited.seat if outcome.forfeited is not None else None
        settlement = verdict.settlement
        return MatchRecord(
            game=session.log[0].digest,
            players=tuple(Seated(p.key, p.name) for p in session.table.players),
            ranks=ranking(outcome.points, left),
            hand_ranks=tuple(ranking(hand.points, None) for hand in verdict.hands),
            offenders=tuple(frozenset(hand.offenders) for hand in verdict.hands),
            left=left,
            rated=settlement is None or settlement.witnessed,
        )


DIGEST = 32  # bytes of a game's digest (its START's) and of a seat's key


def record_to_wire(item: MatchRecord | NotCounted) -> list[Any]:
    """``item`` as msgpack-ready values (``record_from_wire`` reads them back)."""
    if isinstance(item, NotCounted):
        return ["not", item.reason.value, item.detail]
    return ["match", item.game, [[p.key, p.name] for p in item.players], list(item.ranks),
            [list(ranks) for ranks in item.hand_ranks], [sorted(seats) for seats in item.offenders], item.left,
            item.rated]


def record_from_wire(value: object) -> MatchRecord | NotCounted:
    """What ``record_to_wire`` wrote, checked whole: ``ValueError`` for anything else (a file
    of them is hostile until read back: a seat's place, a hand's, an offender, the seat that
    left, each within the table)."""
    if type(value) is not list or not value:
        raise ValueError("not a record")
    if value[0] == "not" and len(value) == 3:
        _, reason, detail = value
        if type(detail) is not str:
            raise ValueError("a reason's detail is not text")
        return NotCounted(Reason(reason), detail)
    if value[0] != "match" or len(value) != 8:
        raise ValueError("not a record")
    _, game, players, ranks, hand_ranks, offenders, left, rated = value
    if type(game) is not bytes or len(game) != DIGEST or type(players) is not list or not 2 <= len(players) <= 6:
        raise ValueError("not a match's game and players")
    seats = range(len(players))

    def places(values: object) -> tuple[int, ...]:
        if type(values) is not list or len(values) != len(players) or any(type(v) is not int or v not in seats
                                                                          for v in values):
            raise ValueError("not a place for each seat")
        return tuple(values)  # type: ignore[arg-type]

    if any(type(p) is not list or len(p) != 2 or type(p[0]) is not bytes or len(p[0]) != DIGEST
           or type(p[1]) is not str for p in players):
        raise ValueError("not a seat's key and name")
    if type(hand_ranks) is not list or type(offenders) is not list or len(offenders) != len(hand_ranks):
        raise ValueError("not a place and the offenders for each hand")
    if any(type(o) is not list or any(type(v) is not int or v not in seats for v in o) for o in offenders):
        raise ValueError("an offender who is not at the table")
    if not (left is None or (type(left) is int and left in seats)) or type(rated) is not bool:
        raise ValueError("not the seat that left, or whether rated")
    return MatchRecord(game=game, players=tuple(Seated(key, name) for key, name in players), ranks=places(ranks),
                       hand_ranks=tuple(places(h) for h in hand_ranks),
                       offenders=tuple(frozenset(o) for o in offenders), left=left, rated=rated)


def ranking(points: Sequence[int], left: int | None) -> tuple[int, ...]:
    """Each seat's place (0 the best) by ``points``, more is better, equal points sharing a
    place; the seat that ``left``, if any, last and alone whatever its points."""
    staying = [points[seat] for seat in range(len(points)) if seat != left]
    return tuple(len(points) - 1 if seat == left else sum(other > points[seat] for other in staying)
                 for seat in range(len(points)))


class Reason(enum.Enum):

    UNREADABLE = "not a transcript"  # no verdict at all: missing, unreadable, no transcript
    INVALID = "invalid"  # it does not verify
    UNFINISHED = "unfinished"  # valid, but the match's result is not in it
    DUPLICATE = "duplicate"  # a game already counted from another file


@dataclass(frozen=True, slots=True)
class NotCounted:
    """Why a file is not counted."""

    reason: Reason
    detail: str


@dataclass(frozen=True, slots=True)
class Skipped:
    file: str
    why: NotCounted

    def line(self) -> str:
        if self.why.reason is Reason.UNREADABLE:  # its detail says what the file is not
            return f"{self.file}: {self.why.detail}"
        return f"{self.file}: {self.why.reason.value}: {self.why.detail}"

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "reason": self.why.reason.value, "detail": self.why.detail}


@dataclass(slots=True)
class Tally:
    """Won, lost and drawn, as seen from one side; ``played`` is their sum."""

    won: int = 0
    lost: int = 0
    drawn: int = 0

    @property
    def played(self) -> int:
        return self.won + self.lost + self.drawn

    def add(self, ours: int, theirs: int) -> None:
        """One more result, from the places (0 the best) of the side counted and of the other."""
        if ours < theirs:
            self.won += 1
        elif ours > theirs:
            self.lost += 1
        else:
            self.drawn += 1

    def __str__(self) -> str:
        return f"{self.played}: {self.won}-{self.lost}-{self.drawn}"

    def to_json(self) -> dict[str, int]:
        return {"played": self.played, "won": self.won, "lost": self.lost, "drawn": self.drawn}


@dataclass(slots=True)
class PlayerStats:
    """One key's record over every counted match it sat in. A match or hand is won when the
    player has the best place alone, drawn when it shares the best, lost otherwise."""

    key: bytes
    name: str  # the last seen
    matches: Tally = field(default_factory=Tally)
    hands: Tally = field(default_factory=Tally)
    left: int = 0  # matches it left (its own ABORT, or declared absent)
    breaches: int = 0  # hands it lost by a proven breach
    rating: Rating | None = None  # None: in no rated match

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "fingerprint": self.fingerprint, "key": self.key.hex(),
                "matches": self.matches.to_json(), "hands": self.hands.to_json(), "left": self.left,
                "breaches": self.breaches, "rating": None if self.rating is None else self.rating.to_json()}


@dataclass(slots=True)
class Versus:
    """Our record against one opponent, over the counted matches we both sat in: won, lost
    and drawn compare our place with theirs (``ranking``)."""

    key: bytes
    name: str  # the last seen
    matches: Tally = field(default_factory=Tally)
    hands: Tally = field(default_factory=Tally)
    they_left: int = 0
    we_left: int = 0
    their_breaches: int = 0
    our_breaches: int = 0

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    def to_json(self, rating: Rating | None) -> dict[str, Any]:
        return {"name": self.name, "fingerprint": self.fingerprint, "key": self.key.hex(),
                "matches": self.matches.to_json(), "hands": self.hands.to_json(),
                "forfeits": {"they_left": self.they_left, "we_left": self.we_left},
                "breaches": {"theirs": self.their_breaches, "ours": self.our_breaches},
                "rating": None if rating is None else rating.to_json()}


@dataclass
class Stats:
    """Every counted match's record: each player's (``players``, best rated first), ours
    (``you``) and ours against each opponent (``opponents``) if our key is known."""

    you: PlayerStats | None
    opponents: list[Versus]
    players: list[PlayerStats]
    counted: int
    unrated: int  # counted matches left out of the ratings (``MatchRecord.rated``)
    skipped: list[Skipped]

    def rating(self, key: bytes) -> Rating | None:
        return next((p.rating for p in self.players if p.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {"you": None if self.you is None else self.you.to_json(),
                "opponents": [v.to_json(self.rating(v.key)) for v in self.opponents],
                "players": [p.to_json() for p in self.players],
                "counted": self.counted, "unrated": self.unrated,
                "not_counted": [s.to_json() for s in self.skipped]}


def tally(files: Iterable[tuple[str, MatchRecord | NotCounted]], you: bytes | None = None) -> Stats:
    """The stats of ``files`` (each file's name and its ``MatchRecord.from_verdict``, in the order
    the matches were played, which the ratings follow), seen by the key ``you`` if given.
    ``files`` is read once, one at a time."""
    model = PlackettLuce()
    players: dict[bytes, PlayerStats] = {}
    ratings: dict[bytes, Any] = {}  # openskill's own rating objects, by key
    opponents: dict[bytes, Versus] = {}
    seen: dict[bytes, str] = {}  # a counted game's START digest: the file it was counted from
    skipped: list[Skipped] = []
    counted = unrated = 0
    for name, match in files:
        if isinstance(match, NotCounted):
            skipped.append(Skipped(name, match))
            continue
        if match.game in seen:
            again = NotCounted(Reason.DUPLICATE, f"the same game as {seen[match.game]}, counted once")
            skipped.append(Skipped(name, again))
            continue
        seen[match.game] = name
        counted += 1
        _count(match, players)
        if you is not None:
            _count_versus(match, you, opponents)
        if match.rated:
            _rate(model, match, ratings)
        else:
            unrated += 1
    for key, rating in ratings.items():
        players[key].rating = Rating(rating.mu, rating.sigma)
    ranked = sorted(players.values(), key=lambda p: (p.rating is None, -(p.rating.ordinal if p.rating else 0), p.name))
    return Stats(players.get(you) if you is not None else None,
                 sorted(opponents.values(), key=lambda v: (-v.matches.played, v.name)),
                 ranked, counted, unrated, skipped)


def _count(match: MatchRecord, players: dict[bytes, PlayerStats]) -> None:
    for seat, seated in enumerate(match.players):
        player = players.setdefault(seated.key, PlayerStats(seated.key, seated.name))
        player.name = seated.name
        player.matches.add(match.ranks[seat], _best_of_the_rest(match.ranks, seat))
        for ranks, offenders in zip(match.hand_ranks, match.offenders, strict=True):
            player.hands.add(ranks[seat], _best_of_the_rest(ranks, seat))
            player.breaches += seat in offenders
        player.left += seat == match.left


def _best_of_the_rest(ranks: Sequence[int], seat: int) -> int:
    """The best place of the seats other than ``seat``: beating it is winning alone."""
    return min(rank for other, rank in enumerate(ranks) if other != seat)


def _count_versus(match: MatchRecord, you: bytes, opponents: dict[bytes, Versus]) -> None:
    ours = next((seat for seat, seated in enumerate(match.players) if seated.key == you), None)
    if ours is None:
        return
    for seat, seated in enumerate(match.players):
        if seat == ours:
            continue
        versus = opponents.setdefault(seated.key, Versus(seated.key, seated.name))
        versus.name = seated.name
        versus.matches.add(match.ranks[ours], match.ranks[seat])
        for ranks, offenders in zip(match.hand_ranks, match.offenders, strict=True):
            versus.hands.add(ranks[ours], ranks[seat])
            versus.their_breaches += seat in offenders
            versus.our_breaches += ours in offenders
        versus.they_left += seat == match.left
        versus.we_left += ours == match.left


def _rate(model: PlackettLuce, match: MatchRecord, ratings: dict[bytes, Any]) -> None:
    """One match's update: each seat a team of one, ranked by its place (openskill: a lower
    rank is better, equal ranks a draw)."""
    keys = [seated.key for seated in match.players]
    teams = [[ratings.get(key) or model.rating()] for key in keys]
    for key, (rating,) in zip(keys, model.rate(teams, ranks=[float(rank) for rank in match.ranks]), strict=True):
        ratings[key] = rating


def lines(stats: Stats, kept_in: str) -> list[str]:
    """``stats`` in words and tables, for ``p2pwhist stats``: a count line, ours and each
    opponent's record against us if our key is known, every player's, then every file not
    counted with its reason; with nothing found, where games are kept (``kept_in``)."""
    if not stats.counted and not stats.skipped:
        return [f"No games to count: each match you play is kept in {kept_in}, where p2pwhist stats finds it "
                "(or name transcripts or folders of them)."]
    unrated = f" ({stats.unrated} not rated: a forfeit only its winner signed)" if stats.unrated else ""
    skipped = f"; {plural(len(stats.skipped), 'file')} not counted" if stats.skipped else ""
    matches = "1 match" if stats.counted == 1 else f"{stats.counted} matches"
    out = [f"Counted {matches}{unrated}{skipped}."]
    you = stats.you
    if you is not None:
        rating = "not rated" if you.rating is None else f"rating {you.rating} (ordinal {you.rating.ordinal:.1f})"
        out += ["", f"You: {you.name} ({you.fingerprint}), {rating}",
                f"  matches {you.matches}, hands {you.hands} (played: won-lost-drawn); "
                f"left {you.left}, breaches {you.breaches}"]
    if stats.opponents:
        out += ["", "Against you (played: won-lost-drawn, from your side):",
                *_table(("opponent", "fingerprint", "matches", "hands", "they left", "you left", "their breaches",
                         "your breaches", "their rating"),
                        [(v.name, v.fingerprint, str(v.matches), str(v.hands), str(v.they_left), str(v.we_left),
                          str(v.their_breaches), str(v.our_breaches), _rated(stats.rating(v.key)))
                         for v in stats.opponents])]
    if stats.players:
        out += ["", "Players, best rated first (played: won-lost-drawn, won the best place alone, drawn sharing it; "
                "rating: mean ± uncertainty):",
                *_table(("player", "fingerprint", "matches", "hands", "left", "breaches", "rating"),
                        [(p.name, p.fingerprint, str(p.matches), str(p.hands), str(p.left), str(p.breaches),
                          _rated(p.rating)) for p in stats.players])]
    if stats.skipped:
        out += ["", "Not counted:", *(f"  {skipped.line()}" for skipped in stats.skipped)]
    return out


def _rated(rating: Rating | None) -> str:
    return "-" if rating is None else str(rating)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
            for row in (header, *rows)]
