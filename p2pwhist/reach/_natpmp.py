"""NAT-PMP (RFC 6886) as bytes and values, and the gateway it is spoken to: no socket here
(``p2pwhist.reach.portmap`` sends, waits and retries).

A client asks its default gateway, on UDP port 5351, for the gateway's external address
(§3.2), to map one of its TCP ports for a lifetime (§3.3), and to delete that mapping by asking
again with a lifetime of 0 (§3.4). Requests are built here from checked arguments; responses are
the network's bytes, so ``read_public_address`` and ``read_port_mapping`` take nothing on trust
and raise ``NatPmpError`` and nothing else: ``MalformedResponse`` for bytes that are no answer
to the request (length, version, opcode, an unknown result code, a mapping to port 0), ``Refused``
for a well-formed answer whose result code says no.

Every multi-byte field is big-endian ("network byte order", §3).
"""

from __future__ import annotations

import enum
import ipaddress
import struct
import sys
from dataclasses import dataclass

PORT = 5351  # §3: the gateway listens for requests on this UDP port
VERSION = 0  # §3.2: NAT-PMP is version 0; PCP (RFC 6887), its successor, answers with 2
RESPONSE = 128  # §3.2, §3.3: a response's opcode is 128 plus the request's
OP_PUBLIC_ADDRESS = 0  # §3.2
OP_MAP_TCP = 2  # §3.3 (1 is UDP, which p2pwhist does not use)
# The most a response may be: PCP's message limit (RFC 6887 §7), so an answer from a PCP
# router is read whole and refused for its version, not cut short.
MAX_RESPONSE = 1100

# §3.2, §3.3, §3.5: version, opcode, result code, seconds since the gateway's epoch began
_HEADER = struct.Struct(">BBHI")
_PUBLIC_ADDRESS = struct.Struct(">BBHI4s")  # the header, then the external IPv4 address
_PORT_MAPPING = struct.Struct(">BBHIHHI")  # the header, internal port, external port, lifetime
# §3.3: version, opcode, reserved (zero), internal port, suggested external port, lifetime
_MAP_REQUEST = struct.Struct(">BBHHHI")
PUBLIC_ADDRESS_REQUEST = bytes([VERSION, OP_PUBLIC_ADDRESS])  # §3.2: just the version and opcode


class Result(enum.IntEnum):
    """A response's result code (§3.5)."""

    SUCCESS = 0
    UNSUPPORTED_VERSION = 1
    NOT_AUTHORIZED = 2  # "Not Authorized/Refused": e.g. the router's owner turned mapping off
    NETWORK_FAILURE = 3  # e.g. the router itself has no address on its external side yet
    OUT_OF_RESOURCES = 4  # the router cannot make more mappings
    UNSUPPORTED_OPCODE = 5

    @property
    def words(self) -> str:
        """As a person reads it, with its number: "Not Authorized (2)"."""
        return f"{self.name.replace('_', ' ').title()} ({self.value})"


class NatPmpError(ValueError):
    """Bytes from the gateway that answer our request with no mapping or address. The readers
    raise this type (or a subclass) and no other."""


class MalformedResponse(NatPmpError):
    """Bytes that are no NAT-PMP answer to the request: the wrong length, version or opcode,
    a result code RFC 6886 does not define, a mapping to port 0."""


class Refused(NatPmpError):
    """A well-formed answer whose result code is not ``SUCCESS``."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.words)
        self.result = result


@dataclass(frozen=True)
class PublicAddress:
    """The gateway's answer to ``PUBLIC_ADDRESS_REQUEST`` (§3.2)."""

    address: ipaddress.IPv4Address  # the gateway's external address
    epoch: int  # seconds since the gateway started or lost its mappings (§3.6)


@dataclass(frozen=True)
class PortMapping:
    """The gateway's answer to ``map_request`` (§3.3): TCP connections to the gateway's
    ``external_port`` reach our ``internal_port`` for ``lifetime`` seconds. A lifetime of 0
    answers a deletion (§3.4), and then the external port is 0 too."""

    internal_port: int
    external_port: int
    lifetime: int
    epoch: int


