"""Holding a port mapping (p2pwhist/reach/portmap.py) with fake routers and trio's mock clock:
which router is chosen and when, the reasons of ``NotMapped``, renewals on the schedule of
p2pwhist/reach/_lease.py (tested here with values), the mapping lost or moved, and its
deletion on cancellation within its deadline. Also the UPnP-IGD fallbacks against a fake
miniupnpc object, and NAT-PMP's retransmissions against a fake gateway on loopback. The real
routers are in test_portmap_router.py."""

from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass, field

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from p2pwhist.reach import _natpmp
from p2pwhist.reach._lease import RETRY_GAP, Lease
from p2pwhist.reach.portmap import (
    DELETE_TRY,
    FIRST_TRY,
    LIFETIME,
    NATPMP_FIRST_WAIT,
    RENEW_TRY,
    UPNP_PATIENCE,
    Grant,
    Mapped,
    NotMapped,
    RouterError,
    _choice,
    _hold,
    _NatPmp,
    _upnp_failure,
    _UpnpIgd,
    hold_mapping,
)

PORT = 7878
WAN = ipaddress.IPv4Address("11.0.0.1")

# -- the renewal schedule -----------------------------------------------------------------------


def test_a_lease_is_renewed_halfway():
    assert Lease(granted=100.0, lifetime=3600).renew_at == 1900.0


def test_a_permanent_mapping_is_never_renewed():
    assert Lease(granted=100.0, lifetime=0).renew_at is None


def test_after_a_failure_the_next_try_comes_halfway_through_what_is_left():
    lease = Lease(granted=0.0, lifetime=3600)
    assert lease.retry_at(1800.0) == 2700.0
    assert lease.retry_at(2700.0) == 3150.0


def test_tries_near_the_end_are_at_least_the_gap_apart_and_none_after_it():
    lease = Lease(granted=0.0, lifetime=3600)
    assert lease.retry_at(3590.0) == 3590.0 + RETRY_GAP  # half of the 10 s left would be sooner
    assert lease.retry_at(3600.0 - RETRY_GAP) is None  # the gap would reach the end
    assert lease.retry_at(3601.0) is None


def test_a_negative_lifetime_is_refused():
    with pytest.raises(ValueError, match="cannot be negative"):
        Lease(0.0, -1)


@given(st.floats(0, 1e6), st.integers(1, 2**32 - 1))
def test_retries_come_later_each_time_before_the_end_and_stop(granted, lifetime):
    lease = Lease(granted, lifetime)
    times = []
    when = lease.renew_at
    while when is not None:
        times.append(when)
        assert len(times) < 64, "the tries never stop"
        when = lease.retry_at(when)
    assert times == sorted(times)
    assert all(granted < t < granted + lifetime for t in times)
    assert all(later - earlier >= RETRY_GAP for earlier, later in itertools.pairwise(times[1:]))


# -- which router --------------------------------------------------------------------------------

NO = RouterError("silent", answered=False)


@pytest.mark.parametrize("found, patient, chosen", [
    ([WAN, WAN], True, 0),
    ([None, WAN], True, None),  # the preferred one may still answer
    ([None, WAN], False, 1),  # not any more
    ([NO, WAN], True, 1),  # it has failed
    ([NO, NO], False, None),
    ([None, None], False, None),
    ([], False, None),
])
def test_the_first_router_that_found_its_address_unless_a_preferred_one_may_still(found, patient, chosen):
    assert _choice(found, patient) == chosen


# -- holding, with fake routers ---------------------------------------------------------------------


