"""Weighted aggregates (one row per distinct combination + its record count) → the core's classes.

Every engine groups by the needed columns where the table lives and sends back
one row per distinct combination with its record count, never the records.
NULLs form one group, as SQL ``GROUP BY`` does. The core builds the same
:class:`~privacy_plugins.core.partition.EquivalenceClasses` from those weighted
rows as from the records (``weights=counts``), so every engine gives the numbers
``privacy-plugins measure`` gives.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import UnknownColumnError

__all__ = ["COUNT_COLUMN", "check_columns", "classes_from_aggregates", "numeric_columns_as_numbers"]

#: Name of the record-count column of the aggregates (chosen not to clash with real columns).
COUNT_COLUMN = "__privacy_plugins_records__"


def check_columns(columns: Sequence[str], available: Sequence[Any]) -> None:
    """Fail naming the columns a table lacks (before any query runs)."""
    present = set(available)
    missing = [column for column in columns if column not in present]
    if missing:
        raise UnknownColumnError(f"columns not found in table: {missing!r}; available columns: {list(available)!r}")


def numeric_columns_as_numbers(aggregates: pd.DataFrame) -> None:
    """Give SQL/Spark ``DECIMAL``/``NUMERIC`` columns (fetched as ``Decimal`` objects) a numeric dtype.

    The core decides ``t_distance="auto"`` from a column's type (ordered for
    numbers): a decimal column is numeric in the database and must be here too.
    """
    for column in aggregates.columns:
        values = aggregates[column]
        if values.dtype != object:
            continue
        present = values.dropna()
        if len(present) and all(
            isinstance(v, decimal.Decimal | int | float) and not isinstance(v, bool) for v in present
        ):
            aggregates[column] = pd.to_numeric(values)


def classes_from_aggregates(aggregates: pd.DataFrame, quasi_identifiers: Sequence[str]) -> EquivalenceClasses:
    """The equivalence classes of the records the aggregates count (``COUNT_COLUMN`` is removed)."""
    validate_frame(aggregates)  # no aggregate row ⇔ empty table: EmptyTableError
    numeric_columns_as_numbers(aggregates)
    weights = aggregates.pop(COUNT_COLUMN).to_numpy(dtype=np.int64)
    return EquivalenceClasses.from_frame(aggregates, list(quasi_identifiers), weights=weights)
