"""The five release steps, each a function with a typed, JSON-able input and output.

Orchestrators (Airflow tasks, Dagster assets) run them separately and pass the
small artifacts below between them — paths and numbers, never DataFrames.
Identifiers are dropped when the table is loaded, so no working file ever holds them.

Two modes, one set of steps. Each step dispatches on
``pushdown_reason(spec) is None`` (:mod:`~privacy_plugins.release.pushdown`): the
algorithm's tags decide, whatever the source. An algorithm that ``works_on_snapshot``
(full-domain, ``suppressed_rows: remove``) runs *on the snapshot* — load stores the
weighted snapshot (``LoadedTable.kind == "snapshot"``) of a database, Spark, a large
file through DuckDB, or a generated table / small file through pandas; anonymize
re-opens the source, re-counts it and stages the generalized rows through the
destination in a run-bound staging table or a Parquet working file
(``Candidate.kind == "pushdown"``), check and publish measure them by ``GROUP BY``.
Every other algorithm runs *in memory* on the rows (``kind == "rows"``).
A step refuses an artifact of the other mode (the spec's source or algorithm
changed between tasks).

Runs and artifacts. Every step belongs to one run (``run_id``; see
:mod:`~privacy_plugins.release.workarea`): the working files live in that run's
private folder, outside the report folder. Each artifact names its run, its
spec and the spec's source fingerprint, plus the SHA-256 of the working file it
describes; a step refuses an artifact of another run or spec, one whose path is
not the run's own working file, or one whose file changed since it was written.

Suppressed rows with ``suppressed_rows: mark``. Marked rows are published (every
QI ``*``, sensitive values hidden), so they are one more equivalence class of the
published table and must satisfy the requirements like any other; the
anonymizer suppresses nothing rather than publish a marked class that fails.
``check_step``, ``publish_step``, ``privacy-plugins published`` and the GX
suites all measure the table exactly as published, marked rows included, so
they always agree.

Publishing re-measures. ``publish_step`` does not trust a ``CheckResult``: it
re-reads the candidate's bytes, re-measures every requirement on exactly what
it is about to write, and refuses when one fails — or when its columns are not
exactly the ones the anonymize step wrote (:mod:`.written_columns`). A publish
re-run for a run that already published succeeds without writing (:mod:`.receipts`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from collections.abc import Collection, Container, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow.parquet as pq

from privacy_plugins.core.anonymize import anonymize, get_anonymizer, linked_classes, tags_of
from privacy_plugins.core.anonymize.generalization_lattice import check_lattice_size
from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import PrivacyModel, bind_hierarchies, check_name
from privacy_plugins.core.models.base import ModelResult
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import (
    ForeignArtifactError,
    HierarchyError,
    InfeasibleAnonymizationError,
    ReleaseBlocked,
    UnknownColumnError,
    VerificationError,
)
from privacy_plugins.release.destinations import atomic_file, publish_table
from privacy_plugins.release.linked import joined_view, publish_linked
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.published_numbers import measure_published
from privacy_plugins.release.sources import read_source
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.workarea import destination_lock, new_run_id, remove_run_workdir, run_dir
from privacy_plugins.release.written_columns import file_columns, record_columns, refuse_foreign_columns

__all__ = [
    "Candidate",
    "CheckResult",
    "DiagnosisSummary",
    "ForeignArtifactError",
    "LoadedTable",
    "Publication",
    "ReleaseBlocked",
    "RequirementCheck",
    "anonymize_step",
    "check_name",
    "check_step",
    "diagnose_step",
    "load_step",
    "measured_candidate",
    "publish_step",
    "write_diagnosis",
]

A = TypeVar("A", bound="_Artifact")


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
    """Step 1: the raw table, validated, identifiers dropped, stored in the run's working folder."""

    path: str
    rows: int
    columns: list[str]
    dropped_identifiers: list[str]
    run_id: str = dataclasses.field(default="", kw_only=True)
    spec_name: str = dataclasses.field(default="", kw_only=True)
    source_fingerprint: str = dataclasses.field(default="", kw_only=True)
    sha256: str = dataclasses.field(default="", kw_only=True)
    #: ``"rows"``: ``path`` is the table itself; ``"snapshot"``: a release inside the database, ``path`` is the
    #: weighted snapshot (one row per distinct QI / model-column combination and its count), not the rows.
    kind: str = dataclasses.field(default="rows", kw_only=True)
    #: Where the rows stay for a ``"snapshot"`` (``duckdb:census``, ``spark:/data/census.parquet``), else empty.
    source: str = dataclasses.field(default="", kw_only=True)


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
    run_id: str = dataclasses.field(default="", kw_only=True)
    spec_name: str = dataclasses.field(default="", kw_only=True)
    source_fingerprint: str = dataclasses.field(default="", kw_only=True)
    sha256: str = dataclasses.field(default="", kw_only=True)
    #: Two-table releases (Anatomy): the sensitive table's working file, its SHA-256 and the linking column.
    linked_path: str = dataclasses.field(default="", kw_only=True)
    linked_sha256: str = dataclasses.field(default="", kw_only=True)
    group_column: str = dataclasses.field(default="", kw_only=True)
    #: ``"rows"``: in-memory flow; ``"pushdown"``: staged inside the database (``release/staging.py``).
    kind: str = dataclasses.field(default="rows", kw_only=True)
    #: A pushdown candidate staged in the source database: its staging table (empty: the Parquet working file).
    staging_table: str = dataclasses.field(default="", kw_only=True)
    #: The columns the anonymize step wrote (in memory ``name: type``; inside the database names), per table
    #: (``"table"``, and ``"linked"`` for a two-table release). Publishing refuses any other column set.
    columns: dict[str, list[str]] = dataclasses.field(default_factory=dict, kw_only=True)
    #: The algorithm's own one-line summary (its details' ``headline()``: node, partitions, clusters …).
    headline: str = dataclasses.field(default="", kw_only=True)


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
    run_id: str = dataclasses.field(default="", kw_only=True)
    spec_name: str = dataclasses.field(default="", kw_only=True)
    source_fingerprint: str = dataclasses.field(default="", kw_only=True)

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


