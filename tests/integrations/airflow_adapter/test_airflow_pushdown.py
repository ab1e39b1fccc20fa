"""The Airflow release operators on a DuckDB source published into the same file: every step inside DuckDB.

Each operator runs its step in its own ``execute`` (as each task does in its own
process), handing on the small artifacts only; no source row is read into pandas,
and the result is the CLI's.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pandas as pd
import pytest
import yaml

pytest.importorskip("airflow")

from pushdown_census import census_duckdb, cli_reference, multiset, rows_of, same_duckdb_spec, table_names

from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckFailed,
    PrivacyCheckOperator,
    PrivacyDiagnosisOperator,
    PublishOperator,
)
from privacy_plugins.release import sources

CONTEXT = {"run_id": "manual__2026-01-01", "dag": SimpleNamespace(dag_id="pushdown")}


def run(operator: Any) -> dict[str, Any]:
    payload = operator.execute(context={"ti": Mock(), **CONTEXT})
    json.dumps(payload)  # XCom needs plain JSON
    return payload  # type: ignore[no-any-return]


def no_rows_in_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the source was read into pandas")

    monkeypatch.setattr(sources, "read_source", refuse)
    monkeypatch.setattr(pd, "read_sql_table", refuse)


def spec_file(tmp_path: Path) -> tuple[str, Path]:
    db = census_duckdb(tmp_path / "warehouse.duckdb")
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(same_duckdb_spec(tmp_path, db)), encoding="utf-8")
    return str(path), db


def test_operators_release_inside_duckdb_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference, levels = cli_reference(tmp_path / "cli")
    spec_path, db = spec_file(tmp_path / "airflow")
    no_rows_in_pandas(monkeypatch)
    loaded = run(LoadOperator(task_id="load", spec_path=spec_path))
    assert loaded["kind"] == "snapshot" and loaded["path"].endswith("snapshot.parquet")
    diagnosis = run(PrivacyDiagnosisOperator(task_id="diagnose", spec_path=spec_path, loaded=loaded))
    candidate = run(AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded))
    assert candidate["staging_table"] in table_names(db)
    check = run(PrivacyCheckOperator(task_id="check", spec_path=spec_path, candidate=candidate))
    publication = run(PublishOperator(task_id="publish", spec_path=spec_path, candidate=candidate, check=check))
    monkeypatch.undo()
    assert diagnosis["k"] >= 1 and check["passed"]
    assert candidate["levels"] == levels
    assert publication["rows"] == candidate["rows_out"] and publication["numbers"]["holds"]
    assert multiset(rows_of(db, "census_release")).equals(reference)
    assert {n for n in table_names(db) if not n.startswith("pp_history_")} == {
        "census",
        "census_release",
    }  # the staging table became the release


def test_a_failed_check_task_drops_the_staging_table(tmp_path: Path) -> None:
    spec_path, db = spec_file(tmp_path)
    loaded = run(LoadOperator(task_id="load", spec_path=spec_path))
    candidate = run(AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded))
    strict = {"requirements": {"k": "500"}}
    with pytest.raises(PrivacyCheckFailed, match="500-anonymity"):
        run(PrivacyCheckOperator(task_id="check", spec_path=spec_path, candidate=candidate, overrides=strict))
    assert table_names(db) == {"census"}


@pytest.mark.parametrize("staged", ["staging table", "working file"])
def test_a_gx_suite_validates_the_candidate_where_it_is_staged(
    staged: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite runs in the staging table's database, or on the working file through DuckDB: no row reaches
    pandas, so a candidate larger than ``source.max_rows_in_memory`` is validated all the same."""
    pytest.importorskip("great_expectations")
    from privacy_plugins.release.destination import tables, working_file

    db = census_duckdb(tmp_path / "warehouse.duckdb")
    data = same_duckdb_spec(tmp_path, db)
    data["source"]["max_rows_in_memory"] = 10  # far fewer than the candidate's rows
    if staged == "working file":
        data["destination"] = {"parquet": str(tmp_path / "out"), "table": "census_release"}  # COPY … TO the file
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    loaded = run(LoadOperator(task_id="load", spec_path=str(spec_path)))
    candidate = run(AnonymizeOperator(task_id="anonymize", spec_path=str(spec_path), loaded=loaded))
    assert bool(candidate["staging_table"]) == (staged == "staging table")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the staged candidate was read into pandas for GX")

    monkeypatch.setattr(tables.TableDestination, "read_staged", refuse)
    monkeypatch.setattr(working_file, "read_files", refuse)
    suite = str(Path(__file__).resolve().parents[3] / "expectations" / "demo_release.json")
    check = run(
        PrivacyCheckOperator(task_id="check", spec_path=str(spec_path), candidate=candidate, expectation_suite=suite)
    )
    gx_checks = [c for c in check["checks"] if c["name"].startswith("gx_")]
    assert check["passed"] and [c["name"] for c in gx_checks] == [
        "gx_expect_table_to_be_k_anonymous",
        "gx_expect_table_to_be_l_diverse",
    ]
    assert gx_checks[0]["observed"] == min(c["observed"] for c in check["checks"] if c["name"] == "k_anonymity")
