"""Population uniqueness estimated from a sample: Pitman, Zayatz, SNB and Dankar's decision rule.

A released table is a sample of n records from a population of N people
(sampling fraction f = n/N). A record unique in the sample (a class of size 1)
may or may not be unique in the population; these estimators infer, from the
sample's class-size histogram alone (c_i = number of classes of size i,
u = number of classes), how many population records are unique. Each returns
the *fraction* of the population that is unique, or ``None`` with the reason
when the model has no estimate for this sample (the solver does not converge,
the estimate leaves [0, N]) — ARX reports those as "not available" too.

* **Zayatz** (1991): P(population unique | sample unique) =
  (c_1/u)·P(1|1) / Σ_i (c_i/u)·P(1|i), where P(1|i) is the hypergeometric
  probability of drawing exactly one record of a population class of size i in
  a sample of n out of N; uniques = c_1 · that / f.
* **Pitman** (Hoshino 2001): the class sizes follow the Pitman (Ewens–Pitman)
  sampling formula with parameters θ ≥ 0, 0 < α < 1, fitted by maximum
  likelihood; uniques = Γ(θ+1)/Γ(θ+α) · N^α.
* **SNB** (Chen & Keller-McNulty 1998): population class sizes are 1 + a
  negative binomial(α, β), the sample a Bernoulli(f) thinning; α, β solve the
  moment equations for c_1 and c_2 given K, the number of non-empty population
  classes estimated by Haas et al.'s Shlosser-type estimator; uniques = K·β^α.
* **Dankar** et al. (2012): Pitman when f ≤ 0.1 (Zayatz when Pitman has no
  estimate); otherwise the smaller of Zayatz and SNB (Zayatz alone when SNB has
  none).

With no sample unique every estimate is 0 (available).

References:
    Zayatz L. Estimation of the percent of unique population elements on a microdata file
    using the sample. Census Bureau SRD Report 91/08, 1991.
    Hoshino N. Applying Pitman's sampling formula to microdata disclosure risk assessment.
    Journal of Official Statistics 17(4), 2001.
    Chen G., Keller-McNulty S. Estimation of identification disclosure risk in microdata.
    Journal of Official Statistics 14(1), 1998.
    Haas P. J., Naughton J. F., Seshadri S., Stokes L. Sampling-based estimation of the number
    of distinct values of an attribute. VLDB 1995.
    Dankar F. K., El Emam K., Neisa A., Roffey T. Estimating the re-identification risk of
    clinical data sets. BMC Medical Informatics and Decision Making 12:66, 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privacy_plugins.core.metrics._newton import Equations, solve_2d
from privacy_plugins.core.metrics._pitman import pitman_uniques

__all__ = ["ESTIMATORS", "ClassSizeHistogram", "Estimate", "dankar", "estimate_all", "pitman", "snb", "zayatz"]

#: The estimator names, in report order.
ESTIMATORS: tuple[str, ...] = ("pitman", "zayatz", "snb", "dankar")


@dataclass(frozen=True)
class ClassSizeHistogram:
    """The sample's class sizes i (ascending) with their counts c_i, and the population size N.

    Example:
        >>> h = ClassSizeHistogram.from_sizes(np.array([1, 1, 2, 5]), population_size=90)
        >>> h.records, h.classes, h.count_of(1), round(h.fraction, 4)
        (9, 4, 2, 0.1)
    """

    sizes: np.ndarray
    counts: np.ndarray
    population_size: int

    @classmethod
    def from_sizes(cls, class_sizes: np.ndarray, *, population_size: int) -> ClassSizeHistogram:
        """Histogram of an array of class sizes (one entry per class)."""
        sizes, counts = np.unique(np.asarray(class_sizes, dtype=np.int64), return_counts=True)
        return cls(sizes=sizes, counts=counts.astype(np.int64), population_size=int(population_size))

    @property
    def records(self) -> int:
        """N: the sample's records."""
        return int((self.sizes * self.counts).sum())

    @property
    def classes(self) -> int:
        """U: the sample's classes."""
        return int(self.counts.sum())

    @property
    def fraction(self) -> float:
        """F = n / N."""
        return self.records / self.population_size

    def count_of(self, size: int) -> int:
        """C_size: the classes of exactly ``size`` records."""
        hit = self.sizes == size
        return int(self.counts[hit].sum())


@dataclass(frozen=True)
class Estimate:
    """One estimator's answer: the unique fraction of the population, or why there is none.

    Attributes:
        fraction: estimated population uniques / N, in [0, 1]; ``None`` when not available.
        reason: why it is not available (``None`` when it is).
        model: for Dankar's rule, the estimator the rule chose.
    """

    fraction: float | None
    reason: str | None = None
    model: str | None = None


def _none(reason: str) -> Estimate:
    return Estimate(fraction=None, reason=reason)


def _checked(uniques: float, h: ClassSizeHistogram, name: str) -> Estimate:
    if not math.isfinite(uniques) or uniques <= 0 or uniques > h.population_size:
        return _none(f"{name} estimate {uniques:.6g} is outside (0, N={h.population_size}]")
    return Estimate(fraction=uniques / h.population_size)


