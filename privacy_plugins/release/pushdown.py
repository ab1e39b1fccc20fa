"""The release steps on the weighted snapshot: any source, with an algorithm that ``works_on_snapshot``.

``steps.load_step`` … ``steps.publish_step`` call the functions here when
:func:`pushdown_reason` is ``None``, so ``run_release``, the CLI, the Airflow
operators and the Dagster assets all run the same five steps, each of which may
run in its own process. No row of a database, Spark or large-file source is read into Python:

- :func:`load`: one ``GROUP BY`` over the QIs and the columns the models read
  gives the weighted snapshot (one row per distinct combination and its count);
  hierarchies are built from the values present; every column, role, hierarchy
  leaf and requirement is checked. The snapshot is stored as a small Parquet
  file in the run's private folder; the ``LoadedTable`` has ``kind="snapshot"``,
  its SHA-256 and where the rows stay (``source``).
- :func:`diagnose`: the same diagnosis and reports as in memory, computed from the
  snapshot (every subset's class sizes and sensitive counts are sums of its counts).
- :func:`anonymize`: the core searches the snapshot; the database applies the node
  (value → label mapping tables joined when the destination is the same
  database, ``CASE`` per QI otherwise) and removes the violating classes. Same
  database: ``CREATE TABLE <table>__staging_<created>_<run tag> AS SELECT …``
  (``release/staging.py``; the name is recorded in the ``Candidate`` and bound to
  the run). A DuckDB source to another DuckDB file: the same statement across the
  two files, the destination ``ATTACH``-ed (the staging table lives there). A DuckDB
  source to Parquet: ``COPY (SELECT …) TO`` the run's Parquet working file.
  Elsewhere: the published rows are streamed in batches to that working file (its
  SHA-256 in the ``Candidate``). The destination class decides
  (:mod:`privacy_plugins.release.destination`).
- :func:`check`: identifiers, row accounting, suppression limit and every model,
  re-measured with ``GROUP BY`` on exactly the staged rows; the ``CheckResult``
  carries a digest of what it measured. A failed check drops the staging table.
- :func:`publish`: re-measured again (for a staging table inside the swap
  transaction itself) and compared with the check's digest, then swapped in.
  Same DuckDB file or a database with transactional DDL (PostgreSQL, SQLite):
  ``DROP`` + ``ALTER … RENAME`` in one transaction, atomic — a crash before
  ``COMMIT`` leaves the previous release. Other databases (MySQL…) commit DDL
  one statement at a time: there a crash between the two statements leaves no
  table. Parquet destination: the staged file is copied beside the target and
  renamed (atomic on POSIX). DuckDB destination from a working file: loaded by
  ``read_parquet`` inside the swap transaction. Another SQL database: the staged rows are read
  into pandas and published as the in-memory flow does (the only case where
  published rows enter Python).
  Spark source and Spark destination: the anonymize step stages the rows by the
  source's session into a sibling folder or table (named by
  :mod:`~privacy_plugins.release.spark_destination`, recorded in the
  ``Candidate``), check and publish measure it there, and publish counts it
  again and swaps it without a row leaving Spark; another source to a Spark
  destination: Spark reads the staged Parquet file (that module says what
  atomicity a Spark folder and a Spark table give).

Which releases go here: :func:`pushdown_reason` returns ``None`` — the algorithm's
tags, not the source, decide. A generated table or a file below ``source.out_of_core_bytes``
is read into a :class:`~privacy_plugins.engines.pandas_engine.PandasTable` and released the
same way (its rows were in memory anyway; the anonymize step reads the source again and
checks its row count, as for a database). Algorithms that need the rows (Mondrian,
clustering, ``suppressed_rows: mark``) read the table into pandas and refuse a source
larger than ``source.max_rows_in_memory``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.anonymize import snapshot_anonymizer
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.io import check_unique_columns
from privacy_plugins.engines.aggregates import COUNT_COLUMN, numeric_columns_as_numbers
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
from privacy_plugins.errors import ConfigurationError, ReleaseBlocked, UnknownColumnError
from privacy_plugins.release import receipts, staging
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.destination import TABLE, Destination, Staged, StageRun, open_destination
from privacy_plugins.release.destination.base import StagedKind
from privacy_plugins.release.destination.files import atomic_file
from privacy_plugins.release.destination.sql import transactional_engine
from privacy_plugins.release.destination.working_file import CANDIDATE_FILE
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.published_numbers import measure_classes
from privacy_plugins.release.sources import read_source, source_url
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import (
    Candidate,
    CheckResult,
    DiagnosisSummary,
    ForeignArtifactError,
    LoadedTable,
    Publication,
    accept_artifact,
    accepted_check,
    accounting,
    check_lattice,
    check_mode,
    own_file,
    write_diagnosis,
    write_parquet,
)
from privacy_plugins.release.workarea import destination_lock, run_dir
from privacy_plugins.release.written_columns import record_columns, refuse_foreign_columns

__all__ = [
    "anonymize",
    "check",
    "discard",
    "load",
    "measured_frame",
    "publish",
    "pushdown_reason",
    "staged_measure",
    "staged_numbers",
]

SNAPSHOT_FILE = "snapshot.parquet"
REPORT_FILE = "anonymization.json"


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


def _quote(connection: Any, name: str) -> str:
    return str(connection.dialect.identifier_preparer.quote(name))


def _diagnosis(spec: ReleaseSpec, aggregates: pd.DataFrame, on_progress: OnProgress | None) -> DiagnosisSummary:
    """The in-memory diagnosis and reports, computed from the weighted snapshot (its counts are the weights)."""
    return write_diagnosis(spec, aggregates, weights=COUNT_COLUMN, on_progress=on_progress)


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


def _snapshot_of(spec: ReleaseSpec, loaded: LoadedTable, run_id: str | None) -> tuple[str, Path, pd.DataFrame]:
    """The run, its folder and the snapshot read from its exact, unchanged bytes; refuse anything else."""
    check_mode(spec, loaded.kind, "snapshot", "loaded table")
    run, folder = accept_artifact(spec, loaded, run_id, "snapshot")
    frame, _ = own_file(loaded.path, folder / SNAPSHOT_FILE, loaded.sha256, "snapshot")
    return run, folder, frame


def diagnose(
    spec: ReleaseSpec, loaded: LoadedTable, *, run_id: str | None, on_progress: OnProgress | None = None
) -> DiagnosisSummary:
    """Step 2 inside the database: the full diagnosis from the stored snapshot (no row is read)."""
    _, _, aggregates = _snapshot_of(spec, loaded, run_id)
    return _diagnosis(spec, aggregates, on_progress)


def _write_report(path: Path, report: dict[str, Any]) -> None:
    with atomic_file(path) as temporary:
        temporary.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def anonymize(
    spec: ReleaseSpec, loaded: LoadedTable, *, run_id: str | None, on_progress: OnProgress | None = None
) -> Candidate:
    """Step 3 inside the database: search the snapshot, stage the generalized rows (table or Parquet file).

    Raises:
        InfeasibleAnonymizationError: no node meets the requirements (nothing is staged).
        ConfigurationError: the source's row count changed since the load step.
    """
    started = time.monotonic()
    run, folder, stored = _snapshot_of(spec, loaded, run_id)
    for stale in (folder / CANDIDATE_FILE, folder / REPORT_FILE):  # never leave an earlier candidate behind
        stale.unlink(missing_ok=True)
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
        report_path = folder / REPORT_FILE
        levels = done.solution.details.recoding_levels()
        _write_report(
            report_path,
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
        table = "" if staged.kind == "file" else staged.name
        where = staged.name if staged.kind == "file" else f"{source.engine_name}:{table}"
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
        path=where,
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
        sha256=staged.sha256,
        kind="pushdown",
        staging_table=table,
        columns=columns,
    )


def _staged(spec: ReleaseSpec, candidate: Candidate) -> Staged:
    """The :class:`Staged` record the candidate carries: its staging table or location, else its working file."""
    rows = {TABLE: candidate.rows_out}
    if candidate.staging_table:
        kind: StagedKind = "spark" if spec.destination.spark is not None else "table"
        return Staged(kind, {TABLE: candidate.staging_table}, rows)
    return Staged("file", {TABLE: candidate.path}, rows, candidate.sha256)


def _candidate_of(
    spec: ReleaseSpec, candidate: Candidate, run_id: str | None
) -> tuple[str, Path, int, Destination, Staged, StageRun]:
    """The run, its folder, the rows it loaded (from its snapshot), the destination and the staged rows.

    Refuses a foreign or changed candidate (the destination checks its staged record).
    """
    check_mode(spec, candidate.kind, "pushdown", "candidate")
    run, folder = accept_artifact(spec, candidate, run_id, "candidate")
    snapshot = folder / SNAPSHOT_FILE
    loaded_rows = -1
    if snapshot.is_file() and not snapshot.is_symlink():
        import pyarrow.parquet as pq

        loaded_rows = int(pq.read_table(snapshot, columns=[COUNT_COLUMN]).column(0).to_numpy().sum())
    destination, staged, stage_run = (
        open_destination(spec.destination),
        _staged(spec, candidate),
        StageRun(spec, run, folder),
    )
    destination.accept_staged(staged, stage_run)
    return run, folder, loaded_rows, destination, staged, stage_run


def check(
    spec: ReleaseSpec, candidate: Candidate, *, run_id: str | None, allowed_failures: Collection[str] = ()
) -> CheckResult:
    """Step 4 inside the database: every requirement re-measured by ``GROUP BY`` on the staged rows.

    When a check outside ``allowed_failures`` fails, the candidate can never be published:
    its staging table is dropped.
    """
    started = time.monotonic()
    run, _, loaded_rows, destination, staged, stage_run = _candidate_of(spec, candidate, run_id)
    measured = destination.measure(staged, stage_run)
    checks = staging.staged_checks(spec, measured, candidate, loaded_rows)
    LOGGER.info(
        "check: %d of %d checks passed on %d staged rows (%.1fs)",
        sum(c.passed for c in checks),
        len(checks),
        measured.rows,
        time.monotonic() - started,
    )
    if any(not c.passed and c.name not in allowed_failures for c in checks):
        discard(spec, candidate)
    return CheckResult(
        passed=all(c.passed for c in checks),
        checks=checks,
        candidate_path=candidate.path,
        candidate_sha256=measured.digest,
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
    )


def _remeasure(
    spec: ReleaseSpec,
    measured: staging.StagedMeasure,
    candidate: Candidate,
    result: CheckResult,
    accepted: tuple[str, Path, int],
    allowed_failures: Collection[str],
) -> staging.StagedMeasure:
    """Refuse staged rows, measured again, that changed since the check, fail a requirement or have other columns."""
    _, folder, loaded_rows = accepted
    if measured.digest != result.candidate_sha256:
        raise ReleaseBlocked("the candidate changed after it was checked; nothing was published; re-run the check")
    failed = [
        c
        for c in staging.staged_checks(spec, measured, candidate, loaded_rows)
        if not c.passed and c.name not in allowed_failures
    ]
    if failed:
        summary = "\n".join(f"{c.requirement}: {c.detail}" for c in failed)
        raise ReleaseBlocked(
            f"release {spec.name!r} not published: re-measured before writing, the candidate fails:\n{summary}"
        )
    refuse_foreign_columns(candidate, folder, {"table": measured.columns})
    receipts.write_receipt(spec, result, _numbers(spec, measured, candidate), measured.columns, "publishing")
    return measured


def _numbers(spec: ReleaseSpec, measured: staging.StagedMeasure, candidate: Candidate) -> dict[str, Any]:
    """The publication's numbers: the staged rows measured, plus the candidate's accounting."""
    return measure_classes(spec, measured.classes, rows=measured.rows, columns=measured.columns) | accounting(candidate)


def publish(
    spec: ReleaseSpec,
    candidate: Candidate,
    result: CheckResult,
    *,
    run_id: str | None,
    allowed_failures: Collection[str] = (),
) -> Publication:
    """Step 5 inside the database: re-measure the staged rows, then swap them in (see the module docstring)."""
    started = time.monotonic()
    run = accepted_check(spec, candidate, result, run_id)
    try:
        run, folder, loaded_rows, destination, staged, stage_run = _candidate_of(spec, candidate, run)
    except ForeignArtifactError as exc:
        raise ReleaseBlocked(f"nothing was published: {exc}") from exc
    accepted = (run, folder, loaded_rows)

    def accept(measured: staging.StagedMeasure) -> None:
        _remeasure(spec, measured, candidate, result, accepted, allowed_failures)

    try:
        with destination_lock(spec.destination):
            measured = destination.swap(staged, stage_run, accept)
    except ReleaseBlocked:
        discard(spec, candidate)
        raise
    LOGGER.info(
        "publish: %d rows published to %s (%.1fs)",
        measured.rows,
        spec.destination.describe(),
        time.monotonic() - started,
    )
    numbers = _numbers(spec, measured, candidate)
    receipts.write_receipt(spec, result, numbers, measured.columns, "published")
    return Publication(
        destination=spec.destination.describe(),
        table=spec.destination.table,
        rows=measured.rows,
        numbers=numbers,
    )


def discard(spec: ReleaseSpec, candidate: Candidate) -> None:
    """Drop the candidate's staging table (a no-op for a Parquet candidate or one of another run).

    Best effort: a failure is logged, and the table is then cleaned up as stale later.
    """
    if candidate.kind != "pushdown" or not candidate.staging_table:
        return
    stage_run = StageRun(spec, candidate.run_id, run_dir(spec, candidate.run_id))
    open_destination(spec.destination).discard(_staged(spec, candidate), stage_run)


def staged_measure(spec: ReleaseSpec, candidate: Candidate) -> staging.StagedMeasure:
    """The staged candidate's columns, rows and classes (for metadata), measured where it is staged."""
    _, _, _, destination, staged, stage_run = _candidate_of(spec, candidate, None)
    return destination.measure(staged, stage_run)


