"""The NAT-PMP codec (p2pwhist/reach/_natpmp.py): requests and answers against the byte layouts
of RFC 6886 §3.2-3.5 (the answers as Debian's miniupnpd 2.3.1 sent them in
tests/test_portmap_router.py's namespaces), every malformed answer refused with the typed
error, the readers fuzzed, and the default gateway read from /proc/net/route's text."""

from __future__ import annotations

import re
import struct
import sys
from ipaddress import IPv4Address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pwhist.reach._natpmp import (
    PUBLIC_ADDRESS_REQUEST,
    MalformedResponse,
    NatPmpError,
    PortMapping,
    PublicAddress,
    Refused,
    Result,
    default_gateway,
    delete_request,
    map_request,
    read_port_mapping,
    read_public_address,
)

# -- requests (§3.2, §3.3, §3.4) ---------------------------------------------------------------


def test_the_public_address_request_is_version_and_opcode_zero():
    assert PUBLIC_ADDRESS_REQUEST == bytes.fromhex("00 00")


def test_a_tcp_map_request_has_its_ports_and_lifetime_big_endian():
    # version 0, opcode 2 (TCP), reserved 0, internal port 40001, suggested port 40001, 3600 s
    assert map_request(40001, 40001, 3600) == bytes.fromhex("00 02 0000 9c41 9c41 00000e10")
    assert map_request(7878, 0, 7200) == bytes.fromhex("00 02 0000 1ec6 0000 00001c20")


def test_a_deletion_asks_for_lifetime_zero_on_external_port_zero():
    assert delete_request(40001) == bytes.fromhex("00 02 0000 9c41 0000 00000000")


