"""The gate against direct identifiers published unchanged, even when the spec gave them a role.

The load step runs the detector (:func:`~privacy_plugins.core.identifiers.detect_identifiers`)
over the columns a release would publish as they are — ``insensitive`` ones — and over the
quasi-identifiers (a full-domain search may leave a QI at level 0). For a database, Spark or
large-file source it reads one bounded sample of rows from the engine (``SAMPLE_ROWS``),
never the table. Findings carry the category and counts, never a value.

- An ``insensitive`` column flagged is refused at load: exit 2 naming the column and category.
- A flagged quasi-identifier is recorded; the check step fails ``no_direct_identifiers`` when the
  candidate left it at level 0 (published unchanged).

Either is accepted when the spec names the column in ``acknowledged_identifiers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from privacy_plugins.core.identifiers import detect_identifiers
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.artifacts import Candidate, RequirementCheck
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["SAMPLE_ROWS", "flag_identifiers", "identifier_check", "sample_from_engine"]

#: Rows read from an engine source for detection (the detector samples distinct values among them).
SAMPLE_ROWS = 20_000


def sample_from_engine(source: EngineTable, columns: Sequence[str]) -> pd.DataFrame:
    """The first ``SAMPLE_ROWS`` rows of ``columns`` as the engine streams them (the rest is never fetched)."""
    batches = source.batches(SAMPLE_ROWS)
    try:
        first = next(batches, None)
    finally:
        batches.close()  # type: ignore[attr-defined]  # a generator: ends the server-side cursor
    return pd.DataFrame(columns=list(columns)) if first is None else first[list(columns)]


def flag_identifiers(spec: ReleaseSpec, frame: pd.DataFrame, roles: Mapping[str, str]) -> list[dict[str, Any]]:
    """Detect identifiers among the insensitive columns and QIs of ``frame``; refuse an unacknowledged insensitive one.

    Returns:
        One finding (``IdentifierFinding.to_dict()`` plus the column's ``role``) per flagged column.

    Raises:
        ConfigurationError: an insensitive column is flagged and not in ``acknowledged_identifiers``.
    """
    checked = [c for c in frame.columns if roles.get(str(c)) in ("insensitive", "quasi_identifier")]
    findings = [f.to_dict() | {"role": roles[str(f.column)]} for f in detect_identifiers(frame, columns=checked)]
    refused = [
        f for f in findings if f["role"] == "insensitive" and f["column"] not in spec.acknowledged_identifiers
    ]
    if refused:
        named = ", ".join(f"{f['column']!r} ({f['category']}, evidence: {'+'.join(f['evidence'])})" for f in refused)
        raise ConfigurationError(
            f"insensitive column(s) {named} look like direct identifiers and would be published unchanged; make them "
            "identifiers:, pseudonymize them, or acknowledge them by name in acknowledged_identifiers:"
        )
    return findings


def identifier_check(spec: ReleaseSpec, candidate: Candidate) -> RequirementCheck:
    """Fails when a flagged, unacknowledged QI was left at level 0 (published unchanged) by the candidate."""
    unchanged = [
        f"{f['column']} ({f['category']})"
        for f in candidate.flagged_identifiers
        if f.get("role") == "quasi_identifier"
        and f["column"] not in spec.acknowledged_identifiers
        and candidate.levels.get(f["column"]) == 0
    ]
    return RequirementCheck(
        "no direct identifiers",
        not unchanged,
        None,
        None,
        f"flagged direct identifiers published unchanged (level 0): {', '.join(unchanged)}; generalize them or "
        "acknowledge them in acknowledged_identifiers"
        if unchanged
        else "no flagged direct identifier published unchanged",
        name="no_direct_identifiers",
    )
