"""The namespace harness itself (tests/netns.py): its skip that CI turns into a failure, and
the LAN topology that discovery tests build on, where multicast reaches every other host and
``python -m p2pwhist`` plays across namespaces."""

from __future__ import annotations

import sys

import pytest
from netns import Network, lan, require, unavailable
from netutil import HOST_LINE

# Joins the mDNS group on the host's LAN interface, says so, then prints the first datagram.
RECEIVER = """
import socket, struct
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("224.0.0.251", 5353))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("4s4s", socket.inet_aton("224.0.0.251"),
                                                                            socket.inet_aton("0.0.0.0")))
    s.settimeout(10)
    print("ready", flush=True)
    data, sender = s.recvfrom(100)
    print(f"{data.decode()} from {sender[0]}", flush=True)
"""
SENDER = """
import socket
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    s.sendto(b"hello", ("224.0.0.251", 5353))
"""


def test_unavailable_skips_but_fails_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no tool"):
        unavailable("no tool")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no tool; CI=true, where the network namespace tests must run"):
        unavailable("no tool")


def test_multicast_from_one_host_reaches_every_other_on_the_lan(tmp_path):
    require()
    with Network(tmp_path) as network:
        hosts = lan(network, 3)
        receivers = [host.python(f"receiver{i}", "-c", RECEIVER) for i, host in enumerate(hosts.namespaces[1:], 1)]
        for receiver in receivers:
            receiver.wait_for("ready")
        hosts.namespaces[0].run(sys.executable, "-c", SENDER)
        for receiver in receivers:
            receiver.wait_for(f"hello from {hosts.addresses[0]}")


def test_p2pwhist_plays_between_namespaces_on_the_lan(tmp_path):
    require()
    with Network(tmp_path) as network:
        hosts = lan(network, 2)
        host = hosts.namespaces[0].p2pwhist("alice", "host", "--bind", hosts.addresses[0], "--port", "0",
                                            "--name", "alice", "--bot", "random", "--hands", "1", "--timeout", "20")
        found = host.wait_for(HOST_LINE)
        joiner = hosts.namespaces[1].p2pwhist("bob", "join", f"{hosts.addresses[0]}:{found[1]}", "--expect", found[2],
                                              "--name", "bob", "--bot", "random")
        ends = [host.finish(), joiner.finish()]
    assert [end.code for end in ends] == [0, 0], [end.err for end in ends]
    assert ends[0].result_line() == ends[1].result_line()
