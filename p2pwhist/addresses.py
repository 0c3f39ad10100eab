"""Where a table can be reached: this machine's addresses, the join lines a host prints for
them, and the ``HOST[:PORT]`` a joiner types.

Finding the addresses sends nothing: the default route's source address is the one a UDP socket
connected toward a documentation address is given (connecting a UDP socket only picks a route),
and the kernel lists the others (``SIOCGIFCONF`` for IPv4, ``/proc/net/if_inet6`` for IPv6 on
Linux; Windows resolves its own host name locally). Whatever cannot be read is left out.
"""

from __future__ import annotations

import array
import ipaddress
import socket
import struct
import sys
from collections.abc import Sequence

from p2pwhist.games.base import ConfigError
from p2pwhist.limits import DEFAULT_PORT


def addresses(bind: str | None, ports: dict[int, int]) -> list[tuple[str, int]]:
    """The addresses, each with its port, at which others may reach a host listening on
    ``bind``; ``ports`` is the port of each address family's listener (with ``--port 0`` the
    IPv4 and IPv6 listeners get different ones). ``join_commands`` sorts and words them.

    With ``bind`` one address or name: that alone. Otherwise this machine's addresses of each
    family listened on, the one its default route leaves from first, then a loopback address.
    Finding them sends nothing: the default route's source address is the one a UDP socket
    connected toward a documentation address is given (connecting a UDP socket only picks a
    route), and ``_interface_addresses`` reads the others where it can. Whatever cannot be
    read is left out: at worst, only loopback is listed."""
    if bind not in (None, "", "0.0.0.0", "::"):
        return [(bind, next(iter(ports.values())))]  # type: ignore[list-item]
    found: list[tuple[str, int]] = []
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        if family in ports:
            addresses = dict.fromkeys([*_routed_address(family, probe), *_interface_addresses(family)])
            found += [(address, ports[family]) for address in addresses if not _is_loopback(address)]
    loopback = socket.AF_INET if socket.AF_INET in ports else socket.AF_INET6
    return found + [("127.0.0.1" if loopback == socket.AF_INET else "::1", ports[loopback])]


def _is_loopback(address: str) -> bool:

    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _routed_address(family: int, probe: str) -> list[str]:
    """The source address of this machine's route toward ``probe``, if it has one. A UDP
    socket's connect sends no packet: it only chooses the route."""
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            return [str(udp.getsockname()[0])]
    except OSError:
        return []


def _interface_addresses(family: int) -> list[str]:
    """This machine's addresses of ``family``, as far as they can be read without sending
    anything; [] when they cannot. On Linux the kernel lists them; Windows resolves its own
    host name to every address of every adapter, locally. Elsewhere a look-up of the host
    name could ask a name server, so only the default route's address is known."""

    try:
        if sys.platform == "linux":
            return _linux_ipv4() if family == socket.AF_INET else _linux_ipv6()
        if sys.platform == "win32":
            return [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, family)]
    except (OSError, ValueError, ImportError):
        pass
    return []


def _linux_ipv4() -> list[str]:
    """Every IPv4 address of every interface, secondary ones included: ``SIOCGIFCONF`` on a
    socket that is never connected."""
    import fcntl  # Unix only: imported where it is used, on Linux

    siocgifconf = 0x8912
    ifreq = 40 if struct.calcsize("P") == 8 else 32  # struct ifreq: a 16-byte name, then a union
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        slots = 32
        while True:
            buffer = array.array("B", bytes(ifreq * slots))
            request = struct.pack("iP", len(buffer), buffer.buffer_info()[0])  # struct ifconf
            length = struct.unpack("iP", fcntl.ioctl(sock.fileno(), siocgifconf, request))[0]
            if length < len(buffer) or slots >= 4096:  # a full buffer may have been cut short
                break
            slots *= 4
    data = buffer.tobytes()
    # each entry: the interface's name, then its struct sockaddr_in (family, port, address)
    return [socket.inet_ntoa(data[at + 20 : at + 24]) for at in range(0, length - ifreq + 1, ifreq)]


def _linux_ipv6() -> list[str]:
    """Every usable IPv6 address of every interface, from /proc/net/if_inet6 (a line each:
    the address in hex, interface index, prefix length, scope, flags, interface name).
    Addresses not yet checked for duplicates, found duplicated, deprecated or temporary (a
    privacy address, which changes; the interface's stable one is listed) are left out. A
    link-local address is given with its interface as its zone."""

    unusable = 0x01 | 0x08 | 0x20 | 0x40  # IFA_F_TEMPORARY, _DADFAILED, _DEPRECATED, _TENTATIVE
    found = []
    with open("/proc/net/if_inet6", encoding="ascii") as table:
        for line in table:
            fields = line.split()
            if len(fields) != 6 or int(fields[4], 16) & unusable:
                continue
            address = ipaddress.IPv6Address(bytes.fromhex(fields[0]))
            found.append(f"{address}%{fields[5]}" if address.is_link_local else str(address))
    return found


