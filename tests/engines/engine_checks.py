"""Helpers shared by the engine tests: the reference comparison and the engine tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.engines import EngineTable, PandasTable, SqlTable, anonymize_in_engine, measure_in_engine
from tests.unnamed_columns import other_columns

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO.parent / "shared" / "data" / "adult"
ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
ENGINES = ["pandas", "sqlite", "duckdb", "postgresql"]


def multiset(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as text, sorted: equal frames ⇔ equal multisets of rows."""
    text = frame.astype(str)
    return text.sort_values(list(text.columns)).reset_index(drop=True)


def engine_table(
    kind: str, frame: pd.DataFrame, tmp_path: Path, request: pytest.FixtureRequest | None = None
) -> EngineTable:
    """``frame`` as table ``raw`` of engine ``kind``; PostgreSQL needs ``request`` for the ``postgres_url`` fixture."""
    if kind == "pandas":
        return PandasTable(frame)
    if kind == "postgresql":
        assert request is not None, "the postgresql engine table needs the test's request"
        url = str(request.getfixturevalue("postgres_url"))  # skips with the reason when PostgreSQL is unavailable
    else:
        url = f"sqlite:///{tmp_path / 'db.sqlite'}" if kind == "sqlite" else f"duckdb:///{tmp_path / 'db.duckdb'}"
    engine = sa.create_engine(url)
    frame.to_sql("raw", engine, index=False)
    return SqlTable.from_table(engine, "raw")


def assert_same_release(table: EngineTable, frame: pd.DataFrame, *, method: str = "case", **problem: object) -> None:
    qis = list(problem["quasi_identifiers"])  # type: ignore[call-overload]
    models = list(problem["models"])  # type: ignore[call-overload]
    named = [qis, problem.get("identifiers", ()), problem.get("sensitive_attributes", ())]
    # the engine publishes every other column unchanged: in memory they are declared insensitive
    reference = anonymize(frame, algorithm="optimal", insensitive=other_columns(frame, models, *named), **problem)  # type: ignore[arg-type]
    done = anonymize_in_engine(
        table,
        method=method,  # type: ignore[arg-type]
        quasi_identifiers=qis,
        hierarchies=problem["hierarchies"],  # type: ignore[arg-type]
        models=models,
        identifiers=list(problem.get("identifiers", ())),  # type: ignore[call-overload]
        sensitive_attributes=list(problem.get("sensitive_attributes", ())),  # type: ignore[call-overload]
        suppression_limit=float(problem.get("suppression_limit", 0.0)),  # type: ignore[arg-type]
    )
    assert done.solution.details.levels == reference.details.levels
    assert done.solution.suppressed == reference.suppressed
    assert done.solution.utility.ncp == pytest.approx(reference.utility.ncp, rel=1e-12)
    assert done.solution.utility.discernibility == reference.utility.discernibility
    published = done.published.to_pandas()
    assert list(published.columns) == list(reference.table.columns)  # identifiers dropped, order kept
    assert done.rows_in == len(frame) == len(published) + done.solution.suppressed  # nothing lost
    assert multiset(published).equals(multiset(reference.table))
    in_engine = measure_in_engine(done.published, quasi_identifiers=qis, models=models)
    on_rows = EquivalenceClasses.from_frame(published, qis)
    for model, measured in zip(models, in_engine, strict=True):
        assert measured.passed and model.evaluate(on_rows).passed
        assert measured.observed == pytest.approx(model.evaluate(on_rows).observed)
