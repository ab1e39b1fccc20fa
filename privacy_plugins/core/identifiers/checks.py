"""Vectorized value checks for direct identifiers: regular expressions and check digits.

Every check takes a string column (sampled distinct values) and returns a boolean
numpy array, one entry per value. Check digits (Luhn, IBAN mod-97, VIN) are
computed with numpy over all values of one length at once, never per row.

References:
    Luhn H. P. "Computer for verifying numbers." US patent 2,950,048, 1960.
    ISO 13616-1:2020 (IBAN, ISO 7064 mod 97-10). 49 CFR § 565.15 (VIN check digit).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["VALUE_CHECKS", "iban_valid", "luhn_valid", "vin_valid"]

Check = Callable[[pd.Series], np.ndarray]

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_HEX = r"[0-9A-Fa-f]{1,4}"
PATTERNS: dict[str, str] = {
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    # formatted numbers only: a bare run of digits is as likely an order number
    "phone": r"(?:\+?1[ .-]?)?(?:\([0-9]{3}\) ?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}"
    r"|\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?){2,5}",
    "phone_named": r"\+?[0-9]{10,15}",
    # SSA rules: area 000, 666 and 900-999, group 00 and serial 0000 are never issued
    "ssn": r"(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}",
    "ssn_named": r"(?!000|666|9[0-9]{2})[0-9]{3}[ -]?(?!00)[0-9]{2}[ -]?(?!0000)[0-9]{4}",
    "ip_address": rf"(?:{_OCTET}\.){{3}}{_OCTET}|(?:{_HEX}:){{7}}{_HEX}"
    rf"|(?:{_HEX}(?::{_HEX})*)?::(?:{_HEX}(?::{_HEX})*)?",
    "url": r"(?i:(?:https?|ftp)://[^\s/?#]+[^\s]*|www\.[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:/\S*)?)",
    "street_address": r"(?i:[0-9]{1,6}(?: [A-Za-z0-9.'-]+){1,4} (?:street|st|avenue|ave|road|rd|boulevard|blvd"
    r"|lane|ln|drive|dr|court|ct|way|place|pl|terrace|parkway|pkwy)\.?(?:,? .*)?)",
    "birth_date": r"[0-9]{4}-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12][0-9]|3[01])(?:[ T].*)?"
    r"|(?:0?[1-9]|[12][0-9]|3[01])[./-](?:0?[1-9]|[12][0-9]|3[01])[./-][0-9]{4}",
    "zip_code": r"[0-9]{5}(?:-[0-9]{4})?",
    "record_number": r"(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9-]{5,34}",
    "person_name_shape": r"[A-Z][a-z]+(?:[ '-][A-Z][a-z]+){0,3}",
}


def _fullmatch(pattern: str) -> Check:
    def check(values: pd.Series) -> np.ndarray:
        return values.str.fullmatch(pattern).fillna(False).to_numpy(dtype=bool)

    return check


def _by_length(values: pd.Series, mask: np.ndarray, score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply ``score`` to the (n, L) byte matrix of each length L among the values under ``mask``."""
    out = np.zeros(len(values), dtype=bool)
    candidates = np.flatnonzero(mask)
    if candidates.size == 0:
        return out
    texts = values.to_numpy(dtype=object)[candidates]
    lengths = values.str.len().to_numpy(dtype=np.int64)[candidates]
    for length in np.unique(lengths):
        rows = candidates[lengths == length]
        chunk = "".join(texts[lengths == length]).encode("ascii")
        matrix = np.frombuffer(chunk, dtype=np.uint8).reshape(len(rows), int(length))
        out[rows] = score(matrix)
    return out


def _luhn_score(matrix: np.ndarray) -> np.ndarray:
    digits = (matrix[:, ::-1] - 48).astype(np.int64)
    doubled = digits[:, 1::2] * 2
    doubled -= 9 * (doubled > 9)
    return np.asarray((digits[:, 0::2].sum(axis=1) + doubled.sum(axis=1)) % 10 == 0)


def luhn_valid(values: pd.Series) -> np.ndarray:
    """Card-shaped numbers (13–19 digits, major-network prefix 2–6, spaces/dashes allowed) passing Luhn.

    Example:
        >>> luhn_valid(pd.Series(["4111 1111 1111 1111", "4111111111111112", "12"])).tolist()
        [True, False, False]
    """
    digits = values.str.replace(r"[ -]", "", regex=True)
    shaped = digits.str.fullmatch(r"[2-6][0-9]{12,18}").fillna(False).to_numpy(dtype=bool)
    return _by_length(digits, shaped, _luhn_score)


_ALNUM_VALUE = np.full(256, -1, dtype=np.int64)
_ALNUM_VALUE[48:58] = np.arange(10)
_ALNUM_VALUE[65:91] = np.arange(10, 36)


def _mod97_score(matrix: np.ndarray) -> np.ndarray:
    rotated = np.concatenate([matrix[:, 4:], matrix[:, :4]], axis=1)
    numbers = _ALNUM_VALUE[rotated]
    remainder = np.zeros(len(matrix), dtype=np.int64)
    for column in numbers.T:  # at most 34 steps, each over every value at once
        wide = column >= 10
        remainder = np.where(wide, remainder * 100 + column, remainder * 10 + column) % 97
    return np.asarray(remainder == 1)


def iban_valid(values: pd.Series) -> np.ndarray:
    """IBANs (country, two check digits, 11–30 alphanumerics; spaces allowed) with a valid mod-97.

    Example:
        >>> iban_valid(pd.Series(["GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 33"])).tolist()
        [True, False]
    """
    compact = values.str.replace(" ", "", regex=False).str.upper()
    shaped = compact.str.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}").fillna(False).to_numpy(dtype=bool)
    return _by_length(compact, shaped, _mod97_score)


_VIN_VALUE = np.zeros(256, dtype=np.int64)
_VIN_VALUE[48:58] = np.arange(10)
for _letters, _start in (("ABCDEFGH", 1), ("JKLMN", 1), ("P", 7), ("R", 9), ("STUVWXYZ", 2)):
    for _offset, _letter in enumerate(_letters):
        _VIN_VALUE[ord(_letter)] = _start + _offset
_VIN_WEIGHTS = np.array([8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2], dtype=np.int64)


def _vin_score(matrix: np.ndarray) -> np.ndarray:
    remainder = (_VIN_VALUE[matrix] * _VIN_WEIGHTS).sum(axis=1) % 11
    expected = np.where(remainder == 10, ord("X"), remainder + 48)
    return np.asarray(matrix[:, 8] == expected)


def vin_valid(values: pd.Series) -> np.ndarray:
    """Vehicle identification numbers (17 characters, no I/O/Q) whose 9th character is the check digit.

    Example:
        >>> vin_valid(pd.Series(["1M8GDM9AXKP042788", "1M8GDM9A1KP042788"])).tolist()
        [True, False]
    """
    upper = values.str.upper()
    shaped = upper.str.fullmatch(r"[A-HJ-NPR-Z0-9]{17}").fillna(False).to_numpy(dtype=bool)
    return _by_length(upper, shaped, _vin_score)


def _international_phone(values: pd.Series) -> np.ndarray:
    shaped = _fullmatch(PATTERNS["phone"])(values)
    digits = values.str.count(r"[0-9]").to_numpy()
    return shaped & (digits >= 8) & (digits <= 15)


VALUE_CHECKS: dict[str, Check] = {
    **{name: _fullmatch(pattern) for name, pattern in PATTERNS.items()},
    "phone": _international_phone,
    "card_number": luhn_valid,
    "iban": iban_valid,
    "vehicle_id": vin_valid,
}