def join_commands(addresses: list[tuple[str, int]], host_print: str,
                  first: Sequence[tuple[str, int, str]] = ()) -> list[str]:
    """The ``p2pwhist join`` command for each address, with its port, that a friend could
    use, to print under "Others join with": ``first`` (each with its note: a router's external
    address), then global IPv6 addresses (reachable across the internet where no firewall
    stops them), IPv4 addresses and names, other IPv6 ones (all in brackets, ``[addr]:port``);
    link-local ones only when nothing else is there (an IPv6 one without our zone, which means
    nothing on the joiner's machine); loopback last, marked "this machine only". The port is
    left out when it is ``DEFAULT_PORT``. A note follows a ``#``, so a line pasted whole into
    a shell still runs."""

    groups: dict[int, list[tuple[str, int, str]]] = {0: [], 1: [], 2: [], 3: [], 4: []}
    for text, port in addresses:
        try:
            ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(text)
        except ValueError:
            ip = None  # a name (from --bind)
        if ip is None:
            group, shown, note = (4, text, "this machine only") if text.lower() == "localhost" else (1, text, "")
        elif ip.is_unspecified:
            continue
        elif ip.is_loopback:
            group, shown, note = 4, str(ip), "this machine only"
        elif ip.is_link_local:
            bare = str(ip).partition("%")[0]
            note = ("link-local: the joiner adds its own interface, as in [ADDRESS%eth0]" if ip.version == 6
                    else "link-local: the same network link only")
            group, shown = 3, bare
        elif ip.version == 6 and ip.is_global:
            group, shown, note = 0, str(ip), "from the internet over IPv6, unless a home router's firewall blocks it"
        else:
            group, shown, note = (1 if ip.version == 4 else 2), str(ip), ""
        if all(entry[0] != shown or entry[1] != port for entry in groups[group]):
            groups[group].append((shown, port, note))
    if groups[0] or groups[1] or groups[2]:
        groups[3] = []
    lines = []
    for shown, port, note in [*first, *groups[0], *groups[1], *groups[2], *groups[3], *groups[4]]:
        where = f"[{shown}]" if ":" in shown else shown
        if port != DEFAULT_PORT:
            where += f":{port}"
        lines.append(f"p2pwhist join {where} --expect {host_print}" + (f"  # {note}" if note else ""))
    return lines


def host_port(address: str, port: int) -> str:
    """``HOST:PORT`` as ``join`` takes it and as we print it: an IPv6 address in brackets."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def parse_address(text: str) -> tuple[str, int]:
    """The host and port ``join`` connects to: ``HOST``, ``HOST:PORT``, ``[IPv6]`` or
    ``[IPv6]:PORT``, HOST a name or an IPv4 address; the port is ``DEFAULT_PORT`` unless
    given. An IPv6 address goes in brackets (a link-local one with its zone, as in
    ``[fe80::1%eth0]``): bare, its last group could be read as a port. Anything else is a
    ``ConfigError``, one line saying why."""

    def refusal(why: str) -> ConfigError:
        return ConfigError(f"{text!r} is not an address to join: {why} "
                           "(write HOST, HOST:PORT, [IPv6] or [IPv6]:PORT)")

    if text.startswith("["):
        host_part, bracket, rest = text[1:].partition("]")
        if not bracket:
            raise refusal("the '[' has no ']'")
        try:
            ipaddress.IPv6Address(host_part)
        except ValueError:
            raise refusal(f"{host_part!r} is not an IPv6 address") from None
        if rest and not rest.startswith(":"):
            raise refusal("only ':PORT' may follow the ']'")
        port_text = rest[1:] if rest else None
    else:
        if text.count(":") > 1:
            try:
                ipaddress.IPv6Address(text)
            except ValueError:
                raise refusal("too many ':'") from None
            raise refusal("an IPv6 address goes in brackets, as in [::1] or [::1]:7878")
        host_part, colon, port_text_ = text.partition(":")
        port_text = port_text_ if colon else None
        if not host_part:
            raise refusal("no host")
        if len(host_part) > 253 or not all(c.isalnum() or c in "-._" for c in host_part) \
                or host_part[0] in "-." or host_part[-1] == "-":
            raise refusal(f"{host_part!r} is not a host name or an IPv4 address")
        labels = host_part.split(".")
        if all(label.isascii() and label.isdigit() for label in labels):
            try:
                ipaddress.IPv4Address(host_part)
            except ValueError:
                raise refusal(f"{host_part!r} is not an IPv4 address") from None
    if port_text is None:
        return host_part, DEFAULT_PORT
    if not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536):
        raise refusal(f"the port must be a number from 1 to 65535, not {port_text!r}")
    return host_part, int(port_text)