def _read_with_digest(path: Path) -> tuple[pd.DataFrame, str]:
    """The table and the SHA-256 of the exact bytes it was parsed from."""
    content = path.read_bytes()
    return pd.read_parquet(io.BytesIO(content)), hashlib.sha256(content).hexdigest()


def write_parquet(frame: pd.DataFrame, path: Path) -> str:
    """Write atomically (never through a symlink planted at ``path``); the SHA-256 of the bytes written."""
    with atomic_file(path) as temporary:
        frame.to_parquet(temporary, index=False)
        digest = hashlib.sha256(temporary.read_bytes()).hexdigest()
    return digest


def accept_artifact(
    spec: ReleaseSpec, artifact: LoadedTable | Candidate | CheckResult, run_id: str | None, what: str
) -> tuple[str, Path]:
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


def own_file(artifact_path: str, expected: Path, digest: str, what: str) -> tuple[pd.DataFrame, str]:
    """Read the run's own working file, checking that the artifact names it and that it is unchanged."""
    if Path(artifact_path) != expected:
        raise ForeignArtifactError(
            f"the {what} points to {artifact_path!r}, not to its run's working file {str(expected)!r}; refusing it"
        )
    if expected.is_symlink() or not expected.is_file():
        raise ForeignArtifactError(f"the {what}'s working file {str(expected)!r} is missing (or a symlink)")
    frame, actual = _read_with_digest(expected)
    if actual != digest:
        raise ForeignArtifactError(
            f"the {what}'s working file {str(expected)!r} changed after it was written; refusing it — re-run the step"
        )
    return frame, actual


def check_lattice(spec: ReleaseSpec, hierarchies: Mapping[Hashable, Hierarchy]) -> None:
    """Refuse a generalization lattice the anonymizer would refuse, before anything slow runs.

    The lattice has Π (height + 1) nodes over the quasi-identifiers' hierarchies;
    above the searches' cap this raises the anonymizer's own ``ConfigurationError``
    (exit 2 in the CLI, a failed task in Airflow/Dagster), seconds after loading
    instead of after the diagnosis.
    """
    if tags_of(get_anonymizer(spec.algorithm.name)).searches_lattice:
        check_lattice_size([hierarchies[column].height for column in spec.quasi_identifiers])


