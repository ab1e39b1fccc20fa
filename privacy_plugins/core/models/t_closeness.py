"""t-closeness: every class's sensitive distribution is within EMD t of the table's.

The reference distribution is that of the table the classes come from. When the
lattice search suppresses classes, it re-checks the published classes against
the published table's distribution, so a result never claims a closeness that
the release itself does not have.

References:
    Li N., Li T., Venkatasubramanian S. t-Closeness: Privacy Beyond k-Anonymity
    and l-Diversity. ICDE 2007.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.metrics.closeness import emd_equal, emd_ordered
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["T_DISTANCES", "TCloseness", "TDistance", "resolve_t_distance"]

#: The ground distances a t-closeness requirement may name; ``"auto"`` picks by column type.
T_DISTANCES: tuple[str, ...] = ("auto", "equal", "ordered")
TDistance = Literal["auto", "equal", "ordered"]


def resolve_t_distance(series: pd.Series, t_distance: str) -> Literal["equal", "ordered"]:
    """The ground distance for a sensitive column: ``"auto"`` is ordered for numbers, equal otherwise.

    Booleans are categorical (``"equal"``): True/False have no order worth a
    distance. With two values both distances give the same EMD anyway, so the
    choice never changes a result, only the label reported.

    Example:
        >>> resolve_t_distance(pd.Series([1, 2]), "auto"), resolve_t_distance(pd.Series([True]), "auto")
        ('ordered', 'equal')
        >>> resolve_t_distance(pd.Series(["a"]), "ordered")
        'ordered'
    """
    if t_distance == "equal":
        return "equal"
    if t_distance == "ordered":
        return "ordered"
    if t_distance != "auto":
        raise ConfigurationError(f"t_distance must be one of {list(T_DISTANCES)}, got {t_distance!r}")
    dtype = series.dtype
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return "ordered" if numeric else "equal"


@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """t-closeness; ``t`` in [0, 1]; ``t_distance``: ``"equal"`` (categorical), ``"ordered"`` (numeric) or ``"auto"``.

    ``"auto"`` (the default) is resolved from the sensitive column's type by
    :func:`resolve_t_distance` when the model is evaluated: ordered for numbers,
    equal otherwise.
    """

    sensitive_attribute: Hashable
    t: float
    t_distance: TDistance = "auto"

    requires_sensitive: ClassVar[bool] = True
    #: The reference distribution changes with what is suppressed.
    depends_on_table_distribution: ClassVar[bool] = True
    bounds_suppression: ClassVar[bool] = True
    config_name: ClassVar[str] = "t_closeness"
    family: ClassVar[str] = "t-closeness"
    report_key: ClassVar[str] = "t"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_fraction(self.t, name="t")
        if self.t_distance not in T_DISTANCES:
            raise ConfigurationError(f"t_distance must be one of {list(T_DISTANCES)}, got {self.t_distance!r}")

    def __str__(self) -> str:
        return f"{self.t:g}-closeness ({self.t_distance} distance) for {self.sensitive_attribute!r}"

    @property
    def threshold(self) -> float:
        """T."""
        return float(self.t)

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """EMD of each class to the whole table."""
        if self.distance_for(classes.frame[self.sensitive_attribute]) == "ordered":
            return emd_ordered(classes, classes.sensitive(self.sensitive_attribute, ordered=True))
        return emd_equal(classes, classes.sensitive(self.sensitive_attribute))

    def distance_for(self, column: pd.Series) -> Literal["equal", "ordered"]:
        """The ground distance used on ``column`` (``"auto"`` resolved from its type)."""
        return resolve_t_distance(column, self.t_distance)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes farther than t."""
        return self.per_class(classes) > self.t + TOLERANCE

    def suppression_bound(self, classes: EquivalenceClasses) -> float:
        """Σ over classes of |C|·(d(C) − t')/(1 − t') for the classes farther than t' = t + tolerance.

        Every specialization suppresses at least that many records (measured against
        the same table distribution Q, as :meth:`violating_classes` does).

        Proof: d(·, Q) — total variation for the equal distance, the L1 distance of
        the CDFs over (m − 1) for the ordered one — is convex in the class
        distribution and at most 1. In a specialization, C is split into classes
        C_j with weights w_j = |C_j|/|C| and C's distribution is Σ w_j p_j, so
        d(C) ≤ Σ w_j d(C_j) ≤ W·1 + (1 − W)·t', where W is the weight of the parts
        farther than t' — exactly the parts suppressed there. Hence
        W ≥ (d(C) − t')/(1 − t'), and the suppressed records number at least
        Σ_C |C|·W.
        """
        t = self.t + TOLERANCE
        if t >= 1.0:
            return 0.0
        excess = np.maximum(self.per_class(classes) - t, 0.0)
        return float((classes.sizes * excess).sum() / (1.0 - t))

    def observed(self, classes: EquivalenceClasses) -> float:
        """The table's t (max EMD)."""
        return float(self.per_class(classes).max())
