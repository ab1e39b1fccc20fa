"""Roll-up: a node's classes from the class table of an already-checked specialization.

Generalizing is a function of the value: if node ``P ≤ N`` (component-wise), every
class of ``N`` is a union of classes of ``P``, and each row of ``P``'s class table
(generalized QI codes + the model columns' values + a record count) maps to one
row of ``N``'s by mapping its codes one level table up. So a check costs
O(rows of the parent's table), not O(units) — ARX's snapshot/roll-up
optimisation. The bottom node's table is the snapshot's units themselves, which
are a specialization of every node, so a parent always exists.

Only the grouping is shared: every row keeps the snapshot unit it came from, so
the models read the same encoded model-column codes whichever parent a table was
rolled up from, and each class's statistics are computed in the same order —
a check gives the same answer by every path (the exhaustive-agreement tests rely
on it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.frame import EncodedColumn, encode_column
from privacy_plugins.core.partition import EquivalenceClasses, combine_codes
from privacy_plugins.core.partition import _compact as compact

__all__ = ["ClassTable", "RollupCache"]

#: Rows (summed over cached tables) kept, as a multiple of the snapshot's units.
CACHE_BUDGET = 16
#: Roll up only from a parent with at most 1/ROLLUP_GAIN of the units' rows; otherwise group the units.
ROLLUP_GAIN = 4
#: At most this many tables are kept (besides the bottom one).
CACHE_ENTRIES = 256


@dataclass(frozen=True, eq=False)
class ClassTable:
    """The distinct (class, model-column values) rows of the table at one node, with record counts.

    A row's generalized QI codes are those of any of its units (they share the class), so
    only one unit per row is kept: ``snapshot.codes(qi, level)[unit]``.

    Attributes:
        node: the levels.
        unit: a snapshot unit of each row (all units of a row share the model-column values).
        weights: records per row.
        class_of_row: the equivalence class of each row.
        n_classes: number of classes.
    """

    node: tuple[int, ...]
    unit: np.ndarray
    weights: np.ndarray
    class_of_row: np.ndarray
    n_classes: int

    @property
    def n_rows(self) -> int:
        """Rows of the table."""
        return int(self.unit.shape[0])


class RollupCache:
    """Class tables of checked nodes in a bounded cache; new nodes are rolled up from the smallest specialization."""

    def __init__(self, snapshot: Snapshot, model_columns: Sequence[Hashable]) -> None:
        self.snapshot = snapshot
        n_units = snapshot.units.shape[0]
        columns = [encode_column(snapshot.units, column) for column in model_columns]
        self._model_key, self._n_model = combine_codes([(c.codes, c.cardinality) for c in columns], n_units)
        bottom = tuple(0 for _ in snapshot.heights)
        classes = snapshot.classes(bottom)
        self.bottom = ClassTable(
            node=bottom,
            unit=np.arange(n_units, dtype=np.int64),
            weights=snapshot.weights,
            class_of_row=classes.class_of_row,
            n_classes=classes.n_classes,
        )
        self._budget = CACHE_BUDGET * n_units
        self._tables: OrderedDict[tuple[int, ...], ClassTable] = OrderedDict()
        self._total = 0
        self._levels = np.zeros((0, len(bottom)), dtype=np.int64)
        self._sizes = np.zeros(0, dtype=np.int64)
        self._empty_frames: dict[int, pd.DataFrame] = {}

    def parent(self, node: Sequence[int]) -> ClassTable:
        """The cached specialization of ``node`` with the fewest rows (the bottom table at worst)."""
        below = np.flatnonzero((self._levels <= np.asarray(node)).all(axis=1))
        if below.shape[0] == 0:
            return self.bottom
        best = below[np.argmin(self._sizes[below])]
        return self._tables[tuple(int(v) for v in self._levels[best])]

    def table(self, node: Sequence[int]) -> ClassTable:
        """The class table of ``node``, rolled up from :meth:`parent` and cached."""
        node = tuple(node)
        cached = self._tables.get(node)
        if cached is not None:
            return cached
        if node == self.bottom.node:
            return self.bottom
        parent = self.parent(node)
        if parent.n_rows * ROLLUP_GAIN > self.bottom.n_rows:
            return self._direct(node)
        snapshot = self.snapshot
        parts = [
            (snapshot.codes(qi, level)[parent.unit], len(h.labels[level]))
            for qi, (h, level) in enumerate(zip(snapshot.hierarchies, node, strict=True))
        ]
        class_of_parent_row, n_classes = combine_codes(parts, parent.n_rows)
        table = self._reduce(node, parent, class_of_parent_row, n_classes)
        self._store(table)
        return table

    def _direct(self, node: tuple[int, ...]) -> ClassTable:
        """Group the units themselves (cheaper than rolling up a parent almost as large), then reduce."""
        classes = self.snapshot.classes(node)
        table = self._reduce(node, self.bottom, classes.class_of_row, classes.n_classes)
        self._store(table)
        return table

    def _reduce(
        self, node: tuple[int, ...], parent: ClassTable, class_of_parent_row: np.ndarray, n_classes: int
    ) -> ClassTable:
        """Collapse the parent's rows to one row per (class, model-column values)."""
        if self._n_model == 1:
            row_of_parent_row, n_rows = class_of_parent_row, n_classes
        else:
            keys = class_of_parent_row * self._n_model + self._model_key[parent.unit]
            row_of_parent_row, n_rows = compact(keys, n_classes * self._n_model)
        unit = np.empty(n_rows, dtype=np.int64)
        unit[row_of_parent_row] = parent.unit
        class_of_row = np.empty(n_rows, dtype=np.int64)
        class_of_row[row_of_parent_row] = class_of_parent_row
        weights = np.bincount(row_of_parent_row, weights=parent.weights, minlength=n_rows).astype(np.int64)
        return ClassTable(node, unit, weights, class_of_row, n_classes)

    def _store(self, table: ClassTable) -> None:
        if table.n_rows > self._budget:
            return
        self._tables[table.node] = table
        self._total += table.n_rows
        while self._total > self._budget or len(self._tables) > CACHE_ENTRIES:
            _, evicted = self._tables.popitem(last=False)
            self._total -= evicted.n_rows
        self._levels = np.asarray(list(self._tables), dtype=np.int64).reshape(len(self._tables), -1)
        self._sizes = np.fromiter((t.n_rows for t in self._tables.values()), dtype=np.int64, count=len(self._tables))

    def classes(self, table: ClassTable) -> EquivalenceClasses:
        """The equivalence classes of a table, reading the model columns through the units' encodings."""
        snapshot = self.snapshot
        if table is self.bottom:
            return snapshot.classes(table.node)
        encodings = {
            key: EncodedColumn(name=column.name, codes=column.codes[table.unit], values=column.values)
            for key, column in snapshot.encodings.items()
        }
        if snapshot.units.shape[1]:
            frame = snapshot.units.iloc[table.unit]
        else:  # no model columns (k-anonymity): an empty frame of the right length, reused
            frame = self._empty_frames.get(table.n_rows)
            if frame is None:
                frame = self._empty_frames.setdefault(table.n_rows, pd.DataFrame(index=pd.RangeIndex(table.n_rows)))
        return EquivalenceClasses.from_class_ids(
            frame,
            snapshot.quasi_identifiers,
            table.class_of_row,
            table.n_classes,
            weights=table.weights,
            encodings=encodings,
        )