def _validate_against_data(spec: ReleaseSpec, frame: pd.DataFrame) -> None:
    """Everything about the spec that the data can refute, before anything is written."""
    spec.roles.check_columns([str(c) for c in frame.columns])
    bound_column = spec.requirements.bound_column
    if bound_column is not None and bound_column not in frame.columns:
        raise UnknownColumnError(f"bound_column not found in table: {bound_column!r}; available: {list(frame.columns)}")
    hierarchies = spec.build_hierarchies(frame)
    for column, hierarchy in hierarchies.items():
        hierarchy.leaf_codes(frame[column])  # every value must be a leaf, or a clear error now
    for column in spec.quasi_identifiers:
        if column not in hierarchies and not pd.api.types.is_numeric_dtype(frame[column]):
            raise HierarchyError(
                f"quasi-identifier {column!r} is not numeric and has no hierarchy; algorithm "
                f"{spec.algorithm.name!r} publishes only numeric quasi-identifiers as ranges"
            )
    check_lattice(spec, hierarchies)  # before the diagnosis, which can take minutes on a big table
    for model in spec.models():  # each model checks itself against the data (k vs rows, bounds in (0, 1])
        model.validate_against(frame)


def check_mode(spec: ReleaseSpec, kind: str, expected: str, what: str) -> None:
    """Refuse an artifact of the other mode (``kind`` "rows" in memory; "snapshot"/"pushdown" inside the database).

    The algorithm is not part of the source fingerprint, so a task run with another one
    (an override) would otherwise misread the artifact.
    """
    if kind == expected:
        return
    here, there = ("in memory", "inside the database") if expected == "rows" else ("inside the database", "in memory")
    raise ForeignArtifactError(
        f"release {spec.name!r} runs {here}, but the {what} was made {there} (the spec's source or algorithm "
        "changed between steps?); refusing it — re-run from the load step"
    )


def _inside_database(spec: ReleaseSpec) -> bool:
    """Whether this release's steps run inside the database (``release/pushdown.py``)."""
    from privacy_plugins.release.pushdown import pushdown_reason  # pushdown imports this module

    return pushdown_reason(spec) is None


def load_step(spec: ReleaseSpec, *, run_id: str | None = None) -> LoadedTable:
    """Read the source, check every column, role, hierarchy and requirement, drop identifiers, store the table.

    In memory the table itself (identifiers dropped) is stored as ``raw.parquet``. Inside the
    database (a database/Spark source or a large file with a full-domain algorithm) only the
    weighted snapshot is stored (``kind="snapshot"``; see :mod:`~privacy_plugins.release.pushdown`).

    Args:
        spec: the release spec.
        run_id: this run's id (a fresh one when ``None``); later steps of the run must pass the same.

    Raises:
        ConfigurationError (and subclasses): bad spec or data — raised before anything is written.
    """
    if _inside_database(spec):
        from privacy_plugins.release import pushdown

        return pushdown.load(spec, run_id=run_id or new_run_id())
    spec.destination.check_writable()  # an unwritable destination or report folder fails before any work
    spec.report.check_writable()
    frame = validate_frame(read_source(spec.source))
    _validate_against_data(spec, frame)
    table = frame.drop(columns=list(spec.identifiers))
    run = run_id or new_run_id()
    path = run_dir(spec, run, create=True) / "raw.parquet"
    digest = write_parquet(table, path)
    return LoadedTable(
        path=str(path),
        rows=len(table),
        columns=[str(c) for c in table.columns],
        dropped_identifiers=list(spec.identifiers),
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        sha256=digest,
    )


def _loaded_frame(spec: ReleaseSpec, loaded: LoadedTable, run_id: str | None) -> tuple[str, Path, pd.DataFrame]:
    check_mode(spec, loaded.kind, "rows", "loaded table")
    run, folder = accept_artifact(spec, loaded, run_id, "loaded table")
    frame, _ = own_file(loaded.path, folder / "raw.parquet", loaded.sha256, "loaded table")
    return run, folder, frame


def diagnose_step(
    spec: ReleaseSpec, loaded: LoadedTable, *, run_id: str | None = None, on_progress: OnProgress | None = None
) -> DiagnosisSummary:
    """Diagnose the raw table and write the JSON and HTML reports (kept even if the release fails).

    ``on_progress("diagnose", subsets_measured, total)`` is called after each subset; progress is
    also logged on the ``privacy_plugins.release`` logger every few seconds. Inside the database
    the same diagnosis is computed from the weighted snapshot (:func:`write_diagnosis`).
    """
    if _inside_database(spec):
        from privacy_plugins.release import pushdown

        return pushdown.diagnose(spec, loaded, run_id=run_id, on_progress=on_progress)
    _, _, frame = _loaded_frame(spec, loaded, run_id)
    return write_diagnosis(spec, frame, on_progress=on_progress)


