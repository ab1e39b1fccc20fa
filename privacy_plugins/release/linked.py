"""Atomic publishing of two linked tables (Anatomy's QIT and ST): readers see the old pair or the new pair.

The destination layer for two-table releases, called by the release flow's publish step
when the candidate carries a sensitive table (see :mod:`privacy_plugins.core.anonymize.anatomy`).

* DuckDB and SQL URLs: both tables are written under incoming names, their row counts
  verified, then both swapped in (drop + rename) **in one transaction**; a failure or a
  crash anywhere rolls both back.
* Parquet: the pair lives in a version folder ``.<table>.<8 hex>/`` holding
  ``<table>_qit.parquet`` and ``<table>_st.parquet``; ``<folder>/<table>`` is a symbolic
  link to the current version (:mod:`.versions`). A new pair is written and verified in a
  fresh version folder, then a new link is renamed over the old one (one atomic rename on
  POSIX), and the old version folder is removed. A reader resolves the link once and reads
  both files from the same version. The folders and staged links killed writers left are
  removed by the next release to the same destination (:func:`.versions.remove_dead`).

Table names: ``<table>_qit`` and ``<table>_st`` (``destination.table`` is the stem).
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.anonymize import linked_classes
from privacy_plugins.core.anonymize.anatomy import GROUP_COLUMN
from privacy_plugins.errors import PublishError, VerificationError
from privacy_plugins.release import destinations
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec
from privacy_plugins.release.versions import new_version, remove_dead, swap_link, writing

__all__ = ["LINKED_PARTS", "joined_view", "publish_linked", "read_linked", "read_release"]

#: The two parts of a linked release, by suffix.
LINKED_PARTS = ("qit", "st")


def joined_view(st: pd.DataFrame, group_column: str, quasi_identifiers: Sequence[Hashable]) -> pd.DataFrame:
    """What an attacker can link a QIT row to: one row per record of the ST, every QI replaced by its group id.

    Measuring this frame (k, l, t …) measures the groups of a two-table release.
    """
    view = st.loc[st.index.repeat(st["count"])].drop(columns=["count"]).reset_index(drop=True)
    for q in quasi_identifiers:
        view[q] = view[group_column]
    return view


def _names(table: str) -> dict[str, str]:
    return {part: f"{table}_{part}" for part in LINKED_PARTS}


def _check(frames: Mapping[str, pd.DataFrame]) -> None:
    if set(frames) != set(LINKED_PARTS):
        raise ValueError(f"a linked release has exactly the parts {list(LINKED_PARTS)}, got {sorted(frames)}")


def _publish_duckdb(frames: Mapping[str, pd.DataFrame], path: Path, table: str) -> None:
    with destinations._duckdb_transaction(path) as connection:
        incoming = {}
        for part, name in _names(table).items():
            incoming[part] = f"{name}__incoming_{uuid.uuid4().hex[:8]}"
            connection.register("release_frame", frames[part])
            connection.execute(f'CREATE TABLE "{incoming[part]}" AS SELECT * FROM release_frame')
            connection.unregister("release_frame")
            rows = connection.execute(f'SELECT COUNT(*) FROM "{incoming[part]}"').fetchall()  # all: frees the result
            destinations._verify(len(frames[part]), int(rows[0][0]) if rows else -1, f"{path}#{incoming[part]}")
        destinations._swap_hook()
        for part, name in _names(table).items():
            connection.execute(f'DROP TABLE IF EXISTS "{name}"')
            connection.execute(f'ALTER TABLE "{incoming[part]}" RENAME TO "{name}"')


def _publish_sql(frames: Mapping[str, pd.DataFrame], url: str, table: str) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    if engine.dialect.name == "sqlite" and engine.dialect.driver == "pysqlite":
        destinations._transactional_sqlite_ddl(engine)
    try:
        with engine.begin() as connection:
            incoming = {}
            for part, name in _names(table).items():
                incoming[part] = f"{name}__incoming_{uuid.uuid4().hex[:8]}"
                frames[part].to_sql(incoming[part], connection, index=False)
                count = connection.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{incoming[part]}"')).scalar_one()
                destinations._verify(len(frames[part]), int(count), f"{url}#{incoming[part]}")
            destinations._swap_hook()
            for part, name in _names(table).items():
                connection.execute(sqlalchemy.text(f'DROP TABLE IF EXISTS "{name}"'))
                connection.execute(sqlalchemy.text(f'ALTER TABLE "{incoming[part]}" RENAME TO "{name}"'))
    finally:
        engine.dispose()


def _publish_parquet(frames: Mapping[str, pd.DataFrame], folder: Path, table: str) -> None:
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    link = folder / table
    if link.exists() and not link.is_symlink():
        raise PublishError(f"{link} exists and is not the link of a linked release; nothing was published")
    remove_dead(link, [f"{name}.parquet" for name in _names(table).values()])
    with writing(new_version(link)) as version:
        for part, name in _names(table).items():
            path = version / f"{name}.parquet"
            frames[part].to_parquet(path, index=False)
            destinations._verify(len(frames[part]), pq.ParquetFile(path).metadata.num_rows, str(path))
        destinations._swap_hook()
        swap_link(link, version)


def publish_linked(frames: Mapping[str, pd.DataFrame], destination: DestinationSpec) -> dict[str, int]:
    """Atomically replace the destination's QIT and ST with ``frames`` (``{"qit": …, "st": …}``); rows per part.

    Raises:
        PublishError: the destination could not be written; it was left as it was (both parts).
    """
    _check(frames)
    destinations._publish_to(
        destination,
        duckdb=lambda path: _publish_duckdb(frames, path, destination.table),
        parquet=lambda folder: _publish_parquet(frames, folder, destination.table),
        sql=lambda: _publish_sql(frames, destination.sql_url(), destination.table),
        what="the linked pair",
    )
    return {part: len(frames[part]) for part in LINKED_PARTS}


def read_linked(destination: DestinationSpec) -> dict[str, pd.DataFrame] | None:
    """The published QIT and ST (``None`` when no pair is published yet)."""
    return destinations._read_from(destination, _read)


def _read(destination: DestinationSpec) -> dict[str, pd.DataFrame] | None:
    names = _names(destination.table)
    if destination.parquet is not None:
        link = destination.parquet / destination.table
        if not link.is_symlink():
            return None
        version = link.resolve()  # once: both parts from the same version
        return {part: pd.read_parquet(version / f"{name}.parquet") for part, name in names.items()}
    out: dict[str, Any] = {}
    for part, name in names.items():
        single = DestinationSpec(
            table=name, duckdb=destination.duckdb, url=destination.url, conn_id=destination.conn_id
        )
        out[part] = destinations.read_published(single)
    if any(frame is None for frame in out.values()):
        return None
    return out


def read_release(spec: ReleaseSpec) -> pd.DataFrame | None:
    """What ``spec`` has published, as the checks measure it (``None`` when nothing is published).

    A one-table release is the table itself. A two-table release (Anatomy) is read as a
    pair from one version and measured by its groups — each QI replaced by the group id,
    so k is the group size and l the group's values — after checking that every QIT row
    joins exactly one group; the monitoring jobs and ``privacy-plugins published`` use it.

    Raises:
        VerificationError: the published pair does not join, or a part holds an identifier column.
    """
    table = destinations.read_published(spec.destination)
    if table is not None:
        return table
    pair = read_linked(spec.destination)
    if pair is None:
        return None
    leaked = [c for c in spec.identifiers if c in pair["qit"].columns or c in pair["st"].columns]
    if leaked:
        raise VerificationError(f"identifier column(s) {leaked} published in {spec.destination.describe()}")
    linked_classes(pair["qit"], pair["st"], GROUP_COLUMN, spec.quasi_identifiers, spec.sensitive_attributes)
    return joined_view(pair["st"], GROUP_COLUMN, spec.quasi_identifiers)
