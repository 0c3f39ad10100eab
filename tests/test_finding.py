"""Finding each other and learning the game: ``p2pwhist rules``, the join commands a host
prints for each of its addresses, the addresses ``join`` takes, and ``--expect`` as trust.

The printed commands are tested on given addresses (``addresses.join_commands``), not on this
machine's interfaces, which differ from one machine to the next; what this machine's own
list must look like whatever its interfaces is tested too. Nothing here sends a packet to
any address but loopback; ``--expect`` as trust is tested at a table in memory (``memnet``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from memnet import Hosted
from netutil import DEADLINE, HOST_LINE, Finished, Peers

from p2pwhist import addresses, net
from p2pwhist.addresses import parse_address
from p2pwhist.games.base import ConfigError
from p2pwhist.games.registry import GAMES
from p2pwhist.home import KnownPeers
from p2pwhist.limits import DEFAULT_PORT
from p2pwhist.signed import fingerprint, public_bytes

FP = "c2e7-cd7c-1ede-4200-6b31-45ec-4851-2dba"


def run(*args: str, home: Path | None = None) -> Finished:
    env = {**os.environ, "P2PWHIST_HOME": str(home)} if home else None
    done = subprocess.run([sys.executable, "-m", "p2pwhist", *args], capture_output=True, text=True,
                          timeout=DEADLINE, stdin=subprocess.DEVNULL, env=env, check=False)
    return Finished(done.returncode, done.stdout, done.stderr)


# -- p2pwhist rules ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(GAMES))
def test_rules_prints_each_games_rules_for_players(name):
    done = run("rules", name)
    assert done.code == 0 and done.err == "", done.err
    assert done.out == GAMES[name].text.rules.rstrip("\n") + "\n"
    assert GAMES[name].text.title in done.out


def test_rules_without_a_game_lists_the_games_and_how_to_read_their_rules():
    done = run("rules")
    assert done.code == 0 and done.err == "", done.err
    lines = done.out.splitlines()
    for name, entry in GAMES.items():
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert entry.text.title in line
        low, high = min(entry.players), max(entry.players)
        if low == high:  # one table size: nothing to choose
            assert f"  {low} players" in line and "usually" not in line
        else:
            assert f"{low} to {high} players" in line and f"usually {entry.default_players}" in line
        for option in entry.options:
            assert all(str(choice) in line for choice in option.choices)
    assert "variants seed (the default), pagat" in done.out  # Box's, the default first
    assert "p2pwhist rules GAME" in done.out


def test_rules_of_an_unknown_game_is_a_one_line_usage_error_naming_the_games():
    done = run("rules", "bridge")
    assert done.code == 2 and done.out == ""
    line = done.error_line()
    assert "'bridge'" in line and all(name in line for name in GAMES)


def test_rules_is_explained_by_help_and_in_the_commands_list():
    assert "rules [GAME]" in run("--help").out
    helped = run("rules", "--help")
    assert helped.code == 0
    assert "GAME" in helped.out and "written for players" in helped.out
    assert all(name in helped.out for name in GAMES)


# -- the join commands a host prints -------------------------------------------------------


def _address_of(command: str) -> str:
    """The address argument of a printed ``p2pwhist join ADDRESS --expect FP  # note``."""
    words = command.split()
    assert words[:2] == ["p2pwhist", "join"] and words[3:5] == ["--expect", FP], command
    return words[2]


def test_join_commands_put_ipv4_first_ipv6_in_brackets_and_loopback_last_marked():
    lines = addresses.join_commands([("2001:db8::7", 7878), ("192.168.1.20", 7878), ("fd00::2", 7878),
                                ("10.8.0.3", 7878), ("127.0.0.1", 7878)], FP)
    assert lines == [
        f"p2pwhist join 192.168.1.20 --expect {FP}",
        f"p2pwhist join 10.8.0.3 --expect {FP}",
        f"p2pwhist join [2001:db8::7] --expect {FP}",
        f"p2pwhist join [fd00::2] --expect {FP}",
        f"p2pwhist join 127.0.0.1 --expect {FP}  # this machine only",
    ]


def test_join_commands_name_the_port_unless_it_is_the_default():
    lines = addresses.join_commands([("192.168.1.20", 40000), ("fd00::2", 40001), ("::1", 40001)], FP)
    assert [_address_of(line) for line in lines] == ["192.168.1.20:40000", "[fd00::2]:40001", "[::1]:40001"]
    assert lines[-1].endswith("# this machine only")


def test_link_local_addresses_are_left_out_unless_nothing_else_is_there():
    link_local = [("fe80::fc:ff:fe00:1%eth0", 7878), ("169.254.7.7", 7878)]
    with_lan = addresses.join_commands([*link_local, ("192.168.1.20", 7878), ("127.0.0.1", 7878)], FP)
    assert [_address_of(line) for line in with_lan] == ["192.168.1.20", "127.0.0.1"]
    alone = addresses.join_commands([*link_local, ("127.0.0.1", 7878)], FP)
    # our zone (eth0) means nothing on the joiner's machine: it is left out, and the line says so
    assert [_address_of(line) for line in alone] == ["[fe80::fc:ff:fe00:1]", "169.254.7.7", "127.0.0.1"]
    assert "link-local" in alone[0] and "interface" in alone[0] and "link-local" in alone[1]
    assert alone[-1].endswith("# this machine only")


