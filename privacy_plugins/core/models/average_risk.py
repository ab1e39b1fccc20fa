"""Average re-identification risk: the prosecutor's mean record risk J/n stays at or below a bound.

References:
    El Emam K., Dankar F. K. Protecting privacy using k-anonymity. JAMIA 15(5), 2008.
    ARX: ``criteria/AverageReidentificationRisk`` (Prasser et al.).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["AverageReidentificationRisk"]


@dataclass(frozen=True)
class AverageReidentificationRisk(PrivacyModel):
    """Mean record risk (number of classes / records) ≤ ``max``; ``max`` in (0, 1].

    Monotone under generalization: generalizing merges classes, so the number of
    classes J can only fall while the records n stay, and J/n never rises. When the
    bound is missed the violating classes are those smaller than 1/max: without them
    every class has at least 1/max records and the rest meets the bound. Under a
    suppression limit the lattice does not prune with it (whether the table meets
    the bound depends on all of it).

    Example:
        >>> import pandas as pd
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1, 1, 1, 2]}), ["q"])
        >>> model = AverageReidentificationRisk(0.4)  # J/n = 2/4 > 0.4: the class of 1 (< 1/0.4 = 2.5) violates
        >>> model.observed(classes), model.violating_classes(classes).tolist(), str(model)
        (0.5, [False, True], 'average re-identification risk <= 0.4')
    """

    max: float

    #: Which classes must go depends on the rest of the table.
    depends_on_table_distribution: ClassVar[bool] = True
    config_name: ClassVar[str] = "average_reidentification_risk"
    family: ClassVar[str] = "average re-identification risk"
    report_key: ClassVar[str] = "average_risk"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_fraction(self.max, name="max", open_low=True)

    def __str__(self) -> str:
        return f"average re-identification risk <= {self.max:g}"

    @property
    def minimum_class_size(self) -> int:
        """⌈1/max⌉: a table of classes this large meets the bound whatever else it holds."""
        return max(1, math.ceil(1.0 / self.max - TOLERANCE))

    @property
    def threshold(self) -> float:
        """The bound on J/n."""
        return float(self.max)

    def observed(self, classes: EquivalenceClasses) -> float:
        """J/n."""
        return classes.n_classes / classes.n_rows

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """None when J/n ≤ max; else the classes smaller than 1/max.

        When J/n > max some class is smaller than 1/max (if every class had at least
        1/max records, J ≤ max·n), and once those go every class left has at least 1/max
        records, so the rest meets the bound by itself: the verdict of a class depends
        on its size alone, which lets partitioning and clustering algorithms keep the
        model split by split.
        """
        if self.observed(classes) <= self.max + TOLERANCE:
            return np.zeros(classes.n_classes, dtype=bool)
        return np.asarray(classes.sizes * self.max < 1.0 - TOLERANCE)

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone under generalization alone."""
        return not with_suppression
