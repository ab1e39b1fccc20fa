"""A Spark destination (catalog table or local Parquet folder): the protocol over :mod:`..spark_destination`.

* Spark source: the source's session writes the staging folder or table
  (``<target>[.]__incoming_<8 hex>``, recorded in the ``Candidate``); it is measured there
  and counted again and swapped by Spark — no row leaves Spark.
* Any other source: the run's Parquet working file, read by Spark at the swap.
* In-memory frames: to Spark as an Arrow table, staged, counted, swapped.

What atomicity a folder and a table give, and what a killed run leaves: see
:mod:`privacy_plugins.release.spark_destination`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from privacy_plugins.errors import ForeignArtifactError, PublishError
from privacy_plugins.release import spark_destination
from privacy_plugins.release.destination import working_file
from privacy_plugins.release.destination.base import (
    TABLE,
    Accept,
    SqlLocation,
    Staged,
    StageRun,
    publishing,
    reading,
)
from privacy_plugins.release.destination.companion_link import read_companions, swap_companions
from privacy_plugins.release.spec import DestinationSpec

if TYPE_CHECKING:
    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = ["SparkDestination"]


class SparkDestination:
    """``destination: {spark: TABLE-OR-FOLDER, spark_settings: {...}}``."""

    def __init__(self, spec: DestinationSpec) -> None:
        self.spec = spec

    def _stage_of(self, staged: Staged, run: StageRun) -> spark_destination.SparkStage:
        """The Spark staging location the record names, in the source's session; refuse any other name.

        Its name is ``spark_destination``'s, not bound to the run: Spark staging keeps that
        module's rules (a killed run's stage is removed by hand).
        """
        from privacy_plugins.engines.spark_session import spark_session

        name, target = staged.name, str(self.spec.spark)
        folder = name.startswith(target + ".")
        pattern = re.escape(target + ("." if folder else "")) + re.escape(spark_destination.INCOMING) + "[0-9a-f]{8}"
        if staged.kind != "spark" or not re.fullmatch(pattern, name):
            raise ForeignArtifactError(
                f"the candidate names Spark staging location {name!r}, which is not a staging location of "
                f"{self.spec.describe()}; refusing it"
            )
        session = spark_session(run.spec.source.spark_settings, setting="source.spark_settings")
        return spark_destination.SparkStage(self.spec, session, name)

    def stage(self, parts: Mapping[str, EngineTable], run: StageRun) -> Staged:
        """A Spark table from the source's session: staged by Spark; anything else: the run's working file."""
        from privacy_plugins.engines.spark import SparkTable

        if set(parts) != {TABLE}:
            raise PublishError(f"{self.spec.describe()} does not take the linked pair")
        table = parts[TABLE]
        if isinstance(table, SparkTable):  # no row leaves Spark
            stage = spark_destination.stage(table, self.spec)
            return Staged("spark", {TABLE: stage.staging})
        return working_file.stage_files(parts, run)

    def accept_staged(self, staged: Staged, run: StageRun) -> None:
        """A staging location of this destination, or the run's unchanged working file."""
        if staged.kind == "file":
            working_file.accept_files(staged, run)
        else:
            self._stage_of(staged, run)

    def measure(self, staged: Staged, run: StageRun) -> StagedMeasure:
        """Measured by Spark where it is staged (a working file: by DuckDB)."""
        from privacy_plugins.release.staging import measure_table

        if staged.kind == "file":
            return working_file.measure_staged(staged, run)
        return measure_table(run.spec, self._stage_of(staged, run).table())

    def swap(self, staged: Staged, run: StageRun, accept: Accept) -> StagedMeasure:
        """Measure again, ``accept``, then Spark counts again and swaps (see :mod:`..spark_destination`).

        With a release history (a folder only), the version folder is marked with the rows the
        history's new entry names and the history is swapped right before the folder's link.
        """
        measured = self.measure(staged, run)
        companions = accept(measured) or {}
        prepare = None
        if companions:
            link = spark_destination.companion_link(self.spec)
            if link is None:
                raise PublishError(f"{self.spec.describe()}: a Spark table keeps no release history; nothing published")
            anchor = release_anchor(staged, measured)

            def prepare(folder: Path) -> None:
                (folder / spark_destination.RELEASE_MARKER).write_text(anchor + "\n", encoding="utf-8")
                swap_companions(link, companions)

        if staged.kind == "file":
            path = working_file.accept_files(staged, run)[TABLE]
            spark_destination.publish_parquet(path, self.spec, staged.rows[TABLE], prepare)
        else:
            self._stage_of(staged, run).publish(staged.rows[TABLE], prepare)
        return measured

    def discard(self, staged: Staged, run: StageRun) -> None:
        """Remove the Spark staging location (never a location that is not one of this destination's)."""
        if staged.kind != "spark":
            return
        try:
            stage = self._stage_of(staged, run)
        except ForeignArtifactError:
            return
        stage.discard()

    def read_staged(self, staged: Staged, run: StageRun, refuse: Callable[[int], None]) -> pd.DataFrame:
        """The staged rows, counted by Spark and refused first."""
        if staged.kind == "file":
            return working_file.read_staged(staged, run, refuse)
        table = self._stage_of(staged, run).table()
        refuse(table.count())
        return table.to_pandas()

    def sql_location(self, staged: Staged, run: StageRun) -> SqlLocation | None:
        """A working file, read by an in-process DuckDB; Spark's staging: ``None`` (GX reads it as a DataFrame)."""
        return working_file.sql_location(staged, run) if staged.kind == "file" else None

    def replace(self, frames: Mapping[str, pd.DataFrame]) -> dict[str, int]:
        """One frame, to Spark as an Arrow table (a Spark destination takes no linked pair)."""
        if set(frames) != {TABLE}:
            raise PublishError(f"{self.spec.describe()} does not take the linked pair")
        with publishing(self.spec):
            spark_destination.publish_frame(frames[TABLE], self.spec)
        return {TABLE: len(frames[TABLE])}

    def read(self, parts: Sequence[str] = (TABLE,)) -> dict[str, pd.DataFrame] | None:
        """The published release, read once from one version (a pair is never published here)."""
        if list(parts) != [TABLE]:
            return None
        frame = reading(self.spec, lambda: spark_destination.read(self.spec))
        return None if frame is None else {TABLE: frame}

    def measure_published(self, spec: ReleaseSpec, staging_table: str) -> StagedMeasure | None:
        """The published release measured in memory (read once)."""
        from privacy_plugins.engines.pandas_engine import PandasTable
        from privacy_plugins.release.staging import measure_table

        published = self.read()
        return None if published is None else measure_table(spec, PandasTable(published[TABLE]))

    def published_columns(self) -> list[str] | None:
        """The published release's columns (``None``: none)."""
        published = self.read()
        return None if published is None else [str(column) for column in published[TABLE].columns]

    def read_companions(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        """A folder's companions (its release history); a table keeps none."""
        link = spark_destination.companion_link(self.spec)
        return {} if link is None else reading(self.spec, lambda: read_companions(link, names))

    def write_companions(self, companions: Mapping[str, pd.DataFrame]) -> None:
        """Swap a folder's companions alone (adopting a release); refused for a table."""
        link = spark_destination.companion_link(self.spec)
        if link is None:
            raise PublishError(f"{self.spec.describe()}: a Spark table keeps no release history")
        with publishing(self.spec, what="the release history"):
            link.parent.mkdir(parents=True, exist_ok=True)
            swap_companions(link, companions)

    def published_sha256(self) -> str | None:
        """A folder: the marker of its current version ("" when none), the history's anchor; a table: ``None``."""
        if spark_destination.companion_link(self.spec) is None:
            return None
        return reading(self.spec, lambda: spark_destination.published_marker(self.spec))


def release_anchor(staged: Staged, measured: StagedMeasure) -> str:
    """What a history entry names its rows by: the working file's SHA-256, else the staged rows' digest.

    Equal to ``composition_gate.history_companions``'s ``candidate.sha256 or measured.digest``.
    """
    return staged.digests.get(TABLE, "") or measured.digest