def test_join_commands_skip_repeats_and_unspecified_addresses_and_keep_names():
    lines = addresses.join_commands([("0.0.0.0", 7878), ("::", 7878), ("192.168.1.20", 7878), ("192.168.1.20", 7878),
                                ("localhost", 7878)], FP)
    assert [_address_of(line) for line in lines] == ["192.168.1.20", "localhost"]
    assert lines[-1].endswith("# this machine only")
    (named,) = addresses.join_commands([("table.example.net", 7900)], FP)
    assert named == f"p2pwhist join table.example.net:7900 --expect {FP}"


def test_every_printed_address_is_one_join_takes():
    given = [("192.168.1.20", 7878), ("fd00::2", 40001), ("2001:db8::7", 7878), ("127.0.0.1", 40000), ("::1", 7878)]
    for line, (address, port) in zip(addresses.join_commands(given, FP), given):
        assert parse_address(_address_of(line)) == (address, port)


def test_a_pasted_line_runs_in_a_shell_the_mark_being_a_comment():
    (line,) = addresses.join_commands([("127.0.0.1", 7878)], FP)
    command, mark = line.split("  # ")
    assert mark == "this machine only" and "#" not in command


def test_a_bound_address_is_the_only_one(monkeypatch):
    monkeypatch.setattr(addresses, "_interface_addresses", lambda family: pytest.fail("interfaces read with --bind"))
    assert addresses.addresses("192.168.1.20", {socket.AF_INET: 7900}) == [("192.168.1.20", 7900)]
    assert addresses.addresses("::1", {socket.AF_INET6: 7900}) == [("::1", 7900)]


def test_this_machines_addresses_come_per_family_with_one_loopback_last(monkeypatch):
    interfaces = {socket.AF_INET: ["127.0.0.1", "10.8.0.3", "192.168.1.20"],
                  socket.AF_INET6: ["::1", "fd00::2", "fe80::1%eth0"]}
    routed = {socket.AF_INET: ["192.168.1.20"], socket.AF_INET6: []}
    monkeypatch.setattr(addresses, "_interface_addresses", lambda family: interfaces[family])
    monkeypatch.setattr(addresses, "_routed_address", lambda family, probe: routed[family])
    found = addresses.addresses(None, {socket.AF_INET: 7000, socket.AF_INET6: 7001})
    # the default route's address first; each family with its own listener's port
    assert found == [("192.168.1.20", 7000), ("10.8.0.3", 7000), ("fd00::2", 7001), ("fe80::1%eth0", 7001),
                     ("127.0.0.1", 7000)]
    assert addresses.addresses("::", {socket.AF_INET6: 7001}) == [("fd00::2", 7001), ("fe80::1%eth0", 7001), ("::1", 7001)]
    assert addresses.addresses("0.0.0.0", {socket.AF_INET: 7000})[-1] == ("127.0.0.1", 7000)


def test_this_machines_own_list_has_the_expected_shape():
    """Whatever this machine's interfaces: addresses of the families listened on, loopback
    once and last, every line one that join takes."""
    found = addresses.addresses(None, {socket.AF_INET: 7878, socket.AF_INET6: 7878})
    assert found[-1] == ("127.0.0.1", 7878)
    assert all(not addresses._is_loopback(address) for address, _ in found[:-1])
    lines = addresses.join_commands(found, FP)
    assert lines[-1].endswith("# this machine only")
    assert sum("this machine only" in line for line in lines) == 1
    for line in lines:
        parse_address(_address_of(line))


def test_a_host_bound_to_loopback_prints_one_join_command_for_this_machine_only(tmp_path):
    with Peers(tmp_path) as peers:
        host = peers.host("alice")  # --bind 127.0.0.1 --port 0
        host.peer.wait_for("this machine only")
        out = host.peer.out.read_text()
    lines = out.splitlines()
    start = lines.index("Others join with:")
    commands = [line for line in lines[start + 1 :] if line.startswith("  p2pwhist join")]
    assert commands == [f"  p2pwhist join 127.0.0.1:{host.port} --expect {host.fingerprint}  # this machine only"]


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the host does: TIME_WAIT is no hindrance
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_join_without_a_port_reaches_a_host_on_the_default_port(tmp_path):
    if not _port_is_free(DEFAULT_PORT):
        pytest.skip(f"port {DEFAULT_PORT} is taken on this machine")
    with Peers(tmp_path) as peers:
        hosting = peers.start("alice", "host", "--bind", "127.0.0.1", "--name", "alice", "--bot", "random",
                              "--hands", "1", "--timeout", "20")
        try:
            found = hosting.wait_for(HOST_LINE)
        except AssertionError:
            if "cannot listen" in hosting.err.read_text():  # taken since we looked
                pytest.skip(f"port {DEFAULT_PORT} is taken on this machine")
            raise
        assert found[1] == str(DEFAULT_PORT)
        hosting.wait_for(re.escape(f"  p2pwhist join 127.0.0.1 --expect {found[2]}  # this machine only"))
        joined = peers.start("bob", "join", "127.0.0.1", "--expect", found[2], "--name", "bob", "--bot", "random").finish()
        hosted = hosting.finish()
    assert joined.code == 0 and hosted.code == 0, (joined.err, hosted.err)
    assert joined.result_line() == hosted.result_line()


