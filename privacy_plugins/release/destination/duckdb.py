"""A DuckDB file destination: staged by DuckDB itself whenever DuckDB runs the source.

* Source in the same file: ``CREATE TABLE <staging> AS SELECT …`` there (:mod:`.tables`).
* Source run by another DuckDB (another file, or Parquet/CSV read in process): the
  destination file is ``ATTACH``-ed in the source's own connection and the staging table
  created there by ``CREATE TABLE … AS SELECT`` across the two files, registered in the
  destination's registry in the same transaction; then ``DETACH``. No row enters Python.
* Any other source: the run's Parquet working file, loaded by ``read_parquet`` inside the
  swap transaction.
* In-memory frames: handed to DuckDB by its own Python API (``register``), no SQL inserts.
"""

from __future__ import annotations

import errno
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from privacy_plugins.errors import DestinationBusy, DestinationError
from privacy_plugins.release import locations
from privacy_plugins.release.destination import working_file
from privacy_plugins.release.destination.base import TABLE, Staged, StageRun, reading
from privacy_plugins.release.destination.tables import TableDestination, quote
from privacy_plugins.release.workarea import destination_lock

if TYPE_CHECKING:
    import sqlalchemy as sa

    from privacy_plugins.engines.base import EngineTable

__all__ = ["DuckDBDestination"]

