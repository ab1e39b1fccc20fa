"""A ``duckdb:`` / ``url:`` source with a full-domain algorithm is released inside the database.

The result equals the in-memory release of the same rows: same node, suppressed
count, published rows (as a multiset) and re-measured checks; the source rows
are never read into pandas; a crash before the swap leaves the previous release.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest
import sqlalchemy as sa
from pushdown_census import multiset
from pushdown_census import rows_of as published_rows
from release_fixtures import demo_spec_dict, published_tables

import privacy_plugins as pp
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import sources
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec

ROWS = 2_000


def census_db(path: Path) -> Path:
    frame = pp.generate_census(ROWS, seed=0)
    connection = duckdb.connect(str(path))
    connection.register("frame", frame)
    connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    connection.close()
    return path


@pytest.fixture()
def reference(tmp_path: Path):
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path / "memory", rows=ROWS))
    result = run_release(spec)
    assert result.passed
    return result, published_rows(tmp_path / "memory" / "release.duckdb", "census_release")


def no_pandas_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the source was read into pandas")

    monkeypatch.setattr(sources, "read_source", refuse)
    monkeypatch.setattr(pd, "read_sql_table", refuse)


@pytest.mark.parametrize("destination", ["same", "parquet", "other_duckdb"])
def test_duckdb_source_released_inside_equals_memory(
    destination: str, reference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, memory_rows = reference
    db = census_db(tmp_path / "source.duckdb")
    target = {
        "same": {"duckdb": str(db), "table": "census_release"},
        "parquet": {"parquet": str(tmp_path / "out"), "table": "census_release"},
        "other_duckdb": {"duckdb": str(tmp_path / "other.duckdb"), "table": "census_release"},
    }[destination]
    data = demo_spec_dict(tmp_path / "pushdown", source={"duckdb": str(db), "table": "census"})
    data["destination"] = target
    no_pandas_reads(monkeypatch)
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    assert result.candidate is not None and memory.candidate is not None
    assert result.candidate.levels == memory.candidate.levels
    assert result.candidate.suppressed == memory.candidate.suppressed
    assert result.candidate.ncp == pytest.approx(memory.candidate.ncp, rel=1e-12)
    assert result.loaded.rows == ROWS == result.candidate.rows_out + result.candidate.suppressed
    if destination == "parquet":
        rows = pd.read_parquet(tmp_path / "out" / "census_release.parquet")
    else:
        rows = published_rows(Path(target["duckdb"]), "census_release")
    assert "person_id" not in rows.columns
    assert multiset(rows).equals(multiset(memory_rows))
    checks = {c.name: (c.passed, c.observed) for c in result.check.checks}  # type: ignore[union-attr]
    assert checks == {c.name: (c.passed, c.observed) for c in memory.check.checks}  # type: ignore[union-attr]
    tables = {r[0] for r in duckdb.connect(str(db), read_only=True).execute("SHOW TABLES").fetchall()}
    assert not [t for t in tables if "incoming" in t or t.startswith("pp_helper")]  # nothing left behind


def test_sqlite_url_source_same_database(reference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, memory_rows = reference
    url = f"sqlite:///{tmp_path / 'source.sqlite'}"
    pp.generate_census(ROWS, seed=0).to_sql("census", sa.create_engine(url), index=False)
    data = demo_spec_dict(tmp_path / "pushdown", source={"url": url, "table": "census"})
    data["destination"] = {"url": url, "table": "census_release"}
    no_pandas_reads(monkeypatch)
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    assert result.candidate.levels == memory.candidate.levels  # type: ignore[union-attr]
    rows = pd.read_sql_query("SELECT * FROM census_release", sa.create_engine(url))
    assert multiset(rows).equals(multiset(memory_rows))


def release_killed_at_the_swap(data: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a stricter release of ``data`` (k=6) that dies between staging and the swap."""

    def crash() -> None:
        raise RuntimeError("killed between staging and swap")

    monkeypatch.setattr(destination_base, "before_swap", crash)
    strict = ReleaseSpec.from_dict({**data, "requirements": {**data["requirements"], "k": 6}})
    with pytest.raises(RuntimeError, match="killed"):
        run_release(strict)
    monkeypatch.undo()


