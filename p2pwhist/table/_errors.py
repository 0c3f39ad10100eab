"""Why a meeting or a game stopped, and whose fault it was.

As in h11 and the deck: a ``LocalTableError`` is our own misuse of a machine (an event it does
not take now), a bug of ours. The others end a table for a reason outside this program, and
are what a user sees in one line (exit status 1): a ``RemoteTableError`` names the peer that
broke the protocol or the rules; an ``UnattributedTableError`` is what the network or a peer
did where nobody can say which (a connection lost past the wait, silence past a limit).
``Refused`` is a peer's own refusal, said in its words: the host will not seat us, or will not
take us back; nothing is left to resume.
"""

from __future__ import annotations


class LocalTableError(Exception):
    """We handed a machine something it does not take now."""


class TableError(Exception):
    """The meeting or the game stopped because of a peer or the network. ``seat`` is the seat
    to blame, when there is one."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


class RemoteTableError(TableError):
    """A peer sent what it may not: the words name it."""


class UnattributedTableError(TableError):
    """The network or a peer, and nobody can say which: a lost connection, a long silence."""


class Refused(TableError):
    """A peer will not have us, and said why; nothing is left to resume."""
