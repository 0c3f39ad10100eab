"""A host at home behind a real router, joined from the internet: ``p2pwhist host`` in a home
namespace behind a masquerading router running Debian's miniupnpd, ``p2pwhist join`` in an
"internet" namespace with no route into the home (tests/netns.py). The host's first join line
is its router's address; a hand is played through the NAT and both transcripts verify; when
the host stops, after its match or by Ctrl-C, the router's table holds no mapping. With no
router daemon, the host says so in one line and a joiner on its LAN still plays.

These need root, iproute2, nftables and miniupnpd (.ci/run installs them); elsewhere they skip,
but under CI=true they fail (``netns.unavailable``)."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns import HOME, ROUTER_WAN, Forward, HomeRouter, Network, forwards, home_router, require, start_miniupnpd, stop
from netutil import Finished

from p2pwhist.limits import DEFAULT_PORT
from p2pwhist.transcript import read_transcript
from p2pwhist.verify import verify

MAPPED = re.compile(r"Others join with one of:\n  p2pwhist join (\S+) --expect (\S+)  "
                    r"# from the internet \(port mapped by your router\)\n")


@pytest.fixture
def house(tmp_path: Path) -> Iterator[tuple[Network, HomeRouter]]:
    require("nft", "miniupnpd")
    with Network(tmp_path) as network:
        yield network, home_router(network)


def played_and_verified(*finished: Finished) -> None:
    for done in finished:
        assert done.code == 0 and "Traceback" not in done.err, done.err
        transcript = Path(re.findall(r"Transcript: (\S+)", done.out)[-1])
        verdict = verify(read_transcript(transcript))
        assert verdict.valid and verdict.complete, verdict.error


def test_a_friend_on_the_internet_joins_at_the_router_s_address_and_the_mapping_goes_with_the_host(house) -> None:
    network, home = house
    start_miniupnpd(network, home)
    alice = home.home.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--hands", "1")
    where, fp = alice.wait_for(MAPPED).groups()
    assert where == ROUTER_WAN  # the default port, so none is written
    assert forwards(home) == [Forward(DEFAULT_PORT, HOME, DEFAULT_PORT)]
    bob = home.internet.p2pwhist("bob", "join", where, "--expect", fp, "--name", "bob", "--bot", "random")
    played_and_verified(bob.finish(), alice.finish())
    assert forwards(home) == []


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGHUP], ids=["ctrl-c", "window-closed"])
def test_ctrl_c_or_a_closed_window_at_the_host_removes_its_mapping(house, how) -> None:
    network, home = house
    start_miniupnpd(network, home, upnp=False)  # NAT-PMP only: the other way of asking
    alice = home.home.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--port", "40123")
    assert alice.wait_for(MAPPED)[1] == f"{ROUTER_WAN}:40123"
    assert forwards(home) == [Forward(40123, HOME, 40123)]
    assert stop(alice, how) == 130
    assert forwards(home) == []


def test_with_no_router_to_ask_the_host_says_what_to_do_and_its_lan_still_plays(house) -> None:
    network, home = house  # miniupnpd is not started
    alice = home.home.p2pwhist("alice", "host", "--name", "alice", "--bot", "random", "--hands", "1")
    said = alice.wait_for(r"Not reachable from the internet through your router: .*\n")[0]
    assert said == ("Not reachable from the internet through your router: no router answered within 3 s. To play "
                    f"across the internet, forward TCP port {DEFAULT_PORT} on your router to this machine ({HOME}), "
                    "or play over a VPN such as Tailscale.\n")
    lan_line = alice.wait_for(rf"  p2pwhist join {re.escape(HOME)} --expect (\S+)\n")
    assert "# from the internet" not in alice.out.read_text()  # no join line for it
    # the router's own namespace is on the home's LAN (192.168.77.1): a neighbour there joins
    bob = home.router.p2pwhist("bob", "join", HOME, "--expect", lan_line[1], "--name", "bob", "--bot", "random")
    played_and_verified(bob.finish(), alice.finish())
