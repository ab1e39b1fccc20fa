"""Identifier detection pushed down: the engine counts and draws the sample, the detector judges only the sample.

Per column the database (or Spark) computes the number of distinct non-null values and of
non-null rows, and draws a random sample of at most ``limit`` distinct values; only that
sample leaves the engine (never a row with its other columns). The detector
(:func:`~privacy_plugins.core.identifiers.detect_identifiers` with ``totals=``) then runs
its value checks (patterns, Luhn/mod-97/VIN check digits, the name list) on the sample: the
check digits and the name list are not SQL, and SQLite has no regular expressions.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["DistinctSample", "sample_distinct_spark", "sample_distinct_sql", "sql_columns"]


@dataclass(frozen=True)
class DistinctSample:
    """Per column: a random sample of its distinct non-null values, and its whole-table (distinct, rows) counts."""

    drawn: dict[str, pd.Series]
    totals: dict[Hashable, tuple[int, int]]

    def frames(self) -> list[pd.DataFrame]:
        """One single-column frame per column (the columns' samples differ in length)."""
        return [values.to_frame(name) for name, values in self.drawn.items()]


def sql_columns(connection: Any, selectable: Any) -> list[str]:
    """The column names of a table or SELECT, read with ``LIMIT 0`` (no row)."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import subquery_of

    return [
        str(c) for c in connection.execute(sa.select(sa.text("*")).select_from(subquery_of(selectable)).limit(0)).keys()
    ]


def sample_distinct_sql(connection: Any, selectable: Any, columns: Sequence[str], limit: int) -> DistinctSample:
    """Two queries per column on an open SQLAlchemy connection: the counts, then ``limit`` random distinct values."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import subquery_of

    table = subquery_of(selectable)
    drawn: dict[str, pd.Series] = {}
    totals: dict[Hashable, tuple[int, int]] = {}
    for name in columns:
        column: Any = sa.column(name)
        count = sa.select(sa.func.count(sa.distinct(column)), sa.func.count(column)).select_from(table)
        distinct, rows = connection.execute(count).one()
        picked = (
            sa.select(column)
            .select_from(table)
            .where(column.is_not(None))
            .group_by(column)
            .order_by(sa.func.random())
            .limit(limit)
        )
        drawn[name] = pd.Series([row[0] for row in connection.execute(picked)], name=name)
        totals[name] = (int(distinct), int(rows))
    return DistinctSample(drawn, totals)


def sample_distinct_spark(frame: Any, columns: Sequence[str], limit: int, seed: int = 0) -> DistinctSample:
    """The same on a Spark DataFrame in two jobs whatever the number of columns.

    One aggregate job counts every column; one job stacks the columns as (column, value as
    text), keeps the distinct pairs and ranks them at random per column (a window), and
    collects at most ``limit`` per column. The values come back in their column's type.
    """
    from pyspark.sql import Window, functions

    if not columns:
        return DistinctSample({}, {})
    quoted = [functions.col(f"`{c}`") for c in columns]
    aggregates = [functions.countDistinct(c).alias(f"d{i}") for i, c in enumerate(quoted)]
    aggregates += [functions.count(c).alias(f"r{i}") for i, c in enumerate(quoted)]
    counts = frame.agg(*aggregates).collect()[0]
    pairs = functions.array(
        *(functions.struct(functions.lit(i).alias("i"), c.cast("string").alias("v")) for i, c in enumerate(quoted))
    )
    stacked = frame.select(functions.explode(pairs).alias("p")).select("p.i", "p.v").where("v IS NOT NULL").distinct()
    order = Window.partitionBy("i").orderBy(functions.rand(seed))
    picked = stacked.withColumn("r", functions.row_number().over(order)).where(functions.col("r") <= limit)
    collected = pd.DataFrame([(row["i"], row["v"]) for row in picked.select("i", "v").collect()], columns=["i", "v"])
    types = dict(frame.dtypes)
    drawn: dict[str, pd.Series] = {}
    totals: dict[Hashable, tuple[int, int]] = {}
    for i, name in enumerate(columns):
        text = collected.loc[collected["i"] == i, "v"].reset_index(drop=True)
        drawn[name] = _typed(text, types[name]).rename(name)
        totals[name] = (int(counts[f"d{i}"]), int(counts[f"r{i}"]))
    return DistinctSample(drawn, totals)


def _typed(text: pd.Series, spark_type: str) -> pd.Series:
    """Values cast to text by Spark, back in their column's type (the detector reads numbers and dates by type)."""
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return text.astype("int64")
    if spark_type in ("float", "double") or spark_type.startswith("decimal"):
        return pd.to_numeric(text).astype("float64")
    if spark_type == "boolean":
        return text.str.lower().eq("true")
    if spark_type == "date" or spark_type.startswith("timestamp"):
        return pd.Series(pd.to_datetime(text))
    return text.astype(object)
