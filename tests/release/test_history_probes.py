"""Typed answers from the destination when the gate reads a history: busy, and "not a release of these columns"."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.errors import DestinationBusy, DestinationError, HistoryError
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination

KINDS = {
    "duckdb": lambda tmp: {"duckdb": str(tmp / "r.duckdb"), "table": "t"},
    "sqlite": lambda tmp: {"url": f"sqlite:///{tmp / 'r.sqlite'}", "table": "t"},
}


def _spec(tmp_path: Path, destination: dict[str, Any]) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=200)
    data["destination"] = destination
    return ReleaseSpec.from_dict(data)


def _create(destination: dict[str, Any], columns: list[str]) -> None:
    """A table named like the release's, holding ``columns`` (one row)."""
    definition = ", ".join(f'"{column}" VARCHAR' for column in columns)
    values = ", ".join("'x'" for _ in columns)
    if "duckdb" in destination:
        with duckdb.connect(destination["duckdb"]) as connection:
            connection.execute(f"CREATE TABLE t ({definition})")
            connection.execute(f"INSERT INTO t VALUES ({values})")
    else:
        with sqlite3.connect(destination["url"].removeprefix("sqlite:///")) as connection:
            connection.execute(f"CREATE TABLE t ({definition})")
            connection.execute(f"INSERT INTO t VALUES ({values})")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_same_named_table_without_these_columns_is_not_one_of_its_releases(tmp_path: Path, kind: str) -> None:
    destination = KINDS[kind](tmp_path)
    spec = _spec(tmp_path, destination)
    _create(destination, ["a", "b"])
    assert open_destination(spec.destination).published_columns() == ["a", "b"]
    assert len(read_history(spec, open_destination(spec.destination))) == 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_table_with_these_columns_is_one_of_its_releases(tmp_path: Path, kind: str) -> None:
    """Its quasi-identifiers and sensitive values are published: a history is required, whatever else it lacks."""
    destination = KINDS[kind](tmp_path)
    spec = _spec(tmp_path, destination)
    _create(destination, [*map(str, spec.quasi_identifiers), *map(str, spec.sensitive_attributes)])
    assert spec.insensitive  # the release would publish more columns than this table has: still one of its releases
    with pytest.raises(HistoryError, match="holds a published release but no release history"):
        read_history(spec, open_destination(spec.destination))


def test_no_published_table_has_no_columns(tmp_path: Path) -> None:
    for kind, destination in KINDS.items():
        assert open_destination(_spec(tmp_path / kind, destination(tmp_path)).destination).published_columns() is None


def test_a_duckdb_file_another_process_writes_is_busy(tmp_path: Path) -> None:
    destination = KINDS["duckdb"](tmp_path)
    spec = _spec(tmp_path, destination)
    _create(destination, ["a"])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); sys.stdin.read()",
            destination["duckdb"],
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(DestinationBusy, match="another release is publishing to duckdb:"):
            read_history(spec, open_destination(spec.destination))
        with pytest.raises(DestinationBusy):
            open_destination(spec.destination).published_columns()
    finally:
        holder.kill()
        holder.wait()
    assert len(read_history(spec, open_destination(spec.destination))) == 0  # free again: readable, not a release


def test_an_unreadable_destination_is_an_error_even_when_its_message_says_lock(tmp_path: Path) -> None:
    """Busy is the destination's typed answer, not a word in an error message."""
    folder = tmp_path / "lock"
    folder.mkdir()
    (folder / "r.duckdb").write_text("not a database")
    spec = _spec(tmp_path, {"duckdb": str(folder / "r.duckdb"), "table": "t"})
    with pytest.raises(DestinationError, match="not a DuckDB database") as raised:
        read_history(spec, open_destination(spec.destination))
    assert not isinstance(raised.value, DestinationBusy)
