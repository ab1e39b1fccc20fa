"""Personalized privacy leakage (Song et al. 2015, DESIGN.md "Personalized leakage").

Each record t carries its own bound pleak(t) in (0, 1]. With the sensitive
attribute published as is, the leakage of t's published tuple in its class QG
of size b is Pleak(t*) = count(QG, t.s) / b. When the sensitive attribute itself has been
generalized along a hierarchy (SA_Generalization), Pleak(t*) = (1/b)·Σ_i
DCorrelate(t*, t_i*) with DCorrelate = 1 for an equal value, 1/Nleaf(t_i*[SA]) when
t's value is a leaf under t_i*'s generalized value, else 0 (Def. 6–8; DESIGN.md).
The release satisfies the bounds iff
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
import pandas as pd

from privacy_plugins.core.disclosure import examples
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy, as_labels
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts
from privacy_plugins.core.results import ClassViolations, violations_from_mask
from privacy_plugins.errors import HierarchyError

__all__ = [
    "LeakageReport",
    "hierarchy_nodes",
    "leakage_given_original_ids",
    "leakage_given_originals",
    "leakage_per_record",
    "leakage_violations",
    "personalized_leakage",
]


@dataclass(frozen=True)
class LeakageReport:
    """Leakage of every record against its personal bound.

    Attributes:
        max_leakage: the largest Pleak over all records.
        mean_leakage: the mean Pleak over records. With generalized sensitive values this is
            the mean of upper bounds (the published table hides each record's leaf; see
            :func:`leakage_per_record`); the anonymizer, which knows the originals, reports
            the actual mean (:func:`leakage_given_originals`).
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


