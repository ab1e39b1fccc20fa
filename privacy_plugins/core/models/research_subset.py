"""A model judged on the research subset only: the rows a partial-scope release publishes (issue 30).

δ-presence (:class:`~privacy_plugins.core.models.delta_presence.DeltaPresence`) is measured on
a table that holds the population with the research subset S flagged; only S is published.
Every *other* model then protects what is published, so it is judged on each class's S-rows
alone (ARX judges k-anonymity on the subset's counts the same way): a class with no S-row
publishes nothing and passes. The anonymizers that declare ``research_subset`` wrap the
other models in :class:`InResearchSubset`; nothing here knows which model it wraps.

Monotone exactly when the wrapped model is: generalizing merges classes, and the S-rows of a
merged class are the union of its parts' S-rows.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["InResearchSubset", "subset_flags"]

_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f", ""}


def subset_flags(frame: pd.DataFrame, column: Hashable) -> np.ndarray:
    """1.0 for the rows of the research subset, 0.0 for the others (true/false, 1/0 or yes/no).

    Raises:
        ConfigurationError: a flag that is none of those.
    """
    values = frame[column]
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        flags = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        bad = int((~np.isin(flags, (0.0, 1.0))).sum())
    else:
        text = values.astype(str).str.strip().str.lower()
        flags = text.isin(_TRUE).to_numpy(dtype=np.float64)
        bad = int((~text.isin(_TRUE | _FALSE)).sum())
    if bad:
        raise ConfigurationError(f"subset_column {column!r} has {bad} value(s) that are not true/false, 1/0 or yes/no")
    return flags


@dataclass(frozen=True)
class InResearchSubset(PrivacyModel):
    """``model`` judged on the research-subset rows (flagged by ``subset_column``) of every class."""

    model: PrivacyModel
    subset_column: Hashable

    def __post_init__(self) -> None:
        for flag in ("monotonic_with_generalization", "monotonic_with_suppression", "depends_on_table_distribution"):
            object.__setattr__(self, flag, getattr(self.model, flag))  # shadows the class default per instance

    def __str__(self) -> str:
        return f"{self.model} of the research subset {self.subset_column!r}"

    @property
    def report_key(self) -> str:  # type: ignore[override]
        """The wrapped model's."""
        return self.model.report_key

    @property
    def higher_is_better(self) -> bool:  # type: ignore[override]
        """The wrapped model's."""
        return self.model.higher_is_better

    @property
    def sensitive_attribute(self) -> Hashable | None:  # type: ignore[override]
        """The wrapped model's."""
        return self.model.sensitive_attribute

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """The wrapped model's columns and the flag."""
        return (*self.model.columns, self.subset_column)

    @property
    def threshold(self) -> float:
        """The wrapped model's."""
        return self.model.threshold

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """As the wrapped model."""
        return self.model.is_monotonic(with_suppression=with_suppression)

    def validate_against(self, table: pd.DataFrame) -> None:
        """The wrapped model's checks, and the flags."""
        super().validate_against(table)
        self.model.validate_against(table)
        subset_flags(table, self.subset_column)

    def _in_subset(self, classes: EquivalenceClasses) -> tuple[EquivalenceClasses, np.ndarray]:
        """The classes of the subset's units, and the original class id of each of them."""
        keep = subset_flags(classes.frame, self.subset_column) == 1.0
        inner = classes.restricted(keep)
        original = np.zeros(inner.n_classes, dtype=np.int64)
        original[inner.class_of_row] = classes.class_of_row[keep]
        return inner, original

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes whose subset rows miss the wrapped model (a class without subset rows passes)."""
        out = np.zeros(classes.n_classes, dtype=bool)
        inner, original = self._in_subset(classes)
        if inner.n_classes:
            out[original] = self.model.violating_classes(inner)
        return out

    def observed(self, classes: EquivalenceClasses) -> float:
        """The wrapped model's value on the subset's classes (its threshold when the subset is empty)."""
        inner, _ = self._in_subset(classes)
        return self.model.observed(inner) if inner.n_classes else self.model.threshold
