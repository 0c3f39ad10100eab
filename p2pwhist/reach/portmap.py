"""Asking the home router to forward a TCP port from the internet to us, holding that mapping
while a table is open, and removing it when the table closes (issue 22).

Two ways of asking are tried at once, with the router our traffic leaves through:

- UPnP-IGD, through miniupnpc, the reference client library's own binding: SSDP multicast
  finds the router's Internet Gateway Device, then SOAP asks it to ``AddPortMapping`` with a
  lease. miniupnpc's calls block, so each runs in a thread under a deadline and is abandoned
  when the deadline passes.
- NAT-PMP (RFC 6886, the codec in ``_natpmp``): UDP to port 5351 of the default gateway, read
  from Linux's /proc/net/route; elsewhere it is not tried.

UPnP-IGD is preferred when the router speaks both (as miniupnpd does); it is waited for until
``UPNP_PATIENCE`` has passed, and NAT-PMP's answer is taken after that. The mapping is renewed on
the schedule of ``_lease`` and deleted when the task is cancelled.

``hold_mapping`` is the one entry. Trouble on the network never raises out of it: the first try
ends in ``NotMapped`` with the reason, a renewal that fails is tried again quietly while the
lease lasts, and the caller hears only when the mapping is lost (``lost``). Every request has a
deadline: ``FIRST_TRY`` for the first, ``RENEW_TRY`` for each renewal, ``DELETE_TRY`` for the
deletion; the tests drive ``_hold`` with fake routers and trio's mock clock.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import miniupnpc
import trio

from p2pwhist.reach._lease import Lease
from p2pwhist.reach._natpmp import (
    MAX_RESPONSE,
    PORT,
    PUBLIC_ADDRESS_REQUEST,
    MalformedResponse,
    Refused,
    default_gateway,
    delete_request,
    map_request,
    read_port_mapping,
    read_public_address,
)

# The most the first try may take, finding a router and mapping the port; the caller waits
# for it before it prints how to join, so it is short. A router on the same link answers in
# milliseconds, but miniupnpc listens a second for more SSDP answers after the first.
FIRST_TRY = 3.0
# How long a UPnP-IGD router is waited for once NAT-PMP has answered: miniupnpc knows the
# router about a second after it asks (see FIRST_TRY), and a router that speaks only NAT-PMP
# costs its owner this wait once, at the start.
UPNP_PATIENCE = 1.5
# The lease asked for, in seconds, renewed halfway (``_lease``). A process killed before it
# could delete its mapping leaves it open this long at most.
LIFETIME = 3600
# The most one renewal may take; then it has failed and is tried again per ``_lease``. Shorter
# than ``_lease.RETRY_GAP``, so tries never overlap.
RENEW_TRY = 4.0
# The most deleting the mapping may take when the table closes: a person who pressed Ctrl-C
# is waiting, and a mapping left behind ends with its lease anyway.
DELETE_TRY = 1.0
# RFC 6886 §3.1: a request is sent again 250 ms after the first, each wait twice the last.
NATPMP_FIRST_WAIT = 0.250
# How the mapping is named in the router's table (UPnP-IGD's NewPortMappingDescription).
DESCRIPTION = "p2pwhist"

# UPnP-IGD's error codes (WANIPConnection:2, section 2.4), by the name miniupnpc raises them
# with (its strupnperror), so a refusal reads "ConflictInMappingEntry (718)".
_UPNP_ERRORS = {
    "Invalid Action": 401, "Invalid Args": 402, "Action Failed": 501, "Argument Value Invalid": 600,
    "Argument Value Out of Range": 601, "Optional Action Not Implemented": 602, "Out of Memory": 603,
    "Human Intervention Required": 604, "String Argument Too Long": 605, "Action not authorized": 606,
    "NoSuchEntryInArray": 714, "WildCardNotPermittedInSrcIP": 715, "WildCardNotPermittedInExtPort": 716,
    "ConflictInMappingEntry": 718, "SamePortValuesRequired": 724, "OnlyPermanentLeasesSupported": 725,
    "RemoteHostOnlySupportsWildcard": 726, "ExternalPortOnlySupportsWildcard": 727, "NoPortMapsAvailable": 728,
    "ConflictWithOtherMechanisms": 729, "WildCardNotPermittedInIntPort": 732,
}
_Answer = TypeVar("_Answer")
_CONFLICT_IN_MAPPING_ENTRY = 718  # another machine has the external port
_ONLY_PERMANENT_LEASES_SUPPORTED = 725  # an IGDv1 router that grants no lease but "forever"


@dataclass(frozen=True)
class Mapped:
    """The router forwards TCP connections to ``external``:``port`` to us."""

    external: str  # the router's external IP address, as text
    port: int  # the external port, which may differ from ours
    method: str  # "UPnP-IGD" or "NAT-PMP"
    # Whether the external address is globally routable; False means another NAT (a carrier's,
    # or a second router) likely stands between the router and the internet.
    public: bool


@dataclass(frozen=True)
class NotMapped:
    """No mapping; ``reason`` is one short clause, e.g. "no router answered within 3 s"."""

    reason: str


@dataclass(frozen=True)
class Grant:
    """What a router granted: its ``external_port`` forwards to us for ``lifetime`` seconds
    (0: permanently)."""

    external_port: int
    lifetime: int


class RouterError(Exception):
    """A router did not give what was asked, or none answered. ``reason`` is one clause;
    ``answered`` says whether a router spoke (refused, or answered nonsense) rather than stayed
    silent, which decides whose reason ``NotMapped`` gives."""

    def __init__(self, reason: str, answered: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.answered = answered


class _Router(Protocol):
    """One way of asking a router; each call runs until it is done, fails with a
    ``RouterError``, or is cancelled by the caller's deadline."""

    method: str

    async def find(self) -> ipaddress.IPv4Address:
        """The router's external address."""

    async def map(self, port: int, external_port: int, lifetime: int) -> Grant:
        """Map (or renew the mapping of) the router's ``external_port`` to our ``port``."""

    async def delete(self, port: int, external_port: int) -> None:
        """Delete that mapping."""


