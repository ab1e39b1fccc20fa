"""What a release leaves in databases and destination folders, however it ends (issue 24, items 7 and 8).

* A release inside the database killed while its helper tables (raw distinct QI values,
  the QIs of suppressed classes) exist leaves no table behind: they are TEMPORARY tables
  of one session, invisible to every other session even while the run is alive.
* A release never drops a table it did not create: a user's tables named like the
  product's working tables survive; our own stale staging table (recorded in the
  registry) is dropped; a destination table named like a working table is refused.
* A killed two-table (Anatomy) release to Parquet leaves a version folder; the next
  release to that destination removes it, and only what is provably a dead writer's.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import sqlalchemy as sa
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from release_fixtures import demo_spec_dict, kill_when_reached

import privacy_plugins as pp
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import staging
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.linked import publish_linked, read_linked
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

ROWS = 1_500

CHILD = """
import json, pathlib, sys, time
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec

spec_path, marker, at = sys.argv[1:4]

def pause():
    pathlib.Path(marker).write_text(at)
    time.sleep(600)

generalize = SqlTable._generalize

def paused_after_generalize(self, *args, **kwargs):
    published = generalize(self, *args, **kwargs)
    pause()
    return published

if at == "helpers":
    SqlTable._generalize = paused_after_generalize
else:
    destination_base.before_swap = pause
run_release(ReleaseSpec.from_dict(json.loads(pathlib.Path(spec_path).read_text())))
"""

LINKED_CHILD = """
import pathlib, sys, time
import pandas as pd
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.linked import publish_linked
from privacy_plugins.release.spec import DestinationSpec

folder, marker = sys.argv[1:3]

def pause():
    pathlib.Path(marker).write_text("at the swap")
    time.sleep(600)

destination_base.before_swap = pause
frames = {"qit": pd.DataFrame({"age": [1, 2], "gid": [0, 0]}), "st": pd.DataFrame({"gid": [0], "count": [2]})}
publish_linked(frames, DestinationSpec(table="census", parquet=pathlib.Path(folder)))
"""


def kill_release(
    data: dict[str, Any], tmp_path: Path, at: str, while_paused: Callable[[], None] = lambda: None
) -> None:
    """Run the release ``data`` in a subprocess and kill it at ``helpers`` (generalized) or ``swap``."""
    spec_path, marker = tmp_path / f"spec_{at}.json", tmp_path / f"reached_{at}"
    spec_path.write_text(json.dumps(data))
    marker.unlink(missing_ok=True)
    kill_when_reached([CHILD, str(spec_path), str(marker), at], marker, while_paused)


def tables(url: str) -> set[str]:
    """The tables every other session sees (PostgreSQL: outside the temporary schemas)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "postgresql":
                query = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                return {str(r[0]) for r in connection.execute(sa.text(query))}
            return set(sa.inspect(connection).get_table_names())
    finally:
        engine.dispose()


def source(kind: str, tmp_path: Path, postgres: str | None = None) -> str:
    """A census table in a fresh ``kind`` database; its SQLAlchemy URL."""
    url = {
        "duckdb": f"duckdb:///{tmp_path / 'source.duckdb'}",
        "sqlite": f"sqlite:///{tmp_path / 'source.sqlite'}",
        "postgresql": postgres or "",
    }[kind]
    engine = sa.create_engine(url)
    pp.generate_census(ROWS, seed=0).to_sql("census", engine, index=False)
    engine.dispose()
    return url


def release_dict(url: str, tmp_path: Path, destination: dict[str, str] | None = None) -> dict[str, Any]:
    if url.startswith("duckdb:///"):
        where = {"duckdb": url.removeprefix("duckdb:///")}
    else:
        where = {"url": url}
    data = demo_spec_dict(tmp_path / "run", rows=ROWS, source={**where, "table": "census"})
    data["destination"] = destination or {**where, "table": "census_release"}
    return data


def killed_while_helpers_exist(url: str, tmp_path: Path, destination: dict[str, str] | None = None) -> None:
    seen: list[set[str]] = []

    def look() -> None:  # the DuckDB file is locked by the child; SQLite and PostgreSQL can be read
        if not url.startswith("duckdb"):
            seen.append(tables(url))

    kill_release(release_dict(url, tmp_path, destination), tmp_path, "helpers", look)
    assert all(names == {"census"} for names in seen), seen  # not even visible while the run lives
    assert tables(url) == {"census"}  # no helper table (raw values) left behind