def write_diagnosis(
    spec: ReleaseSpec, frame: pd.DataFrame, *, weights: str | None = None, on_progress: OnProgress | None = None
) -> DiagnosisSummary:
    """Diagnose ``frame`` against the spec, write the JSON and HTML reports, and sum them up.

    ``weights``: the column of record counts when ``frame`` is the weighted snapshot of a
    release inside the database; the reports are then those of the records it stands for.
    """
    requirements = spec.requirements
    sensitive = list(spec.sensitive_attributes)
    records = len(frame) if weights is None else int(frame[weights].sum())
    diagnosis = diagnose(
        frame,
        quasi_identifiers=list(spec.quasi_identifiers),
        sensitive_attributes=sensitive,
        k=min(requirements.k, records) if requirements.k is not None else None,
        l=requirements.l if sensitive else None,
        l_variant=requirements.l_variant,  # type: ignore[arg-type]
        c=requirements.c if requirements.l_variant == "recursive" else None,
        models=[  # the listed models that have borders (monotone over quasi-identifier subsets)
            m
            for m in bind_hierarchies(requirements.listed, spec.sensitive_hierarchies())
            if m.is_monotonic(with_suppression=False)
        ],
        suppression_limit=requirements.suppression_limit,
        progress=StepProgress("diagnose", "subsets measured", on_progress),
        weights=weights,
    )
    if diagnosis.mode_reason is not None:
        LOGGER.info("diagnose: level-wise up to the borders: %s", diagnosis.mode_reason)
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    spec.report.diagnosis_json.write_text(json.dumps(diagnosis.to_dict(), indent=2) + "\n", encoding="utf-8")
    from privacy_plugins.report import render  # matplotlib: loaded only when a report is written

    spec.report.diagnosis_html.write_text(render(diagnosis), encoding="utf-8")
    whole = diagnosis.all_quasi_identifiers
    return DiagnosisSummary(
        json_path=str(spec.report.diagnosis_json),
        html_path=str(spec.report.diagnosis_html),
        k=int(whole.k),
        sample_uniques=int(whole.sample_uniques),
        share_at_risk=float(whole.share_at_risk),
        suppression_needed=int(whole.suppression_needed) if whole.suppression_needed is not None else None,
    )


def anonymize_step(
    spec: ReleaseSpec,
    loaded: LoadedTable,
    *,
    run_id: str | None = None,
    on_progress: OnProgress | None = None,
    keep_workdir: bool = False,
) -> Candidate:
    """Anonymize into the run's private candidate file (raises InfeasibleAnonymizationError when impossible).

    When no generalization meets the requirements nothing can ever be published from
    this run: its working folder is removed (unless ``keep_workdir`` or the spec's ``workdir:``).
    """
    try:
        return _anonymize(spec, loaded, run_id, on_progress)
    except InfeasibleAnonymizationError:
        _end_unpublished(spec, loaded.run_id, keep_workdir)
        raise


def _end_unpublished(spec: ReleaseSpec, run: str, keep: bool) -> None:
    """Remove the working files of a run that can never publish (no raw row stays on disk)."""
    if remove_run_workdir(spec, run, keep=keep):
        LOGGER.info("removed the working files of run %s: it cannot publish", run)