@pytest.mark.parametrize("target", ["same_duckdb", "same_sqlite", "parquet", "other_duckdb"])
def test_crash_between_staging_and_swap_keeps_the_previous_release(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = census_db(tmp_path / "source.duckdb")
    sqlite = f"sqlite:///{tmp_path / 'source.sqlite'}"
    if target == "same_sqlite":
        pp.generate_census(ROWS, seed=0).to_sql("census", sa.create_engine(sqlite), index=False)
        source: dict[str, str] = {"url": sqlite, "table": "census"}
    else:
        source = {"duckdb": str(db), "table": "census"}
    data = demo_spec_dict(tmp_path / "pushdown", source=source)
    data["destination"] = {
        "same_duckdb": {"duckdb": str(db), "table": "census_release"},
        "same_sqlite": {"url": sqlite, "table": "census_release"},
        "parquet": {"parquet": str(tmp_path / "out"), "table": "census_release"},
        "other_duckdb": {"duckdb": str(tmp_path / "other.duckdb"), "table": "census_release"},
    }[target]

    def published() -> pd.DataFrame:
        if target == "same_sqlite":
            return pd.read_sql_query("SELECT * FROM census_release", sa.create_engine(sqlite))
        if target == "parquet":
            return pd.read_parquet(tmp_path / "out" / "census_release.parquet")
        return published_rows(Path(data["destination"]["duckdb"]), "census_release")

    assert run_release(ReleaseSpec.from_dict(data)).passed
    before = multiset(published())

    release_killed_at_the_swap(data, monkeypatch)
    assert multiset(published()).equals(before)
    if target == "same_duckdb":
        tables = {r[0] for r in duckdb.connect(str(db), read_only=True).execute("SHOW TABLES").fetchall()}
        assert published_tables(tables) == {"census", "census_release"}  # the staging table was dropped
    if target == "same_sqlite":
        assert published_tables(sa.inspect(sa.create_engine(sqlite)).get_table_names()) == {"census", "census_release"}


def test_local_recoding_refuses_a_source_above_the_memory_limit(tmp_path: Path) -> None:
    db = census_db(tmp_path / "source.duckdb")
    data = demo_spec_dict(
        tmp_path / "mondrian",
        source={"duckdb": str(db), "table": "census", "max_rows_in_memory": 1_000},
    )
    data["algorithm"] = {"name": "mondrian"}
    with pytest.raises(ConfigurationError, match=r"2000 rows, more than source.max_rows_in_memory = 1000"):
        run_release(ReleaseSpec.from_dict(data))


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"duckdb": "missing.duckdb", "table": "census"}, "does not exist"),
        ({"duckdb": "x.duckdb"}, "exactly one of table or query"),
        ({"duckdb": "x.duckdb", "table": "t", "max_rows_in_memory": 0}, "max_rows_in_memory"),
    ],
)
def test_bad_engine_settings_are_clear_errors_before_work(source, message: str, tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path, source=source)
    with pytest.raises(ConfigurationError, match=message):
        run_release(ReleaseSpec.from_dict(data))
    assert not (tmp_path / "release.duckdb").exists()


