"""Load suites safely and validate a table with one: the wiring Airflow and Dagster share.

GX drops an expectation it cannot build. The expectation type may be unknown
because its module was not imported, or its parameters may be invalid. GX only
logs the drop, so a suite of privacy checks can load empty, and an empty suite
passes. :func:`load_suite` compares the loaded count with the declared one and
raises instead.

Where a suite runs: :func:`validate_dataframe` validates a pandas or Spark
DataFrame; :func:`validate_sql` validates a table or a query where it lives
(GX's SQL datasource), so a candidate staged in a database is checked there and
no row is read into Python. GX's SQL engine runs each query on a connection it
closes before reading the result, which DuckDB (``duckdb_engine``) does not
allow: every built-in GX expectation then fails with ``list index out of range``
(STACK.md). :func:`validate_sql` therefore keeps one open connection for DuckDB,
as GX itself does for SQLite (:func:`_duckdb_keeps_its_connection`);
``tests/integrations/gx/test_gx_sql_tables.py`` fails when GX changes that seam.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from os import PathLike
from pathlib import Path
from typing import Any

import great_expectations as gx
from great_expectations.data_context.types.base import ProgressBarsConfig

from privacy_plugins.errors import ConfigurationError, DestinationError
from privacy_plugins.integrations.gx import expectations as _registered  # noqa: F401 (registers the types)

__all__ = ["ephemeral_context", "load_suite", "validate_dataframe", "validate_sql"]


def load_suite(source: str | PathLike[str] | Mapping[str, Any]) -> gx.ExpectationSuite:
    """Build a GX 1.x suite from its JSON file (or dict), failing if any expectation was dropped.

    Raises:
        ConfigurationError: the suite declares expectations that GX did not load.
    """
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    declared = [str(e.get("type")) for e in data.get("expectations", [])]
    suite = gx.ExpectationSuite(**data)
    loaded = [e.expectation_type for e in suite.expectations]
    if len(loaded) != len(declared):
        dropped = sorted((Counter(declared) - Counter(loaded)).elements())
        raise ConfigurationError(
            f"suite {suite.name!r} declares {len(declared)} expectations but GX loaded {len(loaded)}; "
            f"dropped: {dropped}. Import the module that defines them (privacy_plugins.integrations.gx) "
            "in this process and check their parameters (GX's log has the reason)."
        )
    return suite


def ephemeral_context() -> Any:
    """An in-memory GX context with progress bars off (nothing written to disk)."""
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def validate_dataframe(frame: Any, suite: gx.ExpectationSuite, *, result_format: str = "SUMMARY") -> Any:
    """Validate a pandas or Spark DataFrame with ``suite`` in an ephemeral context.

    Returns:
        The ``ExpectationSuiteValidationResult``; read it with :func:`outcomes`.
    """
    context = ephemeral_context()
    spark = type(frame).__module__.startswith("pyspark")
    source = (
        context.data_sources.add_spark("privacy_plugins")
        if spark
        else context.data_sources.add_pandas("privacy_plugins")
    )
    batch_definition = source.add_dataframe_asset("table").add_batch_definition_whole_dataframe("whole table")
    batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
    return batch.validate(suite, result_format=result_format)


class _DuckDBDialect(str):
    """``"duckdb"`` with the ``value`` GX reads from its own dialect enum members."""

    @property
    def value(self) -> str:
        return str(self)


_PATCH_LOCK = threading.Lock()


@contextmanager
def _duckdb_keeps_its_connection() -> Iterator[None]:
    """GX's SQL engine keeps one open connection for DuckDB too, while the block runs (see the module doc)."""
    from great_expectations.execution_engine import sqlalchemy_execution_engine as engine_module

    with _PATCH_LOCK:
        kept = engine_module._PERSISTED_CONNECTION_DIALECTS
        engine_module._PERSISTED_CONNECTION_DIALECTS = (*kept, _DuckDBDialect("duckdb"))  # type: ignore[assignment]
        try:
            yield
        finally:
            engine_module._PERSISTED_CONNECTION_DIALECTS = kept


def validate_candidate(spec: Any, candidate: Any, suite: gx.ExpectationSuite, *, result_format: str = "SUMMARY") -> Any:
    """Validate a release's staged candidate where it is staged, as the release's checks see it.

    A staging table is validated in its database and a working file by an in-process DuckDB
    (GX's SQL datasource: no row is read into pandas, whatever its size); a two-table release's
    groups and a Spark staging location are read as a DataFrame (counted and refused above
    ``source.max_rows_in_memory``).

    Args:
        spec: the :class:`~privacy_plugins.release.spec.ReleaseSpec`.
        candidate: its anonymize step's :class:`~privacy_plugins.release.artifacts.Candidate`.
        suite: the suite (:func:`load_suite`).
        result_format: GX's result format (:func:`outcomes` reads only its counts, never values).
    """
    from privacy_plugins.release.staged_candidate import measured_frame, open_candidate

    opened = open_candidate(spec, candidate, None)
    where = opened.destination.sql_location(opened.staged, opened.stage_run)
    if where is None:
        return validate_dataframe(measured_frame(spec, candidate), suite, result_format=result_format)
    try:
        return validate_sql(
            suite, connection_string=where.url, table=where.table, query=where.query, result_format=result_format
        )
    except Exception as exc:  # GX's or the driver's message may quote the URL: never its password
        raise DestinationError(
            f"GX could not validate the staged candidate in {spec.destination.describe()}: {_hidden(exc, where.url)}"
        ) from None


def _hidden(exc: BaseException, url: str) -> str:
    """The error's message on one line, with the URL's password masked wherever it appears."""
    import sqlalchemy as sa

    from privacy_plugins.release.connections import mask_password
    from privacy_plugins.release.destination.base import one_line

    text = mask_password(one_line(exc))
    password = sa.make_url(url).password
    return text.replace(str(password), "***") if password else text


def validate_sql(
    suite: gx.ExpectationSuite,
    *,
    connection_string: str,
    table: str | None = None,
    query: str | None = None,
    result_format: str = "SUMMARY",
) -> Any:
    """Validate a table (or a query's result) where it lives, through GX's SQL datasource.

    Args:
        suite: the suite (:func:`load_suite`).
        connection_string: a SQLAlchemy URL (``duckdb:///…``, ``sqlite:///…``, ``postgresql://…``).
        table: the table to validate; or
        query: one ``SELECT`` whose result is validated (e.g. ``SELECT * FROM read_parquet('…')`` on DuckDB).
        result_format: GX's result format (:func:`outcomes` reads only its counts, never values).

    Returns:
        The ``ExpectationSuiteValidationResult``; read it with :func:`outcomes`.
    """
    if (table is None) == (query is None):
        raise ConfigurationError("validate_sql needs exactly one of table= or query=")
    context = ephemeral_context()
    duckdb = connection_string.startswith("duckdb")
    with _duckdb_keeps_its_connection() if duckdb else nullcontext():
        with warnings.catch_warnings():  # GX warns that the generic SQL datasource is generic
            warnings.filterwarnings("ignore", message="You are using a generic SQLDatasource")
            source = (
                context.data_sources.add_sqlite("privacy_plugins", connection_string=connection_string)
                if connection_string.startswith("sqlite")
                else context.data_sources.add_sql("privacy_plugins", connection_string=connection_string)
            )
        asset = (
            source.add_table_asset("table", table_name=table)
            if table is not None
            else source.add_query_asset("table", query=str(query))
        )
        batch = asset.add_batch_definition_whole_table("whole table").get_batch()
        try:
            return batch.validate(suite, result_format=result_format)
        finally:
            source.get_execution_engine().close()
