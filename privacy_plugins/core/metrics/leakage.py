"""Personalized privacy leakage (Song et al. 2015, DESIGN.md "Personalized leakage").

Each record t carries its own bound pleak(t) in (0, 1]. With the sensitive
attribute published as is, the leakage of t's published tuple in its class QG
of size b is Pleak(t*) = count(QG, t.s) / b. The release satisfies the bounds iff
Pleak(t*) ≤ pleak(t) for every t. A bound below 1/b can never be met inside QG,
whatever the class looks like (Theorem 1): such records are reported as
infeasible rather than retried.

References:
    Song F., Huang J., Wang Y., Kang Y., Liu W. The K-Anonymization Method
    Satisfying Personalized Privacy Preservation. Chem. Eng. Trans. 46, 2015.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts
from privacy_plugins.core.results import ClassViolations, violations_from_mask

__all__ = ["LeakageReport", "leakage_per_record", "leakage_violations", "personalized_leakage"]


@dataclass(frozen=True)
class LeakageReport:
    """Leakage of every record against its personal bound.

    Attributes:
        max_leakage: the largest Pleak over all records.
        mean_leakage: the mean Pleak over records.
        violations: records whose Pleak exceeds their bound.
        infeasible: records whose bound is below 1/|class| (Theorem 1); a subset
            of ``violations``.
        classes: the classes holding at least one violating record.
    """

    max_leakage: float
    mean_leakage: float
    violations: int
    infeasible: int
    classes: ClassViolations


def leakage_per_record(classes: EquivalenceClasses, counts: SensitiveCounts) -> np.ndarray:
    """Pleak of each record: the share of its class that shares its sensitive value."""
    return counts.pair_count[counts.pair_of_row] / classes.row_size


def leakage_violations(
    classes: EquivalenceClasses, counts: SensitiveCounts, bounds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row masks: leakage above the bound, and bound below 1/|class| (Theorem 1)."""
    same_value = counts.pair_count[counts.pair_of_row]
    size = classes.row_size
    violating = same_value - bounds * size > TOLERANCE * size
    infeasible = bounds * size < 1.0 - TOLERANCE
    return violating, infeasible


def personalized_leakage(
    classes: EquivalenceClasses,
    counts: SensitiveCounts,
    bounds: np.ndarray,
    *,
    include_values: bool = False,
) -> LeakageReport:
    """Compare each record's leakage with its bound (``bounds``: one float per row, in (0, 1])."""
    leakage = leakage_per_record(classes, counts)
    violating, infeasible = leakage_violations(classes, counts, bounds)
    violating_classes = np.zeros(classes.n_classes, dtype=bool)
    violating_classes[classes.class_of_row[violating]] = True
    weights = classes.unit_weights
    return LeakageReport(
        max_leakage=float(leakage.max()),
        mean_leakage=float((leakage * weights).sum() / weights.sum()),
        violations=int(weights[violating].sum()),
        infeasible=int(weights[infeasible].sum()),
        classes=violations_from_mask(
            classes, violating_classes, target="leakage<=bound", include_values=include_values
        ),
    )
