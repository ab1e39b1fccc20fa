"""Generalization hierarchies as validated value objects backed by integer code matrices.

A hierarchy maps every raw value (a *leaf*, level 0) to one value per level up
to the top (usually ``*``). Internally it is a ``(height + 1) × leaves`` matrix
of codes: ``codes[level, leaf]`` numbers the generalized value among the values
of that level, so generalizing a whole column is one ``numpy.take``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from privacy_plugins.core.disclosure import examples
from privacy_plugins.errors import HierarchyError

__all__ = ["Hierarchy", "as_labels"]

_SHOW_MISSING = 10
#: Integer leaves spanning at most this many values are looked up through a table.
_INTEGER_TABLE_SPAN = 1 << 20


def _label(value: object) -> str:
    """One number, flag or text as :func:`as_labels` writes it."""
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() else str(value)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def _distinct_labels(uniques: pd.Index | np.ndarray, dtype: object) -> np.ndarray:
    """Labels of a column's distinct (non-missing) values; plain Python for the few of them."""
    kind = pd.api.types
    if kind.is_bool_dtype(dtype) or kind.is_numeric_dtype(dtype) or kind.is_string_dtype(dtype):
        return np.array([_label(value) for value in uniques], dtype=object)
    return as_labels(pd.Series(uniques, dtype=dtype)).to_numpy(dtype=object)