@pytest.mark.parametrize("kind", ["duckdb", "sqlite"])
def test_a_killed_release_inside_the_database_leaves_no_helper_table(kind: str, tmp_path: Path) -> None:
    killed_while_helpers_exist(source(kind, tmp_path), tmp_path)


def test_a_killed_release_to_another_destination_leaves_no_helper_table_in_the_source(tmp_path: Path) -> None:
    url = source("duckdb", tmp_path)
    killed_while_helpers_exist(url, tmp_path, {"parquet": str(tmp_path / "out"), "table": "census_release"})


def test_a_killed_postgresql_release_leaves_no_helper_table(postgres_url: str, tmp_path: Path) -> None:
    killed_while_helpers_exist(source("postgresql", tmp_path, postgres_url), tmp_path)


def registered(url: str) -> set[str]:
    """The registry's names (empty when there is no registry)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            if not sa.inspect(connection).has_table("pp_working_tables"):
                return set()
            query = "SELECT privacy_plugins_working_table FROM pp_working_tables"
            return {str(r[0]) for r in connection.execute(sa.text(query))}
    finally:
        engine.dispose()


USER_TABLES = ["census_release__incoming_deadbeef", "census_release__staging_00000001_deadbeef"]


def user_tables(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        for name in USER_TABLES:
            connection.execute(sa.text(f'CREATE TABLE "{name}" (note VARCHAR(20))'))
            connection.execute(sa.text(f"INSERT INTO \"{name}\" VALUES ('mine')"))
    engine.dispose()


@pytest.mark.parametrize("kind", ["duckdb", "sqlite"])
def test_only_our_own_working_tables_are_dropped(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's tables named like working tables survive; a killed run's stale staging table is dropped."""
    only_ours_dropped(source(kind, tmp_path), tmp_path, monkeypatch)


