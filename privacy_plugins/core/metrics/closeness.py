"""t-closeness: Earth Mover's Distance between each class and the whole table.

Three ground distances (DESIGN.md "Measures"):

* equal distance (categorical): EMD = ½ Σ_v |p_v − q_v|;
* ordered distance (numeric, m sorted values): EMD = 1/(m−1) · Σ_i |Σ_{j≤i}(p_j − q_j)|;
* hierarchical distance (a value hierarchy of height H; two leaves are level(LCA)/H
  apart): EMD = Σ_N (level(N)/H) · min(pos_extra(N), neg_extra(N)) over the inner
  nodes N, where extra(N) = Σ_{leaves under N}(p − q) and pos/neg_extra(N) sum the
  positive / negative extras of N's children (Li et al. 2007, §4.2).

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

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts

if TYPE_CHECKING:
    from privacy_plugins.core.hierarchies.hierarchy import Hierarchy

__all__ = ["emd_equal", "emd_hierarchical", "emd_ordered"]


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


def _emd_equal_grouped(
    classes: EquivalenceClasses, pair_class: np.ndarray, pair_group: np.ndarray, pair_count: np.ndarray, q: np.ndarray
) -> np.ndarray:
    """½ Σ_g |p_g − q_g| per class, over (class, group) pairs that may repeat (they are summed first)."""
    n_groups = q.shape[0]
    keys, inverse = np.unique(pair_class * n_groups + pair_group, return_inverse=True)
    count = np.bincount(inverse.reshape(-1), weights=pair_count, minlength=keys.shape[0])
    cls = keys // n_groups
    q_present = q[keys % n_groups]
    partial = np.bincount(
        cls, weights=np.abs(count / classes.sizes[cls] - q_present) - q_present, minlength=classes.n_classes
    )
    return 0.5 * (1.0 + partial)


def emd_hierarchical(classes: EquivalenceClasses, counts: SensitiveCounts, hierarchy: Hierarchy) -> np.ndarray:
    """Hierarchical-distance EMD of each class (every sensitive value must be a leaf of ``hierarchy``).

    In a tree whose parents sit one level above their children (our hierarchies, ARX's),
    ``min(pos, neg) = (Σ_children |extra(C)| − |extra(N)|)/2``, and each node's extra
    appears once as a child (weight level(parent)/H) and once as a node (weight
    level(N)/H), so the paper's sum telescopes to

        EMD = (1/H) · Σ_{level=0}^{H−1} ½ Σ_{nodes N at level} |P(N) − Q(N)|,

    the mean over the levels below the root of the equal-distance EMD of the class and
    table distributions generalized to that level. That is what is computed here: per
    level one grouping of the sparse (class, value) pairs, never a classes × values
    matrix, never a loop over rows. A flat hierarchy (leaves under ``*``, H = 1) gives the
    equal-distance EMD.

    Raises:
        HierarchyError: a sensitive value (or a missing one) is not a leaf of ``hierarchy``.
    """
    height = hierarchy.height
    if height == 0:
        return np.zeros(classes.n_classes)
    leaf_of_code = hierarchy.leaf_codes(pd.Series(counts.column.values))
    totals = counts.value_totals.astype(np.float64)
    emd = np.zeros(classes.n_classes)
    for level in range(height):  # H levels; the root's own extra is always 0
        node_of_code = hierarchy.codes[level][leaf_of_code]
        q = np.bincount(node_of_code, weights=totals, minlength=len(hierarchy.labels[level])) / classes.n_rows
        emd += _emd_equal_grouped(classes, counts.pair_class, node_of_code[counts.pair_value], counts.pair_count, q)
    return np.clip(emd / height, 0.0, 1.0)
