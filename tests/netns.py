"""Small networks of Linux network namespaces, for tests that need real routing, NAT and
multicast on one machine: a home behind a router running miniupnpd, or hosts on one LAN.

``Network`` makes namespaces and the veth links between them, starts processes inside them,
and undoes it all at the end of its ``with``, after a failure too: it kills the processes it
started, then deletes the namespaces, whose interfaces go with them. Every name it makes holds
this test run's pid and a counter, so runs and tests never share one. ``home_router`` and
``lan`` build the two topologies on a ``Network``; ``start_miniupnpd`` runs Debian's router
daemon in the first, and ``forwards`` reads its port mappings from the router's nftables.

A test calls ``require`` first: where namespaces cannot be made (not root, a tool missing) it
skips, saying why, except under CI (CI=true), where it fails, so that CI never passes by
skipping: ``unavailable``. Every command and wait has a deadline.

    with Network(tmp_path) as network:
        hosts = lan(network, 2)
        host = hosts.namespaces[0].p2pwhist("alice", "host", "--bot", "random", "--port", "0")
        host.wait_for(r"on port (\\d+)")
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Self

import pytest
from netutil import Peer

# The most one command (``ip``, ``nft``...) may take; each takes milliseconds.
COMMAND_DEADLINE = 10.0
# The most a process may take to exit once told to.
EXIT_DEADLINE = 5.0
REPOSITORY = Path(__file__).resolve().parent.parent
# Tools live in /usr/sbin, which a user's PATH may lack.
_SEARCHED = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
_RUNS = itertools.count()  # numbers the Networks of this process, for unique names


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason``; under CI (the environment has CI=true) fail instead,
    since there the namespace tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, where the network namespace tests must run", pytrace=False)
    pytest.skip(reason)


def require(*tools: str) -> None:
    """Go on only as root with ``ip`` and every one of ``tools`` installed (``unavailable``)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        unavailable("network namespaces need Linux and root")
    missing = [name for name in ("ip", *tools) if shutil.which(name, path=_SEARCHED) is None]
    if missing:
        unavailable(f"not installed: {', '.join(missing)} (.ci/run installs them)")


def tool(name: str) -> str:
    """The full path of the installed command ``name``."""
    found = shutil.which(name, path=_SEARCHED)
    assert found is not None, f"{name} is not installed (call require first)"
    return found


def run(*argv: str, stdin: str | None = None) -> str:
    """Run a command to its end within ``COMMAND_DEADLINE`` and return its output; a failure
    raises AssertionError with what it said."""
    try:
        done = subprocess.run([tool(argv[0]), *argv[1:]], input=stdin, capture_output=True, text=True,
                              timeout=COMMAND_DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(argv)} took over {COMMAND_DEADLINE:g} s") from None
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


class Namespace:
    """One network namespace of a ``Network``, and the commands and processes run in it."""

    def __init__(self, network: Network, name: str) -> None:
        self.network = network
        self.name = name

    def run(self, *argv: str, stdin: str | None = None) -> str:
        """``run`` inside this namespace."""
        return run("ip", "netns", "exec", self.name, tool(argv[0]), *argv[1:], stdin=stdin)

    def start(self, label: str, *argv: str, env: dict[str, str] | None = None, merged: bool = False) -> Peer:
        """Start ``argv`` inside this namespace, with ``env`` added to this process's
        environment, its output in files under the network's folder named by ``label`` (the
        returned ``Peer`` reads them; ``merged``: stderr into stdout's file, for a program that
        logs on stderr); the ``Network`` kills it at its end if it still runs.
        ``ip netns exec`` execs the command, so the process is the command itself: a signal
        sent to it reaches the command."""
        folder = self.network.root / label
        folder.mkdir(parents=True, exist_ok=True)
        number = len(self.network.processes)
        out, err = self.network.root / f"{number}-{label}.out", self.network.root / f"{number}-{label}.err"
        command = [tool("ip"), "netns", "exec", self.name, *argv]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            popen = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout,
                                     stderr=subprocess.STDOUT if merged else stderr, env={**os.environ, **(env or {})})
        peer = Peer(label, folder, popen, out, out if merged else err)
        self.network.processes.append(peer)
        return peer

    def python(self, label: str, *args: str, env: dict[str, str] | None = None) -> Peer:
        """This Python with ``args``, importing p2pwhist from this repository."""
        path = os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
        return self.start(label, sys.executable, *args, env={"PYTHONPATH": path, **(env or {})})

    def p2pwhist(self, label: str, *args: str, env: dict[str, str] | None = None) -> Peer:
        """``python -m p2pwhist ARGS`` with its own ``P2PWHIST_HOME``, the folder of ``label``
        (kept across runs with the same label, as in ``netutil.Peers``)."""
        home = self.network.root / label
        return self.python(label, "-m", "p2pwhist", *args, env={"P2PWHIST_HOME": str(home), **(env or {})})


