"""The release and the raw tables as integer codes and numbers, read through the coverage rules.

A column is *numeric* when it is numeric (not boolean) both in the original and in the
release: distances and predicates then use the numbers. Any other column is read as
*labels*: the release's distinct labels (:func:`~privacy_plugins.core.hierarchies.as_labels`)
are numbered, and a raw table's distinct values are related to them by the coverage
matrix of :mod:`privacy_plugins.core.coverage` — a label stands for every leaf below it,
a range for the numbers inside it, ``*`` for everything.

The distance between a raw value and a release entry (Anonymeter's Gower-like distance):
for a numeric column ``|x - y| / span`` (span: the column's range over the original and
the release), capped at 1; for a label column 0 when the label covers the value, else the
distance from the number to the label's interval over the span when both are numbers,
else 1. A missing value is at 0 from a missing one and at 1 from anything else.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from privacy_plugins.core.coverage import covering_matrix, label_intervals
from privacy_plugins.core.hierarchies import Hierarchy, as_labels

__all__ = ["ColumnCode", "EncodedRelease", "EncodedTable", "encode_release"]

#: The smallest distance of a value to a label that does not cover it (a covered value is at 0).
_NEAR = 1e-6


def _is_number(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype))


@dataclass(frozen=True)
class ColumnCode:
    """How one column of the release reads: numbers, or numbered labels.

    Attributes:
        name: the column.
        numeric: true when both tables hold numbers here.
        codes: per release row, the label code (label columns) or the distinct-value code (numeric).
        numbers: per code, the number (numeric columns; ``NaN`` for a missing value).
        labels: per code, the label (label columns; the distinct numbers as labels otherwise).
        span: the column's numeric range over the original and the release (1 when empty or flat).
        low, high: per label, its numeric interval (``NaN`` when it is not a number or a range).
        hierarchy: the hierarchy the release generalizes the column along, if given.
        raw_numeric: the original column holds numbers (so ranges can cover its values).
    """

    name: Hashable
    numeric: bool
    codes: np.ndarray
    numbers: np.ndarray
    labels: pd.Index
    span: float
    low: np.ndarray
    high: np.ndarray
    hierarchy: Hierarchy | None
    raw_numeric: bool


@dataclass(frozen=True)
class EncodedTable:
    """A raw table (targets or control) against the release's columns.

    Per column: ``codes`` (the row's distinct-value code), and per distinct value
    ``numbers`` (its number or ``NaN``) and ``covered`` (boolean, values × release labels;
    ``None`` for numeric columns, which compare numbers).
    """

    n_rows: int
    codes: tuple[np.ndarray, ...]
    numbers: tuple[np.ndarray, ...]
    covered: tuple[np.ndarray | None, ...]
    #: Derived arrays kept between calls (e.g. per-label row masks); not part of the value.
    cache: dict[tuple[str, int], np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    def take(self, rows: np.ndarray) -> EncodedTable:
        """The table of ``rows`` only (the per-value arrays are shared)."""
        return EncodedTable(len(rows), tuple(code[rows] for code in self.codes), self.numbers, self.covered)

    def distinct(self) -> EncodedTable:
        """One row per distinct combination of codes (Anonymeter drops duplicate records)."""
        return self.take(_first_of_each(self.codes, self.n_rows))


@dataclass(frozen=True)
class EncodedRelease:
    """The release's columns read once; raw tables are encoded against it."""

    columns: tuple[ColumnCode, ...]
    n_rows: int

    def take(self, rows: np.ndarray) -> EncodedRelease:
        """The release of ``rows`` only (labels and numbers are kept, so codes keep their meaning)."""
        columns = tuple(replace(column, codes=column.codes[rows]) for column in self.columns)
        return EncodedRelease(columns, len(rows))

    def distinct(self) -> EncodedRelease:
        """One row per distinct combination of codes."""
        return self.take(_first_of_each(tuple(column.codes for column in self.columns), self.n_rows))

    def index(self, name: Hashable) -> int:
        """Position of column ``name``."""
        return [column.name for column in self.columns].index(name)

    def encode(self, table: pd.DataFrame) -> EncodedTable:
        """``table``'s values as codes, with their numbers and which labels cover them."""
        codes: list[np.ndarray] = []
        numbers: list[np.ndarray] = []
        covered: list[np.ndarray | None] = []
        for column in self.columns:
            raw = table[column.name]
            code, uniques = pd.factorize(raw, use_na_sentinel=False)
            distinct = pd.Series(uniques, dtype=raw.dtype)
            codes.append(code.astype(np.int64))
            numbers.append(
                distinct.to_numpy(dtype=float, na_value=np.nan)
                if _is_number(distinct)
                else np.full(len(distinct), np.nan)
            )
            covered.append(None if column.numeric else covering_matrix(distinct, column.labels, column.hierarchy))
        return EncodedTable(len(table), tuple(codes), tuple(numbers), tuple(covered))

    def distance(self, table: EncodedTable, position: int, values: np.ndarray) -> np.ndarray:
        """Distances (``values``, codes of ``table``'s distinct values × release codes) on column ``position``.

        In [0, 1]; only the rows asked for are computed (a large table has many distinct values).
        """
        column = self.columns[position]
        x = table.numbers[position][values][:, None]
        if column.numeric:
            y = column.numbers[None, :]
            with np.errstate(invalid="ignore"):
                out = np.minimum(np.abs(x - y) / column.span, 1.0)
            out[np.isnan(out)] = 1.0
            out[np.isnan(x) & np.isnan(y)] = 0.0
            return out
        covered = table.covered[position]
        assert covered is not None
        covered = covered[values]
        with np.errstate(invalid="ignore"):
            gap = (np.maximum(column.low[None, :] - x, 0.0) + np.maximum(x - column.high[None, :], 0.0)) / column.span
            out = np.minimum(np.maximum(gap, _NEAR), 1.0)
        out[np.isnan(out)] = 1.0
        out[covered] = 0.0
        return out


def _first_of_each(codes: Sequence[np.ndarray], n_rows: int) -> np.ndarray:
    """Row index of the first occurrence of each distinct code combination, in row order."""
    if not codes:
        return np.arange(min(n_rows, 1))
    key = np.zeros(n_rows, dtype=np.int64)
    for code in codes:
        key = pd.factorize(key * (int(code.max(initial=0)) + 1) + code)[0].astype(np.int64)
    return np.sort(np.unique(key, return_index=True)[1])


def encode_release(
    release: pd.DataFrame,
    original: pd.DataFrame,
    columns: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
) -> EncodedRelease:
    """Read ``columns`` of the release against the original's types (see the module docstring)."""
    hierarchies = hierarchies or {}
    encoded: list[ColumnCode] = []
    for name in columns:
        published, raw = release[name], original[name]
        numeric = _is_number(published) and _is_number(raw)
        if numeric:
            code, uniques = pd.factorize(published, use_na_sentinel=False)
            values = pd.Series(uniques, dtype=published.dtype).to_numpy(dtype=float, na_value=np.nan)
            labels = pd.Index(as_labels(pd.Series(uniques, dtype=published.dtype)).to_numpy(dtype=object))
            low = high = values
        else:  # labels of the distinct values (39 and 39.0 are one label)
            first, uniques = pd.factorize(published, use_na_sentinel=False)
            merged, distinct = pd.factorize(as_labels(pd.Series(uniques, dtype=published.dtype)), use_na_sentinel=False)
            code = np.asarray(merged, dtype=np.int64)[first]
            labels = pd.Index(np.asarray(distinct, dtype=object))
            values = np.full(len(labels), np.nan)
            # intervals serve distances to numbers only
            low, high = label_intervals(labels) if _is_number(raw) else (values, values)
        numbers = raw.to_numpy(dtype=float, na_value=np.nan) if _is_number(raw) else np.empty(0)
        every = np.concatenate([numbers, low[np.isfinite(low)], high[np.isfinite(high)]])
        every = every[np.isfinite(every)]
        span = float(every.max() - every.min()) if len(every) else 0.0
        encoded.append(
            ColumnCode(
                name=name,
                numeric=numeric,
                codes=code.astype(np.int64),
                numbers=values,
                labels=labels,
                span=span if span > 0 else 1.0,
                low=low,
                high=high,
                hierarchy=hierarchies.get(name),
                raw_numeric=_is_number(raw),
            )
        )
    return EncodedRelease(tuple(encoded), len(release))
