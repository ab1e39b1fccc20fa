"""A scheduled re-measurement of ``published``: the release still meets its requirements at the destination.

``release.monitoring()`` gives an asset check on ``published`` (``<prefix>/published``
→ ``still_meets_requirements``) that reads the table now at the destination and
measures it with the core, a job running only that check, and a schedule for
the job (daily by default). The check fails with ERROR when the table no longer
meets the requirements or identifiers appear; its metadata are numbers only
(rows, classes, measured k/l/t against the targets). It never writes anything.
"""

# No ``from __future__ import annotations``: Dagster reads the ``context`` annotation at definition time.

from typing import Any

import dagster as dg

from privacy_plugins.integrations.dagster.binding import ReleaseBinding
from privacy_plugins.release.linked import read_release
from privacy_plugins.release.published_numbers import measure_published

__all__ = ["MONITOR_CHECK", "release_monitoring"]

MONITOR_CHECK = "still_meets_requirements"


def release_monitoring(binding: ReleaseBinding, *, cron_schedule: str = "@daily") -> dg.Definitions:
    """The monitoring check on ``published``, its job ``<prefix>_monitor`` and a schedule for it."""
    published_key = binding.key("published")

    @dg.asset_check(
        asset=published_key,
        name=MONITOR_CHECK,
        description="Re-measures the published table against the release's requirements (numbers only).",
        required_resource_keys={binding.resource_key},
    )
    def still_meets_requirements(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        spec = binding.release_spec(context)
        table = read_release(spec)
        if table is None:
            return dg.AssetCheckResult(
                passed=False,
                severity=dg.AssetCheckSeverity.ERROR,
                description=f"nothing is published at {spec.destination.describe()}",
            )
        numbers = measure_published(spec, table)
        metadata: dict[str, Any] = {"rows": numbers["rows"], "classes": numbers["classes"]}
        for name, value in numbers["measured"].items():
            if value is not None:
                metadata[f"measured {name}"] = value
            if numbers["targets"].get(name) is not None:
                metadata[f"target {name}"] = numbers["targets"][name]
        return dg.AssetCheckResult(
            passed=bool(numbers["holds"]),
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=metadata,
            description="meets the requirements" if numbers["holds"] else "no longer meets the requirements",
        )

    job = dg.define_asset_job(
        f"{binding.namespace}_monitor",
        selection=dg.AssetSelection.checks(dg.AssetCheckKey(published_key, MONITOR_CHECK)),
    )
    schedule = dg.ScheduleDefinition(job=job, cron_schedule=cron_schedule)
    return dg.Definitions(asset_checks=[still_meets_requirements], jobs=[job], schedules=[schedule])
