"""Personalized anonymization (Song et al. 2015): every record's leakage within its own bound.

Two steps, after the paper's section 6:

* **Anonymity_Generalization.** The rows are sorted on the quasi-identifiers, in the
  order given (the first QI most significant). *Order for mixed QIs:* a numeric QI
  without a hierarchy sorts by value; a QI with a hierarchy sorts by its leaf's
  position in the hierarchy's leaf order with siblings adjacent (so every node covers
  a contiguous run, exactly Mondrian's coding); ties keep the input order. A group
  starts with the next k tuples; tuple t then joins the current group G when
  ``ΣILeft(G ∪ t) − ΣILeft(G) ≥ ILeft(t in the group of the k tuples from t)``, else
  G is closed. *Ambiguity:* line 6 of the pseudo-code is garbled in the paper; this
  reading compares the information the table keeps when t joins (t's own ILeft in the
  wider group minus what G's members lose) with what t keeps if it starts the next group
  (ILeft_table over a fixed table is that sum / |T|, Def. 11). Only the QIs count here:
  the sensitive value is still ungeneralized, the same for both choices. When fewer than
  k tuples would remain, t always joins (the paper leaves the tail undefined).
  Each group's QIs are published as the lowest common ancestor's label (hierarchy) or
  as a range ``"[a-b]"`` (numeric without one). ILeft of a range counts the distinct
  values it covers as leaves.
* **SA_Generalization.** For each group and each record t whose Pleak exceeds its bound,
  the value with the largest information-left degree (fewest leaves) in t's leakage
  collection LC(t) goes one level up the sensitive attribute's hierarchy; values at the
  root leave LC(t); repeat until Pleak(t) ≤ bound or LC(t) is empty. *Choices:* Pleak is
  the core's DCorrelate measure (:func:`~privacy_plugins.core.metrics.leakage.leakage_per_record`),
  which for a record whose own value was generalized takes its worst leaf (the release
  does not hold the original), so LC(t) is taken at that leaf; among equally informative
  values, another record's is generalized before t's own (Theorem 2) and, among records
  sharing a value, the one with the laxest bound moves (its new, wider value is measured
  at its worst leaf). Every step moves one value one level up, so this ends after at most
  b·height steps.

**k** is the request's ``minimum_class_size``: the largest over the models (k of
``KAnonymity``; ⌈1/bound⌉ of a uniform leakage bound).

**Regrouping (Theorem 1 and the other models).** A group is bad when a record's bound is
below 1/|group| (Theorem 1), when SA_Generalization could not bring every record
within its bound, or when the published class fails any requested model (l-diversity,
or two groups publishing the same labels). Each round merges every bad group with the
neighbour (in sort order) that keeps more ILeft, then re-runs SA_Generalization on the
merged groups from the original values; the number of groups falls every round, so this
ends. Records whose bound is below 1/n (no group of the table can hold them) are counted
first and suppressed if the limit allows, else :class:`InfeasibleAnonymizationError` names
how many; a table that still fails as one group raises too. Nothing loops, nothing is
silent.

The request's :class:`~privacy_plugins.core.models.PersonalizedLeakage` model gives the
bounds (``bound``, ``bound_column``, or both: ``bound`` is then the default) and, via
``hierarchies[sensitive attribute]``, the sensitive hierarchy; without a hierarchy no
sensitive value can be generalized and only regrouping remains. Without a leakage model
every bound is 1 (plain adaptive k-anonymization under the other models).

References:
    Song J., Huang L., Wang G., Kang Y., Liu H. The K-Anonymization Method Satisfying
    Personalized Privacy Preservation. Chem. Eng. Trans. 46, 2015 (Def. 6–11, Theorem 1–2, section 6).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationDetails, AnonymizationRequest, AnonymizedTable
from privacy_plugins.core.anonymize.cluster_greedy import TABLE_LIMIT
from privacy_plugins.core.anonymize.mondrian import _dimension, _labels, distinct_as_keys, small_codes
from privacy_plugins.core.anonymize.partition_split import Dimension
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags
from privacy_plugins.core.frame import EncodedColumn
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility, ileft
from privacy_plugins.core.metrics.leakage import hierarchy_nodes, leakage_given_original_ids, leakage_per_record
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.partition import EquivalenceClasses, combine_codes
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

__all__ = ["PersonalizedAnonymizer", "PersonalizedDetails", "sort_order"]


@dataclass(frozen=True)
class PersonalizedDetails(AnonymizationDetails):
    """What the personalized anonymizer did.

    Attributes:
        k: the size every group starts with (the request's ``minimum_class_size``).
        sensitive_attribute: the attribute whose values may be generalized (``None``: no leakage model).
        groups: groups published (before equal labels merge into one class).
        merges: regroupings (bad group merged with a neighbour).
        merge_rounds: rounds of regrouping.
        theorem1_regrouped: records whose bound was below 1/|group| in their first group.
        unsatisfiable: records whose bound is below 1/n (Theorem 1 for the whole table).
        sensitive_generalized: published sensitive values that are not leaves.
        generalization_steps: one-level SA generalizations made (final groups).
        max_leakage: largest Pleak of a published record as the re-check measures it from the
            published table alone (for a generalized sensitive value, the worst leaf it may stand for).
        mean_leakage: mean of the records' actual Pleak (Song et al., with their original values,
            which the anonymizer knows); never above the mean of the re-checked upper bounds.
        leakage: Pleak of every published record (input order; not in ``to_dict``).
        bounds: the bound of every published record (not in ``to_dict``).
    """

    kind: ClassVar[str] = "personalized"

    k: int
    sensitive_attribute: Hashable | None
    groups: int
    merges: int
    merge_rounds: int
    theorem1_regrouped: int
    unsatisfiable: int
    sensitive_generalized: int
    generalization_steps: int
    max_leakage: float
    mean_leakage: float
    leakage: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.zeros(0))
    bounds: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.zeros(0))

    def headline(self) -> str:
        """Groups, generalized sensitive values and the leakage (re-checked maximum, actual mean)."""
        return (
            f"{self.groups:,} groups ({self.merges:,} merges), {self.sensitive_generalized:,} sensitive values "
            f"generalized; max leakage {self.max_leakage:.4g} (worst case, as re-checked), "
            f"mean {self.mean_leakage:.4g} (actual)"
        )

    def summary_rows(self, seconds: float) -> list[tuple[str, str]]:
        """Groups, Theorem 1's regrouped and unsatisfiable records, generalized values and the leakage."""
        return [
            ("groups / merges", f"{self.groups:,} / {self.merges:,}"),
            ("Theorem 1: regrouped / unsatisfiable",
             f"{self.theorem1_regrouped:,} / {self.unsatisfiable:,} records "
             "(bound below 1/|group| / below 1/n: suppressed within the limit)"),
            ("sensitive values generalized", f"{self.sensitive_generalized:,} ({self.generalization_steps:,} steps)"),
            ("max leakage (worst case, re-checked) / mean (actual)",
             f"{self.max_leakage:.4g} / {self.mean_leakage:.4g}"),
        ]  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON without the per-record arrays."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name not in ("leakage", "bounds")}
        return to_jsonable({"kind": self.kind, **data})