def test_a_parquet_source_above_the_size_limit_goes_through_duckdb(
    reference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, memory_rows = reference
    path = tmp_path / "census.parquet"
    pp.generate_census(ROWS, seed=0).to_parquet(path, index=False)
    data = demo_spec_dict(tmp_path / "ooc", source={"path": str(path), "out_of_core_bytes": 1_000})
    no_pandas_reads(monkeypatch)
    monkeypatch.setattr(sources, "read_table", lambda *a, **k: pytest.fail("the source was read into pandas"))
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    assert result.loaded.kind == "snapshot" and result.loaded.source.startswith("duckdb:")
    assert result.candidate.levels == memory.candidate.levels  # type: ignore[union-attr]
    assert multiset(published_rows(tmp_path / "ooc" / "release.duckdb", "census_release")).equals(multiset(memory_rows))


@pytest.mark.parametrize(
    "source",
    [
        {"duckdb": "missing.duckdb", "table": "census"},
        {"duckdb": "source.duckdb", "table": "no_such_table"},
        {"duckdb": "source.duckdb", "table": "census", "max_rows_in_memory": "many"},
    ],
)
def test_cli_bad_engine_settings_exit_2_before_work(source, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from privacy_plugins.cli import main

    census_db(tmp_path / "source.duckdb")
    data = demo_spec_dict(tmp_path, source={k: str(tmp_path / v) if k == "duckdb" else v for k, v in source.items()})
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    assert not (tmp_path / "release.duckdb").exists() and not (tmp_path / "reports").exists()


@pytest.mark.spark
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_spark_parquet_source_released_equals_memory(reference, tmp_path: Path, monkeypatch) -> None:
    import os
    import shutil

    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)")
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    memory, memory_rows = reference
    path = tmp_path / "census.parquet"
    pp.generate_census(ROWS, seed=0).to_parquet(path, index=False)
    settings = {"spark.master": "local[1]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    data = demo_spec_dict(tmp_path / "spark", source={"spark": str(path), "spark_settings": settings})
    no_pandas_reads(monkeypatch)
    try:
        result = run_release(ReleaseSpec.from_dict(data))
    finally:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
    assert result.passed, result.failure
    assert result.loaded.kind == "snapshot" and result.loaded.source.startswith("spark:")
    assert result.candidate.levels == memory.candidate.levels  # type: ignore[union-attr]
    assert result.candidate.suppressed == memory.candidate.suppressed  # type: ignore[union-attr]
    rows = published_rows(tmp_path / "spark" / "release.duckdb", "census_release")
    assert multiset(rows).equals(multiset(memory_rows))


def test_bad_spark_settings_are_errors_before_work(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path, source={"spark": "t", "spark_settings": {"executor.memory": "1g"}})
    with pytest.raises(ConfigurationError, match=r"spark\.\* keys"):
        ReleaseSpec.from_dict(data)


def test_a_table_larger_than_the_memory_budget_is_released_through_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """600,000 rows and a pandas budget of 100,000: only aggregates (one row per class) come to Python."""
    from privacy_plugins.engines.sql import SqlTable

    db = census_db(tmp_path / "source.duckdb")
    connection = duckdb.connect(str(db))
    connection.execute("CREATE TABLE big AS SELECT c.* FROM census c, range(300) r(i)")
    connection.close()
    data = demo_spec_dict(tmp_path / "big", source={"duckdb": str(db), "table": "big", "max_rows_in_memory": 100_000})
    data["destination"] = {"duckdb": str(db), "table": "big_release"}
    no_pandas_reads(monkeypatch)
    fetched: list[int] = []
    group_counts = SqlTable.group_counts

    def counting(self, columns):
        aggregates = group_counts(self, columns)
        fetched.append(len(aggregates))
        return aggregates

    monkeypatch.setattr(SqlTable, "group_counts", counting)
    monkeypatch.setattr(SqlTable, "batches", lambda *a, **k: pytest.fail("published rows were fetched"))
    result = run_release(ReleaseSpec.from_dict(data))
    assert fetched and max(fetched) <= 2_000  # the distinct combinations of the 2,000 source rows at most
    assert result.passed, result.failure
    assert result.loaded.rows == 600_000 == result.candidate.rows_out + result.candidate.suppressed  # type: ignore[union-attr]
    connection = duckdb.connect(str(db), read_only=True)
    published = connection.execute("SELECT COUNT(*) FROM big_release").fetchone()
    connection.close()
    assert published == (result.candidate.rows_out,)  # type: ignore[union-attr]
    mondrian = {**data, "algorithm": {"name": "mondrian"}}
    with pytest.raises(ConfigurationError, match="max_rows_in_memory"):
        run_release(ReleaseSpec.from_dict(mondrian))


def postgres_census(url: str) -> None:
    engine = sa.create_engine(url)
    pp.generate_census(ROWS, seed=0).to_sql("census", engine, index=False)
    engine.dispose()


def postgres_rows(url: str, table: str) -> pd.DataFrame:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return pd.read_sql_query(sa.text(f'SELECT * FROM "{table}"'), connection)
    finally:
        engine.dispose()


def postgres_tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_postgresql_source_released_inside_the_same_database(
    reference, postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One PostgreSQL database is source and destination: CREATE TABLE … AS, then a swap in one transaction."""
    memory, memory_rows = reference
    postgres_census(postgres_url)
    data = demo_spec_dict(tmp_path / "pg", source={"url": postgres_url, "table": "census"})
    data["destination"] = {"url": postgres_url, "table": "census_release"}
    no_pandas_reads(monkeypatch)
    monkeypatch.setattr(SqlTable, "batches", lambda *a, **k: pytest.fail("published rows were fetched"))
    result = run_release(ReleaseSpec.from_dict(data))
    monkeypatch.undo()
    assert result.passed, result.failure
    assert result.candidate is not None and memory.candidate is not None
    assert result.candidate.levels == memory.candidate.levels
    assert result.candidate.suppressed == memory.candidate.suppressed
    assert result.candidate.ncp == pytest.approx(memory.candidate.ncp, rel=1e-12)
    assert result.loaded.rows == ROWS == result.candidate.rows_out + result.candidate.suppressed
    rows = postgres_rows(postgres_url, "census_release")
    assert "person_id" not in rows.columns
    assert multiset(rows).equals(multiset(memory_rows))
    checks = {c.name: (c.passed, c.observed) for c in result.check.checks}  # type: ignore[union-attr]
    assert checks == {c.name: (c.passed, c.observed) for c in memory.check.checks}  # type: ignore[union-attr]
    assert published_tables(postgres_tables(postgres_url)) == {"census", "census_release"}  # no staging/helper


def test_postgresql_crash_between_staging_and_swap_keeps_the_previous_release(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    postgres_census(postgres_url)
    data = demo_spec_dict(tmp_path / "pg", source={"url": postgres_url, "table": "census"}, history=False)
    data["destination"] = {"url": postgres_url, "table": "census_release"}
    assert run_release(ReleaseSpec.from_dict(data)).passed
    before = multiset(postgres_rows(postgres_url, "census_release"))

    release_killed_at_the_swap(data, monkeypatch)
    assert multiset(postgres_rows(postgres_url, "census_release")).equals(before)
    assert published_tables(postgres_tables(postgres_url)) == {"census", "census_release"}  # staging dropped


def test_a_csv_source_above_the_size_limit_goes_through_duckdb_with_the_pandas_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "census.csv"
    pp.generate_census(ROWS, seed=0).to_csv(path, index=False)
    memory = run_release(ReleaseSpec.from_dict(demo_spec_dict(tmp_path / "pandas", source={"path": str(path)})))
    assert memory.passed, memory.failure
    assert not memory.loaded.path.startswith("duckdb:")  # below the default 1 GB: read by pandas
    data = demo_spec_dict(tmp_path / "ooc", source={"path": str(path), "out_of_core_bytes": 1_000})
    no_pandas_reads(monkeypatch)
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: pytest.fail("the source was read into pandas"))
    result = run_release(ReleaseSpec.from_dict(data))
    monkeypatch.undo()
    assert result.passed, result.failure
    assert result.loaded.kind == "snapshot" and result.loaded.source.startswith("duckdb:")
    assert result.candidate is not None and memory.candidate is not None
    assert result.candidate.levels == memory.candidate.levels
    assert result.candidate.suppressed == memory.candidate.suppressed
    assert result.candidate.ncp == pytest.approx(memory.candidate.ncp, rel=1e-12)
    assert result.loaded.rows == ROWS == result.candidate.rows_out + result.candidate.suppressed
    rows = published_rows(tmp_path / "ooc" / "release.duckdb", "census_release")
    assert "person_id" not in rows.columns
    assert multiset(rows).equals(multiset(published_rows(tmp_path / "pandas" / "release.duckdb", "census_release")))
    checks = {c.name: (c.passed, c.observed) for c in result.check.checks}  # type: ignore[union-attr]
    assert checks == {c.name: (c.passed, c.observed) for c in memory.check.checks}  # type: ignore[union-attr]


def test_a_large_csv_duckdb_cannot_type_as_pandas_is_refused_before_work(tmp_path: Path) -> None:
    path = tmp_path / "census.csv"
    frame = pp.generate_census(200, seed=0)
    frame.to_csv(path, index=False)
    with path.open("a") as handle:
        handle.write(",".join(f'" {v}"' if i == 1 else str(v) for i, v in enumerate(frame.iloc[0])) + "\n")
    data = demo_spec_dict(tmp_path / "ooc", source={"path": str(path), "out_of_core_bytes": 1_000})
    with pytest.raises(ConfigurationError, match="quoted values that start with a space"):
        run_release(ReleaseSpec.from_dict(data))
    assert not (tmp_path / "ooc" / "release.duckdb").exists()


def test_step_by_step_load_of_a_large_database_source_stores_only_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Airflow's operators and Dagster's assets run load_step: above the memory limit it stays inside the database."""
    from privacy_plugins.release.steps import load_step

    db = census_db(tmp_path / "source.duckdb")
    data = demo_spec_dict(
        tmp_path / "steps", source={"duckdb": str(db), "table": "census", "max_rows_in_memory": 1_000}
    )
    no_pandas_reads(monkeypatch)
    loaded = load_step(ReleaseSpec.from_dict(data))
    assert loaded.kind == "snapshot" and loaded.rows == ROWS and Path(loaded.path).name == "snapshot.parquet"
    assert "person_id" not in loaded.columns
    monkeypatch.undo()
    snapshot = pd.read_parquet(loaded.path)
    assert len(snapshot) <= ROWS and snapshot[COUNT_COLUMN].sum() == ROWS and "person_id" not in snapshot.columns
    mondrian = ReleaseSpec.from_dict({**data, "algorithm": {"name": "mondrian"}})
    with pytest.raises(ConfigurationError, match="2000 rows, more than .* = 1000: this release needs the rows"):
        load_step(mondrian)
