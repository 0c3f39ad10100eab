"""``hold_mapping`` against a real router: Debian's miniupnpd in a network namespace between a
home and an "internet" (tests/netns.py), with a host process in the home namespace
(tests/portmap_probe.py). What only a real router shows: the mapping made by UPnP-IGD or by
NAT-PMP, a connection from the internet reaching the home through it, its removal when the
host is interrupted with Ctrl-C (SIGINT), and the wait with no router at all.

These need root, iproute2, nftables and miniupnpd (.ci/run installs them); elsewhere they skip,
but under CI=true they fail (``netns.unavailable``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from netns import (
    HOME,
    ROUTER_WAN,
    Forward,
    HomeRouter,
    Network,
    forwards,
    home_router,
    require,
    start_miniupnpd,
    stop,
)
from portmap_probe import GREETING

from p2pwhist.reach.portmap import FIRST_TRY

PROBE = "tests/portmap_probe.py"
# A second machine on the home network, which exists only as the target of a mapping.
NEIGHBOUR = "192.168.77.3"
TAKEN_PORT = 40000


@pytest.fixture
def house(tmp_path) -> Iterator[tuple[Network, HomeRouter]]:
    require("nft", "miniupnpd")
    with Network(tmp_path) as network:
        yield network, home_router(network)


def _probe(network: Network, house: HomeRouter, *args: str) -> tuple[dict, object]:
    """Start the probe in the home namespace; return its JSON line and its process."""
    probe = house.home.python("probe", PROBE, *args)
    return json.loads(probe.wait_for(r"\{.*\}")[0]), probe


def _greeting_from_internet(house: HomeRouter, port: int) -> bytes:
    """What a connection from the internet namespace to the router's WAN address reads."""
    reader = ("import socket, sys\n"
              f"with socket.create_connection(({ROUTER_WAN!r}, {port}), timeout=5) as s:\n"
              "    sys.stdout.write(s.recv(100).decode())\n")
    return house.internet.run(sys.executable, "-c", reader).encode()


def _mapped_and_removed_on_ctrl_c(network: Network, house: HomeRouter, method: str) -> None:
    result, probe = _probe(network, house)
    assert result["kind"] == "Mapped", result
    assert (result["external"], result["method"], result["public"]) == (ROUTER_WAN, method, True)
    assert result["seconds"] < FIRST_TRY
    assert forwards(house) == [Forward(result["port"], HOME, result["listening"])]
    assert _greeting_from_internet(house, result["port"]) == GREETING

    assert stop(probe) == 0
    assert probe.out.read_text().splitlines()[-1] == "stopped"
    assert forwards(house) == []


def test_upnp_igd_maps_the_port_the_internet_reaches_and_ctrl_c_removes_it(house):
    network, home = house
    start_miniupnpd(network, home)
    _mapped_and_removed_on_ctrl_c(network, home, "UPnP-IGD")


def test_nat_pmp_maps_the_port_where_the_router_has_no_upnp(house):
    network, home = house
    start_miniupnpd(network, home, upnp=False)
    _mapped_and_removed_on_ctrl_c(network, home, "NAT-PMP")


def test_with_no_router_daemon_it_is_not_mapped_within_the_first_try(house):
    network, home = house
    result, probe = _probe(network, home)
    assert result["kind"] == "NotMapped", result
    assert result["reason"] == f"no router answered within {FIRST_TRY:g} s"
    assert result["seconds"] < FIRST_TRY + 1
    assert probe.finish().code == 0


def test_an_external_port_another_machine_holds_gets_another_from_the_router(house):
    network, home = house
    start_miniupnpd(network, home, secure=False)  # so that home may map a port to its neighbour
    neighbours = ("import miniupnpc\n"
                  "u = miniupnpc.UPnP(discoverdelay=1000); u.discover(); u.selectigd()\n"
                  f"u.addportmapping({TAKEN_PORT}, 'TCP', {NEIGHBOUR!r}, {TAKEN_PORT}, 'neighbour', '', 3600)\n")
    home.home.run(sys.executable, "-c", neighbours)

    result, probe = _probe(network, home, str(TAKEN_PORT))
    assert result["kind"] == "Mapped", result
    assert result["port"] != TAKEN_PORT
    theirs, ours = Forward(TAKEN_PORT, NEIGHBOUR, TAKEN_PORT), Forward(result["port"], HOME, TAKEN_PORT)
    assert sorted(forwards(home), key=lambda forward: forward.address) == [ours, theirs]
    assert _greeting_from_internet(home, result["port"]) == GREETING

    assert stop(probe) == 0
    assert forwards(home) == [theirs]
