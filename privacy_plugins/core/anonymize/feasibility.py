"""Feasibility of frequency l-diversity by bucketization, checked before any clustering work.

A release is frequency l-diverse when no sensitive value has more than ``|E| / l``
records in any class ``E``. Summing over the classes, no value may have more than
``n / l`` records in the whole release; conversely a table meeting that bound can be
grouped l-diversely (Anatomy's *eligibility condition*, Xiao & Tao 2006, thesis
Algorithm 2.1). So the check is one ``bincount`` over the sensitive codes.

**Fewest suppressions.** When some values are too frequent, suppressing records of
other values only lowers ``n``, so an optimal suppression keeps ``min(c_v, T)``
records of each value ``v`` for one cap ``T``; the remainder is eligible when
``l · T ≤ Σ_v min(c_v, T)``. The left side minus the right is convex in ``T`` and 0 at
``T = 0``, so the feasible caps form an interval ``[0, T*]`` and the kept count
``Σ min(c_v, T)`` grows with ``T``: the largest feasible cap ``T*`` suppresses the
fewest records, ``Σ_v max(0, c_v − T*)``. Which records of an over-frequent value go
is a seeded random choice (every such record costs the same count).

**Reporting.** Values are reported by rank and count ("the most frequent value has
412 of 1000 records, at most 333 allowed"), never by value, unless the caller opts in
(``show_values="yes"``): a sensitive value in an error message or a log is a leak.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationRequest
from privacy_plugins.core.anonymize.registry import ModelSupport
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

__all__ = [
    "BUCKETIZING",
    "SHOW_VALUES",
    "DiversityTarget",
    "Feasibility",
    "check_feasibility",
    "diversity_target",
    "eligible_rows",
]

#: Choices of the ``show_values`` option: ``"no"`` reports counts only.
SHOW_VALUES = ("no", "yes")

#: What the bucketizing algorithms (bucket, optimistic, anatomy) promise: frequency l-diversity on one
#: sensitive attribute, which implies distinct and entropy l, in classes of at least k records.
BUCKETIZING = ModelSupport(
    promises=frozenset({"k_anonymity", "distinct_l_diversity", "frequency_l_diversity", "entropy_l_diversity"}),
    needs_one_of=frozenset({"distinct_l_diversity", "frequency_l_diversity", "entropy_l_diversity"}),
    one_sensitive_attribute=True,
    why="it guarantees k-anonymity and frequency l-diversity (hence distinct and entropy l) of one sensitive "
    "attribute only; use mondrian, k-member or two-phase for the others",
)


@dataclass(frozen=True)
class DiversityTarget:
    """What the bucketizing anonymizers promise: cluster size ``size``, frequency ``l`` on ``attribute``."""

    attribute: Hashable
    l: float
    size: int

    @property
    def cap(self) -> int:
        """Most records of one sensitive value a cluster of ``size`` records may hold (⌊size / l⌋)."""
        return math.floor(self.size / self.l + TOLERANCE)


def cluster_size(minimum: int, l: float) -> int:
    """The size s ≥ ``minimum`` whose cap ⌊s/l⌋ / s comes closest to 1/l (smallest such s).

    At s = 3 and l = 2 a cluster may hold one record per value (frequency 3, not 2);
    at s = 4 two: clusters of a multiple of l lose no diversity to rounding.
    """
    sizes = np.arange(minimum, 2 * minimum + math.ceil(l) + 1)
    share = np.floor(sizes / l + TOLERANCE) / sizes
    return int(sizes[int(np.argmax(share >= share.max() - 1e-12))])


def diversity_target(request: AnonymizationRequest, *, algorithm: str) -> DiversityTarget:
    """The frequency-l target and cluster size implied by the request's k and l-diversity models.

    Frequency l-diversity implies distinct and entropy l-diversity with the same l
    (``max p ≤ 1/l`` gives at least ``l`` values and ``H ≥ −ln max p ≥ ln l``), so all
    three are met by frequency l; k by clusters of at least k records.

    Raises:
        ConfigurationError: no l-diversity model, two sensitive attributes, or a model the
            bucketizing algorithms cannot promise (recursive (c,l), t-closeness, leakage bounds).
    """
    refusal = BUCKETIZING.refusal(request.models)
    if refusal is not None:
        raise ConfigurationError(f"{algorithm} {refusal}")
    diverse = [m for m in request.models if m.report_key == "l"]
    attributes = list(dict.fromkeys(m.sensitive_attribute for m in diverse))
    if len(attributes) != 1:
        raise ConfigurationError(
            f"{algorithm} bucketizes one sensitive attribute and needs an l-diversity model on exactly one; "
            f"got models on {attributes}"
        )
    l = max(float(m.threshold) for m in diverse)
    size = cluster_size(max(request.minimum_class_size, math.ceil(l - TOLERANCE)), l)
    return DiversityTarget(attribute=attributes[0], l=l, size=size)


@dataclass(frozen=True)
class Feasibility:
    """Whether a table is frequency-l eligible, and the fewest suppressions that make it so.

    Attributes:
        rows: records checked.
        l: the frequency target.
        distinct_values: distinct sensitive values.
        largest_counts: counts of the most frequent values, largest first (at most 5).
        allowed: most records one value may have (⌊rows / l⌋).
        over: number of values above ``allowed``.
        to_suppress: fewest records whose suppression makes the rest eligible.
        cap: records of each value kept after that suppression.
        values: the over-frequent values, most frequent first (only with ``show_values``).
    """

    rows: int
    l: float
    distinct_values: int
    largest_counts: tuple[int, ...]
    allowed: int
    over: int
    to_suppress: int
    cap: int
    values: tuple[str, ...] = field(default=())

    @property
    def feasible(self) -> bool:
        """True when no value exceeds rows / l."""
        return self.over == 0 and self.rows > 0

    def describe(self) -> str:
        """A counts-only (or, when opted in, valued) account of why and how much to suppress."""
        top = ", ".join(str(c) for c in self.largest_counts)
        named = f" ({', '.join(self.values)})" if self.values else ""
        return (
            f"{self.over} sensitive value(s){named} exceed the frequency-{self.l:g} bound of "
            f"{self.allowed} of {self.rows} records (largest counts: {top}); suppressing at least "
            f"{self.to_suppress} records (keeping at most {self.cap} per value) makes it feasible"
        )


def check_feasibility(codes: np.ndarray, l: float, *, labels: np.ndarray | None = None) -> Feasibility:
    """Eligibility of sensitive ``codes`` (dense ints ≥ 0) for frequency ``l``, and the fewest suppressions.

    ``labels`` (text of each code) are reported only when given, i.e. when the caller opted in.

    Example:
        >>> f = check_feasibility(np.array([0, 0, 0, 0, 1, 2]), 2)
        >>> f.feasible, f.allowed, f.to_suppress, f.cap
        (False, 3, 2, 2)
    """
    counts = np.bincount(codes) if codes.shape[0] else np.zeros(0, dtype=np.int64)
    rows = int(codes.shape[0])
    allowed = math.floor(rows / l + TOLERANCE)
    over_mask = counts > allowed
    cap = _largest_cap(counts, l)
    order = np.argsort(-counts, kind="stable")
    values: tuple[str, ...] = ()
    if labels is not None:
        values = tuple(str(labels[v]) for v in order if over_mask[v])
    return Feasibility(
        rows=rows,
        l=l,
        distinct_values=int((counts > 0).sum()),
        largest_counts=tuple(int(c) for c in counts[order][:5]),
        allowed=allowed,
        over=int(over_mask.sum()),
        to_suppress=int(np.maximum(counts - cap, 0).sum()),
        cap=cap,
        values=values,
    )


def _largest_cap(counts: np.ndarray, l: float) -> int:
    """Largest ``T`` with ``l · T ≤ Σ min(c, T)`` (binary search: the feasible caps are ``[0, T*]``)."""
    low, high = 0, int(counts.max()) if counts.shape[0] else 0
    while low < high:
        middle = (low + high + 1) // 2
        if l * middle <= np.minimum(counts, middle).sum() + TOLERANCE:
            low = middle
        else:
            high = middle - 1
    return low


def eligible_rows(
    request: AnonymizationRequest, target: DiversityTarget, *, algorithm: str, show_values: str
) -> tuple[np.ndarray, np.ndarray, Feasibility]:
    """The sensitive codes of every row and the rows kept after the fewest suppressions.

    Raises:
        InfeasibleAnonymizationError: before any work, when the suppressions needed exceed
            ``suppression_limit`` or leave fewer records than one cluster; the message gives
            counts (and values only with ``show_values="yes"``).
    """
    if show_values not in SHOW_VALUES:
        raise ConfigurationError(f"show_values must be one of {list(SHOW_VALUES)}, got {show_values!r}")
    column = request.table[target.attribute]
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    codes = codes.astype(np.int64)
    labels = np.asarray(uniques, dtype=object) if show_values == "yes" else None
    report = check_feasibility(codes, target.l, labels=labels)
    kept_rows = len(codes) - report.to_suppress
    if report.to_suppress > request.max_suppressed or (kept_rows < target.size and kept_rows < len(codes)):
        raise InfeasibleAnonymizationError(
            f"{algorithm}: frequency {target.l:g}-diversity of {target.attribute!r} is infeasible: "
            f"{report.describe()}, but suppression_limit allows {request.max_suppressed}"
        )
    if len(codes) < target.size:
        raise InfeasibleAnonymizationError(
            f"{algorithm}: {len(codes)} records cannot form one cluster of {target.size} (k and l of the models)"
        )
    keep = np.ones(len(codes), dtype=bool)
    if report.to_suppress:
        rng = np.random.default_rng(request.seed)
        counts = np.bincount(codes)
        for value in np.flatnonzero(counts > report.cap).tolist():
            rows = np.flatnonzero(codes == value)
            keep[rng.choice(rows, size=int(counts[value] - report.cap), replace=False)] = False
    return codes, keep, report
