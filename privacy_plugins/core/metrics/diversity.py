"""l-diversity measures per equivalence class (DESIGN.md "Measures").

Each function returns one number per class; the table's value is the minimum
(l) or maximum (c*) over classes. All work on the sparse, class-sorted
``(class, value, count)`` arrays of :class:`SensitiveCounts` with segment
reductions, never with a loop over classes.

References:
    Machanavajjhala A., Kifer D., Gehrke J., Venkitasubramaniam M.
    l-Diversity: Privacy Beyond k-Anonymity. ACM TKDD 1(1), 2007.
"""

from __future__ import annotations

import numpy as np

from privacy_plugins.core.parameters import check_integer
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts

__all__ = [
    "distinct_l_per_class",
    "entropy_l_per_class",
    "frequency_l_per_class",
    "recursive_c_per_class",
]


def distinct_l_per_class(counts: SensitiveCounts) -> np.ndarray:
    """Number of distinct sensitive values in each class."""
    return counts.distinct_per_class.astype(np.int64)


def frequency_l_per_class(classes: EquivalenceClasses, counts: SensitiveCounts) -> np.ndarray:
    """|E| / max_v count(E, v): every value has frequency ≤ 1/l exactly when this is ≥ l.

    An empty class (an algorithm's cluster left without records) is 0, as its distinct
    and entropy l are: it diversifies nothing (and 0/0 would be a NaN that no bound rejects).
    """
    top = counts.max_per_class
    return np.divide(classes.sizes, top, out=np.zeros(top.shape[0], dtype=np.float64), where=top > 0)


def entropy_l_per_class(classes: EquivalenceClasses, counts: SensitiveCounts) -> np.ndarray:
    """exp(H(E)) with H(E) = −Σ p ln p: the class is entropy-l-diverse when this is ≥ l."""
    p = counts.pair_count / classes.sizes[counts.pair_class]
    entropy = -np.bincount(counts.pair_class, weights=p * np.log(p), minlength=classes.n_classes)
    return np.exp(np.maximum(entropy, 0.0))


def recursive_c_per_class(classes: EquivalenceClasses, counts: SensitiveCounts, l: int) -> np.ndarray:
    """c*(E) = r1 / (r_l + … + r_m) with counts sorted r1 ≥ r2 ≥ …; ``inf`` when m < l.

    A class satisfies recursive (c,l)-diversity iff c > c*(E), so the table's c* is
    the maximum over classes.
    """
    l = check_integer(l, name="l")
    order = np.lexsort((-counts.pair_count, counts.pair_class))
    sorted_class = counts.pair_class[order]
    rank = np.arange(order.shape[0]) - counts.class_start[sorted_class]
    top = np.where(rank < l - 1, counts.pair_count[order], 0)
    head = np.bincount(sorted_class, weights=top, minlength=classes.n_classes)
    tail = classes.sizes - head
    with np.errstate(divide="ignore"):
        c_star = np.where(tail > 0, counts.max_per_class / np.where(tail > 0, tail, 1), np.inf)
    return c_star
