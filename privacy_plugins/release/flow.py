"""run_release: the five steps in order, publishing only when every check passed.

A release that cannot meet its requirements — no generalization satisfies them,
or a re-measured requirement fails — publishes nothing, leaves the destination
as it was, and still writes the diagnosis report and ``release.json`` so the
user can see why.

Each call is one run with its own id and private working folder (see
:mod:`~privacy_plugins.release.workarea`), removed when the run ends — published,
refused or crashed — unless ``keep_workdir`` or the spec's ``workdir:`` asks to
keep it. Two releases started side by side never see each other's files.

An algorithm that works on the weighted snapshot (full-domain) releases a database,
Spark or large-file source without reading a source row into Python
(:mod:`~privacy_plugins.release.snapshot_path`); every release stages its candidate
through the destination, and a run that ends unpublished drops its staging table there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import InfeasibleAnonymizationError
from privacy_plugins.release.column_roles import column_summary
from privacy_plugins.release.progress import OnProgress
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staged_candidate import discard
from privacy_plugins.release.steps import (
    Candidate,
    CheckResult,
    DiagnosisSummary,
    LoadedTable,
    Publication,
    anonymize_step,
    check_step,
    diagnose_step,
    load_step,
    publish_step,
)
from privacy_plugins.release.workarea import keep_run_dir, new_run_id, remove_run_dir, run_dir

__all__ = ["STEPS", "ReleaseResult", "run_release"]

STEPS = ("load", "diagnose", "anonymize", "check", "publish")


@dataclass(frozen=True)
class ReleaseResult:
    """Everything a release did; ``published`` is ``None`` when nothing was published."""

    name: str
    loaded: LoadedTable
    diagnosis: DiagnosisSummary
    candidate: Candidate | None
    check: CheckResult | None
    published: Publication | None
    failure: str | None
    run_id: str = ""
    workdir: str | None = None
    #: Every column's role, what was dropped, pseudonymized, flagged (``column_roles.column_summary``).
    columns: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the release was published."""
        return self.published is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, as written to ``release.json``."""
        return to_jsonable(self) | {"passed": self.passed}


def run_release(
    spec: ReleaseSpec,
    *,
    on_step: Callable[[str], None] | None = None,
    on_progress: OnProgress | None = None,
    run_id: str | None = None,
    keep_workdir: bool = False,
) -> ReleaseResult:
    """Load, diagnose, anonymize, check and — if every check passed — publish.

    Args:
        spec: the validated release spec.
        on_step: called with each step's name as it starts (for progress display).
        on_progress: called as ``on_progress(step, done, total)`` inside the long steps
            (subsets diagnosed, lattice nodes checked; ``total`` may be ``None``).
        run_id: this run's id (default: a fresh one).
        keep_workdir: keep the run's private working folder (also kept when the spec sets ``workdir:``);
            its path is ``ReleaseResult.workdir``.

    Raises:
        ConfigurationError, HierarchyError, UnknownColumnError: bad spec or data (before anything is written).
    """

    def step(name: str) -> None:
        if on_step is not None:
            on_step(name)

    run = run_id or new_run_id()
    keep = keep_workdir or spec.workdir is not None
    failure: str | None
    candidate: Candidate | None = None
    published: Publication | None = None
    try:
        step("load")
        loaded = load_step(spec, run_id=run)
        step("diagnose")
        diagnosis = diagnose_step(spec, loaded, run_id=run, on_progress=on_progress)
        check = None
        failure = None
        step("anonymize")
        try:
            candidate = anonymize_step(spec, loaded, run_id=run, on_progress=on_progress, keep_workdir=keep)
        except InfeasibleAnonymizationError as exc:
            failure = f"requirements cannot be met: {exc}"
        if candidate is not None:
            step("check")
            check = check_step(spec, candidate, run_id=run, keep_workdir=keep)
            if check.passed:
                step("publish")
                published = publish_step(spec, candidate, check, run_id=run)
            else:
                failure = f"checks failed on the anonymized table:\n{check.summary()}"
        kept = str(run_dir(spec, run)) if keep else None
    finally:
        if candidate is not None and published is None:
            discard(spec, candidate)  # a staging table or location (working files go with the run's folder)
        if not keep:
            remove_run_dir(spec, run)
        elif keep_workdir:
            keep_run_dir(spec, run)  # never swept by age: the user removes it
    return _finish(spec, loaded, diagnosis, candidate, check, published, failure, run, kept)


def _finish(
    spec: ReleaseSpec,
    loaded: LoadedTable,
    diagnosis: DiagnosisSummary,
    candidate: Candidate | None,
    check: CheckResult | None,
    published: Publication | None,
    failure: str | None,
    run: str,
    kept: str | None,
) -> ReleaseResult:
    """The result, also written to ``release.json``."""
    result = ReleaseResult(
        name=spec.name,
        loaded=loaded,
        diagnosis=diagnosis,
        candidate=candidate,
        check=check,
        published=published,
        failure=failure,
        run_id=run,
        workdir=kept,
        columns=column_summary(
            spec, loaded.column_roles, loaded.flagged_identifiers, candidate.levels if candidate is not None else {}
        ),
    )
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    spec.report.release_json.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    return result