_T = TypeVar("_T")


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class DuckDBDestination(TableDestination):
    """``destination: {duckdb: FILE, table: NAME}``."""

    @property
    def path(self) -> Path:
        """The DuckDB file."""
        assert self.spec.duckdb is not None
        return self.spec.duckdb

    def url(self) -> str:
        """``duckdb:///<file>``."""
        return f"duckdb:///{self.path}"

    def engine(self, *, read_only: bool = False) -> sa.Engine:
        """``duckdb:///<file>`` (its folder created when writing).

        Read-only unless this process already holds the file open for writing (a DuckDB source in the
        same file, a validation's engine), when DuckDB refuses a read-only connection: then like them.
        """
        import sqlalchemy as sa

        if read_only and self.path.is_file() and _held_open_here(self.path):
            read_only = False
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return sa.create_engine(self.url(), connect_args={"read_only": True} if read_only else {})

    def reaches(self, table: EngineTable) -> bool:
        """A DuckDB table of this very file."""
        from privacy_plugins.engines.sql import SqlTable

        if not isinstance(table, SqlTable) or table.engine_name != "duckdb":
            return False
        database = table.engine.url.database
        if not database or database == ":memory:":
            return False
        return Path(database).resolve() == self.path.resolve()

    def _stage_elsewhere(self, table: EngineTable, run: StageRun) -> Staged:
        if working_file.in_duckdb(table):
            return self._stage_attached(table, run)
        return working_file.stage_files({TABLE: table}, run)

    def _stage_attached(self, table: Any, run: StageRun) -> Staged:
        """``ATTACH`` this file in the source's DuckDB and ``CREATE TABLE … AS SELECT`` the staging table there."""
        with destination_lock(self.spec):  # it writes into the file: never while another release publishes there
            return self._stage_attached_locked(table, run)

    def _stage_attached_locked(self, table: Any, run: StageRun) -> Staged:
        import sqlalchemy as sa

        from privacy_plugins.release import staging

        name = staging.staging_name(run.spec, run.run_id)
        with self._transaction() as connection:  # our leftovers and a foreign registry, in the file itself
            staging.clean_staging(connection, run.spec, run.run_id)
        alias = f"pp_destination_{uuid.uuid4().hex[:8]}"
        try:
            with table.transaction() as connection:  # the connection holding the source's temporary helpers
                connection.execute(sa.text(f"ATTACH {_literal(self.path)} AS {alias}"))
                staged = f"{alias}.main.{quote(connection, name)}"
                connection.execute(sa.text(f"CREATE TABLE {staged} AS {table.select_sql()}"))
                staging.register(connection, name, catalog=alias)  # committed with the table
                rows = int(connection.execute(sa.text(f"SELECT COUNT(*) FROM {staged}")).scalar_one())
        finally:
            with table.transaction() as connection:
                attached = connection.execute(
                    sa.text("SELECT COUNT(*) FROM duckdb_databases() WHERE database_name = :alias"), {"alias": alias}
                ).scalar_one()
                if attached:
                    connection.execute(sa.text(f"DETACH {alias}"))
        return Staged("table", {TABLE: name}, {TABLE: rows})

    def _load_file(self, connection: Any, name: str, path: str) -> None:
        import sqlalchemy as sa

        literal = "'" + path.replace("'", "''") + "'"
        connection.execute(sa.text(f"CREATE TABLE {quote(connection, name)} AS SELECT * FROM read_parquet({literal})"))

    def _load_frame(self, connection: Any, name: str, frame: pd.DataFrame) -> None:
        import sqlalchemy as sa

        raw = connection.connection.driver_connection  # DuckDB's own connection: the frame is scanned, not inserted
        view = f"pp_frame_{uuid.uuid4().hex[:8]}"
        raw.register(view, frame)
        try:
            connection.execute(sa.text(f"CREATE TABLE {quote(connection, name)} AS SELECT * FROM {view}"))
        finally:
            raw.unregister(view)

    def _exists(self) -> bool:
        if not self.path.exists():
            return False
        if not self.path.is_file() or not locations.has_magic(self.path, locations.DUCKDB_MAGIC):
            raise DestinationError(f"destination.duckdb: {self.path} exists but is not a DuckDB database")
        return True

    def _read(self, parts: Sequence[str]) -> dict[str, pd.DataFrame] | None:
        import duckdb

        if not self._exists():
            return None
        if _held_open_here(self.path):  # a read-only connection is refused beside this process's own: the engine's way
            return super()._read(parts)
        with duckdb.connect(str(self.path), read_only=True) as connection:
            tables = {
                row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()
            }
            if any(self.target(part) not in tables for part in parts):
                return None
            return {part: connection.execute(f'SELECT * FROM "{self.target(part)}"').df() for part in parts}

    def read_companions(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        """The companion tables of ``names`` in the file; :class:`DestinationBusy` while another process writes it."""
        return reading(self.spec, lambda: self._unless_busy(lambda: self._read_tables(names)))

    def published_columns(self) -> list[str] | None:
        """The published table's columns; :class:`DestinationBusy` while another process writes the file."""
        return reading(self.spec, lambda: self._unless_busy(self._published_columns))

    def _unless_busy(self, read: Callable[[], _T]) -> _T:
        """``read()``; a file another process holds locked for writing is busy, not unreadable."""
        import duckdb
        import sqlalchemy.exc

        try:
            return read()
        except (duckdb.IOException, sqlalchemy.exc.DBAPIError) as exc:
            cause = exc.orig if isinstance(exc, sqlalchemy.exc.DBAPIError) else exc
            if not isinstance(cause, duckdb.IOException) or not _locked_by_another_process(self.path):
                raise
        raise DestinationBusy(
            f"another release is publishing to {self.spec.describe()} right now; nothing was done "
            "(run this release again once it has finished)"
        )

    def _read_tables(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        if not self._exists():
            return {}
        engine = self.engine(read_only=True)
        try:
            with engine.connect() as connection:
                raw: Any = connection.connection.driver_connection
                tables = {row[0] for row in raw.execute("SELECT table_name FROM information_schema.tables").fetchall()}
                return {name: raw.execute(f'SELECT * FROM "{name}"').df() for name in names if name in tables}
        finally:
            engine.dispose()


def _locked_by_another_process(path: Path) -> bool:
    """Whether another process holds a write lock on ``path`` (DuckDB's lock of a file open for writing).

    Asked only after DuckDB refused to open the file, so this process holds no DuckDB lock on it
    (closing the probe's descriptor would release it). ``False`` where POSIX locks are not available.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return False
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.lockf(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EACCES, errno.EAGAIN)
    finally:
        os.close(descriptor)
    return False


def _held_open_here(path: Path) -> bool:
    """Whether this process holds ``path`` open for writing (DuckDB then refuses a read-only connection)."""
    import duckdb

    try:
        duckdb.connect(str(path), read_only=True).close()
    except duckdb.ConnectionException as exc:
        if "different configuration" in str(exc):
            return True
        raise
    return False
