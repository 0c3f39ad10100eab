"""A table's announcement as a value (``p2pwhist.reach``): what a host puts in its TXT record,
read back by a joiner; anything else heard is refused with a reason, never an exception of
another kind (the network is anyone's); the seats a lobby announces; the join lines a host
prints, its router's external address and a global IPv6 address first, and what to do when
the router would not map a port."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_table_lobby import Door

from p2pwhist import addresses
from p2pwhist.games.registry import GAMES
from p2pwhist.reach import BadAd, TableAd, read_ad, table_ad
from p2pwhist.reach._ads import MAX_INSTANCE
from p2pwhist.reach.portmap import Mapped, NotMapped
from p2pwhist.reach.where import where_lines

FP = "6d07-5d91-4ca4-7396-23df-21fc-ef66-48d8"


def heard(ad: TableAd, **changed: bytes | None) -> dict[bytes, bytes | None]:
    """``ad``'s TXT record as DNS-SD hands it to a listener, with some values changed."""
    record: dict[bytes, bytes | None] = {k.encode(): v.encode() for k, v in ad.properties().items()}
    record.update({k.encode(): v for k, v in changed.items()})
    return record


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_at_every_size_is_read_back_as_announced(name: str) -> None:
    entry = GAMES[name]
    for players in entry.players:
        ad = table_ad("alice", entry.make(players), FP, 7878, 1)
        back = read_ad(heard(ad), 7878, ["192.168.1.20", "fe80::1"])
        assert back == TableAd(ad.host, ad.game, ad.options, players, 1, FP, 7878, ("192.168.1.20", "fe80::1"))
        assert dict(back.options) == {o.name: str(entry.make(players).to_wire()[o.name]) for o in entry.options}


def test_a_variant_is_announced_and_read() -> None:
    ad = table_ad("alice", GAMES["box"].make(4, variant="pagat"), FP, 7878, 3)
    back = read_ad(heard(ad), 7878, ["10.0.0.2"])
    assert back.options == (("variant", "pagat"),) and (back.players, back.seats) == (4, 3)
    assert back.lines({}) == ("alice: Box for 4, variant pagat, 3 of 4 seats taken, at 10.0.0.2:7878",
                              f"key {FP} (a new key)")
    assert back.lines({FP: "alice"})[1] == f"key {FP} (you played with it as alice)"


BOX = table_ad("alice", GAMES["box"].make(4), FP, 7878, 2)


@pytest.mark.parametrize(("changed", "port", "found", "why"), [
    ({"txtvers": b"2"}, 7878, ["10.0.0.2"], "announced by a newer p2pwhist"),
    ({"txtvers": None}, 7878, ["10.0.0.2"], "txtvers is missing"),
    ({"game": b"Box Whist"}, 7878, ["10.0.0.2"], "game is not a short lower-case word"),
    ({"players": b"99"}, 7878, ["10.0.0.2"], "players is not a number from 1 to 16"),
    ({"seats": b"5"}, 7878, ["10.0.0.2"], "seats is not a number from 1 to 4"),
    ({"seats": b"\xd9\xa3"}, 7878, ["10.0.0.2"], "seats is not a number"),  # an Arabic-Indic 3 is a digit to str
    ({"host": b"al\x1bice"}, 7878, ["10.0.0.2"], "host name is not 1..32 printable"),
    ({"host": b" alice"}, 7878, ["10.0.0.2"], "host name is not"),
    ({"host": b"\xff"}, 7878, ["10.0.0.2"], "host is not UTF-8"),
    ({"fp": b"6d07"}, 7878, ["10.0.0.2"], "fp is not a key fingerprint"),
    ({"fp": b"x" * 65}, 7878, ["10.0.0.2"], "fp is missing or too long"),
    ({"variant": b"house"}, 7878, ["10.0.0.2"], "variant 'house' is not one of box's"),
    ({}, 0, ["10.0.0.2"], "port 0 is not a TCP port"),
    ({}, 7878, ["not an address"], "gives no address"),
])
def test_an_announcement_that_is_not_ours_to_read_is_refused_with_why(changed, port, found, why) -> None:
    with pytest.raises(BadAd, match=why):
        read_ad(heard(BOX, **changed), port, found)


def test_keys_we_do_not_know_are_ignored_as_dns_sd_asks() -> None:
    record = heard(BOX, colour=b"blue", flag=None)
    record[b"\xff\xfe"] = b"x"
    assert read_ad(record, 7878, ["10.0.0.2"]) == read_ad(heard(BOX), 7878, ["10.0.0.2"])


def test_a_game_this_version_does_not_know_is_listed_as_such() -> None:
    back = read_ad(heard(BOX, game=b"skat"), 7878, ["10.0.0.2"])
    assert back.options == () and "skat (a game this version does not know) for 4" in back.lines({})[0]


