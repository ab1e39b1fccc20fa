"""Personalized privacy: each record's leakage stays within its own bound (Song et al. 2015).

With one bound for everybody this is frequency l-diversity with l = 1/bound and
is monotone under generalization. With per-record bounds it is not: merging a
class with another that is full of the same sensitive value (held by people
with lax bounds) can push a strict record over its bound, so the lattice
search never prunes with it.

When the sensitive attribute may be published generalized (the ``personalized``
anonymizer's SA_Generalization), the model carries its ``sensitive_hierarchy`` and
measures Pleak with DCorrelate (1/Nleaf for a generalized value covering the
record's leaf; :func:`~privacy_plugins.core.metrics.leakage.leakage_per_record`).
:func:`~privacy_plugins.core.anonymize.anonymize` binds it from ``hierarchies``
(:meth:`PersonalizedLeakage.with_hierarchies`), so the re-check of every release uses it.

References:
    Song F., Huang J., Wang Y., Kang Y., Liu W. The K-Anonymization Method
    Satisfying Personalized Privacy Preservation. Chem. Eng. Trans. 46, 2015.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.disclosure import examples
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.leakage import hierarchy_nodes, leakage_per_record, leakage_violations
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.l_diversity import DistinctLDiversity
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["PersonalizedLeakage", "resolve_bounds"]


def resolve_bounds(frame: pd.DataFrame, *, bound: float | None, bound_column: Hashable | None) -> np.ndarray | None:
    """One leakage bound per row of ``frame``, validated to lie in (0, 1]; ``None`` when none is set.

    With both, ``bound`` is the default for records whose ``bound_column`` is missing
    (NaN/None); text that is not a number is an error either way (a typo must not
    silently become the default).

    Raises:
        UnknownColumnError: ``bound_column`` is not in the table.
        ConfigurationError: bounds outside (0, 1], non-numeric, or missing without a default.
    """
    default = None if bound is None else check_fraction(bound, name="bound", open_low=True)
    if bound_column is None:
        return None if default is None else np.full(len(frame), default)
    if bound_column not in frame.columns:
        raise UnknownColumnError(
            f"bound_column not found in table: {bound_column!r}; available columns: {list(frame.columns)!r}"
        )
    raw = frame[bound_column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    absent = raw.isna().to_numpy()
    garbled = np.isnan(values) & ~absent
    if garbled.any():
        raise ConfigurationError(
            f"bound_column {bound_column!r} has {int(garbled.sum())} non-numeric bounds"
            f"{examples([str(raw[garbled].iloc[0])])}; every bound must be a number in (0, 1]"
        )
    if absent.any():
        if default is None:
            raise ConfigurationError(
                f"bound_column {bound_column!r} has {int(absent.sum())} missing bounds and no default bound; "
                "every record needs a bound in (0, 1] (give bound= as the default)"
            )
        values = np.where(absent, default, values)
    outside = (values <= 0) | (values > 1)
    if outside.any():
        raise ConfigurationError(
            f"bound_column {bound_column!r} has {int(outside.sum())} bounds outside (0, 1], "
            f"e.g. {float(values[outside][0]):g}"
        )
    return values


@dataclass(frozen=True)
class PersonalizedLeakage(PrivacyModel):
    """Pleak(t) ≤ pleak(t) for every record; give ``bound`` in (0, 1], a ``bound_column``, or both.

    With both, ``bound`` is the default for records without a bound in the column.
    ``sensitive_hierarchy`` (optional) lets the sensitive column hold generalized values.
    """

    sensitive_attribute: Hashable
    bound: float | None = None
    bound_column: Hashable | None = None
    sensitive_hierarchy: Hierarchy | None = field(default=None, compare=False, repr=False)

    requires_sensitive: ClassVar[bool] = True
    config_name: ClassVar[str] = "personalized_leakage"
    family: ClassVar[str] = "personalized leakage"
    report_key: ClassVar[str] = "max_leakage"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.bound is None and self.bound_column is None:
            raise ConfigurationError("PersonalizedLeakage needs a bound, a bound_column, or both")
        if self.bound is not None:
            check_fraction(self.bound, name="bound", open_low=True)
        if self.sensitive_hierarchy is not None and not isinstance(self.sensitive_hierarchy, Hierarchy):
            raise TypeError(f"sensitive_hierarchy must be a Hierarchy, got {type(self.sensitive_hierarchy).__name__}")

    def __str__(self) -> str:
        if self.bound_column is None:
            limit = f"{self.bound:g}"
        else:
            default = "" if self.bound is None else f" (default {self.bound:g})"
            limit = f"the bounds in {self.bound_column!r}{default}"
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
        if self.bound is None or self.bound_column is not None:
            return 1
        return max(1, math.ceil(1.0 / self.bound - TOLERANCE))

    def validate_against(self, table: pd.DataFrame) -> None:
        """The columns exist, every bound is a number in (0, 1], every sensitive value is in the hierarchy."""
        super().validate_against(table)
        resolve_bounds(table, bound=self.bound, bound_column=self.bound_column)
        if self.sensitive_hierarchy is not None:
            hierarchy_nodes(self.sensitive_hierarchy, pd.Index(table[self.sensitive_attribute].unique()))

    def leakage_bounds(self, table: pd.DataFrame) -> np.ndarray:
        """Every record's bound (``bound`` filling the gaps of ``bound_column``)."""
        resolved = resolve_bounds(table, bound=self.bound, bound_column=self.bound_column)
        assert resolved is not None
        return resolved

    def measuring_hierarchy(self) -> Hierarchy | None:
        """The sensitive hierarchy (DCorrelate over generalized values), if bound."""
        return self.sensitive_hierarchy

    def with_hierarchies(self, hierarchies: Mapping[Hashable, Hierarchy]) -> PersonalizedLeakage:
        """This model measuring with ``hierarchies[sensitive_attribute]`` when it has no hierarchy yet."""
        given = hierarchies.get(self.sensitive_attribute)
        if self.sensitive_hierarchy is not None or given is None:
            return self
        return replace(self, sensitive_hierarchy=given)

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """Itself when monotone; with one bound b, distinct (1/b)-diversity (a value's share ≤ b needs 1/b values)."""
        if self.is_monotonic(with_suppression=with_suppression):
            return self
        if self.bound is None or self.bound_column is not None:
            return None
        return DistinctLDiversity(self.sensitive_attribute, 1.0 / self.bound)

    def describe_gap(self, observed: float) -> str:
        """E.g. ``"observed max_leakage = 1, needs ≤ 0.5 (over by 0.5)"``, or against the per-record bounds."""
        if self.bound is None or self.bound_column is not None:
            return f"observed max_leakage = {observed:.4g}; some records exceed their bound in {self.bound_column!r}"
        return super().describe_gap(observed)

    @property
    def threshold(self) -> float:
        """The uniform bound (NaN with per-record bounds)."""
        return float(self.bound) if self.bound is not None and self.bound_column is None else float("nan")

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone only with one bound for all and no suppression (it is then frequency l-diversity)."""
        return self.bound is not None and self.bound_column is None and not with_suppression

    def bounds(self, classes: EquivalenceClasses) -> np.ndarray:
        """The bound of every unit."""
        return self.leakage_bounds(classes.frame)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes holding at least one record over its bound (infeasible ones included)."""
        counts = classes.sensitive(self.sensitive_attribute)
        violating, _ = leakage_violations(classes, counts, self.bounds(classes), self.sensitive_hierarchy)
        mask = np.zeros(classes.n_classes, dtype=bool)
        mask[classes.class_of_row[violating]] = True
        return mask

    def intersection_at_risk(self, counts: np.ndarray, bounds: np.ndarray | None) -> np.ndarray | None:
        """Rows whose most frequent value left holds more than the row's bound of the rows left.

        Conservative: the share of the *most* frequent value, whatever the record's own value
        (the adversary may have wrongly assumed the target in a release). A generalized
        sensitive column (DCorrelate) is not modelled over an intersection: not judged.
        """
        if self.sensitive_hierarchy is not None or bounds is None:
            return None
        total = counts.sum(axis=1)
        # An empty intersection (she assumed the target where it is not) counts as at risk.
        share = np.divide(counts.max(axis=1, initial=0.0), total, out=np.full(len(counts), np.inf), where=total > 0)
        return np.asarray(share > bounds + TOLERANCE)

    @property
    def intersection_share_bound(self) -> float | None:
        """The one bound, when every record has it and the sensitive column is not generalized."""
        if self.bound is None or self.bound_column is not None or self.sensitive_hierarchy is not None:
            return None
        return float(self.bound)

    def observed(self, classes: EquivalenceClasses) -> float:
        """The largest leakage of any record."""
        counts = classes.sensitive(self.sensitive_attribute)
        return float(leakage_per_record(classes, counts, self.sensitive_hierarchy).max())
