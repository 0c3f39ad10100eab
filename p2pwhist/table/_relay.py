"""The host's connections to the seats during the game: who is connected on which, what each
holds of the log, who is gone since when, and who may take a seat back.

Only the host needs a reachable port; every joiner keeps one connection to it, and the host
relays each message to those who lack it (``deliver``). It cannot forge, reorder, drop or fork
the game unnoticed: every message is signed by its author and chained to the one before it,
and every peer checks both (protocol/session.md §1).

A seat whose connection drops is not waited for until its message is due: the game goes on
without it, and on its return (a REJOIN, ``rejoin_refusal`` then ``take_back``) it gets every
message it missed. A frame from a seat whose message is not due is held, and its connection
read no further, until it is (``hold``): honest peers never send out of turn, and a peer that
does can make us hold one frame, not more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pwhist.session import Session
from p2pwhist.table._actions import Action, Close, ConnId, Report, Send
from p2pwhist.table._frames import FrameError, FromJoiner, Notice, Presence, Rejoin, Resumed, encode
from p2pwhist.table._words import notice_line


class Relay:
    """See the module docstring. ``conns`` is each seat's connection (seat 0, the host's own,
    is None, and so is a seat not connected)."""

    def __init__(self, conns: Sequence[ConnId | None], names: Sequence[str], now: float) -> None:
        self.conn_of: list[ConnId | None] = list(conns)
        self.names = list(names)
        self.delivered: dict[ConnId, int] = {conn: 0 for conn in conns if conn is not None}
        self.lost_at: dict[int, float] = {seat: now for seat, conn in enumerate(conns) if seat and conn is None}
        self.held: dict[ConnId, FromJoiner | FrameError] = {}  # a frame decoded, or why it is none
        self.told_gone: set[int] = set()  # seats the others were told are gone, and not yet that they are back

    def seat_of(self, conn: ConnId) -> int | None:
        return self.conn_of.index(conn) if conn in self.conn_of else None

    # -- the log reaching the seats (``Peer``'s transport) ------------------------------------

    def deliver(self, raws: list[bytes]) -> list[Action]:
        out: list[Action] = []
        for conn in self.conn_of:
            if conn is not None:
                out += [Send(conn, raw) for raw in raws[self.delivered[conn]:]]
                self.delivered[conn] = len(raws)
        return out

    def received(self, via: int, length: int) -> None:
        conn = self.conn_of[via] if via < len(self.conn_of) else None
        if conn is not None:
            self.delivered[conn] = length

    # -- connections coming and going ------------------------------------------------------------

    def lost(self, conn: ConnId, now: float) -> int | None:
        """``conn`` is gone: the seat it carried, if it still carried one, waits to return."""
        seat = self.seat_of(conn)
        self.delivered.pop(conn, None)
        self.held.pop(conn, None)
        if seat is not None:
            self.conn_of[seat] = None
            self.lost_at[seat] = now
        return seat

    def hold(self, conn: ConnId, frame: FromJoiner | FrameError) -> None:
        self.held[conn] = frame

    def rejoin_refusal(self, session: Session, key: bytes, rejoin: Rejoin, nonce: bytes,
                       raws: list[bytes]) -> str | None:
        """Why a returning joiner may not take its seat back (wire.md §2), or None: it must
        prove it holds the seat's key by signing our nonce, and hold a prefix of our log (or
        our log and messages of its own that we never got, which come next and are checked
        like any other)."""
        players = session.table.players
        if rejoin.game != session.game_id:
            return "this host is playing another game"
        if rejoin.seat >= len(players) or players[rejoin.seat].key != key:
            return f"seat {rejoin.seat} of this game has another key than yours"
        name = f"{players[rejoin.seat].name} (seat {rejoin.seat})"
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(
                rejoin.proof, Rejoin.statement(rejoin.game, rejoin.seat, rejoin.have, rejoin.head, nonce))
        except (InvalidSignature, ValueError):
            return f"{name} did not prove that it holds the seat's key"
        # A seat that forfeited meanwhile comes back too: for the FORFEIT, which it keeps.
        if session.error is not None:
            return "the game was stopped"
        if rejoin.have <= len(raws) and hashlib.sha256(raws[rejoin.have - 1]).digest() != rejoin.head:
            return (f"{name}'s transcript differs from the table's log at or before message {rejoin.have - 1}: "
                    f"it was changed, or {players[rejoin.seat].name} signed two different messages at one place "
                    "in the log")
        return None

    def take_back(self, seat: int, conn: ConnId, have: int, raws: list[bytes]) -> list[Action]:
        """``seat`` returns on ``conn``: RESUMED, then every message it lacks; its older
        connection, if any, is closed."""
        out: list[Action] = [Send(conn, encode(Resumed(len(raws))))]
        out += [Send(conn, raw) for raw in raws[min(have, len(raws)):]]
        old, self.conn_of[seat] = self.conn_of[seat], conn
        self.delivered[conn] = len(raws)
        self.lost_at.pop(seat, None)
        if old is not None:
            self.delivered.pop(old, None)
            self.held.pop(old, None)
            out.append(Close(old, 0.0))
        return out

    def announce(self, notice: Notice) -> list[Action]:
        """Tell our person and every connected seat why the table waits (or that a seat is
        back: not the seat itself)."""
        payload = encode(notice)
        back = notice.presence is Presence.BACK
        return [Report(notice_line(notice, self.names, 0), notice),
                *(Send(conn, payload) for seat, conn in enumerate(self.conn_of)
                  if conn is not None and not (back and seat == notice.seat))]

    def announce_gone(self, seat: int, wait: float) -> list[Action]:
        """That ``seat`` lost its connection, once until it is back: a seat that comes and
        goes makes one line of news each way, not one per connection."""
        if seat in self.told_gone:
            return []
        self.told_gone.add(seat)
        return self.announce(Notice(seat, Presence.GONE, 0, int(wait)))

    def announce_back(self, seat: int) -> list[Action]:
        """That ``seat`` is back, if the others were told it was gone."""
        if seat not in self.told_gone:
            return []
        self.told_gone.discard(seat)
        return self.announce(Notice(seat, Presence.BACK, 0, 0))
