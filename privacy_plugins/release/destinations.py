"""Atomic publishing: the destination holds the old release or the new one, never a partial one.

* DuckDB (the embedded default): the new table is written under a temporary
  name inside one transaction, its row count verified, then swapped in for the
  old one (drop + rename) before the commit. A failure or a crash at any point
  rolls back: the previous table stays exactly as it was.
* Parquet: ``<folder>/<table>.parquet`` is written to a temporary file in the
  same folder, its row count read back from the file's metadata, then renamed
  over the old file (an atomic rename on POSIX).
* Any SQLAlchemy URL: the same write-verify-swap as DuckDB in one transaction
  (atomic where the database has transactional DDL, as SQLite and PostgreSQL do).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from privacy_plugins.errors import PublishError
from privacy_plugins.release.spec import DestinationSpec

__all__ = ["PublishError", "atomic_file", "publish_table", "read_published"]


def _swap_hook() -> None:
    """Called between writing the new table and swapping it in (tests inject crashes here)."""


def _verify(expected: int, written: int, where: str) -> None:
    if written != expected:
        raise PublishError(f"wrote {written} rows to {where} but the release has {expected}; nothing was published")


def _publish_duckdb(frame: pd.DataFrame, path: Path, table: str) -> None:
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = f"{table}__incoming_{uuid.uuid4().hex[:8]}"
    connection = duckdb.connect(str(path))
    try:
        connection.execute("BEGIN TRANSACTION")
        connection.register("release_frame", frame)
        connection.execute(f'CREATE TABLE "{temporary}" AS SELECT * FROM release_frame')
        connection.unregister("release_frame")
        row = connection.execute(f'SELECT COUNT(*) FROM "{temporary}"').fetchone()
        _verify(len(frame), int(row[0]) if row else -1, f"{path}#{temporary}")
        _swap_hook()
        connection.execute(f'DROP TABLE IF EXISTS "{table}"')
        connection.execute(f'ALTER TABLE "{temporary}" RENAME TO "{table}"')
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


@contextmanager
def atomic_file(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` only if the block succeeds.

    Readers see the old file or the new one, never a partial one (rename is atomic
    on POSIX within a folder); on any error the temporary file is removed.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _publish_parquet(frame: pd.DataFrame, folder: Path, table: str) -> None:
    import pyarrow.parquet as pq

    with atomic_file(folder / f"{table}.parquet") as temporary:
        frame.to_parquet(temporary, index=False)
        _verify(len(frame), pq.ParquetFile(temporary).metadata.num_rows, str(temporary))
        _swap_hook()


def _publish_sql(frame: pd.DataFrame, url: str, table: str) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    temporary = f"{table}__incoming_{uuid.uuid4().hex[:8]}"
    try:
        with engine.begin() as connection:
            frame.to_sql(temporary, connection, index=False)
            count = connection.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{temporary}"')).scalar_one()
            _verify(len(frame), int(count), f"{url}#{temporary}")
            _swap_hook()
            connection.execute(sqlalchemy.text(f'DROP TABLE IF EXISTS "{table}"'))
            connection.execute(sqlalchemy.text(f'ALTER TABLE "{temporary}" RENAME TO "{table}"'))
    finally:
        engine.dispose()


def publish_table(frame: pd.DataFrame, destination: DestinationSpec) -> int:
    """Atomically replace the destination table with ``frame``; returns the rows published."""
    if destination.duckdb is not None:
        _publish_duckdb(frame, destination.duckdb, destination.table)
    elif destination.parquet is not None:
        _publish_parquet(frame, destination.parquet, destination.table)
    else:
        assert destination.url is not None
        _publish_sql(frame, destination.url, destination.table)
    return len(frame)


def read_published(destination: DestinationSpec) -> pd.DataFrame | None:
    """The table currently published at ``destination`` (``None`` when there is none yet)."""
    if destination.duckdb is not None:
        if not destination.duckdb.exists():
            return None
        import duckdb

        with duckdb.connect(str(destination.duckdb), read_only=True) as connection:
            tables = {
                row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()
            }
            if destination.table not in tables:
                return None
            return connection.execute(f'SELECT * FROM "{destination.table}"').df()
    if destination.parquet is not None:
        path = destination.parquet / f"{destination.table}.parquet"
        return pd.read_parquet(path) if path.exists() else None
    import sqlalchemy

    assert destination.url is not None
    engine = sqlalchemy.create_engine(destination.url)
    try:
        with engine.connect() as connection:
            if not sqlalchemy.inspect(connection).has_table(destination.table):
                return None
            return pd.read_sql_table(destination.table, connection)
    finally:
        engine.dispose()