@pytest.mark.parametrize("internal, external, lifetime, words", [
    (0, 1, 60, "internal port must be from 1 to 65535, not 0"),
    (65536, 1, 60, "internal port must be from 1 to 65535, not 65536"),
    (1, -1, 60, "external port must be from 0 to 65535, not -1"),
    (1, 1, 2**32, "lifetime must be from 0 to 2**32 - 1 seconds"),
    (1, 1, 0, "a deletion (lifetime 0) suggests external port 0"),
])
def test_a_request_we_could_not_mean_is_our_error(internal, external, lifetime, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        map_request(internal, external, lifetime)


# -- answers ------------------------------------------------------------------------------------


def test_the_public_address_answer():
    # version 0, opcode 128, result 0, epoch 1 s, 11.0.0.1
    assert read_public_address(bytes.fromhex("00 80 0000 00000001 0b000001")) == \
        PublicAddress(IPv4Address("11.0.0.1"), 1)


def test_a_mapping_answer_and_a_deletion_answer():
    assert read_port_mapping(bytes.fromhex("00 82 0000 00000001 9c41 9c41 00000e10")) == \
        PortMapping(internal_port=40001, external_port=40001, lifetime=3600, epoch=1)
    assert read_port_mapping(bytes.fromhex("00 82 0000 00000001 9c41 0000 00000000")) == \
        PortMapping(internal_port=40001, external_port=0, lifetime=0, epoch=1)


@pytest.mark.parametrize("answer, result", [
    ("00 82 0002 00000001 9c41 9c41 00000e10", Result.NOT_AUTHORIZED),
    ("00 82 0003 00000001", Result.NETWORK_FAILURE),  # a refusal may stop after the header
    ("00 82 0004 00000001 0000 0000 00000000", Result.OUT_OF_RESOURCES),
    ("00 82 0001 00000001", Result.UNSUPPORTED_VERSION),
])
def test_a_refusal_names_its_result_code(answer, result):
    with pytest.raises(Refused) as refused:
        read_port_mapping(bytes.fromhex(answer))
    assert refused.value.result is result
    assert str(refused.value) == result.words


def test_result_codes_read_as_words_with_their_number():
    assert Result.NOT_AUTHORIZED.words == "Not Authorized (2)"
    assert Result.UNSUPPORTED_OPCODE.words == "Unsupported Opcode (5)"


@pytest.mark.parametrize("answer, words", [
    ("", "0 bytes, shorter than a NAT-PMP header"),
    ("00 80 0000 000001", "7 bytes, shorter than a NAT-PMP header"),
    ("02 82 0001 00000001 0000 0000 00000000", "version 2, not 0 (a PCP router"),
    ("01 82 0000 00000001 9c41 9c41 00000e10", "version 1, not 0"),
    ("00 81 0000 00000001 9c41 9c41 00000e10", "opcode 129, not 130"),  # UDP's, not TCP's
    ("00 02 0000 00000001 9c41 9c41 00000e10", "opcode 2, not 130"),  # a request, not an answer
    ("00 82 0006 00000001 9c41 9c41 00000e10", "result code 6, which RFC 6886 does not define"),
    ("00 82 0000 00000001 9c41 9c41 00000e", "15 bytes, not 16"),
    ("00 82 0000 00000001 9c41 9c41 00000e10 00", "17 bytes, not 16"),
    ("00 82 0000 00000001 0000 9c41 00000e10", "maps internal port 0"),
    ("00 82 0000 00000001 9c41 0000 00000e10", "maps to external port 0 for 3600 s"),
])
def test_a_malformed_mapping_answer_is_refused_saying_why(answer, words):
    with pytest.raises(MalformedResponse, match=re.escape(words)):
        read_port_mapping(bytes.fromhex(answer))


def test_a_malformed_public_address_answer_is_refused_saying_why():
    with pytest.raises(MalformedResponse, match="opcode 130, not 128"):
        read_public_address(bytes.fromhex("00 82 0000 00000001 0b000001"))
    with pytest.raises(MalformedResponse, match="16 bytes, not 12"):
        read_public_address(bytes.fromhex("00 80 0000 00000001 0b000001 00000000"))


@given(st.integers(1, 65535), st.integers(1, 65535), st.integers(1, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_any_mapping_answer_reads_back_its_values(internal, external, lifetime, epoch):
    answer = struct.pack(">BBHIHHI", 0, 130, 0, epoch, internal, external, lifetime)
    assert read_port_mapping(answer) == PortMapping(internal, external, lifetime, epoch)


def _answers() -> st.SearchStrategy[bytes]:
    """Bytes near a NAT-PMP answer, so the fuzzer reaches past the first checks: any version,
    opcode and result code, and a tail of any length; or any bytes at all."""
    near = st.builds(lambda version, op, code, tail: bytes([version, op]) + code.to_bytes(2, "big") + tail,
                     st.sampled_from([0, 0, 0, 1, 2, 255]), st.sampled_from([128, 130, 129, 0, 2, 255]),
                     st.integers(0, 7) | st.integers(0, 65535), st.binary(max_size=24))
    return near | st.binary(max_size=64)


@given(_answers())
def test_any_bytes_read_as_an_answer_or_raise_the_typed_error(data):
    for read in (read_public_address, read_port_mapping):
        try:
            read(data)
        except NatPmpError:
            pass


# -- the default gateway ------------------------------------------------------------------------

HEADER = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"


def _route(interface: str, destination: str, gateway: str, flags: int, metric: int, mask: str) -> str:
    """A /proc/net/route line: addresses in hexadecimal, in this machine's byte order."""
    def hexadecimal(address: str) -> str:
        return f"{int.from_bytes(IPv4Address(address).packed, sys.byteorder):08X}"
    return "\t".join([interface, hexadecimal(destination), hexadecimal(gateway), f"{flags:04X}", "0", "0",
                      str(metric), hexadecimal(mask), "0", "0", "0"])


def test_the_default_gateway_is_the_default_route_s_next_hop():
    table = "\n".join([HEADER, _route("eth0", "0.0.0.0", "192.168.77.1", 0x3, 0, "0.0.0.0"),
                       _route("eth0", "192.168.77.0", "0.0.0.0", 0x1, 0, "255.255.255.0")])
    assert default_gateway(table) == IPv4Address("192.168.77.1")


def test_a_little_endian_machine_s_table_as_linux_prints_it():
    if sys.byteorder != "little":
        pytest.skip("the table's addresses are in the machine's byte order")
    table = HEADER + "\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    assert default_gateway(table) == IPv4Address("192.0.2.1")


def test_of_several_default_routes_the_lowest_metric_wins():
    table = "\n".join([HEADER, _route("wlan0", "0.0.0.0", "10.0.0.1", 0x3, 600, "0.0.0.0"),
                       _route("eth0", "0.0.0.0", "192.168.1.1", 0x3, 100, "0.0.0.0")])
    assert default_gateway(table) == IPv4Address("192.168.1.1")


@pytest.mark.parametrize("lines", [
    [],  # no route at all
    [_route("eth0", "10.0.0.0", "10.0.0.1", 0x3, 0, "255.0.0.0")],  # no default route
    [_route("ppp0", "0.0.0.0", "0.0.0.0", 0x1, 0, "0.0.0.0")],  # a default route through no gateway
    [_route("eth0", "0.0.0.0", "10.0.0.1", 0x2, 0, "0.0.0.0")],  # down
    ["eth0\tnot\thex\t0003\t0\t0\t0\t00000000", "eth0\t00000000", "garbage"],
])
def test_no_default_gateway(lines):
    assert default_gateway("\n".join([HEADER, *lines])) is None


@given(st.text(max_size=300))
def test_any_text_gives_a_gateway_or_none(text):
    assert default_gateway(text) is None or isinstance(default_gateway(text), IPv4Address)
