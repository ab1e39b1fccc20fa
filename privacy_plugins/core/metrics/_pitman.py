"""Pitman's population-uniqueness estimate (Hoshino 2001), fitted by maximum likelihood.

Under the Pitman sampling formula with parameters θ ≥ 0 and α, a sample of n
records in u classes with c_j classes of size j has log-likelihood

    L(θ, α) = Σ_{i=1}^{u−1} ln(θ + iα) − Σ_{i=1}^{n−1} ln(θ + i) + Σ_j c_j Σ_{k=1}^{j−1} ln(k − α),

and the population of N records then holds Γ(θ+1)/Γ(θ+α) · N^α uniques. The
likelihood equations ∂L/∂θ = ∂L/∂α = 0 are solved by Newton's method, started
at Hoshino's moment estimate, in closed form with digamma functions:

    ∂L/∂θ = [ψ(θ/α + u) − ψ(θ/α + 1)]/α − [ψ(θ + n) − ψ(θ + 1)]
    ∂L/∂α = [(u − 1) − θ·∂₁]/α − Σ_j c_j [ψ(j − α) − ψ(1 − α)]     (∂₁ the first bracket over α)

The Jacobian uses :func:`~privacy_plugins.core.metrics._special.trigamma_truncated`
as ARX does, and a closed-form root whose equations, summed term by term, miss
zero by more than the accuracy is refined with the exact term-by-term sums (ARX's
"iterative" variant). The likelihood is often flat: the stopping rule |∂L| ≤ 1e-6
then fixes which point of the flat band is returned, which is why the path is
kept identical to ARX's (docs/population-risk.md).

References:
    Hoshino N. Applying Pitman's sampling formula to microdata disclosure risk assessment.
    Journal of Official Statistics 17(4):499–520, 2001.
"""

from __future__ import annotations

import math

import numpy as np

from privacy_plugins.core.metrics._newton import ACCURACY, Equations, solve_2d
from privacy_plugins.core.metrics._special import (
    digamma,
    digamma1,
    digamma_series,
    trigamma,
    trigamma_series,
    trigamma_truncated1,
)

__all__ = ["pitman_uniques"]

_NAN_RESULT = (math.nan,) * 6
Result = tuple[float, float, float, float, float, float]


_LOW = 12  # classes of size ≤ 12 are summed term by term; larger ones use the asymptotic series


def _low_terms(a: float, sizes: list[int], counts: list[int], above: list[float]) -> tuple[float, float]:
    """The per-class sums of :func:`_per_class` over classes of size 2…12, term by term.

    ψ(j−α) − ψ(1−α) = Σ_{k<j} 1/(k−α) exactly, so the first sum is Σ_k above_k/(k−α)
    with above_k = the classes (of size ≤ 12) larger than k. ARX's truncated ψ' (the
    Jacobian only) sums 1/(x+m)² while x+m < 8 with no tail below 12, so
    ψ'ₜ(1−α) − ψ'ₜ(j−α) is the sum of 1/(k−α)² over k < j (k−α < 8), all of ψ'ₜ(1−α)
    when 8 ≤ j−α < 12, and ψ'ₜ(1−α) − ψ'(j−α) from 12 on.
    """
    inv = [1.0 / (k - a) for k in range(1, _LOW)]
    psi = 0.0
    for weight, value in zip(above, inv, strict=True):
        psi += weight * value
    tri_1 = trigamma_truncated1(1.0 - a)
    suffix = [0.0] * (_LOW + 1)  # suffix[j] = Σ_{k ≥ j, k−α < 8} 1/(k−α)²
    for k in range(_LOW - 1, 0, -1):
        suffix[k] = suffix[k + 1] + (inv[k - 1] * inv[k - 1] if k - a < 8.0 else 0.0)
    tri = 0.0
    for j, c in zip(sizes, counts, strict=True):
        x = j - a
        if x < 8.0:
            tri += c * (tri_1 - suffix[j])
        elif x < 12.0:
            tri += c * tri_1
        else:
            tri += c * (tri_1 - trigamma_truncated1(x))
    return psi, tri


def _per_class(sizes: np.ndarray, counts: np.ndarray, a: float, above: list[float]) -> tuple[float, float]:
    """Σ_j c_j [ψ(j−α) − ψ(1−α)] and Σ_j c_j [ψ'ₜ(1−α) − ψ'ₜ(j−α)] over the classes of size j > 1.

    ψ'ₜ is ARX's truncated trigamma (the Jacobian only). Sizes up to 12 are summed
    term by term (:func:`_low_terms`), larger ones go straight to the asymptotic
    series: an evaluation costs a few vector operations whatever the histogram.
    """
    low = sizes <= _LOW
    if abs(a) < 1.0 - 1e-4 or a < 0:
        psi, tri = _low_terms(a, sizes[low].tolist(), counts[low].tolist(), above)
    else:  # α near or above 1 (1 − α at a pole or negative): the general functions
        psi = tri = 0.0
        psi_1, tri_1 = digamma1(1.0 - a), trigamma_truncated1(1.0 - a)
        for j, c in zip(sizes[low].tolist(), counts[low].tolist(), strict=True):
            psi += c * (digamma1(j - a) - psi_1)
            tri += c * (tri_1 - trigamma_truncated1(j - a))
    high, weight = sizes[~low] - a, counts[~low]
    if high.size:
        total = float(weight.sum())
        with np.errstate(all="ignore"):
            psi += float((weight * digamma_series(high)).sum()) - total * digamma1(1.0 - a)
            tri += total * trigamma_truncated1(1.0 - a) - float((weight * trigamma_series(high)).sum())
    return psi, tri


