"""The five release steps, each a function with a typed, JSON-able input and output.

Orchestrators (Airflow tasks, Dagster assets) run them separately and pass the
small artifacts below between them — paths and numbers, never DataFrames. The
working files live in the spec's private ``workdir``; identifiers are dropped
when the table is loaded, so no working file ever holds them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow.parquet as pq

from privacy_plugins.core.anonymize.full_domain import FULL_DOMAIN_ALGORITHMS, SUPPRESSED_MARK, anonymize_full_domain
from privacy_plugins.core.anonymize.lattice import check_lattice_size
from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import MODEL_REGISTRY, KAnonymity, PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import PrivacyPluginsError, UnknownColumnError
from privacy_plugins.release.destinations import publish_table
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.sources import read_source
from privacy_plugins.release.spec import ReleaseSpec

__all__ = [
    "Candidate",
    "CheckResult",
    "DiagnosisSummary",
    "LoadedTable",
    "Publication",
    "ReleaseBlocked",
    "RequirementCheck",
    "anonymize_step",
    "check_lattice",
    "check_name",
    "check_step",
    "diagnose_step",
    "load_step",
    "publish_step",
]

A = TypeVar("A", bound="_Artifact")


class ReleaseBlocked(PrivacyPluginsError):
    """A requirement failed on the anonymized table: nothing is published."""


@dataclass(frozen=True)
class _Artifact:
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (for XCom, Dagster metadata, release.json)."""
        return to_jsonable(self)

    @classmethod
    def from_dict(cls: type[A], data: Mapping[str, Any]) -> A:
        """Rebuild the artifact from :meth:`to_dict`'s output."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class LoadedTable(_Artifact):
    """Step 1: the raw table, validated, identifiers dropped, stored in the workdir."""

    path: str
    rows: int
    columns: list[str]
    dropped_identifiers: list[str]


@dataclass(frozen=True)
class DiagnosisSummary(_Artifact):
    """Step 2: where the diagnosis reports are, and its headline numbers (no raw values)."""

    json_path: str
    html_path: str
    k: int
    sample_uniques: int
    share_at_risk: float
    suppression_needed: int | None


@dataclass(frozen=True)
class Candidate(_Artifact):
    """Step 3: the anonymized candidate (private, not yet published) and its accounting."""

    path: str
    report_path: str
    algorithm: str
    levels: dict[str, int]
    rows_in: int
    rows_out: int
    suppressed: int
    dropped_identifiers: list[str]
    ncp: float


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


@dataclass(frozen=True)
class CheckResult(_Artifact):
    """Step 4: every requirement re-measured; publishing needs ``passed``."""

    passed: bool
    checks: list[RequirementCheck]
    candidate_path: str
    candidate_sha256: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Rebuild, including the nested checks."""
        checks = [RequirementCheck.from_dict(c) for c in data["checks"]]
        return cls(
            passed=bool(data["passed"]),
            checks=checks,
            candidate_path=str(data["candidate_path"]),
            candidate_sha256=str(data["candidate_sha256"]),
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


def _read(path: str) -> pd.DataFrame:
    return pd.read_parquet(path)


def _read_with_digest(path: str) -> tuple[pd.DataFrame, str]:
    """The table and the SHA-256 of the exact bytes it was parsed from."""
    content = Path(path).read_bytes()
    return pd.read_parquet(io.BytesIO(content)), hashlib.sha256(content).hexdigest()


def check_lattice(spec: ReleaseSpec, hierarchies: Mapping[Hashable, Hierarchy]) -> None:
    """Refuse a generalization lattice the anonymizer would refuse, before anything slow runs.

    The lattice has Π (height + 1) nodes over the quasi-identifiers' hierarchies;
    above the searches' cap this raises the anonymizer's own ``ConfigurationError``
    (exit 2 in the CLI, a failed task in Airflow/Dagster), seconds after loading
    instead of after the diagnosis.
    """
    if spec.algorithm.name in FULL_DOMAIN_ALGORITHMS:
        check_lattice_size([hierarchies[column].height for column in spec.quasi_identifiers])


def load_step(spec: ReleaseSpec) -> LoadedTable:
    """Read the source, check every column, role and hierarchy, drop identifiers, store the table."""
    frame = validate_frame(read_source(spec.source))
    spec.roles.check_columns([str(c) for c in frame.columns])
    bound_column = spec.requirements.bound_column
    if bound_column is not None and bound_column not in frame.columns:
        raise UnknownColumnError(f"bound_column not found in table: {bound_column!r}; available: {list(frame.columns)}")
    hierarchies = spec.build_hierarchies(frame)
    for column, hierarchy in hierarchies.items():
        hierarchy.leaf_codes(frame[column])  # every value must be a leaf, or a clear error now
    check_lattice(spec, hierarchies)  # before the diagnosis, which can take minutes on a big table
    spec.models(frame)  # validates the model parameters against the data types
    table = frame.drop(columns=list(spec.identifiers))
    spec.workdir.mkdir(parents=True, exist_ok=True)
    path = spec.workdir / "raw.parquet"
    table.to_parquet(path, index=False)
    return LoadedTable(
        path=str(path),
        rows=len(table),
        columns=[str(c) for c in table.columns],
        dropped_identifiers=list(spec.identifiers),
    )


def diagnose_step(spec: ReleaseSpec, loaded: LoadedTable, *, on_progress: OnProgress | None = None) -> DiagnosisSummary:
    """Diagnose the raw table and write the JSON and HTML reports (kept even if the release fails).

    ``on_progress("diagnose", subsets_measured, total)`` is called after each subset; progress is
    also logged on the ``privacy_plugins.release`` logger every few seconds.
    """
    frame = _read(loaded.path)
    requirements = spec.requirements
    sensitive = spec.sensitive[0] if spec.sensitive else None
    use_l = requirements.l is not None and sensitive is not None and requirements.l_variant != "recursive"
    diagnosis = diagnose(
        frame,
        quasi_identifiers=list(spec.quasi_identifiers),
        sensitive_attribute=sensitive,
        k=min(requirements.k, len(frame)) if requirements.k is not None else None,
        l=requirements.l if use_l else None,
        l_variants=[requirements.l_variant] if use_l else None,
        delta=requirements.suppression_limit,
        progress=StepProgress("diagnose", "subsets measured", on_progress),
    )
    if diagnosis.mode_reason is not None:
        LOGGER.info("diagnose: level-wise up to the borders: %s", diagnosis.mode_reason)
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    spec.report.diagnosis_json.write_text(json.dumps(diagnosis.to_dict(), indent=2) + "\n", encoding="utf-8")
    spec.report.diagnosis_html.write_text(diagnosis.to_html(), encoding="utf-8")
    whole = diagnosis.all_quasi_identifiers
    return DiagnosisSummary(
        json_path=str(spec.report.diagnosis_json),
        html_path=str(spec.report.diagnosis_html),
        k=int(whole.k),
        sample_uniques=int(whole.sample_uniques),
        share_at_risk=float(whole.share_at_risk),
        suppression_needed=int(whole.suppression_needed) if whole.suppression_needed is not None else None,
    )


def anonymize_step(spec: ReleaseSpec, loaded: LoadedTable, *, on_progress: OnProgress | None = None) -> Candidate:
    """Anonymize into a private candidate file (raises InfeasibleAnonymizationError when impossible).

    ``on_progress("anonymize", nodes_checked, lattice_size)`` is called after each lattice node
    checked; progress is also logged on the ``privacy_plugins.release`` logger every few seconds.
    """
    path = spec.workdir / "candidate.parquet"
    report_path = spec.workdir / "anonymization.json"
    for stale in (path, report_path):  # never leave an earlier candidate behind a failed run
        stale.unlink(missing_ok=True)
    frame = _read(loaded.path)
    result = anonymize_full_domain(
        frame,
        quasi_identifiers=list(spec.quasi_identifiers),
        hierarchies=spec.build_hierarchies(frame),
        models=spec.models(frame),
        sensitive_attributes=list(spec.sensitive),
        suppression_limit=spec.requirements.suppression_limit,
        algorithm=spec.algorithm.name,  # type: ignore[arg-type]
        metric=spec.algorithm.metric,  # type: ignore[arg-type]
        suppressed_rows=spec.algorithm.suppressed_rows,  # type: ignore[arg-type]
        progress=StepProgress("anonymize", "nodes checked", on_progress),
    )
    result.table.to_parquet(path, index=False)
    report_path.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    return Candidate(
        path=str(path),
        report_path=str(report_path),
        algorithm=result.algorithm,
        levels={str(k): int(v) for k, v in (result.levels or {}).items()},
        rows_in=result.rows_in,
        rows_out=result.rows_out,
        suppressed=result.suppressed,
        dropped_identifiers=list(loaded.dropped_identifiers),
        ncp=result.utility.ncp,
    )


_REGISTRY_NAMES = {factory: name for name, factory in MODEL_REGISTRY.items()}


def check_name(model: PrivacyModel) -> str:
    """The stable name of a model's check: registry name, plus the sensitive attribute if any."""
    name = _REGISTRY_NAMES.get(type(model), type(model).__name__.lower())
    attribute = model.sensitive_attribute
    return name if attribute is None else f"{name}_{re.sub(r'[^A-Za-z0-9_]', '_', str(attribute))}"


def _gap(model: object, observed: float, target: float) -> str:
    if isinstance(model, KAnonymity):
        return f"observed k = {observed:g}, needs ≥ {target:g} (short by {target - observed:g})"
    return f"observed {observed:.4g} against {target:.4g}"


def check_step(spec: ReleaseSpec, candidate: Candidate) -> CheckResult:
    """Re-measure every requirement on the candidate with the core, plus identifiers and row accounting."""
    frame, digest = _read_with_digest(candidate.path)
    checks: list[RequirementCheck] = []
    leaked = [c for c in spec.identifiers if c in frame.columns]
    checks.append(
        RequirementCheck(
            "no identifiers",
            not leaked,
            None,
            None,
            f"identifier columns present: {leaked}" if leaked else "no identifier column in the candidate",
            name="no_identifiers",
        )
    )
    published = frame
    if spec.algorithm.suppressed_rows == "mark":
        marked = frame[list(spec.quasi_identifiers)].eq(SUPPRESSED_MARK).all(axis=1)
        published = frame.loc[~marked]
    raw = spec.workdir / "raw.parquet"
    loaded_rows = pq.ParquetFile(raw).metadata.num_rows if raw.exists() else candidate.rows_in
    accounted = (
        loaded_rows == candidate.rows_in == candidate.rows_out + candidate.suppressed
        and len(published) == candidate.rows_out
    )
    checks.append(
        RequirementCheck(
            "row accounting",
            accounted,
            float(len(published)),
            float(candidate.rows_out),
            f"{loaded_rows} loaded, {candidate.rows_in} in = {candidate.rows_out} published + "
            f"{candidate.suppressed} suppressed; {len(published)} rows in the candidate",
            name="row_accounting",
        )
    )
    budget = spec.suppression_budget(candidate.rows_in)
    within = candidate.suppressed <= budget
    checks.append(
        RequirementCheck(
            "suppression limit",
            within,
            float(candidate.suppressed),
            float(budget),
            f"{candidate.suppressed} suppressed, at most {budget} allowed",
            name="suppression_limit",
        )
    )
    classes = EquivalenceClasses.from_frame(published.reset_index(drop=True), list(spec.quasi_identifiers))
    for model in spec.models(published):
        result = model.evaluate(classes)
        detail = "holds" if result.passed else _gap(model, result.observed, result.threshold)
        checks.append(
            RequirementCheck(
                str(model),
                result.passed,
                result.observed,
                result.threshold,
                f"{detail}; {result.violations.classes} classes ({result.violations.records} records) in violation",
                name=check_name(model),
            )
        )
    return CheckResult(
        passed=all(c.passed for c in checks), checks=checks, candidate_path=candidate.path, candidate_sha256=digest
    )


def publish_step(spec: ReleaseSpec, candidate: Candidate, check: CheckResult) -> Publication:
    """Publish the candidate atomically — only when every check passed, and only the bytes that were checked."""
    if not check.passed:
        raise ReleaseBlocked(f"release {spec.name!r} not published; failed checks:\n{check.summary()}")
    if check.candidate_path != candidate.path:
        raise ReleaseBlocked("the check result belongs to another candidate; re-run the check")
    frame, digest = _read_with_digest(candidate.path)
    if digest != check.candidate_sha256:
        # Another run (or a person) replaced the file after it was checked.
        raise ReleaseBlocked("the candidate changed after it was checked; nothing was published; re-run the check")
    rows = publish_table(frame, spec.destination)
    return Publication(destination=spec.destination.describe(), table=spec.destination.table, rows=rows)
