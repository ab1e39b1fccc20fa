"""Keyed pseudonyms: replace an identifier by an HMAC-SHA256 token under a secret key.

A token is irreversible without the key, deterministic under the same key (and
release salt), and never the raw value. With ``scope="release"`` a fresh salt per
release makes tokens join the tables of one release only; ``scope="stable"``
gives every release the same token for a value, so releases become linkable
record by record (the release history must then treat them so).

The key lives in :class:`PseudonymKey`, whose ``repr``/``str`` hide it and which
refuses to be pickled, so it cannot leak into logs, reports, XCom or errors.

References:
    Krawczyk H., Bellare M., Canetti R. "HMAC: Keyed-Hashing for Message
    Authentication." RFC 2104, 1997.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from typing import Any, Literal, NoReturn

import numpy as np
import pandas as pd

from privacy_plugins.errors import ConfigurationError

__all__ = [
    "MIN_KEY_BYTES",
    "MIN_SALT_BYTES",
    "TOKEN_LENGTH",
    "PseudonymKey",
    "date_shift_days",
    "new_release_salt",
    "pseudonymize",
    "token",
    "utf8_tokens",
]

#: The shortest key accepted (256 bits, the output size of SHA-256).
MIN_KEY_BYTES = 32
#: The shortest release salt accepted.
MIN_SALT_BYTES = 16
#: Characters of a token: 128 bits of the MAC in lowercase base32, unpadded.
TOKEN_LENGTH = 26
_DIGEST_BYTES = 16
_ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz234567", dtype=np.uint8)
_DOMAIN = b"privacy_plugins pseudonym v1\x00"

Scope = Literal["release", "stable"]


class PseudonymKey:
    """A secret key for pseudonyms; its bytes never appear in a repr, a str or an error.

    Args:
        secret: the key, bytes of length ≥ 32 (``MIN_KEY_BYTES``).
        setting: how the user set the key (e.g. ``"pseudonymize.key"``), named
            in the error when the key is unusable.

    Example:
        >>> key = PseudonymKey(b"k" * 32)
        >>> key
        PseudonymKey(<hidden, 32 bytes>)
    """

    __slots__ = ("__secret",)

    def __init__(self, secret: bytes, *, setting: str = "pseudonym key") -> None:
        if not isinstance(secret, (bytes, bytearray)):
            raise ConfigurationError(f"{setting} must be bytes, got {type(secret).__name__}")
        if len(secret) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"{setting} is too short: {len(secret)} bytes, at least {MIN_KEY_BYTES} are required"
            )
        self.__secret = bytes(secret)

    def __repr__(self) -> str:
        return f"PseudonymKey(<hidden, {len(self.__secret)} bytes>)"

    __str__ = __repr__

    def __copy__(self) -> PseudonymKey:
        return self  # immutable: copies (e.g. of a spec holding the key) share it

    def __deepcopy__(self, memo: dict[int, Any]) -> PseudonymKey:
        return self

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a PseudonymKey is never serialized; pass the key's source (an environment variable) instead")

    def _derive(self, salt: bytes | None) -> bytes:
        """The MAC key for one scope: the salt (if any) is bound in under the secret."""
        message = _DOMAIN + (b"release\x00" + salt if salt is not None else b"stable\x00")
        return hmac.digest(self.__secret, message, hashlib.sha256)


def new_release_salt() -> bytes:
    """A fresh random salt for one release (``scope="release"``)."""
    return secrets.token_bytes(MIN_SALT_BYTES)


def _check_scope(scope: str, salt: bytes | None) -> bytes | None:
    if scope == "stable":
        if salt is not None:
            raise ConfigurationError("pseudonymize.scope is 'stable': a release salt must not be given")
        return None
    if scope != "release":
        raise ConfigurationError(f"pseudonymize.scope must be 'release' or 'stable', got {scope!r}")
    if not isinstance(salt, (bytes, bytearray)) or len(salt) < MIN_SALT_BYTES:
        raise ConfigurationError(
            f"pseudonymize.scope 'release' needs a release salt of at least {MIN_SALT_BYTES} bytes"
            " (see new_release_salt())"
        )
    return bytes(salt)


def _canonical_text(value: Any) -> str:
    """The text a value is keyed by: integral floats as integers (an id column with nulls turns float)."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (np.integer, np.bool_)):
        return str(value.item())
    return str(value)


