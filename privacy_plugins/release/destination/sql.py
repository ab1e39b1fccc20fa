"""A SQL destination by SQLAlchemy URL or Airflow connection: staged in the database when the source is there.

* Source in the same database: ``CREATE TABLE <staging> AS SELECT …`` there (:mod:`.tables`).
* Any other source: the run's Parquet working file, read into pandas and written inside the
  swap transaction (the one case where published rows enter Python: no engine reaches the other).

For SQLite the pysqlite driver's own transaction handling is switched off so that
``CREATE TABLE`` runs inside the transaction too (by default pysqlite only opens a
transaction before DML, so the incoming table's ``CREATE`` was committed on its own and a
crash left it behind).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from privacy_plugins.errors import DestinationError
from privacy_plugins.release import locations
from privacy_plugins.release.destination.tables import TableDestination

if TYPE_CHECKING:
    import sqlalchemy as sa

    from privacy_plugins.engines.base import EngineTable

__all__ = ["SqlDestination", "transactional_engine"]


def transactional_engine(url: str) -> sa.Engine:
    """``create_engine(url)``; for pysqlite, SQLAlchemy (not the driver) emits ``BEGIN`` so that DDL is transactional.

    pysqlite (Python < 3.12 ``isolation_level`` mode) begins a transaction only
    before INSERT/UPDATE/DELETE, so ``CREATE TABLE`` and ``DROP``/``ALTER`` would
    each commit on their own (SQLAlchemy docs: "Serializable isolation /
    Savepoints / Transactional DDL" for pysqlite).
    """
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    if engine.dialect.name == "sqlite" and engine.dialect.driver == "pysqlite":

        @sa.event.listens_for(engine, "connect")
        def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None

        @sa.event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN")

    return engine


class SqlDestination(TableDestination):
    """``destination: {url: URL, table: NAME}`` or ``{conn_id: ID, table: NAME}``."""

    def url(self) -> str:
        """The URL (a connection id resolved now; never log it)."""
        return self.spec.sql_url()

    def engine(self, *, read_only: bool = False) -> sa.Engine:
        """An engine on the URL (a connection id resolved now; never log the URL)."""
        return transactional_engine(self.url())

    def reaches(self, table: EngineTable) -> bool:
        """A table of a SQLAlchemy engine on this very URL."""
        import sqlalchemy as sa

        from privacy_plugins.engines.sql import SqlTable

        if not isinstance(table, SqlTable):
            return False
        ours = sa.make_url(self.spec.sql_url()).render_as_string(hide_password=False)
        return bool(table.engine.url.render_as_string(hide_password=False) == ours)

    def _exists(self) -> bool:
        url = self.spec.sql_url()
        try:
            locations.check_database_url(f"destination.{self.spec.kind}", url, write=False)
        except ValueError as exc:
            raise DestinationError(str(exc)) from None
        database = locations.sqlite_file(url)
        return database is None or database.exists()  # connecting would create an empty database file