@dataclass
class FakeRouter:
    """A router that answers ``find`` after ``find_after`` seconds with ``address`` (an error
    is raised; None: never answers), each ``map`` after ``map_after`` with the next of ``maps``
    (the last repeats; an error is raised; None: never answers), and ``delete`` likewise with
    ``deletes``. Records every call with its time."""

    method: str
    address: ipaddress.IPv4Address | RouterError | None = WAN
    find_after: float = 0.01
    maps: list[Grant | RouterError | None] = field(default_factory=lambda: [Grant(PORT, LIFETIME)])
    map_after: float = 0.01
    deletes: list[RouterError | None] = field(default_factory=lambda: [RouterError("deleted", True)])
    calls: list[tuple[float, str, tuple]] = field(default_factory=list)

    async def find(self) -> ipaddress.IPv4Address:
        self.calls.append((trio.current_time(), "find", ()))
        await trio.sleep(self.find_after)
        return await _answer(self.address)

    async def map(self, port: int, external_port: int, lifetime: int) -> Grant:
        self.calls.append((trio.current_time(), "map", (port, external_port, lifetime)))
        await trio.sleep(self.map_after)
        return await _answer(self.maps[min(len(self.calls_of("map")), len(self.maps)) - 1])

    async def delete(self, port: int, external_port: int) -> None:
        self.calls.append((trio.current_time(), "delete", (port, external_port)))
        if self.deletes[0] is None:
            await trio.sleep_forever()

    def calls_of(self, kind: str) -> list[tuple[float, tuple]]:
        return [(when, arguments) for when, what, arguments in self.calls if what == kind]


async def _answer(value):
    if value is None:
        await trio.sleep_forever()
    if isinstance(value, RouterError):
        raise value
    return value


async def _first(routers, lost=None, nursery=None):
    """Start ``_hold`` in ``nursery``; return its result and how long it took."""
    started = trio.current_time()
    result = await nursery.start(_hold, PORT, routers, lost)
    return result, trio.current_time() - started


def _upnp_router(**kwargs) -> FakeRouter:
    return FakeRouter("UPnP-IGD", **kwargs)


def _natpmp_router(**kwargs) -> FakeRouter:
    return FakeRouter("NAT-PMP", **kwargs)


async def test_upnp_igd_is_preferred_when_both_answer(autojump_clock, nursery):
    upnp, natpmp = _upnp_router(find_after=1.0), _natpmp_router(find_after=0.01)
    result, took = await _first([upnp, natpmp], nursery=nursery)
    assert result == Mapped("11.0.0.1", PORT, "UPnP-IGD", public=True)
    assert took == pytest.approx(1.01)
    assert natpmp.calls_of("map") == []
    nursery.cancel_scope.cancel()


async def test_nat_pmp_is_taken_once_upnp_igd_has_had_its_patience(autojump_clock, nursery):
    upnp, natpmp = _upnp_router(address=None), _natpmp_router()
    result, took = await _first([upnp, natpmp], nursery=nursery)
    assert result == Mapped("11.0.0.1", PORT, "NAT-PMP", public=True)
    assert took == pytest.approx(UPNP_PATIENCE + 0.01)
    nursery.cancel_scope.cancel()


async def test_nat_pmp_at_once_when_upnp_igd_fails(autojump_clock, nursery):
    failure = RouterError("no UPnP-IGD device answered", answered=False)
    upnp, natpmp = _upnp_router(address=failure, find_after=0.1), _natpmp_router()
    result, took = await _first([upnp, natpmp], nursery=nursery)
    assert result.method == "NAT-PMP"
    assert took == pytest.approx(0.11)
    nursery.cancel_scope.cancel()


async def test_a_carrier_grade_nat_address_is_not_public(autojump_clock, nursery):
    result, _ = await _first([_upnp_router(address=ipaddress.IPv4Address("100.64.3.4"))], nursery=nursery)
    assert result == Mapped("100.64.3.4", PORT, "UPnP-IGD", public=False)
    nursery.cancel_scope.cancel()


async def test_a_router_may_give_another_external_port(autojump_clock, nursery):
    result, _ = await _first([_upnp_router(maps=[Grant(40123, LIFETIME)])], nursery=nursery)
    assert result.port == 40123
    nursery.cancel_scope.cancel()


async def test_with_no_router_answering_it_is_not_mapped_after_the_first_try(autojump_clock, nursery):
    silent = RouterError("the gateway has no NAT-PMP", answered=False)
    result, took = await _first([_upnp_router(address=None), _natpmp_router(address=silent)], nursery=nursery)
    assert result == NotMapped(f"no router answered within {FIRST_TRY:g} s")
    assert took == pytest.approx(FIRST_TRY)


async def test_with_no_way_to_ask_it_is_not_mapped_at_once(autojump_clock, nursery):
    result, took = await _first([], nursery=nursery)
    assert isinstance(result, NotMapped)
    assert took == 0


