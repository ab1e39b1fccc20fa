"""k-anonymity, sample uniques and record suppression (DESIGN.md "Measures").

References:
    Sweeney L. k-anonymity: a model for protecting privacy. IJUFKS 10(5), 2002.
    Samarati P. Protecting respondents' identities in microdata release. TKDE 13(6), 2001.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privacy_plugins.core.parameters import check_fraction, check_integer, suppression_budget
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import ClassViolations, size_histogram, violations_from_mask

__all__ = [
    "KAfterSuppression",
    "SuppressionNeeded",
    "class_size_histogram",
    "k_after_suppression",
    "k_of",
    "k_violations",
    "sample_uniques",
    "suppression_needed",
]


def k_of(classes: EquivalenceClasses) -> int:
    """K = the size of the smallest equivalence class.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"zip": ["1", "1", "2"]})
        >>> k_of(EquivalenceClasses.from_frame(df, ["zip"]))
        1
    """
    return int(classes.sizes.min())


def sample_uniques(classes: EquivalenceClasses) -> int:
    """Number of records that are alone in their class (classes of size 1)."""
    return int(np.count_nonzero(classes.sizes == 1))


def class_size_histogram(classes: EquivalenceClasses) -> dict[int, int]:
    """Class size → number of classes of that size."""
    return size_histogram(classes.sizes)


def k_violations(classes: EquivalenceClasses, k: int, *, include_values: bool = False) -> ClassViolations:
    """The classes smaller than ``k``."""
    k = check_integer(k, name="k")
    return violations_from_mask(classes, classes.sizes < k, target=f"k>={k}", include_values=include_values)


@dataclass(frozen=True)
class SuppressionNeeded:
    """Records to suppress (whole classes smaller than ``k``) so that k holds."""

    k: int
    rows: int
    fraction: float


def suppression_needed(classes: EquivalenceClasses, k: int) -> SuppressionNeeded:
    """Σ |E| over the classes with |E| < k, as a count and a fraction of the rows."""
    k = check_integer(k, name="k")
    rows = int(classes.sizes[classes.sizes < k].sum())
    return SuppressionNeeded(k=k, rows=rows, fraction=rows / classes.n_rows)


@dataclass(frozen=True)
class KAfterSuppression:
    """The k reached by suppressing at most ⌊suppression_limit·n⌋ rows, smallest classes first.

    Attributes:
        suppression_limit: the suppression limit (δ, MaxSup) as a fraction of the rows.
        budget_rows: ⌊suppression_limit·n⌋.
        k: the largest k whose ``suppression_needed(k)`` fits the budget, with at
            least one class kept (suppressing everything proves nothing).
        suppressed_rows: rows suppressed to reach that k.
    """

    suppression_limit: float
    budget_rows: int
    k: int
    suppressed_rows: int


def k_after_suppression(classes: EquivalenceClasses, suppression_limit: float) -> KAfterSuppression:
    """Largest k reachable by suppressing whole smallest classes within ⌊suppression_limit·n⌋ rows."""
    suppression_limit = check_fraction(suppression_limit, name="suppression_limit")
    budget = suppression_budget(suppression_limit, classes.n_rows)
    distinct_sizes, counts = np.unique(classes.sizes, return_counts=True)
    # Suppressing every class of size <= s_j costs cumulative[j] rows and leaves k = s_{j+1}.
    cumulative = np.cumsum(distinct_sizes * counts)
    affordable = int(np.searchsorted(cumulative, budget, side="right"))
    affordable = min(affordable, distinct_sizes.shape[0] - 1)
    suppressed = int(cumulative[affordable - 1]) if affordable > 0 else 0
    return KAfterSuppression(
        suppression_limit=suppression_limit,
        budget_rows=budget,
        k=int(distinct_sizes[affordable]),
        suppressed_rows=suppressed,
    )
