"""δ-presence: an attacker who knows the public population table cannot tell who is in the research subset.

The table holds the population (e.g. a voter list) with the research subset S
flagged by a column. For an equivalence class E holding records of S,
δ(E) = |E ∩ S| / |E| is the probability that a person of E is in S; the table is
(δmin, δmax)-present when δmin ≤ δ(E) ≤ δmax for every such class.

References:
    Nergiz M. E., Atzori M., Clifton C. Hiding the presence of individuals from shared
    databases. SIGMOD 2007. ARX: ``criteria/DPresence``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.research_subset import subset_flags
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["DeltaPresence"]


@dataclass(frozen=True)
class DeltaPresence(PrivacyModel):
    """δmin ≤ δ(E) ≤ δmax for every class with research-subset records; 0 ≤ ``dmin`` ≤ ``dmax`` ≤ 1.

    ``subset_column`` flags the research subset (true/false, 1/0, yes/no). Classes
    without subset records are not judged (nobody of them is published).

    Monotone under generalization (without suppression) only when ``dmin`` is 0: a merged class's δ is
    the record-weighted mean of its parts', so it stays below δmax; but merging
    with a class holding no subset record lowers δ, which can fall below a positive
    δmin (a class of 2 with 1 subset record, δ = 0.5, merged with 8 people outside
    the subset gives 0.1). With a positive δmin it is declared not monotone, so the
    lattice never prunes with it. Only the subset is published: the anonymizers that
    declare ``research_subset`` (the full-domain searches) judge every other model on
    the subset's rows and publish them alone, without the flag column (issue 30).

    Example:
        >>> frame = pd.DataFrame({"zip": ["a", "a", "b", "b", "b", "b"], "study": [1, 0, 1, 0, 0, 0]})
        >>> classes = EquivalenceClasses.from_frame(frame, ["zip"])
        >>> model = DeltaPresence(0.3, 0.6, "study")
        >>> model.deltas(classes).tolist(), model.violating_classes(classes).tolist()
        ([0.5, 0.25], [False, True])
    """

    dmin: float
    dmax: float
    subset_column: Hashable

    config_name: ClassVar[str] = "delta_presence"
    family: ClassVar[str] = "delta-presence"
    report_key: ClassVar[str] = "delta"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_fraction(self.dmin, name="dmin")
        check_fraction(self.dmax, name="dmax")
        if self.dmin > self.dmax:
            raise ConfigurationError(f"dmin must be at most dmax, got dmin={self.dmin:g} > dmax={self.dmax:g}")

    def __str__(self) -> str:
        return f"({self.dmin:g}, {self.dmax:g})-presence of {self.subset_column!r}"

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """The subset flag column."""
        return (self.subset_column,)

    @property
    def research_subset_column(self) -> Hashable:
        """Only the research subset is published (the table holds the population)."""
        return self.subset_column

    @property
    def threshold(self) -> float:
        """δmax (δmin failures show in the violations)."""
        return float(self.dmax)

    @property
    def holds_as_the_subset_shrinks(self) -> bool:
        """Leaving subset records out only lowers a class's δ: δmax keeps holding, a positive δmin may not."""
        return self.dmin == 0

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone under generalization only without a lower bound, and never under suppression.

        With suppression a class over δmax that was suppressed can merge with a good one
        into a class over δmax that is too large to suppress (ARX: not monotone either).
        """
        return self.dmin == 0 and not with_suppression

    def flags(self, frame: pd.DataFrame) -> np.ndarray:
        """The subset flag of every record (1 in the subset, 0 outside).

        Raises:
            ConfigurationError: a flag that is not a boolean, 0/1 or yes/no.
        """
        return subset_flags(frame, self.subset_column)

    def validate_against(self, table: pd.DataFrame) -> None:
        """The flag column must exist and hold flags."""
        super().validate_against(table)
        self.flags(table)

    def deltas(self, classes: EquivalenceClasses) -> np.ndarray:
        """δ(E) of every class (0 for a class without subset records)."""
        weights = self.flags(classes.frame) * classes.unit_weights
        in_subset = np.bincount(classes.class_of_row, weights=weights, minlength=classes.n_classes)
        return in_subset / classes.sizes

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes with subset records whose δ is outside [dmin, dmax]."""
        delta = self.deltas(classes)
        judged = delta > 0
        return judged & ((delta < self.dmin - TOLERANCE) | (delta > self.dmax + TOLERANCE))

    def observed(self, classes: EquivalenceClasses) -> float:
        """The largest δ (0 when the subset is empty)."""
        return float(self.deltas(classes).max())

    def describe_gap(self, observed: float) -> str:
        """Both bounds, since either can fail."""
        bounds = f"[{self.dmin:g}, {self.dmax:g}]"
        return f"δ must be in {bounds} for every class with subset records (largest δ {observed:.4g})"
