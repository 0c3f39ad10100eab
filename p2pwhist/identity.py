"""Who a peer is: its Ed25519 public key, and the fingerprint people compare (wire.md §5)."""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

PUBLIC_KEY_SIZE = 32


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
