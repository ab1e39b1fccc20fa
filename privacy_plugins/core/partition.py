"""Group once, measure many: equivalence classes and (class, sensitive value) counts.

:class:`EquivalenceClasses` plays the role of ARX's ``HashGroupify``: it is built
once from the quasi-identifier codes and every measure reads it. Building it is
vectorized: the per-column codes are combined into one integer key (mixed radix),
compacted, and counted with ``numpy.bincount``; no Python loop runs over rows or
classes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from privacy_plugins.core.frame import EncodedColumn, encode_column

__all__ = ["EquivalenceClasses", "SensitiveCounts", "combine_codes"]

# Above this many possible keys per row, compaction uses hashing instead of a
# dense bincount table (which would be mostly empty and waste memory).
_DENSE_FACTOR = 4
_KEY_LIMIT = 2**62


def _compact(keys: np.ndarray, key_space: int) -> tuple[np.ndarray, int]:
    """Map arbitrary non-negative int64 keys onto dense ids ``0..n_distinct-1``."""
    if key_space <= _DENSE_FACTOR * len(keys) + 1024:
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
    if not columns:
        return np.zeros(n_rows, dtype=np.int64), 1
    keys = np.zeros(n_rows, dtype=np.int64)
    space = 1
    for codes, cardinality in columns:
        cardinality = max(int(cardinality), 1)
        if space * cardinality >= _KEY_LIMIT:
            keys, space = _compact(keys, space)
        keys = keys * cardinality + codes
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
        return np.maximum.reduceat(self.pair_count, self.class_start[:-1])


@dataclass(frozen=True, eq=False)
class EquivalenceClasses:
    """The partition of a table's rows by their quasi-identifier values.

    Build it with :meth:`from_frame`; it keeps a reference to the frame only to
    encode sensitive attributes on demand and to show a class's values when a
    caller explicitly opts in.

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

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, quasi_identifiers: Sequence[Hashable]) -> EquivalenceClasses:
        """Group ``frame`` by ``quasi_identifiers`` (missing values form their own value)."""
        encoded = [encode_column(frame, column) for column in quasi_identifiers]
        return cls.from_codes(frame, tuple(quasi_identifiers), [(e.codes, e.cardinality) for e in encoded])

    @classmethod
    def from_codes(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[Hashable, ...],
        codes: Sequence[tuple[np.ndarray, int]],
    ) -> EquivalenceClasses:
        """Group rows whose per-column codes are already known (e.g. a QI subset)."""
        class_of_row, n_classes = combine_codes(codes, len(frame))
        sizes = np.bincount(class_of_row, minlength=n_classes).astype(np.int64)
        return cls(frame=frame, quasi_identifiers=quasi_identifiers, class_of_row=class_of_row, sizes=sizes)

    @property
    def n_rows(self) -> int:
        """Number of records."""
        return int(self.class_of_row.shape[0])

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
        ordered EMD of t-closeness requires.
        """
        column = encode_column(self.frame, attribute, ordered=ordered)
        m = max(column.cardinality, 1)
        keys = self.class_of_row * m + column.codes
        space = self.n_classes * m
        if space <= _DENSE_FACTOR * self.n_rows + 1024:
            dense = np.bincount(keys, minlength=space)
            pair_keys = np.flatnonzero(dense)
            pair_count = dense[pair_keys]
            remap = np.cumsum(dense > 0) - 1
            pair_of_row = remap[keys]
        else:
            ids, uniques = pd.factorize(keys)
            uniques = np.asarray(uniques, dtype=np.int64)
            order = np.argsort(uniques, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.shape[0])
            pair_keys = uniques[order]
            pair_of_row = rank[np.asarray(ids, dtype=np.int64)]
            pair_count = np.bincount(pair_of_row, minlength=pair_keys.shape[0])
        pair_class = pair_keys // m
        pair_value = pair_keys % m
        class_start = np.zeros(self.n_classes + 1, dtype=np.int64)
        np.cumsum(np.bincount(pair_class, minlength=self.n_classes), out=class_start[1:])
        value_totals = np.bincount(column.codes, minlength=m).astype(np.int64)
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
        first_row = np.full(self.n_classes, self.n_rows, dtype=np.int64)
        np.minimum.at(first_row, self.class_of_row, np.arange(self.n_rows))
        rows = self.frame.iloc[first_row[wanted]][list(self.quasi_identifiers)]
        return [
            {column: (None if pd.isna(value) else value) for column, value in record.items()}
            for record in rows.to_dict(orient="records")
        ]
