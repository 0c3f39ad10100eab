"""Tables on the local network, by DNS-SD over multicast DNS (RFC 6762, 6763): a host
announces its table while it has a free seat (``Announcer``), and ``join`` with no address
lists the tables it hears (``hear_tables``).

Both use ``zeroconf``, the maintained pure-Python implementation: its own event loop runs in
a thread of its own, and its blocking calls (register, update, unregister, resolve) may be
made from any other thread, never from its loop's. The host calls them from trio's worker
threads (``trio.to_thread``), so trio's loop never waits on the network; ``hear_tables`` is
called before trio starts, from the command's own thread.

Nothing here is ever fatal: a network without multicast, or a library error, costs the
table its announcement (one line saying so), never the game.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio
from zeroconf import Error, NonUniqueNameException, ServiceBrowser, ServiceInfo, ServiceListener, Zeroconf

from p2pwhist.reach._ads import MAX_TABLES, SERVICE_TYPE, BadAd, TableAd, read_ad

# What fails reaches the person as one line of ours; the library's own log lines (a socket
# that cannot send on some interface, say) would only clutter the terminal.
logging.getLogger("zeroconf").setLevel(logging.CRITICAL)

HEAR_SECONDS = 2.0  # how long ``join`` listens: an announcing host answers a query within a fraction of it
GOODBYE_SECONDS = 2.0  # the most we spend withdrawing an announcement as we stop


class NoTable(Exception):
    """``join`` with no address found no table to join; the text says why and what to do."""


@dataclass(frozen=True)
class Heard:
    """What listening heard: the tables (by host name, then fingerprint), and how many
    announcements could not be used, with a reason for one of them."""

    tables: tuple[TableAd, ...]
    rejected: int = 0
    why: str = ""


def hear_tables(seconds: float = HEAR_SECONDS) -> Heard:
    """Listen for announced tables for ``seconds`` and return those heard and still announced;
    ``NoTable`` if this machine cannot listen (no interface that takes multicast, say).
    Blocking: call it from a thread that is not zeroconf's (the command's own, before trio)."""
    names: queue.SimpleQueue[tuple[str, bool]] = queue.SimpleQueue()

    class Listener(ServiceListener):  # called on zeroconf's loop: only hand the name over
        def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.put((name, True))

        def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.put((name, True))

        def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.put((name, False))

    deadline = time.monotonic() + seconds
    heard: dict[str, TableAd] = {}
    rejected, why = 0, ""
    try:
        zc = Zeroconf()  # every interface: a table may be on any network we are on
    except (OSError, Error) as error:
        raise NoTable(f"cannot listen for tables on this network: {error}") from None
    try:
        browser = ServiceBrowser(zc, SERVICE_TYPE, listener=Listener())
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    name, present = names.get(timeout=left)
                except queue.Empty:
                    break
                heard.pop(name, None)
                if not present or len(heard) >= MAX_TABLES:
                    continue
                # Resolved here, in our thread: its records are mostly in the cache already.
                info = zc.get_service_info(SERVICE_TYPE, name, timeout=max(1, int(min(left, 1.0) * 1000)))
                if info is None or info.port is None:
                    continue  # gone before it could be read
                try:
                    heard[name] = read_ad(info.properties, info.port, info.parsed_addresses())
                except BadAd as error:
                    rejected, why = rejected + 1, f"{name.removesuffix('.' + SERVICE_TYPE)!r}: {error}"
        finally:
            browser.cancel()
    finally:
        zc.close()
    tables = sorted(heard.values(), key=lambda ad: (ad.host.casefold(), ad.fingerprint, ad.port))
    return Heard(tuple(tables), rejected, why)


class Announcer:
    """A host's table on the local network, while it has a free seat.

    The edge says what the table is now (``show``: an ad, or None when the table is full,
    under way or closed) whenever that may change; ``run`` brings the network in line, one
    change at a time and only the latest (a burst of arrivals is one update), in trio's worker
    threads. On its way out (the table over, Ctrl-C) it withdraws the announcement within
    ``GOODBYE_SECONDS``."""

    def __init__(self, addresses: Sequence[str], report: Callable[[str], None]) -> None:
        self._addresses = list(addresses)
        self._report = report
        self._wanted: TableAd | None = None
        self._changed = trio.Event()

    def show(self, ad: TableAd | None) -> None:
        if ad != self._wanted:
            self._wanted = ad
            self._changed.set()

    async def run(self) -> None:
        try:
            zc = await trio.to_thread.run_sync(Zeroconf, abandon_on_cancel=True)
        except (OSError, Error) as error:
            self._report(f"Not announced on this network: {error} (others join with a line above)")
            return
        shown: ServiceInfo | None = None
        try:
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                shown = await trio.to_thread.run_sync(self._bring, zc, shown, self._wanted, abandon_on_cancel=True)
        except (OSError, Error) as error:  # the network or the library: the game goes on without it
            self._report(f"Stopped announcing the table on this network: {error}")
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(GOODBYE_SECONDS):
                await trio.to_thread.run_sync(_withdraw, zc, shown, abandon_on_cancel=True)

    def _bring(self, zc: Zeroconf, shown: ServiceInfo | None, ad: TableAd | None) -> ServiceInfo | None:
        """Announce ``ad`` (None: nothing) where ``shown`` was announced; what is now shown."""
        if ad is None:
            if shown is not None:
                zc.unregister_service(shown)
            return None
        info = _service_info(ad, self._addresses, shown)
        if shown is None:
            try:
                zc.register_service(info, allow_name_change=True)
            except NonUniqueNameException:  # every variant of the name taken: say nothing more
                return None
        else:
            zc.update_service(info)
        return info


def _service_info(ad: TableAd, addresses: Sequence[str], shown: ServiceInfo | None) -> ServiceInfo:
    """The DNS-SD service for ``ad``: its instance name keeps the one first registered (zeroconf
    may have changed it to be unique); its host name is ours alone (not the machine's, which
    another responder on this machine may announce)."""
    name = shown.name if shown is not None else f"{ad.instance_name}.{SERVICE_TYPE}"
    server = f"p2pwhist-{ad.fingerprint[:9]}-{ad.port}.local."
    return ServiceInfo(SERVICE_TYPE, name, port=ad.port, properties=ad.properties(), server=server,
                       parsed_addresses=list(addresses))


def _withdraw(zc: Zeroconf, shown: ServiceInfo | None) -> None:
    try:
        if shown is not None:
            zc.unregister_service(shown)
    finally:
        zc.close()
