"""k-anonymity: every equivalence class holds at least k records.

References:
    Sweeney L. k-anonymity: a model for protecting privacy. IJUFKS 10(5), 2002.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from privacy_plugins.core.metrics.anonymity import k_of
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import check_integer
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KAnonymity"]


@dataclass(frozen=True)
class KAnonymity(PrivacyModel):
    """k-anonymity; ``k``: integer ≥ 1.

    Example:
        >>> import pandas as pd
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1, 1, 2]}), ["q"])
        >>> KAnonymity(2).evaluate(classes).passed, str(KAnonymity(2))
        (False, '2-anonymity')
    """

    k: int

    monotonic_with_suppression: ClassVar[bool] = True
    judged_by_size: ClassVar[bool] = True
    fails_on_every_subset: ClassVar[bool] = True  # a subset of a small class is smaller
    config_name: ClassVar[str] = "k_anonymity"
    family: ClassVar[str] = "k-anonymity"
    report_key: ClassVar[str] = "k"

    def __post_init__(self) -> None:
        check_integer(self.k, name="k")

    @property
    def minimum_class_size(self) -> int:
        """K."""
        return self.k

    def validate_against(self, table: pd.DataFrame) -> None:
        """K must not exceed the rows of the table."""
        if self.k > len(table):
            raise ConfigurationError(f"k={self.k} is larger than the table ({len(table)} rows)")

    def describe_gap(self, observed: float) -> str:
        """E.g. ``"observed k = 4, needs ≥ 5 (short by 1)"``.

        Example:
            >>> KAnonymity(5).describe_gap(4)
            'observed k = 4, needs ≥ 5 (short by 1)'
        """
        return f"observed k = {observed:g}, needs ≥ {self.k:g} (short by {self.k - observed:g})"

    def __str__(self) -> str:
        return f"{self.k}-anonymity"

    @property
    def threshold(self) -> float:
        """K."""
        return float(self.k)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes smaller than k."""
        return classes.sizes < self.k

    def observed(self, classes: EquivalenceClasses) -> float:
        """The table's k."""
        return float(k_of(classes))
