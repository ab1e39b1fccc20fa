"""Each Destination kind: killed between stage and swap it keeps the old release, and the engines do the copying.

* A release killed (SIGKILL, a real subprocess) at the swap leaves the previous release
  whole — never a mix — and the next run's cleanup (a day later) leaves nothing of it:
  no staging or incoming table, no registry, no temporary file, no run folder.
* A DuckDB source published to another DuckDB file is staged by ``ATTACH`` + ``CREATE
  TABLE … AS`` and to a Parquet folder by ``COPY … TO``: no published row enters Python.
* A two-table release (Anatomy's QIT and ST) swaps both parts or neither, for each kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import sqlalchemy as sa
from release_fixtures import age_files, demo_spec_dict, kept_by_the_history, kill_when_reached

import privacy_plugins as pp
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import PublishError
from privacy_plugins.release import staging
from privacy_plugins.release.destination import TABLE, base, open_destination, working_file
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.linked import publish_linked, read_linked
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

ROWS = 1_500

CHILD = """
import json, pathlib, sys, time
from privacy_plugins.release.destination import base
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec

spec_path, marker = sys.argv[1:3]

def pause():
    pathlib.Path(marker).write_text("at the swap")
    time.sleep(600)

base.before_swap = pause
run_release(ReleaseSpec.from_dict(json.loads(pathlib.Path(spec_path).read_text())))
"""

LINKED_CHILD = """
import json, pathlib, sys, time
import pandas as pd
from privacy_plugins.release.destination import base
from privacy_plugins.release.linked import publish_linked
from privacy_plugins.release.spec import DestinationSpec

where, marker = sys.argv[1:3]

def pause():
    pathlib.Path(marker).write_text("at the swap")
    time.sleep(600)

