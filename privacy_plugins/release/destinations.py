"""Atomic publishing: the destination holds the old release or the new one, never a partial one.

* DuckDB (the embedded default): the new table is written under a temporary
  name inside one transaction, its row count verified, then swapped in for the
  old one (drop + rename) before the commit. A failure or a crash at any point
  rolls back: the previous table stays exactly as it was.
* Parquet: ``<folder>/<table>.parquet`` is written to a temporary file in the
  same folder, its row count read back from the file's metadata, then renamed
  over the old file (an atomic rename on POSIX).
* Spark (a catalog table or a local Parquet folder): staged, counted, then swapped;
  :mod:`privacy_plugins.release.spark_destination` says what atomicity each gives.
* Any SQLAlchemy URL: the same write-verify-swap as DuckDB in one transaction
  (atomic where the database has transactional DDL, as SQLite and PostgreSQL do).
  For SQLite the pysqlite driver's own transaction handling is switched off so
  that ``CREATE TABLE`` runs inside the transaction too (by default pysqlite
  only opens a transaction before DML, so the incoming table's ``CREATE`` was
  committed on its own and a crash left it behind).

Leftovers of killed runs:

* incoming tables ``<table>__incoming_<8 hex>``: on DuckDB, SQLite and PostgreSQL
  they are created, renamed and never committed under that name (transactional
  DDL): a kill leaves none. So a visible table with such a name is never ours and
  is never dropped — it may be the user's own table. Other dialects (MySQL,
  Oracle, ...) commit DDL at once; a killed publish there can leave its incoming
  table, which is left alone too (it may belong to a live run).

Leftovers of killed runs that are removed before publishing:

* temporary files ``.<table>.parquet.<8 chars>.tmp`` beside a Parquet file.
  A writer holds an exclusive ``flock`` on its temporary file until it is
  renamed or removed; the kernel releases it when the process dies. A temporary
  file is removed only if that lock can be taken (its writer is gone) and it is
  older than :data:`STALE_TEMPORARY_SECONDS` (which covers the instant between
  creating the file and locking it). Where ``flock`` is unavailable (Windows,
  some network filesystems) only files older than :data:`STALE_TEMPORARY_UNLOCKED_SECONDS`
  are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from privacy_plugins.errors import DestinationError, PublishError
from privacy_plugins.release import locations
from privacy_plugins.release.spec import DestinationSpec

__all__ = [
    "STALE_TEMPORARY_SECONDS",
    "STALE_TEMPORARY_UNLOCKED_SECONDS",
    "DestinationError",
    "PublishError",
    "atomic_file",
    "publish_table",
    "publishing",
    "read_published",
    "remove_stale_temporaries",
]

STALE_TEMPORARY_SECONDS = 5.0
"""An unlocked temporary file younger than this may be one a live writer has not locked yet."""

STALE_TEMPORARY_UNLOCKED_SECONDS = 24 * 3600.0
"""Without ``flock``, a temporary file is taken for a live writer's until it is this old."""

_T = TypeVar("_T")


def _io_errors() -> tuple[type[BaseException], ...]:
    """The errors a destination's I/O raises: OS, DuckDB, SQLAlchemy and Arrow errors (and Spark's, when installed)."""
    import duckdb
    import pyarrow
    import sqlalchemy.exc

    errors: tuple[type[BaseException], ...] = (
        OSError,
        duckdb.Error,
        sqlalchemy.exc.SQLAlchemyError,
        pyarrow.ArrowException,
    )
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError:
        return errors
    return (*errors, PySparkException, Py4JError)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _swap_hook() -> None:
    """Called between writing the new table and swapping it in (tests inject crashes here)."""


def _verify(expected: int, written: int, where: str) -> None:
    if written != expected:
        raise PublishError(f"wrote {written} rows to {where} but the release has {expected}; nothing was published")


def _publish_duckdb(frame: pd.DataFrame, path: Path, table: str) -> None:
    def load(connection: Any, temporary: str) -> None:
        connection.register("release_frame", frame)
        connection.execute(f'CREATE TABLE "{temporary}" AS SELECT * FROM release_frame')
        connection.unregister("release_frame")

    _swap_into_duckdb(path, table, len(frame), load)


def publish_parquet_to_duckdb(parquet: Path, path: Path, table: str, rows: int) -> None:
    """Atomically replace ``table`` in the DuckDB file ``path`` with a Parquet file (DuckDB reads it, not pandas)."""

    def load(connection: Any, temporary: str) -> None:
        connection.execute(f'CREATE TABLE "{temporary}" AS SELECT * FROM read_parquet(?)', [str(parquet)])

    _swap_into_duckdb(path, table, rows, load)


