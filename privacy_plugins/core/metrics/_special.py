"""Digamma and trigamma over NumPy arrays (NumPy has neither; the core may not import SciPy).

Both shift the argument up by the recurrences ψ(x) = ψ(x+1) − 1/x and
ψ'(x) = ψ'(x+1) + 1/x² until it is at least 12, then use the asymptotic
(de Moivre) series; the error there is below 1e-15 relative. Negative
arguments use the reflection formulas. The population-uniqueness estimators
(:mod:`privacy_plugins.core.metrics.uniqueness`) evaluate them on the handful of
distinct class sizes, never per row.

References:
    Abramowitz M., Stegun I. A. Handbook of Mathematical Functions, 6.3.18 and 6.4.12. 1964.
"""

from __future__ import annotations

import numpy as np

__all__ = ["digamma", "trigamma", "trigamma_truncated"]

_LARGE = 12.0


def _shifted(x: np.ndarray, term: str) -> tuple[np.ndarray, np.ndarray]:
    """Shift every element to ≥ 12, accumulating the recurrence terms (at most 12 vector steps)."""
    shift = np.zeros_like(x)
    y = x.copy()
    while True:
        low = y < _LARGE
        if not low.any():
            return y, shift
        if term == "digamma":
            shift[low] -= 1.0 / y[low]
        else:
            shift[low] += 1.0 / (y[low] * y[low])
        y[low] += 1.0


def digamma(x: np.ndarray | float) -> np.ndarray:
    """ψ(x) = d/dx ln Γ(x), elementwise; NaN at 0 and the negative integers.

    Example:
        >>> round(float(digamma(1.0)), 12)  # −γ (Euler–Mascheroni)
        -0.577215664902
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = np.full(values.shape, np.nan)
    positive = values > 0
    if positive.any():
        y, shift = _shifted(values[positive], "digamma")
        r = 1.0 / (y * y)
        series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
        out[positive] = shift + np.log(y) - 0.5 / y - series
    negative = (values < 0) & (values != np.floor(values))
    if negative.any():
        v = values[negative]
        out[negative] = digamma(1.0 - v) - np.pi / np.tan(np.pi * v)
    return out


def trigamma(x: np.ndarray | float) -> np.ndarray:
    """ψ'(x), elementwise; NaN at 0 and the negative integers.

    Example:
        >>> round(float(trigamma(1.0)), 12)  # π²/6
        1.644934066848
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = np.full(values.shape, np.nan)
    positive = values > 0
    if positive.any():
        y, shift = _shifted(values[positive], "trigamma")
        r = 1.0 / (y * y)
        series = 1.0 + r * (1 / 6 + r * (-1 / 30 + r * (1 / 42 + r * (-1 / 30 + r * (5 / 66)))))
        out[positive] = shift + 0.5 * r + series / y
    negative = (values < 0) & (values != np.floor(values))
    if negative.any():
        v = values[negative]
        s = np.pi / np.sin(np.pi * v)
        out[negative] = -trigamma(1.0 - v) + s * s
    return out


def trigamma_truncated(x: np.ndarray | float) -> np.ndarray:
    """The trigamma approximation ARX's Pitman solver uses for its Jacobian (not ψ' itself).

    Σ_k 1/(x+k)² over the shifts that keep x+k < 8, plus the asymptotic tail only
    when the shifted argument is ≥ 12 (so 0 on [8, 12)). Only the Newton path of
    :func:`~privacy_plugins.core.metrics.uniqueness.pitman` uses it — the equations
    solved are exact — so that its estimates are ARX's; see docs/population-risk.md.

    Example:
        >>> float(trigamma_truncated(9.0)), round(float(trigamma_truncated(7.0)), 6)
        (0.0, 0.020408)
    """
    values = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = np.full(values.shape, np.nan)
    small = (values > 0) & (values <= 1e-4)
    out[small] = 1.0 / values[small] ** 2 + np.pi**2 / 6 - 2.0 * 1.2020569031595942 * values[small]
    regular = values > 1e-4
    y = values[regular].copy()
    shift = np.zeros_like(y)
    while (low := y < 8.0).any():
        shift[low] += 1.0 / (y[low] * y[low])
        y[low] += 1.0
    r = 1.0 / (y * y)
    series = 1.0 + r * (1 / 6 + r * (-1 / 30 + r * (1 / 42 + r * (-1 / 30 + r * (5 / 66)))))
    out[regular] = shift + np.where(y >= _LARGE, 0.5 * r + series / y, 0.0)
    negative = (values < 0) & (values != np.floor(values))
    if negative.any():
        v = values[negative]
        s = np.pi / np.sin(-np.pi * v)
        out[negative] = -trigamma_truncated(1.0 - v) + s * s
    return out
