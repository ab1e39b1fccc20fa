"""The pandas boundary: table validation and integer encoding of columns.

Everything downstream works on integer codes produced here, once per column, so
grouping is plain numpy arithmetic. Missing values (``NaN``, ``None``, ``pd.NA``,
``NaT``) are *not* dropped: they are encoded as one value of their own, exactly as
SQL ``GROUP BY`` puts all NULLs in one group. A record with a missing quasi-identifier
is therefore indistinguishable from other records missing the same value, and it is
counted, never silently lost.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.errors import ConfigurationError, EmptyTableError, RoleConflictError

__all__ = ["EncodedColumn", "encode_column", "validate_frame"]


def validate_frame(frame: object) -> pd.DataFrame:
    """Check that ``frame`` is a non-empty DataFrame with unique column labels."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    labels = pd.Index([str(c).strip() for c in frame.columns])  # 1 and "1", "a" and "a " collide downstream
    duplicated = labels[labels.duplicated()].unique().tolist()
    if duplicated:
        raise RoleConflictError(f"table has duplicated column names: {duplicated!r}")
    if len(frame) == 0:
        raise EmptyTableError("table is empty (0 rows); nothing can be measured or released")
    return frame


@dataclass(frozen=True)
class EncodedColumn:
    """A column as dense integer codes ``0..cardinality-1`` plus the value of each code.

    With ``ordered=True`` the codes follow the sort order of the values (missing last),
    which ordered distances such as t-closeness's EMD need.
    """

    name: Hashable
    codes: np.ndarray
    values: pd.Index

    @property
    def cardinality(self) -> int:
        """Number of distinct values, a missing value counting as one."""
        return len(self.values)


def encode_column(frame: pd.DataFrame, column: Hashable, *, ordered: bool = False) -> EncodedColumn:
    """Factorize one column into integer codes; missing values get a code of their own."""
    series = frame[column]
    try:
        if ordered:
            codes, values = pd.factorize(series, sort=True, use_na_sentinel=True)
            missing = codes < 0
            if missing.any():
                codes = np.where(missing, len(values), codes)
                values = values.append(pd.Index([None], dtype=object))
        else:
            codes, values = pd.factorize(series, use_na_sentinel=False)
    except TypeError as exc:
        raise ConfigurationError(
            f"column {column!r} holds values that cannot be compared or hashed (e.g. lists or dicts): {exc}"
        ) from exc
    return EncodedColumn(name=column, codes=np.asarray(codes, dtype=np.int64), values=pd.Index(values))
