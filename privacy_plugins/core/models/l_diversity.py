"""l-diversity in its four variants (DESIGN.md "Measures").

Distinct l-diversity stays monotone when violating classes are suppressed (a
merged class has at least as many distinct values as any part). Frequency,
entropy and recursive (c,l) are monotone under generalization only: merging a
diverse class with a homogeneous one can produce a class that is not diverse,
so with suppression their satisfying nodes are not closed upwards.

References:
    Machanavajjhala A., Kifer D., Gehrke J., Venkitasubramaniam M.
    l-Diversity: Privacy Beyond k-Anonymity. ACM TKDD 1(1), 2007.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from privacy_plugins.core.metrics.diversity import (
    distinct_l_per_class,
    entropy_l_per_class,
    frequency_l_per_class,
    recursive_c_per_class,
)
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE, check_integer, check_positive
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["DistinctLDiversity", "EntropyLDiversity", "FrequencyLDiversity", "RecursiveCLDiversity"]


@dataclass(frozen=True)
class _LDiversity(PrivacyModel):
    sensitive_attribute: Hashable
    l: float

    requires_sensitive: ClassVar[bool] = True
    report_key: ClassVar[str] = "l"
    variant: ClassVar[str] = ""

    def __post_init__(self) -> None:
        check_positive(self.l, name="l", minimum=1.0, inclusive=True)

    @property
    def minimum_class_size(self) -> int:
        """⌈l⌉: a class needs at least l records to hold l (distinct, or as frequent) values."""
        return max(1, math.ceil(self.l - TOLERANCE))

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """Itself when monotone, else distinct l-diversity with the same l (every variant implies it)."""
        if self.is_monotonic(with_suppression=with_suppression):
            return self
        return DistinctLDiversity(self.sensitive_attribute, self.l)

    def __str__(self) -> str:
        return f"{self.variant}-{self.l:g}-diversity for {self.sensitive_attribute!r}"

    @property
    def threshold(self) -> float:
        """L."""
        return float(self.l)

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """The variant's l of each class."""
        raise NotImplementedError

    def per_intersection(self, counts: np.ndarray) -> np.ndarray:
        """The variant's l of each row of a (targets × values) count matrix."""
        raise NotImplementedError

    def intersection_at_risk(self, counts: np.ndarray, bounds: np.ndarray | None) -> np.ndarray | None:
        """Rows whose intersection's l (:meth:`per_intersection`) is below the target."""
        return np.asarray(self.per_intersection(counts) < self.l - TOLERANCE)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes whose l is below the target (with a 1e-9 tolerance)."""
        return self.per_class(classes) < self.l - TOLERANCE

    def observed(self, classes: EquivalenceClasses) -> float:
        """The table's l for this variant."""
        return float(self.per_class(classes).min())


@dataclass(frozen=True)
class DistinctLDiversity(_LDiversity):
    """At least l distinct sensitive values per class; ``l``: ≥ 1."""

    variant: ClassVar[str] = "distinct"
    config_name: ClassVar[str] = "distinct_l_diversity"
    family: ClassVar[str] = "distinct l-diversity"
    monotonic_with_suppression: ClassVar[bool] = True
    fails_on_every_subset: ClassVar[bool] = True  # a subset holds no value its class lacked

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """Distinct values per class."""
        return distinct_l_per_class(classes.sensitive(self.sensitive_attribute)).astype(float)

    def per_intersection(self, counts: np.ndarray) -> np.ndarray:
        """Distinct values left."""
        return np.asarray((counts > 0).sum(axis=1), dtype=float)


@dataclass(frozen=True)
class FrequencyLDiversity(_LDiversity):
    """No sensitive value has frequency above 1/l in any class; ``l``: ≥ 1."""

    variant: ClassVar[str] = "frequency"
    config_name: ClassVar[str] = "frequency_l_diversity"
    family: ClassVar[str] = "frequency l-diversity"

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """|E| / max count per class."""
        return frequency_l_per_class(classes, classes.sensitive(self.sensitive_attribute))

    def per_intersection(self, counts: np.ndarray) -> np.ndarray:
        """Rows over the most frequent value's rows, on the counts left (0 when nothing is left)."""
        top = counts.max(axis=1, initial=0.0)
        return np.divide(counts.sum(axis=1), top, out=np.zeros(len(counts)), where=top > 0)


@dataclass(frozen=True)
class EntropyLDiversity(_LDiversity):
    """Entropy of every class ≥ ln l; ``l``: ≥ 1."""

    variant: ClassVar[str] = "entropy"
    config_name: ClassVar[str] = "entropy_l_diversity"
    family: ClassVar[str] = "entropy l-diversity"

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """exp(entropy) per class."""
        return entropy_l_per_class(classes, classes.sensitive(self.sensitive_attribute))

    def per_intersection(self, counts: np.ndarray) -> np.ndarray:
        """exp(entropy) of the counts left (0 when nothing is left)."""
        total = counts.sum(axis=1, keepdims=True)
        share = np.divide(counts, total, out=np.zeros_like(counts, dtype=float), where=total > 0)
        logs = np.log(share, out=np.zeros_like(share), where=share > 0)
        return np.where(total[:, 0] > 0, np.exp(-(share * logs).sum(axis=1)), 0.0)


@dataclass(frozen=True)
class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c,l)-diversity: r1 < c·(r_l + … + r_m) in every class; ``c`` > 0, ``l``: integer ≥ 1."""

    sensitive_attribute: Hashable
    c: float
    l: int

    requires_sensitive: ClassVar[bool] = True
    config_name: ClassVar[str] = "recursive_cl_diversity"
    family: ClassVar[str] = "recursive l-diversity"
    report_key: ClassVar[str] = "c"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_positive(self.c, name="c")
        check_integer(self.l, name="l")

    def __str__(self) -> str:
        return f"recursive ({self.c:g},{self.l})-diversity for {self.sensitive_attribute!r}"

    @property
    def minimum_class_size(self) -> int:
        """L: a class with fewer than l values fails."""
        return self.l

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """Itself when monotone, else distinct l-diversity (a class with fewer than l values fails)."""
        if self.is_monotonic(with_suppression=with_suppression):
            return self
        return DistinctLDiversity(self.sensitive_attribute, self.l)

    def describe_gap(self, observed: float) -> str:
        """E.g. ``"observed c* = 3, needs c > c* (c = 2)"``."""
        return f"observed c* = {observed:.4g}, needs c > c* (c = {self.c:g})"

    @property
    def threshold(self) -> float:
        """C."""
        return float(self.c)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes with c*(E) ≥ c (including classes with fewer than l values)."""
        return recursive_c_per_class(classes, classes.sensitive(self.sensitive_attribute), self.l) >= self.c

    def intersection_at_risk(self, counts: np.ndarray, bounds: np.ndarray | None) -> np.ndarray | None:
        """Rows where r1 ≥ c·(r_l + … + r_m) on the counts left (fewer than l values left included)."""
        ordered = -np.sort(-counts, axis=1)
        tail = ordered[:, self.l - 1 :].sum(axis=1) if ordered.shape[1] >= self.l else np.zeros(len(counts))
        top = ordered[:, 0] if ordered.shape[1] else np.zeros(len(counts))
        return np.asarray((tail <= 0) | (top >= self.c * tail))

    def observed(self, classes: EquivalenceClasses) -> float:
        """c* = max over classes of r1 / (r_l + … + r_m); ``inf`` when no c works."""
        return float(recursive_c_per_class(classes, classes.sensitive(self.sensitive_attribute), self.l).max())
