"""Digamma and trigamma (NumPy has neither; the core may not import SciPy).

ψ is shifted up by the recurrence ψ(x) = ψ(x+1) − 1/x until the argument is at
least 12, then evaluated by the asymptotic (de Moivre) series; the error is
below 1e-15 relative for positive arguments. The array versions do the shift
as one masked (elements × 12) sum, no Python loop; the scalar versions serve the
Newton iterations of :mod:`privacy_plugins.core.metrics._pitman`, which
evaluate a handful of scalars thousands of times.

References:
    Abramowitz M., Stegun I. A. Handbook of Mathematical Functions, 6.3.18 and 6.4.12. 1964.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "digamma",
    "digamma1",
    "digamma_series",
    "trigamma",
    "trigamma_series",
    "trigamma_truncated",
    "trigamma_truncated1",
]

_LARGE = 12.0
_SHIFTS = np.arange(12, dtype=np.float64)
_ZETA3 = 1.2020569031595942


def digamma_series(y: np.ndarray | float) -> np.ndarray | float:
    """ψ(y) by the asymptotic series alone (accurate for y ≥ 12)."""
    r = 1.0 / (y * y)
    return np.log(y) - 0.5 / y - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))


def trigamma_series(y: np.ndarray | float) -> np.ndarray | float:
    """ψ'(y) by the asymptotic series alone (accurate for y ≥ 12)."""
    r = 1.0 / (y * y)
    return 0.5 * r + (1.0 + r * (1 / 6 + r * (-1 / 30 + r * (1 / 42 + r * (-1 / 30 + r * (5 / 66)))))) / y


def _shift(x: np.ndarray, target: float) -> tuple[np.ndarray, np.ndarray]:
    """(x + m, the terms x, x+1, …, x+m−1 as an (elements × 12) masked array) with x + m ≥ target."""
    steps = np.maximum(np.ceil(target - x), 0.0)
    terms = x[:, None] + _SHIFTS[None, :]
    return x + steps, np.where(_SHIFTS[None, :] < steps[:, None], terms, np.inf)


def digamma(x: np.ndarray | float) -> np.ndarray:
    """ψ(x) for positive x, elementwise (NaN elsewhere).

    Example:
        >>> round(float(digamma(1.0)[0]), 12)  # −γ (Euler–Mascheroni)
        -0.577215664902
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        y, terms = _shift(np.where(values > 0, values, np.nan), _LARGE)
        out = digamma_series(y) - (1.0 / terms).sum(axis=1)
    negative = values < 0
    if negative.any():
        out[negative] = [digamma1(v) for v in values[negative]]
    return out


def trigamma(x: np.ndarray | float) -> np.ndarray:
    """ψ'(x) for positive x, elementwise (NaN elsewhere).

    Example:
        >>> round(float(trigamma(1.0)[0]), 12)  # π²/6
        1.644934066848
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        y, terms = _shift(np.where(values > 0, values, np.nan), _LARGE)
        return trigamma_series(y) + (1.0 / (terms * terms)).sum(axis=1)


def trigamma_truncated(x: np.ndarray | float) -> np.ndarray:
    """The trigamma approximation ARX's Pitman solver uses for its Jacobian (not ψ' itself), elementwise.

    Σ 1/(x+k)² over the shifts that keep x+k < 8, plus the asymptotic tail only
    when the (shifted) argument is ≥ 12 — so 0 on [8, 12). Only the Newton path
    of the Pitman fit uses it (the equations solved are exact), so that the
    estimates are ARX's; see docs/population-risk.md. Defined for x > 1e-4.

    Example:
        >>> float(trigamma_truncated(9.0)[0]), round(float(trigamma_truncated(7.0)[0]), 6)
        (0.0, 0.020408)
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        y, terms = _shift(np.where(values > 1e-4, values, np.nan), 8.0)
        tail = np.where(y >= _LARGE, trigamma_series(y), 0.0)
        out = tail + (1.0 / (terms * terms)).sum(axis=1)
    small = (values > 0) & (values <= 1e-4) | (values < 0)
    if small.any():
        out[small] = [trigamma_truncated1(v) for v in values[small]]
    return out


def digamma1(x: float) -> float:
    """ψ(x) of one float (reflection ψ(x) = ψ(1−x) − π·cot(πx) below 0; NaN at poles and non-finite x)."""
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return math.nan
    if x < 0:
        return digamma1(1.0 - x) + math.pi / math.tan(-math.pi * x)
    if x <= 1e-6:
        return -0.5772156649015329 - 1.0 / x + math.pi**2 / 6 * x
    shift = 0.0
    while x < _LARGE:
        shift -= 1.0 / x
        x += 1.0
    r = 1.0 / (x * x)
    return shift + math.log(x) - 0.5 / x - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))


def trigamma_truncated1(x: float) -> float:
    """:func:`trigamma_truncated` of one float (with the reflection formula below 0)."""
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return math.nan
    if x < 0:
        r = math.pi / math.sin(-math.pi * x)
        return -trigamma_truncated1(1.0 - x) + r * r
    if x <= 1e-4:
        return 1.0 / (x * x) + math.pi**2 / 6 - 2.0 * _ZETA3 * x
    total = 0.0
    while x < 8.0:
        total += 1.0 / (x * x)
        x += 1.0
    if x < _LARGE:
        return total
    r = 1.0 / (x * x)
    return total + 0.5 * r + (1.0 + r * (1 / 6 + r * (-1 / 30 + r * (1 / 42 + r * (-1 / 30 + r * (5 / 66)))))) / x
