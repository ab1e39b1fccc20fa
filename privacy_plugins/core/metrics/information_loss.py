"""Utility / information-loss metrics (DESIGN.md "Utility / information loss"; lower loss is better).

The functions take per-record costs or class sizes, so the same code scores a
full-domain (global) recoding and, later, local recodings such as Mondrian:

* NCP: a value generalized to g costs (leaves(g) − 1)/(|D| − 1); a suppressed
  record costs 1 for every QI; the table's NCP is the mean over records × QIs
  (identical to ARX's "Loss").
* LM (Iyengar): the same costs averaged per attribute and summed = NCP × #QIs.
* Discernibility C_DM = Σ|E|² over published classes + |suppressed|·n.
* C_AVG = (published records / #classes) / k.
* Height / precision (Sweeney) of a full-domain node.
* ILeft (Song et al. Def. 9–11): 1 − (leaves(v*) − 1)/|D| per value, averaged
  over the QI and sensitive values of a tuple, then over tuples.

References:
    Xu J. et al. Utility-based anonymization using local recoding. KDD 2006 (NCP).
    Iyengar V. S. Transforming data to satisfy privacy constraints. KDD 2002 (LM).
    Bayardo R., Agrawal R. Data privacy through optimal k-anonymization. ICDE 2005 (C_DM).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy

__all__ = [
    "UtilityMetrics",
    "average_class_size",
    "discernibility",
    "generalization_costs",
    "ileft",
    "local_generalization_costs",
    "ncp",
    "precision",
    "range_costs",
]


@dataclass(frozen=True)
class UtilityMetrics:
    """Every utility metric of one anonymized table (fractions, not percentages)."""

    ncp: float
    lm: float
    discernibility: float
    c_avg: float
    height: int | None = None
    precision: float | None = None
    ileft: float | None = None


def generalization_costs(hierarchy: Hierarchy, leaf_codes: np.ndarray, level: int) -> np.ndarray:
    """NCP cost of each value generalized to ``level``: (leaves(g) − 1)/(|D| − 1)."""
    if hierarchy.n_leaves <= 1:
        return np.zeros(leaf_codes.shape[0])
    covered = hierarchy.leaf_counts[level][hierarchy.codes[level][leaf_codes]]
    return (covered - 1) / (hierarchy.n_leaves - 1)


def local_generalization_costs(hierarchy: Hierarchy, levels: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """NCP cost of hierarchical values generalized to different levels (local recoding, e.g. Mondrian).

    Args:
        hierarchy: the attribute's hierarchy.
        levels: the level of each published value.
        nodes: the code of each published value among the values of its level.

    Returns:
        (leaves(g) − 1)/(|D| − 1) per value; 0 for a hierarchy with a single leaf.

    Example:
        >>> h = Hierarchy.from_rows("q", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
        >>> local_generalization_costs(h, np.array([0, 1, 2]), np.array([2, 0, 0])).tolist()
        [0.0, 0.5, 1.0]
    """
    if hierarchy.n_leaves <= 1:
        return np.zeros(levels.shape[0])
    covered = np.zeros(levels.shape[0], dtype=np.int64)
    for level in range(hierarchy.height + 1):
        here = levels == level
        covered[here] = hierarchy.leaf_counts[level][nodes[here]]
    return (covered - 1) / (hierarchy.n_leaves - 1)


def range_costs(low: np.ndarray, high: np.ndarray, *, domain_min: float, domain_max: float) -> np.ndarray:
    """NCP cost of numeric values published as ranges [low, high] without a hierarchy.

    (high − low)/(max − min of the attribute); 0 when the attribute is constant.

    Example:
        >>> range_costs(np.array([20, 30]), np.array([29, 30]), domain_min=17, domain_max=90).tolist()
        [0.1232876712328767, 0.0]
    """
    span = float(domain_max) - float(domain_min)
    if span <= 0:
        return np.zeros(np.shape(low)[0])
    return np.asarray((np.asarray(high, dtype=float) - np.asarray(low, dtype=float)) / span, dtype=float)


def ncp(costs: Sequence[np.ndarray], suppressed: np.ndarray, *, weights: np.ndarray | None = None) -> float:
    """Mean NCP over records × QIs; suppressed records cost 1 for every QI.

    Args:
        costs: one array per QI with the cost of each record's published value.
        suppressed: boolean mask of suppressed records.
        weights: records per row when rows stand for several identical records.

    Example:
        >>> ncp([np.array([0.0, 0.5]), np.array([1.0, 0.0])], np.array([False, False]))
        0.375
    """
    w = np.ones(suppressed.shape[0]) if weights is None else weights
    total = sum(float((np.where(suppressed, 1.0, cost) * w).sum()) for cost in costs)
    return total / (float(w.sum()) * len(costs))


def discernibility(published_sizes: np.ndarray, suppressed: int, n_rows: int) -> float:
    """C_DM = Σ|E|² over published classes + suppressed·n."""
    sizes = published_sizes.astype(float)
    return float((sizes * sizes).sum()) + float(suppressed) * n_rows


def average_class_size(published_sizes: np.ndarray, k: int) -> float:
    """C_AVG = (published records / number of classes) / k (NaN when nothing is published)."""
    if published_sizes.shape[0] == 0:
        return float("nan")
    return float(published_sizes.sum()) / published_sizes.shape[0] / k


def precision(levels: Sequence[int], heights: Sequence[int]) -> float:
    """Sweeney's precision: 1 − mean over QIs of level / hierarchy height (a height-0 QI counts 0)."""
    ratios = [level / height if height else 0.0 for level, height in zip(levels, heights, strict=True)]
    return 1.0 - float(np.mean(ratios))


def ileft(
    leaf_counts: Iterable[np.ndarray],
    domain_sizes: Sequence[int],
    suppressed: np.ndarray,
    *,
    n_ungeneralized: int = 0,
    weights: np.ndarray | None = None,
) -> float:
    """ILeft of the table: mean over tuples of the mean ILeft of their values.

    Args:
        leaf_counts: per generalized attribute, the leaves under each record's published value
            (any iterable: a generator keeps one attribute's counts in memory at a time).
        domain_sizes: per generalized attribute, |D| (leaves of its hierarchy).
        suppressed: suppressed records; each of their values counts as the root (1/|D|),
            and their ungeneralized values as fully lost (0).
        n_ungeneralized: attributes published as they are (e.g. the sensitive
            attribute without a hierarchy): ILeft 1 each.
        weights: records per row.
    """
    w = np.ones(suppressed.shape[0]) if weights is None else weights
    per_tuple = np.zeros(suppressed.shape[0])
    n_generalized = 0
    for counts, domain in zip(leaf_counts, domain_sizes, strict=True):
        per_tuple += np.where(suppressed, 1.0 / domain, 1.0 - (counts - 1) / domain)
        n_generalized += 1
    per_tuple += np.where(suppressed, 0.0, float(n_ungeneralized))
    per_tuple /= n_generalized + n_ungeneralized
    return float((per_tuple * w).sum() / w.sum())
