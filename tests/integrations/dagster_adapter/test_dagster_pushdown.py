"""The Dagster release assets on a DuckDB source published into the same file: every step inside DuckDB."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

dg = pytest.importorskip("dagster")

from pushdown_census import census_duckdb, cli_reference, multiset, rows_of, same_duckdb_spec, table_names  # noqa: E402

from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, sources  # noqa: E402


def no_rows_in_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the source was read into pandas")

    monkeypatch.setattr(sources, "read_source", refuse)
    monkeypatch.setattr(pd, "read_sql_table", refuse)


def test_assets_release_inside_duckdb_as_the_cli_does(
    tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, levels = cli_reference(tmp_path / "cli")
    db = census_duckdb(tmp_path / "warehouse.duckdb")
    spec = ReleaseSpec.from_dict(same_duckdb_spec(tmp_path, db))
    release = build_release_assets(spec)
    no_rows_in_pandas(monkeypatch)
    result = run_graph(release)
    monkeypatch.undo()
    assert result.success
    assert inspect_run.materialized(result) == {"raw", "privacy_diagnosis", "anonymized_candidate", "published"}
    assert all(c.passed for c in inspect_run.evaluations(result).values())
    candidate = next(
        e.materialization.metadata
        for e in result.get_asset_materialization_events()
        if e.asset_key.path[-1] == "anonymized_candidate"
    )
    assert candidate["generalization levels"].value == levels
    assert candidate["staged"].value.startswith("census_release__staging_")
    assert multiset(rows_of(db, "census_release")).equals(reference)
    assert {n for n in table_names(db) if not n.startswith("pp_history_")} == {"census", "census_release"}


def test_a_failed_blocking_check_drops_the_staging_table(
    tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    db = census_duckdb(tmp_path / "warehouse.duckdb")
    spec = ReleaseSpec.from_dict(same_duckdb_spec(tmp_path, db))
    result = run_graph(build_release_assets(spec, policy={"min_k": 500}))
    assert not result.success
    assert "published" not in inspect_run.materialized(result)
    assert table_names(db) == {"census"}
