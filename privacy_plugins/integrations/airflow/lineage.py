"""OpenLineage for the publish task: input and output datasets, the published schema, the release's numbers.

Airflow's OpenLineage provider calls ``PublishOperator.get_openlineage_facets_on_complete``
after a successful publish; this module builds what it returns. Datasets are named
from the same URIs as the task's asset (:mod:`.assets`), following OpenLineage's
naming (``postgres://host:port`` + ``db.schema.table``, ``file`` + path, …). The
custom run facet ``privacyRelease`` carries counts and measures only — rows in and
out, suppressed, classes, each requirement's measured value and target — never a
value of the table. Without the OpenLineage provider nothing here is imported.
"""

from __future__ import annotations

import logging
import urllib.parse
from functools import cache
from pathlib import Path
from typing import Any

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.assets import database_uri, destination_uri
from privacy_plugins.release import Publication, ReleaseSpec

__all__ = ["dataset_name", "operator_lineage", "published_schema", "release_facet_fields", "source_uri"]

log = logging.getLogger(__name__)

_COUNTS = ("rows_in", "rows", "suppressed", "classes", "ncp", "holds", "measured", "targets", "met")


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
            rows = connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position",
                [destination.table],
            ).fetchall()
        return [(str(name), str(kind)) for name, kind in rows]
    if destination.spark is not None:
        return []
    import sqlalchemy as sa

    engine = sa.create_engine(destination.sql_url())
    try:
        columns = sa.inspect(engine).get_columns(destination.table)
    finally:
        engine.dispose()
    return [(str(column["name"]), str(column["type"])) for column in columns]


def release_facet_fields(numbers: dict[str, Any]) -> dict[str, Any]:
    """The counts and measures of a publication's ``numbers`` (numbers and booleans only)."""

    def numeric(value: Any) -> bool:
        return value is None or isinstance(value, int | float | bool)

    kept: dict[str, Any] = {}
    for key in _COUNTS:
        value = numbers.get(key)
        if isinstance(value, dict):
            kept[key] = {str(k): v for k, v in value.items() if numeric(v)}
        elif numeric(value) and key in numbers:
            kept[key] = value
    return kept


@cache
def _facet_class() -> type:
    """The ``privacyRelease`` run facet (an OpenLineage ``RunFacet``), defined once the client is importable."""
    import attrs
    from airflow.providers.common.compat.openlineage.facet import RunFacet

    @attrs.define
    class PrivacyReleaseRunFacet(RunFacet):  # type: ignore[misc]
        """Counts and measures of a privacy release (no value of the table)."""

        numbers: dict[str, Any] = attrs.field(factory=dict)

        @staticmethod
        def _get_schema() -> str:
            return "https://pypi.org/project/privacy-plugins/#PrivacyReleaseRunFacet"

    return PrivacyReleaseRunFacet


def operator_lineage(spec: ReleaseSpec, publication: Publication) -> Any:
    """The ``OperatorLineage`` of a publish (needs Airflow's OpenLineage provider)."""
    from airflow.providers.common.compat.openlineage.facet import (
        Dataset,
        OutputDataset,
        OutputStatisticsOutputDatasetFacet,
        SchemaDatasetFacet,
        SchemaDatasetFacetFields,
    )
    from airflow.providers.openlineage.extractors import OperatorLineage

    inputs = []
    try:
        uri = source_uri(spec)
    except (ConfigurationError, ValueError) as exc:
        log.warning("OpenLineage: the source has no dataset name (%s)", exc)
        uri = None
    if uri is not None:
        namespace, name = dataset_name(uri)
        inputs.append(Dataset(namespace=namespace, name=name))
    outputs = []
    target = destination_uri(spec)
    if target is not None:
        namespace, name = dataset_name(target)
        fields = [SchemaDatasetFacetFields(name=column, type=kind) for column, kind in published_schema(spec)]
        outputs.append(
            OutputDataset(
                namespace=namespace,
                name=name,
                facets={"schema": SchemaDatasetFacet(fields=fields)},
                outputFacets={"outputStatistics": OutputStatisticsOutputDatasetFacet(rowCount=publication.rows)},
            )
        )
    facet = _facet_class()(numbers=release_facet_fields(publication.numbers))
    return OperatorLineage(inputs=inputs, outputs=outputs, run_facets={"privacyRelease": facet})
