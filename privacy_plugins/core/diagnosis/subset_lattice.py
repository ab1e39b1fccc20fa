"""The lattice of quasi-identifier subsets, measured on demand or all at once by rolling classes up.

Subsets are bit masks over the d candidate attributes (bit i = the i-th
candidate). Every column is encoded once, and records equal on every column
the diagnosis reads are one weighted unit.

* All 2^d subsets (:meth:`SubsetLattice.measure_all`) are measured top-down:
  the full set's classes are grouped from the units, and every other subset's
  from a superset with one more attribute (:mod:`.rollup`), so a subset costs
  O(classes of that superset) instead of O(units). The superset is the subset
  plus its missing attribute with the fewest values (few values: few extra
  classes to group), which makes the walk a depth-first tree with at most d + 1
  class tables alive.
* The level-wise border search measures subsets bottom-up: a subset's partition
  is its parent's ``class_of_row`` (the subset without its highest attribute)
  combined with that one column by :func:`combine_codes`, one pass over the
  units; it keeps one level of partitions at a time
  (:meth:`SubsetLattice.keep_partitions`).

No Python loop runs over rows or classes in either.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core import metrics
from privacy_plugins.core.diagnosis.findings import SubsetFinding
from privacy_plugins.core.diagnosis.rollup import ClassTable, coarsen, unit_table
from privacy_plugins.core.frame import EncodedColumn, encode_column
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts, combine_codes
from privacy_plugins.core.progress import ProgressCallback

__all__ = ["SubsetLattice", "bits_of", "lattice_order"]

Partition = tuple[np.ndarray, int]


class _Stopped(Exception):
    """Raised inside the depth-first walk to unwind it when the caller says stop."""


def bits_of(mask: int) -> list[int]:
    """The attribute indices in a subset mask, ascending.

    Example:
        >>> bits_of(0b1011)
        [0, 1, 3]
    """
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def lattice_order(mask: int) -> tuple[int, list[int]]:
    """Sort key of subsets: smaller first, then by their attributes in candidate order."""
    return mask.bit_count(), bits_of(mask)


class SubsetLattice:
    """All subsets of the candidate quasi-identifiers of one table, measured on demand.

    Args:
        frame: the validated table.
        quasi_identifiers: the d candidate quasi-identifiers.
        sensitive_attributes: add distinct / frequency / entropy l per subset (with
            several, the worst over them: the smallest l, the largest c*).
        k: target k for ``suppression_needed``.
        recursive_l: adds recursive (c,l)'s c* for this integer l per subset (needs a
            sensitive attribute).
        suppression_limit: adds k after suppression per subset.
        risk_threshold: record risk counted as at risk.
        models: privacy models decided on every measured subset (:meth:`holds`);
            the columns they read are kept beside the sensitive attributes.
        weights: records per row of ``frame`` (positive integers) when the table is
            already a weighted snapshot; every measure counts records, so the
            findings equal those of the table with each row repeated that often.

    Example:
        >>> df = pd.DataFrame({"age": [30, 30, 40], "sex": ["F", "M", "F"]})
        >>> lattice = SubsetLattice(df, ["age", "sex"], k=2)
        >>> [lattice.finding(mask).k for mask in (0b00, 0b01, 0b10, 0b11)]
        [3, 1, 1, 1]
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[Hashable],
        *,
        sensitive_attributes: Sequence[Hashable] = (),
        k: int,
        recursive_l: int | None = None,
        suppression_limit: float | None = None,
        risk_threshold: float = DEFAULT_RISK_THRESHOLD,
        models: Sequence[PrivacyModel] = (),
        weights: np.ndarray | None = None,
    ) -> None:
        self.attributes = tuple(quasi_identifiers)
        n_frame = len(frame)
        self._models = tuple(dict.fromkeys(models))
        self._sensitive = tuple(sensitive_attributes)
        read = list(dict.fromkeys([*self._sensitive, *(column for model in self._models for column in model.columns)]))
        qi_codes = [encode_column(frame, column) for column in self.attributes]
        read_codes = {column: encode_column(frame, column) for column in read}
        # The weighted snapshot: records equal on every QI and every column a measure
        # reads are one unit weighted by their count, so each subset groups the
        # distinct rows (Adult: 19,502 of 30,162) instead of the records. A frame that
        # is already a snapshot (``weights``) is grouped the same way, its counts summed.
        unit_of_row, n_units = combine_codes(
            [(e.codes, e.cardinality) for e in [*qi_codes, *read_codes.values()]], n_frame
        )
        first_row = np.full(n_units, n_frame, dtype=np.int64)
        np.minimum.at(first_row, unit_of_row, np.arange(n_frame, dtype=np.int64))
        self.n_units = n_units
        #: The unit of every row of the frame (per-record results are read through it).
        self.unit_of_row = unit_of_row
        self._weights = np.bincount(unit_of_row, weights=weights, minlength=n_units).astype(np.int64)
        self.n_rows = int(self._weights.sum())
        self._columns: list[Partition] = [(e.codes[first_row], e.cardinality) for e in qi_codes]
        # the QIs too: a model that looks classes up by their values (exact k-map) reads them
        kept = list(dict.fromkeys([*read, *self.attributes]))
        self._model_frame = frame[kept].iloc[first_row].reset_index(drop=True)
        # Shared by every subset's classes: each model column is encoded once.
        self._encodings: dict[tuple[Hashable, bool], EncodedColumn] = {
            (column, False): EncodedColumn(name=e.name, codes=e.codes[first_row], values=e.values)
            for column, e in read_codes.items()
        }
        # The roll-up walk adds back the missing attribute with the fewest values:
        # it walks attribute positions in this order, most values first.
        self._by_values = sorted(range(self.d), key=lambda i: -self._columns[i][1])
        self._value_totals = {
            column: np.bincount(
                self._encodings[(column, False)].codes,
                weights=self._weights,
                minlength=max(self._encodings[(column, False)].cardinality, 1),
            ).astype(np.int64)
            for column in self._sensitive
        }
        self._has_sensitive = bool(self._sensitive)
        self._k = k
        self._recursive_l = recursive_l if self._has_sensitive else None
        self._suppression_limit = suppression_limit
        self._risk_threshold = risk_threshold
        self._partitions: dict[int, Partition] = {}
        self._findings: dict[int, SubsetFinding] = {}
        self._verdicts: dict[tuple[int, PrivacyModel], bool] = {}

    @property
    def d(self) -> int:
        """Number of candidate quasi-identifiers."""
        return len(self.attributes)

    @property
    def full_mask(self) -> int:
        """The subset holding every candidate."""
        return (1 << self.d) - 1

    @property
    def findings(self) -> Mapping[int, SubsetFinding]:
        """Every subset measured so far, by mask."""
        return self._findings

    def names(self, mask: int) -> tuple[Hashable, ...]:
        """The attributes of a subset mask, in candidate order."""
        return tuple(self.attributes[i] for i in bits_of(mask))

    def partition(self, mask: int) -> Partition:
        """``(class_of_row, n_classes)`` of a subset: its parent's partition plus one column."""
        known = self._partitions.get(mask)
        if known is not None:
            return known
        if mask == 0:
            return np.zeros(self.n_units, dtype=np.int64), 1
        top = mask.bit_length() - 1
        parent = self._partitions.get(mask ^ (1 << top))
        columns = [parent, self._columns[top]] if parent is not None else [self._columns[i] for i in bits_of(mask)]
        return combine_codes(columns, self.n_units)

    @property
    def unit_weights(self) -> np.ndarray:
        """The records each unit stands for."""
        return self._weights

    def unique_units(self, mask: int) -> tuple[np.ndarray, Partition]:
        """Per unit, whether it is one record alone in its class of subset ``mask`` (a sample unique); the partition."""
        partition = self.partition(mask)
        class_of_unit, n_classes = partition
        sizes = np.bincount(class_of_unit, weights=self._weights, minlength=n_classes)
        return sizes[class_of_unit] == 1, partition

    def keep_partition(self, mask: int, partition: Partition) -> None:
        """Keep ``partition`` of ``mask`` as the parent of the next level's subsets (see :meth:`keep_partitions`)."""
        self._partitions[mask] = partition

    def class_sizes(self, mask: int) -> np.ndarray:
        """The class sizes of a subset."""
        class_of_row, n_classes = self.partition(mask)
        return np.bincount(class_of_row, weights=self._weights, minlength=n_classes).astype(np.int64)

    def finding(self, mask: int) -> SubsetFinding:
        """The measures of one subset (computed once, then cached)."""
        if mask not in self._findings:
            self._findings[mask] = self._measure(mask, self._classes(mask, self.partition(mask)))
        return self._findings[mask]

    def evaluate(self, masks: Iterable[int], *, progress: ProgressCallback | None = None) -> dict[int, SubsetFinding]:
        """Measure several subsets, keeping their partitions as parents for the next level.

        ``progress`` is called as ``progress(subsets_measured, None)`` after each newly measured subset.
        """
        out = {}
        for mask in masks:
            if mask not in self._findings:
                partition = self.partition(mask)
                self._partitions[mask] = partition
                self._findings[mask] = self._measure(mask, self._classes(mask, partition))
                if progress is not None:
                    progress(len(self._findings), None)
            out[mask] = self._findings[mask]
        return out

    def holds(self, mask: int, model: PrivacyModel) -> bool:
        """Whether ``model`` holds on the table grouped by the subset ``mask`` (decided by the model)."""
        key = (mask, model)
        if key not in self._verdicts:
            self._verdicts[key] = model.holds(self._classes(mask, self.partition(mask)))
        return self._verdicts[key]

    def keep_partitions(self, masks: Iterable[int]) -> None:
        """Forget every stored partition except those of ``masks`` (the next level's parents)."""
        wanted = set(masks)
        self._partitions = {mask: p for mask, p in self._partitions.items() if mask in wanted}

    def measure_all(self, *, progress: ProgressCallback | None = None, stop: Callable[[], bool] | None = None) -> bool:
        """Measure all 2^d subsets top-down, each rolled up from a superset's classes.

        Args:
            progress: called as ``progress(subsets_measured, 2^d)`` after each subset.
            stop: asked after each subset; when it returns True the walk stops
                (what was measured stays in :attr:`findings`).

        Returns:
            True when every subset was measured, False when ``stop`` ended the walk.
        """
        units = unit_table(
            self._columns,
            [(self._encodings[(column, False)].codes, self._cardinality(column)) for column in self._sensitive],
            self._weights,
        )
        full = self.full_mask
        # The empty set (one class: the whole table) is measured first and never rolled up.
        self._findings.setdefault(0, self._measure(0, self._classes(0, self.partition(0))))
        try:
            table = self._measure_table(full, coarsen(units, None), progress, stop)
            self._partitions[full] = (table.class_of_unit, table.n_classes)
            self._descend(table, full, 0, progress, stop)
        except _Stopped:
            return False
        return True

    def _descend(
        self,
        table: ClassTable,
        mask: int,
        start: int,
        progress: ProgressCallback | None,
        stop: Callable[[], bool] | None,
    ) -> None:
        """Measure the subsets below ``mask`` whose largest missing position is at least ``start``.

        A subset's superset in this tree is the subset plus its missing attribute
        that comes last in :attr:`_by_values` (the one with the fewest values), so
        every subset is reached exactly once, from a superset already measured.
        """
        for position in range(start, self.d):
            attribute = self._by_values[position]
            if not mask >> attribute & 1:
                continue
            child = mask ^ (1 << attribute)
            if not child:
                continue
            child_table = self._measure_table(child, coarsen(table, attribute), progress, stop)
            self._descend(child_table, child, position + 1, progress, stop)

    def _measure_table(
        self,
        mask: int,
        table: ClassTable,
        progress: ProgressCallback | None,
        stop: Callable[[], bool] | None,
    ) -> ClassTable:
        self._findings[mask] = self._measure(mask, self._table_classes(mask, table))
        if progress is not None:
            progress(len(self._findings), 1 << self.d)
        if stop is not None and stop():
            raise _Stopped
        return table

    def _cardinality(self, column: Hashable) -> int:
        return max(self._encodings[(column, False)].cardinality, 1)

    def _table_classes(self, mask: int, table: ClassTable) -> EquivalenceClasses:
        """The classes of a rolled-up table, with its sensitive counts already in place."""
        cache = {}
        for column, pairs in zip(self._sensitive, table.pairs, strict=True):
            cache[(column, False)] = SensitiveCounts(
                attribute=column,
                column=self._encodings[(column, False)],
                pair_class=pairs.pair_class,
                pair_value=pairs.pair_value,
                pair_count=pairs.pair_count,
                pair_of_row=pairs.pair_of_unit,
                class_start=pairs.class_start,
                value_totals=self._value_totals[column],
            )
        return EquivalenceClasses(
            frame=self._model_frame,
            quasi_identifiers=self.names(mask),
            class_of_row=table.class_of_unit,
            sizes=table.sizes,
            weights=self._weights,
            _sensitive_cache=cache,
            encodings=self._encodings,
        )

    def _classes(self, mask: int, partition: Partition) -> EquivalenceClasses:
        class_of_row, n_classes = partition
        return EquivalenceClasses(
            frame=self._model_frame,
            quasi_identifiers=self.names(mask),
            class_of_row=class_of_row,
            sizes=np.bincount(class_of_row, weights=self._weights, minlength=n_classes).astype(np.int64),
            weights=self._weights,
            encodings=self._encodings,  # the model columns are factorized once for all subsets
        )

    def _measure(self, mask: int, classes: EquivalenceClasses) -> SubsetFinding:
        n_classes = classes.n_classes
        for model in self._models:
            self._verdicts[(mask, model)] = model.holds(classes)
        risk = metrics.prosecutor_risk(classes, threshold=self._risk_threshold)
        suppression = metrics.suppression_needed(classes, self._k)
        diversity = self._diversity(classes) if self._has_sensitive else {}
        return SubsetFinding(
            attributes=classes.quasi_identifiers,
            classes=n_classes,
            k=metrics.k_of(classes),
            sample_uniques=metrics.sample_uniques(classes),
            records_at_risk=risk.records_at_risk,
            share_at_risk=risk.share_at_risk,
            suppression_needed=suppression.rows,
            suppression_fraction=suppression.fraction,
            k_after_suppression=(
                None
                if self._suppression_limit is None
                else metrics.k_after_suppression(classes, self._suppression_limit).k
            ),
            **diversity,
        )

    def _diversity(self, classes: EquivalenceClasses) -> dict[str, Any]:
        """The l of the subset: the worst over the sensitive attributes, and each one's own when several."""
        every = [self._diversity_of(classes, attribute) for attribute in self._sensitive]
        out: dict[str, Any] = {key: min(d[key] for d in every) for key in ("distinct_l", "frequency_l", "entropy_l")}
        if self._recursive_l is not None:
            out["recursive_c"] = max(d["recursive_c"] for d in every)
        if len(every) > 1:
            out["per_attribute"] = dict(zip(self._sensitive, every, strict=True))
        return out

    def _diversity_of(self, classes: EquivalenceClasses, attribute: Hashable) -> dict[str, Any]:
        counts = classes.sensitive(attribute)
        out: dict[str, Any] = {
            "distinct_l": int(metrics.distinct_l_per_class(counts).min()),
            "frequency_l": float(metrics.frequency_l_per_class(classes, counts).min()),
            "entropy_l": float(metrics.entropy_l_per_class(classes, counts).min()),
        }
        if self._recursive_l is not None:
            out["recursive_c"] = float(metrics.recursive_c_per_class(classes, counts, self._recursive_l).max())
        return out
