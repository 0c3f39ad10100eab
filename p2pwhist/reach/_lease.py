"""When to renew a port mapping the router granted, and when to stop trying: times in, times
out, no clock here (``p2pwhist.reach.portmap`` sleeps until them).

A mapping is renewed halfway through its lifetime, as RFC 6886 §3.3 advises, so one failed
renewal leaves time for more. After a failure the next try comes halfway through what is left,
but never sooner than ``RETRY_GAP`` after the failure: tries come closer together as the end
nears, and stop when the next one would come after it. A renewal that succeeds grants a new
lease, counted from then.
"""

from __future__ import annotations

from dataclasses import dataclass

# The least time between two tries after a failure: a router that is restarting, or a link
# that is down, is not asked again at once; a few seconds is also longer than one try may take.
RETRY_GAP = 5.0


@dataclass(frozen=True)
class Lease:
    """A mapping granted (or last renewed) at ``granted``, a time on the caller's clock in
    seconds, for ``lifetime`` seconds; a lifetime of 0 is a permanent mapping (a UPnP router
    that grants no other), which is never renewed."""

    granted: float
    lifetime: float

    def __post_init__(self) -> None:
        if self.lifetime < 0:
            raise ValueError(f"a lease's lifetime cannot be negative ({self.lifetime})")

    @property
    def renew_at(self) -> float | None:
        """When to renew: halfway through the lifetime; None for a permanent mapping."""
        return self.granted + self.lifetime / 2 if self.lifetime else None

    def retry_at(self, failed: float) -> float | None:
        """When to try again after a renewal that failed at ``failed``: halfway through the
        time left, at least ``RETRY_GAP`` later; None when that is not before the mapping runs
        out, which is then as good as lost."""
        ends = self.granted + self.lifetime
        then = failed + max((ends - failed) / 2, RETRY_GAP)
        return then if then < ends else None
