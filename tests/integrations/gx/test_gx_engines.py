"""Same numbers as the core (``privacy-plugins measure``) on pandas, SQLite, DuckDB and PostgreSQL through SQLAlchemy.

The SQL metrics push the GROUP BY into the database and bring back aggregates;
the core builds the classes from those weighted rows. NULL quasi-identifiers form
one class and a NULL sensitive value is a value of its own on every engine. The
DuckDB tests also show that these metrics need no patch to GX for ``duckdb_engine``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("great_expectations")
pytest.importorskip("duckdb_engine")

import privacy_plugins as pp
from privacy_plugins.integrations.gx import (
    ExpectTableToBeKAnonymous,
    ExpectTableToBeLDiverse,
    ExpectTableToBeTClose,
    ExpectTableToSatisfyPersonalizedLeakageBound,
    outcome,
)

ENGINES = ("pandas", "sqlite", "duckdb", "postgresql")  # PostgreSQL: a throwaway server, skipped if none
QIS = ["q1", "q2"]


def random_table(seed: int, n_rows: int = 300) -> pd.DataFrame:
    """A table with skewed QIs, NULL QIs and NULL sensitive values, and per-record bounds."""
    rng = np.random.default_rng(seed)
    q1 = rng.integers(18, 18 + rng.integers(3, 12), size=n_rows).astype(float)
    q1[rng.random(n_rows) < 0.05] = np.nan
    q2 = rng.choice(np.array(["a", "b", "c", "d"], dtype=object), size=n_rows, p=[0.5, 0.3, 0.15, 0.05])
    q2[rng.random(n_rows) < 0.05] = None
    s = rng.choice(np.array(["flu", "hiv", "cancer", "none"], dtype=object), size=n_rows)
    s[rng.random(n_rows) < 0.08] = None
    return pd.DataFrame(
        {
            "q1": q1,
            "q2": q2,
            "s": s,
            "income": rng.integers(1, 8, size=n_rows) * 1000,
            "pleak": rng.choice([0.25, 0.5, 1.0], size=n_rows),
        }
    )


def expectations() -> list[tuple[object, str]]:
    """Each expectation with the key of ``measure(...).to_dict()`` that holds its observed value."""
    return [
        (ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=3), "k"),
        (ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=2), "distinct_l"),
        (
            ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=1.5, l_variant="frequency"),
            "frequency_l",
        ),
        (
            ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=1.5, l_variant="entropy"),
            "entropy_l",
        ),
        (
            ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=2, l_variant="recursive", c=3),
            "recursive_c",
        ),
        (ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="s", t=0.3), "t_closeness"),
        (
            ExpectTableToSatisfyPersonalizedLeakageBound(quasi_identifiers=QIS, sensitive_attribute="s", bound=0.5),
            "max_leakage",
        ),
    ]


def measured(frame: pd.DataFrame) -> dict:
    return pp.measure(frame, quasi_identifiers=QIS, sensitive_attributes=["s"], l=2, c=3, bound=0.5).to_dict()


def batch_for(engine: str, frame: pd.DataFrame, pandas_batch, sql_batch):
    return pandas_batch(frame) if engine == "pandas" else sql_batch(frame, engine)


def close(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a == pytest.approx(b, rel=1e-12))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_same_numbers_as_measure_on_random_tables(engine: str, seed: int, pandas_batch, sql_batch) -> None:
    frame = random_table(seed)
    reference = measured(frame)
    batch = batch_for(engine, frame, pandas_batch, sql_batch)
    for expectation, key in expectations():
        result = batch.validate(expectation)
        assert not result.exception_info.get("raised_exception"), result.exception_info
        assert close(result.result["observed_value"], reference[key]), (key, result.result, reference[key])
        assert result.result["details"]["records"] == reference["rows"]
        assert result.result["details"]["classes"] == reference["classes"]
        assert result.result["details"]["class_size_histogram"] == {
            str(size): count for size, count in reference["class_size_histogram"].items()
        }


@pytest.mark.parametrize("engine", ENGINES)
def test_same_verdicts_on_every_engine(engine: str, pandas_batch, sql_batch) -> None:
    frame = random_table(7, n_rows=500)
    reference = pandas_batch(frame)
    batch = batch_for(engine, frame, pandas_batch, sql_batch)
    extra = [
        ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=3, suppression_limit=0.05),
        ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="income", t=0.2, t_distance="ordered"),
        ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=QIS, sensitive_attribute="s", bound_column="pleak"
        ),
    ]
    for expectation in [e for e, _ in expectations()] + extra:
        expected, got = reference.validate(expectation), batch.validate(expectation)
        assert got.success == expected.success
        assert close(got.result["observed_value"], expected.result["observed_value"])
        expected_details, got_details = expected.result["details"], got.result["details"]
        assert got_details["violations"] == expected_details["violations"]
        for key in ("suppression", "leakage_violations", "leakage_infeasible"):
            assert got_details.get(key) == expected_details.get(key)


@pytest.mark.parametrize("engine", ENGINES)
def test_census_demo_same_numbers(engine: str, pandas_batch, sql_batch) -> None:
    frame = pp.generate_census(1500, seed=3)
    qis = ["age", "sex", "zip"]
    report = pp.measure(frame, quasi_identifiers=qis, sensitive_attributes=["disease"]).to_dict()
    batch = batch_for(engine, frame, pandas_batch, sql_batch)
    k = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=qis, k=5))
    entropy = batch.validate(
        ExpectTableToBeLDiverse(quasi_identifiers=qis, sensitive_attribute="disease", l=2, l_variant="entropy")
    )
    t = batch.validate(ExpectTableToBeTClose(quasi_identifiers=qis, sensitive_attribute="disease", t=0.5))
    assert k.result["observed_value"] == report["k"]
    assert entropy.result["observed_value"] == pytest.approx(report["entropy_l"], rel=1e-12)
    assert t.result["observed_value"] == pytest.approx(report["t_closeness"], rel=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_null_quasi_identifier_and_null_sensitive_value(engine: str, pandas_batch, sql_batch) -> None:
    frame = pd.DataFrame(
        {
            "q1": [1.0, 1.0, np.nan, np.nan, np.nan],
            "q2": ["a", "a", None, None, None],
            "s": ["x", "y", None, None, "x"],
        }
    )
    batch = batch_for(engine, frame, pandas_batch, sql_batch)
    k = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2))
    assert k.success and k.result["details"]["classes"] == 2  # the NULL rows are one class of 3
    assert k.result["details"]["class_size_histogram"] == {"2": 1, "3": 1}
    distinct = batch.validate(ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=2))
    assert distinct.success and distinct.result["observed_value"] == 2  # NULL counts as a value
    frequency = batch.validate(
        ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=1, l_variant="frequency")
    )
    assert frequency.result["observed_value"] == pytest.approx(1.5)  # 3 / max(count NULL = 2)


@pytest.mark.parametrize("engine", ENGINES)
def test_unknown_column_is_an_error_not_a_privacy_failure(engine: str, pandas_batch, sql_batch) -> None:
    batch = batch_for(engine, random_table(0, n_rows=20), pandas_batch, sql_batch)
    result = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q1", "no_such_column"], k=2))
    verdict = outcome(result)
    assert not result.success
    assert verdict.status == "error" and verdict.blocks_release
    assert "no_such_column" in verdict.message


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_table_is_an_error(engine: str, pandas_batch, sql_batch) -> None:
    batch = batch_for(engine, random_table(0, n_rows=20).iloc[:0], pandas_batch, sql_batch)
    verdict = outcome(batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2)))
    assert verdict.status == "error" and "empty" in verdict.message


def test_sql_sends_back_aggregates_only(sql_batch, monkeypatch: pytest.MonkeyPatch) -> None:
    from privacy_plugins.engines import sql as engines

    frame = pd.DataFrame({"q1": [1.0] * 50 + [2.0] * 50, "q2": ["a"] * 100, "s": ["x", "y"] * 50})
    seen: list[int] = []
    original = engines.classes_from_aggregates

    def spy(aggregates: pd.DataFrame, quasi_identifiers):
        seen.append(len(aggregates))
        return original(aggregates, quasi_identifiers)

    monkeypatch.setattr(engines, "classes_from_aggregates", spy)
    result = sql_batch(frame, "duckdb").validate(
        ExpectTableToBeLDiverse(quasi_identifiers=QIS, sensitive_attribute="s", l=2)
    )
    assert result.success and seen == [4]  # 2 classes x 2 values, not 100 records


@pytest.mark.parametrize("engine", ENGINES)
def test_auto_t_distance_follows_the_column_type_on_every_engine(engine: str, pandas_batch, sql_batch) -> None:
    frame = pd.DataFrame({"q1": ["a"] * 4 + ["b"] * 4, "q2": ["x"] * 8, "s": [1, 2, 3, 4, 10, 20, 30, 40]})
    want = pp.t_closeness(frame, quasi_identifiers=QIS, sensitive_attribute="s")  # auto: ordered for numbers
    batch = batch_for(engine, frame, pandas_batch, sql_batch)
    result = batch.validate(ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="s", t=1.0))
    assert result.result["details"]["t_distance"] == "ordered"
    assert result.result["observed_value"] == pytest.approx(want)
    text = batch.validate(
        ExpectTableToBeTClose(quasi_identifiers=QIS, sensitive_attribute="s", t=1.0, t_distance="equal")
    )
    assert text.result["details"]["t_distance"] == "equal"


def test_decimal_aggregates_count_as_numbers() -> None:
    from decimal import Decimal

    from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates

    aggregates = pd.DataFrame({"q": ["a", "b"], "s": [Decimal("1.5"), Decimal("2")], COUNT_COLUMN: [1, 1]})
    classes = classes_from_aggregates(aggregates, ["q"])
    assert pd.api.types.is_numeric_dtype(classes.frame["s"])