def map_request(internal_port: int, external_port: int, lifetime: int) -> bytes:
    """A request to map our TCP ``internal_port`` to the gateway's ``external_port`` (0: any),
    or to renew that mapping, for ``lifetime`` seconds (§3.3). ``lifetime`` 0 with
    ``external_port`` 0 deletes the mapping (§3.4); 0 for ``internal_port`` would delete every
    mapping of ours, which nothing here asks for, so it is refused."""
    if not 0 < internal_port < 65536:
        raise ValueError(f"the internal port must be from 1 to 65535, not {internal_port}")
    if not 0 <= external_port < 65536:
        raise ValueError(f"the external port must be from 0 to 65535, not {external_port}")
    if not 0 <= lifetime < 2**32:
        raise ValueError(f"the lifetime must be from 0 to 2**32 - 1 seconds, not {lifetime}")
    if lifetime == 0 and external_port != 0:
        raise ValueError("a deletion (lifetime 0) suggests external port 0 (RFC 6886 §3.4)")
    return _MAP_REQUEST.pack(VERSION, OP_MAP_TCP, 0, internal_port, external_port, lifetime)


def delete_request(internal_port: int) -> bytes:
    """A request to delete the mapping of our TCP ``internal_port`` (§3.4)."""
    return map_request(internal_port, 0, 0)


def read_public_address(data: bytes) -> PublicAddress:
    """The answer to ``PUBLIC_ADDRESS_REQUEST`` in ``data`` (§3.2)."""
    epoch = _read_header(data, OP_PUBLIC_ADDRESS, _PUBLIC_ADDRESS.size)
    return PublicAddress(ipaddress.IPv4Address(_PUBLIC_ADDRESS.unpack(data)[4]), epoch)


def read_port_mapping(data: bytes) -> PortMapping:
    """The answer to a ``map_request`` in ``data`` (§3.3)."""
    epoch = _read_header(data, OP_MAP_TCP, _PORT_MAPPING.size)
    internal_port, external_port, lifetime = _PORT_MAPPING.unpack(data)[4:]
    if internal_port == 0:
        raise MalformedResponse("the answer maps internal port 0")
    if lifetime and not external_port:
        raise MalformedResponse(f"the answer maps to external port 0 for {lifetime} s")
    return PortMapping(internal_port, external_port, lifetime, epoch)


def _read_header(data: bytes, opcode: int, size: int) -> int:
    """Check the header of an answer to a request with ``opcode`` whose successful answer is
    ``size`` bytes; return its epoch. A refusal may be shorter than a success: its fields after
    the header mean nothing (§3.5) and some routers leave them out (miniupnpd answers an
    unsupported opcode with the header alone)."""
    if len(data) < _HEADER.size:
        raise MalformedResponse(f"{len(data)} bytes, shorter than a NAT-PMP header ({_HEADER.size})")
    version, op, code, epoch = _HEADER.unpack_from(data)
    if version != VERSION:
        raise MalformedResponse(f"version {version}, not {VERSION}"
                                + (" (a PCP router, RFC 6887)" if version == 2 else ""))
    if op != RESPONSE + opcode:
        raise MalformedResponse(f"opcode {op}, not {RESPONSE + opcode}")
    try:
        result = Result(code)
    except ValueError:
        raise MalformedResponse(f"result code {code}, which RFC 6886 does not define") from None
    if result is not Result.SUCCESS:
        raise Refused(result)
    if len(data) != size:
        raise MalformedResponse(f"{len(data)} bytes, not {size}")
    return epoch


def default_gateway(route_table: str) -> ipaddress.IPv4Address | None:
    """The IPv4 default gateway in ``route_table``, the text of Linux's /proc/net/route, or
    None if it has none. Each line after the header is a route: interface, destination,
    gateway, flags, reference count, use, metric, mask, ...; addresses, flags and mask in
    hexadecimal, addresses in the machine's own byte order. Of several default routes
    (destination and mask 0, up, through a gateway) the one with the lowest metric is the
    kernel's choice. Lines that do not parse are skipped."""
    up_through_gateway = 0x1 | 0x2  # RTF_UP | RTF_GATEWAY
    found: list[tuple[int, ipaddress.IPv4Address]] = []
    for line in route_table.splitlines()[1:]:
        fields = line.split()
        try:
            destination, gateway, flags, mask = (int(fields[i], 16) for i in (1, 2, 3, 7))
            metric = int(fields[6])
            address = ipaddress.IPv4Address(gateway.to_bytes(4, sys.byteorder))
        except (IndexError, ValueError, OverflowError):
            continue
        if destination == 0 and mask == 0 and flags & up_through_gateway == up_through_gateway:
            found.append((metric, address))
    return min(found)[1] if found else None
