"""Signed, hash-chained messages: the unit of the wire and of the transcript.

Every message carries its sequence number in the game's single log, the hash of the message
before it, the sender's seat, a kind and a body, and is signed with the sender's Ed25519 key
over those exact bytes (Secure Scuttlebutt's construction, REFERENCE.md section 3). The bytes
are kept verbatim: they are what the transcript stores and what the next message's ``prev``
hashes. See ``protocol/wire.md`` for the byte layout.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from p2pwhist.wire import WireError, pack, unpack

GENESIS_PREV = bytes(32)  # the first message of a game chains to 32 zero bytes
PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64
DIGEST_SIZE = 32


class Kind(enum.Enum):
    """What a message is; the wire carries the value."""

    START = "start"  # the host's configuration and seating: the genesis message
    ACCEPT = "accept"  # a joiner binds its key to the configuration
    HAND = "hand"  # the host starts the next hand (or, with ``more`` false, ends the match)
    COMMIT = "commit"  # deck protocol messages (p2pwhist.deck), carried opaquely
    SHUFFLE = "shuffle"
    LOCK = "lock"
    KEYS = "keys"
    PLAY = "play"  # a move with the played card's key
    SECRET = "secret"  # end-of-hand reveal of a seat's hand secret
    RESULT = "result"  # a seat's signature on a hand's result
    FINAL = "final"  # a seat's signature on the match result
    DISPUTE = "dispute"  # a seat found a bad reveal: every secret is called in, the audit judges
    ABORT = "abort"  # a seat stops the game and says why


def public_bytes(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def fingerprint(public_key: bytes) -> str:
    """A short, typeable name for a key: the first 16 bytes of its SHA-256, in hex groups."""
    digest = hashlib.sha256(public_key).hexdigest()[:32]
    return "-".join(digest[i : i + 4] for i in range(0, 32, 4))


def same_fingerprint(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch in "0123456789abcdef")

    return norm(a) == norm(b)


class SignatureError(ValueError):
    """A message whose structure or signature is wrong."""


@dataclass(frozen=True, slots=True)
class SignedMessage:
    seq: int
    prev: bytes
    seat: int
    kind: Kind
    body: Any
    raw: bytes  # the exact payload as sent and stored
    signed: bytes  # the part the signature covers
    signature: bytes

    @property
    def digest(self) -> bytes:
        return hashlib.sha256(self.raw).digest()

    def verify(self, public_key: bytes) -> None:
        try:
            Ed25519PublicKey.from_public_bytes(public_key).verify(self.signature, self.signed)
        except (InvalidSignature, ValueError):
            raise SignatureError(f"message {self.seq} from seat {self.seat} has a bad signature") from None


def seal(key: Ed25519PrivateKey, seq: int, prev: bytes, seat: int, kind: Kind, body: Any) -> SignedMessage:
    signed = pack([seq, prev, seat, kind.value, body])
    signature = key.sign(signed)
    raw = pack([signed, signature])
    return SignedMessage(seq, prev, seat, kind, body, raw, signed, signature)


def parse(raw: bytes) -> SignedMessage:
    """Parse a message's structure; the caller checks the signature and the chain."""
    try:
        outer = unpack(raw)
        if not (isinstance(outer, list) and len(outer) == 2 and all(isinstance(x, bytes) for x in outer)):
            raise SignatureError("a message is [signed bytes, signature]")
        signed, signature = outer
        if len(signature) != SIGNATURE_SIZE:
            raise SignatureError(f"a signature is {SIGNATURE_SIZE} bytes, not {len(signature)}")
        inner = unpack(signed)
    except WireError as error:
        raise SignatureError(str(error)) from None
    if not (isinstance(inner, list) and len(inner) == 5):
        raise SignatureError("a signed message is [seq, prev, seat, kind, body]")
    seq, prev, seat, kind, body = inner
    if type(seq) is not int or seq < 0:
        raise SignatureError(f"bad sequence number {seq!r:.40}")
    if not isinstance(prev, bytes) or len(prev) != DIGEST_SIZE:
        raise SignatureError("bad previous-message hash")
    if type(seat) is not int or not 0 <= seat < 4:
        raise SignatureError(f"bad seat {seat!r:.40}")
    try:
        kind = Kind(kind)
    except ValueError:
        raise SignatureError(f"unknown message kind {kind!r:.40}") from None
    return SignedMessage(seq, prev, seat, kind, body, raw, signed, signature)
