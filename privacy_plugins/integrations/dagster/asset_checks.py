"""Blocking asset checks on ``anonymized_candidate``: one per requirement, plus one per GX suite.

All requirement checks run in one op (one read, one ``check_step``) and can be
re-run one by one from the UI. Each is ``blocking=True``: a failure with ERROR
severity stops ``published`` in the same run. A check marked ``warning`` or
``info`` fails with WARN and does not block. A check that raises also stops
``published``.
"""

# No ``from __future__ import annotations``: Dagster reads the ``context`` annotation at definition time.

from collections.abc import Iterator

import dagster as dg

from privacy_plugins.integrations.dagster.binding import ReleaseBinding, runs_whole_here
from privacy_plugins.integrations.dagster.gate import named_checks
from privacy_plugins.integrations.dagster.gx_suites import SuiteRef, run_suite
from privacy_plugins.integrations.dagster.metadata import check_metadata
from privacy_plugins.integrations.dagster.naming import SEVERITIES, requirement_check_names
from privacy_plugins.release import Candidate

__all__ = ["build_release_checks"]

CANDIDATE = "anonymized_candidate"


def _requirement_checks(binding: ReleaseBinding) -> dg.AssetChecksDefinition:
    candidate_key = binding.key(CANDIDATE)
    specs = [
        dg.AssetCheckSpec(
            name,
            asset=candidate_key,
            blocking=True,
            description=f"{name} re-measured on the candidate by the core (GX severity {binding.severities[name]})",
        )
        for name in requirement_check_names(binding.spec)
    ]

    @dg.multi_asset_check(
        specs=specs,
        name=f"{binding.namespace}__privacy_requirements",
        can_subset=True,
        required_resource_keys={binding.resource_key, binding.artifacts_key},
        ins={"candidate": dg.AssetIn(key=candidate_key)},  # through the run's artifacts IO manager
    )
    def privacy_requirements(
        context: dg.AssetCheckExecutionContext, candidate: Candidate
    ) -> Iterator[dg.AssetCheckResult]:
        spec, run = binding.gate_spec(context), binding.run_id(context)
        selected = {key.name for key in context.selected_asset_check_keys}
        keep = runs_whole_here(context)  # the run's end removes the folder, after every reader
        artifacts = binding.artifacts(context)
        try:
            named = named_checks(spec, candidate, run_id=run, severities=binding.severities, keep_workdir=keep)
        except BaseException:
            if not keep:
                artifacts.end_run(spec, run)
            raise
        blocked = any(not check.passed and binding.severities[name] == "critical" for name, check in named)
        if blocked and not keep:
            artifacts.end_run(spec, run)  # nothing can publish from this run: no raw row stays in the store
        for name, check in named:
            if name in selected:
                level = binding.severities[name]
                yield dg.AssetCheckResult(
                    asset_key=candidate_key,
                    check_name=name,
                    passed=check.passed,
                    severity=SEVERITIES[level],
                    description=check.detail,
                    metadata=check_metadata(check, severity=level),
                )

    return privacy_requirements


def _suite_check(binding: ReleaseBinding, ref: SuiteRef) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=binding.key(CANDIDATE),
        name=ref.check_name,
        blocking=True,
        required_resource_keys={binding.resource_key, binding.artifacts_key},
        description=f"GX suite {ref.name!r} ({ref.path.name}) on the candidate; its severities decide",
    )
    def suite_check(context: dg.AssetCheckExecutionContext, anonymized_candidate: Candidate) -> dg.AssetCheckResult:
        spec = binding.release_spec(context)
        ends_run = not runs_whole_here(context)  # one process per step: a blocked run ends here
        try:
            verdict = run_suite(ref, spec, anonymized_candidate)
        except BaseException:
            if ends_run:
                binding.artifacts(context).end_run(spec, binding.run_id(context))
            raise
        if verdict.blocks and ends_run:
            binding.artifacts(context).end_run(spec, binding.run_id(context))  # no raw row stays in the store
        warn_only = verdict.failed and not verdict.blocks
        return dg.AssetCheckResult(
            passed=not verdict.failed,
            severity=dg.AssetCheckSeverity.WARN if warn_only else dg.AssetCheckSeverity.ERROR,
            description=verdict.message,
            metadata={
                "suite": dg.MetadataValue.path(str(ref.path)),
                "expectations": dg.MetadataValue.json(verdict.outcomes),
                "failed": verdict.failed,
            },
        )

    return suite_check


def build_release_checks(binding: ReleaseBinding) -> tuple[dg.AssetChecksDefinition, ...]:
    """The blocking checks of one release graph (requirements first, then one per GX suite)."""
    return (_requirement_checks(binding), *(_suite_check(binding, ref) for ref in binding.suites))
