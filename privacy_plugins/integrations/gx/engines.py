"""How each GX execution engine hands a table to the core: records on pandas, GROUP BY aggregates elsewhere.

SQL and Spark group by the needed columns where the table lives and send back one
row per distinct combination with its record count, never the records. NULLs form
one group, as SQL ``GROUP BY`` does. The core then builds the same
:class:`~privacy_plugins.core.partition.EquivalenceClasses` from those weighted
rows as from the records (``weights=counts``), so every engine gives the numbers
``privacy-plugins measure`` gives.

The SQL queries run and are fetched inside ``get_connection()``. GX's own
``execute_query`` closes the connection before the rows are read, and with
``duckdb_engine`` that loses the result. Because of this, these metrics work
on DuckDB with no patch to GX.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import UnknownColumnError

if TYPE_CHECKING:
    from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine

__all__ = ["COUNT_COLUMN", "classes_from_pandas", "classes_from_spark", "classes_from_sql"]

#: Name of the record-count column of the aggregates (chosen not to clash with real columns).
COUNT_COLUMN = "__privacy_plugins_records__"


def _check_columns(columns: Sequence[str], available: Sequence[Any]) -> None:
    present = set(available)
    missing = [column for column in columns if column not in present]
    if missing:
        raise UnknownColumnError(f"columns not found in table: {missing!r}; available columns: {list(available)!r}")


def _numeric_columns_as_numbers(aggregates: pd.DataFrame) -> None:
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


def _from_aggregates(aggregates: pd.DataFrame, quasi_identifiers: Sequence[str]) -> EquivalenceClasses:
    validate_frame(aggregates)  # no aggregate row ⇔ empty table: EmptyTableError
    _numeric_columns_as_numbers(aggregates)
    weights = aggregates.pop(COUNT_COLUMN).to_numpy(dtype=np.int64)
    return EquivalenceClasses.from_frame(aggregates, list(quasi_identifiers), weights=weights)


def classes_from_pandas(
    frame: pd.DataFrame, *, columns: Sequence[str], quasi_identifiers: Sequence[str]
) -> EquivalenceClasses:
    """Group the records themselves: on pandas the core is faster than a group-by first."""
    _check_columns(columns, list(frame.columns))
    return EquivalenceClasses.from_frame(validate_frame(frame), list(quasi_identifiers))


def classes_from_sql(
    execution_engine: SqlAlchemyExecutionEngine,
    selectable: Any,
    *,
    columns: Sequence[str],
    quasi_identifiers: Sequence[str],
) -> EquivalenceClasses:
    """``SELECT columns, COUNT(*) … GROUP BY columns`` in the database; only the aggregates come back."""
    import sqlalchemy as sa

    if isinstance(selectable, (sa.Select, sa.TextualSelect)):
        selectable = selectable.subquery()
    keys: list[Any] = [sa.column(column) for column in columns]
    query = sa.select(*keys, sa.func.count().label(COUNT_COLUMN)).select_from(selectable).group_by(*keys)
    with execution_engine.get_connection() as connection:
        available = list(connection.execute(sa.select(sa.text("*")).select_from(selectable).limit(0)).keys())
        _check_columns(columns, available)
        rows = connection.execute(query).fetchall()
    aggregates = pd.DataFrame.from_records(rows, columns=[*columns, COUNT_COLUMN])
    return _from_aggregates(aggregates, quasi_identifiers)


def classes_from_spark(frame: Any, *, columns: Sequence[str], quasi_identifiers: Sequence[str]) -> EquivalenceClasses:
    """``groupBy(columns).count()`` on the cluster; only the aggregates are collected."""
    from pyspark.sql import functions

    _check_columns(columns, frame.columns)
    grouped = frame.groupBy(*[frame[column] for column in columns]).agg(
        functions.count(functions.lit(1)).alias(COUNT_COLUMN)
    )
    return _from_aggregates(grouped.toPandas(), quasi_identifiers)
