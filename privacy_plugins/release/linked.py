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

from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from privacy_plugins.core.anonymize import linked_classes
from privacy_plugins.core.anonymize.anatomy import GROUP_COLUMN
from privacy_plugins.errors import VerificationError
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.destinations import read_published
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

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


def _check(frames: Mapping[str, pd.DataFrame]) -> None:
    if set(frames) != set(LINKED_PARTS):
        raise ValueError(f"a linked release has exactly the parts {list(LINKED_PARTS)}, got {sorted(frames)}")


def publish_linked(frames: Mapping[str, pd.DataFrame], destination: DestinationSpec) -> dict[str, int]:
    """Atomically replace the destination's QIT and ST with ``frames`` (``{"qit": …, "st": …}``); rows per part.

    Raises:
        PublishError: the destination could not be written; it was left as it was (both parts).
    """
    _check(frames)
    return open_destination(destination).replace(frames)


def read_linked(destination: DestinationSpec) -> dict[str, pd.DataFrame] | None:
    """The published QIT and ST (``None`` when no pair is published yet), both from one version."""
    return open_destination(destination).read(LINKED_PARTS)


def read_release(spec: ReleaseSpec) -> pd.DataFrame | None:
    """What ``spec`` has published, as the checks measure it (``None`` when nothing is published).

    A one-table release is the table itself. A two-table release (Anatomy) is read as a
    pair from one version and measured by its groups — each QI replaced by the group id,
    so k is the group size and l the group's values — after checking that every QIT row
    joins exactly one group; the monitoring jobs and ``privacy-plugins published`` use it.

    Raises:
        VerificationError: the published pair does not join, or a part holds an identifier column.
    """
    table = read_published(spec.destination)
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
