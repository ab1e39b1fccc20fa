"""The Airflow asset a release publishes, derived from its destination (Airflow's asset URI rules).

A release's outlet is the table it writes, named the way Airflow's providers name
it, so a downstream DAG schedules on the real table rather than on a URI the DAG
author invented:

* PostgreSQL: ``postgres://host:port/database/schema/table`` (the postgres
  provider's form: port defaults to 5432, schema to ``public``);
* DuckDB: ``duckdb:///path/to/file.duckdb/schema/table`` (this provider registers
  the ``duckdb`` scheme: :func:`sanitize_uri`, :func:`create_asset`,
  :func:`convert_asset_to_openlineage`);
* a Parquet file or a Spark Parquet folder: ``file:///path`` (common.io's form);
* another SQL database: ``<backend>://host:port/database/table``.

No URI ever carries a login or password (a ``conn_id`` is resolved only to read its
host, port and database). Nothing here imports Airflow at module import time.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_plugins.integrations._destination import database_uri, destination_uri

if TYPE_CHECKING:
    from urllib.parse import SplitResult

__all__ = [
    "convert_asset_to_openlineage",
    "create_asset",
    "database_uri",
    "destination_uri",
    "sanitize_uri",
]

# Airflow rebuilds a normalized asset URI with ``urlunsplit``, which writes ``duckdb:/path`` for a scheme it
# does not know to carry a (here empty) netloc; file databases' URLs are ``duckdb:///path`` (as SQLAlchemy's).
# Airflow imports this module (the duckdb scheme's handler) before it normalizes any URI of a provider scheme.
for _scheme in ("duckdb", "sqlite"):
    if _scheme not in urllib.parse.uses_netloc:
        urllib.parse.uses_netloc.append(_scheme)


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Airflow's URI handler for ``duckdb://``: an absolute database file path, then schema and table."""
    parts = uri.path.split("/")
    if uri.netloc or len(parts) < 4 or not all(parts[1:]):
        raise ValueError("URI format duckdb:// must be duckdb:///path/to/file.duckdb/schema/table")
    return uri


def _duckdb_parts(uri: str) -> tuple[str, str, str]:
    """``(database file, schema, table)`` of a sanitized ``duckdb://`` URI."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
    database, schema, table = path.rsplit("/", 2)
    return database, schema, table


def create_asset(*, path: str, table: str, schema: str = "main", extra: dict[str, Any] | None = None) -> Any:
    """Airflow's asset factory for ``duckdb://``: the asset of ``table`` in DuckDB file ``path``."""
    from airflow.sdk import Asset

    location = urllib.parse.quote(str(Path(path).expanduser().resolve()))
    return Asset(uri=f"duckdb://{location}/{schema}/{table}", extra=extra or {})


def convert_asset_to_openlineage(asset: Any, lineage_context: Any) -> Any:
    """Airflow's OpenLineage converter for ``duckdb://``: namespace ``duckdb://<file>``, name ``schema.table``."""
    from airflow.providers.common.compat.openlineage.facet import Dataset

    database, schema, table = _duckdb_parts(asset.uri)
    return Dataset(namespace=f"duckdb://{database}", name=f"{schema}.{table}")
