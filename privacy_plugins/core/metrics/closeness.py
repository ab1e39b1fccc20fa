"""t-closeness: Earth Mover's Distance between each class and the whole table.

Two ground distances (DESIGN.md "Measures"):

* equal distance (categorical): EMD = ½ Σ_v |p_v − q_v|;
* ordered distance (numeric, m sorted values): EMD = 1/(m−1) · Σ_i |Σ_{j≤i}(p_j − q_j)|.

The ordered EMD is computed without materialising a classes × values matrix: a
class's cumulative distribution is a step function that only changes at the
values it contains, and on each constant step the sum of |c − Q_i| over the
table's (monotone) cumulative Q has a closed form through prefix sums and one
binary search. Cost O(pairs · log m) instead of O(classes · m).

References:
    Li N., Li T., Venkatasubramanian S. t-Closeness: Privacy Beyond k-Anonymity
    and l-Diversity. ICDE 2007.
"""

from __future__ import annotations

import numpy as np

from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts

__all__ = ["emd_equal", "emd_ordered"]


def emd_equal(classes: EquivalenceClasses, counts: SensitiveCounts) -> np.ndarray:
    """Equal-distance EMD of each class (values absent from a class contribute q_v)."""
    q = counts.value_totals / classes.n_rows
    p = counts.pair_count / classes.sizes[counts.pair_class]
    q_present = q[counts.pair_value]
    # ½(Σ_present |p−q| + Σ_absent q) = ½(1 + Σ_present (|p−q| − q))
    partial = np.bincount(counts.pair_class, weights=np.abs(p - q_present) - q_present, minlength=classes.n_classes)
    return np.clip(0.5 * (1.0 + partial), 0.0, 1.0)


def emd_ordered(classes: EquivalenceClasses, counts: SensitiveCounts) -> np.ndarray:
    """Ordered-distance EMD of each class; ``counts`` must come from ``sensitive(..., ordered=True)``."""
    m = counts.n_values
    if m <= 1:
        return np.zeros(classes.n_classes)
    table_cdf = np.cumsum(counts.value_totals) / classes.n_rows
    prefix = np.concatenate(([0.0], np.cumsum(table_cdf)))  # prefix[i] = Σ_{j<i} Q_j

    cls = counts.pair_class
    start = counts.class_start
    running = np.cumsum(counts.pair_count)
    before_class = np.where(start[:-1] > 0, running[np.maximum(start[:-1] - 1, 0)], 0)
    class_cdf = (running - before_class[cls]) / classes.sizes[cls]

    seg_start = counts.pair_value
    next_value = np.empty_like(seg_start)
    next_value[:-1] = seg_start[1:]
    next_value[-1] = m
    is_last = np.zeros(seg_start.shape[0], dtype=bool)
    is_last[start[1:] - 1] = True
    seg_end = np.where(is_last, m, next_value)

    cross = np.clip(np.searchsorted(table_cdf, class_cdf, side="left"), seg_start, seg_end)
    below = class_cdf * (cross - seg_start) - (prefix[cross] - prefix[seg_start])
    above = (prefix[seg_end] - prefix[cross]) - class_cdf * (seg_end - cross)
    body = np.bincount(cls, weights=below + above, minlength=classes.n_classes)
    head = prefix[seg_start[start[:-1]]]  # values before the class's first value: |0 − Q_i| = Q_i
    return np.clip((head + body) / (m - 1), 0.0, 1.0)
