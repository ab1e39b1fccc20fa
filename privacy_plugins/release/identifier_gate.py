"""The gate against direct identifiers published unchanged, even when the spec gave them a role.

The load step runs the detector (:func:`~privacy_plugins.core.identifiers.detect_identifiers`)
over the columns a release would publish as they are — ``insensitive`` ones — and over the
quasi-identifiers (a full-domain search may leave a QI at level 0). For a database or large-file
source the database draws the sample: per column a random ``SAMPLE_DISTINCT`` of its distinct
values, with its distinct and row counts (no row is fetched). Findings carry the category and
counts, never a value.

- An ``insensitive`` column flagged is refused at load: exit 2 naming the column and category.
- A flagged quasi-identifier is recorded; the check step fails ``no_direct_identifiers`` when the
  candidate left it at level 0 (published unchanged).

Either is accepted when the spec names the column in ``acknowledged_identifiers``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privacy_plugins.core.identifiers import detect_identifiers
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.identifier_sample import sample_distinct_spark, sample_distinct_sql
from privacy_plugins.engines.pandas_engine import PandasTable
from privacy_plugins.engines.spark import SparkTable
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.artifacts import Candidate, RequirementCheck
from privacy_plugins.release.progress import LOGGER
from privacy_plugins.release.spec import ReleaseSpec

__all__ = [
    "SAMPLE_DISTINCT",
    "flag_identifiers",
    "flag_in_engine",
    "identifier_check",
    "sample_from_engine",
]

#: Distinct values per column a database draws at random for detection (the detector's own sample size).
SAMPLE_DISTINCT = 5_000


@dataclass(frozen=True)
class EngineSample:
    """Per column: a random sample of its distinct values drawn in the engine, and its whole-table totals."""

    drawn: dict[str, pd.Series]
    totals: dict[Hashable, tuple[int, int]]


def sample_from_engine(source: EngineTable, columns: Sequence[str]) -> EngineSample:
    """Per column, a random sample of its distinct values and its totals, drawn and counted by the engine.

    At most ``SAMPLE_DISTINCT`` values per column and its (distinct, non-null rows); no row is
    fetched (:mod:`privacy_plugins.engines.identifier_sample`).
    """
    if isinstance(source, PandasTable):  # in memory already
        return EngineSample({c: source.frame[c] for c in columns}, {})
    if isinstance(source, SparkTable):
        spark = sample_distinct_spark(source.frame, columns, SAMPLE_DISTINCT)
        return EngineSample(spark.drawn, spark.totals)
    if not isinstance(source, SqlTable):
        LOGGER.warning("identifier detection skipped: not available for %s sources yet", source.engine_name)
        return EngineSample({}, {})
    with source.transaction() as connection:
        sql = sample_distinct_sql(connection, source.selectable, columns, SAMPLE_DISTINCT)
    return EngineSample(sql.drawn, sql.totals)


def flag_in_engine(spec: ReleaseSpec, source: EngineTable, roles: Mapping[str, str]) -> list[dict[str, Any]]:
    """:func:`flag_identifiers` for a source in an engine, on its engine-drawn sample (see above)."""
    checked = [c for c, role in roles.items() if role in ("insensitive", "quasi_identifier")]
    if not checked:
        return []
    sample = sample_from_engine(source, checked)
    findings: list[dict[str, Any]] = []
    for column, values in sample.drawn.items():
        findings += flag_identifiers(spec, values.to_frame(column), roles, totals=sample.totals)
    return findings


def flag_identifiers(
    spec: ReleaseSpec,
    frame: pd.DataFrame,
    roles: Mapping[str, str],
    *,
    totals: Mapping[Hashable, tuple[int, int]] | None = None,
) -> list[dict[str, Any]]:
    """Detect identifiers among the insensitive columns and QIs of ``frame``; refuse an unacknowledged insensitive one.

    Returns:
        One finding (``IdentifierFinding.to_dict()`` plus the column's ``role``) per flagged column.

    Raises:
        ConfigurationError: an insensitive column is flagged and not in ``acknowledged_identifiers``.
    """
    checked = [c for c in frame.columns if roles.get(str(c)) in ("insensitive", "quasi_identifier")]
    found = detect_identifiers(frame, columns=checked, totals=totals)
    findings = [f.to_dict() | {"role": roles[str(f.column)]} for f in found]
    refused = [f for f in findings if f["role"] == "insensitive" and f["column"] not in spec.acknowledged_identifiers]
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
