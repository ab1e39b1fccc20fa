"""A release history as two tables kept with the destination, and how a new release is appended to it.

Layout (the same two tables in every destination that keeps a history):

* ``pp_history_<name>`` — the class signatures of every kept release: ``__release``
  (its sequence number), the quasi-identifier labels and sensitive values as published
  (text), and ``__count`` (:func:`privacy_plugins.core.history.class_signature`);
* ``pp_history_<name>_releases`` — one row per release: sequence number, run id, time,
  spec fingerprint, transformation (JSON), rows, signature rows, the SHA-256 of its signature
  rows (``digest``), a chain digest over every earlier release (``chain``) and, for a
  destination that swaps the history apart from the rows (a single Parquet file), the
  SHA-256 of the published file (``release_sha256``).

DuckDB and SQL destinations write both tables in the transaction that swaps the release
in; a Parquet destination writes them as ``<name>.parquet`` files in a version folder behind
the link ``<table>.companions``, swapped just before the published file is renamed in,
and a reader drops a last entry whose ``release_sha256`` is not the published file's (a
publish killed between the two renames). So a reader sees the old release with the old
history, or the new with the new.

Nothing here is raw: every value in a signature was in a published table. A history
whose rows no longer match their digests was changed outside privacy-plugins: that is an
error, never a silent "no history".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privacy_plugins.core.hierarchies import as_labels
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory
from privacy_plugins.errors import HistoryError

if TYPE_CHECKING:
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = [
    "RELEASE",
    "HistoryTables",
    "appended_tables",
    "history_from_tables",
    "history_tables",
    "signature_of_measure",
]

RELEASE = "__release"
"""The sequence-number column of both history tables."""

_RELEASE_COLUMNS = (
    RELEASE,
    "run_id",
    "published_at",
    "spec_fingerprint",
    "transformation",
    "rows",
    "signature_rows",
    "quasi_identifiers",
    "sensitive_attributes",
    "digest",
    "chain",
    "release_sha256",
)


@dataclass(frozen=True)
class HistoryTables:
    """The names of a history's two tables."""

    classes: str
    releases: str

    @property
    def names(self) -> tuple[str, str]:
        """Both names, classes first."""
        return (self.classes, self.releases)


def history_tables(spec: ReleaseSpec) -> HistoryTables:
    """The tables of the spec's history (``pp_history_<name>`` and ``pp_history_<name>_releases``)."""
    name = spec.history.history_name(spec.name)
    return HistoryTables(f"pp_history_{name}", f"pp_history_{name}_releases")


def signature_of_measure(spec: ReleaseSpec, measured: StagedMeasure) -> pd.DataFrame:
    """The class signature of staged rows from their measured classes (one ``GROUP BY`` already ran).

    A two-table release carries its own (``measured.signature``: its QI tuples, not its groups).
    """
    if measured.signature is not None:
        return measured.signature.copy()
    classes = measured.classes
    columns = [*spec.quasi_identifiers, *spec.sensitive_attributes]
    frame = pd.DataFrame({column: as_labels(classes.frame[column]) for column in columns})
    weights = classes.weights if classes.weights is not None else np.ones(len(frame), dtype=np.int64)
    frame[COUNT] = np.asarray(weights, dtype=np.int64)
    grouped = frame.groupby(columns, dropna=False, sort=True)[COUNT].sum().reset_index()
    grouped[COUNT] = grouped[COUNT].astype("int64")
    return grouped


def _digest(classes: pd.DataFrame) -> str:
    """SHA-256 of a signature's rows in a canonical order and text form."""
    ordered = classes.astype(str).sort_values(list(classes.columns), kind="stable").reset_index(drop=True)
    return hashlib.sha256(ordered.to_csv(index=False).encode("utf-8")).hexdigest()


def _chain(previous: str, row: Mapping[str, Any]) -> str:
    fields = {key: row[key] for key in _RELEASE_COLUMNS if key not in ("chain",)}
    return hashlib.sha256((previous + json.dumps(fields, sort_keys=True, default=str)).encode("utf-8")).hexdigest()


def appended_tables(
    spec: ReleaseSpec,
    history: ReleaseHistory,
    *,
    run_id: str,
    classes: pd.DataFrame,
    transformation: Mapping[str, Any],
    release_sha256: str = "",
    rows: int | None = None,
) -> dict[str, pd.DataFrame]:
    """The history's two tables with this release appended (and only ``keep_releases`` kept).

    ``rows``: the rows published, when the signature's counts do not add up to them (a two-table release).
    """
    release = PublishedRelease(
        run_id=run_id,
        published_at=datetime.now(UTC).isoformat(timespec="seconds"),
        spec_fingerprint=spec.source_fingerprint,
        transformation=dict(transformation),
        classes=classes,
        release_sha256=release_sha256,
        published_rows=rows,
    )
    return _tables(spec, history.appended(release, keep_releases=spec.history.keep_releases))


