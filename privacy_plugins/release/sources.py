"""Reading the raw table a spec points to: a CSV/Parquet file, a SQL table or query, or the demo census.

No reader may rename or drop a column: a repeated column name (a CSV header, a
Parquet schema, or a SQL query's result columns, e.g. ``SELECT ssn, ssn``) is a
clear error naming the column, raised before anything is written.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.io import check_unique_columns, read_table
from privacy_plugins.engines.sql import database_message
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.spec import SourceSpec

__all__ = ["read_source", "source_url"]


def source_url(source: SourceSpec) -> str:
    """The SQLAlchemy URL of a ``url:``, ``conn_id:`` or ``duckdb:`` source (never log it: it may hold a password)."""
    if source.conn_id is not None:  # resolved only now
        from privacy_plugins.release.connections import resolve_url

        return resolve_url(source.conn_id, setting="source.conn_id")
    if source.duckdb is not None:
        if not source.duckdb.is_file():
            raise ConfigurationError(f"source.duckdb: {str(source.duckdb)!r} does not exist")
        return f"duckdb:///{source.duckdb}"
    assert source.url is not None
    return source.url


_LOCAL_RECODING_NEEDS_ROWS = (
    "this release needs the rows in memory (a local-recoding algorithm such as Mondrian or clustering, "
    "or suppressed_rows: mark); use a full-domain algorithm (optimal, samarati, exhaustive) with "
    "suppressed_rows: remove, which runs inside the database, or raise the limit"
)


def _check_memory_limit(connection: object, source: SourceSpec, selectable: Any, because: str) -> None:
    """Refuse to pull more than ``max_rows_in_memory`` rows into pandas (count them in the database first)."""
    import sqlalchemy

    assert isinstance(connection, sqlalchemy.Connection)
    count = sqlalchemy.select(sqlalchemy.func.count()).select_from(selectable)
    _too_many(int(connection.execute(count).scalar_one()), source, because)


def _too_many(rows: int, source: SourceSpec, because: str) -> None:
    if rows > source.max_rows_in_memory:
        raise ConfigurationError(
            f"the source has {rows} rows, more than source.max_rows_in_memory = {source.max_rows_in_memory}: " + because
        )


def _read_spark(source: SourceSpec, because: str) -> pd.DataFrame:
    """A Spark source brought to pandas (only for algorithms that need the rows; counted first)."""
    from privacy_plugins.engines.spark import open_spark_table

    assert source.spark is not None
    table = open_spark_table(source.spark, source.spark_settings)
    _too_many(table.count(), source, because)
    return table.to_pandas()


def _file_rows(source: SourceSpec) -> int | None:
    """The rows of a Parquet source (from its metadata) or of a CSV larger than ``out_of_core_bytes`` (DuckDB scan).

    ``None`` for a CSV below that size (read directly: counting would cost as much) or a missing path.
    """
    path = source.path
    if path is None or not path.exists():
        return None
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if path.is_dir() or path.suffix.lower() in (".parquet", ".pq", ".parq"):  # as read_table
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    if sum(f.stat().st_size for f in files) <= source.out_of_core_bytes:
        return None
    from privacy_plugins.engines.duckdb_csv import open_csv_in_duckdb

    table = open_csv_in_duckdb(path, sep=source.sep, encoding=source.encoding)
    try:
        return table.count()
    finally:
        table.engine.dispose()


def read_source(source: SourceSpec, *, needs_rows_because: str | None = None) -> pd.DataFrame:
    """The raw table (SQL sources are read through SQLAlchemy).

    A database or Spark source, a Parquet file or a CSV file larger than ``source.out_of_core_bytes``
    with more than ``source.max_rows_in_memory`` rows is refused before it is read (counted first);
    ``needs_rows_because`` says in that error why this release needs the rows (by default: its
    algorithm recodes locally).
    """
    because = needs_rows_because or _LOCAL_RECODING_NEEDS_ROWS
    if source.generate is not None:
        return generate_census(source.rows, seed=source.seed)
    if source.path is not None:
        rows = _file_rows(source)
        if rows is not None:
            _too_many(rows, source, because)
        return read_table(source.path, sep=source.sep, encoding=source.encoding)
    if source.spark is not None:
        return _read_spark(source, because)
    import sqlalchemy

    url = source_url(source)
    try:
        engine = sqlalchemy.create_engine(url)
    except (sqlalchemy.exc.ArgumentError, ImportError) as exc:
        if source.conn_id is None:
            detail = mask_password(str(exc))
            raise ConfigurationError(f"cannot open source url {mask_password(url)!r}: {detail}") from exc
        missing = f" ({exc.name})" if isinstance(exc, ImportError) else ""  # the text may quote the URL
        raise ConfigurationError(
            f"source.conn_id: cannot open connection {source.conn_id!r}: {type(exc).__name__}{missing}"
        ) from None
    try:
        return _read_sql(engine, source, because)
    except sqlalchemy.exc.DBAPIError as exc:
        setting = "source.query" if source.query is not None else "source.table"
        message = mask_password(database_message(exc))
        raise ConfigurationError(f"{setting}: the database refused it: {message}") from None
    finally:
        engine.dispose()


def _read_sql(engine: Any, source: SourceSpec, because: str) -> pd.DataFrame:
    """The rows of a ``table:`` or ``query:`` source (the query first run as one subquery, nothing fetched)."""
    import sqlalchemy

    from privacy_plugins.engines.sql import frame_from_rows

    with engine.connect() as connection:
        if source.table is not None:
            if not sqlalchemy.inspect(connection).has_table(source.table):
                raise ConfigurationError(f"source table {source.table!r} not found at {engine.url!r}")
            _check_memory_limit(connection, source, sqlalchemy.table(source.table), because)
            if engine.dialect.name != "duckdb":  # duckdb_engine cannot reflect tables (SQLAlchemy 2.1)
                return pd.read_sql_table(source.table, connection)
        quoted = engine.dialect.identifier_preparer.quote(str(source.table))
        query = str(source.query) if source.query is not None else f"SELECT * FROM {quoted}"
        if source.query is not None:  # first as one subquery: a second statement is a syntax error there
            subquery = sqlalchemy.text(query).columns().subquery("source_query")
            _check_memory_limit(connection, source, subquery, because)
        result = connection.execute(sqlalchemy.text(query))
        if not result.returns_rows:
            raise ConfigurationError("source query returned no rows (it must be a SELECT)")
        columns = [str(name) for name in result.keys()]  # the cursor's names, before pandas sees them
        check_unique_columns(columns, where="the result of source.query")
        return frame_from_rows(result.fetchall(), columns, coerce_float=True)
