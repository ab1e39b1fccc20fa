"""The expectations on GX's Spark engine (PySpark in local mode): same numbers as the core.

One Spark session for the whole module (starting one costs ~5 s). Skipped when
PySpark is not installed (``pip install 'privacy-plugins[spark]'``) or no Java
runtime is found.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("great_expectations")
pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True)

import privacy_plugins as pp
from privacy_plugins.integrations.gx import (
    ExpectTableToBeKAnonymous,
    ExpectTableToBeLDiverse,
    ExpectTableToBeTClose,
    ExpectTableToSatisfyPersonalizedLeakageBound,
    load_suite,
    outcomes,
    validate_dataframe,
)

QIS = ["age", "sex", "zip"]
# PySpark 4.1's toPandas passes pandas 3 a deprecated copy= keyword; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")


def to_spark(spark, frame: pd.DataFrame):
    """A Spark DataFrame with real NULLs (not NaN or the string 'nan') where pandas has missing values."""
    types = {"i": "bigint", "u": "bigint", "f": "double", "b": "boolean"}
    schema = ", ".join(f"`{name}` {types.get(dtype.kind, 'string')}" for name, dtype in frame.dtypes.items())
    rows = [
        tuple(None if pd.isna(value) else (value.item() if hasattr(value, "item") else value) for value in row)
        for row in frame.itertuples(index=False)
    ]
    return spark.createDataFrame(rows, schema=schema)


def census_with_nulls(n_rows: int = 1200) -> pd.DataFrame:
    frame = pp.generate_census(n_rows, seed=5)
    rng = np.random.default_rng(5)
    frame["age"] = frame["age"].astype(float)
    frame.loc[rng.random(n_rows) < 0.03, "age"] = np.nan
    frame["zip"] = frame["zip"].astype(object)
    frame.loc[rng.random(n_rows) < 0.03, "zip"] = None
    frame["disease"] = frame["disease"].astype(object)
    frame.loc[rng.random(n_rows) < 0.05, "disease"] = None
    frame["pleak"] = rng.choice([0.2, 0.5, 1.0], size=n_rows)
    return frame


def test_same_numbers_as_pandas_and_the_core(spark, context, pandas_batch) -> None:
    frame = census_with_nulls()
    report = pp.measure(frame, quasi_identifiers=QIS, sensitive_attributes=["disease"], l=2, c=3, bound=0.5).to_dict()
    asset = context.data_sources.add_spark("spark").add_dataframe_asset("table")
    spark_batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(
        batch_parameters={"dataframe": to_spark(spark, frame)}
    )
    reference = pandas_batch(frame)
    cases = [
        (ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2, suppression_limit=0.3), None),
        (ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2), "k"),
        (ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="disease", l=2), "distinct_l"),
        (
            ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="disease", l=2, l_variant="entropy"),
            "entropy_l",
        ),
        (
            ExpectTableToBeLDiverse(
                quasi_identifiers=QIS, sensitive_attribute="disease", l=2, l_variant="recursive", c=3
            ),
            "recursive_c",
        ),
        (ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="disease", t=0.3), "t_closeness"),
        (ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="income", t=0.3, t_distance="ordered"), None),
        (
            ExpectTableToSatisfyPersonalizedLeakageBound(
                quasi_identifiers=QIS, sensitive_attribute="disease", bound=0.5
            ),
            "max_leakage",
        ),
        (
            ExpectTableToSatisfyPersonalizedLeakageBound(
                quasi_identifiers=QIS, sensitive_attribute="disease", bound_column="pleak"
            ),
            None,
        ),
    ]
    for expectation, key in cases:
        got, expected = spark_batch.validate(expectation), reference.validate(expectation)
        assert not got.exception_info.get("raised_exception"), got.exception_info
        assert got.success == expected.success
        observed = got.result["observed_value"]
        if observed is None:
            assert expected.result["observed_value"] is None
        else:
            assert observed == pytest.approx(expected.result["observed_value"], rel=1e-12)
        if key is not None:
            assert (observed is None and report[key] is None) or observed == pytest.approx(report[key], rel=1e-12)
        assert got.result["details"]["violations"] == expected.result["details"]["violations"]
        assert got.result["details"]["class_size_histogram"] == expected.result["details"]["class_size_histogram"]


def test_null_semantics_on_spark(spark, context) -> None:
    frame = pd.DataFrame({"q": ["a", "a", None, None, None], "s": ["x", "y", None, None, "x"]})
    sdf = to_spark(spark, frame)
    asset = context.data_sources.add_spark("spark").add_dataframe_asset("nulls")
    batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": sdf})
    k = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q"], k=2))
    assert k.success and k.result["details"]["class_size_histogram"] == {"2": 1, "3": 1}
    distinct = batch.validate(ExpectTableToBeLDiverse(quasi_identifiers=["q"], sensitive_attribute="s", l=2))
    assert distinct.success and distinct.result["observed_value"] == 2


def test_demo_suite_on_a_spark_dataframe(spark, demo_release_table, expectations_dir) -> None:
    suite = load_suite(expectations_dir / "demo_release.json")
    verdicts = outcomes(validate_dataframe(to_spark(spark, demo_release_table), suite))
    assert [v.status for v in verdicts] == ["passed", "passed"], [v.message for v in verdicts]
    unsafe = pd.concat([demo_release_table, demo_release_table.iloc[:1].assign(zip="90***")], ignore_index=True)
    verdicts = outcomes(validate_dataframe(to_spark(spark, unsafe), suite))
    assert [(v.status, v.observed) for v in verdicts] == [("failed", 1), ("failed", 1)]


def test_generalized_sensitive_values_on_spark(spark, context) -> None:
    """The GROUP BY runs on Spark; the sensitive hierarchy (DCorrelate) is applied to the aggregates."""
    grouping = {"pneumonia": ["respiratory"], "flu": ["respiratory"], "bronchitis": ["respiratory"], "ulcer": ["gut"]}
    frame = pd.DataFrame({"q": ["a", "a", "b", "b", "b"], "s": ["pneumonia", "respiratory", "ulcer", "gut", "flu"]})
    sdf = to_spark(spark, frame)
    asset = context.data_sources.add_spark("spark_generalized").add_dataframe_asset("generalized")
    batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": sdf})
    aware = batch.validate(
        ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=["q"], sensitive_attribute="s", bound=0.5, sensitive_hierarchy={"grouping": grouping}
        )
    )
    assert not aware.exception_info.get("raised_exception"), aware.exception_info
    # pneumonia beside "respiratory" (3 leaves): (1 + 1/3) / 2.
    assert not aware.success and aware.result["observed_value"] == pytest.approx(2 / 3)
    blind = batch.validate(
        ExpectTableToSatisfyPersonalizedLeakageBound(quasi_identifiers=["q"], sensitive_attribute="s", bound=0.5)
    )
    assert blind.success


def test_direct_identifiers_counted_and_sampled_in_spark(spark, context) -> None:
    """The detection expectation on Spark: counts and a distinct sample drawn by Spark, the same findings, no value."""
    from privacy_plugins.integrations.gx import ExpectTableToHaveNoDirectIdentifiers
    from tests.integrations.gx.test_gx_direct_identifiers import raw_values, serialized, table

    frame = table()[["contact", "card", "customer_id", "age"]]
    asset = context.data_sources.add_spark("spark_identifiers").add_dataframe_asset("table")
    batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(
        batch_parameters={"dataframe": to_spark(spark, frame)}
    )
    result = batch.validate(ExpectTableToHaveNoDirectIdentifiers())
    found = {f["column"]: (f["category"], f["rows"]) for f in result.result["details"]["flagged"]}
    assert found == {"contact": ("email", 300), "card": ("card_number", 300), "customer_id": ("unique_per_row", 300)}
    assert not [value for value in raw_values(frame) if value in serialized(result)]


def test_exact_k_map_joins_a_spark_population_view_on_the_cluster(spark, context, tmp_path) -> None:
    """k-map against a population view of the session: the pandas (file) verdict, no class value collected."""
    frame = pd.DataFrame({"zip": ["1"] * 6 + ["2"] * 3 + ["3", "4"], "sex": ["f"] * 11})  # both quasi-identifiers
    census = pd.DataFrame({"zip": ["1", "2", "3", "4", "5"], "sex": ["f"] * 5, "count": [30, 12, 4, 25, 1]})
    to_spark(spark, census).createOrReplaceTempView("pp_census")

    def suite(population: object):
        parameters = {"k": 10, "population": population}
        kwargs = {"quasi_identifiers": ["zip", "sex"], "privacy_model": "k_map", "parameters": parameters}
        return load_suite(
            {"name": "k_map", "expectations": [{"type": "expect_table_to_satisfy_privacy_model", "kwargs": kwargs}]}
        )

    def no_values(*args: object, **kwargs: object) -> None:
        raise AssertionError("the classes (with their values) were collected")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pp.engines, "classes_from_spark", no_values)
        asset = context.data_sources.add_spark("spark_k_map").add_dataframe_asset("table")
        batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(
            batch_parameters={"dataframe": to_spark(spark, frame)}
        )
        (got,) = outcomes(batch.validate(suite("pp_census")))
    census.to_csv(tmp_path / "census.csv", index=False)
    (expected,) = outcomes(validate_dataframe(frame, suite(str(tmp_path / "census.csv"))))
    assert (got.status, got.observed) == (expected.status, expected.observed) == ("failed", 4.0)
    keys = ("records", "classes", "class_size_histogram")
    assert {k: got.details[k] for k in keys} == {k: expected.details[k] for k in keys}
    assert got.details["violations"]["records"] == expected.details["violations"]["records"] == 1