async def test_a_refusal_is_the_reason(autojump_clock, nursery):
    refusal = RouterError("the router refused: ConflictInMappingEntry (718)", answered=True)
    result, took = await _first([_upnp_router(maps=[refusal]), _natpmp_router(address=None)], nursery=nursery)
    assert result == NotMapped("the router refused: ConflictInMappingEntry (718)")
    assert took < 1


async def test_nat_pmp_maps_when_upnp_igd_refuses(autojump_clock, nursery):
    refusal = RouterError("the router refused: Action Failed (501)", answered=True)
    upnp, natpmp = _upnp_router(maps=[refusal], find_after=1.0), _natpmp_router()  # NAT-PMP answered first
    result, _ = await _first([upnp, natpmp], nursery=nursery)
    assert result.method == "NAT-PMP"
    nursery.cancel_scope.cancel()


async def test_a_mapping_request_unanswered_is_cut_at_the_first_try(autojump_clock, nursery):
    result, took = await _first([_upnp_router(maps=[None])], nursery=nursery)
    assert result == NotMapped(f"the router did not answer the UPnP-IGD mapping request within {FIRST_TRY:g} s")
    assert took == pytest.approx(FIRST_TRY)


async def test_renewed_halfway_each_time_and_deleted_when_cancelled(autojump_clock):
    router = _upnp_router()
    async with trio.open_nursery() as nursery:
        started = trio.current_time()
        await nursery.start(_hold, PORT, [router], None)
        await trio.sleep(LIFETIME * 1.6)
        nursery.cancel_scope.cancel()
    maps = [(round(when - started), arguments) for when, arguments in router.calls_of("map")]
    assert maps == [(0, (PORT, PORT, LIFETIME)), (LIFETIME // 2, (PORT, PORT, LIFETIME)),
                    (LIFETIME, (PORT, PORT, LIFETIME)), (LIFETIME * 3 // 2, (PORT, PORT, LIFETIME))]
    assert [arguments for _, arguments in router.calls_of("delete")] == [(PORT, PORT)]


async def test_failed_renewals_are_tried_again_quietly_then_the_loss_is_told_once(autojump_clock):
    failure = RouterError("the router refused: Not Authorized (2)", answered=True)
    router, lines = _natpmp_router(maps=[Grant(PORT, 60), failure], find_after=0, map_after=0), []
    async with trio.open_nursery() as nursery:
        started = trio.current_time()
        await nursery.start(_hold, PORT, [router], lines.append)
        await trio.sleep(600)
        assert not nursery.child_tasks, "a lost mapping ends the task"
    assert lines == ["the router dropped the port mapping: the router refused: Not Authorized (2)"]
    tries = [when - started for when, _ in router.calls_of("map")]
    assert tries == pytest.approx([0, 30, 45, 52.5, 57.5])  # halfway, then halfway through what is left, >= 5 s apart
    assert router.calls_of("delete") == []  # nothing is left to delete


async def test_a_renewal_that_hangs_counts_as_failed_after_its_deadline(autojump_clock):
    router, lines = _natpmp_router(maps=[Grant(PORT, 60), None]), []
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, PORT, [router], lines.append)
        await trio.sleep(600)
    assert lines == [f"the router dropped the port mapping: no answer within {RENEW_TRY:g} s"]


async def test_a_renewal_that_fails_once_then_succeeds_is_not_told(autojump_clock):
    failure = RouterError("the router's UPnP-IGD failed: Miniupnpc HTTP error", answered=True)
    router, lines = _upnp_router(maps=[Grant(PORT, 60), failure, Grant(PORT, 60)]), []
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, PORT, [router], lines.append)
        await trio.sleep(600)
        nursery.cancel_scope.cancel()
    assert lines == []
    assert len(router.calls_of("map")) > 10
    assert len(router.calls_of("delete")) == 1


async def test_a_renewal_to_another_external_port_is_told_and_that_port_deleted(autojump_clock):
    router, lines = _natpmp_router(maps=[Grant(PORT, 60), Grant(40123, 60)]), []
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, PORT, [router], lines.append)
        await trio.sleep(70)
        nursery.cancel_scope.cancel()
    assert lines == ["the router moved the port mapping to external port 40123"]
    assert [arguments for _, arguments in router.calls_of("map")] == [(PORT, PORT, LIFETIME), (PORT, PORT, LIFETIME),
                                                                       (PORT, 40123, LIFETIME)]
    assert [arguments for _, arguments in router.calls_of("delete")] == [(PORT, 40123)]