async def hold_mapping(port: int, *, lost: Callable[[str], None] | None = None,
                       task_status: trio.TaskStatus[Mapped | NotMapped] = trio.TASK_STATUS_IGNORED) -> None:
    """Ask the router to forward TCP ``port`` from the internet to this machine, and hold the
    mapping until cancelled. ``await nursery.start(hold_mapping, port)`` returns ``Mapped`` or
    ``NotMapped`` within ``FIRST_TRY`` (and the milliseconds it takes to notice the deadline:
    a request cut short is abandoned, not waited for). With ``NotMapped`` the task has ended.

    With ``Mapped`` it goes on: it renews the lease halfway through, and after a failed
    renewal tries again, quietly, while the lease lasts (``_lease``). When the lease runs out
    unrenewed, or a renewal comes back with another external port, it calls ``lost`` (if
    given) with one line saying so; a lost mapping ends the task. When cancelled (the table
    closes, or Ctrl-C), it deletes the mapping, shielded from the cancellation but within
    ``DELETE_TRY``, so that closing never hangs on a router that went away.

    Raises nothing for the network's trouble; ``ValueError`` for a port that is no TCP port."""
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port must be an int from 1 to 65535, not {port!r}")
    await _hold(port, _routers(), lost, task_status)


def _routers() -> list[_Router]:
    """The ways to ask this machine's router, the preferred first."""
    routers: list[_Router] = [_UpnpIgd()]
    gateway = _gateway()
    if gateway is not None:
        routers.append(_NatPmp(gateway))
    return routers


def _gateway() -> ipaddress.IPv4Address | None:
    """The default gateway, read from Linux's routing table; None elsewhere or if it has none."""
    if sys.platform != "linux":
        return None
    try:
        with open("/proc/net/route", encoding="ascii") as table:
            return default_gateway(table.read())
    except (OSError, UnicodeDecodeError):
        return None


async def _hold(port: int, routers: Sequence[_Router], lost: Callable[[str], None] | None,
                task_status: trio.TaskStatus[Mapped | NotMapped]) -> None:
    """``hold_mapping`` with the routers to ask given, the preferred first."""
    first = await _first_try(port, routers)
    if isinstance(first, NotMapped):
        task_status.started(first)
        return
    router, mapped, grant = first
    external = mapped.port  # the external port forwarding to us
    held = True  # False once lost: there is then no mapping to delete
    try:
        task_status.started(mapped)
        lease = Lease(trio.current_time(), grant.lifetime)
        next_try = lease.renew_at
        while next_try is not None:
            await trio.sleep_until(next_try)
            try:
                with trio.fail_after(RENEW_TRY):
                    grant = await router.map(port, external, LIFETIME)
            except (RouterError, trio.TooSlowError) as error:
                next_try = lease.retry_at(trio.current_time())
                if next_try is None:
                    held = False
                    why = error.reason if isinstance(error, RouterError) else f"no answer within {RENEW_TRY:g} s"
                    _tell(lost, f"the router dropped the port mapping: {why}")
                    return
                continue
            if grant.external_port != external:
                external = grant.external_port
                _tell(lost, f"the router moved the port mapping to external port {external}")
            lease = Lease(trio.current_time(), grant.lifetime)
            next_try = lease.renew_at
        await trio.sleep_forever()  # a permanent mapping, until cancelled
    finally:
        if held:
            with trio.CancelScope(deadline=trio.current_time() + DELETE_TRY, shield=True):
                try:
                    await router.delete(port, external)
                except RouterError:
                    pass  # nothing more to do: the router ends the mapping with its lease