def _anonymize(spec: ReleaseSpec, loaded: LoadedTable, run_id: str | None, on_progress: OnProgress | None) -> Candidate:
    """:func:`anonymize_step` (in memory, or dispatched inside the database).

    ``on_progress("anonymize", nodes_checked, lattice_size)`` is called after each lattice node
    checked; progress is also logged on the ``privacy_plugins.release`` logger every few seconds.
    Inside the database the snapshot is searched and the generalized rows are staged by the
    database: a staging table in the source database when it is the destination, else the run's
    Parquet working file (``Candidate.kind == "pushdown"``).
    """
    if _inside_database(spec):
        from privacy_plugins.release import pushdown

        return pushdown.anonymize(spec, loaded, run_id=run_id, on_progress=on_progress)
    run, folder, frame = _loaded_frame(spec, loaded, run_id)
    path = folder / "candidate.parquet"
    linked_path = folder / "candidate_st.parquet"
    report_path = folder / "anonymization.json"
    for stale in (path, linked_path, report_path):  # never leave an earlier candidate behind a failed run
        stale.unlink(missing_ok=True)
    result = anonymize(
        frame,
        algorithm=spec.algorithm.name,
        quasi_identifiers=list(spec.quasi_identifiers),
        hierarchies=spec.build_hierarchies(frame),
        models=spec.models(),
        sensitive_attributes=list(spec.sensitive_attributes),
        suppression_limit=spec.requirements.suppression_limit,
        seed=spec.algorithm.seed,
        **spec.algorithm.options,
        progress=StepProgress("anonymize", "nodes checked", on_progress),
    )
    digest = write_parquet(result.table, path)
    linked: dict[str, str] = {}
    if result.linked is not None:  # Anatomy: the sensitive table beside the QIT
        linked = {
            "linked_path": str(linked_path),
            "linked_sha256": write_parquet(result.linked.table, linked_path),
            "group_column": result.linked.group_column,
        }
    with atomic_file(report_path) as temporary:
        temporary.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    columns = {"table": file_columns(path)} | ({"linked": file_columns(linked_path)} if linked else {})
    record_columns(folder, columns)
    return Candidate(
        path=str(path),
        report_path=str(report_path),
        algorithm=result.algorithm,
        levels=result.details.recoding_levels(),
        rows_in=result.rows_in,
        rows_out=result.rows_out,
        suppressed=result.suppressed,
        dropped_identifiers=list(loaded.dropped_identifiers),
        ncp=result.utility.ncp,
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        sha256=digest,
        headline=result.details.headline(),
        **linked,
        columns=columns,
    )


def _measure(
    spec: ReleaseSpec,
    frame: pd.DataFrame,
    candidate: Candidate,
    loaded_rows: int,
    linked: pd.DataFrame | None = None,
) -> list[RequirementCheck]:
    """Every requirement, measured on ``frame`` exactly as it would be published (marked rows included).

    A two-table candidate (``linked``: Anatomy's sensitive table) is measured per group of
    the pair, and its row accounting includes the join (each QIT row in exactly one group).
    """
    classes: EquivalenceClasses | None = None
    joined = ""
    if linked is not None:
        try:
            classes = linked_classes(
                frame, linked, candidate.group_column, spec.quasi_identifiers, spec.sensitive_attributes
            )
            joined = "; each QIT row joins exactly one ST group"
        except VerificationError as exc:
            joined = f"; {exc}"
    else:
        classes = EquivalenceClasses.from_frame(frame.reset_index(drop=True), list(spec.quasi_identifiers))
    marked = spec.algorithm.option("suppressed_rows") == "mark"
    expected_rows = candidate.rows_out + (candidate.suppressed if marked else 0)
    accounted = (
        loaded_rows == candidate.rows_in == candidate.rows_out + candidate.suppressed
        and len(frame) == expected_rows
        and classes is not None
    )
    published = f"{candidate.rows_out} published" + (f" + {candidate.suppressed} marked" if marked else "")
    checks = accounting_checks(
        spec,
        candidate,
        columns=frame.columns,
        loaded_rows=loaded_rows,
        accounted=accounted,
        observed_rows=len(frame),
        expected_rows=expected_rows,
        where=f"{len(frame)} rows in the candidate ({published} expected){joined}",
    )
    models = spec.models()
    if classes is None:
        return checks + [
            RequirementCheck(str(model), False, None, None, "not measured: the two tables do not join",
                             name=check_name(model))
            for model in models
        ]  # fmt: skip
    return checks + model_checks(models, [model.evaluate(classes) for model in models])


def accounting_checks(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    columns: Container[Hashable],
    loaded_rows: int,
    accounted: bool,
    observed_rows: int,
    expected_rows: int,
    where: str,
) -> list[RequirementCheck]:
    """The checks before the models: no identifier in ``columns``, row accounting, suppression limit.

    ``accounted`` is the caller's row accounting verdict, ``where`` its account of
    the rows it found (after the loaded/in/kept/suppressed counts in the detail).
    """
    leaked = [c for c in spec.identifiers if c in columns]
    budget = spec.suppression_budget(candidate.rows_in)
    return [
        RequirementCheck(
            "no identifiers",
            not leaked,
            None,
            None,
            f"identifier columns present: {leaked}" if leaked else "no identifier column in the candidate",
            name="no_identifiers",
        ),
        RequirementCheck(
            "row accounting",
            accounted,
            float(observed_rows),
            float(expected_rows),
            f"{loaded_rows} loaded, {candidate.rows_in} in = {candidate.rows_out} kept + "
            f"{candidate.suppressed} suppressed; {where}",
            name="row_accounting",
        ),
        RequirementCheck(
            "suppression limit",
            candidate.suppressed <= budget,
            float(candidate.suppressed),
            float(budget),
            f"{candidate.suppressed} suppressed, at most {budget} allowed",
            name="suppression_limit",
        ),
    ]


