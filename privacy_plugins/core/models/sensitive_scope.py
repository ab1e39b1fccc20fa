"""A model that must hold only for the classes holding a chosen set of sensitive values.

Sensitive-attribute-based anonymity (Nagendra & Aparna) anonymizes only the records
whose sensitive value is in a set A of "most sensitive" values and publishes the
others as they are. Table-wide k-anonymity therefore does not hold by design; what
holds is the requested model for every published class that contains a record with a
value in A. :class:`SensitiveValueScope` states exactly that, so the re-check of such
a release measures what the method promises (and its report says so in words).

References:
    Nagendra Kumar M. V., Aparna R. Sensitive attributes based privacy preserving in data
    mining using k-anonymity. IJCA 2013.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from privacy_plugins.core.disclosure import showing_values
from privacy_plugins.core.hierarchies.hierarchy import as_labels
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["SensitiveValueScope"]


@dataclass(frozen=True)
class SensitiveValueScope(PrivacyModel):
    """``model`` for every class holding a record whose ``sensitive_attribute`` is in ``values``.

    Example:
        >>> import pandas as pd
        >>> from privacy_plugins.core.models import KAnonymity
        >>> df = pd.DataFrame({"q": ["a", "a", "b"], "d": ["hiv", "hiv", "flu"]})
        >>> scoped = SensitiveValueScope(KAnonymity(2), "d", ("hiv",))
        >>> scoped.evaluate(EquivalenceClasses.from_frame(df, ["q"])).passed, str(scoped)
        (True, "2-anonymity for the records whose 'd' is one of the 1 sensitive_values")
    """

    model: PrivacyModel
    sensitive_attribute: Hashable
    values: tuple[str, ...]

    monotonic_with_generalization: ClassVar[bool] = False
    requires_sensitive: ClassVar[bool] = True
    family: ClassVar[str] = "scoped to sensitive values"
    report_key: ClassVar[str] = "scoped"

    def __post_init__(self) -> None:
        if not isinstance(self.model, PrivacyModel):
            raise TypeError(f"model must be a PrivacyModel, got {type(self.model).__name__}")
        if not self.values:
            raise ConfigurationError("values (the set A of most sensitive values) must not be empty")

    def __str__(self) -> str:
        chosen = f"in {list(self.values)}" if showing_values() else f"one of the {len(self.values)} sensitive_values"
        return f"{self.model} for the records whose {self.sensitive_attribute!r} is {chosen}"

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """The inner model's columns and the sensitive attribute."""
        return tuple(dict.fromkeys([*self.model.columns, self.sensitive_attribute]))

    @property
    def minimum_class_size(self) -> int:
        """The inner model's."""
        return self.model.minimum_class_size

    @property
    def threshold(self) -> float:
        """The inner model's threshold."""
        return self.model.threshold

    def describe_gap(self, observed: float) -> str:
        """The inner model's words."""
        return self.model.describe_gap(observed)

    def in_scope(self, classes: EquivalenceClasses) -> np.ndarray:
        """Boolean mask over classes: the class holds a record with a value in ``values``."""
        rows = as_labels(classes.frame[self.sensitive_attribute]).isin(self.values).to_numpy()
        mask = np.zeros(classes.n_classes, dtype=bool)
        mask[classes.class_of_row[rows]] = True
        return mask

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes in scope that miss the inner model."""
        return np.asarray(self.model.violating_classes(classes) & self.in_scope(classes), dtype=bool)

    def observed(self, classes: EquivalenceClasses) -> float:
        """The inner model's value over the classes in scope (NaN when none is)."""
        scope = self.in_scope(classes)
        if not scope.any():
            return float("nan")
        return self.model.observed(classes.restricted(scope[classes.class_of_row]))