def zayatz(h: ClassSizeHistogram) -> Estimate:
    """Zayatz's estimate (no solver: always available when the sample has a unique).

    P(1|i)/P(1|1) = i · Π_{j=1}^{i−1} (N−n−j+1)/(N−j), a cumulative product over
    the sizes up to the largest class (no factorials, no overflow).
    """
    c1 = h.count_of(1)
    if c1 == 0:
        return Estimate(fraction=0.0)
    big_n, n = h.population_size, h.records
    j = np.arange(1, int(h.sizes.max()), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.clip((big_n - n - j + 1) / (big_n - j), 0.0, None)
    ratio = np.concatenate(([1.0], np.cumprod(steps)))  # ratio[i-1] = Π_{j<i}
    weights = h.sizes * ratio[h.sizes - 1]
    conditional = c1 / float((h.counts * weights).sum())
    return _checked(c1 * conditional / h.fraction, h, "Zayatz")


def pitman(h: ClassSizeHistogram) -> Estimate:
    """Pitman's estimate (maximum likelihood, :mod:`~privacy_plugins.core.metrics._pitman`)."""
    if h.count_of(1) == 0:
        return Estimate(fraction=0.0)
    uniques, reason = pitman_uniques(h.sizes, h.counts, h.population_size)
    return _none(reason or "Pitman: no estimate") if uniques is None else _checked(uniques, h, "Pitman")


def _population_classes(h: ClassSizeHistogram) -> float:
    """K: non-empty population classes, Haas et al.'s Shlosser-type estimator D̂_Sh3 (q = f).

    K = u + c_1 · [Σ_i i q²(1−q²)^{i−1} c_i / Σ_i ((1−q²)^i − (1−q)^i) c_i]
          · [Σ_i (1−q)^i c_i / Σ_i i q (1−q)^{i−1} c_i]²
    """
    q = h.fraction
    i, c = h.sizes.astype(np.float64), h.counts.astype(np.float64)
    with np.errstate(all="ignore"):
        first = (i * q * q * (1 - q * q) ** (i - 1) * c).sum() / (((1 - q * q) ** i - (1 - q) ** i) * c).sum()
        second = ((1 - q) ** i * c).sum() / (i * q * (1 - q) ** (i - 1) * c).sum()
    return float(h.classes + h.count_of(1) * first * second * second)


def _snb_equations(k: float, f: float, c1: float, c2: float) -> Equations:
    """E[c_1] − c_1 and E[c_2] − c_2 under the SNB model (α, β), with a central-difference Jacobian."""

    def moments(alpha: float, beta: float) -> tuple[float, float]:
        a, b = np.float64(alpha), np.float64(beta)
        d = (1 - f) * (1 - b)
        with np.errstate(all="ignore"):
            e1 = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1)
            e2 = k * a * b**a * f * f * (1 - b) / 2 * (1 - d) ** (-(a + 2)) * (2 - (1 - a) * d)
        return float(e1 - c1), float(e2 - c2)

    def equations(a: float, b: float) -> tuple[float, float, float, float, float, float]:
        g1, g2 = moments(a, b)
        ha, hb = 1e-7 * max(1.0, abs(a)), 1e-7 * max(1.0, abs(b))
        pa, pb, ma, mb = moments(a + ha, b), moments(a, b + hb), moments(a - ha, b), moments(a, b - hb)
        return (
            g1,
            g2,
            (pa[0] - ma[0]) / (2 * ha),
            (pb[0] - mb[0]) / (2 * hb),
            (pa[1] - ma[1]) / (2 * ha),
            (pb[1] - mb[1]) / (2 * hb),
        )

    return equations


def snb(h: ClassSizeHistogram) -> Estimate:
    """The SNB estimate K·β^α (Chen & Keller-McNulty's equations; see the module docstring)."""
    c1 = h.count_of(1)
    if c1 == 0:
        return Estimate(fraction=0.0)
    if h.fraction >= 1:
        return Estimate(fraction=c1 / h.population_size)
    k = _population_classes(h)
    if not math.isfinite(k):
        return _none("SNB: the number of population classes cannot be estimated")
    equations = _snb_equations(k, h.fraction, float(c1), float(h.count_of(2)))
    root = solve_2d(equations, (1.0, 1.0), domain=lambda a, b: a > 0 and 0 < b <= 1)
    if root is None:
        return _none("SNB: the moment equations have no solution in alpha > 0, 0 < beta <= 1")
    alpha, beta = root
    return _checked(k * beta**alpha, h, "SNB")


def dankar(h: ClassSizeHistogram, estimates: dict[str, Estimate] | None = None) -> Estimate:
    """Dankar et al.'s rule: Pitman for f ≤ 0.1 (else Zayatz); above, min(Zayatz, SNB) (Zayatz without SNB)."""
    known = dict(estimates or {})
    if h.count_of(1) == 0:
        return Estimate(fraction=0.0, model="dankar")

    def get(name: str) -> Estimate:
        if name not in known:
            known[name] = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[name](h)
        return known[name]

    if h.fraction <= 0.1:
        chosen = "pitman" if get("pitman").fraction is not None else "zayatz"
    else:
        z, s = get("zayatz"), get("snb")
        chosen = "zayatz" if s.fraction is None or (z.fraction is not None and z.fraction < s.fraction) else "snb"
    picked = get(chosen)
    return Estimate(fraction=picked.fraction, reason=picked.reason, model=chosen)


def estimate_all(h: ClassSizeHistogram) -> dict[str, Estimate]:
    """Every estimator of :data:`ESTIMATORS` on one histogram (each computed once)."""
    out = {"pitman": pitman(h), "zayatz": zayatz(h), "snb": snb(h)}
    out["dankar"] = dankar(h, out)
    return out
