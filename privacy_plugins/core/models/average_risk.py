"""Average re-identification risk: the prosecutor's mean record risk J/n stays at or below a bound.

References:
    El Emam K., Dankar F. K. Protecting privacy using k-anonymity. JAMIA 15(5), 2008.
    ARX: ``criteria/AverageReidentificationRisk`` (Prasser et al.).
"""

from __future__ import annotations

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
    bound is missed the violating classes are the fewest smallest classes whose
    suppression brings the rest within it (ARX suppresses smallest classes first);
    whether suppressing more helps depends on the whole table, so the lattice does
    not prune with it under suppression.

    Example:
        >>> import pandas as pd
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1, 1, 1, 2]}), ["q"])
        >>> model = AverageReidentificationRisk(0.4)
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
    def threshold(self) -> float:
        """The bound on J/n."""
        return float(self.max)

    def observed(self, classes: EquivalenceClasses) -> float:
        """J/n."""
        return classes.n_classes / classes.n_rows

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """None when J/n ≤ max; else the fewest smallest classes whose removal meets the bound (all if none does)."""
        mask = np.zeros(classes.n_classes, dtype=bool)
        if self.observed(classes) <= self.max + TOLERANCE:
            return mask
        order = np.argsort(classes.sizes, kind="stable")
        removed = np.arange(1, classes.n_classes + 1)
        rows_left = classes.n_rows - np.cumsum(classes.sizes[order])
        with np.errstate(divide="ignore", invalid="ignore"):
            meets = (rows_left > 0) & ((classes.n_classes - removed) / rows_left <= self.max + TOLERANCE)
        count = int(np.argmax(meets)) + 1 if meets.any() else classes.n_classes
        mask[order[:count]] = True
        return mask

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone under generalization alone."""
        return not with_suppression
