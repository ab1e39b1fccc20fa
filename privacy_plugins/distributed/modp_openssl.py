"""The MODP-2048 cipher with OpenSSL's modular exponentiation (through ``cryptography``).

Same group, same hashing, same results as the stdlib
:class:`~privacy_plugins.core.distributed.ModpCipher` (it is a subclass that
only replaces ``encrypt``), so a party using either interoperates with the
other. ``x^K mod p`` is computed as a finite-field Diffie–Hellman exchange with
private exponent K and peer public value x — OpenSSL's constant-time Montgomery
``BN_mod_exp`` — about 0.3 ms per element here against ~4 ms for CPython's
``pow``. ``cryptography`` marks finite-field DH deprecated (a
``CryptographyDeprecationWarning``, silenced here); when it is gone,
:func:`openssl_available` is false and the stdlib cipher is used.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from privacy_plugins.core.distributed.cipher import ModpCipher
from privacy_plugins.errors import ProtocolError

__all__ = ["OpenSSLModpCipher", "openssl_available"]


def _dh() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from cryptography.hazmat.primitives.asymmetric import dh

    return dh


def openssl_available() -> bool:
    """True when ``cryptography`` offers finite-field DH with arbitrary parameters."""
    try:
        dh = _dh()
    except ImportError:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hasattr(dh, "DHParameterNumbers") and hasattr(dh, "DHPrivateNumbers")


class OpenSSLModpCipher(ModpCipher):
    """:class:`ModpCipher` whose exponentiations run in OpenSSL.

    Example:
        >>> fast, slow = OpenSSLModpCipher(key=12345), ModpCipher(key=12345)
        >>> x = slow.hash_to_group(["r1", "r2"], b"salt")
        >>> fast.encrypt(x) == slow.encrypt(x)
        True
    """

    def __init__(self, key: int | None = None) -> None:
        super().__init__(key)
        dh = _dh()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._parameters = dh.DHParameterNumbers(self.p, 2)
            public = dh.DHPublicNumbers(pow(2, self._key, self.p), self._parameters)
            self._private = dh.DHPrivateNumbers(self._key, public).private_key()
            self._public = dh.DHPublicNumbers

    def encrypt(self, elements: Sequence[bytes]) -> list[bytes]:
        """``x^K mod p`` for every element, by OpenSSL (each checked to be in 2..p-2)."""
        p, size, exchange = self.p, self.element_size, self._private.exchange
        public, parameters = self._public, self._parameters
        out = []
        # No warnings filter here: only the deprecated module attributes warn (read once, in
        # __init__), and catch_warnings is not thread-safe (two parties may encrypt at once).
        for element in elements:
            x = int.from_bytes(element, "big")
            if len(element) != size or not 1 < x < p - 1:
                raise ProtocolError("the peer sent a value that is not an element of the MODP group")
            try:
                shared = exchange(public(x, parameters).public_key())
            except ValueError as exc:
                raise ProtocolError("the peer sent a value OpenSSL rejects as a MODP group element") from exc
            out.append(shared.rjust(size, b"\x00"))
        return out
