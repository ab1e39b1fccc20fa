"""Rows staged in the run's Parquet working file: written, validated, measured and read there.

The file is ``<run folder>/candidate.parquet`` (the run's private folder, removed with it, so no
row stays on disk after the run however it ends), written through :func:`~.files.atomic_file`;
its SHA-256 is recorded in the :class:`~.base.Staged` record and checked before every use.
A DuckDB table (a DuckDB file, or Parquet/CSV read by an in-process DuckDB) is written by
DuckDB itself (``COPY (SELECT …) TO``): no row enters Python. Any other engine's rows are
streamed in batches of :data:`BATCH_ROWS` (bounded memory).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from privacy_plugins.errors import ForeignArtifactError
from privacy_plugins.release.destination.base import TABLE, Staged, StageRun
from privacy_plugins.release.destination.files import atomic_file

if TYPE_CHECKING:
    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = [
    "BATCH_ROWS",
    "CANDIDATE_FILE",
    "accept_file",
    "file_sha256",
    "measure_file",
    "read_file",
    "stage_file",
    "staged_file",
    "stream_to_parquet",
]

CANDIDATE_FILE = "candidate.parquet"
BATCH_ROWS = 200_000
_CHUNK = 1 << 20


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


def stage_file(table: EngineTable, run: StageRun) -> Staged:
    """Stage one table in the run's working file (by DuckDB when it runs the table, else in batches)."""
    path = run.folder / CANDIDATE_FILE
    with atomic_file(path) as temporary:
        rows = copy_to_parquet(table, temporary) if in_duckdb(table) else stream_to_parquet(table, temporary)
    return Staged("file", {TABLE: str(path)}, {TABLE: rows}, file_sha256(path))


def accept_file(staged: Staged, run: StageRun) -> Path:
    """The run's working file the record names, unchanged since it was written; refuse anything else."""
    expected = run.folder / CANDIDATE_FILE
    if staged.kind != "file" or Path(staged.name) != expected:
        raise ForeignArtifactError(
            f"the candidate points to {staged.name!r}, not to its run's working file {str(expected)!r}; refusing it"
        )
    if expected.is_symlink() or not expected.is_file():
        raise ForeignArtifactError(f"the candidate's working file {str(expected)!r} is missing (or a symlink)")
    if file_sha256(expected) != staged.sha256:
        raise ForeignArtifactError(
            f"the candidate's working file {str(expected)!r} changed after it was written; refusing it — "
            "re-run the step"
        )
    return expected


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


def read_selectable(connection: Any, selectable: Any, refuse: Callable[[int], None]) -> pd.DataFrame:
    """All rows of ``selectable`` after ``refuse(count)`` let them through."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import frame_from_rows, subquery_of

    subquery = subquery_of(selectable)
    refuse(int(connection.execute(sa.select(sa.func.count()).select_from(subquery)).scalar_one()))
    result = connection.execute(sa.select(*subquery.c))
    return frame_from_rows(result.fetchall(), [str(n) for n in result.keys()], coerce_float=True)


def read_file(path: Path, refuse: Callable[[int], None]) -> pd.DataFrame:
    """The Parquet file's rows (counted and refused first)."""
    with staged_file(path) as (connection, selectable):
        return read_selectable(connection, selectable, refuse)
