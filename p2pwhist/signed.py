"""Signed, hash-chained messages: the unit of the wire and of the transcript.

Every message carries its sequence number in the game's single log, the hash of the message
before it, the sender's seat, a kind and a body, and is signed with the sender's Ed25519 key
over those exact bytes (Secure Scuttlebutt's construction). The bytes are kept verbatim: they
are what the transcript stores and what the next message's ``prev`` hashes. See
``protocol/wire.md`` §3 for the byte layout.

``parse`` is where a message from a peer or a file is decoded, once: the payload's structure,
its canonical encoding, and its body into a typed value (``p2pwhist.bodies``). The signature
and the chain are the session's to check, since they need the table's keys and the log.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from p2pwhist.bodies import MAX_SEATS, Body, Kind, UnknownTable, decode, kind_of
from p2pwhist.identity import fingerprint, public_bytes, same_fingerprint  # noqa: F401 (re-exported)
from p2pwhist.wire import WireError, describe, pack, unpack

GENESIS_PREV = bytes(32)  # the first message of a game chains to 32 zero bytes
SIGNATURE_SIZE = 64
DIGEST_SIZE = 32
MAX_SEQ = 2**32 - 1  # far beyond any match (games.match caps its hands)


class SignatureError(WireError):
    """A message whose structure, encoding, body or signature is wrong."""


class ForeignStart(SignatureError):
    """A START of a protocol version or a game this program does not know (``UnknownTable``):
    refused like a malformed message, but a log it begins cannot be judged here at all."""


@dataclass(frozen=True, slots=True)
class SignedMessage:
    seq: int
    prev: bytes
    seat: int
    kind: Kind
    body: Body
    raw: bytes  # the exact payload as sent and stored
    signed: bytes  # the part the signature covers
    signature: bytes

    @property
    def digest(self) -> bytes:
        """The message's hash: SHA-256 over its payload, which ``parse`` has made sure is the
        one canonical encoding of ``[signed, signature]`` (wire.md §3)."""
        return hashlib.sha256(self.raw).digest()

    def verify(self, public_key: bytes) -> None:
        try:
            _public_key(public_key).verify(self.signature, self.signed)
        except (InvalidSignature, ValueError):
            raise SignatureError(f"message {self.seq} from seat {self.seat} has a bad signature") from None


@functools.lru_cache(maxsize=64)
def _public_key(key: bytes) -> Ed25519PublicKey:
    """A seat's key, loaded once for all its messages (a table has at most a few seats)."""
    return Ed25519PublicKey.from_public_bytes(key)


def sign(key: Ed25519PrivateKey, seq: int, prev: bytes, seat: int, kind: str, wire: Any) -> bytes:
    """The payload of a message signed by ``key``, with ``wire`` as the body's wire form,
    checked by nobody: what ``seal`` sends, and what a test's cheater forges."""
    signed = pack([seq, prev, seat, kind, wire])
    return pack([signed, key.sign(signed)])


def seal(key: Ed25519PrivateKey, seq: int, prev: bytes, seat: int, body: Body) -> SignedMessage:
    """Our own message carrying ``body``, signed."""
    kind = kind_of(body)
    raw = sign(key, seq, prev, seat, kind.value, body.to_wire())
    signed, signature = unpack(raw)
    return SignedMessage(seq, prev, seat, kind, body, raw, signed, signature)


def parse(raw: bytes) -> SignedMessage:
    """Decode a message from a peer or a file; the caller checks the signature and the chain.
    Raises ``SignatureError`` (a ``WireError``) for anything malformed."""
    try:
        outer = unpack(raw)
        if not (isinstance(outer, list) and len(outer) == 2 and all(isinstance(x, bytes) for x in outer)):
            raise SignatureError("a message is [signed bytes, signature]")
        signed, signature = outer
        if len(signature) != SIGNATURE_SIZE:
            raise SignatureError(f"a signature is {SIGNATURE_SIZE} bytes, not {len(signature)}")
        inner = unpack(signed)
        # msgpack can write one value in several ways (a bin8 or a bin32 header, say). The
        # message's hash is over these bytes, so only the shortest form is accepted: otherwise
        # a relay could re-encode a message and change the chain's head at no cost.
        if pack(outer) != raw or pack(inner) != signed:
            raise SignatureError("a message not in msgpack's shortest encoding")
        if not (isinstance(inner, list) and len(inner) == 5):
            raise SignatureError("a signed message is [seq, prev, seat, kind, body]")
        seq, prev, seat, kind, wire = inner
        if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
            raise SignatureError(f"bad sequence number {describe(seq)}")
        if not isinstance(prev, bytes) or len(prev) != DIGEST_SIZE:
            raise SignatureError("bad previous-message hash")
        if type(seat) is not int or not 0 <= seat < MAX_SEATS:
            raise SignatureError(f"bad seat {describe(seat)}")
        try:
            kind = Kind(kind)
        except (ValueError, TypeError):
            raise SignatureError(f"unknown message kind {describe(kind)}") from None
        body = decode(kind, wire)
    except SignatureError:
        raise
    except UnknownTable as error:
        raise ForeignStart(str(error)) from None
    except WireError as error:
        raise SignatureError(str(error)) from None
    return SignedMessage(seq, prev, seat, kind, body, raw, signed, signature)
