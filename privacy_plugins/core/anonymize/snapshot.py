"""The distinct rows of a table, with counts, ready for evaluating many generalizations.

A lattice search checks hundreds of candidate generalizations of the same
table. Each check only needs, per distinct combination of (QI leaves,
sensitive values, personal bound), how many records share it. Collapsing the
table once to these *units* makes every later check proportional to the number
of distinct rows (Adult: 30,162 records, about 19,000 units; replicated to 1M
records, still the same units) — the idea of ARX's data snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd

from privacy_plugins.core.frame import EncodedColumn, encode_column
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.information_loss import generalization_costs
from privacy_plugins.core.partition import EquivalenceClasses, combine_codes, dense_key_limit
from privacy_plugins.errors import HierarchyError

__all__ = ["Snapshot"]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """Units (distinct relevant rows) of a table, their weights and per-level codes.

    Attributes:
        quasi_identifiers: the QIs, in lattice order.
        hierarchies: one per QI, same order.
        units: one row per unit with the non-QI columns the models read.
        weights: records per unit.
        unit_of_row: the unit of every input record.
        leaf_codes: per QI, the leaf code of each unit.
    """

    quasi_identifiers: tuple[Hashable, ...]
    hierarchies: tuple[Hierarchy, ...]
    units: pd.DataFrame
    weights: np.ndarray
    unit_of_row: np.ndarray
    leaf_codes: tuple[np.ndarray, ...]
    encodings: dict[tuple[Hashable, bool], EncodedColumn] = field(default_factory=dict, repr=False)
    _codes: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)
    _costs: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)
    _narrow_codes: dict[tuple[int, int, str], np.ndarray] = field(default_factory=dict, repr=False)
    #: Records in the table when the snapshot was built from counts (no per-record ``unit_of_row``).
    n_records: int | None = None

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        quasi_identifiers: Sequence[Hashable],
        hierarchies: Mapping[Hashable, Hierarchy],
        model_columns: Sequence[Hashable] = (),
    ) -> Snapshot:
        """Collapse ``frame`` to units; every QI value must be a leaf of its hierarchy."""
        missing = [q for q in quasi_identifiers if q not in hierarchies]
        if missing:
            given = sorted(map(str, hierarchies))
            raise HierarchyError(f"no hierarchy for quasi-identifier(s) {missing!r}; hierarchies given for {given!r}")
        ordered = tuple(hierarchies[q] for q in quasi_identifiers)
        row_leaves = [h.leaf_codes(frame[q]) for q, h in zip(quasi_identifiers, ordered, strict=True)]
        parts = [(codes, h.n_leaves) for codes, h in zip(row_leaves, ordered, strict=True)]
        for column in model_columns:
            encoded = encode_column(frame, column)
            parts.append((encoded.codes, encoded.cardinality))
        unit_of_row, n_units = combine_codes(parts, len(frame))
        first_row = np.full(n_units, len(frame), dtype=np.int64)
        np.minimum.at(first_row, unit_of_row, np.arange(len(frame), dtype=np.int64))
        if model_columns:
            units = frame[list(model_columns)].iloc[first_row].reset_index(drop=True)  # only the columns read
        else:  # k-anonymity alone reads no column: skip pandas' column selection and take
            units = pd.DataFrame(index=pd.RangeIndex(n_units))
        return cls(
            quasi_identifiers=tuple(quasi_identifiers),
            hierarchies=ordered,
            units=units,
            weights=np.bincount(unit_of_row, minlength=n_units).astype(np.int64),
            unit_of_row=unit_of_row,
            leaf_codes=tuple(codes[first_row] for codes in row_leaves),
        )

    @classmethod
    def from_units(
        cls,
        *,
        quasi_identifiers: Sequence[Hashable],
        hierarchies: Mapping[Hashable, Hierarchy],
        leaf_values: Mapping[Hashable, pd.Series],
        units: pd.DataFrame,
        weights: np.ndarray,
    ) -> Snapshot:
        """A snapshot from counts an engine computed (one ``GROUP BY``), never from the records.

        Each argument row is one distinct (QI values, model columns) combination:
        ``leaf_values[q]`` its value of QI ``q`` (must be a leaf), ``units`` its
        model columns, ``weights`` its record count. Units that are equal after
        matching values to leaves (``39`` and ``39.0``) are merged, so the result
        equals :meth:`build` on the records. ``unit_of_row`` is the identity: a
        unit stands for its records, whose count is ``n_records``.
        """
        missing = [q for q in quasi_identifiers if q not in hierarchies]
        if missing:
            given = sorted(map(str, hierarchies))
            raise HierarchyError(f"no hierarchy for quasi-identifier(s) {missing!r}; hierarchies given for {given!r}")
        counts = np.asarray(weights, dtype=np.int64)
        if counts.shape[0] != len(units) or (counts <= 0).any():
            raise ValueError("weights must hold one positive record count per unit")
        ordered = tuple(hierarchies[q] for q in quasi_identifiers)
        leaves = [h.leaf_codes(leaf_values[q]) for q, h in zip(quasi_identifiers, ordered, strict=True)]
        parts = [(codes, h.n_leaves) for codes, h in zip(leaves, ordered, strict=True)]
        parts += [(e.codes, e.cardinality) for e in (encode_column(units, c) for c in units.columns)]
        unit_of_arg, n_units = combine_codes(parts, len(units))
        first = np.full(n_units, len(units), dtype=np.int64)
        np.minimum.at(first, unit_of_arg, np.arange(len(units), dtype=np.int64))
        return cls(
            quasi_identifiers=tuple(quasi_identifiers),
            hierarchies=ordered,
            units=units.iloc[first].reset_index(drop=True),
            weights=np.bincount(unit_of_arg, weights=counts, minlength=n_units).astype(np.int64),
            unit_of_row=np.arange(n_units, dtype=np.int64),
            leaf_codes=tuple(codes[first] for codes in leaves),
            n_records=int(counts.sum()),
        )

    @property
    def n_rows(self) -> int:
        """Records in the table."""
        if self.n_records is not None:
            return self.n_records
        return int(self.unit_of_row.shape[0])

    @property
    def heights(self) -> tuple[int, ...]:
        """Hierarchy height of each QI."""
        return tuple(h.height for h in self.hierarchies)

    def codes(self, qi: int, level: int) -> np.ndarray:
        """Generalized code of every unit for QI number ``qi`` at ``level`` (cached)."""
        key = (qi, level)
        if key not in self._codes:
            hierarchy = self.hierarchies[qi]
            self._codes[key] = hierarchy.codes[level][self.leaf_codes[qi]]
        return self._codes[key]

    def costs(self, qi: int, level: int) -> np.ndarray:
        """NCP cost of every unit's value for QI number ``qi`` at ``level`` (cached)."""
        key = (qi, level)
        if key not in self._costs:
            self._costs[key] = generalization_costs(self.hierarchies[qi], self.leaf_codes[qi], level)
        return self._costs[key]

    @cached_property
    def cardinalities(self) -> tuple[tuple[int, ...], ...]:
        """Per QI, the number of values at each level."""
        return tuple(tuple(len(labels) for labels in h.labels) for h in self.hierarchies)

    def class_keys(self, node: Sequence[int], out: np.ndarray) -> int | None:
        """Write every unit's class at ``node`` into ``out`` as one mixed-radix key; return the key space.

        ``out``: one integer per unit, wide enough for :func:`dense_key_limit` of the units.

        The keys are not compacted: ``bincount(out, minlength=space)`` counts the
        records of every class (keys no unit has count 0), which is all a check by
        class sizes needs. ``None`` (``out`` untouched) when the key space is too
        large for a dense count: then only :meth:`classes` (hashing) applies.
        """
        levels = [(qi, level) for qi, level in enumerate(node) if self.cardinalities[qi][level] > 1]
        space = math.prod(self.cardinalities[qi][level] for qi, level in levels)
        if space > dense_key_limit(out.shape[0]):
            return None
        if not levels:
            out.fill(0)
            return 1
        np.copyto(out, self._key_codes(*levels[0], out.dtype))
        for qi, level in levels[1:]:  # Horner: two in-place passes per QI, no temporary
            out *= self.cardinalities[qi][level]
            out += self._key_codes(qi, level, out.dtype)
        return space

    def _key_codes(self, qi: int, level: int, dtype: np.dtype) -> np.ndarray:
        """:meth:`codes` in the keys' dtype (int32 keys halve the memory each pass reads; cached)."""
        codes = self.codes(qi, level)
        if codes.dtype == dtype:
            return codes
        key = (qi, level, dtype.str)
        narrow = self._narrow_codes.get(key)
        if narrow is None:
            narrow = self._narrow_codes[key] = codes.astype(dtype)
        return narrow

    def classes(self, node: Sequence[int]) -> EquivalenceClasses:
        """The equivalence classes of the units generalized to ``node``."""
        parts = [(self.codes(qi, level), len(self.hierarchies[qi].labels[level])) for qi, level in enumerate(node)]
        classes = EquivalenceClasses.from_codes(
            self.units, self.quasi_identifiers, parts, weights=self.weights, encodings=self.encodings
        )
        return replace(classes, lattice_node=(self, tuple(node), None))
