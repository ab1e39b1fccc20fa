"""The release flow inside the database: a ``duckdb:`` or ``url:`` source with a full-domain algorithm.

No source row is read into Python. The five steps become:

- load: one ``COUNT(*)`` and one ``GROUP BY`` over the QIs and the columns the
  models read (the weighted snapshot); hierarchies are built from the values
  present; every column, role, hierarchy leaf and requirement is checked here.
- diagnose: the headline numbers from the snapshot at the leaf level (the full
  subset diagnosis needs the records and is not run; the report says so).
- anonymize: the core searches the snapshot; the database applies the node
  (value → label mapping tables joined when the destination is the same
  database, ``CASE`` per QI otherwise) and removes the violating classes
  (anti-join with a small table of their labels) into a staging table
  ``<table>__incoming_<hex>`` (``CREATE TABLE … AS SELECT``) when the
  destination is the same database, otherwise the published rows are streamed
  in batches to a Parquet working file in the run's folder.
- check: identifiers, row accounting, suppression limit and every model,
  re-measured with ``GROUP BY`` on exactly the staged rows.
- publish: re-measured again, then swapped in. Same DuckDB file or a database
  with transactional DDL (PostgreSQL, SQLite): ``DROP`` + ``ALTER … RENAME`` in
  one transaction, atomic — a crash before ``COMMIT`` leaves the previous
  release. Other databases (MySQL…) commit DDL one statement at a time: there a
  crash between the two statements leaves no table. Parquet destination: the
  staged file is copied beside the target and renamed (atomic on POSIX). DuckDB
  destination elsewhere: loaded from the staged Parquet inside one transaction.
  Another SQL database: the staged rows are read into pandas and published as
  the in-memory flow does (the only case where published rows enter Python).
  Spark source and Spark destination: staged by the source's session into a
  sibling folder or table, counted, measured and swapped without a row leaving
  Spark; another source to a Spark destination: Spark reads the staged Parquet
  file (:mod:`~privacy_plugins.release.spark_destination` says what atomicity
  a Spark folder and a Spark table give).

Which releases go here: :func:`pushdown_reason` returns ``None``. Algorithms
that need the rows (Mondrian, clustering, ``suppressed_rows: mark``) read the
table into pandas and refuse a source larger than ``source.max_rows_in_memory``.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize import FULL_DOMAIN_ALGORITHMS
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.tables import check_unique_columns
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.duckdb_csv import open_csv_in_duckdb
from privacy_plugins.engines.pushdown import (
    anonymize_in_engine,
    measure_in_engine,
    model_columns,
    models_snapshot,
    validate_models,
)
from privacy_plugins.engines.spark import SparkTable, open_spark_table
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError, ReleaseBlocked, UnknownColumnError
from privacy_plugins.release import destinations, spark_destination
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.sources import source_url
from privacy_plugins.release.spark_destination import SparkStage
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import (
    Candidate,
    CheckResult,
    DiagnosisSummary,
    LoadedTable,
    Publication,
    RequirementCheck,
    accounting_checks,
    check_lattice,
    model_checks,
)
from privacy_plugins.release.workarea import destination_lock, run_dir

__all__ = ["PushdownRun", "pushdown_reason", "run_pushdown"]

BATCH_ROWS = 200_000


def _is_parquet(path: Path) -> bool:
    return path.is_dir() or path.suffix.lower() in (".parquet", ".pq")


def _large_file(spec: ReleaseSpec) -> Path | None:
    """The source's Parquet file or folder, or CSV file, when it is larger than ``source.out_of_core_bytes``.

    Any other file is a CSV, as ``read_table`` reads it.
    """
    path = spec.source.path
    if path is None or not path.exists():
        return None
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    return path if sum(f.stat().st_size for f in files) > spec.source.out_of_core_bytes else None


def _is_database(spec: ReleaseSpec) -> bool:
    source = spec.source
    return any(getattr(source, kind) is not None for kind in ("url", "conn_id", "duckdb", "spark"))


def pushdown_reason(spec: ReleaseSpec) -> str | None:
    """``None`` when the release runs inside the database; otherwise why it reads the rows into pandas.

    A Parquet or CSV source larger than ``source.out_of_core_bytes`` is released through
    an in-process DuckDB (out of core) like a database source; a CSV is typed there
    as ``read_table`` types it (``engines/duckdb_csv.py``).
    """
    if not _is_database(spec) and _large_file(spec) is None:
        return "the source is a generated table or a CSV/Parquet file below source.out_of_core_bytes"
    if spec.algorithm.name not in FULL_DOMAIN_ALGORITHMS:
        return f"algorithm {spec.algorithm.name!r} recodes locally and needs the rows"
    if spec.algorithm.option("suppressed_rows") != "remove":
        return "suppressed_rows: mark needs the rows"
    return None


@dataclass
class PushdownRun:
    """The artifacts of one release run inside the database (as the in-memory flow's)."""

    loaded: LoadedTable
    diagnosis: DiagnosisSummary
    candidate: Candidate | None = None
    check: CheckResult | None = None
    published: Publication | None = None
    failure: str | None = None


def _open(spec: ReleaseSpec) -> SqlTable | SparkTable:
    import sqlalchemy as sa

    if spec.source.spark is not None:
        return open_spark_table(spec.source.spark, spec.source.spark_settings)
    large = _large_file(spec)
    if large is not None and not _is_parquet(large):
        return open_csv_in_duckdb(large, sep=spec.source.sep)
    if large is not None:
        parquet = large
        pattern = str(parquet / "**" / "*.parquet") if parquet.is_dir() else str(parquet)
        literal = pattern.replace("'", "''")
        return SqlTable.from_query(sa.create_engine("duckdb:///:memory:"), f"SELECT * FROM read_parquet('{literal}')")
    url = source_url(spec.source)
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise ConfigurationError(f"cannot open source {mask_password(url)!r}: {mask_password(str(exc))}") from exc
    if engine.dialect.name == "sqlite" and engine.dialect.driver == "pysqlite":
        destinations._transactional_sqlite_ddl(engine)
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


def _quote(table: SqlTable, name: str) -> str:
    return str(table.engine.dialect.identifier_preparer.quote(name))


def _diagnosis(spec: ReleaseSpec, snapshot: Snapshot, models: list[Any]) -> DiagnosisSummary:
    """Headline risk numbers at the leaf level, from the snapshot; written as the diagnosis reports."""
    classes = snapshot.classes((0,) * len(snapshot.heights))
    sizes = classes.sizes
    k = spec.requirements.k or 1
    violating = np.zeros(classes.n_classes, dtype=bool)
    for model in models:
        violating |= model.violating_classes(classes)
    numbers = {
        "mode": "pushdown",
        "note": "computed in the database from the weighted snapshot; the subset diagnosis needs the rows",
        "rows": snapshot.n_rows,
        "distinct_combinations": len(snapshot.units),
        "k": int(sizes.min()),
        "sample_uniques": int((sizes == 1).sum()),
        "share_at_risk": float(sizes[sizes < k].sum()) / snapshot.n_rows,
        "suppression_needed": int(sizes[violating].sum()),
    }
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    spec.report.diagnosis_json.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")
    rows = "".join(f"<tr><th>{key}</th><td>{value}</td></tr>" for key, value in numbers.items())
    spec.report.diagnosis_html.write_text(f"<html><body><table>{rows}</table></body></html>\n", encoding="utf-8")
    return DiagnosisSummary(
        json_path=str(spec.report.diagnosis_json),
        html_path=str(spec.report.diagnosis_html),
        k=numbers["k"],  # type: ignore[arg-type]
        sample_uniques=numbers["sample_uniques"],  # type: ignore[arg-type]
        share_at_risk=numbers["share_at_risk"],  # type: ignore[arg-type]
        suppression_needed=numbers["suppression_needed"],  # type: ignore[arg-type]
    )


def _stream_to_parquet(published: Any, path: Path) -> int:
    """Write the published rows batch by batch (bounded memory); the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    rows = 0
    try:
        for batch in published.batches(BATCH_ROWS):
            table = pa.Table.from_pandas(batch, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(str(path), table.schema)
            writer.write_table(table.cast(writer.schema))
            rows += len(batch)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        pd.DataFrame(columns=published.columns()).to_parquet(path, index=False)
    return rows


def _staged(spec: ReleaseSpec, source: SqlTable | SparkTable, staging: str | Path | SparkStage) -> EngineTable:
    """The staged candidate as a table to measure: the staging table, or the Parquet file through DuckDB."""
    import sqlalchemy as sa

    if isinstance(staging, SparkStage):
        return staging.table()
    if isinstance(staging, str):
        assert isinstance(source, SqlTable)  # staged in the source database
        return SqlTable.from_table(source.engine, staging)
    engine = sa.create_engine("duckdb:///:memory:")
    literal = str(staging).replace("'", "''")
    return SqlTable.from_query(engine, f"SELECT * FROM read_parquet('{literal}')")


def _checks(spec: ReleaseSpec, staged: EngineTable, candidate: Candidate, loaded_rows: int) -> list[RequirementCheck]:
    """Identifiers, row accounting, suppression limit and every model, by GROUP BY on the staged rows."""
    columns = staged.columns()
    rows = staged.count()
    accounted = (
        loaded_rows == candidate.rows_in == candidate.rows_out + candidate.suppressed == rows + candidate.suppressed
    )
    checks = accounting_checks(
        spec,
        candidate,
        columns=columns,
        loaded_rows=loaded_rows,
        accounted=accounted,
        observed_rows=rows,
        expected_rows=candidate.rows_out,
        where=f"{rows} rows staged",
    )
    models = spec.models()
    results = measure_in_engine(staged, quasi_identifiers=list(spec.quasi_identifiers), models=models)
    return checks + model_checks(models, results)


def _swap_in_database(source: SqlTable, staging: str, table: str) -> None:
    import sqlalchemy as sa

    with source.engine.begin() as connection:
        destinations._swap_hook()
        connection.execute(sa.text(f"DROP TABLE IF EXISTS {_quote(source, table)}"))
        connection.execute(sa.text(f"ALTER TABLE {_quote(source, staging)} RENAME TO {_quote(source, table)}"))


def _publish_staged_file(spec: ReleaseSpec, path: Path, rows: int) -> None:
    import pyarrow.parquet as pq

    target = spec.destination
    if target.parquet is not None:
        target.parquet.mkdir(parents=True, exist_ok=True)
        with destinations.atomic_file(target.parquet / f"{target.table}.parquet") as temporary:
            shutil.copyfile(path, temporary)
            destinations._verify(rows, pq.ParquetFile(temporary).metadata.num_rows, str(temporary))
            destinations._swap_hook()
    elif target.duckdb is not None:
        destinations.publish_parquet_to_duckdb(path, target.duckdb, target.table, rows)
    elif target.spark is not None:
        spark_destination.publish_parquet(path, target, rows)
    else:
        destinations.publish_table(pd.read_parquet(path), target)  # another database: through pandas


def run_pushdown(
    spec: ReleaseSpec, *, run_id: str, on_step: Any = None, on_progress: OnProgress | None = None
) -> PushdownRun:
    """Load, diagnose, anonymize, check and publish without reading the source rows into Python.

    Raises:
        ConfigurationError, HierarchyError, UnknownColumnError: bad spec or data (before anything is written).
        InfeasibleAnonymizationError is reported as ``failure``, like the in-memory flow.
    """
    from privacy_plugins.errors import InfeasibleAnonymizationError

    def step(name: str) -> None:
        if on_step is not None:
            on_step(name)

    started = time.monotonic()

    def elapsed() -> str:
        return f"{time.monotonic() - started:.1f}s"

    step("load")
    spec.destination.check_writable()
    spec.report.check_writable()
    source = _open(spec)
    staging: str | Path | SparkStage | None = None
    try:
        columns = source.columns()
        check_unique_columns(columns, where="the source")
        spec.roles.check_columns(columns)
        bound = spec.requirements.bound_column
        if bound is not None and bound not in columns:
            raise UnknownColumnError(f"bound_column not found in table: {bound!r}; available: {columns}")
        models = spec.models()
        qis = list(spec.quasi_identifiers)
        aggregates = source.group_counts([*qis, *model_columns(models, qis)])
        hierarchies = spec.build_hierarchies(aggregates[qis])
        snapshot, _ = models_snapshot(
            source, quasi_identifiers=qis, hierarchies=hierarchies, models=models, aggregates=aggregates
        )
        check_lattice(spec, hierarchies)
        validate_models(aggregates, snapshot.n_rows, models)
        LOGGER.info(
            "load: %d rows, %d distinct combinations, in %s (pushdown; %s)",
            snapshot.n_rows,
            len(snapshot.units),
            source.engine_name,
            elapsed(),
        )
        loaded = LoadedTable(
            path=f"{source.engine_name}:{spec.source.spark or spec.source.table or 'query'}",
            rows=snapshot.n_rows,
            columns=[c for c in columns if c not in spec.identifiers],
            dropped_identifiers=list(spec.identifiers),
            run_id=run_id,
            spec_name=spec.name,
            source_fingerprint=spec.source_fingerprint,
        )
        step("diagnose")
        run = PushdownRun(loaded=loaded, diagnosis=_diagnosis(spec, snapshot, models))
        step("anonymize")
        try:
            done = anonymize_in_engine(
                source,
                quasi_identifiers=qis,
                hierarchies=hierarchies,
                models=models,
                identifiers=list(spec.identifiers),
                sensitive_attributes=list(spec.sensitive_attributes),
                suppression_limit=spec.requirements.suppression_limit,
                algorithm=spec.algorithm.name,
                metric=str(spec.algorithm.option("metric")),
                progress=StepProgress("anonymize", "nodes checked", on_progress),
                aggregates=aggregates,
                # Mapping tables joined were faster than CASE on DuckDB (bench_engines, 10M rows) but are
                # written next to the source: only when the release writes into that database anyway.
                method="join" if _same_database(spec) else "case",
            )
        except InfeasibleAnonymizationError as exc:
            run.failure = f"requirements cannot be met: {exc}"
            return run
        folder = run_dir(spec, run_id, create=True)
        report_path = folder / "anonymization.json"
        report_path.write_text(
            json.dumps(
                {
                    "algorithm": spec.algorithm.name,
                    "levels": done.solution.details.levels,
                    "rows_in": done.rows_in,
                    "suppressed": done.solution.suppressed,
                    "ncp": done.solution.utility.ncp,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        if _same_database(spec) and isinstance(source, SparkTable):  # no row leaves Spark
            staging = spark_destination.stage(done.published, spec.destination)
            where = staging.where
        elif _same_database(spec):
            import sqlalchemy as sa

            assert isinstance(source, SqlTable)
            staging = f"{spec.destination.table}__incoming_{uuid.uuid4().hex[:8]}"
            with source.engine.begin() as connection:
                connection.execute(sa.text(f"CREATE TABLE {_quote(source, staging)} AS {done.published.select_sql()}"))  # type: ignore[attr-defined]
            where = f"{source.engine_name}#{staging}"
        else:
            staging = folder / "candidate.parquet"
            _stream_to_parquet(done.published, staging)
            where = str(staging)
        LOGGER.info(
            "anonymize: %d rows in, %d published, %d suppressed, staged at %s (%s)",
            done.rows_in,
            done.rows_out,
            done.solution.suppressed,
            where,
            elapsed(),
        )
        run.candidate = Candidate(
            path=where,
            report_path=str(report_path),
            algorithm=spec.algorithm.name,
            levels={str(k): int(v) for k, v in done.solution.details.levels.items()},
            rows_in=done.rows_in,
            rows_out=done.rows_out,
            suppressed=done.solution.suppressed,
            dropped_identifiers=list(spec.identifiers),
            ncp=done.solution.utility.ncp,
            run_id=run_id,
            spec_name=spec.name,
            source_fingerprint=spec.source_fingerprint,
        )
        step("check")
        staged = _staged(spec, source, staging)
        checks = _checks(spec, staged, run.candidate, loaded.rows)
        LOGGER.info(
            "check: %d of %d checks passed on the staged rows (%s)",
            sum(c.passed for c in checks),
            len(checks),
            elapsed(),
        )
        run.check = CheckResult(
            all(c.passed for c in checks),
            checks,
            where,
            "",
            run_id=run_id,
            spec_name=spec.name,
            source_fingerprint=spec.source_fingerprint,
        )
        if not run.check.passed:
            run.failure = f"checks failed on the anonymized table:\n{run.check.summary()}"
            return run
        step("publish")
        with destination_lock(spec.destination):
            again = [c for c in _checks(spec, staged, run.candidate, loaded.rows) if not c.passed]
            if again:
                raise ReleaseBlocked(
                    "re-measured before publishing, the staged rows fail: " + "; ".join(c.detail for c in again)
                )
            if isinstance(staging, SparkStage):
                staging.publish(done.rows_out)
            elif isinstance(staging, str):
                assert isinstance(source, SqlTable)
                _swap_in_database(source, staging, spec.destination.table)
                staging = None
            else:
                _publish_staged_file(spec, staging, done.rows_out)
        LOGGER.info("publish: %d rows published to %s (%s)", done.rows_out, spec.destination.describe(), elapsed())
        run.published = Publication(
            destination=spec.destination.describe(), table=spec.destination.table, rows=done.rows_out
        )
        return run
    finally:
        if isinstance(staging, SparkStage):
            staging.discard()  # a no-op once published
        if isinstance(source, SqlTable):
            if isinstance(staging, str):
                import sqlalchemy as sa

                with source.engine.begin() as connection:
                    connection.execute(sa.text(f"DROP TABLE IF EXISTS {_quote(source, staging)}"))
            source.close()
            source.engine.dispose()