def model_checks(models: list[PrivacyModel], results: list[ModelResult]) -> list[RequirementCheck]:
    """One check per model from its measured result (however it was measured: records or GROUP BY)."""
    checks = []
    for model, result in zip(models, results, strict=True):
        detail = "holds" if result.passed else model.describe_gap(result.observed)
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
    return checks


def _candidate_linked(candidate: Candidate, folder: Path, digest: str) -> tuple[pd.DataFrame | None, str]:
    """A two-table candidate's sensitive table (its exact bytes checked) and one digest over both files."""
    if not candidate.linked_path:
        return None, digest
    st, st_digest = own_file(
        candidate.linked_path, folder / "candidate_st.parquet", candidate.linked_sha256, "sensitive table"
    )
    return st, hashlib.sha256(f"{digest}:{st_digest}".encode()).hexdigest()


def _candidate_frame(spec: ReleaseSpec, candidate: Candidate, run_id: str | None) -> tuple[str, pd.DataFrame, str, int]:
    """The run, the candidate as read from its exact bytes, their SHA-256, and the rows the run loaded."""
    check_mode(spec, candidate.kind, "rows", "candidate")
    run, folder = accept_artifact(spec, candidate, run_id, "candidate")
    frame, digest = own_file(candidate.path, folder / "candidate.parquet", candidate.sha256, "candidate")
    raw = folder / "raw.parquet"
    loaded_rows = pq.ParquetFile(raw).metadata.num_rows if raw.is_file() and not raw.is_symlink() else -1
    return run, frame, digest, loaded_rows


def measured_candidate(spec: ReleaseSpec, candidate: Candidate) -> pd.DataFrame:
    """The candidate as expectations should see it: the table itself, or a two-table release's groups.

    For Anatomy: one row per record of its sensitive table with every QI replaced by the
    group id, so GX's k / l / t expectations measure the groups. A candidate staged inside the
    database is read from its staging table or file, refused above ``source.max_rows_in_memory``.
    """
    if candidate.kind == "pushdown":
        from privacy_plugins.release import pushdown

        return pushdown.measured_frame(spec, candidate)
    if not candidate.linked_path:
        return pd.read_parquet(candidate.path)
    return joined_view(pd.read_parquet(candidate.linked_path), candidate.group_column, spec.quasi_identifiers)


def check_step(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    run_id: str | None = None,
    allowed_failures: Collection[str] = (),
    keep_workdir: bool = False,
) -> CheckResult:
    """Re-measure every requirement on the candidate with the core, plus identifiers and row accounting.

    Inside the database the staged rows are measured there with ``GROUP BY``. When a check
    outside ``allowed_failures`` (the caller's warn-only checks) fails, the candidate can never
    be published: its staging table is dropped and the run's working folder removed (unless
    ``keep_workdir`` or the spec's ``workdir:``).
    """
    result = _check(spec, candidate, run_id, allowed_failures)
    if any(not c.passed and c.name not in allowed_failures for c in result.checks):
        _end_unpublished(spec, result.run_id, keep_workdir)
    return result


def _check(
    spec: ReleaseSpec, candidate: Candidate, run_id: str | None, allowed_failures: Collection[str]
) -> CheckResult:
    """:func:`check_step` (in memory, or dispatched inside the database)."""
    if _inside_database(spec):
        from privacy_plugins.release import pushdown

        return pushdown.check(spec, candidate, run_id=run_id, allowed_failures=allowed_failures)
    run, frame, digest, loaded_rows = _candidate_frame(spec, candidate, run_id)
    linked, digest = _candidate_linked(candidate, run_dir(spec, run), digest)
    checks = _measure(spec, frame, candidate, loaded_rows, linked)
    return CheckResult(
        passed=all(c.passed for c in checks),
        checks=checks,
        candidate_path=candidate.path,
        candidate_sha256=digest,
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
    )