def test_only_our_own_working_tables_are_dropped_on_postgresql(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_ours_dropped(source("postgresql", tmp_path, postgres_url), tmp_path, monkeypatch)


def only_ours_dropped(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = release_dict(url, tmp_path)
    kill_release(data, tmp_path, "swap")  # leaves this run's committed staging table
    killed = [n for n in tables(url) if "__staging_" in n]
    assert len(killed) == 1
    user_tables(url)
    monkeypatch.setattr(staging, "STALE_STAGING_SECONDS", -1.0)  # every staging table is now "stale"
    assert run_release(ReleaseSpec.from_dict(data)).passed
    assert tables(url) >= {"census", "census_release", *USER_TABLES}
    assert registered(url) == set()
    assert not set(killed) & tables(url)  # ours, recorded in the registry: dropped
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        for name in USER_TABLES:
            assert connection.execute(sa.text(f'SELECT note FROM "{name}"')).scalar_one() == "mine"
    engine.dispose()


def test_a_users_table_named_like_the_registry_is_never_used(tmp_path: Path) -> None:
    """Someone else's ``pp_working_tables`` is not our registry: the release is refused, nothing is dropped."""
    url = source("sqlite", tmp_path)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE pp_working_tables (name VARCHAR(99))"))
        connection.execute(sa.text(f"INSERT INTO pp_working_tables VALUES ('{USER_TABLES[1]}')"))
    engine.dispose()
    user_tables(url)
    with pytest.raises(ConfigurationError, match="'pp_working_tables' that is not this product's registry"):
        run_release(ReleaseSpec.from_dict(release_dict(url, tmp_path)))
    assert tables(url) == {"census", "pp_working_tables", *USER_TABLES}


@pytest.mark.parametrize("kind", ["duckdb", "url"])
def test_publishing_leaves_a_users_incoming_named_table_alone(kind: str, tmp_path: Path) -> None:
    from privacy_plugins.release import publish_table

    database = tmp_path / "release.db"
    spec = DestinationSpec(
        table="census", **({"duckdb": database} if kind == "duckdb" else {"url": f"sqlite:///{database}"})
    )
    if kind == "duckdb":
        with duckdb.connect(str(database)) as connection:
            connection.execute("CREATE TABLE census__incoming_deadbeef AS SELECT 'mine' AS note")
    else:
        with sqlite3.connect(database) as connection:
            connection.execute("CREATE TABLE census__incoming_deadbeef AS SELECT 'mine' AS note")
    publish_table(pd.DataFrame({"a": [1, 2]}), spec)
    url = f"duckdb:///{database}" if kind == "duckdb" else f"sqlite:///{database}"
    assert tables(url) == {"census", "census__incoming_deadbeef"}


@pytest.mark.parametrize(
    ("table", "pattern"),
    [
        ("census__incoming_deadbeef", "<table>__incoming_<8 hex>"),
        ("census__INCOMING_DEADBEEF", "<table>__incoming_<8 hex>"),
        ("census__staging_00000001_deadbeef", "<table>__staging_<8 hex>_<8 hex>"),
        ("pp_helper_0123456789ab", "pp_helper_<12 hex>"),
        ("pp_working_tables", "pp_working_tables"),
    ],
)
def test_a_destination_table_named_like_a_working_table_is_refused(
    table: str, pattern: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privacy_plugins.cli import main

    with pytest.raises(ConfigurationError, match=f"destination.table {table!r} matches {pattern!r}"):
        DestinationSpec(table=table, duckdb=tmp_path / "out.duckdb")
    data = demo_spec_dict(tmp_path)
    data["destination"]["table"] = table
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "destination.table" in err and pattern in err and "Traceback" not in err
    assert not (tmp_path / "release.duckdb").exists()


IDENTIFIERS = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,30}", fullmatch=True)
HEX8 = st.from_regex(r"[0-9a-f]{8}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(table=IDENTIFIERS, created=HEX8, tag=HEX8)
def test_no_working_name_of_any_table_is_an_acceptable_destination(table: str, created: str, tag: str) -> None:
    """Whatever table a release writes to, the names it works under can never be another release's destination."""
    working = [f"{table}__incoming_{tag}", f"{table}__previous_{tag}", f"{table}__staging_{created}_{tag}"]
    for name in [*working, f"pp_helper_{created}{tag[:4]}", "pp_working_tables"]:
        with pytest.raises(ConfigurationError, match="destination.table"):
            DestinationSpec(table=name, duckdb=Path("out.duckdb"))


@pytest.mark.parametrize("table", ["census", "census__incoming", "census__staging_1_2", "incoming_deadbeef"])
def test_ordinary_destination_tables_are_accepted(table: str, tmp_path: Path) -> None:
    assert DestinationSpec(table=table, duckdb=tmp_path / "out.duckdb").table == table


def pair(rows: int) -> dict[str, pd.DataFrame]:
    return {
        "qit": pd.DataFrame({"age": range(rows), "gid": [0] * rows}),
        "st": pd.DataFrame({"gid": [0], "count": [rows]}),
    }


def age(path: Path, seconds: float = 3600) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def test_a_killed_linked_parquet_release_leaves_nothing_after_the_next_release(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    spec = DestinationSpec(table="census", parquet=folder)
    publish_linked(pair(3), spec)
    marker = tmp_path / "at_swap"
    kill_when_reached([LINKED_CHILD, str(folder), str(marker)], marker)
    dead = [p for p in folder.iterdir() if p.name != "census" and p != (folder / "census").resolve()]
    assert len(dead) == 1 and dead[0].is_dir()  # the killed writer's version folder
    age(dead[0])
    staged_link = folder / ".census.link.0123abcd"  # killed in the instant of the swap
    staged_link.symlink_to(".census.89abcdef", target_is_directory=True)
    age(staged_link)
    publish_linked(pair(4), spec)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["census", (folder / "census").resolve().name])
    published = read_linked(spec)
    assert published is not None and len(published["qit"]) == 4


def test_only_dead_versions_of_ours_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    spec = DestinationSpec(table="census", parquet=folder)
    publish_linked(pair(3), spec)
    current = (folder / "census").resolve()
    age(current)
    foreign = folder / ".census.deadbeef"  # named like a version, but holds a file no version holds
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    other = folder / ".other.deadbeef"  # another link's
    other.mkdir()
    young = folder / ".census.00000001"  # a live writer that has not locked it yet
    young.mkdir()
    live = folder / ".census.00000002"  # a live writer holding its lock
    live.mkdir()
    (live / "census_qit.parquet").write_bytes(b"partial")
    not_a_version_link = folder / ".census.link.00000003"
    not_a_version_link.symlink_to("/etc", target_is_directory=True)
    for path in (foreign, other, live, not_a_version_link):
        age(path)
    handle = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        publish_linked(pair(4), spec)
    finally:
        os.close(handle)
    left = {p.name for p in folder.iterdir()}
    assert current.name not in left  # the previous version, replaced by the swap
    assert {foreign.name, other.name, young.name, live.name, not_a_version_link.name} <= left
    assert (foreign / "notes.txt").read_text() == "mine"