def _tell(lost: Callable[[str], None] | None, line: str) -> None:
    if lost is not None:
        lost(line)


async def _first_try(port: int, routers: Sequence[_Router]) -> tuple[_Router, Mapped, Grant] | NotMapped:
    """Ask every router for its external address at once, choose one (``_choice``), and map
    ``port`` with it, or with the next that answered if it refuses; all within ``FIRST_TRY``.

    A mapping request cut short by the deadline may still have been granted; it is not
    deleted (for UPnP-IGD we could not tell which external port to delete without risking
    another machine's mapping), and it ends with its lease."""
    found: list[ipaddress.IPv4Address | RouterError | None] = [None] * len(routers)
    failures: list[RouterError] = []
    asking: _Router | None = None  # the router being asked to map, when the deadline strikes
    with trio.move_on_after(FIRST_TRY):
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel(len(routers))
            for index, router in enumerate(routers):
                nursery.start_soon(_find, router, index, send)
            patience = trio.current_time() + UPNP_PATIENCE
            while _choice(found, trio.current_time() < patience) is None and None in found:
                with trio.move_on_at(patience if trio.current_time() < patience else float("inf")):
                    index, result = await receive.receive()
                    found[index] = result
            nursery.cancel_scope.cancel()  # a preferred router that is still silent is not waited for
        for router, address in zip(routers, found, strict=True):  # the chosen one first (``_choice``)
            if not isinstance(address, ipaddress.IPv4Address):
                continue
            asking = router
            try:
                grant = await router.map(port, port, LIFETIME)
            except RouterError as error:
                failures.append(error)
                continue
            return router, Mapped(str(address), grant.external_port, router.method, address.is_global), grant
        asking = None
    if asking is not None:
        return NotMapped(f"the router did not answer the {asking.method} mapping request within {FIRST_TRY:g} s")
    heard = [error for error in [*failures, *found] if isinstance(error, RouterError) and error.answered]
    return NotMapped(heard[0].reason if heard else f"no router answered within {FIRST_TRY:g} s")


def _choice(found: Sequence[ipaddress.IPv4Address | RouterError | None], patient: bool) -> int | None:
    """Which router to map with, given what each has answered so far (in preference order; None
    for no answer yet): the first that gave its external address, unless, ``patient``, one
    preferred to it may still answer. None: none yet."""
    for index, result in enumerate(found):
        if isinstance(result, ipaddress.IPv4Address):
            return index
        if result is None and patient:
            return None
    return None


async def _find(router: _Router, index: int,
                send: trio.MemorySendChannel[tuple[int, ipaddress.IPv4Address | RouterError]]) -> None:
    try:
        result: ipaddress.IPv4Address | RouterError = await router.find()
    except RouterError as error:
        result = error
    send.send_nowait((index, result))  # the channel holds one answer from every router


# -- UPnP-IGD ------------------------------------------------------------------------------------


class _UpnpIgd:
    """A UPnP Internet Gateway Device, through miniupnpc. Each call runs in a thread, abandoned
    when the caller's deadline passes. Only ``find`` writes into the miniupnpc object, and it
    is called once, first; the others only read it, so a call abandoned while still running
    shares it safely with the next."""

    method = "UPnP-IGD"

    def __init__(self) -> None:
        # discoverdelay: how long to listen for SSDP answers, in ms; 1000 is miniupnpc's least.
        self._upnp = miniupnpc.UPnP(discoverdelay=1000)

    async def find(self) -> ipaddress.IPv4Address:
        return await trio.to_thread.run_sync(self._find, abandon_on_cancel=True)

    async def map(self, port: int, external_port: int, lifetime: int) -> Grant:
        return await trio.to_thread.run_sync(self._map, port, external_port, lifetime, abandon_on_cancel=True)

    async def delete(self, port: int, external_port: int) -> None:
        await trio.to_thread.run_sync(self._delete, external_port, abandon_on_cancel=True)

    def _find(self) -> ipaddress.IPv4Address:
        # miniupnpc raises a bare Exception for everything, with strupnperror's words.
        try:
            self._upnp.discover()
        except Exception:
            raise RouterError("no UPnP-IGD device answered", answered=False) from None
        try:
            self._upnp.selectigd()
        except Exception:
            raise RouterError("no UPnP-IGD among the UPnP devices that answered", answered=False) from None
        try:
            text = self._upnp.externalipaddress()
        except Exception as error:
            raise _upnp_failure(error) from None
        try:
            address = ipaddress.IPv4Address(text)
        except ValueError:
            address = ipaddress.IPv4Address(0)
        if address.is_unspecified:
            raise RouterError(f"the router has no external address (it says {text[:40]!r})", answered=True)
        return address

    def _map(self, port: int, external_port: int, lifetime: int) -> Grant:
        try:
            return self._add(port, external_port, lifetime)
        except _UpnpFailure as failure:
            if failure.code == _ONLY_PERMANENT_LEASES_SUPPORTED:
                return self._add(port, external_port, 0)  # deleted when the table closes all the same
            if failure.code != _CONFLICT_IN_MAPPING_ENTRY:
                raise
            # Another machine has the external port: AddAnyPortMapping (IGDv2) has the router
            # choose a free one. miniupnpc asks it for the longest lease; asking again for ours
            # means a process that dies leaves it open no longer than any other.
            try:
                chosen = int(self._upnp.addanyportmapping(port, "TCP", self._upnp.lanaddr, port, DESCRIPTION, ""))
            except Exception:
                raise failure from None
            if not 0 < chosen < 65536:
                raise RouterError(f"the router chose external port {chosen}", answered=True) from None
            return self._add(port, chosen, lifetime)

    def _add(self, port: int, external_port: int, lifetime: int) -> Grant:
        try:
            self._upnp.addportmapping(external_port, "TCP", self._upnp.lanaddr, port, DESCRIPTION, "", lifetime)
        except Exception as error:
            raise _upnp_failure(error) from None
        return Grant(external_port, lifetime)

    def _delete(self, external_port: int) -> None:
        try:
            self._upnp.deleteportmapping(external_port, "TCP")
        except Exception as error:
            raise _upnp_failure(error) from None


