"""The release's source as an engine table where its rows are: a database, Spark, a large file by DuckDB, or memory.

The load and anonymize steps open it here whatever the algorithm (:func:`opened_source`);
no row of a database, Spark or large-file source is read into Python by opening it. A
generated table or a file below ``source.out_of_core_bytes`` is read into a
:class:`~privacy_plugins.engines.pandas_engine.PandasTable` (its rows are in memory anyway).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privacy_plugins.core.frame import validate_frame
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.duckdb_csv import open_csv_in_duckdb
from privacy_plugins.engines.pandas_engine import PandasTable
from privacy_plugins.engines.spark import open_spark_table
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.destination.sql import transactional_engine
from privacy_plugins.release.sources import read_source, source_url
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["opened_source", "rows_in_engine", "same_database", "source_name"]


def _is_parquet(path: Path) -> bool:
    return path.is_dir() or path.suffix.lower() in (".parquet", ".pq", ".parq")  # as read_table


def _large_file(spec: ReleaseSpec) -> Path | None:
    """The source's Parquet file or folder, or CSV file, when it is larger than ``source.out_of_core_bytes``.

    Any other file is a CSV, as ``read_table`` reads it.
    """
    path = spec.source.path
    if path is None or not path.exists():
        return None
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    return path if sum(f.stat().st_size for f in files) > spec.source.out_of_core_bytes else None


def _source_engine(spec: ReleaseSpec) -> Any:
    """A SQLAlchemy engine on a ``duckdb:``/``url:``/``conn_id:`` source (pysqlite with transactional DDL)."""
    import sqlalchemy as sa

    url = source_url(spec.source)
    try:
        return transactional_engine(url)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise ConfigurationError(f"cannot open source {mask_password(url)!r}: {mask_password(str(exc))}") from exc


def _open(spec: ReleaseSpec) -> EngineTable:
    import sqlalchemy as sa

    if spec.source.spark is not None:
        return open_spark_table(spec.source.spark, spec.source.spark_settings)
    large = _large_file(spec)
    if large is not None and not _is_parquet(large):
        return open_csv_in_duckdb(large, sep=spec.source.sep, encoding=spec.source.encoding)
    if large is not None:
        parquet = large
        pattern = str(parquet / "**" / "*.parquet") if parquet.is_dir() else str(parquet)
        literal = pattern.replace("'", "''")
        return SqlTable.from_query(sa.create_engine("duckdb:///:memory:"), f"SELECT * FROM read_parquet('{literal}')")
    if spec.source.generate is not None or spec.source.path is not None:  # small enough for memory
        return PandasTable(validate_frame(read_source(spec.source)))
    engine = _source_engine(spec)
    if spec.source.table is not None:
        return SqlTable.from_table(engine, spec.source.table)
    return SqlTable.from_query(engine, str(spec.source.query))


def rows_in_engine(spec: ReleaseSpec) -> bool:
    """Whether opening the source leaves its rows in an engine (Spark, a database, a large file by DuckDB).

    ``False`` for a generated table or a file below ``source.out_of_core_bytes``: read into memory anyway.
    """
    if spec.source.spark is not None or _large_file(spec) is not None:
        return True
    return spec.source.generate is None and spec.source.path is None


def same_database(spec: ReleaseSpec) -> bool:
    """Whether the destination is the source's own database (then the release writes next to the source anyway)."""
    target, source = spec.destination, spec.source
    if target.spark is not None:
        return source.spark is not None  # one SparkSession (the spec refuses other destination settings)
    if target.duckdb is not None and source.duckdb is not None:
        return target.duckdb.resolve() == source.duckdb.resolve()
    if target.conn_id is not None and target.conn_id == source.conn_id:
        return True
    return target.url is not None and target.url == source.url


@contextmanager
def opened_source(spec: ReleaseSpec) -> Iterator[EngineTable]:
    """The source table where it lives; its helper tables dropped and its engine closed afterwards."""
    source = _open(spec)
    try:
        yield source
    finally:
        if isinstance(source, SqlTable):
            source.close()
            source.engine.dispose()


@contextmanager
def opened_unchanged(spec: ReleaseSpec, loaded_rows: int) -> Iterator[EngineTable]:
    """:func:`opened_source`, refused when the source no longer has the ``loaded_rows`` the load step counted.

    A step after the load works on the source where it lives: a table changed since the
    load would be anonymized from other rows than those the load step measured.
    """
    with opened_source(spec) as source:
        rows = source.count()
        if rows != loaded_rows:
            raise ConfigurationError(
                f"the source has {rows} rows now but had {loaded_rows} when it was loaded: it changed since the "
                "load step; re-run the release from the load step"
            )
        yield source


def source_name(spec: ReleaseSpec, source: EngineTable) -> str:
    """Where the rows stay, for the ``LoadedTable`` and the logs (never a URL: it may hold a password)."""
    generated = "generated" if spec.source.generate is not None else "query"
    where = spec.source.spark or spec.source.table or (str(spec.source.path) if spec.source.path else generated)
    return f"{source.engine_name}:{where}"
