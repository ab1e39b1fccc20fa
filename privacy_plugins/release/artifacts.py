"""The small, JSON-able artifacts the five release steps pass between them: paths, digests and numbers, never rows.

Orchestrators (Airflow tasks, Dagster assets) run the steps separately and pass these
between them. Each artifact of a run names its run, its spec and the spec's source
fingerprint (:class:`RunArtifact`); a step refuses an artifact of another run or spec
(:func:`accept_artifact`), one whose path is not the run's own working file, or one
whose file changed since it was written (:func:`own_file`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import ForeignArtifactError
from privacy_plugins.release.destination.files import atomic_file
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.workarea import run_dir

__all__ = [
    "Candidate",
    "CheckResult",
    "DiagnosisSummary",
    "LoadedTable",
    "Publication",
    "RequirementCheck",
    "RunArtifact",
    "Solved",
    "accept_artifact",
    "own_file",
    "write_parquet",
    "write_report",
]

REPORT_FILE = "anonymization.json"
"""The anonymize step's report in the run's folder (the algorithm's details; no values)."""

A = TypeVar("A", bound="_Artifact")


@dataclass(frozen=True)
class _Artifact:
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (for XCom, Dagster metadata, release.json)."""
        return to_jsonable(self)

    @classmethod
    def from_dict(cls: type[A], data: Mapping[str, Any]) -> A:
        """Rebuild the artifact from :meth:`to_dict`'s output (unknown keys, e.g. of older versions, ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class RunArtifact(_Artifact):
    """An artifact bound to one run of one spec on one source (see :func:`accept_artifact`)."""

    run_id: str = dataclasses.field(default="", kw_only=True)
    spec_name: str = dataclasses.field(default="", kw_only=True)
    source_fingerprint: str = dataclasses.field(default="", kw_only=True)


@dataclass(frozen=True)
class LoadedTable(RunArtifact):
    """Step 1: the raw table, validated, identifiers dropped, stored in the run's working folder."""

    path: str
    rows: int
    columns: list[str]
    dropped_identifiers: list[str]
    sha256: str = dataclasses.field(default="", kw_only=True)
    #: ``"rows"``: ``path`` is the table itself; ``"snapshot"``: ``path`` is the weighted snapshot
    #: (one row per distinct QI / model-column combination and its count), not the rows; ``"blocks"``:
    #: the same snapshot, for a release the engine anonymizes block by block (``release/blocks_path.py``).
    kind: str = dataclasses.field(default="rows", kw_only=True)
    #: Where the rows stay for a snapshot or blocks (``duckdb:census``, ``spark:/data/census.parquet``), else empty.
    source: str = dataclasses.field(default="", kw_only=True)
    #: The role of every source column (``release/column_roles.py``): what was dropped, pseudonymized, published.
    column_roles: dict[str, str] = dataclasses.field(default_factory=dict, kw_only=True)
    #: Columns flagged as direct identifiers (``release/identifier_gate.py``): category and counts, never a value.
    flagged_identifiers: list[dict[str, Any]] = dataclasses.field(default_factory=list, kw_only=True)


@dataclass(frozen=True)
class DiagnosisSummary(_Artifact):
    """Step 2: where the diagnosis reports are, and its headline numbers (no raw values)."""

    json_path: str
    html_path: str
    k: int
    sample_uniques: int
    share_at_risk: float
    suppression_needed: int | None
    #: The load step's direct-identifier findings (category, share, counts; never a value).
    flagged_identifiers: list[dict[str, Any]] = dataclasses.field(default_factory=list, kw_only=True)


@dataclass(frozen=True)
class Candidate(RunArtifact):
    """Step 3: the anonymized candidate, staged by the destination (private, not yet published), and its accounting.

    Where it is staged: ``staging_table`` (a staging table in the destination database, or a
    Spark staging location), else the run's working file(s) ``path`` (+ ``linked_path`` for a
    two-table release) with their SHA-256 (``sha256``, ``linked_sha256``).
    """

    path: str
    report_path: str
    algorithm: str
    levels: dict[str, int]
    rows_in: int
    rows_out: int
    suppressed: int
    dropped_identifiers: list[str]
    ncp: float
    sha256: str = dataclasses.field(default="", kw_only=True)
    #: Two-table releases (Anatomy): the sensitive table's working file, its SHA-256 and the linking column.
    linked_path: str = dataclasses.field(default="", kw_only=True)
    linked_sha256: str = dataclasses.field(default="", kw_only=True)
    group_column: str = dataclasses.field(default="", kw_only=True)
    #: The staging table (or Spark staging location) holding the candidate; empty: the working file(s).
    staging_table: str = dataclasses.field(default="", kw_only=True)
    #: Rows staged per part (``{"table": n}`` or ``{"qit": n, "st": m}``; marked rows included).
    staged_rows: dict[str, int] = dataclasses.field(default_factory=dict, kw_only=True)
    #: Input rows outside the research subset a δ-presence release publishes (issue 30): in = out + suppressed + this.
    out_of_scope: int = dataclasses.field(default=0, kw_only=True)
    #: The columns the anonymize step staged, per part (``"table"``, or ``"qit"`` and ``"st"``).
    #: Publishing refuses any other column set (:mod:`.written_columns`).
    columns: dict[str, list[str]] = dataclasses.field(default_factory=dict, kw_only=True)
    #: The load step's findings (``LoadedTable.flagged_identifiers``), for the check's identifier gate.
    flagged_identifiers: list[dict[str, Any]] = dataclasses.field(default_factory=list, kw_only=True)
    #: Every source column's role (``LoadedTable.column_roles``), for ``release.html``: the publish
    #: step names what was dropped (identifiers, ``unlisted_columns: drop``) without the loaded table.
    column_roles: dict[str, str] = dataclasses.field(default_factory=dict, kw_only=True)
    #: The algorithm's own one-line summary (its details' ``headline()``: node, partitions, clusters …).
    headline: str = dataclasses.field(default="", kw_only=True)
    #: What the anonymize step did about the release history: (a) re-applied / (b) anonymized, records
    #: (c) suppressed for it (``HistoryOutcome.to_dict``; counts only; empty without earlier releases).
    history: dict[str, Any] = dataclasses.field(default_factory=dict, kw_only=True)


@dataclass(frozen=True)
class RequirementCheck(_Artifact):
    """One requirement re-measured on the candidate.

    ``name`` is stable and machine-friendly (``k_anonymity``,
    ``distinct_l_diversity_disease``, ``row_accounting`` …) so orchestrators can
    map checks to their own objects by name; ``requirement`` reads like the papers.
    """

    requirement: str
    passed: bool
    observed: float | None
    target: float | None
    detail: str
    name: str = ""
    #: The measures behind the verdict (each attack's risk, interval and rates), counts and rates only.
    measures: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class CheckResult(RunArtifact):
    """Step 4: every requirement re-measured; publishing needs ``passed``.

    ``candidate_sha256`` is the digest of what was measured (its columns, rows and class
    counts, or a working pair's bytes); publishing measures again and compares.
    """

    passed: bool
    checks: list[RequirementCheck]
    candidate_path: str
    candidate_sha256: str
    #: What the composition verdict was computed from (the history's releases, the candidate, the models):
    #: publishing re-runs the composition check only when its own key differs (composition_gate.composition_key).
    composition_key: str = dataclasses.field(default="", kw_only=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Rebuild, including the nested checks."""
        checks = [RequirementCheck.from_dict(c) for c in data["checks"]]
        return cls(
            passed=bool(data["passed"]),
            checks=checks,
            candidate_path=str(data["candidate_path"]),
            candidate_sha256=str(data["candidate_sha256"]),
            run_id=str(data.get("run_id", "")),
            spec_name=str(data.get("spec_name", "")),
            source_fingerprint=str(data.get("source_fingerprint", "")),
            composition_key=str(data.get("composition_key", "")),
        )

    def summary(self) -> str:
        """The failed requirements, one per line."""
        return "\n".join(f"{c.requirement}: {c.detail}" for c in self.checks if not c.passed)


@dataclass(frozen=True)
class Publication(_Artifact):
    """Step 5: what was published where."""

    destination: str
    table: str
    rows: int
    numbers: dict[str, Any] = dataclasses.field(default_factory=dict, kw_only=True)
    """rows, classes, measured/targets per requirement, ncp, suppressed (release/published_numbers.py); no values."""
    #: Set when this publish step was a re-run: the run that had already published it (nothing was written).
    already_published_by: str = dataclasses.field(default="", kw_only=True)


@dataclass(frozen=True)
class Solved:
    """What the anonymize step's algorithm decided, before the destination stages it (not an artifact: in process).

    ``parts``: the published rows as engine tables (``{"table": t}``, or a two-table release's
    ``{"qit": …, "st": …}``); ``report``: the algorithm's report (``anonymization.json``);
    ``engine``: the engine the rows are in (to name a staging table in the logs).
    """

    parts: Mapping[str, Any]
    algorithm: str
    levels: dict[str, int]
    rows_in: int
    rows_out: int
    suppressed: int
    ncp: float
    headline: str
    report: Mapping[str, Any]
    engine: str
    group_column: str = ""
    out_of_scope: int = 0  # rows outside a δ-presence release's research subset (issue 30)
    #: What the anonymize step did about the release history (``HistoryOutcome.to_dict``; counts only).
    history: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def write_parquet(frame: pd.DataFrame, path: Path) -> str:
    """Write atomically (never through a symlink planted at ``path``); the SHA-256 of the bytes written."""
    with atomic_file(path) as temporary:
        frame.to_parquet(temporary, index=False)
        digest = hashlib.sha256(temporary.read_bytes()).hexdigest()
    return digest


def write_report(folder: Path, report: Mapping[str, Any]) -> Path:
    """Write the anonymize step's report atomically in the run's folder; its path."""
    path = folder / REPORT_FILE
    with atomic_file(path) as temporary:
        temporary.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path


def accept_artifact(spec: ReleaseSpec, artifact: RunArtifact, run_id: str | None, what: str) -> tuple[str, Path]:
    """The run the artifact belongs to and that run's working folder; refuse a foreign artifact."""
    if artifact.spec_name != spec.name or artifact.source_fingerprint != spec.source_fingerprint:
        raise ForeignArtifactError(
            f"release {spec.name!r}: the {what} comes from another release or source "
            f"(spec {artifact.spec_name or '?'!r}, fingerprint {artifact.source_fingerprint[:12] or '?'}); "
            "refusing it — re-run the release from the load step"
        )
    if run_id is not None and artifact.run_id != run_id:
        raise ForeignArtifactError(
            f"release {spec.name!r}: the {what} belongs to run {artifact.run_id!r}, not to this run {run_id!r}; "
            "refusing it — re-run the release from the load step"
        )
    return artifact.run_id, run_dir(spec, artifact.run_id)


def own_file(artifact_path: str, expected: Path, digest: str, what: str) -> pd.DataFrame:
    """Read the run's own working file, checking that the artifact names it and that it is unchanged."""
    if Path(artifact_path) != expected:
        raise ForeignArtifactError(
            f"the {what} points to {artifact_path!r}, not to its run's working file {str(expected)!r}; refusing it"
        )
    if expected.is_symlink() or not expected.is_file():
        raise ForeignArtifactError(f"the {what}'s working file {str(expected)!r} is missing (or a symlink)")
    content = expected.read_bytes()
    if hashlib.sha256(content).hexdigest() != digest:
        raise ForeignArtifactError(
            f"the {what}'s working file {str(expected)!r} changed after it was written; refusing it — re-run the step"
        )
    return pd.read_parquet(io.BytesIO(content))
