"""The privacy-model protocol: a thresholded criterion evaluated per equivalence class.

Models answer "is it acceptable at X?" on top of the measures in
:mod:`privacy_plugins.core.metrics`. Each declares, as ARX's criteria do,
whether it is monotone under generalization and under suppression, which is
what lets the lattice search prune whole sub-lattices without checking them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import ClassViolations, to_jsonable, violations_from_mask

__all__ = ["ModelResult", "PrivacyModel"]


@dataclass(frozen=True)
class ModelResult:
    """The verdict of one model on one table.

    Attributes:
        model: the model as text, e.g. ``"5-anonymity"``.
        passed: true when every class satisfies the model.
        observed: the measured value (k, l, c*, t or max leakage).
        threshold: the model's parameter the observed value is compared with.
        violations: the classes that miss it (sizes and counts, no raw values).
    """

    model: str
    passed: bool
    observed: float
    threshold: float
    violations: ClassViolations

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return to_jsonable(self)


class PrivacyModel(ABC):
    """A privacy criterion. Subclasses are frozen dataclasses validated in ``__post_init__``."""

    #: Generalizing a satisfying table keeps it satisfying (without suppression).
    monotonic_with_generalization: ClassVar[bool] = True
    #: The same holds when violating classes are suppressed under a limit.
    monotonic_with_suppression: ClassVar[bool] = False
    #: The model reads a sensitive attribute.
    requires_sensitive: ClassVar[bool] = False

    @property
    def sensitive_attribute(self) -> Hashable | None:
        """The sensitive attribute the model protects, if any."""
        return None

    @abstractmethod
    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Boolean mask over classes: true where the class misses the model."""

    @abstractmethod
    def observed(self, classes: EquivalenceClasses) -> float:
        """The table-level measured value (k, l, c*, t or max leakage)."""

    @property
    @abstractmethod
    def threshold(self) -> float:
        """The model's parameter (k, l, c, t or the bound)."""

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Whether the lattice search may prune with this model."""
        if with_suppression:
            return self.monotonic_with_generalization and self.monotonic_with_suppression
        return self.monotonic_with_generalization

    def evaluate(self, classes: EquivalenceClasses, *, include_values: bool = False) -> ModelResult:
        """Check the model on every class and summarise the violations."""
        mask = self.violating_classes(classes)
        return ModelResult(
            model=str(self),
            passed=not bool(mask.any()),
            observed=self.observed(classes),
            threshold=self.threshold,
            violations=violations_from_mask(classes, mask, target=str(self), include_values=include_values),
        )