class _UpnpFailure(RouterError):
    """A UPnP-IGD request that failed; ``code`` is UPnP's error code if the router gave one."""

    def __init__(self, reason: str, code: int | None) -> None:
        super().__init__(reason, answered=True)
        self.code = code


def _upnp_failure(error: Exception) -> _UpnpFailure:
    """miniupnpc's exception in our words, with the UPnP error code its text names, if any."""
    text = str(error)[:80]
    code = _UPNP_ERRORS.get(text)
    if code is None:
        return _UpnpFailure(f"the router's UPnP-IGD failed: {text}", None)  # e.g. "Miniupnpc HTTP error"
    return _UpnpFailure(f"the router refused: {text} ({code})", code)


# -- NAT-PMP -------------------------------------------------------------------------------------


class _NatPmp:
    """NAT-PMP with the default gateway ``gateway`` (RFC 6886), on its ``port`` (5351, but
    for a test's fake gateway)."""

    method = "NAT-PMP"

    def __init__(self, gateway: ipaddress.IPv4Address, port: int = PORT) -> None:
        self._gateway = gateway
        self._port = port

    async def find(self) -> ipaddress.IPv4Address:
        return (await self._ask(PUBLIC_ADDRESS_REQUEST, read_public_address)).address

    async def map(self, port: int, external_port: int, lifetime: int) -> Grant:
        mapping = await self._ask(map_request(port, external_port, lifetime), read_port_mapping)
        if mapping.internal_port != port:
            raise RouterError(f"the router mapped port {mapping.internal_port}, not {port}", answered=True)
        if not mapping.lifetime:
            raise RouterError("the router granted the mapping for 0 s", answered=True)
        return Grant(mapping.external_port, mapping.lifetime)

    async def delete(self, port: int, external_port: int) -> None:
        await self._ask(delete_request(port), read_port_mapping)

    async def _ask(self, request: bytes, read: Callable[[bytes], _Answer]) -> _Answer:
        """Send ``request`` to the gateway until an answer comes back, and return it as
        ``read`` reads it: RFC 6886 §3.1's schedule, 250 ms then doubling, until the caller's deadline.
        Each request has its own socket, connected to the gateway: the kernel drops datagrams
        from any other address (§3.1 asks for that) and to the port of any earlier request."""
        try:
            with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as sock:
                await sock.connect((str(self._gateway), self._port))
                wait = NATPMP_FIRST_WAIT
                while True:
                    await sock.send(request)
                    with trio.move_on_after(wait):
                        data = await sock.recv(MAX_RESPONSE)
                        try:
                            return read(data)
                        except Refused as refusal:
                            raise RouterError(f"the router refused: {refusal}", answered=True) from None
                        except MalformedResponse as error:
                            raise RouterError(f"the router's NAT-PMP answer is malformed: {error}",
                                              answered=True) from None
                    wait *= 2
        except ConnectionRefusedError:  # ICMP port unreachable: nothing listens on the gateway's port 5351
            raise RouterError(f"the gateway {self._gateway} has no NAT-PMP", answered=False) from None
        except OSError as error:
            raise RouterError(f"NAT-PMP to {self._gateway}: {error.strerror or error}", answered=False) from None
