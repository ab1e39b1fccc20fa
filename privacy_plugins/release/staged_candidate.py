"""A candidate as its destination staged it: its ``Staged`` record, opened for a step, read, measured, discarded.

Every release stages its candidate through the destination (``Destination.stage`` in the
anonymize step, :mod:`privacy_plugins.release.destination`): a staging table in the
destination database, a Spark staging location, or the run's Parquet working file(s).
The check and publish steps and the adapters' readers reach it only through here, so
there is one way to accept, measure and read a candidate, whatever algorithm made it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.artifacts import Candidate, accept_artifact
from privacy_plugins.release.destination import TABLE, Destination, Staged, StageRun, open_destination
from privacy_plugins.release.destination.base import LINKED_PARTS, StagedKind
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staging import StagedMeasure
from privacy_plugins.release.workarea import run_dir

__all__ = [
    "LOADED_FILE",
    "SNAPSHOT_FILE",
    "OpenedCandidate",
    "candidate_fields",
    "discard",
    "loaded_rows",
    "measured_frame",
    "open_candidate",
    "staged_measure",
    "staged_of",
]

LOADED_FILE = "raw.parquet"
"""The load step's working file when the algorithm needs the rows (identifiers dropped)."""

SNAPSHOT_FILE = "snapshot.parquet"
"""The load step's working file when the algorithm works on the weighted snapshot."""


def staged_of(spec: ReleaseSpec, candidate: Candidate) -> Staged:
    """The :class:`Staged` record the candidate carries (its staging table or location, else its working file(s))."""
    rows = dict(candidate.staged_rows) or {TABLE: candidate.rows_out}
    if candidate.staging_table:
        kind: StagedKind = "spark" if spec.destination.spark is not None else "table"
        return Staged(kind, {TABLE: candidate.staging_table}, rows)
    if candidate.linked_path:
        qit, st = LINKED_PARTS
        paths = {qit: candidate.path, st: candidate.linked_path}
        return Staged("file", paths, rows, {qit: candidate.sha256, st: candidate.linked_sha256})
    return Staged("file", {TABLE: candidate.path}, rows, {TABLE: candidate.sha256})


def candidate_fields(staged: Staged, where: str = "") -> dict[str, Any]:
    """The ``Candidate`` fields that record where the destination staged it (``where``: a staging table's label)."""
    if staged.kind != "file":
        return {"path": where or staged.name, "staging_table": staged.name, "staged_rows": dict(staged.rows)}
    main, linked = LINKED_PARTS if staged.linked else (TABLE, "")
    fields: dict[str, Any] = {"path": staged.parts[main], "sha256": staged.digests[main]}
    if linked:
        fields |= {"linked_path": staged.parts[linked], "linked_sha256": staged.digests[linked]}
    return fields | {"staged_rows": dict(staged.rows)}


def loaded_rows(folder: Path) -> int:
    """The rows the run's load step stored (its table's rows, or its snapshot's counts); -1 when it is gone."""
    import pyarrow.parquet as pq

    from privacy_plugins.engines.aggregates import COUNT_COLUMN

    table, snapshot = folder / LOADED_FILE, folder / SNAPSHOT_FILE
    if table.is_file() and not table.is_symlink():
        return int(pq.ParquetFile(table).metadata.num_rows)
    if snapshot.is_file() and not snapshot.is_symlink():
        return int(pq.read_table(snapshot, columns=[COUNT_COLUMN]).column(0).to_numpy().sum())
    return -1


@dataclass(frozen=True)
class OpenedCandidate:
    """A candidate accepted for a step: its run, the rows that run loaded, its destination and staged record."""

    run: str
    folder: Path
    loaded_rows: int
    destination: Destination
    staged: Staged
    stage_run: StageRun

    def measure(self) -> StagedMeasure:
        """Its columns, rows, classes and digest, measured where it is staged."""
        return self.destination.measure(self.staged, self.stage_run)


def open_candidate(spec: ReleaseSpec, candidate: Candidate, run_id: str | None) -> OpenedCandidate:
    """Accept the candidate for a step of ``run_id`` (``None``: the run it names).

    Raises:
        ForeignArtifactError: a candidate of another run, spec or source, or one whose staged rows are
            not its run's (a staging table of another run, a working file changed since it was written).
    """
    run, folder = accept_artifact(spec, candidate, run_id, "candidate")
    destination, staged = open_destination(spec.destination), staged_of(spec, candidate)
    stage_run = StageRun(spec, run, folder)
    destination.accept_staged(staged, stage_run)
    return OpenedCandidate(run, folder, loaded_rows(folder), destination, staged, stage_run)


def discard(spec: ReleaseSpec, candidate: Candidate) -> None:
    """Drop the candidate's staging table or location (a no-op for working files, removed with the run's folder).

    Best effort: a failure is logged, and the table is then cleaned up as stale later.
    """
    if not candidate.staging_table:
        return
    try:
        folder = run_dir(spec, candidate.run_id)
    except ConfigurationError:  # the run's folder is gone (a failed check ended it): a table needs none
        folder = Path()
    stage_run = StageRun(spec, candidate.run_id, folder)
    open_destination(spec.destination).discard(staged_of(spec, candidate), stage_run)


def staged_measure(spec: ReleaseSpec, candidate: Candidate) -> StagedMeasure:
    """The candidate's columns, rows and classes (for metadata), measured where it is staged."""
    return open_candidate(spec, candidate, None).measure()


def _too_many_to_read(spec: ReleaseSpec) -> Callable[[int], None]:
    def refuse(rows: int) -> None:
        if rows > spec.source.max_rows_in_memory:
            raise ConfigurationError(
                f"the staged candidate has {rows} rows, more than source.max_rows_in_memory = "
                f"{spec.source.max_rows_in_memory}: a GX suite validates a DataFrame and would need them in memory; "
                "the core checks already ran where it is staged — drop the suite or raise the limit"
            )

    return refuse


def measured_frame(spec: ReleaseSpec, candidate: Candidate, run_id: str | None = None) -> pd.DataFrame:
    """The candidate as expectations should see it, read where it is staged; counted and limited first.

    A two-table release (Anatomy) is read as its groups: one row per record of its sensitive
    table with every QI replaced by the group id, so GX's k / l / t expectations measure the groups.
    ``run_id``: the reader's run; a candidate of another run is refused (``None`` accepts the one it names).

    Raises:
        ConfigurationError: more rows than ``source.max_rows_in_memory``.
        ForeignArtifactError: a candidate of another run or release, or staged rows that changed.
    """
    opened = open_candidate(spec, candidate, run_id)
    return opened.destination.read_staged(opened.staged, opened.stage_run, _too_many_to_read(spec))