@given(st.dictionaries(st.binary(max_size=12) | st.sampled_from([b"txtvers", b"game", b"players", b"seats",
                                                                  b"host", b"fp", b"variant"]),
                       st.none() | st.binary(max_size=80) | st.sampled_from([b"1", b"box", b"4", b"2", FP.encode()]),
                       max_size=10),
       st.integers(-1, 70000), st.lists(st.text(max_size=40) | st.sampled_from(["10.0.0.2", "fe80::1"]), max_size=10))
def test_any_record_heard_is_read_or_refused_and_nothing_else(record, port, found) -> None:
    try:
        ad = read_ad(record, port, found)
    except BadAd as error:
        assert str(error)
        return
    assert 0 < port < 65536 and 1 <= ad.seats <= ad.players and len(ad.addresses) <= 8
    assert all(line.isprintable() for line in ad.lines({}))


@given(st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=32)
       .map(str.strip).filter(bool), st.integers(1, 65535))
def test_the_instance_name_fits_dns_sd_whatever_the_host_is_called(host: str, port: int) -> None:
    name = TableAd(host, "box", (), 4, 1, FP, port).instance_name
    assert len(name.encode("utf-8")) <= MAX_INSTANCE and name.endswith(f"({FP[:9]}) port {port}")


@pytest.mark.parametrize(("found", "where"), [
    (("fe80::1", "2001:db8::5", "192.168.1.20"), "192.168.1.20:7878"),  # IPv4 first
    (("fe80::1", "2001:db8::5"), "[2001:db8::5]:7878"),  # then IPv6 that is not link-local
    (("fe80::1",), "?:7878"),  # a link-local IPv6 address needs our interface: none to join
])
def test_the_joiner_connects_to_an_ipv4_address_else_a_routable_ipv6_one(found, where) -> None:
    ad = TableAd("alice", "box", (), 4, 1, FP, 7878, found)
    assert ad.where == where and (ad.address is None) == (where == "?:7878")


def test_a_lobby_announces_seats_taken_while_it_seats_and_nothing_once_it_starts() -> None:
    door = Door(seats=3)
    lobby = door.machine.lobby
    assert lobby.taken == 1
    door.sit(1, "bob")
    assert lobby.taken == 2
    door.sit(2, "carol")
    assert lobby.taken == 3  # full: the host withdraws the announcement (net.host)
    door.vouch_all()
    assert lobby.taken is None  # START: the table seats nobody new


def test_the_router_s_address_is_printed_first_then_a_global_ipv6_one_then_the_lan() -> None:
    lines = addresses.join_commands([("192.168.1.20", 7878), ("2a01:4f8::7", 7878), ("fd00::2", 7878),
                                     ("127.0.0.1", 7878)], FP,
                                    [("11.0.0.1", 7878, "from the internet (port mapped by your router)")])
    assert lines == [
        f"p2pwhist join 11.0.0.1 --expect {FP}  # from the internet (port mapped by your router)",
        f"p2pwhist join [2a01:4f8::7] --expect {FP}  # from the internet over IPv6, unless a home router's "
        "firewall blocks it",
        f"p2pwhist join 192.168.1.20 --expect {FP}",
        f"p2pwhist join [fd00::2] --expect {FP}",
        f"p2pwhist join 127.0.0.1 --expect {FP}  # this machine only",
    ]


def test_a_host_says_where_it_is_reached_and_what_to_do_when_its_router_would_not_map() -> None:
    ports = {socket.AF_INET: 7878}
    assert where_lines("192.168.1.20", ports, FP, Mapped("11.0.0.1", 40000, "NAT-PMP", True)) == [
        "Others join with one of:",
        f"  p2pwhist join 11.0.0.1:40000 --expect {FP}  # from the internet (port mapped by your router)",
        f"  p2pwhist join 192.168.1.20 --expect {FP}",
    ]
    behind = where_lines("192.168.1.20", ports, FP, Mapped("100.64.9.9", 7878, "UPnP-IGD", False))
    assert behind[1] == (f"  p2pwhist join 100.64.9.9 --expect {FP}  # from the internet only if nothing stands "
                         "between your router and it: your router's own address is not a public one")
    assert where_lines("192.168.1.20", ports, FP, NotMapped("the router refused: ConflictInMappingEntry (718)")) == [
        "Others join with:",
        f"  p2pwhist join 192.168.1.20 --expect {FP}",
        "Not reachable from the internet through your router: the router refused: ConflictInMappingEntry (718). To "
        "play across the internet, forward TCP port 7878 on your router to this machine (192.168.1.20), or play over "
        "a VPN such as Tailscale.",
    ]