def staged_numbers(spec: ReleaseSpec, candidate: Candidate) -> dict[str, Any]:
    """:func:`~privacy_plugins.release.published_numbers.measure_published` of the staged candidate, by ``GROUP BY``."""
    measured = staged_measure(spec, candidate)
    return measure_classes(spec, measured.classes, rows=measured.rows, columns=measured.columns)


def _too_many_to_read(spec: ReleaseSpec, rows: int) -> None:
    if rows > spec.source.max_rows_in_memory:
        raise ConfigurationError(
            f"the staged candidate has {rows} rows, more than source.max_rows_in_memory = "
            f"{spec.source.max_rows_in_memory}: a GX suite validates a DataFrame and would need them in memory; "
            "the core checks already ran inside the database — drop the suite or raise the limit"
        )


def measured_frame(spec: ReleaseSpec, candidate: Candidate, run_id: str | None = None) -> pd.DataFrame:
    """The staged rows as a DataFrame, for GX suites and candidate readers; counted and limited first.

    ``run_id``: the reader's run; a candidate of another run is refused (``None`` accepts the one it names).

    Raises:
        ConfigurationError: more rows than ``source.max_rows_in_memory``.
        ForeignArtifactError: a candidate of another run or release, or staged rows that changed.
    """
    _, _, _, destination, staged, stage_run = _candidate_of(spec, candidate, run_id)
    return destination.read_staged(staged, stage_run, lambda rows: _too_many_to_read(spec, rows))
