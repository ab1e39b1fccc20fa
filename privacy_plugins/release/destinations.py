"""Atomic publishing of an in-memory table: the destination holds the old release or the new one, never a partial one.

The work is the destination classes' (:mod:`privacy_plugins.release.destination`: one per
kind, each with one swap); this module keeps the one-call entry points of the in-memory
flow and the library API, and the atomic file helpers other modules use.

* DuckDB, SQLite, PostgreSQL (transactional DDL): the new table is written under an
  incoming name ``<table>__incoming_<8 hex>`` inside one transaction, its row count
  verified, then swapped in (drop + rename) before the commit. A failure or a crash at
  any point rolls back: the previous table stays exactly as it was, and no incoming table
  was ever committed — so a visible table with such a name is never ours and is never
  dropped (it may be the user's own). Other dialects (MySQL, Oracle, ...) commit DDL at
  once; a killed publish there can leave its incoming table, which is left alone too.
* Parquet: ``<folder>/<table>.parquet`` is written to a temporary file in the same folder,
  its row count read back from the file's metadata, then renamed over the old file (an
  atomic rename on POSIX). Temporary files ``.<table>.parquet.<8 chars>.tmp`` of killed
  writers are removed before publishing (:mod:`.destination.files` says how a live
  writer's file is told apart).
* Spark (a catalog table or a local Parquet folder): staged, counted, then swapped;
  :mod:`privacy_plugins.release.spark_destination` says what atomicity each gives.
"""

from __future__ import annotations

import pandas as pd

from privacy_plugins.errors import DestinationError, PublishError
from privacy_plugins.release.destination import TABLE, open_destination
from privacy_plugins.release.destination.base import publishing
from privacy_plugins.release.destination.files import (
    STALE_TEMPORARY_SECONDS,
    STALE_TEMPORARY_UNLOCKED_SECONDS,
    atomic_file,
    remove_stale_temporaries,
)
from privacy_plugins.release.spec import DestinationSpec

__all__ = [
    "STALE_TEMPORARY_SECONDS",
    "STALE_TEMPORARY_UNLOCKED_SECONDS",
    "DestinationError",
    "PublishError",
    "atomic_file",
    "publish_table",
    "publishing",
    "read_published",
    "remove_stale_temporaries",
]


def publish_table(frame: pd.DataFrame, destination: DestinationSpec) -> int:
    """Atomically replace the destination table with ``frame``; returns the rows published.

    Raises:
        PublishError: the destination could not be written (a one-line message;
            the I/O error is chained); the destination was left as it was.
    """
    return open_destination(destination).replace({TABLE: frame})[TABLE]


def read_published(destination: DestinationSpec) -> pd.DataFrame | None:
    """The table currently published at ``destination`` (``None`` when there is none yet).

    Raises:
        DestinationError: the destination exists but is not what the spec says
            (not a DuckDB database, a folder that is a file, not Parquet, ...) or cannot be read.
    """
    published = open_destination(destination).read()
    return None if published is None else published[TABLE]
