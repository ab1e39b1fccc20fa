"""A database destination reached through SQLAlchemy (DuckDB files and SQL URLs): one stage, one swap body.

Staged rows are tables in the destination database itself, named and registered as
``release/staging.py`` says (bound to the run, in the ``pp_working_tables`` registry,
cleaned up by age or run tag), or — when no engine reaches the destination from the
source — the run's Parquet working file (:mod:`.working_file`).

The swap, written once (:meth:`TableDestination._swap_in`) and used by every path: in
one transaction on the destination, the staged rows are re-measured and accepted (what
was checked is what is swapped), each incoming table is counted and verified, the
swap hook runs, then ``DROP`` + ``ALTER … RENAME`` per part, and ``COMMIT``. Two parts
(Anatomy's QIT and ST) swap in the same transaction: both or neither. On DuckDB, SQLite
and PostgreSQL (transactional DDL) a crash before ``COMMIT`` leaves the previous
release and no incoming table; databases that commit DDL per statement (MySQL …) can
lose the table between ``DROP`` and ``RENAME`` and keep an incoming table.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd

from privacy_plugins.errors import ConfigurationError, ForeignArtifactError
from privacy_plugins.release.destination import base, working_file
from privacy_plugins.release.destination.base import (
    TABLE,
    Accept,
    Companions,
    SqlLocation,
    Staged,
    StageRun,
    publishing,
    reading,
    verify,
)
from privacy_plugins.release.progress import LOGGER
from privacy_plugins.release.spec import DestinationSpec

if TYPE_CHECKING:
    import sqlalchemy as sa

    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = ["TableDestination", "quote"]

Load = Callable[[Any, str], None]
"""Creates the incoming table of the given name in the connection's transaction."""


def quote(connection: Any, name: str) -> str:
    """``name`` quoted for the connection's dialect."""
    return str(connection.dialect.identifier_preparer.quote(name))


