"""t-closeness: every class's sensitive distribution is within EMD t of the table's.

The reference distribution is that of the table the classes come from. When the
lattice search suppresses classes, it re-checks the published classes against
the published table's distribution, so a result never claims a closeness that
the release itself does not have.

The hierarchical ground distance (``t_distance="hierarchical"``) measures along the
sensitive attribute's hierarchy, which the model is bound to like every model that
measures along one (:meth:`TCloseness.with_hierarchies`, from the request's
``hierarchies``): two values are level(lowest common ancestor)/height apart, so a class
of three stomach diseases is far from a table of mixed diseases even though the values
differ (ARX's ``HierarchicalDistanceTCloseness``).

Every ground distance is a transport cost, so the EMD to a fixed Q is convex in the
class distribution and at most 1: merging classes (generalizing, or dropping a
quasi-identifier) never raises the largest EMD. The model is monotone under
generalization (the lattice and the diagnosis borders prune with it) and not under
suppression (suppressing changes Q).

References:
    Li N., Li T., Venkatasubramanian S. t-Closeness: Privacy Beyond k-Anonymity
    and l-Diversity. ICDE 2007.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from typing import ClassVar, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.hierarchies.config import build_hierarchy
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.closeness import emd_equal, emd_hierarchical, emd_ordered
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE, check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["T_DISTANCES", "TCloseness", "TDistance", "emd_per_class", "resolve_t_distance"]

#: The ground distances a t-closeness requirement may name; ``"auto"`` picks by column type.
T_DISTANCES: tuple[str, ...] = ("auto", "equal", "ordered", "hierarchical")
TDistance = Literal["auto", "equal", "ordered", "hierarchical"]
#: A ground distance once ``"auto"`` is resolved.
ResolvedDistance = Literal["equal", "ordered", "hierarchical"]


def resolve_t_distance(series: pd.Series, t_distance: str) -> ResolvedDistance:
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
    if t_distance == "hierarchical":
        return "hierarchical"
    if t_distance != "auto":
        raise ConfigurationError(f"t_distance must be one of {list(T_DISTANCES)}, got {t_distance!r}")
    dtype = series.dtype
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return "ordered" if numeric else "equal"


def emd_per_class(
    classes: EquivalenceClasses, attribute: Hashable, distance: str, hierarchy: Hierarchy | None = None
) -> np.ndarray:
    """Each class's EMD to the table for a resolved ground distance (``hierarchy``: the hierarchical one's).

    Raises:
        ConfigurationError: the hierarchical distance without a hierarchy of ``attribute``.
        HierarchyError: a value of ``attribute`` is not a leaf of ``hierarchy``.
    """
    if distance == "ordered":
        return emd_ordered(classes, classes.sensitive(attribute, ordered=True))
    if distance == "hierarchical":
        if hierarchy is None:
            raise ConfigurationError(
                f"t_distance 'hierarchical' needs a hierarchy of the sensitive attribute {attribute!r} "
                "(hierarchies=, --hierarchies or the spec's hierarchies:)"
            )
        return emd_hierarchical(classes, classes.sensitive(attribute), hierarchy)
    return emd_equal(classes, classes.sensitive(attribute))


@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """t-closeness; ``t`` in [0, 1]; ``t_distance``: ``"equal"``, ``"ordered"``, ``"hierarchical"`` or ``"auto"``.

    ``"auto"`` (the default) is resolved from the sensitive column's type by
    :func:`resolve_t_distance` when the model is evaluated: ordered for numbers,
    equal otherwise. ``"hierarchical"`` measures along ``sensitive_hierarchy``: a
    :class:`Hierarchy`, or in the list form an ARX CSV path or a builder mapping
    (``{"taxonomy": {...}}``, ``{"grouping": {...}}``, ``{"file": {...}}``); when not
    given, the request's hierarchies bind it.

    Example:
        >>> h = Hierarchy.from_rows("d", [["flu", "resp", "*"], ["cold", "resp", "*"], ["ulcer", "stomach", "*"]])
        >>> df = pd.DataFrame({"zip": ["1", "1", "2", "2"], "d": ["flu", "cold", "ulcer", "ulcer"]})
        >>> model = TCloseness("d", 0.5, "hierarchical", sensitive_hierarchy=h)
        >>> model.observed(EquivalenceClasses.from_frame(df, ["zip"]))
        0.5
    """

    sensitive_attribute: Hashable
    t: float
    t_distance: TDistance = "auto"
    sensitive_hierarchy: Hierarchy | None = field(default=None, compare=False, repr=False)

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
        given: object = self.sensitive_hierarchy
        if isinstance(given, (str, PathLike, Mapping)):  # the list form's primitives: a path or a builder
            object.__setattr__(self, "sensitive_hierarchy", build_hierarchy(self.sensitive_attribute, given))  # type: ignore[arg-type]
        elif given is not None and not isinstance(given, Hierarchy):
            raise TypeError(
                "sensitive_hierarchy must be a Hierarchy, an ARX CSV path or a builder mapping, "
                f"got {type(given).__name__}"
            )

    def __str__(self) -> str:
        return f"{self.t:g}-closeness ({self.t_distance} distance) for {self.sensitive_attribute!r}"

    @property
    def threshold(self) -> float:
        """T."""
        return float(self.t)

    def per_class(self, classes: EquivalenceClasses) -> np.ndarray:
        """EMD of each class to the whole table."""
        distance = self.distance_for(classes.frame[self.sensitive_attribute])
        return emd_per_class(classes, self.sensitive_attribute, distance, self.sensitive_hierarchy)

    def distance_for(self, column: pd.Series) -> ResolvedDistance:
        """The ground distance used on ``column`` (``"auto"`` resolved from its type)."""
        return resolve_t_distance(column, self.t_distance)

    def with_hierarchies(self, hierarchies: Mapping[Hashable, Hierarchy]) -> TCloseness:
        """With the hierarchical distance: this model measuring along ``hierarchies[sensitive_attribute]``."""
        given = hierarchies.get(self.sensitive_attribute)
        if self.t_distance != "hierarchical" or self.sensitive_hierarchy is not None or given is None:
            return self
        return replace(self, sensitive_hierarchy=given)

    def validate_against(self, table: pd.DataFrame) -> None:
        """The column exists; the hierarchical distance has a hierarchy whose leaves hold every value."""
        super().validate_against(table)
        if self.t_distance == "hierarchical":
            if self.sensitive_hierarchy is None:
                raise ConfigurationError(
                    f"{self}: t_distance 'hierarchical' needs a hierarchy of the sensitive attribute "
                    f"{self.sensitive_attribute!r} (hierarchies=, --hierarchies or the spec's hierarchies:)"
                )
            self.sensitive_hierarchy.leaf_codes(table[self.sensitive_attribute].drop_duplicates())

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
