"""The publish gate: the verdicts the asset checks show, recomputed by ``published`` right before it writes.

Blocking checks stop ``published`` within a run. A run that selects ``published``
alone does not run them, so ``published`` re-measures the candidate through the
core (``check_step``, plus any GX suite) and hands the result to
``publish_step``, which refuses to write when it did not pass. Warn-only
failures stay listed but do not block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from privacy_plugins.integrations.dagster.gx_suites import SuiteRef, run_suite
from privacy_plugins.integrations.dagster.naming import requirement_check_names
from privacy_plugins.release import Candidate, CheckResult, ReleaseBlocked, ReleaseSpec, RequirementCheck, check_step

__all__ = ["gate", "named_checks"]


def _named(spec: ReleaseSpec, result: CheckResult) -> list[tuple[str, RequirementCheck]]:
    names = requirement_check_names(spec)
    if tuple(c.name for c in result.checks) != tuple(names):
        reported = [c.requirement for c in result.checks]
        raise ReleaseBlocked(
            f"release {spec.name!r}: the release layer reported checks {reported} but the graph defines {list(names)}; "
            "rebuild the Dagster definitions"
        )
    return list(zip(names, result.checks, strict=True))


def _warn_only(severities: Mapping[str, str]) -> list[str]:
    """The checks that may fail without blocking (a failed one must not discard a staged candidate)."""
    return [name for name, level in severities.items() if level != "critical"]


def named_checks(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    run_id: str,
    severities: Mapping[str, str] | None = None,
    keep_workdir: bool = False,
) -> list[tuple[str, RequirementCheck]]:
    """``check_step``'s checks, each with its asset check name.

    ``keep_workdir``: a blocking failure leaves the run's folder to the run's end (other steps of
    the run, a GX suite check or a candidate reader, still read the candidate).
    """
    allowed = _warn_only(severities or {})
    result = check_step(spec, candidate, run_id=run_id, allowed_failures=allowed, keep_workdir=keep_workdir)
    return _named(spec, result)


def gate(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    severities: Mapping[str, str],
    suites: Sequence[SuiteRef] = (),
    run_id: str,
    keep_workdir: bool = False,
) -> tuple[CheckResult, list[str]]:
    """The check result ``publish_step`` needs (passed unless a blocking check failed) and the warn-only failures."""
    # Suites first: a blocking core failure drops a release's staging table inside the database.
    verdicts = []
    if suites:
        verdicts = [(ref, run_suite(ref, spec, candidate)) for ref in suites]
    result = check_step(
        spec, candidate, run_id=run_id, allowed_failures=_warn_only(severities), keep_workdir=keep_workdir
    )
    named = _named(spec, result)
    checks = [check for _, check in named]
    blocking = [name for name, check in named if not check.passed and severities[name] == "critical"]
    warned = [name for name, check in named if not check.passed and severities[name] != "critical"]
    for ref, verdict in verdicts:
        checks.append(
            RequirementCheck(ref.check_name, not verdict.failed, None, None, verdict.message, name=ref.check_name)
        )
        if verdict.blocks:
            blocking.append(ref.check_name)
        elif verdict.failed:
            warned.append(ref.check_name)
    return dataclasses.replace(result, passed=not blocking, checks=checks), warned
