"""A table's announcement on the local network (DNS-SD, RFC 6763): what a host says of its
table in a service's TXT record, and what a joiner makes of one it hears.

Pure: values in, values out. Whatever is heard comes from anyone on the network, so
``read_ad`` takes nothing on trust: every key is checked for its form and size, and anything
else is a ``BadAd`` with one clause saying why. An announcement carries nothing secret, and
nothing in it is believed beyond what the connection then proves: the fingerprint becomes
the joiner's ``--expect``, so a table announced with another's name but not their key is
refused by the key check, never joined as theirs (protocol/wire.md §9).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass

from p2pwhist.addresses import host_port
from p2pwhist.games.base import Game
from p2pwhist.games.registry import GAMES, game_entry

SERVICE_TYPE = "_p2pwhist._tcp.local."
TXT_VERSION = "1"  # the form of the TXT record below; a newer one is listed as such
MAX_TABLES = 32  # tables a joiner keeps at once: a flood of announcements cannot grow it
MAX_VALUE = 64  # bytes of any one TXT value we read (the longest we write is a fingerprint, 39)
MAX_SEATS = 16  # far above any game's table, far below anything that could hurt to print
MAX_INSTANCE = 63  # bytes of a DNS-SD instance name (RFC 6763 §4.1.1)
_FINGERPRINT = re.compile(r"[0-9a-f]{4}(?:-[0-9a-f]{4}){7}")
_WORD = re.compile(r"[a-z0-9]{1,16}")


class BadAd(Exception):
    """An announcement we cannot use; its text says why, in one clause."""


@dataclass(frozen=True)
class TableAd:
    """One table, as announced: the host's name (a label anyone may choose: the key decides),
    the game and its options, seats at the table and seats taken (the host's included), the
    host's key fingerprint, and where to connect (heard from the service's SRV and address
    records, not its TXT)."""

    host: str
    game: str
    options: tuple[tuple[str, str], ...]
    players: int
    seats: int
    fingerprint: str
    port: int
    addresses: tuple[str, ...] = ()

    def properties(self) -> dict[str, str]:
        """The TXT record that announces this table."""
        return {"txtvers": TXT_VERSION, "game": self.game, **dict(self.options), "players": str(self.players),
                "seats": str(self.seats), "host": self.host, "fp": self.fingerprint}

    @property
    def instance_name(self) -> str:
        """The service's instance name: the host's name, the start of its fingerprint and the
        port, within DNS-SD's 63 bytes (a long name is cut at a character)."""
        tail = f" ({self.fingerprint[:9]}) port {self.port}"
        name = self.host.encode("utf-8")[: MAX_INSTANCE - len(tail)].decode("utf-8", "ignore")
        return name.rstrip() + tail

    @property
    def address(self) -> str | None:
        """The address a joiner connects to: an IPv4 one first, else a global IPv6 one (a
        link-local IPv6 address needs our own interface, which an announcement cannot name)."""
        ips = [ipaddress.ip_address(text) for text in self.addresses]
        usable = [ip for ip in ips if ip.version == 4 and not ip.is_link_local] + \
                 [ip for ip in ips if ip.version == 6 and not ip.is_link_local] + \
                 [ip for ip in ips if ip.version == 4]
        return str(usable[0]) if usable else None

    @property
    def where(self) -> str:
        """``HOST:PORT`` as ``join`` takes it (an IPv6 address in brackets)."""
        return host_port(self.address or "?", self.port)

    def lines(self, known: Mapping[str, str]) -> tuple[str, str]:
        """The table in two lines, for a list: who, what, seats and where; then whose key it is
        (``known``: fingerprint → the name we last played that key under)."""
        entry = GAMES.get(self.game)
        title = entry.text.title if entry is not None else f"{self.game} (a game this version does not know)"
        options = "".join(f", {name} {value}" for name, value in self.options)
        label = known.get(self.fingerprint)
        whose = f"you played with it as {label}" if label is not None else "a new key"
        return (f"{self.host}: {title} for {self.players}{options}, {self.seats} of {self.players} seats taken, "
                f"at {self.where}", f"key {self.fingerprint} ({whose})")


def table_ad(host: str, game: Game, fingerprint: str, port: int, taken: int) -> TableAd:
    """The announcement of our table: ``game``'s options as the registry names them."""
    wire = game.to_wire()
    options = tuple((option.name, str(wire[option.name])) for option in game_entry(game).options)
    return TableAd(host, game.name, options, game.players, taken, fingerprint, port)


def read_ad(properties: Mapping[bytes, bytes | None], port: int, addresses: list[str]) -> TableAd:
    """The table a heard service announces, or ``BadAd``. ``properties`` is its TXT record as
    DNS-SD decodes it (a key without ``=`` has the value None), ``port`` its SRV port and
    ``addresses`` its address records as text."""
    text: dict[str, str] = {}
    for raw_key, raw_value in properties.items():
        try:
            key = raw_key.decode("ascii").lower()
        except UnicodeDecodeError:
            continue  # not a key of ours: DNS-SD says to ignore keys we do not know
        if raw_value is None or len(raw_value) > MAX_VALUE:
            if key in ("txtvers", "game", "players", "seats", "host", "fp"):
                raise BadAd(f"its {key} is missing or too long")
            continue
        try:
            text[key] = raw_value.decode("utf-8")
        except UnicodeDecodeError:
            raise BadAd(f"its {key} is not UTF-8 text") from None
    version = text.get("txtvers")
    if version != TXT_VERSION:
        raise BadAd("it is announced by a newer p2pwhist" if version and version.isdigit() else "it has no txtvers=1")
    game = _word(text, "game")
    players = _count(text, "players", MAX_SEATS)
    seats = _count(text, "seats", players)
    host = text.get("host", "")
    if not 1 <= len(host) <= 32 or not host.isprintable() or host != host.strip():
        raise BadAd("its host name is not 1..32 printable characters")
    fp = text.get("fp", "")
    if not _FINGERPRINT.fullmatch(fp):
        raise BadAd("its fp is not a key fingerprint")
    entry = GAMES.get(game)
    options = []
    for option in entry.options if entry is not None else ():
        value = text.get(option.name)
        if value is not None:
            if value not in map(str, option.choices):
                raise BadAd(f"its {option.name} {value!r} is not one of {game}'s")
            options.append((option.name, value))
    if not 0 < port < 65536:
        raise BadAd(f"its port {port} is not a TCP port")
    heard = []
    for address in addresses[:8]:  # a host has a few; more is noise
        try:
            heard.append(str(ipaddress.ip_address(address)))
        except ValueError:
            continue
    if not heard:
        raise BadAd("it gives no address")
    return TableAd(host, game, tuple(options), players, seats, fp, port, tuple(heard))


def _word(text: Mapping[str, str], key: str) -> str:
    value = text.get(key, "")
    if not _WORD.fullmatch(value):
        raise BadAd(f"its {key} is not a short lower-case word")
    return value


def _count(text: Mapping[str, str], key: str, most: int) -> int:
    value = text.get(key, "")
    if not (value.isascii() and value.isdigit() and len(value) <= 2 and 1 <= int(value) <= most):
        raise BadAd(f"its {key} is not a number from 1 to {most}")
    return int(value)