class _Hmac:
    """HMAC-SHA256 truncated to 16 bytes, with the padded-key states hashed once (RFC 2104).

    Copying the two precomputed SHA-256 states per value is about 2.5x faster
    than ``hmac.digest``, which re-pads and re-hashes the key on every call.
    """

    __slots__ = ("_inner", "_outer")

    def __init__(self, mac_key: bytes) -> None:
        block = mac_key.ljust(64, b"\x00")  # a derived key is 32 bytes: shorter than SHA-256's block
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in block))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in block))

    def __call__(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()[:_DIGEST_BYTES]


def _encode(digests: bytes, count: int) -> np.ndarray:
    """Lowercase unpadded base32 of ``count`` 16-byte digests, vectorized with numpy (RFC 4648 bit order)."""
    padded = np.zeros((count, 20), dtype=np.uint8)
    padded[:, :_DIGEST_BYTES] = np.frombuffer(digests, dtype=np.uint8).reshape(count, _DIGEST_BYTES)
    b0, b1, b2, b3, b4 = (padded[:, i::5] for i in range(5))  # each (count, 4): one column per 5-byte group
    quintets = np.stack(
        [
            b0 >> 3,
            ((b0 & 7) << 2) | (b1 >> 6),
            (b1 >> 1) & 31,
            ((b1 & 1) << 4) | (b2 >> 4),
            ((b2 & 15) << 1) | (b3 >> 7),
            (b3 >> 2) & 31,
            ((b3 & 3) << 3) | (b4 >> 5),
            b4 & 31,
        ],
        axis=2,
    ).reshape(count, 32)
    chars = np.ascontiguousarray(_ALPHABET[quintets[:, :TOKEN_LENGTH]]).view(f"S{TOKEN_LENGTH}").ravel()
    return np.array([text.decode("ascii") for text in chars.tolist()], dtype=object)


def pseudonymize(
    values: pd.Series, key: PseudonymKey, *, scope: Scope = "release", salt: bytes | None = None
) -> pd.Series:
    """Replace every value of a column by its token; nulls stay null.

    Each distinct value is hashed once and mapped back by its code, so the cost
    grows with the number of distinct values, not rows.

    Args:
        values: the column.
        key: the secret key.
        scope: ``"release"`` (default; needs ``salt``) or ``"stable"`` (no salt).
        salt: the release salt, bytes of length ≥ 16, for ``scope="release"``.

    Returns:
        An object column of 26-character lowercase base32 tokens (``None`` where
        the input is null), with the input's index and name.

    Example:
        >>> key = PseudonymKey(b"k" * 32)
        >>> out = pseudonymize(pd.Series(["a", None, "a"]), key, scope="stable")
        >>> out[0] == out[2], out[1] is None, len(out[0])
        (True, True, 26)
    """
    if not isinstance(key, PseudonymKey):
        raise ConfigurationError("pseudonymize.key must be a PseudonymKey")
    mac = _Hmac(key._derive(_check_scope(scope, salt)))
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = np.asarray(uniques, dtype=object)
    if pd.api.types.infer_dtype(distinct, skipna=False) != "string":
        distinct = np.array([_canonical_text(v) for v in distinct], dtype=object)
    joined = b"".join(mac(text.encode("utf-8")) for text in distinct)
    tokens = _encode(joined, len(distinct))
    out = np.full(len(codes), None, dtype=object)
    present = codes >= 0
    out[present] = tokens[codes[present]]
    return pd.Series(out, index=values.index, name=values.name, dtype=object)


def date_shift_days(
    values: pd.Series, key: PseudonymKey, *, max_days: int, scope: Scope = "release", salt: bytes | None = None
) -> np.ndarray:
    """Per value (a person's id), a shift in days in ``[-max_days, max_days]``: the same id, the same shift.

    Derived from a second HMAC of the id under the key (and salt), in its own domain: the
    published token does not give the shift away, so shifted dates cannot be shifted back
    without the key. Null ids get shift 0 (their dates stay as they are: the caller decides).

    Example:
        >>> key = PseudonymKey(b"k" * 32)
        >>> days = date_shift_days(pd.Series(["a", "b", "a"]), key, max_days=30, scope="stable")
        >>> bool(days[0] == days[2]) and bool(abs(days).max() <= 30)
        True
    """
    if not isinstance(max_days, int) or isinstance(max_days, bool) or max_days < 1:
        raise ConfigurationError(f"shift_dates.max_days must be an integer >= 1, got {max_days!r}")
    mac = _Hmac(hmac.digest(key._derive(_check_scope(scope, salt)), b"date shift\x00", hashlib.sha256))
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [_canonical_text(v) for v in np.asarray(uniques, dtype=object)]
    digests = np.frombuffer(b"".join(mac(t.encode("utf-8")) for t in texts), dtype=">u8").reshape(-1, 2)[:, 0]
    shifts = (digests % np.uint64(2 * max_days + 1)).astype(np.int64) - max_days
    out = np.zeros(len(codes), dtype=np.int64)
    present = codes >= 0
    out[present] = shifts[codes[present]]
    return out


def utf8_tokens(
    offsets: np.ndarray, data: np.ndarray, key: PseudonymKey, *, scope: Scope = "release", salt: bytes | None = None
) -> np.ndarray | None:
    """Tokens of a string column given as Arrow-style offsets + UTF-8 bytes, in one compiled call.

    The same tokens as :func:`pseudonymize` gives the values as ``str``; the MAC key stays in
    this module. ``None`` when numba is not installed (the caller keeps :func:`pseudonymize`).

    Returns:
        ``uint8`` array of ``(len(offsets) - 1) * TOKEN_LENGTH`` bytes: the tokens' ASCII, back to back.
    """
    from privacy_plugins.core import pseudonym_kernel

    if not isinstance(key, PseudonymKey):
        raise ConfigurationError("pseudonymize.key must be a PseudonymKey")
    mac_key = key._derive(_check_scope(scope, salt))
    if not pseudonym_kernel.AVAILABLE:
        return None
    return pseudonym_kernel.hmac_tokens(offsets, data, mac_key)


def token(value: Any, key: PseudonymKey, *, scope: Scope = "release", salt: bytes | None = None) -> str:
    """The token of one value (the same as :func:`pseudonymize` gives it in a column).

    Example:
        >>> key = PseudonymKey(b"k" * 32)
        >>> token(7, key, scope="stable") == token(7.0, key, scope="stable") == token("7", key, scope="stable")
        True
    """
    result = pseudonymize(pd.Series([value], dtype=object), key, scope=scope, salt=salt).iloc[0]
    if result is None:
        raise ConfigurationError("a null value has no pseudonym")
    return str(result)
