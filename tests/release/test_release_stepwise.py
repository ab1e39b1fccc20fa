"""The five steps called one by one (as Airflow tasks and Dagster assets do) for a release inside the database.

Load stores the weighted snapshot (never the rows), anonymize stages into a
table bound to the run, check and publish measure that table by GROUP BY; a
tampered or foreign artifact is refused, a failed check drops the staging table,
and stale staging tables of dead runs are cleaned up.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from pushdown_census import table_names as tables
from release_fixtures import demo_spec_dict, published_tables
from test_release_pushdown import census_db, multiset, no_pandas_reads, published_rows

import privacy_plugins as pp
from privacy_plugins.errors import ConfigurationError, ReleaseBlocked
from privacy_plugins.release import ForeignArtifactError, staging
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import anonymize_step, check_step, diagnose_step, load_step, publish_step

ROWS = 2_000


def same_db_spec(tmp_path: Path, **requirements: object) -> tuple[ReleaseSpec, Path]:
    db = census_db(tmp_path / "source.duckdb")
    data = demo_spec_dict(tmp_path / "steps", source={"duckdb": str(db), "table": "census"})
    data["destination"] = {"duckdb": str(db), "table": "census_release"}
    data["requirements"] = {**data["requirements"], **requirements}
    return ReleaseSpec.from_dict(data), db


def test_step_by_step_equals_run_release_and_reads_no_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, db = same_db_spec(tmp_path)
    whole = run_release(spec)
    assert whole.passed, whole.failure
    reference = multiset(published_rows(db, "census_release"))
    no_pandas_reads(monkeypatch)
    loaded = load_step(spec, run_id="r1")
    assert loaded.kind == "snapshot" and loaded.sha256 and loaded.rows == ROWS
    diagnosis = diagnose_step(spec, loaded, run_id="r1")
    assert diagnosis.k >= 1
    candidate = anonymize_step(spec, loaded, run_id="r1")
    assert staging.belongs_to_run(spec, "r1", candidate.staging_table)
    assert candidate.staging_table in tables(db)
    check = check_step(spec, candidate, run_id="r1")
    assert check.passed, check.summary()
    publication = publish_step(spec, candidate, check, run_id="r1")
    assert publication.rows == candidate.rows_out and publication.numbers["holds"]
    assert candidate.levels == whole.candidate.levels  # type: ignore[union-attr]
    assert multiset(published_rows(db, "census_release")).equals(reference)
    assert published_tables(tables(db)) == {"census", "census_release"}


def test_a_tampered_or_foreign_snapshot_is_refused(tmp_path: Path) -> None:
    spec, _ = same_db_spec(tmp_path)
    loaded = load_step(spec, run_id="r1")
    with pytest.raises(ForeignArtifactError, match="belongs to run 'r1', not to this run 'r2'"):
        anonymize_step(spec, loaded, run_id="r2")
    elsewhere = dataclasses.replace(loaded, path=str(tmp_path / "snapshot.parquet"))
    with pytest.raises(ForeignArtifactError, match="not to its run's working file"):
        diagnose_step(spec, elsewhere, run_id="r1")
    as_rows = dataclasses.replace(loaded, kind="rows")
    with pytest.raises(ForeignArtifactError, match="reads the weighted snapshot, but the loaded table holds the rows"):
        anonymize_step(spec, as_rows, run_id="r1")
    snapshot = pd.read_parquet(loaded.path)
    snapshot.loc[0, "__privacy_plugins_records__"] += 1000  # a bigger class: k would look met
    snapshot.to_parquet(loaded.path, index=False)
    with pytest.raises(ForeignArtifactError, match="changed after it was written"):
        anonymize_step(spec, loaded, run_id="r1")


def test_an_in_memory_step_refuses_a_snapshot(tmp_path: Path) -> None:
    """The algorithm is not part of the fingerprint: a task run with another one must not misread the snapshot."""
    spec, db = same_db_spec(tmp_path)
    loaded = load_step(spec, run_id="r1")
    data = demo_spec_dict(tmp_path / "steps", source={"duckdb": str(db), "table": "census"})
    data["algorithm"] = {"name": "mondrian"}
    data["destination"] = {"duckdb": str(db), "table": "census_release"}
    mondrian = ReleaseSpec.from_dict(data)
    assert mondrian.source_fingerprint == spec.source_fingerprint
    with pytest.raises(ForeignArtifactError, match="reads the rows, but the loaded table holds the snapshot"):
        anonymize_step(mondrian, loaded, run_id="r1")


def test_a_candidate_naming_another_table_is_refused_and_never_dropped(tmp_path: Path) -> None:
    spec, db = same_db_spec(tmp_path)
    loaded = load_step(spec, run_id="r1")
    candidate = anonymize_step(spec, loaded, run_id="r1")
    other = staging.staging_name(spec, "r2")
    for name in ("census", other):
        forged = dataclasses.replace(candidate, staging_table=name)
        with pytest.raises(ForeignArtifactError, match="not this run's staging table"):
            check_step(spec, forged, run_id="r1")
    check = check_step(spec, candidate, run_id="r1")
    forged = dataclasses.replace(candidate, staging_table="census")
    with pytest.raises(ReleaseBlocked, match="not this run's staging table"):
        publish_step(spec, forged, dataclasses.replace(check, candidate_path=forged.path), run_id="r1")
    assert "census" in tables(db) and "census_release" not in tables(db)


def test_a_failed_check_drops_the_staging_table_unless_the_failure_is_allowed(tmp_path: Path) -> None:
    spec, db = same_db_spec(tmp_path)
    strict = ReleaseSpec.from_dict(
        {**demo_spec_dict(tmp_path / "steps", source={"duckdb": str(db), "table": "census"}),
         "destination": {"duckdb": str(db), "table": "census_release"},
         "requirements": {"k": 60, "l": 2, "suppression_limit": 0.05}}
    )  # fmt: skip
    assert strict.source_fingerprint == spec.source_fingerprint  # thresholds may differ between tasks
    loaded = load_step(spec, run_id="r1")
    candidate = anonymize_step(spec, loaded, run_id="r1")
    warned = check_step(strict, candidate, run_id="r1", allowed_failures={"k_anonymity"})
    assert not warned.passed and candidate.staging_table in tables(db)  # warn-only: still publishable
    failed = check_step(strict, candidate, run_id="r1")
    assert not failed.passed and candidate.staging_table not in tables(db)
    with pytest.raises(ConfigurationError, match="staging table .* is gone"):
        check_step(spec, candidate, run_id="r1")


def test_a_staged_table_changed_after_the_check_is_not_published(tmp_path: Path) -> None:
    spec, db = same_db_spec(tmp_path)
    loaded = load_step(spec, run_id="r1")
    candidate = anonymize_step(spec, loaded, run_id="r1")
    check = check_step(spec, candidate, run_id="r1")
    connection = duckdb.connect(str(db))
    connection.execute(f"UPDATE \"{candidate.staging_table}\" SET disease = 'x' WHERE rowid = 0")
    connection.close()
    with pytest.raises(ReleaseBlocked, match="changed after it was checked"):
        publish_step(spec, candidate, check, run_id="r1")
    assert tables(db) == {"census"}  # refused: nothing published, the staging table dropped


def test_the_source_changing_between_load_and_anonymize_is_refused(tmp_path: Path) -> None:
    spec, db = same_db_spec(tmp_path)
    loaded = load_step(spec, run_id="r1")
    connection = duckdb.connect(str(db))
    connection.execute("INSERT INTO census SELECT * FROM census LIMIT 1")
    connection.close()
    with pytest.raises(ConfigurationError, match=f"{ROWS + 1} rows now but had {ROWS}"):
        anonymize_step(spec, loaded, run_id="r1")


def test_stale_staging_tables_are_cleaned_and_live_ones_kept(tmp_path: Path) -> None:
    """Our stale staging table (in the registry) is dropped; a live one and tables not in the registry are kept."""
    import sqlalchemy as sa

    spec, db = same_db_spec(tmp_path)
    stale = staging.staging_name(spec, "dead", now=time.time() - staging.STALE_STAGING_SECONDS - 60)
    live = staging.staging_name(spec, "live")
    users = staging.staging_name(spec, "user", now=time.time() - staging.STALE_STAGING_SECONDS - 60)
    old_incoming = "census_release__incoming_0123abcd"
    engine = sa.create_engine(f"duckdb:///{db}")
    with engine.begin() as connection:
        for name in (stale, live, users, old_incoming):
            connection.execute(sa.text(f'CREATE TABLE "{name}" AS SELECT 1 AS x'))
        for name in (stale, live):  # created by releases: recorded with them
            staging.register(connection, name)
    engine.dispose()
    assert run_release(spec).passed
    assert published_tables(tables(db)) == {"census", "census_release", live, users, old_incoming, staging.REGISTRY}


def test_a_parquet_candidate_is_checked_by_its_bytes(tmp_path: Path) -> None:
    db = census_db(tmp_path / "source.duckdb")
    data = demo_spec_dict(tmp_path / "steps", source={"duckdb": str(db), "table": "census"})
    data["destination"] = {"parquet": str(tmp_path / "out"), "table": "census_release"}
    spec = ReleaseSpec.from_dict(data)
    loaded = load_step(spec, run_id="r1")
    candidate = anonymize_step(spec, loaded, run_id="r1")
    assert not candidate.staging_table and Path(candidate.path).is_file()
    check = check_step(spec, candidate, run_id="r1")
    assert check.passed
    frame = pd.read_parquet(candidate.path)
    frame.iloc[:-1].to_parquet(candidate.path, index=False)
    with pytest.raises(ReleaseBlocked, match="changed after it was written"):
        publish_step(spec, candidate, check, run_id="r1")
    assert not (tmp_path / "out" / "census_release.parquet").exists()


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_a_large_file_goes_through_the_steps_inside_duckdb(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"census.{kind}"
    frame = pp.generate_census(ROWS, seed=0)
    frame.to_parquet(path, index=False) if kind == "parquet" else frame.to_csv(path, index=False)
    memory = run_release(ReleaseSpec.from_dict(demo_spec_dict(tmp_path / "memory", source={"path": str(path)})))
    data = demo_spec_dict(tmp_path / "ooc", source={"path": str(path), "out_of_core_bytes": 1_000})
    spec = ReleaseSpec.from_dict(data)
    no_pandas_reads(monkeypatch)
    from privacy_plugins.release import sources

    monkeypatch.setattr(sources, "read_table", lambda *a, **k: pytest.fail("the source was read into pandas"))
    loaded = load_step(spec, run_id="r1")
    assert loaded.kind == "snapshot" and loaded.source.startswith("duckdb:")
    diagnose_step(spec, loaded, run_id="r1")
    candidate = anonymize_step(spec, loaded, run_id="r1")
    check = check_step(spec, candidate, run_id="r1")
    publish_step(spec, candidate, check, run_id="r1")
    monkeypatch.undo()
    assert candidate.levels == memory.candidate.levels  # type: ignore[union-attr]
    assert multiset(published_rows(tmp_path / "ooc" / "release.duckdb", "census_release")).equals(
        multiset(published_rows(tmp_path / "memory" / "release.duckdb", "census_release"))
    )


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_local_recoding_counts_a_large_file_first_and_refuses_it(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"census.{kind}"
    frame = pp.generate_census(ROWS, seed=0)
    frame.to_parquet(path, index=False) if kind == "parquet" else frame.to_csv(path, index=False)
    source = {"path": str(path), "out_of_core_bytes": 1_000, "max_rows_in_memory": 1_000}
    data = demo_spec_dict(tmp_path / "m", source=source)
    data["algorithm"] = {"name": "mondrian"}
    with pytest.raises(ConfigurationError, match=f"{ROWS} rows, more than source.max_rows_in_memory = 1000"):
        load_step(ReleaseSpec.from_dict(data))
    assert not (tmp_path / "m" / "release.duckdb").exists()


def test_a_reader_of_another_run_cannot_read_a_staged_candidate(tmp_path: Path) -> None:
    """The staged rows go to a candidate reader of the run that staged them only (Dagster's reader passes its run)."""
    from privacy_plugins.release.staged_candidate import measured_frame

    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=300))  # generated: the snapshot path too
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    assert len(measured_frame(spec, candidate, "r")) == candidate.rows_out
    with pytest.raises(ForeignArtifactError, match="belongs to run 'r', not to this run 'other'"):
        measured_frame(spec, candidate, "other")
