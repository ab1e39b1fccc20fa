"""A Parquet folder destination: ``<folder>/<table>.parquet``, or a linked pair behind a version link.

* One table: written to a temporary file beside the target (:func:`~.files.atomic_file`),
  its row count read back from the file's metadata, re-measured, then renamed over the
  old file (one atomic rename on POSIX).
* Two tables (Anatomy's QIT and ST): a version folder ``.<table>.<8 hex>/`` holding
  ``<table>_qit.parquet`` and ``<table>_st.parquet``; ``<folder>/<table>`` is a symbolic
  link to the current version (:mod:`..versions`); the new pair is written and verified
  in a fresh version folder, then the link is replaced by one rename.
* Staged rows: the run's Parquet working file (:mod:`.working_file`) — written by
  ``COPY (SELECT …) TO`` when DuckDB runs the source, else in batches. The swap copies it
  beside the target, checks the copy's SHA-256 against the staged one, re-measures the
  copy and renames it in.

Leftovers of killed writers (temporary files, version folders, staged links) are removed
by the next publish to the same target when provably dead (:mod:`.files`, :mod:`..versions`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from privacy_plugins.errors import DestinationError, ForeignArtifactError, PublishError, ReleaseBlocked
from privacy_plugins.release import locations
from privacy_plugins.release.destination import base, working_file
from privacy_plugins.release.destination.base import (
    LINKED_PARTS,
    TABLE,
    Accept,
    Companions,
    SqlLocation,
    Staged,
    StageRun,
    publishing,
    reading,
    verify,
)
from privacy_plugins.release.destination.companion_link import read_companions, swap_companions
from privacy_plugins.release.destination.files import atomic_file, remove_stale_temporaries
from privacy_plugins.release.spec import DestinationSpec
from privacy_plugins.release.versions import new_version, remove_dead, swap_link, writing

if TYPE_CHECKING:
    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = ["ParquetDestination"]

Write = Callable[[Path], None]


class ParquetDestination:
    """``destination: {parquet: FOLDER, table: NAME}``."""

    def __init__(self, spec: DestinationSpec) -> None:
        self.spec = spec

    @property
    def folder(self) -> Path:
        """The destination folder."""
        assert self.spec.parquet is not None
        return self.spec.parquet

    def _file(self, part: str) -> str:
        return f"{self.spec.table}.parquet" if part == TABLE else f"{self.spec.table}_{part}.parquet"

    # -- the one swap -------------------------------------------------------------------------------------------

    @contextmanager
    def _target(self, parts: Sequence[str]) -> Iterator[tuple[Path, Callable[[], None]]]:
        """Where the new part files are written and the swap that makes them current (one table or a pair)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if list(parts) == [TABLE]:
            target = self.folder / self._file(TABLE)
            remove_stale_temporaries(target)
            with atomic_file(target) as temporary:  # renamed over the target when the block succeeds
                yield temporary, lambda: None
            return
        link = self.folder / self.spec.table
        if link.exists() and not link.is_symlink():
            raise PublishError(f"{link} exists and is not the link of a linked release; nothing was published")
        remove_dead(link, _PairVersionFiles(self._file(part) for part in parts))
        with writing(new_version(link)) as version:
            yield version, lambda: swap_link(link, version)

    def _publish(
        self,
        writers: Mapping[str, Write],
        rows: Mapping[str, int],
        measure: Callable[[Mapping[str, Path]], Companions | None] = lambda _: None,
    ) -> None:
        """Write each part, verify its count, ``measure`` the written files, the hook, then swap them in together.

        The companions ``measure`` returns go behind their own link beside a single file, swapped just before the
        file is renamed in (``history_store`` says how a reader reconciles the two); a linked pair's go into the
        pair's version folder, so the one link swap publishes the pair and its history together.
        """
        import pyarrow.parquet as pq

        with self._target(list(writers)) as (where, swap):
            paths = {part: where if part == TABLE else where / self._file(part) for part in writers}
            for part, write in writers.items():
                write(paths[part])
                verify(rows[part], pq.ParquetFile(paths[part]).metadata.num_rows, str(paths[part]))
            companions = measure(paths) or {}
            if companions and list(writers) == [TABLE]:
                swap_companions(self._companion_link, companions)
            for name, frame in companions.items() if list(writers) != [TABLE] else ():
                frame.to_parquet(where / f"{name}.parquet", index=False)  # a pair's: in its version, one link swap
            base.before_swap()
            swap()

    @property
    def _companion_link(self) -> Path:
        return self.folder / f"{self.spec.table}.companions"

    def write_companions(self, companions: Companions) -> None:
        """Swap the companions' link to a new version holding them (a linked pair: a new version of the pair)."""
        pair = self.folder / self.spec.table
        with publishing(self.spec, what="the release history"):
            self.folder.mkdir(parents=True, exist_ok=True)
            if not pair.is_symlink():
                swap_companions(self._companion_link, companions)
                return
            current = pair.resolve()
            with writing(new_version(pair)) as version:
                for part in LINKED_PARTS:
                    shutil.copyfile(current / self._file(part), version / self._file(part))
                for name, frame in companions.items():
                    frame.to_parquet(version / f"{name}.parquet", index=False)
                swap_link(pair, version)

    def read_companions(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        """The companions beside the published file (their current version), or in a linked pair's version."""
        pair = self.folder / self.spec.table
        link = pair if pair.is_symlink() else self._companion_link
        return reading(self.spec, lambda: read_companions(link, names))

    def published_sha256(self) -> str | None:
        """The single published file's SHA-256 ("" when none): its companions are swapped just before it."""
        path = self.folder / self._file(TABLE)
        if not path.is_file() or path.is_symlink():
            return ""
        return working_file.file_sha256(path)

    def replace(self, frames: Mapping[str, pd.DataFrame]) -> dict[str, int]:
        """Write the frames and swap them in (one file, or a pair behind the version link)."""
        rows = {part: len(frame) for part, frame in frames.items()}
        writers = {part: _writer(frame) for part, frame in frames.items()}
        with publishing(self.spec, what="" if set(frames) == {TABLE} else "the linked pair"):
            self._publish(writers, rows)
        return rows

    # -- staged rows --------------------------------------------------------------------------------------------

    def stage(self, parts: Mapping[str, EngineTable], run: StageRun) -> Staged:
        """The run's working file(s) (``COPY … TO`` by DuckDB when it runs the table)."""
        return working_file.stage_files(parts, run)

    def accept_staged(self, staged: Staged, run: StageRun) -> None:
        """Only the run's unchanged working file."""
        if staged.kind != "file":
            raise ForeignArtifactError(
                f"the candidate names staging table {staged.name!r}, but {self.spec.describe()} stages no table; "
                "refusing it"
            )
        working_file.accept_files(staged, run)

    def measure(self, staged: Staged, run: StageRun) -> StagedMeasure:
        """The working file(s) measured (one table by DuckDB)."""
        return working_file.measure_staged(staged, run)

    def swap(self, staged: Staged, run: StageRun, accept: Accept) -> StagedMeasure:
        """Copy the working file(s) beside the target, check their bytes, re-measure the copies, swap them in."""
        sources = working_file.accept_files(staged, run)
        measured: list[StagedMeasure] = []

        def copier(part: str) -> Write:
            def copy(temporary: Path) -> None:
                shutil.copyfile(sources[part], temporary)
                if working_file.file_sha256(temporary) != staged.digests[part]:
                    raise ReleaseBlocked("the candidate changed after it was checked; nothing was published")

            return copy

        def remeasure(paths: Mapping[str, Path]) -> Companions | None:
            measured.append(working_file.measure_files(run.spec, paths))
            return accept(measured[-1])

        with publishing(self.spec, what="the linked pair" if staged.linked else ""):
            self._publish({part: copier(part) for part in sources}, staged.rows, remeasure)
        return measured[-1]

    def discard(self, staged: Staged, run: StageRun) -> None:
        """Nothing: the working file goes with the run's folder."""

    def read_staged(self, staged: Staged, run: StageRun, refuse: Callable[[int], None]) -> pd.DataFrame:
        """The working file's rows, counted and refused first."""
        return working_file.read_staged(staged, run, refuse)

    def sql_location(self, staged: Staged, run: StageRun) -> SqlLocation | None:
        """The working file, read by an in-process DuckDB."""
        return working_file.sql_location(staged, run)

    # -- what is published --------------------------------------------------------------------------------------

    def read(self, parts: Sequence[str] = (TABLE,)) -> dict[str, pd.DataFrame] | None:
        """The published file, or the pair read from one version (``None`` when none)."""
        return reading(self.spec, lambda: self._read(parts))

    def _read(self, parts: Sequence[str]) -> dict[str, pd.DataFrame] | None:
        if self.folder.exists() and not self.folder.is_dir():
            raise DestinationError(f"destination.parquet: {self.folder} is a file, not a folder")
        if list(parts) != [TABLE]:
            link = self.folder / self.spec.table
            if not link.is_symlink():
                return None
            version = link.resolve()  # once: every part from the same version
            return {part: pd.read_parquet(version / self._file(part)) for part in parts}
        path = self._published_file()
        return None if path is None else {TABLE: pd.read_parquet(path)}

    def _published_file(self) -> Path | None:
        path = self.folder / self._file(TABLE)
        if not path.exists():
            return None
        if not path.is_file() or not locations.has_magic(path, locations.PARQUET_MAGIC):
            raise DestinationError(f"destination.parquet: {path} exists but is not a Parquet file")
        return path

    def published_columns(self) -> list[str] | None:
        """The published file's columns from its Parquet schema (``None``: no single published file)."""
        import pyarrow.parquet as pq

        path = self.folder / self._file(TABLE)
        if not path.is_file() or path.is_symlink():
            return None
        return reading(self.spec, lambda: [str(name) for name in pq.read_schema(path).names])

    def measure_published(self, spec: ReleaseSpec, staging_table: str) -> StagedMeasure | None:
        """The published file measured by DuckDB (``None`` when there is none)."""
        path = self.folder / self._file(TABLE)
        if not path.is_file() or path.is_symlink():
            return None
        return working_file.measure_file(spec, path)


class _PairVersionFiles(frozenset[str]):
    """What a pair's version folder holds: its two parts and its release history's tables (``pp_history_*``)."""

    def __contains__(self, name: object) -> bool:
        history = isinstance(name, str) and name.startswith("pp_history_") and name.endswith(".parquet")
        return history or super().__contains__(name)


def _writer(frame: pd.DataFrame) -> Write:
    def write(path: Path) -> None:
        frame.to_parquet(path, index=False)

    return write