def _closed(sizes: np.ndarray, counts: np.ndarray, u: float, n: float) -> Equations:
    big, big_counts = sizes[sizes > 1].astype(np.int64), counts[sizes > 1].astype(np.float64)
    small = big <= _LOW
    above = [float(big_counts[small & (big > k)].sum()) for k in range(1, _LOW)]

    def equations(t: float, a: float) -> Result:
        if a == 0 or not math.isfinite(t + a):
            return _NAN_RESULT
        z = t / a
        psi = [digamma1(v) for v in (z + u, z + 1.0, n + t, t + 1.0)]
        tri = [trigamma_truncated1(v) for v in (z + u, z + 1.0, n + t, t + 1.0)]
        o4, d4 = _per_class(big, big_counts, a, above)
        s0 = (psi[0] - psi[1]) / a  # Σ_{i<u} 1/(θ+iα)
        t00 = (tri[1] - tri[0]) / (a * a)  # Σ 1/(θ+iα)²
        t01 = (s0 - t * t00) / a  # Σ i/(θ+iα)²
        t11 = ((u - 1.0) - 2.0 * t * s0 + t * t * t00) / (a * a)  # Σ i²/(θ+iα)²
        f1 = s0 - (psi[2] - psi[3])
        f2 = ((u - 1.0) - t * s0) / a - o4
        return f1, f2, (tri[3] - tri[2]) - t00, -t01, -t01, -t11 - d4

    return equations


def _summed(sizes: np.ndarray, counts: np.ndarray, u: float, n: float) -> Equations:
    """The same equations and their exact Jacobian, summed term by term (O(classes + largest class)).

    The sums over the n − 1 records, Σ 1/(θ+i) and Σ 1/(θ+i)², are ψ(θ+n) − ψ(θ+1) and
    ψ'(θ+1) − ψ'(θ+n) (exact for θ > −1, where every term is positive), so a large
    table costs no array of its size; the sums over classes are taken term by term.
    """
    i = np.arange(1, int(u), dtype=np.float64)
    k = np.arange(1, int(sizes.max()), dtype=np.float64)
    weight = np.zeros(int(sizes.max()) + 1)
    np.add.at(weight, sizes, counts)
    below = np.cumsum(weight[::-1])[::-1][2:]  # below[k-1] = classes with size > k

    def equations(t: float, a: float) -> Result:
        with np.errstate(all="ignore"):
            if t > -1.0:
                psi, tri = digamma(np.array([t + n, t + 1.0])), trigamma(np.array([t + 1.0, t + n]))
                records, records_squared = psi[0] - psi[1], tri[0] - tri[1]
            else:  # (a start value below −1: the terms change sign, sum them)
                inv_m = 1.0 / (t + np.arange(1, int(n), dtype=np.float64))
                records, records_squared = inv_m.sum(), (inv_m * inv_m).sum()
            inv = 1.0 / (t + i * a)
            inv_k = 1.0 / (k - a)
            f1 = inv.sum() - records
            f2 = (i * inv).sum() - (below * inv_k).sum()
            t01 = (i * inv * inv).sum()
            j11 = records_squared - (inv * inv).sum()
            j22 = -(i * i * inv * inv).sum() - (below * inv_k * inv_k).sum()
        return float(f1), float(f2), float(j11), -float(t01), -float(t01), float(j22)

    return equations


def _start(c1: int, c2: int, u: float, n: float) -> tuple[float, float]:
    """Hoshino's moment estimate of (θ, α) (c_2 taken as 1 when there is none, as ARX does)."""
    c = c1 * (c1 - 1) / (c2 or 1)
    with np.errstate(all="ignore"):
        theta = np.float64(n * u * c - c1 * (n - 1) * (2 * u + c)) / np.float64(2 * c1 * u + c1 * c - n * c)
        alpha = (theta * (c1 - n) + (n - 1) * c1) / (n * u)
    return float(theta), float(alpha)


def pitman_uniques(sizes: np.ndarray, counts: np.ndarray, population_size: int) -> tuple[float | None, str | None]:
    """The estimated number of population uniques, or ``None`` and the reason (sample has c_1 > 0)."""
    u, n = float(counts.sum()), float((sizes * counts).sum())
    c1 = int(counts[sizes == 1].sum())
    c2 = int(counts[sizes == 2].sum())
    start = _start(c1, c2, u, n)

    def domain(t: float, a: float) -> bool:
        return t >= 0

    summed = _summed(sizes, counts, u, n)
    root = solve_2d(_closed(sizes, counts, u, n), start, domain=domain)
    if root is not None:
        f1, f2, *_ = summed(*root)
        if not (abs(f1) <= ACCURACY and abs(f2) <= ACCURACY):
            root = None
    if root is None:
        root = solve_2d(summed, start, domain=domain)
    if root is None:
        return None, "Pitman: the likelihood equations have no solution the solver reaches"
    t, a = root
    if a == 0 or not math.isfinite(t + a) or t + a <= 0:
        return None, f"Pitman: degenerate fit (theta={t:.4g}, alpha={a:.4g})"
    log_uniques = math.lgamma(t + 1.0) - math.lgamma(t + a) + a * math.log(population_size)
    if log_uniques > math.log(population_size):
        return None, f"Pitman: the fit (theta={t:.4g}, alpha={a:.4g}) predicts more uniques than people"
    return math.exp(log_uniques), None
