"""Rows staged in the run's Parquet working files: written, validated, measured and read there.

One file per part: ``<run folder>/candidate.parquet`` (the table, or a two-table release's QIT)
and ``candidate_st.parquet`` (its sensitive table), in the run's private folder, removed with
it, so no row stays on disk after the run however it ends; written through
:func:`~.files.atomic_file`; each file's SHA-256 is recorded in the :class:`~.base.Staged`
record and checked before every use. A DuckDB table (a DuckDB file, or Parquet/CSV read by an
in-process DuckDB) is written by DuckDB itself (``COPY (SELECT …) TO``): no row enters Python.
A table in memory is written whole; any other engine's rows are streamed in batches of
:data:`BATCH_ROWS` (bounded memory).

Measured: one table by DuckDB (one ``COUNT(*)``, one ``GROUP BY``); a two-table pair by
its groups (every QIT row must join exactly one ST group: ``core.anonymize.linked_classes``),
as the attacker links them — the pair is an in-memory algorithm's output, small by construction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from privacy_plugins.errors import ForeignArtifactError
from privacy_plugins.release.destination.base import LINKED_PARTS, TABLE, SqlLocation, Staged, StageRun
from privacy_plugins.release.destination.files import atomic_file

if TYPE_CHECKING:
    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = [
    "BATCH_ROWS",
    "CANDIDATE_FILE",
    "accept_files",
    "file_sha256",
    "measure_file",
    "measure_files",
    "measure_staged",
    "part_file",
    "read_files",
    "read_staged",
    "sql_location",
    "stage_files",
    "staged_file",
    "stream_to_parquet",
]

CANDIDATE_FILE = "candidate.parquet"
BATCH_ROWS = 200_000
_CHUNK = 1 << 20


def part_file(part: str) -> str:
    """The run's working file of a staged part: ``candidate.parquet`` (table or QIT), ``candidate_<part>.parquet``."""
    return CANDIDATE_FILE if part in (TABLE, LINKED_PARTS[0]) else f"candidate_{part}.parquet"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file read in chunks (a staged Parquet file may be larger than memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def in_duckdb(table: EngineTable) -> bool:
    """Whether ``table`` is a query DuckDB runs (so DuckDB can write it anywhere it reaches)."""
    from privacy_plugins.engines.sql import SqlTable

    return isinstance(table, SqlTable) and table.engine_name == "duckdb"


def _literal(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def copy_to_parquet(table: Any, path: Path) -> int:
    """DuckDB writes the table's rows to ``path`` itself (``COPY … TO``); the rows written."""
    import pyarrow.parquet as pq
    import sqlalchemy as sa

    with table.transaction() as connection:  # the connection holding the table's temporary helpers
        connection.execute(sa.text(f"COPY ({table.select_sql()}) TO {_literal(path)} (FORMAT PARQUET)"))
    return int(pq.ParquetFile(path).metadata.num_rows)


def stream_to_parquet(table: EngineTable, path: Path) -> int:
    """Write the rows batch by batch (bounded memory); the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    rows = 0
    try:
        for batch in table.batches(BATCH_ROWS):
            arrow = pa.Table.from_pandas(batch, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(str(path), arrow.schema)
            writer.write_table(arrow.cast(writer.schema))
            rows += len(batch)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        pd.DataFrame(columns=table.columns()).to_parquet(path, index=False)
    return rows


def _write(table: EngineTable, path: Path) -> int:
    """Write ``table``'s rows to ``path``: by DuckDB, whole from memory, or in batches; the rows written."""
    from privacy_plugins.engines.pandas_engine import PandasTable

    if in_duckdb(table):
        return copy_to_parquet(table, path)
    if isinstance(table, PandasTable):  # in memory already: one write keeps pandas' own column types
        table.frame.to_parquet(path, index=False)
        return len(table.frame)
    return stream_to_parquet(table, path)


def stage_files(parts: Mapping[str, EngineTable], run: StageRun) -> Staged:
    """Stage each part in its working file of the run (one table, or a two-table release's pair)."""
    if set(parts) not in ({TABLE}, set(LINKED_PARTS)):
        raise ValueError(
            f"a staged release has the part {TABLE!r} or the parts {list(LINKED_PARTS)}, got {sorted(parts)}"
        )
    paths: dict[str, str] = {}
    rows: dict[str, int] = {}
    digests: dict[str, str] = {}
    for part, table in parts.items():
        path = run.folder / part_file(part)
        with atomic_file(path) as temporary:
            rows[part] = _write(table, temporary)
        paths[part], digests[part] = str(path), file_sha256(path)
    return Staged("file", paths, rows, digests)


def accept_files(staged: Staged, run: StageRun) -> dict[str, Path]:
    """The run's working files the record names, each unchanged since it was written; refuse anything else."""
    if staged.kind != "file":
        raise ForeignArtifactError(f"the candidate names {staged.name!r}, not a working file of its run; refusing it")
    if set(staged.parts) not in ({TABLE}, set(LINKED_PARTS)):
        raise ForeignArtifactError(f"the candidate names the parts {sorted(staged.parts)}; refusing it")
    paths = {}
    for part, name in staged.parts.items():
        expected = run.folder / part_file(part)
        if Path(name) != expected:
            raise ForeignArtifactError(
                f"the candidate points to {name!r}, not to its run's working file {str(expected)!r}; refusing it"
            )
        if expected.is_symlink() or not expected.is_file():
            raise ForeignArtifactError(f"the candidate's working file {str(expected)!r} is missing (or a symlink)")
        if file_sha256(expected) != staged.digests.get(part):
            raise ForeignArtifactError(
                f"the candidate's working file {str(expected)!r} changed after it was written; refusing it — "
                "re-run the step"
            )
        paths[part] = expected
    return paths


@contextmanager
def staged_file(path: Path) -> Iterator[tuple[Any, Any]]:
    """A connection of an in-process DuckDB and the Parquet file's rows as a selectable."""
    import sqlalchemy as sa

    engine = sa.create_engine("duckdb:///:memory:")
    try:
        with engine.connect() as connection:
            query = f"SELECT * FROM read_parquet({_literal(path)})"
            names = [str(n) for n in connection.execute(sa.text(f"{query} LIMIT 0")).keys()]
            yield connection, sa.text(query).columns(*[sa.column(n) for n in names]).subquery("staged")
    finally:
        engine.dispose()


def measure_file(spec: ReleaseSpec, path: Path) -> StagedMeasure:
    """The Parquet file measured by DuckDB: one ``COUNT(*)`` and one ``GROUP BY``."""
    from privacy_plugins.release.staging import measure_staged

    with staged_file(path) as (connection, selectable):
        return measure_staged(spec, connection, selectable)


def measure_files(spec: ReleaseSpec, paths: Mapping[str, Path]) -> StagedMeasure:
    """The staged part(s) measured: one table by DuckDB, a two-table pair by its groups.

    Raises:
        VerificationError: a pair whose QIT rows do not each join exactly one ST group.
    """
    if set(paths) == {TABLE}:
        return measure_file(spec, paths[TABLE])
    from privacy_plugins.release.staging import measure_pair

    qit, st = (pd.read_parquet(paths[part]) for part in LINKED_PARTS)
    digest = hashlib.sha256(":".join(file_sha256(paths[part]) for part in LINKED_PARTS).encode()).hexdigest()
    return measure_pair(spec, qit, st, digest)


def read_selectable(connection: Any, selectable: Any, refuse: Callable[[int], None]) -> pd.DataFrame:
    """All rows of ``selectable`` after ``refuse(count)`` let them through."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import frame_from_rows, subquery_of

    subquery = subquery_of(selectable)
    refuse(int(connection.execute(sa.select(sa.func.count()).select_from(subquery)).scalar_one()))
    result = connection.execute(sa.select(*subquery.c))
    return frame_from_rows(result.fetchall(), [str(n) for n in result.keys()], coerce_float=True)


def measure_staged(staged: Staged, run: StageRun) -> StagedMeasure:
    """The run's unchanged working files (:func:`accept_files`) measured (:func:`measure_files`)."""
    return measure_files(run.spec, accept_files(staged, run))


def read_staged(staged: Staged, run: StageRun, refuse: Callable[[int], None]) -> pd.DataFrame:
    """The run's unchanged working files (:func:`accept_files`) read (:func:`read_files`)."""
    return read_files(run.spec, accept_files(staged, run), refuse)


def sql_location(staged: Staged, run: StageRun) -> SqlLocation | None:
    """The one-table working file as a query of an in-process DuckDB (a pair: ``None``, read as its groups)."""
    paths = accept_files(staged, run)
    if set(paths) != {TABLE}:
        return None
    return SqlLocation("duckdb:///:memory:", query=f"SELECT * FROM read_parquet({_literal(paths[TABLE])})")


def read_files(spec: ReleaseSpec, paths: Mapping[str, Path], refuse: Callable[[int], None]) -> pd.DataFrame:
    """The staged rows as the checks see them (counted and refused first): the table, or a pair's groups."""
    if set(paths) == {TABLE}:
        with staged_file(paths[TABLE]) as (connection, selectable):
            return read_selectable(connection, selectable, refuse)
    import pyarrow.parquet as pq

    from privacy_plugins.core.anonymize.anatomy import GROUP_COLUMN
    from privacy_plugins.release.linked import joined_view

    refuse(int(pq.ParquetFile(paths[LINKED_PARTS[0]]).metadata.num_rows))
    return joined_view(pd.read_parquet(paths["st"]), GROUP_COLUMN, spec.quasi_identifiers)
