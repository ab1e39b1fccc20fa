"""A re-measurement of ``published`` on every cron tick: the release still meets its requirements at the destination.

``release.monitoring()`` gives an asset check on ``published`` (``<prefix>/published``
→ ``still_meets_requirements``) that reads the table now at the destination and
measures it with the core. It carries an ``AutomationCondition`` (each tick of
``cron_schedule``, daily by default): the automation sensor (``dg dev`` or the
daemon; ``default_automation_condition_sensor``) requests it, no job or schedule
needed; ``<prefix>_monitor`` is a job running only the check, for a manual run. A partitioned release
re-measures every partition's published table. The check fails with ERROR when a table no longer
meets the requirements or identifiers appear; its metadata are numbers only
(rows, classes, measured k/l/t against the targets). It never writes anything.
"""

# No ``from __future__ import annotations``: Dagster reads the ``context`` annotation at definition time.

from types import SimpleNamespace
from typing import Any

import dagster as dg

from privacy_plugins.integrations.dagster.binding import ReleaseBinding
from privacy_plugins.integrations.dagster.partitions import PARTITION_TAG
from privacy_plugins.release.linked import read_release
from privacy_plugins.release.published_numbers import measure_published

__all__ = ["MONITOR_CHECK", "release_monitoring"]

MONITOR_CHECK = "still_meets_requirements"


def _measured(spec: Any) -> dict[str, Any] | None:
    """The published table's numbers (``None``: nothing published there)."""
    table = read_release(spec)
    return None if table is None else measure_published(spec, table)


def _metadata(numbers: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"rows": numbers["rows"], "classes": numbers["classes"]}
    for name, value in numbers["measured"].items():
        if value is not None:
            metadata[f"measured {name}"] = value
        if numbers["targets"].get(name) is not None:
            metadata[f"target {name}"] = numbers["targets"][name]
    return metadata


def _partitions_verdict(binding: ReleaseBinding, context: Any) -> dg.AssetCheckResult:
    """Every partition's published table re-measured (partitions not published yet are skipped)."""
    keys = binding.partitions_def.get_partition_keys(dynamic_partitions_store=context.instance)  # type: ignore[union-attr]
    measured, failing = 0, []
    for key in keys:
        run = SimpleNamespace(tags={PARTITION_TAG: key})
        numbers = _measured(
            binding.release_spec(SimpleNamespace(resources=context.resources, run=run, instance=context.instance))
        )
        if numbers is None:
            continue
        measured += 1
        if not numbers["holds"]:
            failing.append(key)
    passed = measured > 0 and not failing
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"partitions measured": measured, "partitions failing": len(failing), "failing": ", ".join(failing)},
        description=(
            "no partition is published yet"
            if not measured
            else f"{len(failing)} of {measured} published partitions no longer meet the requirements"
            if failing
            else f"all {measured} published partitions meet the requirements"
        ),
    )


def release_monitoring(binding: ReleaseBinding, *, cron_schedule: str = "@daily") -> dg.Definitions:
    """The monitoring check on ``published`` (automated on each ``cron_schedule`` tick), and a job to run it by hand."""
    published_key = binding.key("published")
    # each tick of the cron, unless a check run is still going (the automation sensor requests it)
    each_tick: Any = dg.AutomationCondition.cron_tick_passed(cron_schedule) & ~dg.AutomationCondition.in_progress()

    @dg.asset_check(
        asset=published_key,
        name=MONITOR_CHECK,
        description="Re-measures the published table against the release's requirements (numbers only).",
        required_resource_keys={binding.resource_key, binding.artifacts_key},
        automation_condition=each_tick,
    )
    def still_meets_requirements(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        if binding.partitions_def is not None:
            return _partitions_verdict(binding, context)
        spec = binding.release_spec(context)
        numbers = _measured(spec)
        if numbers is None:
            return dg.AssetCheckResult(
                passed=False,
                severity=dg.AssetCheckSeverity.ERROR,
                description=f"nothing is published at {spec.destination.describe()}",
            )
        return dg.AssetCheckResult(
            passed=bool(numbers["holds"]),
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=_metadata(numbers),
            description="meets the requirements" if numbers["holds"] else "no longer meets the requirements",
        )

    job = dg.define_asset_job(
        f"{binding.namespace}_monitor",
        selection=dg.AssetSelection.checks(dg.AssetCheckKey(published_key, MONITOR_CHECK)),
    )
    return dg.Definitions(asset_checks=[still_meets_requirements], jobs=[job])