def hierarchy_nodes(hierarchy: Hierarchy, values: pd.Index | pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The (level, node) of each published value in ``hierarchy``: a leaf or a generalized value.

    A label found at several levels (``"flu"`` kept as ``"flu"`` one level up) is taken at the
    lowest one; it covers the same leaves there.

    Raises:
        HierarchyError: values that are no node of the hierarchy (the count and the first few).

    Example:
        >>> h = Hierarchy.from_rows("d", [["flu", "resp", "*"], ["cold", "resp", "*"], ["hiv", "hiv", "*"]])
        >>> [a.tolist() for a in hierarchy_nodes(h, pd.Index(["cold", "resp", "*", "hiv"]))]
        [[0, 1, 2, 0], [1, 0, 0, 2]]
    """
    lookup: dict[str, tuple[int, int]] = {}
    for level in range(hierarchy.height, -1, -1):
        lookup.update({str(label): (level, node) for node, label in enumerate(hierarchy.labels[level])})
    # Each distinct value looked up once (a column has few; iterating every row costs seconds at 300k rows).
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=False)
    text = as_labels(pd.Series(list(uniques), dtype=object))
    found = [lookup.get(label) if isinstance(label, str) else None for label in text]
    hit = np.array([f is not None for f in found], dtype=bool)
    if not hit[codes].all():
        missing = [value for value, c in zip(values, codes.tolist(), strict=True) if not hit[c]]
        raise HierarchyError(
            f"column {hierarchy.attribute!r} has {len(missing)} value(s) that are neither leaves nor "
            f"generalized values of its hierarchy{examples(missing)}"
        )
    levels = np.array([f[0] if f is not None else -1 for f in found], dtype=np.int64)[codes]
    nodes = np.array([f[1] if f is not None else -1 for f in found], dtype=np.int64)[codes]
    return levels, nodes


def _dcorrelate_sums(counts: SensitiveCounts, hierarchy: Hierarchy) -> np.ndarray:
    """Per (class, value) pair: the largest Σ_i DCorrelate over the leaves its value may stand for.

    For a leaf value this is exactly Σ_i DCorrelate(t*, t_i*). A generalized value hides
    the record's leaf, which the published table does not hold; the measure then takes
    the leaf that leaks most (an upper bound of Song's Pleak, the adversary's worst case),
    so a release that passes here passes for every original it could have come from.

    Within a class, a leaf s is covered by the published labels that are ancestors-or-self
    of s; its sum is Σ count(L)/Nleaf(L) over them, the same for all leaves whose deepest
    covering label is the same L (call it f(L)). The worst leaf under a label v is then
    max f(L) over the labels L of the class at or below v.
    """
    levels, nodes = hierarchy_nodes(hierarchy, counts.column.values)
    # Per global node id (level offset + node): a representative leaf under it (its first) and its leaves.
    first = _node_offsets(hierarchy)
    rep = np.full(int(first[-1]), -1, dtype=np.int64)
    order = np.arange(hierarchy.n_leaves)[::-1]
    for level in range(hierarchy.height + 1):
        rep[first[level] + np.asarray(hierarchy.codes[level])[order]] = order
    leaves = np.concatenate([np.asarray(hierarchy.leaf_counts[lv], dtype=float) for lv in range(hierarchy.height + 1)])
    value_level = levels[counts.pair_value]
    value_node = nodes[counts.pair_value]
    node_id = first[value_level] + value_node
    leaf = rep[node_id]
    n_leaf = leaves[node_id]
    weight = counts.pair_count / n_leaf
    n_pairs = counts.pair_count.shape[0]
    per_class = np.diff(counts.class_start)
    reps = per_class[counts.pair_class]
    i = np.repeat(np.arange(n_pairs, dtype=np.int64), reps)
    offset = np.arange(i.shape[0], dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    j = counts.class_start[counts.pair_class[i]] + offset
    # j is an ancestor-or-self of i: j's level is not lower and j's node is above i's leaf.
    above = (value_level[j] >= value_level[i]) & (hierarchy.codes[value_level[j], leaf[i]] == value_node[j])
    f = np.bincount(i, weights=np.where(above, weight[j], 0.0), minlength=n_pairs)
    worst = np.zeros(n_pairs)
    # j lies at or below i exactly when i is an ancestor-or-self of j (swap the roles).
    below = (value_level[i] >= value_level[j]) & (hierarchy.codes[value_level[i], leaf[j]] == value_node[i])
    np.maximum.at(worst, i[below], f[j[below]])
    return worst


def leakage_per_record(
    classes: EquivalenceClasses, counts: SensitiveCounts, hierarchy: Hierarchy | None = None
) -> np.ndarray:
    """Pleak of each record: the share of its class that shares its sensitive value.

    With the sensitive attribute's ``hierarchy``, generalized sensitive values count
    1/Nleaf (DCorrelate); see :func:`_dcorrelate_sums`.

    Example:
        >>> from privacy_plugins.core.partition import EquivalenceClasses
        >>> h = Hierarchy.from_rows("d", [["flu", "resp", "*"], ["cold", "resp", "*"], ["hiv", "hiv", "*"]])
        >>> df = pd.DataFrame({"q": [1, 1, 1, 1], "d": ["flu", "resp", "hiv", "hiv"]})
        >>> c = EquivalenceClasses.from_frame(df, ["q"])
        >>> leakage_per_record(c, c.sensitive("d"), h).tolist()
        [0.375, 0.375, 0.5, 0.5]
    """
    if hierarchy is None:
        return counts.pair_count[counts.pair_of_row] / classes.row_size
    # The sums depend on the counts and the hierarchy only: kept on the counts (the object, not an id,
    # is compared, so another hierarchy never reads them).
    kept = counts.derived.get("dcorrelate")
    if kept is None or kept[0] is not hierarchy:
        kept = (hierarchy, _dcorrelate_sums(counts, hierarchy))
        counts.derived["dcorrelate"] = kept
    return np.asarray(kept[1][counts.pair_of_row] / classes.row_size)


def leakage_given_originals(
    classes: EquivalenceClasses, published: pd.Series, original: pd.Series, hierarchy: Hierarchy
) -> np.ndarray:
    """Song's Pleak of each record with its original sensitive value known (the anonymizer's view).

    :func:`leakage_per_record` sees only the published table and takes, for a generalized value,
    the leaf that leaks most (an upper bound). Whoever holds the originals can compute Pleak
    exactly: Σ over the class of 1 for a published value equal to the record's original, and
    1/Nleaf for one generalizing it. A record whose original value is itself generalized keeps
    the upper bound (its leaf is unknown to everyone).

    Example:
        >>> from privacy_plugins.core.partition import EquivalenceClasses
        >>> h = Hierarchy.from_rows("d", [["flu", "resp", "*"], ["cold", "resp", "*"], ["hiv", "hiv", "*"]])
        >>> df = pd.DataFrame({"q": [1, 1, 1, 1], "d": ["flu", "resp", "hiv", "hiv"]})
        >>> c = EquivalenceClasses.from_frame(df, ["q"])
        >>> leakage_given_originals(c, df["d"], pd.Series(["flu", "cold", "hiv", "hiv"]), h).tolist()
        [0.375, 0.125, 0.5, 0.5]
    """
    first = _node_offsets(hierarchy)
    codes, uniques = pd.factorize(pd.Series(published.to_numpy(dtype=object)), use_na_sentinel=False)
    levels, nodes = (a[codes] for a in hierarchy_nodes(hierarchy, pd.Index(uniques)))
    codes, uniques = pd.factorize(pd.Series(original.to_numpy(dtype=object)), use_na_sentinel=False)
    original_levels, original_nodes = (a[codes] for a in hierarchy_nodes(hierarchy, pd.Index(uniques)))
    exact = leakage_given_original_ids(
        classes, first[levels] + nodes, first[original_levels] + original_nodes, hierarchy
    )
    if (original_levels == 0).all():
        return exact
    worst = leakage_per_record(classes, classes.sensitive(published.name), hierarchy)
    return np.where(original_levels == 0, exact, worst)


def _node_offsets(hierarchy: Hierarchy) -> np.ndarray:
    """The first global node id of each level (a node's id: offset of its level + its node code), then the count."""
    return np.cumsum([0] + [len(labels) for labels in hierarchy.labels]).astype(np.int64)


#: A (class, node) count table up to this size (per row, plus a constant) is looked up densely.
_DENSE_PER_ROW = 8
_DENSE_EXTRA = 1 << 20


def leakage_given_original_ids(
    classes: EquivalenceClasses, published: np.ndarray, original: np.ndarray, hierarchy: Hierarchy
) -> np.ndarray:
    """:func:`leakage_given_originals` from global node ids (level offset + node; one per row of ``classes``).

    For a caller that holds the sensitive values as hierarchy nodes already (the personalized
    anonymizer), so no label is looked up again. Exact Pleak for a record whose original is a
    leaf; for one whose original is generalized the value is meaningless (the caller takes the
    published-table upper bound there, as :func:`leakage_given_originals` does).
    """
    first = _node_offsets(hierarchy)
    n_nodes = int(first[-1])
    rows = classes.class_of_row.shape[0]
    keys = classes.class_of_row * n_nodes + published
    dense = classes.n_classes * n_nodes <= _DENSE_PER_ROW * rows + _DENSE_EXTRA
    if dense:  # one count per (class, node): a lookup, no search
        table = np.bincount(keys, minlength=classes.n_classes * n_nodes)
    else:
        present, count = np.unique(keys, return_counts=True)
    original_levels = np.searchsorted(first, original, side="right") - 1
    leaf = np.where(original_levels == 0, original, 0)
    total = np.zeros(rows)
    for level in range(hierarchy.height + 1):
        above = hierarchy.codes[level][leaf]
        key = classes.class_of_row * n_nodes + first[level] + above
        if dense:
            found = table[key]
        else:
            at = np.minimum(np.searchsorted(present, key), present.shape[0] - 1)
            found = np.where(present[at] == key, count[at], 0)
        total += found * (1.0 if level == 0 else 1.0 / hierarchy.leaf_counts[level][above])
    return np.asarray(total / classes.row_size, dtype=float)


def leakage_violations(
    classes: EquivalenceClasses, counts: SensitiveCounts, bounds: np.ndarray, hierarchy: Hierarchy | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row masks: leakage above the bound, and bound below 1/|class| (Theorem 1)."""
    size = classes.row_size
    leak = leakage_per_record(classes, counts, hierarchy)
    violating = (leak - bounds) * size > TOLERANCE * size
    infeasible = bounds * size < 1.0 - TOLERANCE
    return violating, infeasible


def personalized_leakage(
    classes: EquivalenceClasses,
    counts: SensitiveCounts,
    bounds: np.ndarray,
    *,
    include_values: bool = False,
    hierarchy: Hierarchy | None = None,
) -> LeakageReport:
    """Compare each record's leakage with its bound (``bounds``: one float per row, in (0, 1]).

    ``hierarchy``: the sensitive attribute's, when its published values may be generalized.
    """
    leakage = leakage_per_record(classes, counts, hierarchy)
    violating, infeasible = leakage_violations(classes, counts, bounds, hierarchy)
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