def _tables(spec: ReleaseSpec, history: ReleaseHistory) -> dict[str, pd.DataFrame]:
    names = history_tables(spec)
    rows: list[dict[str, Any]] = []
    chain = ""
    for release in history.releases:
        row: dict[str, Any] = {
            RELEASE: release.sequence,
            "run_id": release.run_id,
            "published_at": release.published_at,
            "spec_fingerprint": release.spec_fingerprint,
            "transformation": json.dumps(dict(release.transformation), sort_keys=True, default=str),
            "rows": release.rows,
            "signature_rows": len(release.classes),
            "quasi_identifiers": json.dumps([str(c) for c in history.quasi_identifiers]),
            "sensitive_attributes": json.dumps([str(c) for c in history.sensitive_attributes]),
            "digest": _digest(release.classes),
            "release_sha256": release.release_sha256,
        }
        chain = row["chain"] = _chain(chain, row)
        rows.append(row)
    columns = [RELEASE, *map(str, history.quasi_identifiers), *map(str, history.sensitive_attributes), COUNT]
    frames = [release.classes.assign(**{RELEASE: release.sequence}) for release in history.releases]
    classes = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return {names.classes: classes, names.releases: pd.DataFrame(rows, columns=list(_RELEASE_COLUMNS))}


def history_from_tables(
    spec: ReleaseSpec, tables: Mapping[str, pd.DataFrame] | None, *, published_sha256: str | None = None
) -> ReleaseHistory:
    """The spec's history read from its two tables (empty when there are none), verified against its digests.

    ``published_sha256``: the published file's SHA-256 where the history is swapped apart from the rows
    (a single Parquet file): a last entry for another file is a publish killed between the renames, dropped.

    Raises:
        HistoryError: one table without the other, rows that do not match their digests or chain,
            or a history of other quasi-identifiers or sensitive attributes than the spec's.
    """
    names = history_tables(spec)
    empty = ReleaseHistory(names.classes, tuple(spec.quasi_identifiers), tuple(spec.sensitive_attributes))
    if tables is None:
        return empty
    where = f"release history {spec.history.history_name(spec.name)!r} of {spec.destination.describe()}"
    releases = tables[names.releases].sort_values(RELEASE, kind="stable").reset_index(drop=True)
    classes = tables[names.classes]
    missing = [c for c in _RELEASE_COLUMNS if c not in releases.columns]
    if missing or RELEASE not in classes.columns or COUNT not in classes.columns:
        raise HistoryError(f"{where} is not a privacy-plugins history (columns {missing or [RELEASE, COUNT]} missing)")
    orphans = sorted(set(classes[RELEASE].astype("int64")) - set(releases[RELEASE].astype("int64")))
    if orphans or not len(releases):
        raise HistoryError(
            f"{where} lists {len(releases)} release(s) but holds classes of release(s) {orphans[:5]}: a release was "
            "removed outside privacy-plugins; restore the history, or start a new one with history: {name: …}"
        )
    if published_sha256 is not None and len(releases):
        last = str(releases["release_sha256"].iloc[-1])
        if last and last != published_sha256:  # killed between the history's rename and the file's
            releases = releases.iloc[:-1]
    kept: list[PublishedRelease] = []
    chain = ""
    for record in releases.to_dict("records"):
        _check_columns(spec, record, where)
        own = classes[classes[RELEASE] == record[RELEASE]].drop(columns=[RELEASE]).reset_index(drop=True)
        own = _as_signature(own)
        if _digest(own) != record["digest"]:
            raise HistoryError(
                f"{where}: the classes of release {record[RELEASE]} (run {record['run_id']}) do not match their "
                "digest — the history was changed outside privacy-plugins; restore it, or start a new one with "
                "history: {name: …}"
            )
        if _chain(chain, record) != record["chain"]:
            raise HistoryError(
                f"{where}: release {record[RELEASE]} (run {record['run_id']}) does not follow the release before it "
                "(a release was removed or edited outside privacy-plugins); restore the history, or start a new one "
                "with history: {name: …}"
            )
        chain = str(record["chain"])
        kept.append(
            PublishedRelease(
                run_id=str(record["run_id"]),
                published_at=str(record["published_at"]),
                spec_fingerprint=str(record["spec_fingerprint"]),
                transformation=json.loads(record["transformation"]),
                classes=own,
                sequence=int(record[RELEASE]),
                release_sha256=str(record["release_sha256"] or ""),
                published_rows=int(record["rows"]),
            )
        )
    return ReleaseHistory(empty.name, empty.quasi_identifiers, empty.sensitive_attributes, tuple(kept))


def _as_signature(classes: pd.DataFrame) -> pd.DataFrame:
    """Signature rows as read back from any store: text labels, integer counts."""
    text = {c: as_labels(classes[c]) for c in classes.columns if c != COUNT}
    return pd.DataFrame(text | {COUNT: classes[COUNT].astype("int64")})


def _check_columns(spec: ReleaseSpec, record: Mapping[str, Any], where: str) -> None:
    qis = json.loads(record["quasi_identifiers"])
    sensitive = json.loads(record["sensitive_attributes"])
    if qis != list(spec.quasi_identifiers) or sensitive != list(spec.sensitive_attributes):
        raise HistoryError(
            f"{where} was written with quasi_identifiers {qis} and sensitive_attributes {sensitive}, but the spec "
            f"has {list(spec.quasi_identifiers)} and {list(spec.sensitive_attributes)}; use another history "
            "(history: {name: …}) or the same roles"
        )
