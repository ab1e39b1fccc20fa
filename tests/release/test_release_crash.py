"""A publish killed half-way leaves the old release whole, and its leftovers are removed by the next publish."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from release_fixtures import REPO, destination_spec

from privacy_plugins.release import destinations, publish_table, read_published
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.spec import DestinationSpec

CHILD = """
import pathlib, sys, time
import pandas as pd
from privacy_plugins.release import destinations
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.spec import DestinationSpec

kind, where, marker = sys.argv[1:4]

def hook():
    pathlib.Path(marker).write_text("at the swap")
    time.sleep(600)

destination_base.before_swap = hook
spec = DestinationSpec(table="census", **{kind: where if kind == "url" else pathlib.Path(where)})
destinations.publish_table(pd.DataFrame({"a": range(1000), "b": ["x"] * 1000}), spec)
"""


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"a": range(rows), "b": ["y"] * rows})


def destination(kind: str, tmp_path: Path) -> DestinationSpec:
    return destination_spec(kind, tmp_path, table="census", database="release.db")


def leftovers(spec: DestinationSpec) -> list[str]:
    """Incoming tables or temporary files of unfinished publishes."""
    if spec.parquet is not None:
        return sorted(p.name for p in spec.parquet.iterdir() if p.name != "census.parquet")
    if spec.duckdb is not None:
        with duckdb.connect(str(spec.duckdb), read_only=True) as connection:
            names = [r[0] for r in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    else:
        with sqlite3.connect(str(Path(spec.url.removeprefix("sqlite:///")))) as connection:  # type: ignore[union-attr]
            names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return sorted(n for n in names if n != "census")


def kill_at_swap(spec: DestinationSpec, tmp_path: Path) -> None:
    """Run a publish in a subprocess and SIGKILL it once it reaches the swap."""
    marker = tmp_path / "at_swap"
    where = str(spec.duckdb or spec.parquet or spec.url)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, spec.kind, where, str(marker)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else b""
            assert time.monotonic() < deadline, "the child never reached the swap"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "url"])
def test_killed_publish_leaves_the_old_release_and_the_next_publish_cleans_up(kind: str, tmp_path: Path) -> None:
    spec = destination(kind, tmp_path)
    publish_table(frame(10), spec)
    kill_at_swap(spec, tmp_path)
    old = read_published(spec)
    assert old is not None and len(old) == 10  # the old release is untouched
    for path in spec.parquet.iterdir() if spec.parquet is not None else []:
        os.utime(path, (time.time() - 60, time.time() - 60))  # the crash happened a while ago
    publish_table(frame(500), spec)
    assert leftovers(spec) == []
    published = read_published(spec)
    assert published is not None
    pd.testing.assert_frame_equal(published, frame(500), check_dtype=False)


def test_sqlite_incoming_table_is_created_inside_the_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = destination("url", tmp_path)
    publish_table(frame(10), spec)

    def fail() -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(destination_base, "before_swap", fail)
    with pytest.raises(destinations.PublishError):
        publish_table(frame(500), spec)
    assert leftovers(spec) == []  # rolled back with the transaction, not committed on its own
    assert len(read_published(spec)) == 10  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["duckdb", "url"])
def test_tables_named_like_incoming_tables_are_left_alone(kind: str, tmp_path: Path) -> None:
    """Incoming tables are never committed under their name: a visible one is not ours, and is never dropped."""
    spec = destination(kind, tmp_path)
    publish_table(frame(10), spec)
    statements = [
        'CREATE TABLE "census__incoming_0123abcd" (a INTEGER)',
        'CREATE TABLE "census__incoming_notes" (a INTEGER)',
        'CREATE TABLE "other__incoming_0123abcd" (a INTEGER)',
    ]
    if spec.duckdb is not None:
        with duckdb.connect(str(spec.duckdb)) as connection:
            for statement in statements:
                connection.execute(statement)
    else:
        with sqlite3.connect(str(tmp_path / "release.db")) as connection:
            for statement in statements:
                connection.execute(statement)
    publish_table(frame(20), spec)
    assert leftovers(spec) == ["census__incoming_0123abcd", "census__incoming_notes", "other__incoming_0123abcd"]
    assert len(read_published(spec)) == 20  # type: ignore[arg-type]


def test_a_live_writers_temporary_file_is_left_alone(tmp_path: Path) -> None:
    spec = destination("parquet", tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    dead = folder / ".census.parquet.dead0000.tmp"
    live = folder / ".census.parquet.live0000.tmp"
    young = folder / ".census.parquet.young000.tmp"
    others = [folder / ".census.parquet.short.tmp", folder / ".other.parquet.dead0000.tmp", folder / "notes.txt"]
    for path in [dead, live, young, *others]:
        path.write_bytes(b"partial")
        if path is not young:
            os.utime(path, (time.time() - 3600, time.time() - 3600))
    with live.open("rb+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # a concurrent writer holds it
        publish_table(frame(5), spec)
        assert not dead.exists()
        assert live.exists() and young.exists() and all(p.exists() for p in others)
    assert destinations.remove_stale_temporaries(folder / "census.parquet") == [live]
    assert len(read_published(spec)) == 5  # type: ignore[arg-type]
