"""Group once, measure many: equivalence classes and (class, sensitive value) counts.

:class:`EquivalenceClasses` plays the role of ARX's ``HashGroupify``: it is built
once from the quasi-identifier codes and every measure reads it. Building it is
vectorized: the per-column codes are combined into one integer key (mixed radix),
compacted, and counted with ``numpy.bincount``; no Python loop runs over rows or
classes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.frame import EncodedColumn, encode_column

__all__ = ["EquivalenceClasses", "SensitiveCounts", "combine_codes", "dense_key_limit"]

# Above this many possible keys per row, compaction uses hashing instead of a
# dense bincount table (which would be mostly empty and waste memory).
_DENSE_FACTOR = 4
_KEY_LIMIT = 2**62


def dense_key_limit(n_keys: int) -> int:
    """The largest key space counted by a dense ``bincount`` for ``n_keys`` keys (hashing beyond)."""
    return _DENSE_FACTOR * n_keys + 1024


def _compact(keys: np.ndarray, key_space: int) -> tuple[np.ndarray, int]:
    """Map arbitrary non-negative int64 keys onto dense ids ``0..n_distinct-1``."""
    if key_space <= dense_key_limit(len(keys)):
        present = np.bincount(keys, minlength=key_space) > 0
        remap = np.cumsum(present) - 1
        return remap[keys], int(present.sum())
    ids, uniques = pd.factorize(keys)
    return np.asarray(ids, dtype=np.int64), len(uniques)


def combine_codes(columns: Sequence[tuple[np.ndarray, int]], n_rows: int) -> tuple[np.ndarray, int]:
    """Combine per-column codes into one group id per row.

    Args:
        columns: ``(codes, cardinality)`` pairs, codes in ``0..cardinality-1``.
        n_rows: number of rows (used when ``columns`` is empty: one group).

    Returns:
        ``(group_of_row, n_groups)`` with dense group ids in ``0..n_groups-1``.
    """
    # A column with one value (e.g. a QI generalized to its root) splits nothing: skip
    # its pass; keys*1 + 0 would leave every key, hence the ids, unchanged anyway.
    columns = [(codes, int(cardinality)) for codes, cardinality in columns if int(cardinality) > 1]
    if not columns:
        return np.zeros(n_rows, dtype=np.int64), 1
    first, space = columns[0]
    keys = first.astype(np.int64)  # a copy: never alias the caller's codes
    for codes, cardinality in columns[1:]:
        if space * cardinality >= _KEY_LIMIT:
            keys, space = _compact(keys, space)
        keys *= cardinality
        keys += codes
        space *= cardinality
    return _compact(keys, space)


@dataclass(frozen=True, eq=False)
class SensitiveCounts:
    """Counts of each sensitive value inside each equivalence class (sparse, sorted).

    The non-zero ``(class, value)`` pairs are stored sorted by class, then by value
    code, in parallel arrays; ``class_start[c]:class_start[c+1]`` is class ``c``'s
    slice. ``pair_of_row`` maps each row to its pair, so per-record quantities
    (e.g. the leakage of Song et al.) are one ``take``.
    """

    attribute: Hashable
    column: EncodedColumn
    pair_class: np.ndarray
    pair_value: np.ndarray
    pair_count: np.ndarray
    pair_of_row: np.ndarray
    class_start: np.ndarray
    value_totals: np.ndarray
    #: Measures derived from these counts alone, kept so one re-check does not recompute them
    #: (e.g. the DCorrelate sums of a sensitive hierarchy, asked for the violations and the maximum).
    derived: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_values(self) -> int:
        """Number of distinct sensitive values in the whole table (missing counts as one)."""
        return self.column.cardinality

    @cached_property
    def distinct_per_class(self) -> np.ndarray:
        """Number of distinct sensitive values in each class."""
        return np.diff(self.class_start)

    @cached_property
    def max_per_class(self) -> np.ndarray:
        """Count of the most frequent sensitive value in each class."""
        # ufunc.at is several times faster than maximum.reduceat on NumPy 2 (counts are ≥ 1).
        top = np.zeros(self.class_start.shape[0] - 1, dtype=self.pair_count.dtype)
        np.maximum.at(top, self.pair_class, self.pair_count)
        return top


@dataclass(frozen=True, eq=False)
class EquivalenceClasses:
    """The partition of a table's rows by their quasi-identifier values.

    Build it with :meth:`from_frame`; it keeps a reference to the frame only to
    encode sensitive attributes on demand and to show a class's values when a
    caller explicitly opts in.

    Each row of ``frame`` is a *unit*. Normally a unit is one record; with
    ``weights`` a unit stands for ``weights[i]`` identical records, which lets
    the anonymizers evaluate many candidate generalizations on the distinct
    rows of a table instead of on every record. Every measure counts records
    (``sizes``, ``n_rows``, sensitive counts are weighted).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "disease": ["flu", "hiv", "flu"]})
        >>> classes = EquivalenceClasses.from_frame(df, ["zip"])
        >>> classes.n_classes, sorted(classes.sizes.tolist())
        (2, [1, 2])
    """

    frame: pd.DataFrame
    quasi_identifiers: tuple[Hashable, ...]
    class_of_row: np.ndarray
    sizes: np.ndarray
    weights: np.ndarray | None = None
    _sensitive_cache: dict[tuple[Hashable, bool], SensitiveCounts] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: Encoded columns of ``frame``, shared by every partition of the same frame
    #: (a lattice search builds hundreds) so each column is factorized once.
    encodings: dict[tuple[Hashable, bool], EncodedColumn] = field(default_factory=dict, repr=False, compare=False)
    #: ``(snapshot, node, units)`` when a lattice search built these classes from a snapshot's units
    #: generalized to ``node`` (the frame then holds no QI values; ``units``: the snapshot's unit of
    #: each row here, ``None`` for all of them in order): a model that must look the generalized
    #: combinations up (exact k-map) reads them from there.
    lattice_node: tuple[Any, tuple[int, ...], np.ndarray | None] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[Hashable],
        *,
        weights: np.ndarray | None = None,
    ) -> EquivalenceClasses:
        """Group ``frame`` by ``quasi_identifiers`` (missing values form their own value)."""
        encoded = [encode_column(frame, column) for column in quasi_identifiers]
        return cls.from_codes(
            frame, tuple(quasi_identifiers), [(e.codes, e.cardinality) for e in encoded], weights=weights
        )

    @classmethod
    def from_codes(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[Hashable, ...],
        codes: Sequence[tuple[np.ndarray, int]],
        *,
        weights: np.ndarray | None = None,
        encodings: dict[tuple[Hashable, bool], EncodedColumn] | None = None,
    ) -> EquivalenceClasses:
        """Group rows whose per-column codes are already known (e.g. a QI subset or a generalization)."""
        class_of_row, n_classes = combine_codes(codes, len(frame))
        return cls.from_class_ids(
            frame, quasi_identifiers, class_of_row, n_classes, weights=weights, encodings=encodings
        )

    @classmethod
    def from_class_ids(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[Hashable, ...],
        class_of_row: np.ndarray,
        n_classes: int,
        *,
        weights: np.ndarray | None = None,
        encodings: dict[tuple[Hashable, bool], EncodedColumn] | None = None,
    ) -> EquivalenceClasses:
        """Wrap dense class ids ``0..n_classes-1`` (one per unit) computed elsewhere."""
        sizes = np.bincount(class_of_row, weights=weights, minlength=n_classes).astype(np.int64)
        return cls(
            frame=frame,
            quasi_identifiers=quasi_identifiers,
            class_of_row=class_of_row,
            sizes=sizes,
            weights=weights,
            encodings=encodings if encodings is not None else {},
        )

    def restricted(self, keep: np.ndarray) -> EquivalenceClasses:
        """The same partition limited to the units where ``keep`` is true (e.g. after suppression)."""
        class_ids, n_classes = _compact(self.class_of_row[keep], self.n_classes)
        weights = None if self.weights is None else self.weights[keep]
        # Unordered codes stay valid on a subset (absent values just count 0); ordered
        # codes are re-encoded, because the ordered EMD depends on the values present.
        encodings = {
            key: EncodedColumn(name=column.name, codes=column.codes[keep], values=column.values)
            for key, column in self.encodings.items()
            if not key[1]
        }
        restricted = EquivalenceClasses.from_class_ids(
            self.frame.iloc[np.flatnonzero(keep)],
            self.quasi_identifiers,
            class_ids,
            n_classes,
            weights=weights,
            encodings=encodings,
        )
        if self.lattice_node is None:
            return restricted
        snapshot, node, units = self.lattice_node
        kept = np.flatnonzero(keep) if units is None else units[keep]
        return replace(restricted, lattice_node=(snapshot, node, kept))

    @cached_property
    def n_rows(self) -> int:
        """Number of records (the sum of the weights when units are weighted)."""
        return int(self.sizes.sum())

    @property
    def n_units(self) -> int:
        """Number of units (rows of ``frame``)."""
        return int(self.class_of_row.shape[0])

    @cached_property
    def unit_weights(self) -> np.ndarray:
        """Records per unit (all ones when unweighted)."""
        return np.ones(self.n_units, dtype=np.int64) if self.weights is None else self.weights

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return int(self.sizes.shape[0])

    @cached_property
    def row_size(self) -> np.ndarray:
        """Size of the class each row belongs to."""
        return self.sizes[self.class_of_row]

    def sensitive(self, attribute: Hashable, *, ordered: bool = False) -> SensitiveCounts:
        """Count each value of ``attribute`` inside each class.

        ``ordered=True`` numbers the values in sorted order (missing last), as the
        ordered EMD of t-closeness requires. Results are cached per attribute.
        """
        cached = self._sensitive_cache.get((attribute, ordered))
        if cached is None:
            cached = self._count_sensitive(attribute, ordered=ordered)
            self._sensitive_cache[(attribute, ordered)] = cached
        return cached

    def _count_sensitive(self, attribute: Hashable, *, ordered: bool) -> SensitiveCounts:
        column = self.encodings.get((attribute, ordered))
        if column is None:
            column = encode_column(self.frame, attribute, ordered=ordered)
            self.encodings[(attribute, ordered)] = column
        m = max(column.cardinality, 1)
        keys = self.class_of_row * m + column.codes
        space = self.n_classes * m
        if space <= _DENSE_FACTOR * self.n_units + 1024:
            dense = np.bincount(keys, weights=self.weights, minlength=space).astype(np.int64)
            present = dense > 0  # weights are positive record counts
            pair_keys = np.flatnonzero(present)
            pair_count = dense[pair_keys]
            remap = np.cumsum(present) - 1
            pair_of_row = remap[keys]
        else:
            # One sort of the int64 keys gives the pairs already in (class, value) order;
            # about 3x faster than hashing them and then sorting the uniques.
            pair_keys, pair_of_row = np.unique(keys, return_inverse=True)
            pair_of_row = pair_of_row.reshape(-1)
            pair_count = np.bincount(pair_of_row, weights=self.weights, minlength=pair_keys.shape[0])
        pair_class = pair_keys // m
        pair_value = pair_keys % m
        class_start = np.zeros(self.n_classes + 1, dtype=np.int64)
        np.cumsum(np.bincount(pair_class, minlength=self.n_classes), out=class_start[1:])
        value_totals = np.bincount(column.codes, weights=self.weights, minlength=m).astype(np.int64)
        return SensitiveCounts(
            attribute=attribute,
            column=column,
            pair_class=pair_class.astype(np.int64),
            pair_value=pair_value.astype(np.int64),
            pair_count=pair_count.astype(np.int64),
            pair_of_row=pair_of_row.astype(np.int64),
            class_start=class_start,
            value_totals=value_totals,
        )

    def class_values(self, class_ids: Sequence[int] | np.ndarray) -> list[dict[Hashable, object]]:
        """The quasi-identifier values of the given classes (raw data: opt-in only)."""
        wanted = np.asarray(class_ids, dtype=np.int64)
        first_row = np.full(self.n_classes, self.n_units, dtype=np.int64)
        np.minimum.at(first_row, self.class_of_row, np.arange(self.n_units))
        rows = self.frame.iloc[first_row[wanted]][list(self.quasi_identifiers)]
        return [
            {column: (None if pd.isna(value) else value) for column, value in record.items()}
            for record in rows.to_dict(orient="records")
        ]
