"""The five release steps, each a function with a typed, JSON-able input and output.

Orchestrators (Airflow tasks, Dagster assets) run them separately and pass the
small artifacts of :mod:`.artifacts` between them — paths and numbers, never DataFrames.
Identifiers are dropped when the table is loaded, so no working file ever holds them.

One path. The algorithm's tags decide how the load and anonymize steps work, whatever
the source (:func:`~privacy_plugins.release.snapshot_path.pushdown_reason`): an algorithm that
``works_on_snapshot`` (full-domain, ``suppressed_rows: remove``) runs *on the weighted
snapshot* — load stores one ``GROUP BY`` of the source (``LoadedTable.kind == "snapshot"``),
anonymize searches it and the source's engine applies the node (:mod:`.snapshot_path`); one
that ``works_per_block`` (k-member, bucket) on a source an engine holds stores the same
``GROUP BY`` (``kind == "blocks"``) and the engine anonymizes it block by block, each block a
task (:mod:`.blocks_path`); every other release reads the rows (``kind == "rows"``) and
anonymizes them in memory. Either
way the anonymize step hands its output to the destination, which stages it
(``Destination.stage``: a run-bound staging table where the rows already are, else the
run's Parquet working file(s)); from there on there is one check and one publish for
every candidate: measured where it is staged (one ``GROUP BY``, or a two-table pair's
groups, :mod:`.staged_candidate`), swapped in by the destination's one atomic swap.

Runs and artifacts. Every step belongs to one run (``run_id``; see
:mod:`~privacy_plugins.release.workarea`): the working files live in that run's
private folder, outside the report folder. Each artifact names its run, its
spec and the spec's source fingerprint, plus the SHA-256 of the working file it
describes; a step refuses an artifact of another run or spec, one whose path is
not the run's own working file or staging table, or one whose file changed since it was written.

Suppressed rows with ``suppressed_rows: mark``. Marked rows are published (every
QI ``*``, sensitive values hidden), so they are one more equivalence class of the
published table and must satisfy the requirements like any other; the
anonymizer suppresses nothing rather than publish a marked class that fails.
``check_step``, ``publish_step``, ``privacy-plugins published`` and the GX
suites all measure the table exactly as published, marked rows included, so
they always agree.

Publishing re-measures. ``publish_step`` does not trust a ``CheckResult``: inside the
destination's swap (its transaction, where the engine has one) it measures the staged
rows again, compares them with what was checked, re-checks every requirement, and refuses
when one fails — or when its columns are not exactly the ones the anonymize step wrote
(:mod:`.written_columns`). A publish re-run for a run that already published succeeds
without writing (:mod:`.receipts`).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.anonymize import AnonymizationResult, anonymize, get_anonymizer, tags_of
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.history import ReleaseHistory
from privacy_plugins.core.models import PrivacyModel, check_name
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.errors import (
    ForeignArtifactError,
    InfeasibleAnonymizationError,
    PrivacyPluginsError,
    ReleaseBlocked,
)
from privacy_plugins.release import receipts
from privacy_plugins.release.artifacts import (
    REPORT_FILE,
    Candidate,
    CheckResult,
    DiagnosisSummary,
    LoadedTable,
    Publication,
    RequirementCheck,
    Solved,
    accept_artifact,
    own_file,
    write_parquet,
    write_report,
)
from privacy_plugins.release.blocks_path import blocks_reason, rows_needed_because, solved_in_blocks
from privacy_plugins.release.column_roles import account_for_columns, pseudonym_key, published_columns, schema_roles
from privacy_plugins.release.composition_gate import (
    cached_composition,
    composition_checks,
    composition_key,
    history_companions,
    read_history,
    run_targets,
)
from privacy_plugins.release.destination import StageRun, open_destination
from privacy_plugins.release.destination.base import Companions
from privacy_plugins.release.diagnosis_reports import write_diagnosis
from privacy_plugins.release.history_anonymize import choose
from privacy_plugins.release.identifier_gate import flag_identifiers
from privacy_plugins.release.judged_tables import judged_tables
from privacy_plugins.release.memory_history import MemoryRows
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.published_numbers import measure_classes
from privacy_plugins.release.release_report import write_release_html
from privacy_plugins.release.requirement_checks import candidate_checks
from privacy_plugins.release.snapshot_path import load_snapshot, pushdown_reason, solved_on_snapshot
from privacy_plugins.release.source_table import rows_in_engine
from privacy_plugins.release.sources import read_source
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staged_candidate import (
    LOADED_FILE,
    SNAPSHOT_FILE,
    candidate_fields,
    discard,
    open_candidate,
)
from privacy_plugins.release.staging import StagedMeasure
from privacy_plugins.release.validation import validate_against_data
from privacy_plugins.release.workarea import destination_lock, new_run_id, remove_run_workdir, run_dir
from privacy_plugins.release.written_columns import record_columns, refuse_foreign_columns

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
    "publish_step",
    "write_diagnosis",
]


def _on_snapshot(spec: ReleaseSpec) -> bool:
    """Whether the algorithm works on the weighted snapshot (its tags decide: ``pushdown_reason``)."""
    return pushdown_reason(spec) is None


def _kinds(spec: ReleaseSpec) -> tuple[str, ...]:
    """The kinds of loaded table this spec's anonymize step accepts (the tags and the source decide).

    A block algorithm on an engine's source is loaded as ``"blocks"``, or as ``"rows"`` when the
    history held a release at the load step (:func:`~privacy_plugins.release.blocks_path.blocks_reason`).
    """
    if _on_snapshot(spec):
        return ("snapshot",)
    return ("blocks", "rows") if blocks_reason(spec) is None else ("rows",)


def _loaded(spec: ReleaseSpec, loaded: LoadedTable, run_id: str | None) -> tuple[str, Path, pd.DataFrame]:
    """The run, its folder and the loaded table or snapshot, read from its exact, unchanged bytes.

    Refuses an artifact of another run or spec, and one of another kind (the spec's algorithm
    changed between tasks: the algorithm is not part of the source fingerprint).
    """
    kinds = _kinds(spec)
    if loaded.kind not in kinds:
        reads = {"snapshot": "weighted snapshot", "blocks": "source's units, block by block", "rows": "rows"}
        raise ForeignArtifactError(
            f"release {spec.name!r} reads the {reads[kinds[0]]}, but the "
            f"loaded table holds the {loaded.kind} (the spec's source or algorithm changed between steps?); "
            "refusing it — re-run from the load step"
        )
    run, folder = accept_artifact(spec, loaded, run_id, "loaded table")
    name = LOADED_FILE if loaded.kind == "rows" else SNAPSHOT_FILE
    return run, folder, own_file(loaded.path, folder / name, loaded.sha256, "loaded table")


def load_step(spec: ReleaseSpec, *, run_id: str | None = None) -> LoadedTable:
    """Read the source, check every column, role, hierarchy and requirement, drop identifiers, store the table.

    An algorithm that needs the rows gets the table itself (identifiers dropped) as ``raw.parquet``;
    one that works on the snapshot gets only the weighted snapshot (``kind="snapshot"``, one ``GROUP BY``
    where the rows are; see :mod:`~privacy_plugins.release.snapshot_path`).

    Args:
        spec: the release spec.
        run_id: this run's id (a fresh one when ``None``); later steps of the run must pass the same.

    Raises:
        ConfigurationError (and subclasses): bad spec or data — raised before anything is written.
    """
    spec.destination.check_writable()  # an unwritable destination or report folder fails before any work
    spec.report.check_writable()
    earlier = 0
    if spec.history.enabled:  # so does a missing or changed release history (read while no release publishes)
        with destination_lock(spec.destination):
            earlier = len(read_history(spec, open_destination(spec.destination)))
    if _on_snapshot(spec):
        return load_snapshot(spec, run_id=run_id or new_run_id())
    in_blocks = blocks_reason(spec, earlier_releases=earlier)
    if in_blocks is None:  # local recoding block by block where the rows are: only the units are stored
        return load_snapshot(spec, run_id=run_id or new_run_id(), kind="blocks")
    key = pseudonym_key(spec)  # a missing or short key, or a column without a role: exit 2 before any row is read
    schema_roles(spec)
    block_algorithm = tags_of(get_anonymizer(spec.algorithm.name)).works_per_block
    because = rows_needed_because(spec, in_blocks) if block_algorithm and rows_in_engine(spec) else None
    frame = validate_frame(read_source(spec.source, needs_rows_because=because))
    roles = account_for_columns(spec, [str(c) for c in frame.columns])
    validate_against_data(spec, frame)
    flagged = flag_identifiers(spec, frame, roles)
    table = published_columns(spec, frame, key)
    run = run_id or new_run_id()
    path = run_dir(spec, run, create=True) / LOADED_FILE
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
        column_roles=roles,
        flagged_identifiers=flagged,
    )


def diagnose_step(
    spec: ReleaseSpec, loaded: LoadedTable, *, run_id: str | None = None, on_progress: OnProgress | None = None
) -> DiagnosisSummary:
    """Diagnose the raw table and write the JSON and HTML reports (kept even if the release fails).

    ``on_progress("diagnose", subsets_measured, total)`` is called after each subset; progress is
    also logged on the ``privacy_plugins.release`` logger every few seconds. From a weighted
    snapshot the same diagnosis is computed with its counts as weights.
    """
    _, _, frame = _loaded(spec, loaded, run_id)
    weights = None if loaded.kind == "rows" else COUNT_COLUMN
    return write_diagnosis(spec, frame, weights=weights, on_progress=on_progress, flagged=loaded.flagged_identifiers)


def anonymize_step(
    spec: ReleaseSpec,
    loaded: LoadedTable,
    *,
    run_id: str | None = None,
    on_progress: OnProgress | None = None,
    keep_workdir: bool = False,
) -> Candidate:
    """Anonymize and stage the candidate through the destination (raises InfeasibleAnonymizationError when impossible).

    One body: the algorithm solves the snapshot (the source's engine applies the node,
    :func:`~privacy_plugins.release.snapshot_path.solved_on_snapshot`) or the rows in memory;
    the destination stages what it published (a staging table where the rows are, else the
    run's working file(s)). ``on_progress("anonymize", done, total)`` reports the algorithm's
    progress. When no generalization meets the requirements nothing can ever be published
    from this run: its working folder is removed (unless ``keep_workdir`` or the spec's ``workdir:``).
    """
    started = time.monotonic()
    try:
        run, folder, stored = _loaded(spec, loaded, run_id)
        for stale in [*folder.glob("candidate*.parquet"), folder / REPORT_FILE]:  # never an earlier candidate
            stale.unlink(missing_ok=True)
        solve = {"snapshot": solved_on_snapshot, "blocks": solved_in_blocks}.get(loaded.kind, _solved_in_memory)
        with solve(spec, loaded, stored, on_progress) as solved:
            staged = open_destination(spec.destination).stage(solved.parts, StageRun(spec, run, folder))
            columns = {part: table.columns() for part, table in solved.parts.items()}
    except InfeasibleAnonymizationError:
        _end_unpublished(spec, loaded.run_id, keep_workdir)
        raise
    record_columns(folder, columns)
    report_path = write_report(folder, solved.report)
    where = staged.name if staged.kind == "file" else f"{solved.engine}:{staged.name}"
    LOGGER.info(
        "anonymize: %d rows in, %d published, %d suppressed, staged at %s (%.1fs)",
        solved.rows_in,
        solved.rows_out,
        solved.suppressed,
        where,
        time.monotonic() - started,
    )
    return Candidate(
        report_path=str(report_path),
        algorithm=solved.algorithm,
        levels=solved.levels,
        rows_in=solved.rows_in,
        rows_out=solved.rows_out,
        suppressed=solved.suppressed,
        out_of_scope=solved.out_of_scope,
        dropped_identifiers=list(loaded.dropped_identifiers),
        ncp=solved.ncp,
        run_id=run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        headline=solved.headline,
        group_column=solved.group_column,
        history=dict(solved.history),
        columns=columns,
        flagged_identifiers=list(loaded.flagged_identifiers),
        column_roles=dict(loaded.column_roles),
        **candidate_fields(staged, where),
    )


def _end_unpublished(spec: ReleaseSpec, run: str, keep: bool) -> None:
    """Remove the working files of a run that can never publish (no raw row stays on disk)."""
    if remove_run_workdir(spec, run, keep=keep):
        LOGGER.info("removed the working files of run %s: it cannot publish", run)


@contextmanager
def _solved_in_memory(
    spec: ReleaseSpec, loaded: LoadedTable, frame: pd.DataFrame, on_progress: OnProgress | None
) -> Iterator[Solved]:
    """The rows anonymized in memory by the core (which re-measures its output: ``verify``).

    With earlier releases in the history, :func:`~privacy_plugins.release.history_anonymize.choose`
    decides on the rows' units, as on the snapshot path (:mod:`.memory_history`).
    """
    hierarchies = spec.build_hierarchies(frame)
    published_as_is = ("insensitive", "pseudonym", "date_shifted")
    insensitive = [c for c in frame.columns if loaded.column_roles.get(str(c)) in published_as_is]
    rows = MemoryRows(spec, frame, hierarchies)

    def solve(extra: Sequence[PrivacyModel]) -> AnonymizationResult:
        return anonymize(
            rows.table,
            algorithm=spec.algorithm.name,
            quasi_identifiers=list(spec.quasi_identifiers),
            hierarchies=hierarchies,
            models=[*spec.models(), *extra],
            sensitive_attributes=list(spec.sensitive_attributes),
            insensitive=[*insensitive, *rows.helper_columns],
            suppression_limit=spec.requirements.suppression_limit,
            seed=spec.algorithm.seed,
            **spec.algorithm.options,
            progress=StepProgress("anonymize", "nodes checked", on_progress),
        )

    yield rows.solved(choose(rows.history, rows.units, solve, rows.published_units, rows.signature))


def check_step(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    run_id: str | None = None,
    allowed_failures: Collection[str] = (),
    keep_workdir: bool = False,
) -> CheckResult:
    """Re-measure every requirement on the staged candidate with the core, plus identifiers and row accounting.

    Measured where it is staged (one ``GROUP BY``). When a check outside ``allowed_failures``
    (the caller's warn-only checks) fails, the candidate can never be published: its staging
    table is dropped and the run's working folder removed (unless ``keep_workdir`` or the
    spec's ``workdir:``).
    """
    started = time.monotonic()
    opened = open_candidate(spec, candidate, run_id)
    measured = opened.measure()
    checks = candidate_checks(
        spec, measured, candidate, opened.loaded_rows, judged_tables(spec, opened.folder, measured)
    )
    key = ""
    if spec.history.enabled:  # the candidate against every earlier release of its history
        history = read_history(spec, opened.destination)
        checks += composition_checks(spec, history, measured, run_targets(spec, opened.folder))
        key = composition_key(spec, history, measured)
    LOGGER.info(
        "check: %d of %d checks passed on %d staged rows (%.1fs)",
        sum(c.passed for c in checks),
        len(checks),
        measured.rows,
        time.monotonic() - started,
    )
    if any(not c.passed and c.name not in allowed_failures for c in checks):
        discard(spec, candidate)
        _end_unpublished(spec, opened.run, keep_workdir)
    return CheckResult(
        passed=all(c.passed for c in checks),
        checks=checks,
        candidate_path=candidate.path,
        candidate_sha256=measured.digest,
        run_id=opened.run,
        spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
        composition_key=key,
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
    """The run of a passed check result of exactly this candidate; publishing refuses anything else."""
    if not check.passed:
        raise ReleaseBlocked(f"release {spec.name!r} not published; failed checks:\n{check.summary()}")
    run, _ = accept_artifact(spec, check, run_id, "check result")
    if check.candidate_path != candidate.path or check.run_id != candidate.run_id:
        raise ReleaseBlocked("the check result belongs to another candidate; re-run the check")
    return run


def _numbers(spec: ReleaseSpec, measured: StagedMeasure, candidate: Candidate) -> dict[str, Any]:
    """The publication's numbers: the staged rows measured, plus the candidate's accounting."""
    return measure_classes(spec, measured.classes, rows=measured.rows, columns=measured.columns) | accounting(candidate)


def publish_step(
    spec: ReleaseSpec,
    candidate: Candidate,
    check: CheckResult,
    *,
    run_id: str | None = None,
    allowed_failures: Collection[str] = (),
) -> Publication:
    """Publish the candidate atomically — only when it passes, re-measured on exactly what is swapped in.

    The ``CheckResult`` must have passed and belong to this candidate and run, but it is
    not trusted: inside the destination's swap the staged rows are measured again, compared
    with what was checked, and every requirement re-checked, before anything is replaced.

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
    """
    done = receipts.already_published(spec, candidate, check, run_id)  # a re-run of a publish that committed
    if done is not None:
        return done
    started = time.monotonic()
    run = accepted_check(spec, candidate, check, run_id)
    try:
        opened = open_candidate(spec, candidate, run)
    except ForeignArtifactError as exc:
        raise ReleaseBlocked(f"nothing was published: {exc}") from exc

    def accept(measured: StagedMeasure) -> Companions | None:
        """Refuse staged rows that changed since the check, fail a requirement or have other columns.

        Returns the release history with this release appended, swapped in with it.
        """
        if measured.digest != check.candidate_sha256:
            raise ReleaseBlocked("the candidate changed after it was checked; nothing was published; re-run the check")
        tables = judged_tables(spec, opened.folder, measured)
        checks = candidate_checks(spec, measured, candidate, opened.loaded_rows, tables)
        if history is not None:  # read under the destination's lock: no release can slip in between
            cached = cached_composition(spec, history, measured, check)  # unchanged since the check: its verdict
            checks += cached or composition_checks(spec, history, measured, run_targets(spec, opened.folder))
        remeasured[:] = checks  # what release.html shows
        failed = [c for c in checks if not c.passed and c.name not in allowed_failures]
        if failed:
            summary = "\n".join(f"{c.requirement}: {c.detail}" for c in failed)
            raise ReleaseBlocked(
                f"release {spec.name!r} not published: re-measured before writing, the candidate fails:\n{summary}"
            )
        refuse_foreign_columns(candidate, opened.folder, measured.written)
        receipts.write_receipt(spec, check, _numbers(spec, measured, candidate), measured.columns, "publishing")
        if history is None:
            return None
        return history_companions(spec, opened.destination, history, run_id=run, measured=measured, candidate=candidate)

    history: ReleaseHistory | None = None
    remeasured: list[RequirementCheck] = []
    try:
        with destination_lock(spec.destination):
            if spec.history.enabled:
                history = read_history(spec, opened.destination)
            measured = opened.destination.swap(opened.staged, opened.stage_run, accept)
    except ReleaseBlocked:
        discard(spec, candidate)
        raise
    LOGGER.info(
        "publish: %d rows published to %s (%.1fs)",
        measured.rows,
        spec.destination.describe(),
        time.monotonic() - started,
    )
    numbers = _numbers(spec, measured, candidate)
    receipts.write_receipt(spec, check, numbers, measured.columns, "published")
    try:  # published already: a report that cannot be written is said, not a failed publish
        write_release_html(
            spec,
            candidate,
            measured=measured,
            checks=remeasured,
            folder=opened.folder,
            loaded_rows=opened.loaded_rows,
            earlier_releases=len(history) if history is not None else None,
            run_id=run,
        )
    except (OSError, PrivacyPluginsError) as exc:
        LOGGER.warning("publish: release.html not written: %s", " ".join(str(exc).split()))
    return Publication(
        destination=spec.destination.describe(), table=spec.destination.table, rows=measured.rows, numbers=numbers
    )