# -- the addresses join takes --------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("192.168.1.20", ("192.168.1.20", DEFAULT_PORT)),
    ("192.168.1.20:7900", ("192.168.1.20", 7900)),
    ("table.example.net", ("table.example.net", DEFAULT_PORT)),
    ("table.example.net.:1", ("table.example.net.", 1)),
    ("my-laptop:65535", ("my-laptop", 65535)),
    ("localhost", ("localhost", DEFAULT_PORT)),
    ("[::1]", ("::1", DEFAULT_PORT)),
    ("[::1]:7900", ("::1", 7900)),
    ("[2001:db8::7]", ("2001:db8::7", DEFAULT_PORT)),
    ("[fd00::2]:40001", ("fd00::2", 40001)),
    ("[fe80::1%eth0]", ("fe80::1%eth0", DEFAULT_PORT)),
    ("[fe80::1%eth0]:7900", ("fe80::1%eth0", 7900)),
])
def test_join_takes_a_host_with_or_without_a_port(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text, why", [
    ("", "no host"),
    (":7878", "no host"),
    ("host:", "port"),
    ("host:0", "port"),
    ("host:65536", "port"),
    ("host:-1", "port"),
    ("host:+80", "port"),
    ("host:٧٨", "port"),  # digits, but not ASCII ones
    ("host:port", "port"),
    ("::1", "in brackets"),
    ("2001:db8::7:7878", "in brackets"),  # a port, or the address's last group?
    ("http://host:7878", "too many ':'"),
    ("[::1", "no ']'"),
    ("[::1]7878", "':PORT'"),
    ("[::1]:", "port"),
    ("[192.168.1.20]:7878", "not an IPv6 address"),
    ("[table.example.net]", "not an IPv6 address"),
    ("two words", "not a host name"),
    ("-flag", "not a host name"),
    (".hidden", "not a host name"),
    ("user@host", "not a host name"),
    ("1.2.3", "not an IPv4 address"),
    ("256.1.1.1:7878", "not an IPv4 address"),
])
def test_join_refuses_anything_else_in_one_line(text, why):
    with pytest.raises(ConfigError) as refused:
        parse_address(text)
    message = str(refused.value)
    assert why in message and repr(text) in message and "\n" not in message


@pytest.mark.parametrize("address", ["[::1", "host:99999", "::1"])
def test_a_bad_address_is_a_one_line_usage_error(address, tmp_path):
    done = run("join", address, "--bot", "random", home=tmp_path)
    assert done.code == 2
    assert repr(address) in done.error_line()
    assert not list(tmp_path.iterdir())  # refused before anything else: no key made


# -- join --expect counts as trust ---------------------------------------------------------


async def _seated_match(tmp_path, bob_expects: bool) -> list[str]:
    """alice hosts (a bot), bob and carol join, in memory; bob has a person to ask about new
    keys. Whom bob was asked about."""
    asked: list[str] = []

    async def ask(question: str) -> bool:
        asked.append(question.split("'")[1])  # New player 'NAME' with key ...
        return True

    async with trio.open_nursery() as nursery:
        hosted = Hosted(tmp_path, nursery, players=3)
        alice_print = fingerprint(public_bytes(hosted.options.key.public_key()))
        bob = await hosted.join("bob", seed=1, source="10.0.0.2", expect=alice_print if bob_expects else None,
                                known=KnownPeers(tmp_path / "bob_known"), ask=ask)
        while not hosted.said("bob joined"):
            await trio.sleep(0.1)
        carol = await hosted.join("carol", seed=2, source="10.0.0.3")
        ends = [await hosted.end(), await bob(), await carol()]
    assert all(isinstance(end, net.GameRecord) for end in ends), ends
    return asked


async def test_join_expect_counts_as_trust_in_the_host(tmp_path, autojump_clock):
    """A matching --expect is the trust question about the host answered: bob is asked only
    about carol, whom he never met (and, without --expect, about alice too)."""
    assert await _seated_match(tmp_path / "expecting", bob_expects=True) == ["carol"]
    assert await _seated_match(tmp_path / "asking", bob_expects=False) == ["alice", "carol"]
