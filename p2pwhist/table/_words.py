"""What the table says to people: times, who the table waits for, how the lobby stands."""

from __future__ import annotations

from collections.abc import Sequence

from p2pwhist.bodies import Player
from p2pwhist.table._frames import Lobby, Notice, Presence
from p2pwhist.text import clock


def notice_line(notice: Notice, names: Sequence[str], me: int | None) -> str:
    """What a NOTICE says, for a person to read."""
    name, left = names[notice.seat], clock(notice.left)
    if notice.presence is Presence.BACK:
        return f"{name} is back."
    if notice.presence is Presence.GONE:
        return f"{name} lost connection; waiting for them to return ({left} left)."
    if notice.seat == me:
        return f"You have {left} left for your move; then you forfeit the match."
    return f"Waiting for {name} for {clock(notice.waited)}; they forfeit in {left}."


class ShownNotices:
    """The NOTICE last shown for each seat, and when. A host may send NOTICEs as fast as its
    connection goes, each a line on the screen; an honest one sends a seat's same news again
    only once a notice interval (``Limits.notice_interval``: at least a quarter of the least
    move limit a table may agree, 2.5 s). So the same news again within ``REPEAT`` seconds is
    a flood, not news, and is not shown; other news is, at once. One entry a seat."""

    REPEAT = 1.0

    def __init__(self) -> None:
        self._last: dict[int, tuple[Presence, float]] = {}

    def worth_showing(self, notice: Notice, now: float) -> bool:
        last = self._last.get(notice.seat)
        if last is not None and last[0] is notice.presence and now - last[1] < self.REPEAT:
            return False
        self._last[notice.seat] = (notice.presence, now)
        return True

    def __len__(self) -> int:
        return len(self._last)


def seats_line(seats: int, players: Sequence[Player]) -> str:
    """"2 of 4 seats taken: alice, bob"."""
    return f"{len(players)} of {seats} seats taken: {', '.join(p.name for p in players)}"


def lobby_lines(lobby: Lobby, fingerprint: str | None) -> list[str]:
    """How the table stands, for the joiner who received ``lobby`` (or, ``fingerprint`` None,
    for the host): whether it waits for the host to accept it, how many seats are taken, and
    who is still deciding about whom."""
    names = [p.name for p in lobby.players]
    lines = [seats_line(lobby.seats, lobby.players)]
    if lobby.you is None and fingerprint is not None:
        lines.insert(0, f"Waiting for {names[0]} to accept you; your fingerprint is {fingerprint}")
    for decider, about in lobby.undecided:
        who = "you" if about == lobby.you else names[about]
        lines.append("You have not yet said whether you play with " + names[about] if decider == lobby.you
                     else f"{names[decider]} is deciding whether to play with {who}")
    return lines
