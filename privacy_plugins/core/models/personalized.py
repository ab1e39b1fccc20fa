"""Personalized privacy: each record's leakage stays within its own bound (Song et al. 2015).

With one bound for everybody this is frequency l-diversity with l = 1/bound and
is monotone under generalization. With per-record bounds it is not: merging a
class with another that is full of the same sensitive value (held by people
with lax bounds) can push a strict record over its bound, so the lattice
search never prunes with it.

References:
    Song F., Huang J., Wang Y., Kang Y., Liu W. The K-Anonymization Method
    Satisfying Personalized Privacy Preservation. Chem. Eng. Trans. 46, 2015.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.metrics.leakage import leakage_per_record, leakage_violations
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.l_diversity import DistinctLDiversity
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["PersonalizedLeakage", "resolve_bounds"]


def resolve_bounds(frame: pd.DataFrame, *, bound: float | None, bound_column: Hashable | None) -> np.ndarray | None:
    """One leakage bound per row of ``frame``, validated to lie in (0, 1]; ``None`` when none is set."""
    if bound is not None and bound_column is not None:
        raise ConfigurationError("give either bound or bound_column, not both")
    if bound is not None:
        return np.full(len(frame), check_fraction(bound, name="bound", open_low=True))
    if bound_column is None:
        return None
    if bound_column not in frame.columns:
        raise UnknownColumnError(
            f"bound_column not found in table: {bound_column!r}; available columns: {list(frame.columns)!r}"
        )
    values = pd.to_numeric(frame[bound_column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    missing = np.isnan(values)
    if missing.any():
        raise ConfigurationError(
            f"bound_column {bound_column!r} has {int(missing.sum())} missing or non-numeric bounds; "
            "every record needs a bound in (0, 1]"
        )
    outside = (values <= 0) | (values > 1)
    if outside.any():
        raise ConfigurationError(
            f"bound_column {bound_column!r} has {int(outside.sum())} bounds outside (0, 1], e.g. {values[outside][0]!r}"
        )
    return values


@dataclass(frozen=True)
class PersonalizedLeakage(PrivacyModel):
    """Pleak(t) ≤ pleak(t) for every record; give ``bound`` in (0, 1] or a ``bound_column``."""

    sensitive_attribute: Hashable
    bound: float | None = None
    bound_column: Hashable | None = None

    requires_sensitive: ClassVar[bool] = True
    config_name: ClassVar[str] = "personalized_leakage"
    family: ClassVar[str] = "personalized leakage"
    report_key: ClassVar[str] = "max_leakage"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if (self.bound is None) == (self.bound_column is None):
            raise ConfigurationError("PersonalizedLeakage needs exactly one of bound or bound_column")
        if self.bound is not None:
            check_fraction(self.bound, name="bound", open_low=True)

    def __str__(self) -> str:
        limit = f"{self.bound:g}" if self.bound is not None else f"the bounds in {self.bound_column!r}"
        return f"leakage of {self.sensitive_attribute!r} within {limit}"

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """The sensitive attribute, and the bound column when bounds are per record."""
        return (
            (self.sensitive_attribute,) if self.bound_column is None else (self.sensitive_attribute, self.bound_column)
        )

    @property
    def minimum_class_size(self) -> int:
        """⌈1/bound⌉ with one bound (a record's leakage is at least 1/|E|); 1 with per-record bounds."""
        return 1 if self.bound is None else max(1, math.ceil(1.0 / self.bound - TOLERANCE))

    def validate_against(self, table: pd.DataFrame) -> None:
        """The columns exist and every per-record bound is a number in (0, 1]."""
        super().validate_against(table)
        resolve_bounds(table, bound=self.bound, bound_column=self.bound_column)

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """Itself when monotone; with one bound b, distinct (1/b)-diversity (a value's share ≤ b needs 1/b values)."""
        if self.is_monotonic(with_suppression=with_suppression):
            return self
        return None if self.bound is None else DistinctLDiversity(self.sensitive_attribute, 1.0 / self.bound)

    def describe_gap(self, observed: float) -> str:
        """E.g. ``"observed max_leakage = 1, needs ≤ 0.5 (over by 0.5)"``, or against the per-record bounds."""
        if self.bound is None:
            return f"observed max_leakage = {observed:.4g}; some records exceed their bound in {self.bound_column!r}"
        return super().describe_gap(observed)

    @property
    def threshold(self) -> float:
        """The uniform bound (NaN with per-record bounds)."""
        return float(self.bound) if self.bound is not None else float("nan")

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone only with one bound for all and no suppression (it is then frequency l-diversity)."""
        return self.bound is not None and not with_suppression

    def bounds(self, classes: EquivalenceClasses) -> np.ndarray:
        """The bound of every unit."""
        resolved = resolve_bounds(classes.frame, bound=self.bound, bound_column=self.bound_column)
        assert resolved is not None
        return resolved

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes holding at least one record over its bound (infeasible ones included)."""
        violating, _ = leakage_violations(classes, classes.sensitive(self.sensitive_attribute), self.bounds(classes))
        mask = np.zeros(classes.n_classes, dtype=bool)
        mask[classes.class_of_row[violating]] = True
        return mask

    def observed(self, classes: EquivalenceClasses) -> float:
        """The largest leakage of any record."""
        return float(leakage_per_record(classes, classes.sensitive(self.sensitive_attribute)).max())
