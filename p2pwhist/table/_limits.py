"""How long the table waits for what, and how much it holds for whom (protocol/wire.md §2).

One frozen value, ``Limits``, travels with every machine, so a test can shrink any of them and
nothing reads a module constant behind its back. Each default says why it is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pwhist.limits import DEFAULT_SPECTATORS, DEFAULT_TIMEOUT, DEFAULT_WAIT

# A HELLO is about 100 bytes (a name of at most 32 characters and a 32-byte key); WELCOME,
# READY, REJOIN, VOUCH and REFUSE are of the same size, a LOBBY at most about 500 bytes. So a
# frame on a connection that holds no seat in a game is at most this, and is read no further
# than its own end: a connection that is not yet playing holds under 1.1 KiB.
HANDSHAKE_FRAME = 1024


@dataclass(frozen=True)
class Limits:
    # The most one seat may take over one message of the log, and how long the table waits
    # for a seat whose connection was lost, before it forfeits (--timeout, --wait).
    timeout: float = DEFAULT_TIMEOUT
    wait: float = DEFAULT_WAIT
    # A p2pwhist peer says HELLO, and answers it, at once: one that takes longer is not one.
    hello: float = 10.0
    # A person deciding whether to trust a key takes as long as they need, within reason: a
    # question nobody answers must not hold a table (or a joiner's slot) for ever.
    trust: float = 600.0
    # Before START the host tells every joiner how the table stands at least this often, so a
    # joiner that hears nothing for ``silence`` knows the host is gone (TCP alone may never say).
    news_every: float = 30.0
    silence: float = 95.0
    # While the table waits for a seat, every this many seconds (or a quarter of the timeout,
    # if that is less) the others, and the seat itself, are told how long.
    notice_every: float = 30.0
    # Handshakes under way at once, in all and from one network (a /24 or a /64); at either,
    # the oldest that has not said who it is makes room (``_lobby``). A table has at most five
    # joiners and an honest handshake takes milliseconds (or a person's decision), so 64 is far
    # more than honest use needs while bounding what a flood can make the host hold; 8 per
    # network leaves room for several players behind one NAT, or ``play``'s bots, all on
    # loopback.
    pending: int = 64
    pending_per_network: int = 8
    # A seat may come back (REJOIN) this many times within ``returns_within``, then is refused
    # until the oldest return is that old: each return costs the host a catch-up and the others
    # a line of news, and an honest connection does not fail every few seconds. Once the log is
    # complete a seat may come back ``returns_at_the_end`` times for its last messages, no more.
    returns: int = 6
    returns_within: float = 60.0
    returns_at_the_end: int = 3
    # A joiner reconnecting after a lost connection pauses this long, then twice as long
    # after each failure, up to ``reconnect_most``.
    reconnect_first: float = 0.25
    reconnect_most: float = 5.0
    # Opening a TCP connection; longer means the host is unreachable.
    connect: float = 10.0
    # Spectators watching at once (``host --spectators``), and how much later than the seats
    # each message reaches them (``--delay``). A spectator holds no seat, so the table never
    # waits for one: a frame that has not left for it within ``spectator_send`` (it reads too
    # slowly, or not at all) drops it. That is also what bounds what the host queues for it:
    # the log's messages (references to bytes the host holds anyway) of that many seconds.
    spectators: int = DEFAULT_SPECTATORS
    delay: float = 0.0
    spectator_send: float = 10.0
    # A spectator hears nothing while the table waits for a person (a trust question, a move,
    # a seat away, each up to ten minutes by default), so it gives up only after this long.
    spectator_silence: float = 3600.0

    @property
    def notice_interval(self) -> float:
        return min(self.notice_every, self.timeout / 4)