class Network:
    """Namespaces, links and processes made for one test, all undone at the end of the
    ``with``. ``root`` is a folder for the processes' files (a test's ``tmp_path``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.run_number = next(_RUNS)
        self.prefix = f"p2pw{os.getpid()}r{self.run_number}"
        self.namespaces: list[Namespace] = []
        self.processes: list[Peer] = []
        self._links = itertools.count()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            if process.running:
                process.popen.kill()
            process.popen.wait(EXIT_DEADLINE)
        for namespace in reversed(self.namespaces):
            subprocess.run([tool("ip"), "netns", "delete", namespace.name], capture_output=True,
                           timeout=COMMAND_DEADLINE)

    def namespace(self, role: str) -> Namespace:
        """A new namespace named for its ``role``, its loopback up."""
        name = f"{self.prefix}-{role}"
        try:
            run("ip", "netns", "add", name)
        except AssertionError as error:
            unavailable(f"cannot make a network namespace here: {error}")
        namespace = Namespace(self, name)
        self.namespaces.append(namespace)
        run("ip", "-n", name, "link", "set", "lo", "up")
        return namespace

    def link(self, a: Namespace, a_address: str | None, b: Namespace, b_address: str | None) -> tuple[str, str]:
        """A veth pair between ``a`` and ``b``, both ends up, each with its address (as
        "10.0.0.1/24"; None: none); returns the two interfaces' names, ``a``'s first."""
        number = next(self._links)
        # An interface name has at most 15 characters: the pid in hexadecimal (up to 6 digits),
        # then the counters, each after a letter.
        a_end, b_end = (f"v{os.getpid():x}r{self.run_number}l{number}{end}" for end in "ab")
        run("ip", "link", "add", a_end, "netns", a.name, "type", "veth", "peer", "name", b_end, "netns", b.name)
        for namespace, end, address in ((a, a_end, a_address), (b, b_end, b_address)):
            if address is not None:
                run("ip", "-n", namespace.name, "address", "add", address, "dev", end)
            run("ip", "-n", namespace.name, "link", "set", end, "up")
        return a_end, b_end


# -- a home behind a router --------------------------------------------------------------------

HOME = "192.168.77.2"
ROUTER_LAN = "192.168.77.1"
# miniupnpd maps nothing on a private or reserved external address (RFC 1918, 100.64/10, the
# documentation ranges), so the router's WAN side has a public-looking one; harmless, since
# these namespaces have no route out of the machine.
ROUTER_WAN = "11.0.0.1"
INTERNET = "11.0.0.2"


@dataclass
class HomeRouter:
    """home (``HOME``) — router (``ROUTER_LAN`` | ``ROUTER_WAN``, masquerading) — internet
    (``INTERNET``, with no route to the home network)."""

    home: Namespace
    router: Namespace
    internet: Namespace
    lan_interface: str  # the router's, toward home
    wan_interface: str  # the router's, toward the internet


# The router's nftables: what Debian's /etc/miniupnpd/nft_init.sh makes (a forward chain jumping
# to miniupnpd's own, nat prerouting and postrouting chains jumping to its two nat chains, all
# in table inet filter, miniupnpd's default), with the forward policy accept instead of drop, and
# masquerading of the home network out of the WAN side.
_ROUTER_RULES = """
table inet filter {{
    chain forward {{
        type filter hook forward priority 0; policy accept;
        jump miniupnpd
    }}
    chain miniupnpd {{
    }}
    chain prerouting {{
        type nat hook prerouting priority -100; policy accept;
        jump prerouting_miniupnpd
    }}
    chain postrouting {{
        type nat hook postrouting priority 100; policy accept;
        jump postrouting_miniupnpd
        ip saddr {home_network} oifname "{wan}" masquerade
    }}
    chain prerouting_miniupnpd {{
    }}
    chain postrouting_miniupnpd {{
    }}
}}
"""


def home_router(network: Network) -> HomeRouter:
    """The three namespaces of a home behind a NAT router (``HomeRouter``), routed and
    masquerading; no daemon runs in the router yet (``start_miniupnpd``)."""
    home, router, internet = network.namespace("home"), network.namespace("router"), network.namespace("internet")
    _, lan_interface = network.link(home, f"{HOME}/24", router, f"{ROUTER_LAN}/24")
    wan_interface, _ = network.link(router, f"{ROUTER_WAN}/24", internet, f"{INTERNET}/24")
    run("ip", "-n", home.name, "route", "add", "default", "via", ROUTER_LAN)
    router.run("sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward")
    router.run("nft", "-f", "-", stdin=_ROUTER_RULES.format(home_network=f"{HOME}/24", wan=wan_interface))
    return HomeRouter(home, router, internet, lan_interface, wan_interface)


def start_miniupnpd(network: Network, house: HomeRouter, *, upnp: bool = True, natpmp: bool = True,
                    secure: bool = True) -> Peer:
    """Debian's miniupnpd (its nftables build) in the router, in the foreground (-d), with a
    configuration written for this test: listening on the home side, mapping on the WAN side,
    UPnP-IGD and NAT-PMP each on or off, secure mode (a client maps ports to itself only;
    ``secure`` False lets a test map a port to another machine), and one rule allowing the
    home network's unprivileged ports. It has its own pid file, so that routers of other tests
    and runs never meet (miniupnpd refuses to start while its pid file names a live process).
    Returns once it listens."""
    folder = network.root / "miniupnpd"
    folder.mkdir(exist_ok=True)
    config = folder / "miniupnpd.conf"
    config.write_text("\n".join([
        f"ext_ifname={house.wan_interface}",
        f"listening_ip={house.lan_interface}",
        "port=0",  # any free port for its HTTP (SOAP) server
        f"enable_upnp={'yes' if upnp else 'no'}",
        f"enable_natpmp={'yes' if natpmp else 'no'}",
        f"secure_mode={'yes' if secure else 'no'}",
        f"uuid={uuid.uuid4()}",
        "upnp_table_name=filter",
        "upnp_nat_table_name=filter",
        f"allow 1024-65535 {HOME}/24 1024-65535",
        "deny 0-65535 0.0.0.0/0 0-65535",
    ]) + "\n")
    daemon = house.router.start("miniupnpd", tool("miniupnpd"), "-d", "-4", "-f", str(config),
                                "-P", str(folder / "miniupnpd.pid"), merged=True)
    # With -d miniupnpd logs on stderr; its last line before it serves says what it listens on.
    daemon.wait_for("Listening for NAT-PMP/PCP traffic" if natpmp else "HTTP listening on port")
    return daemon


def stop(process: Peer, how: signal.Signals = signal.SIGINT) -> int:
    """Interrupt ``process`` as Ctrl-C does (SIGINT; or ``how``, say a hang-up) and return its
    exit status."""
    process.popen.send_signal(how)
    try:
        return process.popen.wait(EXIT_DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{process.name} did not exit within {EXIT_DEADLINE:g} s of {how.name}:\n"
                             f"{process.out.read_text()}\n{process.err.read_text()}") from None


@dataclass(frozen=True)
class Forward:
    """One port mapping in the router's table: TCP to ``external_port`` goes to
    ``address``:``port``."""

    external_port: int
    address: str
    port: int


def forwards(house: HomeRouter) -> list[Forward]:
    """The port mappings miniupnpd holds now, read from its nat chain: each is a rule such as
    ``iif "v1l1b" tcp dport 40000 dnat ip to 192.168.77.2:40000``."""
    chain = house.router.run("nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd")
    return [Forward(int(found[1]), found[2], int(found[3]))
            for found in re.finditer(r"dport (\d+) .*?dnat ip to ([\d.]+):(\d+)", chain)]


# -- hosts on one LAN ----------------------------------------------------------------------------

LAN_NETWORK = "10.77.0"


@dataclass
class Lan:
    """Hosts on one Ethernet: a bridge (in a namespace of its own, ``switch``) with a veth to
    each host; host i has address ``addresses[i]`` (10.77.0.(i+1)/24)."""

    switch: Namespace
    namespaces: list[Namespace]
    addresses: list[str]


def lan(network: Network, count: int) -> Lan:
    """``count`` hosts on one bridge. Multicast works between them: the bridge floods it (its
    IGMP snooping is off, so no querier is needed), and each host's default route is the
    bridge's link, so a multicast or any other send has a way out (and p2pwhist.addresses
    finds the host's address as the default route's source)."""
    switch = network.namespace("switch")
    switch.run("ip", "link", "add", "bridge", "type", "bridge", "mcast_snooping", "0")
    switch.run("ip", "link", "set", "bridge", "up")
    hosts, addresses = [], []
    for index in range(count):
        host = network.namespace(f"host{index}")
        address = f"{LAN_NETWORK}.{index + 1}"
        host_end, switch_end = network.link(host, f"{address}/24", switch, None)
        switch.run("ip", "link", "set", switch_end, "master", "bridge")
        run("ip", "-n", host.name, "route", "add", "default", "dev", host_end)
        hosts.append(host)
        addresses.append(address)
    return Lan(switch, hosts, addresses)
