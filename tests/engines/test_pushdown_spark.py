"""Spark (``local[1]``) gives the in-memory release: same node, NCP, published rows, re-measured models.

Few tests, one session (starting Spark costs seconds). Skipped with the reason
when PySpark or a Java runtime is missing.
"""

from __future__ import annotations

import os
import shutil

import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True)

from engine_checks import assert_same_release

from privacy_plugins.engines import SparkTable

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]


def to_spark(spark, frame: pd.DataFrame) -> SparkTable:
    types = {"i": "bigint", "f": "double"}
    schema = ", ".join(f"`{name}` {types.get(dtype.kind, 'string')}" for name, dtype in frame.dtypes.items())
    return SparkTable(spark.createDataFrame([tuple(r) for r in frame.itertuples(index=False)], schema=schema))


@pytest.mark.parametrize("method", ["case", "join"])
def test_demo_census_same_release_on_spark(spark, census, method: str) -> None:
    frame, problem = census
    assert_same_release(to_spark(spark, frame), frame, method=method, **problem)


def test_adult_sample_same_release_on_spark(spark, adult_sample) -> None:
    frame, problem = adult_sample
    assert_same_release(to_spark(spark, frame), frame, method="join", **problem)


def test_the_population_join_on_spark_equals_the_pandas_path(spark) -> None:  # type: ignore[no-untyped-def]
    """Issue 30: both GROUP BYs and the null-safe join run on the cluster; only class sizes are collected."""
    from test_population_join import QIS, close, reference, tables

    from privacy_plugins.engines import population_risk_in_engine

    sample, population = tables()

    def to_spark(frame: pd.DataFrame, schema: str) -> SparkTable:
        rows = [tuple(None if pd.isna(v) else v for v in row) for row in frame.itertuples(index=False)]
        return SparkTable(spark.createDataFrame(rows, schema=schema))

    table = to_spark(sample, "age bigint, sex string, zip string")
    census = to_spark(population, "age bigint, sex string, zip string, count bigint")
    close(
        population_risk_in_engine(table, census, quasi_identifiers=QIS).to_dict(),
        reference(sample, population).to_dict(),
    )


def test_removed_rows_go_by_their_raw_values_on_spark(spark) -> None:
    """``generalized(removed=…)`` as on the other engines (``test_removed_rows.py``), missing values included."""
    from test_removed_rows import FRAME, _expected, _generalized

    rows = [tuple(None if pd.isna(v) else getattr(v, "item", lambda v=v: v)() for v in r) for r in FRAME.values]
    table = SparkTable(spark.createDataFrame(rows, schema="age bigint, zip string, disease string"))  # None: NULL
    assert _generalized(table, pd.DataFrame({"age": [21], "zip": ["47906"]})).equals(_expected([0, 1]))
    assert _generalized(table, FRAME.iloc[[3, 5]], method="join").equals(_expected([3, 5]))


@pytest.mark.parametrize("method", ["case", "join"])
def test_a_research_subset_is_published_alone_on_spark(spark, method: str) -> None:  # type: ignore[no-untyped-def]
    """δ-presence on Spark: the same subset release as in memory (age, zip QIs; study the flag; note insensitive)."""
    from test_pushdown_research_subset import assert_same_subset_release, population

    frame = population(3)
    assert_same_subset_release(to_spark(spark, frame), frame, limit=0.1, method=method)


def test_a_population_table_of_the_session_is_summed_on_the_cluster(spark) -> None:  # type: ignore[no-untyped-def]
    """Issue 30: exact k-map's population counts per raw QI combination, from a view of the session."""
    from privacy_plugins.errors import ConfigurationError

    rows = [(20, "a", 3), (20, "a", 2), (21, "b", 4)]
    spark.createDataFrame(rows, schema="age bigint, zip string, count bigint").createOrReplaceTempView("pp_census")
    table = to_spark(spark, pd.DataFrame({"age": [20, 21], "zip": ["a", "b"]}))
    counts = table.population_counts("pp_census", ["age", "zip"], "count").sort_values("age").reset_index(drop=True)
    assert counts.astype(str).to_numpy().tolist() == [["20", "a", "5"], ["21", "b", "4"]]
    with pytest.raises(ConfigurationError, match="'pp_nope' is not a table or view of the Spark session"):
        table.population_counts("pp_nope", ["age", "zip"], "count")
    with pytest.raises(ConfigurationError, match=r"lacks column\(s\) \['people'\]"):
        table.population_counts("pp_census", ["age", "zip"], "people")