async def test_a_permanent_mapping_is_held_without_renewal(autojump_clock):
    router = _upnp_router(maps=[Grant(PORT, 0)])
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, PORT, [router], None)
        await trio.sleep(10 * LIFETIME)
        nursery.cancel_scope.cancel()
    assert len(router.calls_of("map")) == 1
    assert len(router.calls_of("delete")) == 1


async def test_a_deletion_that_hangs_is_given_up_after_its_deadline(autojump_clock):
    router = _upnp_router(deletes=[None])
    async with trio.open_nursery() as nursery:
        await nursery.start(_hold, PORT, [router], None)
        nursery.cancel_scope.cancel()
        cancelled = trio.current_time()
    assert trio.current_time() - cancelled == pytest.approx(DELETE_TRY)
    assert len(router.calls_of("delete")) == 1


@pytest.mark.parametrize("port", [0, 65536, -1, "7878", 7878.0, None])
async def test_a_port_that_is_no_tcp_port_is_our_error(port):
    with pytest.raises(ValueError, match="port must be an int from 1 to 65535"):
        await hold_mapping(port)


# -- UPnP-IGD through a fake miniupnpc ----------------------------------------------------------


class FakeMiniupnpc:
    """miniupnpc.UPnP's mapping calls, raising as it does: a bare Exception with the words of
    strupnperror. ``refusals`` maps a (method, lease) pair to those words."""

    lanaddr = "192.168.77.2"

    def __init__(self, refusals: dict[tuple[str, int | None], str], free_port: int = 40123) -> None:
        self.refusals = refusals
        self.free_port = free_port
        self.calls: list[tuple] = []

    def addportmapping(self, external, protocol, client, port, description, remote, lease):
        self.calls.append(("add", external, protocol, client, port, description, remote, lease))
        if ("add", lease) in self.refusals:
            raise Exception(self.refusals["add", lease])
        return True

    def addanyportmapping(self, external, protocol, client, port, description, remote):
        self.calls.append(("any", external, protocol, client, port, description, remote))
        if ("any", None) in self.refusals:
            raise Exception(self.refusals["any", None])
        return self.free_port


def _upnp_igd(fake: FakeMiniupnpc) -> _UpnpIgd:
    router = object.__new__(_UpnpIgd)
    router._upnp = fake
    return router


def test_upnp_igd_asks_for_a_lease_of_our_port_to_our_address():
    fake = FakeMiniupnpc({})
    assert _upnp_igd(fake)._map(PORT, PORT, LIFETIME) == Grant(PORT, LIFETIME)
    assert fake.calls == [("add", PORT, "TCP", "192.168.77.2", PORT, "p2pwhist", "", LIFETIME)]


def test_a_router_with_only_permanent_leases_gets_a_permanent_mapping():
    fake = FakeMiniupnpc({("add", LIFETIME): "OnlyPermanentLeasesSupported"})
    assert _upnp_igd(fake)._map(PORT, PORT, LIFETIME) == Grant(PORT, 0)
    assert [call[-1] for call in fake.calls] == [LIFETIME, 0]


def test_a_port_another_machine_holds_is_traded_for_the_one_the_router_chooses_with_our_lease():
    fake = FakeMiniupnpc({})
    fake.refusals = {("add", LIFETIME): "ConflictInMappingEntry"}

    def add_the_chosen_port(external, *rest):
        fake.calls.append(("add", external, *rest))
        if external == PORT:
            raise Exception("ConflictInMappingEntry")
        return True

    fake.addportmapping = add_the_chosen_port
    assert _upnp_igd(fake)._map(PORT, PORT, LIFETIME) == Grant(40123, LIFETIME)
    assert [call[:2] for call in fake.calls] == [("add", PORT), ("any", PORT), ("add", 40123)]


def test_an_igd_v1_router_without_add_any_port_mapping_gives_the_conflict_as_the_reason():
    fake = FakeMiniupnpc({("add", LIFETIME): "ConflictInMappingEntry", ("any", None): "Invalid Action"})
    with pytest.raises(RouterError, match=r"^the router refused: ConflictInMappingEntry \(718\)$"):
        _upnp_igd(fake)._map(PORT, PORT, LIFETIME)


