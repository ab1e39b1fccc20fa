"""Reading the raw table a spec points to: a CSV/Parquet file, a SQL table or query, or the demo census.

No reader may rename or drop a column: a repeated column name (a CSV header, a
Parquet schema, or a SQL query's result columns, e.g. ``SELECT ssn, ssn``) is a
clear error naming the column, raised before anything is written.
"""

from __future__ import annotations

import pandas as pd

from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.tables import check_unique_columns, read_table
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.spec import SourceSpec

__all__ = ["read_source"]


def read_source(source: SourceSpec) -> pd.DataFrame:
    """The raw table (SQL sources are read through SQLAlchemy)."""
    if source.generate is not None:
        return generate_census(source.rows, seed=source.seed)
    if source.path is not None:
        return read_table(source.path, sep=source.sep)
    import sqlalchemy

    url = source.url
    if source.conn_id is not None:  # resolved only now; the URL (with its password) is never shown
        from privacy_plugins.release.connections import resolve_url

        url = resolve_url(source.conn_id, setting="source.conn_id")
    assert url is not None
    try:
        engine = sqlalchemy.create_engine(url)
    except (sqlalchemy.exc.ArgumentError, ImportError) as exc:
        if source.conn_id is None:
            raise ConfigurationError(f"cannot open source url {source.url!r}: {exc}") from exc
        missing = f" ({exc.name})" if isinstance(exc, ImportError) else ""  # the text may quote the URL
        raise ConfigurationError(
            f"source.conn_id: cannot open connection {source.conn_id!r}: {type(exc).__name__}{missing}"
        ) from None
    try:
        with engine.connect() as connection:
            if source.table is not None:
                if not sqlalchemy.inspect(connection).has_table(source.table):
                    raise ConfigurationError(f"source table {source.table!r} not found at {engine.url!r}")
                return pd.read_sql_table(source.table, connection)
            result = connection.execute(sqlalchemy.text(str(source.query)))
            if not result.returns_rows:
                raise ConfigurationError("source query returned no rows (it must be a SELECT)")
            columns = [str(name) for name in result.keys()]  # the cursor's names, before pandas sees them
            check_unique_columns(columns, where="the result of source.query")
            return pd.DataFrame.from_records(result.fetchall(), columns=columns, coerce_float=True)
    finally:
        engine.dispose()