base.before_swap = pause
frames = {"qit": pd.DataFrame({"age": [7] * 30, "gid": [1] * 30}), "st": pd.DataFrame({"gid": [1], "count": [30]})}
spec = {k: v if k in ("url", "table") else pathlib.Path(v) for k, v in json.loads(where).items()}
publish_linked(frames, DestinationSpec(**spec))
"""


def census_duckdb(path: Path) -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", pp.generate_census(ROWS, seed=0))
        connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    return path


def census_sqlite(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        pp.generate_census(ROWS, seed=0).to_sql("census", engine, index=False)
    finally:
        engine.dispose()


def census_postgres(url: str) -> None:
    census_sqlite(url)


def release_data(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """A release inside the database from a ``kind`` source/destination pair (working folders under work_root)."""
    source_db = tmp_path / "source.duckdb"
    if kind in ("duckdb_same", "duckdb_other", "parquet"):
        census_duckdb(source_db)
        source: dict[str, str] = {"duckdb": str(source_db), "table": "census"}
    else:
        url = f"sqlite:///{tmp_path / 'source.sqlite'}"
        if kind == "postgresql":
            url = request.getfixturevalue("postgres_url")
        census_sqlite(url)
        source = {"url": url, "table": "census"}
    destination = {
        "duckdb_same": {"duckdb": str(source_db)},
        "duckdb_other": {"duckdb": str(tmp_path / "other.duckdb")},
        "parquet": {"parquet": str(tmp_path / "out")},
        "sqlite": {"url": source.get("url", "")},
        "postgresql": {"url": source.get("url", "")},
    }[kind]
    data = demo_spec_dict(tmp_path / "run", source=source)
    data["destination"] = {**destination, "table": "census_release"}
    del data["workdir"]  # the default working root: run folders swept by age
    return data


def published(spec: ReleaseSpec) -> pd.DataFrame | None:
    frame = open_destination(spec.destination).read()
    return None if frame is None else frame[TABLE].sort_values(list(frame[TABLE].columns)).reset_index(drop=True)


def leftovers(spec: ReleaseSpec) -> list[str]:
    """What stays at the destination besides the published table (and the source table, the publish lock)."""
    target = spec.destination
    if target.parquet is not None:
        return sorted(
            p.name
            for p in target.parquet.iterdir()
            if p.name not in ("census_release.parquet",) and not kept_by_the_history(p.name)
        )
    url = f"duckdb:///{target.duckdb}" if target.duckdb is not None else target.sql_url()
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            names = set(sa.inspect(connection).get_table_names())
    finally:
        engine.dispose()
    return sorted(n for n in names - {"census", "census_release"} if not kept_by_the_history(n))


@pytest.mark.parametrize("kind", ["duckdb_same", "duckdb_other", "parquet", "sqlite", "postgresql"])
def test_killed_between_stage_and_swap_keeps_the_old_release_and_leaves_nothing(
    kind: str, tmp_path: Path, work_root: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = release_data(kind, tmp_path, request)
    first = run_release(ReleaseSpec.from_dict(data))
    assert first.passed, first.failure
    spec = ReleaseSpec.from_dict(data)
    old = published(spec)
    assert old is not None and len(old) == first.candidate.rows_out  # type: ignore[union-attr]

    stricter = {**data, "requirements": {**data["requirements"], "k": 8}}
    spec_path, marker = tmp_path / "strict.json", tmp_path / "at_swap"
    spec_path.write_text(json.dumps(stricter))
    kill_when_reached([CHILD, str(spec_path), str(marker)], marker)

    now = published(spec)
    assert now is not None
    pd.testing.assert_frame_equal(now, old)  # the old release, whole: not the new one, never a mix

    # A day later: the killed run's folder, temporary files and staging table are the leftovers of a dead run.
    age_files(work_root, hours=48)
    if spec.destination.parquet is not None:
        age_files(spec.destination.parquet, hours=48)
    monkeypatch.setattr(staging, "STALE_STAGING_SECONDS", -1.0)
    second = run_release(ReleaseSpec.from_dict(stricter))
    assert second.passed, second.failure
    new = published(spec)
    assert new is not None and len(new) == second.candidate.rows_out  # type: ignore[union-attr]
    assert [p for p in leftovers(spec) if not p.endswith(".lock")] == []
    assert not [p for p in work_root.rglob("*") if p.is_file() and p.suffix == ".parquet"]  # no working file


def no_rows_into_python(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse every way published rows enter Python; record the DuckDB ``COPY … TO`` calls."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("published rows were read into Python")

    monkeypatch.setattr(SqlTable, "batches", refuse)
    monkeypatch.setattr(SqlTable, "to_pandas", refuse)
    monkeypatch.setattr(working_file, "stream_to_parquet", refuse)
    monkeypatch.setattr(pd.DataFrame, "to_sql", refuse)
    copies: list[str] = []
    copy = working_file.copy_to_parquet

    def recorded(table: Any, path: Path) -> int:
        copies.append(str(path))
        return copy(table, path)

    monkeypatch.setattr(working_file, "copy_to_parquet", recorded)
    return copies


def test_duckdb_to_another_duckdb_file_stays_in_duckdb(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = release_data("duckdb_other", tmp_path, request)
    copies = no_rows_into_python(monkeypatch)
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    assert copies == []  # staged in the destination file itself, not in a working file
    assert result.candidate is not None and result.candidate.staging_table  # ATTACH + CREATE TABLE … AS
    monkeypatch.undo()
    with duckdb.connect(str(tmp_path / "other.duckdb"), read_only=True) as connection:
        tables = {r[0] for r in connection.execute("SHOW TABLES").fetchall()}
        rows = connection.execute("SELECT COUNT(*) FROM census_release").fetchone()
    assert {t for t in tables if not kept_by_the_history(t)} == {"census_release"}  # staging renamed in, no registry
    assert rows is not None and rows[0] == result.candidate.rows_out


def test_duckdb_to_parquet_uses_copy_to(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = release_data("parquet", tmp_path, request)
    copies = no_rows_into_python(monkeypatch)
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    assert len(copies) == 1 and Path(copies[0]).parent.name != "out"  # written by DuckDB into the run's folder
    monkeypatch.undo()
    frame = pd.read_parquet(tmp_path / "out" / "census_release.parquet")
    assert len(frame) == result.candidate.rows_out  # type: ignore[union-attr]


PAIR_KINDS = ["duckdb", "parquet", "sqlite"]


def pair_destination(kind: str, tmp_path: Path) -> DestinationSpec:
    where: dict[str, Any] = {
        "duckdb": {"duckdb": tmp_path / "pair.duckdb"},
        "parquet": {"parquet": tmp_path / "pair"},
        "sqlite": {"url": f"sqlite:///{tmp_path / 'pair.sqlite'}"},
    }[kind]
    return DestinationSpec(table="census", **where)


def old_pair() -> dict[str, pd.DataFrame]:
    return {"qit": pd.DataFrame({"age": [3] * 10, "gid": [0] * 10}), "st": pd.DataFrame({"gid": [0], "count": [10]})}


def assert_old_pair(destination: DestinationSpec) -> None:
    pair = read_linked(destination)
    assert pair is not None
    for part, frame in old_pair().items():
        pd.testing.assert_frame_equal(pair[part], frame, check_dtype=False)


@pytest.mark.parametrize("kind", PAIR_KINDS)
def test_two_tables_swap_both_or_neither(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    destination = pair_destination(kind, tmp_path)
    publish_linked(old_pair(), destination)

    def fail() -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(base, "before_swap", fail)
    new = {"qit": pd.DataFrame({"age": [9] * 20, "gid": [5] * 20}), "st": pd.DataFrame({"gid": [5], "count": [20]})}
    with pytest.raises(PublishError):
        publish_linked(new, destination)
    assert_old_pair(destination)
    monkeypatch.undo()
    publish_linked(new, destination)
    pair = read_linked(destination)
    assert pair is not None and len(pair["qit"]) == 20 and list(pair["st"]["gid"]) == [5]


@pytest.mark.parametrize("kind", PAIR_KINDS)
def test_two_tables_killed_at_the_swap_keep_the_old_pair(kind: str, tmp_path: Path) -> None:
    destination = pair_destination(kind, tmp_path)
    publish_linked(old_pair(), destination)
    where = {key: str(getattr(destination, key)) for key in ("duckdb", "parquet", "url") if getattr(destination, key)}
    marker = tmp_path / "at_swap"
    kill_when_reached([LINKED_CHILD, json.dumps({"table": "census", **where}), str(marker)], marker)
    assert_old_pair(destination)  # both old: neither part was swapped alone


def test_spark_destination_takes_no_pair(tmp_path: Path) -> None:
    with pytest.raises(PublishError, match="does not take the linked pair"):
        open_destination(DestinationSpec(spark=str(tmp_path / "out" / "census"))).replace(old_pair())


def test_staging_into_another_duckdb_file_waits_for_no_publisher(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The ATTACH stage writes into the destination file: not while another release holds its publish lock."""
    from privacy_plugins.errors import DestinationBusy
    from privacy_plugins.release.workarea import destination_lock

    spec = ReleaseSpec.from_dict(release_data("duckdb_other", tmp_path, request))
    with destination_lock(spec.destination), pytest.raises(DestinationBusy, match="another release is publishing"):
        run_release(spec)
    assert not (tmp_path / "other.duckdb").exists()  # nothing staged, nothing written
