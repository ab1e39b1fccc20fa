"""A commutative cipher on Curve25519 (X25519 scalar multiplication, via ``cryptography``).

X25519(a, X25519(b, u)) = X25519(b, X25519(a, u)): the x-only Montgomery ladder
multiplies a point by a clamped scalar, and scalar multiplications commute. A
record id hashes to a u-coordinate (SHA-256 of a domain tag, the session salt
and the id, top bit cleared); the clamping of the scalars (a multiple of the
cofactor 8) maps it into the prime-order subgroup, on the curve or on its twist
(both ~2¹²⁵ security, Curve25519 is twist-secure). About 40 µs per operation on
this machine, against ~3 ms for a 2048-bit ``pow``: Adult's 30k ids need 2 × 30k
operations per party.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from privacy_plugins.core.distributed.cipher import id_bytes
from privacy_plugins.errors import MissingDependencyError, ProtocolError

__all__ = ["X25519Cipher"]

_DOMAIN = b"privacy_plugins/dpp2ga/x25519/v1"


class X25519Cipher:
    """One party's secret scalar; ``encrypt`` multiplies every point by it."""

    element_size = 32
    group = "x25519:rfc7748"

    def __init__(self) -> None:
        try:
            from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
        except ImportError as exc:  # pragma: no cover - cryptography ships with the test environment
            raise MissingDependencyError(
                "the x25519 group needs the 'cryptography' package (pip install 'privacy-plugins[distributed]'), "
                "or use --group modp2048"
            ) from exc
        self._key: Any = X25519PrivateKey.from_private_bytes(secrets.token_bytes(32))
        self._point: Any = X25519PublicKey.from_public_bytes

    def hash_to_group(self, record_ids: Sequence[object], salt: bytes) -> list[bytes]:
        """SHA-256(tag, salt, id) with the top bit cleared: a u-coordinate."""
        prefix = _DOMAIN + len(salt).to_bytes(2, "big") + salt
        out = []
        for record_id in record_ids:
            digest = bytearray(hashlib.sha256(prefix + id_bytes(record_id)).digest())
            digest[31] &= 0x7F
            out.append(bytes(digest))
        return out

    def encrypt(self, elements: Sequence[bytes]) -> list[bytes]:
        """X25519(key, u) for every u."""
        exchange, point = self._key.exchange, self._point
        try:
            return [exchange(point(element)) for element in elements]
        except ValueError as exc:  # wrong length or a small-order point (all-zero result)
            raise ProtocolError("the peer sent a value that is not a usable X25519 point") from exc
