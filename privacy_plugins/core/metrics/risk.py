"""Re-identification risk under the prosecutor model (DESIGN.md "Re-identification risk").

An attacker who knows a person is in the table and knows their quasi-identifiers
picks one record of the matching class: the record's risk is 1/|E|.

References:
    El Emam K., Dankar F. K. Protecting Privacy Using k-Anonymity. JAMIA 15(5), 2008.
"""

from __future__ import annotations

from dataclasses import dataclass

from privacy_plugins.core.parameters import check_fraction
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["DEFAULT_RISK_THRESHOLD", "ProsecutorRisk", "prosecutor_risk"]

#: Records with risk above this (classes smaller than 5) count as "at risk" by default.
DEFAULT_RISK_THRESHOLD = 0.2


@dataclass(frozen=True)
class ProsecutorRisk:
    """Prosecutor re-identification risk summary.

    Attributes:
        max_risk: the highest record risk, 1/k.
        mean_risk: record-weighted mean risk, (number of classes) / (number of rows).
        threshold: the risk threshold used for ``records_at_risk``.
        records_at_risk: records whose risk 1/|E| is strictly above ``threshold``.
        share_at_risk: ``records_at_risk`` as a fraction of the rows.
    """

    max_risk: float
    mean_risk: float
    threshold: float
    records_at_risk: int
    share_at_risk: float


def prosecutor_risk(classes: EquivalenceClasses, *, threshold: float = DEFAULT_RISK_THRESHOLD) -> ProsecutorRisk:
    """Max, mean and share-above-threshold of the record risk 1/|E|."""
    threshold = check_fraction(threshold, name="risk_threshold")
    risky_sizes = classes.sizes[1.0 / classes.sizes > threshold]
    at_risk = int(risky_sizes.sum())
    return ProsecutorRisk(
        max_risk=1.0 / float(classes.sizes.min()),
        mean_risk=classes.n_classes / classes.n_rows,
        threshold=threshold,
        records_at_risk=at_risk,
        share_at_risk=at_risk / classes.n_rows,
    )
