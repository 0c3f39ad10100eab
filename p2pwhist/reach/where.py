"""What a host says of where it can be reached, and what it announces: the join lines (its
router's external address first, when the router mapped a port), the advice when the router
would not, and the addresses an announcement gives. Values in, lines out: the edge prints them.
"""

from __future__ import annotations

import ipaddress

from p2pwhist.addresses import addresses, host_port, join_commands
from p2pwhist.reach.portmap import Mapped, NotMapped


def where_lines(bind: str | None, ports: dict[int, int], host_print: str,
                mapped: Mapped | NotMapped | None) -> list[str]:
    """The lines under a new host's first: the join command for each address (``ports``: each
    address family's listening port, the first the announced one), the router's first if it
    mapped a port, and what to do when it would not."""
    found = addresses(bind, ports)
    commands = join_commands(found, host_print, [_mapped_line(mapped)] if isinstance(mapped, Mapped) else [])
    lines = ["Others join with:" if len(commands) == 1 else "Others join with one of:",
             *(f"  {command}" for command in commands)]
    if isinstance(mapped, NotMapped):
        port = next(iter(ports.values()))
        ips = (ipaddress.ip_address(address) for address, _ in found)
        lan = next((str(ip) for ip in ips if ip.version == 4 and not ip.is_loopback), None)
        to = f" to this machine ({lan})" if lan else " to this machine"
        lines.append(f"Not reachable from the internet through your router: {mapped.reason}. To play across the "
                     f"internet, forward TCP port {port} on your router{to}, or play over a VPN such as Tailscale.")
    return lines


def _mapped_line(mapped: Mapped) -> tuple[str, int, str]:
    """The router's external address as a join line's address, port and note."""
    if mapped.public:
        return mapped.external, mapped.port, "from the internet (port mapped by your router)"
    return mapped.external, mapped.port, ("from the internet only if nothing stands between your router and it: "
                                          "your router's own address is not a public one")


def forwarded_line(mapped: Mapped) -> str:
    """A resumed host's line: its joiners return by themselves, some from the internet."""
    return f"Your router forwards {host_port(mapped.external, mapped.port)} to this table"


def lost_line(why: str) -> str:
    """What the router did to our mapping while the table was open (``hold_mapping``'s ``lost``)."""
    return f"From the internet: {why} (the join lines for this network are unchanged)"


def announced_addresses(ports: dict[int, int], port: int) -> list[str]:
    """The addresses an announcement of a table listening on ``port`` gives: this machine's
    on the network, of the families listening on that port (``ports``, as for ``where_lines``),
    loopback and link-local left out (a link-local IPv6 address means nothing without our
    interface)."""
    shown = []
    for address, at in addresses(None, ports):
        ip = ipaddress.ip_address(address.partition("%")[0])
        if at == port and not ip.is_loopback and not ip.is_link_local:
            shown.append(str(ip))
    return shown
