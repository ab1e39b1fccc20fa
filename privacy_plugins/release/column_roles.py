"""Every source column has a role: the release refuses a column its spec does not name.

A weekly release of a table that gained an ``email`` column must not publish the
addresses because nobody listed the new column. :func:`account_for_columns` runs on the
source's column list (from the engine for a database, Spark or large file: no row read)
before any other work, and either refuses the unlisted columns (exit 2, naming them and the
fix) or, with ``unlisted_columns: drop``, drops them and reports them by name.

Roles: ``identifier`` (dropped), ``pseudonym`` (replaced by keyed tokens),
``quasi_identifier``, ``sensitive``, ``model`` (a column a listed model reads, e.g. a
bound column), ``insensitive`` (published unchanged), ``date_shifted`` (each person's dates
moved by a secret per-person shift, ``pseudonymize.shift_dates``), ``unlisted_dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from privacy_plugins.core.pseudonyms import PseudonymKey
from privacy_plugins.errors import ConfigurationError, UnknownColumnError
from privacy_plugins.release.pseudonym_keys import pseudonymized
from privacy_plugins.release.spec import ReleaseSpec

__all__ = [
    "UNLISTED_CHOICES",
    "account_for_columns",
    "column_summary",
    "dropped_columns",
    "listed_roles",
    "pseudonym_key",
    "published_columns",
    "schema_roles",
]

UNLISTED_CHOICES = ("refuse", "drop")


def listed_roles(spec: ReleaseSpec) -> dict[str, str]:
    """The role of every column the spec names (column → role)."""
    roles: dict[str, str] = {}
    model_columns = [str(c) for m in spec.requirements.listed for c in m.columns]
    if spec.requirements.bound_column is not None:
        model_columns.append(spec.requirements.bound_column)
    pseudonyms = spec.pseudonymize.columns if spec.pseudonymize is not None else ()
    shift = spec.pseudonymize.shift_dates if spec.pseudonymize is not None else None
    weights = [spec.population.weights] if spec.population is not None and spec.population.weights else []
    for role, columns in (
        ("date_shifted", shift.columns if shift is not None else ()),
        ("model", model_columns),
        ("insensitive", [*spec.insensitive, *weights]),  # population weights: published unchanged
        ("pseudonym", pseudonyms),
        ("identifier", spec.identifiers),
        ("sensitive", spec.sensitive_attributes),
        ("quasi_identifier", spec.quasi_identifiers),
    ):
        roles.update(dict.fromkeys(map(str, columns), role))  # later roles win: a model's own column stays sensitive
    return roles


def account_for_columns(spec: ReleaseSpec, columns: Sequence[str]) -> dict[str, str]:
    """The role of every source column, in source order; refuse unlisted ones unless ``unlisted_columns: drop``.

    Raises:
        ConfigurationError: a source column has no role (``unlisted_columns: refuse``, the default).
    """
    listed = listed_roles(spec)
    present = {str(c) for c in columns}
    shift = spec.pseudonymize.shift_dates if spec.pseudonymize else None
    for setting, keyed in (
        ("pseudonymize.columns", spec.pseudonymize.columns if spec.pseudonymize else ()),
        ("pseudonymize.shift_dates.columns", shift.columns if shift else ()),
    ):
        missing = [c for c in keyed if c not in present]
        if missing:
            raise UnknownColumnError(f"{setting} not found in table: {missing!r}; available: {sorted(present)!r}")
    weights = spec.population.weights if spec.population is not None else None
    if weights is not None and weights not in present:
        raise UnknownColumnError(f"population.weights {weights!r} not found in table; available: {sorted(present)!r}")
    unlisted = [str(c) for c in columns if str(c) not in listed]
    if unlisted and spec.unlisted_columns != "drop":
        raise ConfigurationError(
            f"source column(s) {unlisted} have no role in release spec {spec.name!r}; every column needs one "
            "(unlisted columns used to be published unchanged): add them to insensitive: (published unchanged), "
            "identifiers: (dropped), pseudonymize.columns, quasi_identifiers or sensitive_attributes, or set "
            "unlisted_columns: drop"
        )
    return {str(c): listed.get(str(c), "unlisted_dropped") for c in columns}


def dropped_columns(roles: dict[str, str]) -> list[str]:
    """The columns that never reach a working file or the release: identifiers and dropped unlisted columns."""
    return [column for column, role in roles.items() if role in ("identifier", "unlisted_dropped")]


def pseudonym_key(spec: ReleaseSpec) -> PseudonymKey | None:
    """The release's pseudonym key, resolved before any row is read (``None`` without ``pseudonymize:``)."""
    return spec.pseudonymize.key() if spec.pseudonymize is not None else None


def schema_roles(spec: ReleaseSpec) -> dict[str, str] | None:
    """For a database or Spark source: every column's role from the engine's column list, no row read.

    ``None`` for a file or generated source, whose columns are accounted for right after it is read
    (before anything is written).
    """
    if spec.source.path is not None or spec.source.generate is not None:
        return None
    from privacy_plugins.release.source_table import opened_source

    with opened_source(spec) as source:
        return account_for_columns(spec, source.columns())


def published_columns(spec: ReleaseSpec, frame: pd.DataFrame, key: PseudonymKey | None) -> pd.DataFrame:
    """``frame`` with identifiers and dropped unlisted columns removed and pseudonym columns tokenized."""
    roles = account_for_columns(spec, [str(c) for c in frame.columns])
    table = frame.drop(columns=dropped_columns(roles))
    if spec.pseudonymize is not None and key is not None:
        table = pseudonymized(table, spec.pseudonymize, key)
    return table


def column_summary(
    spec: ReleaseSpec, roles: Mapping[str, str], flagged: Sequence[Mapping[str, Any]], levels: Mapping[str, int]
) -> dict[str, Any]:
    """For the release summary: every column's role, what was dropped, pseudonymized, published unchanged, flagged.

    Names, roles, categories and counts only (never a value or the key). ``levels``: the
    candidate's generalization level per QI (a flagged QI at level 0 was published unchanged).
    """
    by_role: dict[str, list[str]] = {}
    for column, role in roles.items():
        by_role.setdefault(role, []).append(column)
    pseudonyms = spec.pseudonymize.describe() if spec.pseudonymize is not None else None
    acknowledged = set(spec.acknowledged_identifiers)
    return {
        "roles": dict(roles),
        "dropped": {"identifiers": by_role.get("identifier", []), "unlisted": by_role.get("unlisted_dropped", [])},
        "pseudonymized": pseudonyms,
        "published_unchanged": by_role.get("insensitive", []),
        "date_shifted": by_role.get("date_shifted", []),
        "flagged_identifiers": [
            {
                **dict(finding),
                "acknowledged": finding["column"] in acknowledged,
                "published_unchanged": finding.get("role") == "insensitive" or levels.get(finding["column"]) == 0,
            }
            for finding in flagged
        ],
        "unlisted_columns": spec.unlisted_columns,
    }
