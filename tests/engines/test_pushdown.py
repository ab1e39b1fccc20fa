"""The pushdown engines give what the in-memory full-domain anonymizer gives: same node, NCP, rows.

Every published table is re-measured twice: by the engine's GROUP BY and by the
core on the rows brought back. pandas, SQLite and DuckDB always run; PostgreSQL
against a throwaway server (tests/pg_cluster.py; skipped with the reason when the
server or psycopg is missing); Spark in ``test_pushdown_spark.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from engine_checks import ENGINES, assert_same_release, engine_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import KAnonymity
from privacy_plugins.engines import (
    PandasTable,
    anonymize_in_engine,
    engine_snapshot,
)
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.errors import (
    ConfigurationError,
    HierarchyError,
    InfeasibleAnonymizationError,
    UnknownColumnError,
    VerificationError,
)


@pytest.mark.parametrize("method", ["case", "join"])
@pytest.mark.parametrize("kind", ENGINES)
def test_demo_census_same_release_on_every_engine(kind: str, method: str, census, tmp_path: Path, request) -> None:
    frame, problem = census
    assert_same_release(engine_table(kind, frame, tmp_path, request), frame, method=method, **problem)


@pytest.mark.parametrize("kind", ENGINES)
def test_adult_sample_same_release_on_every_engine(kind: str, adult_sample, tmp_path: Path, request) -> None:
    frame, problem = adult_sample
    assert_same_release(engine_table(kind, frame, tmp_path, request), frame, method="join", **problem)


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
        reference = anonymize(frame, algorithm="optimal", suppression_limit=limit, insensitive=["s"], **problem)  # type: ignore[arg-type]
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


@pytest.mark.parametrize("wrong", ["raw node", "too many suppressed"])
def test_the_snapshot_path_ends_in_the_cores_verify(wrong: str, census, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that returns a wrong solution is caught by the core's re-check before anything is generalized."""
    from privacy_plugins.engines import full_domain_in_engine

    frame, problem = census
    real = full_domain_in_engine.solve_snapshot
    applied: list[object] = []

    def faulty(snapshot, models, **options):  # type: ignore[no-untyped-def]
        solution = real(snapshot, models, **options)
        if wrong == "raw node":  # the untouched table: unique records, k = 1
            return dataclasses.replace(solution, node=tuple(0 for _ in solution.node), suppressed=0,
                                       suppressed_units=np.zeros_like(solution.suppressed_units))  # fmt: skip
        return dataclasses.replace(solution, suppressed=solution.suppressed + 1)  # the accounting is off

    def counted(table: PandasTable, **options: Any) -> Any:
        applied.append(table)
        return EngineTable.generalized(table, **options)

    monkeypatch.setattr(full_domain_in_engine, "solve_snapshot", faulty)
    monkeypatch.setattr(PandasTable, "generalized", counted)
    with pytest.raises(VerificationError, match="re-check of" if wrong == "raw node" else "rows in but"):
        anonymize_in_engine(PandasTable(frame), **problem)  # type: ignore[arg-type]
    assert len(applied) == 1  # only the re-check's own application to the snapshot: the rows were never generalized