def _swap_into_duckdb(path: Path, table: str, rows: int, load: Callable[[Any, str], None]) -> None:
    """Load the new rows into a temporary table, verify the count, swap: one transaction."""
    temporary = f"{table}__incoming_{uuid.uuid4().hex[:8]}"
    with _duckdb_transaction(path) as connection:
        load(connection, temporary)
        row = connection.execute(f'SELECT COUNT(*) FROM "{temporary}"').fetchone()
        _verify(rows, int(row[0]) if row else -1, f"{path}#{temporary}")
        _swap_hook()
        connection.execute(f'DROP TABLE IF EXISTS "{table}"')
        connection.execute(f'ALTER TABLE "{temporary}" RENAME TO "{table}"')


@contextmanager
def _duckdb_transaction(path: Path) -> Iterator[Any]:
    """A connection to the DuckDB file ``path`` in one transaction: committed if the block succeeds, or rolled back."""
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(path))
    try:
        connection.execute("BEGIN TRANSACTION")
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        # A stop signal handled right after COMMIT returned finds no transaction: keep the signal's exception.
        with contextlib.suppress(duckdb.Error):
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


def _lock(handle: int) -> bool:
    """Take an exclusive non-blocking ``flock`` on an open file; ``False`` when another holder has it.

    Raises:
        OSError: locking is not supported here (Windows, some network filesystems).
    """
    if sys.platform == "win32":
        raise OSError("flock is not available on Windows")
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files that killed :func:`atomic_file` writers left beside ``target``.

    Only files named like ours (``.<name>.<8 chars>.tmp``) whose writer is gone:
    nobody holds their lock and they are older than :data:`STALE_TEMPORARY_SECONDS`
    (without locking: older than :data:`STALE_TEMPORARY_UNLOCKED_SECONDS`).
    Returns the files removed.
    """
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")
    try:
        candidates = [p for p in target.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return []
    removed = []
    now = time.time()
    for candidate in candidates:
        try:
            handle = os.open(candidate, os.O_RDWR)  # NFS emulates flock with write locks
        except OSError:
            continue  # gone already, or not ours to read
        try:
            age = now - os.fstat(handle).st_mtime
            try:
                stale = _lock(handle) and age > STALE_TEMPORARY_SECONDS
            except OSError:
                stale = age > STALE_TEMPORARY_UNLOCKED_SECONDS
            if stale:
                candidate.unlink(missing_ok=True)
                removed.append(candidate)
        finally:
            os.close(handle)  # releases our lock
    return removed


@contextmanager
def atomic_file(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` only if the block succeeds.

    Readers see the old file or the new one, never a partial one (rename is atomic
    on POSIX within a folder); on any error the temporary file is removed. The
    temporary file is ``flock``-ed until then, so :func:`remove_stale_temporaries`
    can tell a live writer's file from a killed one's. It gets the mode of any new
    file (``0o666`` minus the umask, 0644 with the usual umask 022), like the
    reports, not ``mkstemp``'s private 0600.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:  # O_EXCL: a fresh file, never an existing one; the kernel applies the umask to 0o666
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        locked = _lock(handle)
    except OSError:
        locked = False  # no locking here: stale files are then recognized by age only
    if not locked:
        os.close(handle)  # (Windows cannot rename a file that is still open)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        if locked:
            os.close(handle)  # releases the lock


def _publish_parquet(frame: pd.DataFrame, folder: Path, table: str) -> None:
    import pyarrow.parquet as pq

    remove_stale_temporaries(folder / f"{table}.parquet")
    with atomic_file(folder / f"{table}.parquet") as temporary:
        frame.to_parquet(temporary, index=False)
        _verify(len(frame), pq.ParquetFile(temporary).metadata.num_rows, str(temporary))
        _swap_hook()


def _transactional_sqlite_ddl(engine: Any) -> None:
    """Let SQLAlchemy, not pysqlite, emit ``BEGIN`` so that DDL runs inside the transaction.

    pysqlite (Python < 3.12 ``isolation_level`` mode) begins a transaction only
    before INSERT/UPDATE/DELETE, so ``CREATE TABLE`` and ``DROP``/``ALTER`` would
    each commit on their own (SQLAlchemy docs: "Serializable isolation /
    Savepoints / Transactional DDL" for pysqlite).
    """
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")


def _publish_sql(frame: pd.DataFrame, url: str, table: str, *, where: str) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    if engine.dialect.name == "sqlite" and engine.dialect.driver == "pysqlite":
        _transactional_sqlite_ddl(engine)
    temporary = f"{table}__incoming_{uuid.uuid4().hex[:8]}"
    try:
        with engine.begin() as connection:
            frame.to_sql(temporary, connection, index=False)
            count = connection.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{temporary}"')).scalar_one()
            _verify(len(frame), int(count), f"{where} ({temporary})")  # never the URL: it may hold a password
            _swap_hook()
            connection.execute(sqlalchemy.text(f'DROP TABLE IF EXISTS "{table}"'))
            connection.execute(sqlalchemy.text(f'ALTER TABLE "{temporary}" RENAME TO "{table}"'))
    finally:
        engine.dispose()


def _publish_spark(frame: pd.DataFrame, destination: DestinationSpec) -> None:
    from privacy_plugins.release import spark_destination

    spark_destination.publish_frame(frame, destination)


def publish_table(frame: pd.DataFrame, destination: DestinationSpec) -> int:
    """Atomically replace the destination table with ``frame``; returns the rows published.

    Raises:
        PublishError: the destination could not be written (a one-line message;
            the I/O error is chained); the destination was left as it was.
    """
    _publish_to(
        destination,
        duckdb=lambda path: _publish_duckdb(frame, path, destination.table),
        parquet=lambda folder: _publish_parquet(frame, folder, destination.table),
        sql=lambda: _publish_sql(frame, destination.sql_url(), destination.table, where=destination.describe()),
        spark=lambda: _publish_spark(frame, destination),
    )
    return len(frame)


def _publish_to(
    destination: DestinationSpec,
    *,
    duckdb: Callable[[Path], None],
    parquet: Callable[[Path], None],
    sql: Callable[[], None],
    spark: Callable[[], None] | None = None,
    what: str = "",
) -> None:
    """Call the writer of the destination's kind; an I/O error becomes one :class:`PublishError` naming ``what``."""
    with publishing(destination, what=what):
        if destination.duckdb is not None:
            duckdb(destination.duckdb)
        elif destination.parquet is not None:
            parquet(destination.parquet)
        elif destination.spark is not None:
            if spark is None:
                raise PublishError(f"{destination.describe()} does not take {what or 'this release'}")
            spark()
        else:
            sql()


@contextmanager
def publishing(destination: DestinationSpec, *, what: str = "") -> Iterator[None]:
    """An I/O error in the block becomes one :class:`PublishError` naming ``what`` and the destination."""
    try:
        yield
    except PublishError:
        raise
    except _io_errors() as exc:
        subject = f" {what}" if what else ""
        raise PublishError(
            f"could not publish{subject} to {destination.describe()}: {_one_line(exc)}; "
            "the destination was left as it was"
        ) from exc


def read_published(destination: DestinationSpec) -> pd.DataFrame | None:
    """The table currently published at ``destination`` (``None`` when there is none yet).

    Raises:
        DestinationError: the destination exists but is not what the spec says
            (not a DuckDB database, a folder that is a file, not Parquet, ...) or cannot be read.
    """
    return _read_from(destination, _read_published)


def _read_from(destination: DestinationSpec, read: Callable[[DestinationSpec], _T]) -> _T:
    """``read(destination)``; an I/O error becomes one :class:`DestinationError`."""
    try:
        return read(destination)
    except DestinationError:
        raise
    except _io_errors() as exc:
        raise DestinationError(f"cannot read {destination.describe()}: {_one_line(exc)}") from exc


def _read_published(destination: DestinationSpec) -> pd.DataFrame | None:
    if destination.spark is not None:
        from privacy_plugins.release import spark_destination

        return spark_destination.read(destination)
    if destination.duckdb is not None:
        if not destination.duckdb.exists():
            return None
        if not destination.duckdb.is_file() or not locations.has_magic(destination.duckdb, locations.DUCKDB_MAGIC):
            raise DestinationError(f"destination.duckdb: {destination.duckdb} exists but is not a DuckDB database")
        import duckdb

        with duckdb.connect(str(destination.duckdb), read_only=True) as connection:
            tables = {
                row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()
            }
            if destination.table not in tables:
                return None
            return connection.execute(f'SELECT * FROM "{destination.table}"').df()
    if destination.parquet is not None:
        if destination.parquet.exists() and not destination.parquet.is_dir():
            raise DestinationError(f"destination.parquet: {destination.parquet} is a file, not a folder")
        path = destination.parquet / f"{destination.table}.parquet"
        if not path.exists():
            return None
        if not path.is_file() or not locations.has_magic(path, locations.PARQUET_MAGIC):
            raise DestinationError(f"destination.parquet: {path} exists but is not a Parquet file")
        return pd.read_parquet(path)
    import sqlalchemy

    url = destination.sql_url()
    try:
        locations.check_database_url(f"destination.{destination.kind}", url, write=False)
    except ValueError as exc:
        raise DestinationError(str(exc)) from None
    database = locations.sqlite_file(url)
    if database is not None and not database.exists():
        return None  # connecting would create an empty database file
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            if not sqlalchemy.inspect(connection).has_table(destination.table):
                return None
            return pd.read_sql_table(destination.table, connection)
    finally:
        engine.dispose()
