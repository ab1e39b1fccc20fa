"""The load and anonymize steps on the weighted snapshot: any source, with an algorithm that ``works_on_snapshot``.

:func:`~privacy_plugins.release.steps.load_step` and ``anonymize_step`` call the functions
here when :func:`pushdown_reason` is ``None`` (the algorithm's tags decide, not the source);
the diagnosis, check and publish steps are the same for every release. No row of a
database, Spark or large-file source is read into Python:

- :func:`load`: one ``GROUP BY`` over the QIs and the columns the models read
  gives the weighted snapshot (one row per distinct combination and its count);
  hierarchies are built from the values present; every column, role, hierarchy
  leaf and requirement is checked. The snapshot is stored as a small Parquet
  file in the run's private folder; the ``LoadedTable`` has ``kind="snapshot"``,
  its SHA-256 and where the rows stay (``source``). The diagnosis step computes the
  same reports from it (every subset's class sizes and sensitive counts are sums of its counts).
- :func:`anonymize`: the core searches the snapshot; the source's engine applies the node
  (value → label mapping tables joined when the destination is the same
  database, ``CASE`` per QI otherwise) and removes the violating classes; the
  destination stages the rows by the fastest path the engines allow — a run-bound
  staging table where the rows already are, ``ATTACH`` for another DuckDB file,
  ``COPY … TO`` a Parquet working file, else batches
  (:mod:`privacy_plugins.release.destination`, whose module docstring has the table).

A generated table or a file below ``source.out_of_core_bytes`` is read into a
:class:`~privacy_plugins.engines.pandas_engine.PandasTable` and released the same way
(the anonymize step reads the source again and checks its row count, as for a
database). Algorithms that need the rows (Mondrian, clustering, ``suppressed_rows:
mark``) read the table into pandas and refuse a source larger than
``source.max_rows_in_memory``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.anonymize import snapshot_anonymizer
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.io import check_unique_columns
from privacy_plugins.engines.aggregates import numeric_columns_as_numbers
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.duckdb_csv import open_csv_in_duckdb
from privacy_plugins.engines.full_domain_in_engine import (
    anonymize_in_engine,
    model_columns,
    models_snapshot,
    validate_models,
)
from privacy_plugins.engines.pandas_engine import PandasTable
from privacy_plugins.engines.spark import open_spark_table
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError, UnknownColumnError
from privacy_plugins.release import staging
from privacy_plugins.release.artifacts import Candidate, LoadedTable, write_parquet, write_report
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.destination import TABLE, StageRun, open_destination
from privacy_plugins.release.destination.sql import transactional_engine
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.sources import read_source, source_url
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staged_candidate import SNAPSHOT_FILE, candidate_fields
from privacy_plugins.release.validation import check_lattice
from privacy_plugins.release.workarea import run_dir
from privacy_plugins.release.written_columns import record_columns

__all__ = ["anonymize", "load", "pushdown_reason"]


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


def pushdown_reason(spec: ReleaseSpec) -> str | None:
    """``None`` when the release works on the weighted snapshot; otherwise why it reads the rows into pandas.

    The algorithm's tags decide, whatever the source: a database, Spark, a file (a Parquet or
    CSV file larger than ``source.out_of_core_bytes`` through an in-process DuckDB, out of core;
    a CSV typed as ``read_table`` types it, ``engines/duckdb_csv.py``) or a generated table /
    small file read into a :class:`~privacy_plugins.engines.pandas_engine.PandasTable`.
    """
    solver = snapshot_anonymizer(spec.algorithm.name)
    if solver is None:  # its tags say it does not work on a snapshot
        return f"algorithm {spec.algorithm.name!r} recodes locally and needs the rows"
    return solver.snapshot_refusal(spec.algorithm.options)


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


def _same_database(spec: ReleaseSpec) -> bool:
    target, source = spec.destination, spec.source
    if target.spark is not None:
        return source.spark is not None  # one SparkSession (the spec refuses other destination settings)
    if target.duckdb is not None and source.duckdb is not None:
        return target.duckdb.resolve() == source.duckdb.resolve()
    if target.conn_id is not None and target.conn_id == source.conn_id:
        return True
    return target.url is not None and target.url == source.url


@contextmanager
def _opened(spec: ReleaseSpec) -> Iterator[EngineTable]:
    """The source table where it lives; its helper tables dropped and its engine closed afterwards."""
    source = _open(spec)
    try:
        yield source
    finally:
        if isinstance(source, SqlTable):
            source.close()
            source.engine.dispose()


def _prepared(spec: ReleaseSpec, aggregates: pd.DataFrame) -> tuple[pd.DataFrame, dict[Any, Any], Snapshot]:
    """The aggregates as every step sees them (numeric columns numbers), the hierarchies and the snapshot."""
    aggregates = aggregates.copy()
    numeric_columns_as_numbers(aggregates)
    qis = list(spec.quasi_identifiers)
    hierarchies = dict(spec.build_hierarchies(aggregates[qis]))
    snapshot, _ = models_snapshot(
        None, quasi_identifiers=qis, hierarchies=hierarchies, models=spec.models(), aggregates=aggregates
    )
    return aggregates, hierarchies, snapshot


def _source_name(spec: ReleaseSpec, source: EngineTable) -> str:
    """Where the rows stay, for the ``LoadedTable`` and the logs (never a URL: it may hold a password)."""
    generated = "generated" if spec.source.generate is not None else "query"
    where = spec.source.spark or spec.source.table or (str(spec.source.path) if spec.source.path else generated)
    return f"{source.engine_name}:{where}"


def _check_staging_name(spec: ReleaseSpec, source: EngineTable, run_id: str) -> None:
    """Refuse a destination table whose staging table name the database would truncate (losing the run tag).

    And a table named like the registry of staging tables that is not the registry (``staging.check_registry``).
    """
    if not isinstance(source, SqlTable) or not _same_database(spec):
        return
    name = staging.staging_name(spec, run_id)
    limit = source.engine.dialect.max_identifier_length
    if limit and len(name) > limit:  # PostgreSQL truncates silently
        raise ConfigurationError(
            f"destination.table {spec.destination.table!r} is too long: its staging table name has {len(name)} "
            f"characters, more than {source.engine_name}'s limit of {limit}; use a shorter name"
        )
    with source.transaction() as connection:
        staging.check_registry(connection)  # refuse someone else's pp_working_tables before anything is written


def load(spec: ReleaseSpec, *, run_id: str) -> LoadedTable:
    """Step 1 inside the database: check the source against the spec and store its weighted snapshot.

    Raises:
        ConfigurationError, HierarchyError, UnknownColumnError: bad spec or data (before anything is written).
    """
    started = time.monotonic()
    spec.destination.check_writable()
    spec.report.check_writable()
    models = spec.models()
    qis = list(spec.quasi_identifiers)
    with _opened(spec) as source:
        columns = source.columns()
        check_unique_columns(columns, where="the source")
        spec.roles.check_columns(columns)
        bound = spec.requirements.bound_column
        if bound is not None and bound not in columns:
            raise UnknownColumnError(f"bound_column not found in table: {bound!r}; available: {columns}")
        _check_staging_name(spec, source, run_id)
        # The sensitive attributes too, even when no requirement reads them: the diagnosis measures their l.
        others = dict.fromkeys([*model_columns(models, qis), *map(str, spec.sensitive_attributes)])
        raw = source.group_counts([*qis, *others])
        where = _source_name(spec, source)
    aggregates, hierarchies, snapshot = _prepared(spec, raw)
    check_lattice(spec, hierarchies)
    validate_models(aggregates, snapshot.n_rows, models)
    path = run_dir(spec, run_id, create=True) / SNAPSHOT_FILE
    digest = write_parquet(aggregates, path)
    LOGGER.info(
        "load: %d rows, %d distinct combinations, in %s (pushdown; snapshot stored; %.1fs)",
        snapshot.n_rows,
        len(snapshot.units),
        where,
        time.monotonic() - started,
    )
    return LoadedTable(
        path=str(path),
        rows=snapshot.n_rows,
        columns=[c for c in columns if c not in spec.identifiers],
        dropped_identifiers=list(spec.identifiers),
        run_id=run_id,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        sha256=digest,
        kind="snapshot",
        source=where,
    )


def anonymize(
    spec: ReleaseSpec,
    loaded: LoadedTable,
    run: str,
    folder: Path,
    stored: pd.DataFrame,
    *,
    on_progress: OnProgress | None = None,
) -> Candidate:
    """The anonymize step on the snapshot: search it, and stage the generalized rows through the destination.

    ``stored``: the run's snapshot, read from its checked bytes by the step.

    Raises:
        InfeasibleAnonymizationError: no node meets the requirements (nothing is staged).
        ConfigurationError: the source's row count changed since the load step.
    """
    started = time.monotonic()
    aggregates, hierarchies, _ = _prepared(spec, stored)
    same = _same_database(spec)
    with _opened(spec) as source:
        rows = source.count()
        if rows != loaded.rows:
            raise ConfigurationError(
                f"the source has {rows} rows now but had {loaded.rows} when it was loaded: it changed since the "
                "load step; re-run the release from the load step"
            )
        done = anonymize_in_engine(
            source,
            quasi_identifiers=list(spec.quasi_identifiers),
            hierarchies=hierarchies,
            models=spec.models(),
            identifiers=list(spec.identifiers),
            sensitive_attributes=list(spec.sensitive_attributes),
            suppression_limit=spec.requirements.suppression_limit,
            algorithm=spec.algorithm.name,
            options=spec.algorithm.options,
            progress=StepProgress("anonymize", "nodes checked", on_progress),
            aggregates=aggregates,
            # Mapping tables joined were faster than CASE on DuckDB (bench_engines, 10M rows) but are
            # written next to the source: only when the release writes into that database anyway.
            method="join" if same else "case",
        )
        levels = done.solution.details.recoding_levels()
        report_path = write_report(
            folder,
            {
                "algorithm": spec.algorithm.name,
                "levels": levels,
                "rows_in": done.rows_in,
                "suppressed": done.solution.suppressed,
                "ncp": done.solution.utility.ncp,
            },
        )
        # Where the rows wait for the swap: the destination picks the fastest path (release/destination).
        staged = open_destination(spec.destination).stage({TABLE: done.published}, StageRun(spec, run, folder))
        where = staged.name if staged.kind == "file" else f"{source.engine_name}:{staged.name}"
    columns = {"table": [str(c) for c in done.published.columns()]}
    record_columns(folder, columns)
    LOGGER.info(
        "anonymize: %d rows in, %d published, %d suppressed, staged at %s (%.1fs)",
        done.rows_in,
        done.rows_out,
        done.solution.suppressed,
        where,
        time.monotonic() - started,
    )
    return Candidate(
        report_path=str(report_path),
        algorithm=spec.algorithm.name,
        levels=levels,
        rows_in=done.rows_in,
        rows_out=done.rows_out,
        suppressed=done.solution.suppressed,
        dropped_identifiers=list(spec.identifiers),
        ncp=done.solution.utility.ncp,
        headline=done.solution.details.headline(),
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        columns=columns,
        **candidate_fields(staged, where),
    )
