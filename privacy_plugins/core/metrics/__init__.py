"""Measures ("how much?"): plain numbers computed from :class:`EquivalenceClasses`.

Thresholded verdicts ("is it acceptable at X?") are built on top of these; the
measures themselves never decide anything.
"""

from privacy_plugins.core.metrics.anonymity import (
    KAfterSuppression,
    SuppressionNeeded,
    class_size_histogram,
    k_after_suppression,
    k_of,
    k_violations,
    sample_uniques,
    suppression_needed,
)
from privacy_plugins.core.metrics.closeness import emd_equal, emd_hierarchical, emd_ordered
from privacy_plugins.core.metrics.diversity import (
    distinct_l_per_class,
    entropy_l_per_class,
    frequency_l_per_class,
    recursive_c_per_class,
)
from privacy_plugins.core.metrics.leakage import LeakageReport, personalized_leakage
from privacy_plugins.core.metrics.risk import ProsecutorRisk, prosecutor_risk

__all__ = [
    "KAfterSuppression",
    "LeakageReport",
    "ProsecutorRisk",
    "SuppressionNeeded",
    "class_size_histogram",
    "distinct_l_per_class",
    "emd_equal",
    "emd_hierarchical",
    "emd_ordered",
    "entropy_l_per_class",
    "frequency_l_per_class",
    "k_after_suppression",
    "k_of",
    "k_violations",
    "personalized_leakage",
    "prosecutor_risk",
    "recursive_c_per_class",
    "sample_uniques",
    "suppression_needed",
]