def sort_order(dimensions: Sequence[Dimension]) -> np.ndarray:
    """Rows sorted on the QIs' codes, first QI most significant, ties in input order."""
    n = dimensions[0].codes.shape[0]
    return np.lexsort((np.arange(n), *[d.codes for d in reversed(dimensions)]))


class _Quality:
    """ILeft of a group's generalized QIs from its code span (Def. 9–10, QIs only)."""

    def __init__(self, dimensions: Sequence[Dimension]) -> None:
        self.dimensions = dimensions
        # Per hierarchical QI: leaves under the node above each leaf code, per level (one gather later).
        self.leaves_above: list[np.ndarray | None] = []
        for d in dimensions:
            if d.hierarchy is None or d.nodes is None:
                self.leaves_above.append(None)
                continue
            counts = d.hierarchy.leaf_counts
            self.leaves_above.append(
                np.stack([np.asarray(counts[lv], dtype=float)[d.nodes[lv]] for lv in range(d.nodes.shape[0])])
            )

    def covered(self, d: Dimension, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Leaves under each span's published value (distinct values for a range)."""
        if d.hierarchy is None:
            return np.asarray(high - low + 1, dtype=float)
        table = self.leaves_above[self.dimensions.index(d)]
        assert table is not None
        return np.asarray(table[d.lowest_common_level(low, high), low], dtype=float)

    def span_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Every span's ILeft term ``1 − (leaves − 1)/|D|`` per QI in one flat table, with offsets and strides.

        ``None`` when a domain has more than ``TABLE_LIMIT`` codes (the compiled grouping reads it).
        """
        if any(d.size > TABLE_LIMIT for d in self.dimensions):
            return None
        parts = []
        for d in self.dimensions:
            low, high = np.triu_indices(d.size)
            table = np.zeros((d.size, d.size))
            table[low, high] = 1.0 - (self.covered(d, low.astype(np.int64), high.astype(np.int64)) - 1.0) / d.size
            parts.append(table.ravel())
        sizes = np.array([d.size for d in self.dimensions], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes * sizes)[:-1])).astype(np.int64)
        return np.concatenate(parts), offsets, sizes

    def window_ileft(self, sorted_codes: Sequence[np.ndarray] | np.ndarray, k: int) -> np.ndarray:
        """:meth:`ileft` of the window of ``k`` tuples starting at every position, one QI's spans at a time."""
        total = np.zeros(0)
        for i, (d, codes) in enumerate(zip(self.dimensions, sorted_codes, strict=True)):
            low, high = _window_span(codes, k)
            term = 1.0 - (self.covered(d, low, high) - 1.0) / d.size
            total = term if i == 0 else total + term  # as ``ileft`` adds them: the same floats
        return total / len(self.dimensions)

    def ileft(self, lows: Sequence[np.ndarray], highs: Sequence[np.ndarray]) -> np.ndarray:
        """Mean over QIs of 1 − (leaves − 1)/|D| for each span."""
        total = np.zeros(lows[0].shape[0])
        for d, low, high in zip(self.dimensions, lows, highs, strict=True):
            total += 1.0 - (self.covered(d, low, high) - 1.0) / d.size
        return total / len(self.dimensions)


def _window_span(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Minimum and maximum of every window of ``k`` consecutive codes, in O(n log k).

    Doubling: after each step ``low[i]`` is the minimum of ``codes[i : i + width]``; two
    overlapping windows of the largest width ≤ k then cover each window of k. (A reduction
    over a sliding-window view walks the array with a stride per element and is several
    times slower.)
    """
    low, high, width = codes, codes, 1
    while 2 * width <= k:
        low = np.minimum(low[:-width], low[width:])
        high = np.maximum(high[:-width], high[width:])
        width *= 2
    n_windows = codes.shape[0] - k + 1
    shift = k - width
    return (
        np.minimum(low[:n_windows], low[shift : shift + n_windows]),
        np.maximum(high[:n_windows], high[shift : shift + n_windows]),
    )


def _adaptive_groups(sorted_codes: Sequence[np.ndarray] | np.ndarray, k: int, quality: _Quality) -> list[int]:
    """Group boundaries (start positions) in sort order by the ILeft rule; see the module docstring.

    A group grows one tuple at a time while that loses no more ILeft than starting the next
    group there would keep; the decisions for a run of candidate tuples are made at once
    (running minima / maxima of the codes, their ILeft, the rule on every position), so the
    Python loop turns once per group, not per record.
    """
    n = sorted_codes[0].shape[0]
    if n < 2 * k:
        return [0]
    # ILeft of the window of k tuples starting at every position (where t would start the next group).
    window_il = quality.window_ileft(sorted_codes, k)
    # One row of codes per QI (a 2-D array given is used as it is: no second copy of the codes).
    codes = sorted_codes if isinstance(sorted_codes, np.ndarray) else np.stack(sorted_codes)
    tables = quality.span_tables()
    if tables is not None and _numba():
        from privacy_plugins.core.anonymize import personalized_kernel  # imports numba: only when it runs

        return personalized_kernel.adaptive_starts(codes, window_il, k, tables, TOLERANCE)
    starts = [0]
    low, high = codes[:, :k].min(axis=1), codes[:, :k].max(axis=1)
    size, current, pos = k, float(window_il[0]), k
    chunk = 4 * k
    last = n - k  # the last position that may start a group (the tail joins the last group)
    while pos <= last:
        end = min(last + 1, pos + chunk)
        run_low = np.minimum(np.minimum.accumulate(codes[:, pos:end], axis=1), low[:, None])
        run_high = np.maximum(np.maximum.accumulate(codes[:, pos:end], axis=1), high[:, None])
        joined = quality.ileft(list(run_low), list(run_high))  # ILeft after taking pos … pos + j
        sizes = size + np.arange(end - pos)
        before = np.concatenate(([current], joined[:-1]))
        grows = (sizes + 1) * joined - sizes * before >= window_il[pos:end] - TOLERANCE
        stop = np.flatnonzero(~grows)
        if stop.shape[0] == 0:
            low, high, size, current, pos = run_low[:, -1], run_high[:, -1], size + end - pos, float(joined[-1]), end
            chunk *= 2
            continue
        pos += int(stop[0])
        starts.append(pos)
        low, high = codes[:, pos : pos + k].min(axis=1), codes[:, pos : pos + k].max(axis=1)
        size, current, pos, chunk = k, float(window_il[pos]), pos + k, 4 * k
    return starts


@dataclass
class _Sensitive:
    """The sensitive hierarchy as per-label facts (level, node, leaves, representative leaf, parent)."""

    hierarchy: Hierarchy

    def __post_init__(self) -> None:
        h = self.hierarchy
        self.rep = []
        for level in range(h.height + 1):
            rep = np.full(len(h.labels[level]), -1, dtype=np.int64)
            order = np.arange(h.n_leaves)[::-1]
            rep[h.codes[level][order]] = order
            self.rep.append(rep)

    def ids(self, labels: list[tuple[int, int]]) -> np.ndarray:
        """Global node ids (``offset[level] + node``) of ``(level, node)`` labels."""
        if not labels:
            return np.zeros(0, dtype=np.int64)
        pairs = np.asarray(labels, dtype=np.int64)
        return np.asarray(self.tables[5][pairs[:, 0]] + pairs[:, 1], dtype=np.int64)

    @cached_property
    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
        """The hierarchy per global node id: what the compiled kernel and the publisher read.

        Level, leaves, parent id, the rep leaf (a leaf under each node), the root level, then
        the first id of each level and each id's label.
        """
        h = self.hierarchy
        sizes = np.array([len(h.labels[lv]) for lv in range(h.height + 1)], dtype=np.int64)
        offset = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        n_nodes = int(sizes.sum())
        level = np.repeat(np.arange(h.height + 1, dtype=np.int64), sizes)
        leaves = np.concatenate([np.asarray(h.leaf_counts[lv], dtype=np.float64) for lv in range(h.height + 1)])
        rep = np.concatenate(self.rep).astype(np.int64)  # a leaf under each node
        parent = np.arange(n_nodes, dtype=np.int64)
        below_root = level < h.height
        parent[below_root] = (
            offset[level[below_root] + 1] + np.asarray(h.codes, dtype=np.int64)[level[below_root] + 1, rep[below_root]]
        )
        text = np.empty(n_nodes, dtype=object)
        for lv in range(h.height + 1):
            text[offset[lv] : offset[lv] + sizes[lv]] = list(h.labels[lv])
        return level, leaves, parent, rep, h.height, offset, text

    @cached_property
    def ancestors(self) -> np.ndarray:
        """``anc[upper, lower]``: node ``upper`` is an ancestor-or-self of ``lower`` (global ids; nodes² booleans)."""
        h = self.hierarchy
        level, rep, offset = self.tables[0], self.tables[3], self.tables[5]
        anc = np.zeros((level.shape[0], level.shape[0]), dtype=np.bool_)
        for lv in range(h.height + 1):
            lower = np.flatnonzero(level <= lv)
            anc[offset[lv] + np.asarray(h.codes[lv], dtype=np.int64)[rep[lower]], lower] = True
        return anc

    def leaves(self, node: tuple[int, int]) -> int:
        return int(self.hierarchy.leaf_counts[node[0]][node[1]])

    def above(self, upper: tuple[int, int], lower: tuple[int, int]) -> bool:
        """``upper`` is an ancestor-or-self of ``lower``."""
        return upper[0] >= lower[0] and int(self.hierarchy.codes[upper[0], self.rep[lower[0]][lower[1]]]) == upper[1]

    def parent(self, node: tuple[int, int]) -> tuple[int, int]:
        level = node[0] + 1
        return level, int(self.hierarchy.codes[level, self.rep[node[0]][node[1]]])

    def worst(self, labels: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, tuple[int, int]]]:
        """For each present label: the worst Σ DCorrelate over its leaves and the label deciding it."""
        counts: dict[tuple[int, int], int] = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        present = sorted(counts, key=lambda x: x[0])  # lowest level first: ties go to the deepest
        f = {a: sum(counts[b] / self.leaves(b) for b in present if self.above(b, a)) for a in present}
        out = {}
        for a in present:
            best = max((x for x in present if self.above(a, x)), key=lambda x: f[x])
            out[a] = (f[best], best)
        return out


def _sa_generalize(
    labels: list[tuple[int, int]], bounds: np.ndarray, sa: _Sensitive
) -> tuple[list[tuple[int, int]], int, bool]:
    """SA_Generalization on one group: new labels, steps made, whether every bound holds."""
    labels = list(labels)
    b = len(labels)
    root = sa.hierarchy.height
    steps = 0
    while True:
        worst = sa.worst(labels)
        violating = [i for i, lab in enumerate(labels) if worst[lab][0] / b - bounds[i] > TOLERANCE]
        if not violating:
            return labels, steps, True
        t = violating[0]
        leaf_label = worst[labels[t]][1]
        collection = [i for i, lab in enumerate(labels) if lab[0] < root and sa.above(lab, leaf_label)]
        if not collection:
            return labels, steps, False
        # Largest information left = fewest leaves; others before t itself; then the laxest bound.
        r = min(collection, key=lambda i: (sa.leaves(labels[i]), i == t or labels[i] == labels[t], -bounds[i], i))
        labels[r] = sa.parent(labels[r])
        steps += 1


#: Largest sensitive hierarchy (nodes) the compiled SA_Generalization takes (its ancestor matrix is nodes²).
_KERNEL_NODES = 4096


def _numba() -> bool:
    """Whether numba is installed (the kernels' module imports it, ~0.5 s: loaded only when they run)."""
    return importlib.util.find_spec("numba") is not None


def _compiled(sa: _Sensitive) -> bool:
    """Whether the compiled SA_Generalization can run (numba installed, a hierarchy of at most _KERNEL_NODES nodes)."""
    return _numba() and sa.tables[0].shape[0] <= _KERNEL_NODES


def _generalize_new(
    sa: _Sensitive,
    original: np.ndarray,
    bounds: np.ndarray,
    starts: list[int],
    ends: list[int],
    cache: dict[tuple[int, int], tuple[np.ndarray, int, bool]],
    *,
    compiled: bool,
) -> None:
    """SA_Generalization of every group ``[a, b)`` not yet in ``cache`` (labels as global node ids, sort order)."""
    todo = [(a, b) for a, b in zip(starts, ends, strict=True) if (a, b) not in cache]
    if not todo:
        return
    if compiled:
        from privacy_plugins.core.anonymize import personalized_kernel  # imports numba: only when it runs

        first = np.array([a for a, _ in todo], dtype=np.int64)
        last = np.array([b for _, b in todo], dtype=np.int64)
        lengths = last - first
        at = np.concatenate(([0], np.cumsum(lengths)))
        take = np.repeat(first - at[:-1], lengths) + np.arange(int(at[-1]))
        labels, steps, good = personalized_kernel.generalize_groups(
            original[take],
            bounds[take],
            at[:-1],
            at[1:],
            (sa.tables[0], sa.tables[1], sa.tables[2], sa.ancestors, sa.tables[4]),
            TOLERANCE,
        )
        for i, key in enumerate(todo):
            cache[key] = (labels[at[i] : at[i + 1]], int(steps[i]), bool(good[i]))
        return
    level, offset = sa.tables[0], sa.tables[5]
    for a, b in todo:
        ids = original[a:b]
        pairs, made, good_one = _sa_generalize(
            list(zip(level[ids].tolist(), (ids - offset[level[ids]]).tolist(), strict=True)), bounds[a:b], sa
        )
        cache[(a, b)] = (sa.ids(pairs), made, good_one)


def _merge_bad_groups(
    starts: list[int],
    m: int,
    bad: np.ndarray,
    lows: list[np.ndarray],
    highs: list[np.ndarray],
    quality: _Quality,
) -> tuple[list[int], int]:
    """One regrouping round: every bad group merges with the neighbour that keeps more ILeft (once per round)."""
    ends = [*starts[1:], m]
    il = quality.ileft(lows, highs) * np.diff([*starts, m])
    drop = np.zeros(len(starts), dtype=bool)  # group g is merged into g - 1
    used = np.zeros(len(starts), dtype=bool)
    merges = 0

    def kept_ileft(pair: tuple[int, int]) -> float:
        a, b = min(pair), max(pair)
        lo = [np.array([min(low[a], low[b])]) for low in lows]
        hi = [np.array([max(high[a], high[b])]) for high in highs]
        return float(quality.ileft(lo, hi)[0]) * (ends[b] - starts[a]) - il[a] - il[b]

    for g in np.flatnonzero(bad).tolist():
        if used[g]:
            continue
        options = [(g, x) for x in (g - 1, g + 1) if 0 <= x < len(starts) and not used[x]]
        if not options:
            continue
        _, partner = max(options, key=kept_ileft)
        used[g] = used[partner] = True
        drop[max(g, partner)] = True
        merges += 1
    return [s for s, gone in zip(starts, drop, strict=True) if not gone], merges


def _label_codes(sa: _Sensitive, ids: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Codes of the published sensitive labels of node ``ids``, and the distinct labels they index.

    Two nodes may carry the same label (a parent labelled like its leaf): they share a code,
    as they would if the published column were factorized again.
    """
    present = np.bincount(ids, minlength=sa.tables[6].shape[0]) > 0  # ids are a few hundred node ids
    used = np.flatnonzero(present)
    codes, labels = pd.factorize(pd.Index(sa.tables[6][used], dtype=object), use_na_sentinel=False)
    of_id = np.zeros(present.shape[0], dtype=np.int64)
    of_id[used] = codes
    return of_id[ids], pd.Index(np.asarray(labels, dtype=object), dtype=object)


@dataclass(frozen=True)
class PersonalizedAnonymizer:
    """Personalized k-anonymization (Song et al.), registered as ``"personalized"``; see the module docstring."""

    #: Checks every model on each candidate, so it can promise any of them (the release spec reads this).
    tags: ClassVar[AnonymizerTags] = AnonymizerTags()
    name: str = "personalized"
    options: tuple[AnonymizerOption, ...] = ()

    def run(self, request: AnonymizationRequest) -> AnonymizedTable:
        """Sort, group adaptively by ILeft, generalize the sensitive values, regroup bad groups."""
        frame = request.table.reset_index(drop=True)
        qis = request.quasi_identifiers
        leakage_models = [m for m in request.models if m.leakage_bounds(frame) is not None]
        if len({m.sensitive_attribute for m in leakage_models}) > 1:
            raise ConfigurationError(
                "the personalized anonymizer generalizes one sensitive attribute; got leakage bounds for "
                f"{sorted(str(m.sensitive_attribute) for m in leakage_models)}"
            )
        n = len(frame)
        bounds = np.ones(n)
        sensitive: Hashable | None = None
        sa: _Sensitive | None = None
        original = np.zeros(n, dtype=np.int64)  # global ids of the sensitive hierarchy's nodes
        for model in leakage_models:
            resolved = model.leakage_bounds(frame)
            bounds = np.minimum(bounds, np.ones(n) if resolved is None else resolved)
            del resolved
            sensitive = model.sensitive_attribute
            hierarchy = model.measuring_hierarchy()
            if hierarchy is not None:
                sa = _Sensitive(hierarchy)
        if sa is not None:
            levels, nodes = hierarchy_nodes(sa.hierarchy, frame[sensitive])
            original = sa.tables[5][np.asarray(levels, dtype=np.int64)] + np.asarray(nodes, dtype=np.int64)
            del levels, nodes

        # Theorem 1 for the whole table: bound < 1/n can be met in no group.
        unsatisfiable = bounds * n < 1.0 - TOLERANCE
        n_unsat = int(unsatisfiable.sum())
        if n_unsat > request.max_suppressed:
            raise InfeasibleAnonymizationError(
                f"{n_unsat} records have a leakage bound below 1/{n} (the smallest leakage any group of this "
                f"table allows, Theorem 1); suppressing them needs a suppression limit of at least {n_unsat / n:.4g}, "
                f"the limit allows {request.max_suppressed}"
            )
        kept = np.flatnonzero(~unsatisfiable)
        k = request.minimum_class_size
        if kept.shape[0] < k:
            raise InfeasibleAnonymizationError(f"{kept.shape[0]} records remain, fewer than k = {k}")

        # (Every record kept: the columns as they are, no gathered copy of their values.)
        whole = kept.shape[0] == n
        coded = [_dimension(frame[q] if whole else frame[q].iloc[kept].reset_index(drop=True),
                            request.hierarchies.get(q)) for q in qis]  # fmt: skip
        order = sort_order([d for d, _ in coded])
        rows = kept[order]  # frame rows in sort order
        # One copy of the QIs' codes, in sort order, one row per QI (the grouping kernel reads the 2-D array;
        # each dimension holds its row): the unsorted codes are not read again.
        sorted_codes = np.empty((len(coded), rows.shape[0]), dtype=np.int64)
        for i, (d, labels) in enumerate(coded):  # each QI's unsorted codes freed as soon as they are sorted
            np.take(d.codes, order, out=sorted_codes[i])
            coded[i] = (replace(d, codes=sorted_codes[i]), labels)
        del kept, order, d
        dimensions = [d for d, _ in coded]
        quality = _Quality(dimensions)
        starts = _adaptive_groups(sorted_codes, k, quality)
        # The columns the models read, in sort order; a generalized sensitive column is set each round from its
        # codes (the raw one is never read there, so it is not gathered).
        replaced = {sensitive} if sa is not None else set()
        model_frame = frame.loc[rows, [c for c in request.model_columns if c not in replaced]].reset_index(drop=True)
        m = rows.shape[0]
        theorem1 = 0
        merges = rounds = 0
        cache: dict[tuple[int, int], tuple[np.ndarray, int, bool]] = {}
        sorted_bounds = bounds[rows]
        published_sa = np.zeros(0, dtype=np.int64)
        compiled = sa is not None and _compiled(sa)

        while True:
            ends = [*starts[1:], m]
            sizes = np.diff([*starts, m])
            group_of = np.repeat(np.arange(len(starts)), sizes)
            # Theorem 1 within each group: its strictest bound times its size reaches 1.
            strictest = np.minimum.reduceat(sorted_bounds, np.asarray(starts)) if m else np.zeros(0)
            ok = strictest * sizes >= 1.0 - TOLERANCE
            if rounds == 0:
                theorem1 = int((~ok[group_of] & (sorted_bounds * sizes[group_of] < 1.0 - TOLERANCE)).sum())
            steps = 0
            if sa is not None:
                _generalize_new(sa, original[rows], sorted_bounds, starts, ends, cache, compiled=compiled)
                results = [cache[(a, b)] for a, b in zip(starts, ends, strict=True)]
                published_sa = np.concatenate([labels for labels, _, _ in results])
                steps = sum(made for _, made, _ in results)
                ok &= np.array([good for _, _, good in results], dtype=bool)
            lows = [np.minimum.reduceat(c, np.asarray(starts)) for c in sorted_codes]
            highs = [np.maximum.reduceat(c, np.asarray(starts)) for c in sorted_codes]
            check = model_frame.copy()
            encodings: dict[tuple[Hashable, bool], EncodedColumn] = {}
            if sa is not None and sensitive is not None:
                sa_codes, sa_labels = _label_codes(sa, published_sa)
                check[sensitive] = pd.Categorical.from_codes(sa_codes, categories=sa_labels)
                encodings[(sensitive, False)] = EncodedColumn(name=sensitive, codes=sa_codes, values=sa_labels)
            # Each QI's labels are factorized per group, not per row: the codes serve this check and the
            # final classes, and the QIs are Categoricals over them (no string is made per row).
            qi_labels: dict[Hashable, pd.Index] = {}
            qi_codes: list[tuple[np.ndarray, int]] = []
            folding: dict[Hashable, np.ndarray] = {}  # labels that fold into one category: each group's own
            for i, (q, (d, lab)) in enumerate(zip(qis, coded, strict=True)):
                per_group = _labels(d, lab, lows[i], highs[i])
                codes, uniques = pd.factorize(per_group, use_na_sentinel=False)
                if not distinct_as_keys(per_group, len(uniques)):
                    folding[q] = per_group
                qi_labels[q] = pd.Index(np.asarray(uniques, dtype=object), dtype=object)
                qi_codes.append((np.asarray(codes, dtype=np.int64), len(uniques)))  # per group: small
                check[q] = pd.Categorical.from_codes(
                    small_codes(codes, len(uniques))[group_of], categories=qi_labels[q], validate=False
                )
            # A row's class is its group's: the groups' label codes are combined (no per-row key is hashed).
            class_of_group, n_classes = combine_codes(qi_codes, len(starts))
            classes = EquivalenceClasses.from_class_ids(
                check, tuple(qis), class_of_group[group_of], n_classes, encodings=encodings
            )
            bad_class = np.zeros(classes.n_classes, dtype=bool)
            for requested in request.models:
                bad_class |= requested.violating_classes(classes)
            bad_group = ~ok
            np.logical_or.at(bad_group, group_of, bad_class[classes.class_of_row])
            if not bad_group.any():
                break
            if len(starts) == 1:
                failed = [str(x) for x in request.models if x.violating_classes(classes).any()]
                raise InfeasibleAnonymizationError(
                    f"even one group of all {m} records fails {failed or ['the leakage bounds (Theorem 1)']}; "
                    "relax the bounds or give the sensitive attribute a hierarchy"
                )
            rounds += 1
            starts, merged = _merge_bad_groups(starts, m, bad_group, lows, highs, quality)
            merges += merged

        # What only the loop read (the last round's check frame and classes, the generalized SA per group, the
        # sorted codes, which the dimensions hold: only their hierarchies and spans are read from here on).
        del sorted_codes, sorted_bounds, check, classes, encodings, model_frame, cache, bad_class, bad_group
        if sa is not None:
            del results
        del coded, d  # (the loops' last dimension holds the sorted codes too)
        dimensions = [replace(d, codes=np.zeros(0, dtype=np.int64)) for d in dimensions]
        quality = _Quality(dimensions)
        # Publish in input order.
        released_rows = np.sort(rows)
        position = np.empty(n, dtype=np.int64)
        position[rows] = np.arange(m)
        in_sort = position[released_rows]
        del position, rows
        group_in_order = group_of[in_sort]
        if sa is not None:
            published_sa = published_sa[in_sort]  # the generalized SA ids in publish order (one copy)
        del group_of
        everything = m == n  # no record suppressed: the released rows are the table's, in order
        published_codes: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}
        for q, (group_codes, size) in zip(qis, qi_codes, strict=True):
            published_codes[q] = (small_codes(group_codes, size)[group_in_order], qi_labels[q].to_numpy(dtype=object))
        final_encodings: dict[tuple[Hashable, bool], EncodedColumn] = {}
        columns: dict[Hashable, pd.Series | pd.Categorical] = {}
        if sa is not None and sensitive is not None:
            sa_codes, sa_labels = _label_codes(sa, published_sa)
            # Object labels: the sensitive column is not a QI, so it is published as the values themselves.
            columns[sensitive] = pd.Series(sa_labels.to_numpy(dtype=object)[sa_codes], dtype=object, copy=False)
            final_encodings[(sensitive, False)] = EncodedColumn(name=sensitive, codes=sa_codes, values=sa_labels)
        for q, (row_codes, _) in published_codes.items():
            if q in folding:
                columns[q] = pd.Series(folding[q][group_in_order], dtype=object, copy=False)
            else:
                columns[q] = pd.Categorical.from_codes(row_codes, categories=qi_labels[q], validate=False)
        # Only the columns published as they are are gathered (the QIs and a generalized SA are built above).
        identifiers = set(request.roles.identifiers)
        names = [c for c in frame.columns if c not in identifiers]
        for c in names:
            if c not in columns:
                columns[c] = frame[c] if everything else frame[c].take(released_rows).reset_index(drop=True)
        published = pd.DataFrame({c: columns[c] for c in names}, index=pd.RangeIndex(m), copy=False)
        published.columns = frame.columns.drop(list(identifiers)) if identifiers else frame.columns
        del columns
        final = EquivalenceClasses.from_class_ids(
            published, tuple(qis), class_of_group[group_in_order], n_classes, encodings=final_encodings
        )
        leak = np.ones(m)
        if sensitive is not None:
            leak = leakage_per_record(final, final.sensitive(sensitive), None if sa is None else sa.hierarchy)
        mean_leakage = float(leak.mean())  # without SA generalization the published table shows every Pleak exactly
        if sa is not None and sensitive is not None:
            # The nodes are known here (no label looked up again); a generalized original keeps the upper bound.
            # A published node counts as the release's label reads back (a label at several levels: its lowest).
            # Only the labels published are looked up, as the label path did.
            published_ids = published_sa
            read_back = np.arange(sa.tables[0].shape[0], dtype=np.int64)
            used = np.flatnonzero(np.bincount(published_ids, minlength=read_back.shape[0]))
            read_level, read_node = hierarchy_nodes(sa.hierarchy, pd.Index(sa.tables[6][used]))
            read_back[used] = sa.tables[5][read_level] + read_node
            original_ids = original[released_rows]
            del original
            exact = leakage_given_original_ids(final, read_back[published_ids], original_ids, sa.hierarchy)
            mean_leakage = float(np.where(sa.tables[0][original_ids] == 0, exact, leak).mean())
            del published_ids, original_ids, exact

        # Each QI's per-record costs and leaf counts are made and summed one QI at a time (as before, in
        # publish order: the same floats), so at most one of them is alive.
        domains = [d.size for d in dimensions]
        n_plain = 0
        generalized = 0
        sa_ids = np.zeros(0, dtype=np.int64)
        if sa is not None:
            sa_ids = published_sa
            domains.append(sa.hierarchy.n_leaves)
            generalized = int((sa.tables[0][sa_ids] > 0).sum())
        elif sensitive is not None:
            n_plain = 1

        def leaf_counts() -> Iterator[np.ndarray]:
            for d, low, high in zip(dimensions, lows, highs, strict=True):
                yield quality.covered(d, low, high)[group_in_order]
            if sa is not None:
                yield np.asarray(sa.tables[1][sa_ids], dtype=float)

        spans = zip(dimensions, lows, highs, strict=True)
        table_ncp = float(np.mean([d.widths(low, high)[group_in_order].mean() for d, low, high in spans]))
        return AnonymizedTable(
            table=published,
            released=np.ones(m, dtype=bool),
            suppressed=n_unsat,
            qi_codes=None if folding else published_codes,  # folding labels: spelt out, no codes
            utility=UtilityMetrics(
                ncp=table_ncp,
                lm=table_ncp * len(qis),
                discernibility=discernibility(final.sizes, n_unsat, n),
                c_avg=average_class_size(final.sizes, k),
                ileft=ileft(leaf_counts(), domains, np.zeros(m, dtype=bool), n_ungeneralized=n_plain),
            ),
            details=PersonalizedDetails(
                k=k,
                sensitive_attribute=sensitive,
                groups=len(starts),
                merges=merges,
                merge_rounds=rounds,
                theorem1_regrouped=theorem1,
                unsatisfiable=n_unsat,
                sensitive_generalized=generalized,
                generalization_steps=steps,
                max_leakage=float(leak.max()),
                mean_leakage=mean_leakage,
                leakage=leak,
                bounds=bounds[released_rows],
            ),
        )