class TableDestination(ABC):
    """Staging tables, measure, swap, discard and read for a database destination (subclasses: how to connect)."""

    spec: DestinationSpec

    def __init__(self, spec: DestinationSpec) -> None:
        self.spec = spec

    # -- what a kind says ---------------------------------------------------------------------------------------

    @abstractmethod
    def engine(self, *, read_only: bool = False) -> sa.Engine:
        """A new SQLAlchemy engine on the destination (dispose it)."""

    @abstractmethod
    def url(self) -> str:
        """The destination's SQLAlchemy URL (a connection id resolved; never log it: it may hold a password)."""

    @abstractmethod
    def reaches(self, table: EngineTable) -> bool:
        """Whether ``table`` lives in this very database (then ``CREATE TABLE … AS`` stages it)."""

    def _stage_elsewhere(self, table: EngineTable, run: StageRun) -> Staged:
        """Stage a table of another database (default: the run's working file)."""
        return working_file.stage_files({TABLE: table}, run)

    def _load_file(self, connection: Any, name: str, path: str) -> None:
        """Create table ``name`` from the staged Parquet file, in the transaction."""
        pd.read_parquet(path).to_sql(name, connection, index=False)  # another engine: through pandas

    def _load_frame(self, connection: Any, name: str, frame: pd.DataFrame) -> None:
        """Create table ``name`` holding ``frame``, in the transaction."""
        frame.to_sql(name, connection, index=False)

    def _exists(self) -> bool:
        """Whether the destination database exists (reading never creates it)."""
        return True

    # -- names --------------------------------------------------------------------------------------------------

    def target(self, part: str) -> str:
        """The published table of ``part``: ``<table>``, or ``<table>_qit`` / ``<table>_st``."""
        return self.spec.table if part == TABLE else f"{self.spec.table}_{part}"

    @staticmethod
    def _incoming(target: str) -> str:
        return f"{target}__incoming_{uuid.uuid4().hex[:8]}"

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        engine = self.engine()
        try:
            with engine.begin() as connection:
                yield connection
        finally:
            engine.dispose()

    # -- the one swap -------------------------------------------------------------------------------------------

    def _swap_in(
        self,
        connection: Any,
        incoming: Mapping[str, str],
        rows: Mapping[str, int],
        measure: Callable[[], Companions | None] = lambda: None,
    ) -> None:
        """``measure`` (re-measure and accept), verify each incoming table's count, the hook, drop + rename each.

        The companion tables ``measure`` returns (the release history) replace theirs in the same transaction.
        """
        import sqlalchemy as sa

        companions = measure() or {}  # first: rows changed since the check are refused as such (ReleaseBlocked)
        for part, name in incoming.items():
            count = connection.execute(sa.text(f"SELECT COUNT(*) FROM {quote(connection, name)}")).scalar_one()
            verify(rows[part], int(count), f"{self.spec.describe()} ({name})")  # never the URL: it may hold a password
        base.before_swap()
        for part, name in incoming.items():
            target = quote(connection, self.target(part))
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {target}"))
            connection.execute(sa.text(f"ALTER TABLE {quote(connection, name)} RENAME TO {target}"))
        for name, frame in companions.items():
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {quote(connection, name)}"))
            self._load_frame(connection, name, frame)

    def replace(self, frames: Mapping[str, pd.DataFrame]) -> dict[str, int]:
        """Load the frames under incoming names and swap them in, all in one transaction."""
        rows = {part: len(frame) for part, frame in frames.items()}
        with publishing(self.spec, what="" if set(frames) == {TABLE} else "the linked pair"), self._transaction() as c:
            incoming = {part: self._incoming(self.target(part)) for part in frames}
            for part, frame in frames.items():
                self._load_frame(c, incoming[part], frame)
            self._swap_in(c, incoming, rows)
        return rows

    # -- staged rows --------------------------------------------------------------------------------------------

    def stage(self, parts: Mapping[str, EngineTable], run: StageRun) -> Staged:
        """Same database: ``CREATE TABLE <staging> AS SELECT …`` there; otherwise :meth:`_stage_elsewhere`.

        A two-table release's pair is staged as the run's working files (loaded at the swap).
        """
        if set(parts) != {TABLE}:
            return working_file.stage_files(parts, run)
        table = parts[TABLE]
        # A source's error (a value it failed to convert …) surfaces as the source's, as in every step.
        if self.reaches(table):
            return self._stage_here(table, run)
        return self._stage_elsewhere(table, run)

    def _stage_here(self, table: Any, run: StageRun) -> Staged:
        import sqlalchemy as sa

        from privacy_plugins.release import staging

        name = staging.staging_name(run.spec, run.run_id)
        with table.transaction() as connection:  # short: it holds the registry (see staging.py)
            staging.clean_staging(connection, run.spec, run.run_id)
        with table.transaction() as connection:  # the connection holding the table's temporary helper tables
            connection.execute(sa.text(f"CREATE TABLE {quote(connection, name)} AS {table.select_sql()}"))
            staging.register(connection, name)  # committed with the table: only ours is ever dropped
            rows = int(connection.execute(sa.text(f"SELECT COUNT(*) FROM {quote(connection, name)}")).scalar_one())
        return Staged("table", {TABLE: name}, {TABLE: rows})

    def accept_staged(self, staged: Staged, run: StageRun) -> None:
        """A staging table of this run and destination table, or the run's unchanged working file."""
        from privacy_plugins.release import staging

        if staged.kind == "file":
            working_file.accept_files(staged, run)
        elif staged.kind != "table" or not staging.belongs_to_run(run.spec, run.run_id, staged.name):
            raise ForeignArtifactError(
                f"the candidate names staging table {staged.name!r}, which is not this run's staging "
                f"table for {self.spec.describe()}; refusing it"
            )

    @contextmanager
    def _staged_table(self, staged: Staged, *, begin: bool) -> Iterator[tuple[Any, Any]]:
        """A connection to the destination and the staging table (``begin``: in a transaction committed after)."""
        from privacy_plugins.engines.sql import lightweight_table
        from privacy_plugins.release import staging

        engine = self.engine()
        try:
            with engine.begin() if begin else engine.connect() as connection:
                if not self._has_table(connection, staged.name):
                    hours = staging.STALE_STAGING_SECONDS / 3600
                    raise ConfigurationError(
                        f"this run's staging table {staged.name!r} is gone (dropped after a failed check, or "
                        f"cleaned up as older than {hours:.0f} h); re-run the release from the anonymize step"
                    )
                yield connection, lightweight_table(connection, staged.name)
        finally:
            engine.dispose()

    @staticmethod
    def _has_table(connection: Any, name: str) -> bool:
        import sqlalchemy as sa

        return bool(sa.inspect(connection).has_table(name))

    def measure(self, staged: Staged, run: StageRun) -> StagedMeasure:
        """One ``COUNT(*)`` and one ``GROUP BY`` on the staging table (or the working file, by DuckDB)."""
        from privacy_plugins.release.staging import measure_staged

        if staged.kind == "file":
            return working_file.measure_staged(staged, run)
        with self._staged_table(staged, begin=False) as (connection, selectable):
            return measure_staged(run.spec, connection, selectable)

    def swap(self, staged: Staged, run: StageRun, accept: Accept) -> StagedMeasure:
        """Re-measure inside the swap transaction, ``accept``, verify and swap (a working file: loaded first)."""
        from privacy_plugins.engines.sql import lightweight_table
        from privacy_plugins.release import staging

        measured: list[StagedMeasure] = []

        def remeasure(connection: Any, name: str) -> Callable[[], Companions | None]:
            def run_it() -> Companions | None:
                measured.append(staging.measure_staged(run.spec, connection, lightweight_table(connection, name)))
                return accept(measured[-1])

            return run_it

        if staged.kind == "file":  # measured as the check did, loaded, measured again, counted, swapped
            paths = working_file.accept_files(staged, run)

            def measure_files() -> Companions | None:
                measured.append(working_file.measure_files(run.spec, paths))
                return accept(measured[-1])

            measure_files()  # a refused file never touches the destination (no database file created)
            with publishing(self.spec, what="the linked pair" if staged.linked else ""), self._transaction() as c:
                incoming = {part: self._incoming(self.target(part)) for part in paths}
                for part, path in paths.items():
                    self._load_file(c, incoming[part], str(path))
                self._swap_in(c, incoming, staged.rows, measure_files)
            return measured[-1]
        with self._staged_table(staged, begin=True) as (connection, _):  # what was measured is what is swapped
            staging.clean_staging(connection, run.spec, run.run_id, keep=staged.name)
            self._swap_in(connection, {TABLE: staged.name}, staged.rows, remeasure(connection, staged.name))
            staging.forget(connection, [staged.name])
        return measured[-1]

    def discard(self, staged: Staged, run: StageRun) -> None:
        """Drop the run's staging table if this product created it (best effort: else dropped as stale later)."""
        from privacy_plugins.release import staging

        if staged.kind != "table" or not staging.belongs_to_run(run.spec, run.run_id, staged.name):
            return
        try:
            engine = self.engine()
            try:
                dropped = staging.drop_table(engine, staged.name)
            finally:
                engine.dispose()
            if dropped:
                LOGGER.info("dropped the staging table %s of run %s", staged.name, run.run_id)
        except Exception as exc:  # any database error: the stale cleanup removes the table later
            LOGGER.warning("could not drop the staging table %s: %s", staged.name, type(exc).__name__)

    def read_staged(self, staged: Staged, run: StageRun, refuse: Callable[[int], None]) -> pd.DataFrame:
        """The staged rows, counted and refused first."""
        if staged.kind == "file":
            return working_file.read_staged(staged, run, refuse)
        with self._staged_table(staged, begin=False) as (connection, selectable):
            return working_file.read_selectable(connection, selectable, refuse)

    def sql_location(self, staged: Staged, run: StageRun) -> SqlLocation | None:
        """The staging table in this database, or the working file read by an in-process DuckDB."""
        if staged.kind == "file":
            return working_file.sql_location(staged, run)
        self.accept_staged(staged, run)
        return SqlLocation(self.url(), table=staged.name)

    # -- what is published --------------------------------------------------------------------------------------

    def read(self, parts: Sequence[str] = (TABLE,)) -> dict[str, pd.DataFrame] | None:
        """The published tables of ``parts`` (``None`` when one is missing)."""
        return reading(self.spec, lambda: self._read(parts))

    def _read(self, parts: Sequence[str]) -> dict[str, pd.DataFrame] | None:
        if not self._exists():
            return None
        engine = self.engine(read_only=True)
        try:
            with engine.connect() as connection:
                if not all(self._has_table(connection, self.target(part)) for part in parts):
                    return None
                return {part: pd.read_sql_table(self.target(part), connection) for part in parts}
        finally:
            engine.dispose()

    def read_companions(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        """The companion tables of ``names`` that exist in the database."""
        return reading(self.spec, lambda: self._read_tables(names))

    def _read_tables(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        if not self._exists():
            return {}
        engine = self.engine(read_only=True)
        try:
            with engine.connect() as connection:
                present = [name for name in names if self._has_table(connection, name)]
                return {name: pd.read_sql_table(name, connection) for name in present}
        finally:
            engine.dispose()

    def write_companions(self, companions: Companions) -> None:
        """Replace the companion tables in one transaction."""
        import sqlalchemy as sa

        with publishing(self.spec, what="the release history"), self._transaction() as connection:
            for name, frame in companions.items():
                connection.execute(sa.text(f"DROP TABLE IF EXISTS {quote(connection, name)}"))
                self._load_frame(connection, name, frame)

    def published_sha256(self) -> str | None:
        """``None``: companions are swapped in the release's own transaction."""
        return None

    def published_columns(self) -> list[str] | None:
        """The published table's columns from the database's catalog (``None``: no such table)."""
        return reading(self.spec, self._published_columns)

    def _published_columns(self) -> list[str] | None:
        import sqlalchemy as sa

        if not self._exists():
            return None
        engine = self.engine(read_only=True)
        try:
            with engine.connect() as connection:
                if not self._has_table(connection, self.target(TABLE)):
                    return None
                table = quote(connection, self.target(TABLE))
                empty = connection.execute(sa.text(f"SELECT * FROM {table} WHERE 1 = 0"))
                return [str(column) for column in empty.keys()]
        finally:
            engine.dispose()

    def measure_published(self, spec: ReleaseSpec, staging_table: str) -> StagedMeasure | None:
        """The published table measured in the database; ``None`` while the run's ``staging_table`` still exists."""
        from privacy_plugins.engines.sql import SqlTable
        from privacy_plugins.release import staging

        if not self._exists():
            return None
        engine = self.engine(read_only=True)
        try:
            with engine.connect() as connection:
                if not self._has_table(connection, spec.destination.table):
                    return None
                if staging_table and self._has_table(connection, staging_table):
                    return None  # not swapped in: publish it (re-measured then)
            table = SqlTable.from_table(engine, spec.destination.table)
            try:
                return staging.measure_table(spec, table)
            finally:
                table.close()
        finally:
            engine.dispose()
