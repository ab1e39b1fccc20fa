"""Companion tables (the release history) kept as Parquet files behind a versioned link beside a release.

Used where the release itself is files swapped by a link or a rename (a Parquet file, a Spark
folder): ``<release>.companions`` is a symbolic link to a version folder holding one
``<name>.parquet`` per companion, swapped by one ``os.replace`` just *before* the release's own
swap. A kill between the two swaps leaves the new history beside the old release; the history's
last entry then names rows that are not the published ones and a reader drops it
(``history_store.history_from_tables``), so readers see old + old or new + new.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from privacy_plugins.errors import PublishError
from privacy_plugins.release.versions import new_version, remove_dead, swap_link, writing

__all__ = ["read_companions", "swap_companions"]


def swap_companions(link: Path, companions: Mapping[str, pd.DataFrame]) -> None:
    """Write the companions into a fresh version folder and swap ``link`` to it."""
    if link.exists() and not link.is_symlink():
        raise PublishError(f"{link} exists and is not a link of privacy-plugins; nothing was published")
    remove_dead(link, [f"{name}.parquet" for name in companions])
    with writing(new_version(link)) as version:
        for name, frame in companions.items():
            frame.to_parquet(version / f"{name}.parquet", index=False)
        swap_link(link, version)


def read_companions(link: Path, names: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The companions of ``names`` behind ``link`` (its current version, resolved once); ``{}`` without a link."""
    if not link.is_symlink():
        return {}
    version = link.resolve()  # once: every companion from the same version
    files = {name: version / f"{name}.parquet" for name in names}
    return {name: pd.read_parquet(path) for name, path in files.items() if path.is_file()}
