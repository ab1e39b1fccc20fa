"""Commutative encryption of record ids: E_K1(E_K2(x)) = E_K2(E_K1(x)).

:class:`ModpCipher` is Pohlig–Hellman/SRA-style exponentiation in the 2048-bit
MODP group of RFC 3526 (a safe prime p = 2q + 1): a record id is hashed into
the subgroup of quadratic residues (SHAKE-256 of a domain tag, the session salt
and the id, reduced mod p and squared), and encrypting under a secret exponent
K is ``pow(x, K, p)``. Exponents commute, so doubly encrypted ids are equal
exactly when the ids are (up to negligible hash collisions); recovering x from
x^K, or linking x^K to x without K, is the discrete-log / decisional
Diffie–Hellman problem in that group. Keys are 256-bit exponents drawn with
:mod:`secrets` (RFC 3526 estimates about 110 bits of strength for this group;
an exponent of twice that suffices and makes ``pow`` ~8x faster than a full one).

Only the standard library is used (``pow``, :mod:`hashlib`, :mod:`secrets`);
CPython's ``pow`` costs ~3 ms per 2048-bit exponentiation on a slow core. The
transport package adds an X25519 cipher (same interface, ~40 µs per operation)
through the ``cryptography`` package for large tables.

The security model is the paper's: semi-honest parties (they follow the
protocol and try to learn from what they see).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Protocol

from privacy_plugins.errors import ConfigurationError, ProtocolError

__all__ = ["MODP_2048_PRIME", "CommutativeCipher", "ModpCipher", "ProtocolError", "id_bytes"]

#: The 2048-bit MODP group of RFC 3526 (section 3), generator 2; p is a safe prime.
MODP_2048_PRIME = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AACAA68FFFFFFFFFFFFFFFF",
    16,
)
_DOMAIN = b"privacy_plugins/dpp2ga/v1"


def id_bytes(record_id: object) -> bytes:
    """The canonical bytes of a record id (its text, UTF-8)."""
    return str(record_id).encode("utf-8")


class CommutativeCipher(Protocol):
    """One party's key of a commutative cipher over a fixed group."""

    @property
    def group(self) -> str:
        """Name and parameters digest of the group, compared in the handshake."""
        ...

    @property
    def element_size(self) -> int:
        """Bytes of one encoded group element."""
        ...

    def hash_to_group(self, record_ids: Sequence[object], salt: bytes) -> list[bytes]:
        """Map record ids to group elements (the same for both parties, given the session salt)."""
        ...

    def encrypt(self, elements: Sequence[bytes]) -> list[bytes]:
        """Raise every element to this party's secret key.

        Raises:
            ProtocolError: an element is not a valid group element.
        """
        ...


class ModpCipher:
    """Exponentiation with a secret 256-bit exponent modulo the RFC 3526 2048-bit safe prime.

    Example:
        >>> a, b = ModpCipher(), ModpCipher()
        >>> x = a.hash_to_group(["record 7"], b"salt")
        >>> a.encrypt(b.encrypt(x)) == b.encrypt(a.encrypt(x))
        True
    """

    p = MODP_2048_PRIME
    element_size = 256
    exponent_bits = 256

    def __init__(self, key: int | None = None) -> None:
        if key is None:
            key = secrets.randbits(self.exponent_bits) | (1 << (self.exponent_bits - 1))
        if not 2 <= key < (self.p - 1) // 2:
            raise ConfigurationError("a MODP key must be an exponent in [2, q)")
        self._key = key

    @property
    def group(self) -> str:
        """``modp2048:`` and the first bytes of SHA-256 of p."""
        return "modp2048:" + hashlib.sha256(self.p.to_bytes(self.element_size, "big")).hexdigest()[:16]

    def hash_to_group(self, record_ids: Sequence[object], salt: bytes) -> list[bytes]:
        """SHAKE-256(tag, salt, id) mod p, squared: a quadratic residue (the prime-order subgroup)."""
        out = []
        for record_id in record_ids:
            raw = id_bytes(record_id)
            digest = hashlib.shake_256(_DOMAIN + len(salt).to_bytes(2, "big") + salt + raw).digest(264)
            x = pow(int.from_bytes(digest, "big") % self.p, 2, self.p)
            out.append(x.to_bytes(self.element_size, "big"))
        return out

    def encrypt(self, elements: Sequence[bytes]) -> list[bytes]:
        """``pow(x, K, p)`` for every element (each checked to be in 2..p-2)."""
        p, key, size = self.p, self._key, self.element_size
        out = []
        for element in elements:
            x = int.from_bytes(element, "big")
            if len(element) != size or not 1 < x < p - 1:
                raise ProtocolError("the peer sent a value that is not an element of the MODP group")
            out.append(pow(x, key, p).to_bytes(size, "big"))
        return out
