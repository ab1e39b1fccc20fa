"""The pushdown engines give what the in-memory full-domain anonymizer gives: same node, NCP, rows.

Every published table is re-measured twice: by the engine's GROUP BY and by the
core on the rows brought back. pandas, SQLite and DuckDB always run; Spark in
``test_pushdown_spark.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.hierarchies import Hierarchy, read_hierarchy
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.engines import (
    EngineTable,
    PandasTable,
    SqlTable,
    anonymize_in_engine,
    engine_snapshot,
    measure_in_engine,
)
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError, UnknownColumnError
from privacy_plugins.release.spec import ReleaseSpec

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO.parent / "shared" / "data" / "adult"
ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
ENGINES = ["pandas", "sqlite", "duckdb"]


def multiset(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as text, sorted: equal frames ⇔ equal multisets of rows."""
    text = frame.astype(str)
    return text.sort_values(list(text.columns)).reset_index(drop=True)


def engine_table(kind: str, frame: pd.DataFrame, tmp_path: Path) -> EngineTable:
    if kind == "pandas":
        return PandasTable(frame)
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if kind == "sqlite" else f"duckdb:///{tmp_path / 'db.duckdb'}"
    engine = sa.create_engine(url)
    frame.to_sql("raw", engine, index=False)
    return SqlTable.from_table(engine, "raw")


def assert_same_release(table: EngineTable, frame: pd.DataFrame, *, method: str = "case", **problem: object) -> None:
    reference = anonymize(frame, algorithm="optimal", **problem)  # type: ignore[arg-type]
    qis = list(problem["quasi_identifiers"])  # type: ignore[call-overload]
    models = list(problem["models"])  # type: ignore[call-overload]
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


@pytest.fixture(scope="module")
def census() -> tuple[pd.DataFrame, dict[str, object]]:
    spec = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census.yaml")
    frame = pp.generate_census(3000, seed=3)
    problem = {
        "quasi_identifiers": list(spec.quasi_identifiers),
        "hierarchies": spec.build_hierarchies(frame),
        "models": spec.models(),
        "identifiers": ["person_id"],
        "sensitive_attributes": list(spec.sensitive_attributes),
        "suppression_limit": 0.05,
    }
    return frame, problem


@pytest.fixture(scope="module")
def adult_sample() -> tuple[pd.DataFrame, dict[str, object]]:
    if not (ADULT / "adult_subset.csv").is_file():
        pytest.skip(f"Adult data not found at {ADULT}")
    frame = pp.read_table(ADULT / "adult_subset.csv")
    hierarchies = {q: read_hierarchy(ADULT / f"adult_hierarchy_{q}.csv", attribute=q) for q in ADULT_QIS}
    problem = {
        "quasi_identifiers": ADULT_QIS,
        "hierarchies": hierarchies,
        "models": [KAnonymity(5), DistinctLDiversity("occupation", 2)],
        "sensitive_attributes": ["occupation"],
        "suppression_limit": 0.05,
    }
    return frame, problem


@pytest.mark.parametrize("method", ["case", "join"])
@pytest.mark.parametrize("kind", ENGINES)
def test_demo_census_same_release_on_every_engine(kind: str, method: str, census, tmp_path: Path) -> None:
    frame, problem = census
    assert_same_release(engine_table(kind, frame, tmp_path), frame, method=method, **problem)


@pytest.mark.parametrize("kind", ENGINES)
def test_adult_sample_same_release_on_every_engine(kind: str, adult_sample, tmp_path: Path) -> None:
    frame, problem = adult_sample
    assert_same_release(engine_table(kind, frame, tmp_path), frame, method="join", **problem)


def test_engine_snapshot_equals_the_snapshot_of_the_records(census, tmp_path: Path) -> None:
    from privacy_plugins.core.anonymize.snapshot import Snapshot

    frame, problem = census
    qis = list(problem["quasi_identifiers"])  # type: ignore[call-overload]
    built = Snapshot.build(frame, quasi_identifiers=qis, hierarchies=problem["hierarchies"], model_columns=["disease"])  # type: ignore[arg-type]
    pushed, _ = engine_snapshot(
        engine_table("duckdb", frame, tmp_path),
        quasi_identifiers=qis,
        hierarchies=problem["hierarchies"],  # type: ignore[arg-type]
        model_columns=["disease"],
    )
    assert pushed.n_rows == built.n_rows == len(frame)
    assert len(pushed.units) == len(built.units)
    for node in [(0, 0, 0, 0, 0), (1, 1, 2, 1, 1), pushed.heights]:
        a, b = pushed.classes(node), built.classes(node)
        assert sorted(a.sizes.tolist()) == sorted(b.sizes.tolist())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(
        st.tuples(st.integers(20, 29), st.sampled_from("ab"), st.sampled_from(["x", "y", "z"])), min_size=1, max_size=60
    ),
    k=st.integers(1, 4),
    limit=st.sampled_from([0.0, 0.1, 0.3]),
)
def test_sqlite_equals_memory_on_random_tables(data, k: int, limit: float, tmp_path_factory) -> None:
    frame = pd.DataFrame(data, columns=["age", "sex", "s"])
    hierarchies = {
        "age": Hierarchy.from_rows("age", [[str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", "*"] for a in range(20, 30)]),
        "sex": Hierarchy.from_rows("sex", [["a", "*"], ["b", "*"]]),
    }
    problem = {"quasi_identifiers": ["age", "sex"], "hierarchies": hierarchies, "models": [KAnonymity(k)]}
    try:
        reference = anonymize(frame, algorithm="optimal", suppression_limit=limit, **problem)  # type: ignore[arg-type]
    except (InfeasibleAnonymizationError, ConfigurationError) as refused:
        with pytest.raises(type(refused)):  # the same refusal, e.g. k larger than the table
            anonymize_in_engine(PandasTable(frame), suppression_limit=limit, **problem)  # type: ignore[arg-type]
        return
    del reference
    table = engine_table("sqlite", frame, tmp_path_factory.mktemp("db"))
    assert_same_release(table, frame, suppression_limit=limit, **problem)


def test_unknown_column_and_non_leaf_values_are_clear_errors(census, tmp_path: Path) -> None:
    frame, problem = census
    table = engine_table("duckdb", frame, tmp_path)
    with pytest.raises(UnknownColumnError, match="no_such"):
        anonymize_in_engine(table, **{**problem, "quasi_identifiers": ["no_such"]})  # type: ignore[arg-type]
    hierarchies = dict(problem["hierarchies"])  # type: ignore[call-overload]
    hierarchies["sex"] = Hierarchy.from_rows("sex", [["Female", "*"]])
    with pytest.raises(HierarchyError, match="sex"):
        anonymize_in_engine(table, **{**problem, "hierarchies": hierarchies})  # type: ignore[arg-type]