@pytest.mark.parametrize("words, reason, code", [
    ("ConflictInMappingEntry", "the router refused: ConflictInMappingEntry (718)", 718),
    ("Action not authorized", "the router refused: Action not authorized (606)", 606),
    ("Miniupnpc HTTP error", "the router's UPnP-IGD failed: Miniupnpc HTTP error", None),
    ("UnknownError", "the router's UPnP-IGD failed: UnknownError", None),
])
def test_miniupnpc_s_errors_in_our_words(words, reason, code):
    failure = _upnp_failure(Exception(words))
    assert (failure.reason, failure.code, failure.answered) == (reason, code, True)


# -- NAT-PMP against a fake gateway on loopback --------------------------------------------------


async def _gateway(answers: list[bytes | None]):
    """A UDP socket on loopback that answers the n-th datagram with ``answers[n]`` (None: no
    answer), records when each came, and its port."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    await sock.bind(("127.0.0.1", 0))
    received: list[tuple[float, bytes]] = []

    async def serve() -> None:
        with sock:
            for answer in answers:
                data, sender = await sock.recvfrom(2048)
                received.append((trio.current_time(), data))
                if answer is not None:
                    await sock.sendto(answer, sender)
            await trio.sleep_forever()

    return serve, received, sock.getsockname()[1]


def _natpmp_at(port: int) -> _NatPmp:
    return _NatPmp(ipaddress.IPv4Address("127.0.0.1"), port)


async def test_nat_pmp_sends_again_after_250_ms_then_doubling():
    serve, received, port = await _gateway([None, None, bytes.fromhex("00 80 0000 00000001 0b000001")])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        with trio.fail_after(5):
            assert await _natpmp_at(port).find() == WAN
        nursery.cancel_scope.cancel()
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(received)]
    assert [data for _, data in received] == [_natpmp.PUBLIC_ADDRESS_REQUEST] * 3
    assert gaps == [pytest.approx(NATPMP_FIRST_WAIT, abs=0.1), pytest.approx(2 * NATPMP_FIRST_WAIT, abs=0.1)]


async def test_nat_pmp_maps_deletes_and_checks_the_answer_is_for_our_port():
    answers = [bytes.fromhex("00 82 0000 00000001 1ec6 9c41 00000e10"),  # 7878 -> 40001 for 3600 s
               bytes.fromhex("00 82 0000 00000001 1ec6 0000 00000000"),  # deleted
               bytes.fromhex("00 82 0000 00000001 1ec7 9c41 00000e10")]  # 7879's, not ours
    serve, received, port = await _gateway(answers)
    router = _natpmp_at(port)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        with trio.fail_after(5):
            assert await router.map(PORT, PORT, LIFETIME) == Grant(40001, 3600)
            await router.delete(PORT, 40001)
            with pytest.raises(RouterError, match="the router mapped port 7879, not 7878"):
                await router.map(PORT, PORT, LIFETIME)
        nursery.cancel_scope.cancel()
    assert [data for _, data in received] == [_natpmp.map_request(PORT, PORT, LIFETIME),
                                              _natpmp.delete_request(PORT), _natpmp.map_request(PORT, PORT, LIFETIME)]


@pytest.mark.parametrize("answer, reason", [
    ("00 82 0002 00000001", "the router refused: Not Authorized (2)"),
    ("02 82 0001 00000001", "the router's NAT-PMP answer is malformed: version 2, not 0 (a PCP router, RFC 6887)"),
])
async def test_a_nat_pmp_refusal_or_nonsense_is_the_router_s_answer(answer, reason):
    serve, _, port = await _gateway([bytes.fromhex(answer)])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        with trio.fail_after(5), pytest.raises(RouterError) as failed:
            await _natpmp_at(port).map(PORT, PORT, LIFETIME)
        nursery.cancel_scope.cancel()
    assert (failed.value.reason, failed.value.answered) == (reason, True)


async def test_a_gateway_with_nothing_on_the_port_fails_at_once():
    with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as closed:
        await closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = trio.current_time()
    with trio.fail_after(5), pytest.raises(RouterError) as failed:
        await _natpmp_at(port).find()
    assert (failed.value.reason, failed.value.answered) == ("the gateway 127.0.0.1 has no NAT-PMP", False)
    assert trio.current_time() - started < NATPMP_FIRST_WAIT
