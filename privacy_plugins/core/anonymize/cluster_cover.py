"""Judge every record a published class *covers*, not only its members (issue 26: a share bound over the history).

The gate's composition check (:func:`~privacy_plugins.core.history_check.composition_check`)
judges a target t on N(t): per value of what the history leaves her, H(t), the rows of *every*
candidate class whose labels cover her raw quasi-identifiers, summed — her own class and the
neighbours whose boxes overlap hers alike, and records the clustering left out too. A class
that passes on its members can still tip a covered neighbour's N(t) over a share bound (one
flu of a neighbouring class over her own class's one flu and one hiv). :class:`CoverJudge`
is a :data:`~privacy_plugins.core.anonymize.cluster_greedy.Failing` computing the gate's
verdict in code space, for every record of the table, from the clusters the caller publishes:

* a class covers a record when, on every QI, her code lies in the class's *label extent*: the
  codes between its lowest and highest (a numeric range), or every leaf of the hierarchy node
  its span generalizes to (the label's leaves are contiguous codes);
* per target, N(t) sums the covering classes' value counts within H(t); each model with a
  sensitive attribute judges it with its own
  :meth:`~privacy_plugins.core.models.base.PrivacyModel.intersection_at_risk` (the gate's rule,
  with the gate's allowance for a target the history alone already leaves short: then she is
  at risk only when the covering classes miss a value of H(t));
* a target at risk blames the covering classes that are at risk on her alone (a class whose
  counts within H(t) already break the rule: the sum of shares within a bound is within it),
  else every class covering her.

The work is per distinct QI point (every record of a point has the same coverage and H(t)),
as one vectorized box join per call: classes are matched to points along the QI whose code
ranges hold the fewest candidate pairs, then filtered on the others.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.cluster_greedy import Failing, boxes
from privacy_plugins.core.anonymize.partition_split import Dimension
from privacy_plugins.core.hierarchies import as_labels
from privacy_plugins.core.models import PrivacyModel

__all__ = ["CoverJudge"]

#: Candidate (point, class) pairs per chunk of the box join (bounds its memory).
CHUNK = 4_000_000
#: Covered points remembered over all class extents (all forgotten beyond: bounds the memo's memory).
MEMO = 20_000_000


class _Attribute:
    """One sensitive attribute: each row's value code, and each point's H(t) over the values."""

    def __init__(self, frame: pd.DataFrame, attribute: Hashable, models: Sequence[PrivacyModel], first: np.ndarray):
        labels = as_labels(frame[attribute]).to_numpy(dtype=object)
        ours = [m for m in models if m.sensitive_attribute == attribute]
        history = next((found for m in ours if (found := m.intersection_history(frame)) is not None), None)
        known = pd.Index([], dtype=object) if history is None else history[0]
        extra = pd.Index(pd.unique(labels[known.get_indexer(labels) < 0]))
        self.values = known.append(extra)
        self.code = np.asarray(self.values.get_indexer(labels), dtype=np.int64)
        n_points, width = first.shape[0], len(self.values)
        self.sets = np.ones((n_points, width), dtype=bool)
        self.before = np.full(n_points, np.iinfo(np.int64).max, dtype=np.int64)  # |H(t)|; int max: no release covers
        if history is not None:
            sets, universal = history[1][first], history[2][first]
            self.sets[:, : len(known)] = sets | universal[:, None]
            self.sets[:, len(known) :] = universal[:, None]
            self.before = np.where(universal, self.before, sets.sum(axis=1))


class CoverJudge:
    """A :data:`Failing` over the published classes: a class fails when a record it covers is at risk (module doc).

    ``strict`` judges the members as before; its verdict is OR-ed in.
    """

    def __init__(
        self,
        strict: Failing,
        dimensions: Sequence[Dimension],
        frame: pd.DataFrame,
        models: Sequence[PrivacyModel],
    ) -> None:
        self.strict = strict
        self.dimensions = tuple(dimensions)
        codes = np.stack([d.codes for d in dimensions]) if dimensions else np.zeros((0, len(frame)), dtype=np.int64)
        points, first, self.point_of_row = np.unique(codes.T, axis=0, return_index=True, return_inverse=True)
        self.point_of_row = self.point_of_row.reshape(-1)
        self.points = np.ascontiguousarray(points.T)  # QI × point
        self.codes = codes
        self.order = [np.argsort(self.points[q], kind="stable") for q in range(self.points.shape[0])]
        self.sorted = [self.points[q][self.order[q]] for q in range(self.points.shape[0])]
        self.extent = [_node_extents(d) for d in dimensions]
        self.models = [m for m in models if m.sensitive_attribute is not None]
        self.attributes = {
            attribute: _Attribute(frame, attribute, models, first)
            for attribute in dict.fromkeys(m.sensitive_attribute for m in self.models)
        }
        self._memo: dict[bytes, np.ndarray] = {}
        self._stored = 0
        self.bounds: list[np.ndarray | None] = []
        for m in self.models:
            per_row = m.leakage_bounds(frame)
            if per_row is None:
                self.bounds.append(None)
                continue
            lowest = np.full(first.shape[0], np.inf)
            np.minimum.at(lowest, self.point_of_row, np.asarray(per_row, dtype=float))
            self.bounds.append(lowest)

    def __call__(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        """Classes (of ``rows``, by ``group_of_row``) failing ``strict`` or blamed for a covered record at risk."""
        bad = np.asarray(self.strict(rows, group_of_row, n_groups), dtype=bool).copy()
        if not self.models or not rows.shape[0]:
            return bad
        bad |= self.covering_blame(rows, group_of_row, n_groups)
        return bad

    def extents(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
        """Per QI and class, the lowest and highest code its label covers (empty classes: low > high)."""
        low, high = boxes(self.codes[:, rows], group_of_row, n_groups)
        live = high[0] >= 0 if low.shape[0] else np.zeros(n_groups, dtype=bool)
        for q, (dimension, extent) in enumerate(zip(self.dimensions, self.extent, strict=True)):
            if extent is None:
                continue
            start, end = extent
            lo, hi = np.where(live, low[q], 0), np.where(live, high[q], 0)
            level = dimension.lowest_common_level(lo, hi)
            low[q] = np.where(live, start[level, lo], low[q])
            high[q] = np.where(live, end[level, hi], high[q])
        return low, high

    def pairs(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (point, class) with the point inside the class's extent on every QI.

        A class's points depend on its extent only: they are remembered per extent, so a check
        after a few removals joins only the classes whose extent changed.
        """
        n_classes = low.shape[1]
        keys = np.ascontiguousarray(np.concatenate([low, high]).T)
        if self._stored > MEMO:
            self._memo.clear()
            self._stored = 0
        found: list[np.ndarray | None] = [self._memo.get(row.tobytes()) for row in keys]
        missing = np.array([c for c, hit in enumerate(found) if hit is None], dtype=np.int64)
        if missing.shape[0]:
            point, local = self._join(low[:, missing], high[:, missing])
            order = np.argsort(local, kind="stable")
            split = np.searchsorted(local[order], np.arange(missing.shape[0] + 1))
            for i, c in enumerate(missing.tolist()):
                points = point[order[split[i] : split[i + 1]]]
                found[c] = points
                self._memo[keys[c].tobytes()] = points
                self._stored += points.shape[0] + 1
        lengths = np.array([0 if f is None else f.shape[0] for f in found], dtype=np.int64)
        if not lengths.sum():
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        points = np.concatenate([f for f in found if f is not None])
        return points, np.repeat(np.arange(n_classes, dtype=np.int64), lengths)

    def _join(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The box join of :meth:`pairs` for the classes given (ids local to them)."""
        n_qis = low.shape[0]
        live = np.flatnonzero(high[0] >= low[0]) if n_qis else np.zeros(0, dtype=np.int64)
        if not n_qis or not live.shape[0]:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        starts = [np.searchsorted(self.sorted[q], low[q, live], side="left") for q in range(n_qis)]
        ends = [np.searchsorted(self.sorted[q], high[q, live], side="right") for q in range(n_qis)]
        sizes = [(e - s).sum() for s, e in zip(starts, ends, strict=True)]
        axis = int(np.argmin(sizes))
        start, length = starts[axis], ends[axis] - starts[axis]
        found_points, found_classes = [], []
        cut = np.cumsum(length)
        begin = 0
        while begin < live.shape[0]:
            stop = int(np.searchsorted(cut, (cut[begin - 1] if begin else 0) + CHUNK, side="right"))
            stop = max(stop, begin + 1)
            part = slice(begin, stop)
            n = length[part]
            total = int(n.sum())
            if total:
                cls = np.repeat(live[part], n)
                offset = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
                point = self.order[axis][np.repeat(start[part], n) + offset]
                for q in np.argsort(sizes).tolist():  # most selective first; survivors only
                    if q != axis and point.shape[0]:
                        code = self.points[q, point]
                        keep = (low[q, cls] <= code) & (code <= high[q, cls])
                        point, cls = point[keep], cls[keep]
                found_points.append(point)
                found_classes.append(cls)
            begin = stop
        if not found_points:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(found_points), np.concatenate(found_classes)

    def covering_blame(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        """Classes to blame for a covered record at risk (every record of the table is a target)."""
        return self._blame(rows, group_of_row, n_groups)[0]

    def over_share(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> dict[int, np.ndarray]:
        """Per blamed class, members (rows of the table) holding the value over a covered target's share bound.

        As many as bring that value within the bound for the target that needs most
        (⌈(N_v − b·ΣN) / (1 − b)⌉, ``core/history_share.py``'s count), at most the members holding it.
        Leaving them out lowers the value over its share in the target's N(t), where a class's own
        most frequent value may not be the one (a class blamed for a neighbour's target passes on
        its members). Only share bounds give a hint; classes without one are absent.
        """
        _, value, need = self._blame(rows, group_of_row, n_groups)
        blamed = np.flatnonzero(value >= 0)
        if not blamed.shape[0]:
            return {}
        code = next(iter(self.attributes.values())).code[rows]
        width = int(max(code.max(initial=0), value.max(initial=0))) + 1
        key = group_of_row * width + code
        order = np.argsort(key, kind="stable")
        wanted = blamed * width + value[blamed]
        low = np.searchsorted(key[order], wanted, side="left")
        high = np.searchsorted(key[order], wanted, side="right")
        take = np.minimum(high - low, need[blamed])
        return {
            int(c): rows[order[h - t : h]]
            for c, h, t in zip(blamed.tolist(), high.tolist(), take.tolist(), strict=True)
            if t > 0
        }

    def _blame(
        self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Blamed classes; per class a value over a share bound of a target it is blamed for, and how many to leave out.

        The value is the first attribute's code (-1: none); the count is that target's
        ⌈(N_v − b·ΣN) / (1 − b)⌉ split among the classes she blames.
        """
        bad = np.zeros(n_groups, dtype=bool)
        over = np.full(n_groups, -1, dtype=np.int64)
        need = np.zeros(n_groups, dtype=np.int64)
        low, high = self.extents(rows, group_of_row, n_groups)
        point, cls = self.pairs(low, high)
        if not point.shape[0]:
            return bad, over, need
        n_points = self.points.shape[1]
        covered = np.bincount(point, minlength=n_points) > 0
        counts_of: dict[Hashable, np.ndarray] = {}
        for model, bounds in zip(self.models, self.bounds, strict=True):
            attribute = self.attributes[model.sensitive_attribute]
            width = len(attribute.values)
            if model.sensitive_attribute not in counts_of:
                per_class = (
                    np.bincount(group_of_row * width + attribute.code[rows], minlength=n_groups * width)
                    .reshape(n_groups, width)
                    .astype(np.int32)
                )  # pairs × values: half the memory of int64
                counts_of[model.sensitive_attribute] = per_class
            per_class = counts_of[model.sensitive_attribute]
            pair_counts = per_class[cls] * attribute.sets[point]
            totals = np.zeros((n_points, width))
            for v in range(width):
                totals[:, v] = np.bincount(point, weights=pair_counts[:, v], minlength=n_points)
            verdict = model.intersection_at_risk(totals, bounds)
            if verdict is None:
                continue
            already = attribute.before < model.minimum_class_size
            risky = covered & np.where(already, (totals > 0).sum(axis=1) < attribute.before, verdict)
            if not risky.any():
                continue
            at = risky[point]
            alone = model.intersection_at_risk(pair_counts[at], None if bounds is None else bounds[point[at]])
            mine = np.zeros(point.shape[0], dtype=bool)
            if alone is not None:
                mine[np.flatnonzero(at)] = np.asarray(alone, dtype=bool) & (pair_counts[at].sum(axis=1) > 0)
            mine &= ~already[point]
            blamed_point = np.bincount(point[mine], minlength=n_points) > 0
            mine |= at & ~blamed_point[point]  # nobody alone: every class covering her
            bad[cls[mine]] = True
            if bounds is not None and attribute is next(iter(self.attributes.values())):
                hit = point[mine]
                top, total, bound = totals[hit].max(axis=1), totals[hit].sum(axis=1), bounds[hit]
                count = np.ceil((top - bound * total) / np.maximum(1.0 - bound, 1e-9) - 1e-9)
                share = np.ceil(np.maximum(count, 1) / np.bincount(hit, minlength=n_points)[hit])  # split among
                over[cls[mine]] = np.argmax(totals[hit], axis=1)  # the classes she blames
                np.maximum.at(need, cls[mine], share.astype(np.int64))
        return bad, over, need


def _node_extents(dimension: Dimension) -> tuple[np.ndarray, np.ndarray] | None:
    """Hierarchical: per level and leaf code, the first and last leaf code under the same node (``None``: numeric)."""
    if dimension.nodes is None:
        return None
    nodes = dimension.nodes
    n_levels, size = nodes.shape
    index = np.arange(size, dtype=np.int64)
    start = np.empty((n_levels, size), dtype=np.int64)
    end = np.empty((n_levels, size), dtype=np.int64)
    for level in range(n_levels):
        change = np.ones(size, dtype=bool)
        change[1:] = nodes[level, 1:] != nodes[level, :-1]
        start[level] = np.maximum.accumulate(np.where(change, index, 0))
        last = np.ones(size, dtype=bool)
        last[:-1] = change[1:]
        end[level] = np.minimum.accumulate(np.where(last, index, size - 1)[::-1])[::-1]
    return start, end
