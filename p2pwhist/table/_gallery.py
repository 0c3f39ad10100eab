"""The host's spectators: who watches, and what of the log each has been sent (wire.md §2.6).

A spectator holds no seat and proves nothing. It says WATCH at the door (``_lobby``), and the
host sends it the log so far, then every message appended to it, as the same frames the
seats get, and DONE once the game is over. The rules it keeps:

- At most ``Limits.spectators`` watch at once; one more is refused in one line. Until it says
  WATCH a spectator is a connection at the door like any other, under the door's limits.
- The table never waits for a spectator: it is sent what it lacks as each message is appended,
  and a spectator that does not read it in time is dropped by the edge (``spectator_send``).
  Anything a spectator sends after WATCH drops it: it has nothing to say.
- With ``Limits.delay``, a message reaches spectators that long after the host appended it;
  once the game is over they get the rest at once (the delay protects a game in play).
- The table's news of a seat's connection (NOTICE) reaches spectators as it reaches the seats,
  unless they watch with a delay: it would speak of a wait they do not see yet.
- Seats never learn of spectators: nothing of this reaches them or the log.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

from p2pwhist.table._actions import Action, Close, ConnId, Report, Send
from p2pwhist.table._frames import PROTOCOL_VERSION, Done, Notice, Watch, encode
from p2pwhist.table._limits import Limits


@dataclass
class _Spectator:
    where: str  # address and port, as a person reads them
    sent: int = 0  # messages of the log sent to it


class Gallery:
    """See the module docstring."""

    def __init__(self, limits: Limits) -> None:
        self.most = limits.spectators
        self.delay = limits.delay
        self.watching: dict[ConnId, _Spectator] = {}
        self._appended: list[float] = []  # when each message of the log was appended (for the delay)
        self._over = False

    def __contains__(self, conn: ConnId) -> bool:
        return conn in self.watching

    def admit(self, conn: ConnId, where: str, watch: Watch, raws: list[bytes], now: float) -> str | list[Action]:
        """A WATCH on ``conn``: why it is refused, or what it is sent now."""
        if watch.version != PROTOCOL_VERSION:
            return f"this host speaks protocol version {PROTOCOL_VERSION}, not {watch.version}"
        if self._over:
            return "this table is closed"
        if self.most == 0:
            return "this table takes no spectators"
        if len(self.watching) >= self.most:
            return f"this table has {self.most} spectators already, its most"
        self.watching[conn] = _Spectator(where)
        return [Report(f"A spectator at {where} is watching ({len(self.watching)} of {self.most})"),
                *self.follow(raws, now)]

    def follow(self, raws: list[bytes], now: float) -> list[Action]:
        """The log is now ``raws``: every spectator is sent what it lacks of what is released."""
        self._appended += [now] * (len(raws) - len(self._appended))
        # compared as ``deadline`` computes it, so that a tick at the deadline always releases
        released = len(raws) if self._over else bisect_right(self._appended, now, key=lambda t: t + self.delay)
        out: list[Action] = []
        for conn, spectator in self.watching.items():
            out += [Send(conn, raw) for raw in raws[spectator.sent:released]]
            spectator.sent = max(spectator.sent, released)
        return out

    @property
    def deadline(self) -> float | None:
        """When the next message held back by the delay is released."""
        least = min((s.sent for s in self.watching.values()), default=len(self._appended))
        return self._appended[least] + self.delay if least < len(self._appended) else None

    def news(self, notice: Notice) -> list[Action]:
        """The table's news of a seat's connection, for every spectator (none with a delay)."""
        if self.delay:
            return []
        payload = encode(notice)
        return [Send(conn, payload) for conn in self.watching]

    def spoke(self, conn: ConnId) -> list[Action]:
        """A spectator sent a frame: it has nothing to say, so it goes."""
        spectator = self.watching.pop(conn)
        return [Report(f"Dropped the spectator at {spectator.where}: it spoke"), Close(conn, 0.0)]

    def lost(self, conn: ConnId, reason: str) -> list[Action]:
        spectator = self.watching.pop(conn)
        return [Report(f"The spectator at {spectator.where} left: it {reason}")]

    def finish(self, raws: list[bytes]) -> list[Action]:
        """The game is over: every spectator gets the rest of the log and DONE, and is parted from."""
        self._over = True
        out = self.follow(raws, math.inf)
        done = [Send(conn, encode(Done(len(raws)))) for conn in self.watching] if raws else []
        return [*out, *done, *(Close(conn, 2.0, part=True) for conn in self.watching)]