def accounting(candidate: Candidate) -> dict[str, Any]:
    """The candidate's accounting that a publication's numbers carry beside the measures."""
    return {
        "rows_in": candidate.rows_in,
        "suppressed": candidate.suppressed,
        "ncp": candidate.ncp,
        "algorithm": candidate.algorithm,
    }


def accepted_check(spec: ReleaseSpec, candidate: Candidate, check: CheckResult, run_id: str | None) -> str:
    """The run of a passed check result of exactly this candidate; publishing refuses anything else (both modes)."""
    if not check.passed:
        raise ReleaseBlocked(f"release {spec.name!r} not published; failed checks:\n{check.summary()}")
    run, _ = accept_artifact(spec, check, run_id, "check result")
    if check.candidate_path != candidate.path or check.run_id != candidate.run_id:
        raise ReleaseBlocked("the check result belongs to another candidate; re-run the check")
    return run


def publish_step(
    spec: ReleaseSpec,
    candidate: Candidate,
    check: CheckResult,
    *,
    run_id: str | None = None,
    allowed_failures: Collection[str] = (),
) -> Publication:
    """Publish the candidate atomically — only when it passes, re-measured on the very bytes written.

    The ``CheckResult`` must have passed and belong to this candidate and run, but
    it is not trusted: every requirement is measured again on the frame parsed
    from the candidate's bytes, and those bytes are what is written.

    Args:
        spec: the release spec (for Dagster, the gate's tightened spec).
        candidate: the ``anonymize_step`` artifact.
        check: the ``check_step`` artifact of that candidate.
        run_id: this run's id; ``None`` accepts the run the artifacts name.
        allowed_failures: check names that may fail without blocking (the code's own
            severity settings, e.g. Dagster's warn-only checks — never read from an artifact).

    Raises:
        ReleaseBlocked: a check failed, the artifacts disagree, or the candidate changed.
        DestinationBusy: another release is publishing to the same destination right now.

    Inside the database the staged rows are re-measured there (a staging table inside the
    swap transaction itself) and swapped in or published from the staged file.
    """
    from privacy_plugins.release import receipts

    done = receipts.already_published(spec, candidate, check, run_id)  # a re-run of a publish that committed
    if done is not None:
        return done
    if _inside_database(spec):
        from privacy_plugins.release import pushdown

        return pushdown.publish(spec, candidate, check, run_id=run_id, allowed_failures=allowed_failures)
    run = accepted_check(spec, candidate, check, run_id)
    try:
        _, frame, digest, loaded_rows = _candidate_frame(spec, candidate, run)
        linked, digest = _candidate_linked(candidate, run_dir(spec, run), digest)
    except ForeignArtifactError as exc:
        raise ReleaseBlocked(f"nothing was published: {exc}") from exc
    if digest != check.candidate_sha256:
        # Another run (or a person) replaced the file after it was checked.
        raise ReleaseBlocked("the candidate changed after it was checked; nothing was published; re-run the check")
    failed = [c for c in _measure(spec, frame, candidate, loaded_rows, linked) if not c.passed]
    blocking = [c for c in failed if c.name not in allowed_failures]
    if blocking:
        summary = "\n".join(f"{c.requirement}: {c.detail}" for c in blocking)
        raise ReleaseBlocked(
            f"release {spec.name!r} not published: re-measured before writing, the candidate fails:\n{summary}"
        )
    found = {"table": file_columns(Path(candidate.path))}
    if linked is not None:
        found["linked"] = file_columns(Path(candidate.linked_path))
    refuse_foreign_columns(candidate, run_dir(spec, run), found)
    measured = frame if linked is None else joined_view(linked, candidate.group_column, spec.quasi_identifiers)
    numbers = measure_published(spec, measured) | accounting(candidate)  # two tables: their groups, as checked
    with destination_lock(spec.destination):
        receipts.write_receipt(spec, check, numbers, list(measured.columns), "publishing")
        if linked is not None:  # both tables or neither
            rows = publish_linked({"qit": frame, "st": linked}, spec.destination)["qit"]
        else:
            rows = publish_table(frame, spec.destination)
        receipts.write_receipt(spec, check, numbers, list(measured.columns), "published")
    return Publication(
        destination=spec.destination.describe(), table=spec.destination.table, rows=rows, numbers=numbers
    )