def as_labels(series: pd.Series) -> pd.Series:
    """Data values as the text labels hierarchies use (``39`` and ``39.0`` both become ``"39"``)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(object).where(series.isna(), series.astype(str))
    if pd.api.types.is_integer_dtype(series.dtype):
        return series.astype(object).where(series.isna(), series.astype("Int64").astype(str))
    if pd.api.types.is_float_dtype(series.dtype):

        def label(value: float) -> object:
            if pd.isna(value):
                return None
            return str(int(value)) if float(value).is_integer() else str(value)

        return series.map(label)
    return series.astype(object).where(series.isna(), series.astype(str))


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A validated generalization hierarchy for one attribute.

    Build it with :meth:`from_rows` (ARX layout: one row per leaf,
    ``leaf, level1, …, top``), or with the builders in
    :mod:`privacy_plugins.core.hierarchies.builders`.

    Example:
        >>> h = Hierarchy.from_rows("zip", [["47906", "4790*", "*"], ["47907", "4790*", "*"], ["47610", "4761*", "*"]])
        >>> h.height, h.generalize(["47907", "47610"], 1).tolist()
        (2, ['4790*', '4761*'])
    """

    attribute: Hashable
    labels: tuple[np.ndarray, ...]
    codes: np.ndarray

    @classmethod
    def from_rows(cls, attribute: Hashable, rows: Sequence[Sequence[object]]) -> Hierarchy:
        """Validate ARX-style rows and build the code matrix.

        Raises:
            HierarchyError: no rows, rows of different lengths, a leaf listed twice,
                or a value with two different parents at the next level.
        """
        table = [[str(cell) for cell in row] for row in rows]
        if not table:
            raise HierarchyError(f"hierarchy for {attribute!r} has no rows")
        widths = {len(row) for row in table}
        if len(widths) != 1 or 0 in widths:
            raise HierarchyError(
                f"hierarchy for {attribute!r} has rows of different lengths {sorted(widths)}; "
                "every leaf needs a value at every level"
            )
        matrix = np.asarray(table, dtype=object)
        leaves = pd.Index(matrix[:, 0])
        if leaves.has_duplicates:
            dup = leaves[leaves.duplicated()].unique().tolist()
            raise HierarchyError(
                f"hierarchy for {attribute!r} lists {len(dup)} leaf value(s) more than once{examples(dup)}"
            )
        labels: list[np.ndarray] = []
        codes = np.empty(matrix.shape[::-1], dtype=np.int64)
        for level in range(matrix.shape[1]):
            level_codes, level_labels = pd.factorize(matrix[:, level])
            codes[level] = level_codes
            labels.append(np.asarray(level_labels, dtype=object))
        if len(labels[-1]) != 1:
            hint = " (one column per row: is the delimiter right?)" if len(labels) == 1 else ""
            raise HierarchyError(
                f"hierarchy for {attribute!r} has {len(labels[-1])} values at its top level "
                f"{labels[-1][:_SHOW_MISSING].tolist()!r}; it needs a single root such as '*'{hint}"
            )
        for level in range(matrix.shape[1] - 1):
            pairs = pd.DataFrame({"child": codes[level], "parent": codes[level + 1]}).drop_duplicates()
            parents_per_child = pairs.groupby("child")["parent"].nunique()
            ambiguous = parents_per_child[parents_per_child > 1]
            if len(ambiguous):
                child = int(ambiguous.index[0])
                parents = labels[level + 1][pairs.loc[pairs["child"] == child, "parent"]].tolist()
                raise HierarchyError(
                    f"hierarchy for {attribute!r} is not a tree: {labels[level][child]!r} at level {level} "
                    f"has {len(parents)} parents at level {level + 1}: {parents!r}"
                )
        return cls(attribute=attribute, labels=tuple(labels), codes=codes)

    @property
    def height(self) -> int:
        """Number of generalization steps above the leaves."""
        return int(self.codes.shape[0]) - 1

    @property
    def leaves(self) -> np.ndarray:
        """The raw values the hierarchy covers."""
        return self.labels[0]

    @property
    def n_leaves(self) -> int:
        """|D|, the number of leaves."""
        return int(self.codes.shape[1])

    @cached_property
    def _leaf_index(self) -> pd.Index:
        return pd.Index(self.leaves)

    @cached_property
    def _arrow_leaves(self) -> pa.Array | None:
        """The leaves as Arrow strings (``None`` when a leaf is not text: then only the general path matches)."""
        leaves = self.leaves.tolist()
        return pa.array(leaves, type=pa.large_string()) if all(isinstance(v, str) for v in leaves) else None

    def _arrow_leaf_codes(self, series: pd.Series) -> np.ndarray | None:
        """Leaf codes of an Arrow-backed text column by one hash lookup per row, or ``None``.

        Text is its own label, so looking each value up among the leaves
        (``pyarrow.compute.index_in``) is what the general path does, without
        factorizing the column first (about 40 % less time on a million rows).
        ``None`` — the general path decides, and words the error — when the column is
        not Arrow text, or a value is missing or not a leaf.
        """
        dtype = series.dtype
        arrow_text = (isinstance(dtype, pd.StringDtype) and dtype.storage in ("pyarrow", "pyarrow_numpy")) or (
            isinstance(dtype, pd.ArrowDtype)
            and (pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype))
        )
        if not arrow_text or self._arrow_leaves is None:
            return None
        data = series.array.__arrow_array__()
        leaves = self._arrow_leaves if data.type == pa.large_string() else self._arrow_leaves.cast(data.type)
        found = pc.index_in(data, value_set=leaves)
        if found.null_count:
            return None
        return np.asarray(found.to_numpy(), dtype=np.int64)

    @cached_property
    def _integer_leaves(self) -> tuple[int, np.ndarray] | None:
        """``(lowest, table)``: ``table[v - lowest]`` is the leaf code of the integer ``v`` (−1: not a leaf).

        An integer's label is ``str(v)``, so only leaves spelled that way (``"17"``, not
        ``"017"`` or ``" 17"``) are entered. ``None`` when no leaf is an integer or their
        span is too wide for a table.
        """
        found: dict[int, int] = {}
        for code, leaf in enumerate(self.leaves.tolist()):
            try:
                value = int(leaf)
            except (TypeError, ValueError):
                continue
            if str(value) == leaf:
                found[value] = code
        if not found or max(found) - min(found) > _INTEGER_TABLE_SPAN:
            return None
        lowest = min(found)
        table = np.full(max(found) - lowest + 1, -1, dtype=np.int64)
        table[np.fromiter(found, dtype=np.int64, count=len(found)) - lowest] = list(found.values())
        return lowest, table

    def _integer_leaf_codes(self, series: pd.Series) -> np.ndarray | None:
        """Leaf codes of a numpy integer column by one table lookup per row, or ``None``.

        Labelling an integer gives ``str(v)``, which the table maps directly (no
        factorize, no text). ``None`` — the general path decides, and words the
        error — when the column is not numpy integers or a value is not a leaf.
        """
        integers = self._integer_leaves
        if series.dtype.kind not in "iu" or integers is None or len(series) == 0:
            return None
        lowest, table = integers
        values = series.to_numpy()
        if int(values.min()) < lowest or int(values.max()) >= lowest + table.shape[0]:
            return None
        codes = table[values.astype(np.int64, copy=False) - lowest]
        return None if bool((codes < 0).any()) else codes

    @cached_property
    def leaf_counts(self) -> tuple[np.ndarray, ...]:
        """For each level, the number of leaves under each of its values."""
        return tuple(
            np.bincount(self.codes[level], minlength=len(self.labels[level])) for level in range(len(self.labels))
        )

    def check_level(self, level: int) -> int:
        """Validate a level number for this hierarchy."""
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= self.height:
            raise HierarchyError(f"level for {self.attribute!r} must be an integer in 0..{self.height}, got {level!r}")
        return int(level)

    def leaf_codes(self, values: pd.Series | Sequence[object]) -> np.ndarray:
        """The leaf code of every value; every value must be a leaf.

        The column is factorized once as it is (Arrow strings and integers factorize
        without becoming Python objects); only its distinct values are turned into
        labels and looked up among the leaves, so the cost per row is one hash and
        one ``take`` (object columns are labelled first, see below).

        Raises:
            HierarchyError: listing the first values (and missing values) absent from the hierarchy.
        """
        series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
        fast = self._arrow_leaf_codes(series)
        if fast is None:
            fast = self._integer_leaf_codes(series)
        if fast is not None:
            return fast
        if series.dtype == object:
            # Python objects hash ``True`` and ``1`` alike: label first, so they stay apart.
            series = as_labels(series)
        row_codes, uniques = pd.factorize(series, use_na_sentinel=True)
        row_codes = np.asarray(row_codes, dtype=np.int64)
        if (row_codes < 0).any():
            raise HierarchyError(
                f"column {self.attribute!r} has {int((row_codes < 0).sum())} missing values (NaN/None), "
                "which its hierarchy cannot generalize; fill them or add them as a leaf"
            )
        labels = _distinct_labels(uniques, series.dtype)
        unique_codes = self._leaf_index.get_indexer(pd.Index(labels, dtype=object))
        absent = np.flatnonzero(unique_codes < 0)
        if absent.shape[0]:
            shown = [labels[i] for i in absent[:_SHOW_MISSING]]
            raise HierarchyError(
                f"column {self.attribute!r} has {absent.shape[0]} value(s) that are not leaves of its hierarchy"
                + examples(shown)
            )
        return np.asarray(unique_codes, dtype=np.int64)[row_codes]

    def generalize(self, values: pd.Series | Sequence[object], level: int) -> np.ndarray:
        """The labels of ``values`` generalized to ``level``."""
        level = self.check_level(level)
        return self.labels[level][self.codes[level][self.leaf_codes(values)]]

    def to_rows(self) -> list[list[str]]:
        """ARX-style rows: ``[leaf, level1, …, top]`` for every leaf."""
        columns = [self.labels[level][self.codes[level]] for level in range(self.height + 1)]
        return [list(row) for row in zip(*columns, strict=True)]
