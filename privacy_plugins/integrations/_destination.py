"""Where a release reads and publishes, named the way orchestrators and lineage tools name tables and files.

Shared by the Airflow provider (asset URIs, OpenLineage datasets) and the Dagster
assets (``dagster/uri``, ``dagster/table_name``, ``dagster/column_schema``, kinds),
so both name a destination alike. Framework-free; no URI carries a login or
password (a ``conn_id`` is resolved only to read its host, port and database).

* PostgreSQL: ``postgres://host:port/database/schema/table`` (Airflow's postgres
  provider's form: port defaults to 5432, schema to ``public``);
* DuckDB: ``duckdb:///path/to/file.duckdb/schema/table`` (schema ``main``);
* a Parquet file or a Spark Parquet folder: ``file:///path``;
* another SQL database: ``<backend>://host:port/database/table``.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    from privacy_plugins.release import ReleaseSpec
    from privacy_plugins.release.spec import DestinationSpec

__all__ = [
    "database_uri",
    "dataset_name",
    "destination_kind",
    "destination_uri",
    "published_schema",
    "qualified_table_name",
    "source_kind",
    "source_uri",
]

_DEFAULT_SCHEMA = {"postgres": "public", "duckdb": "main"}


def _file_uri(path: Path | str) -> str:
    return "file://" + urllib.parse.quote(str(Path(path).expanduser().resolve()))


def database_uri(url: str, table: str) -> str:
    """The asset URI of ``table`` in the database of SQLAlchemy URL ``url`` (credentials dropped).

    >>> database_uri("postgresql+psycopg://u:secret@db.example:6432/mart", "census")
    'postgres://db.example:6432/mart/public/census'
    >>> database_uri("duckdb:////data/release.duckdb", "census")
    'duckdb:///data/release.duckdb/main/census'
    """
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend in ("duckdb", "sqlite"):
        database = parsed.database or ""
        if not database or database == ":memory:":
            raise ConfigurationError(f"destination: an in-memory {backend} database has no asset URI")
        location = urllib.parse.quote(str(Path(database).expanduser().resolve()))
        schema = f"/{_DEFAULT_SCHEMA[backend]}" if backend in _DEFAULT_SCHEMA else ""
        return f"{backend}://{location}{schema}/{table}"
    scheme = "postgres" if backend in ("postgresql", "postgres") else backend
    port = parsed.port or (5432 if scheme == "postgres" else None)
    netloc = f"{parsed.host or 'localhost'}" + (f":{port}" if port else "")
    schema = f"/{_DEFAULT_SCHEMA[scheme]}" if scheme in _DEFAULT_SCHEMA else ""
    return f"{scheme}://{netloc}/{urllib.parse.quote(parsed.database or '')}{schema}/{table}"


def destination_uri(spec: ReleaseSpec | DestinationSpec) -> str | None:
    """The asset URI of what the release publishes; ``None`` for a Spark catalog table (no file or database URI).

    A ``conn_id`` destination is resolved through the active connection resolver (inside a task: Airflow's).
    """
    from privacy_plugins.release.spec import DestinationSpec

    destination = spec if isinstance(spec, DestinationSpec) else spec.destination
    if destination.duckdb is not None:
        return database_uri(f"duckdb:///{destination.duckdb}", destination.table)
    if destination.parquet is not None:
        return _file_uri(Path(destination.parquet) / f"{destination.table}.parquet")
    if destination.spark is not None:
        target = str(destination.spark)
        return _file_uri(target) if "/" in target or target.startswith(".") else None
    return database_uri(destination.sql_url(), destination.table)


def source_uri(spec: ReleaseSpec) -> str | None:
    """The asset URI of the source table or file; ``None`` for a query, the generated demo or Spark."""
    source = spec.source
    if source.path is not None:
        return "file://" + urllib.parse.quote(str(Path(source.path).resolve()))
    if source.table is None:
        return None
    if source.duckdb is not None:
        return database_uri(f"duckdb:///{source.duckdb}", source.table)
    if source.url is not None:
        return database_uri(source.url, source.table)
    if source.conn_id is not None:
        from privacy_plugins.release.connections import resolve_url

        return database_uri(resolve_url(source.conn_id, setting="source.conn_id"), source.table)
    return None


def published_schema(spec: ReleaseSpec) -> list[tuple[str, str]]:
    """``(column, type)`` of the published table, read from the destination's catalog (no row is read)."""
    destination = spec.destination
    if destination.parquet is not None:
        import pyarrow.parquet as pq

        schema = pq.read_schema(Path(destination.parquet) / f"{destination.table}.parquet")
        return [(field.name, str(field.type)) for field in schema]
    if destination.duckdb is not None:
        import duckdb

        with duckdb.connect(str(destination.duckdb), read_only=True) as connection:
            rows = connection.execute(f'DESCRIBE "{destination.table}"').fetchall()  # (a checked table name)
        return [(str(row[0]), str(row[1])) for row in rows]
    if destination.spark is not None:
        return []
    import sqlalchemy as sa

    engine = sa.create_engine(destination.sql_url())
    try:
        columns = sa.inspect(engine).get_columns(destination.table)
    finally:
        engine.dispose()
    return [(str(column["name"]), str(column["type"])) for column in columns]


def dataset_name(uri: str) -> tuple[str, str]:
    """OpenLineage ``(namespace, name)`` of an asset URI.

    >>> dataset_name("postgres://db:5432/mart/public/census")
    ('postgres://db:5432', 'mart.public.census')
    >>> dataset_name("duckdb:///data/r.duckdb/main/census")
    ('duckdb:///data/r.duckdb', 'main.census')
    >>> dataset_name("file:///data/out/census.parquet")
    ('file', '/data/out/census.parquet')
    """
    parts = urllib.parse.urlsplit(uri)
    path = urllib.parse.unquote(parts.path)
    if parts.scheme == "file":
        return "file", path
    if parts.scheme in ("duckdb", "sqlite"):
        database, _, table = path.rpartition("/")
        if parts.scheme == "duckdb":
            database, _, schema = database.rpartition("/")
            table = f"{schema}.{table}"
        return f"{parts.scheme}://{database}", table
    return f"{parts.scheme}://{parts.netloc}", ".".join(p for p in path.split("/") if p)


def _backend(url: str) -> str:
    from sqlalchemy.engine import make_url

    backend = make_url(url).get_backend_name()
    return "postgres" if backend == "postgresql" else backend


def destination_kind(spec: ReleaseSpec) -> str:
    """The storage kind of the destination: ``duckdb``, ``parquet``, ``spark``, or a SQL backend (``postgres`` …).

    A ``conn_id`` is resolved to read its backend.
    """
    destination = spec.destination
    if destination.duckdb is not None:
        return "duckdb"
    if destination.parquet is not None:
        return "parquet"
    if destination.spark is not None:
        return "spark"
    return _backend(destination.sql_url())


def source_kind(spec: ReleaseSpec) -> str:
    """The storage kind of the source: ``csv``/``parquet`` (a file), ``duckdb``, ``spark``, a SQL backend, ``python``.

    A ``conn_id`` source says ``sql`` (it is not resolved: kinds are declared before any connection exists).
    """
    source = spec.source
    if source.path is not None:
        return "parquet" if Path(source.path).suffix.lower() in (".parquet", ".pq") else "csv"
    if source.duckdb is not None:
        return "duckdb"
    if source.spark is not None:
        return "spark"
    if source.url is not None:
        return _backend(source.url)
    return "sql" if source.conn_id is not None else "python"


def qualified_table_name(spec: ReleaseSpec) -> str:
    """``database.schema.table`` of the published table (``schema.table`` for DuckDB, the file's name for Parquet)."""
    namespace, name = dataset_name(destination_uri(spec) or f"spark:///{spec.destination.table}")
    if namespace == "file":
        return spec.destination.table
    return name
