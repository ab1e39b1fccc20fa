"""The columns the anonymize step wrote, kept where no artifact can change them; publishing refuses any other.

Publishing re-measures the candidate's rows, but a column the requirements do
not read — a row number added to the candidate file or to a staging table after
the anonymize step — would pass every measure and be published: a key back to
the source's order. So the anonymize step records the columns it staged, per part
(``{"table": names}`` or a two-table release's ``{"qit": …, "st": …}``), in the
``Candidate`` and in ``columns.json`` in the run's private folder, and the publish step
refuses, with nothing published, a candidate whose staged columns, measured inside the
swap, are not exactly those of both records (names and order; a retyped column changes
the measured digest, which publishing compares with the check's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from privacy_plugins.errors import ReleaseBlocked
from privacy_plugins.release.destination.files import atomic_file

if TYPE_CHECKING:
    from privacy_plugins.release.artifacts import Candidate

__all__ = ["COLUMNS_FILE", "record_columns", "refuse_foreign_columns"]

COLUMNS_FILE = "columns.json"


def record_columns(folder: Path, columns: Mapping[str, list[str]]) -> None:
    """Keep the columns the anonymize step wrote in the run's private folder, where no artifact can change them."""
    with atomic_file(folder / COLUMNS_FILE) as temporary:
        temporary.write_text(json.dumps(dict(columns), indent=2) + "\n", encoding="utf-8")


def refuse_foreign_columns(candidate: Candidate, folder: Path, found: Mapping[str, list[str]]) -> None:
    """Refuse a candidate whose columns are not exactly the ones its anonymize step wrote (names and order).

    Both the run's own record and the ``Candidate`` must name exactly ``found``.

    Raises:
        ReleaseBlocked: a column was added, removed, renamed, reordered or retyped since (nothing published).
    """
    record = folder / COLUMNS_FILE
    try:
        recorded = json.loads(record.read_text(encoding="utf-8")) if not record.is_symlink() else None
    except (OSError, ValueError):
        recorded = None
    if not isinstance(recorded, dict):
        raise ReleaseBlocked(
            "nothing was published: the run has no record of the columns its anonymize step wrote; re-run the "
            "release from the anonymize step"
        )
    for table, columns in found.items():
        expected = recorded.get(table)
        if columns != expected or candidate.columns.get(table) != expected:
            wrote = list(expected or [])
            extra, missing = [c for c in columns if c not in wrote], [c for c in wrote if c not in columns]
            how = f"extra: {extra}, missing: {missing}" if extra or missing else f"now {columns}, written {expected}"
            raise ReleaseBlocked(
                f"nothing was published: the candidate's columns are not the ones the anonymize step wrote "
                f"({how}); re-run the release from the anonymize step"
            )
