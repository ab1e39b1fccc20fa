"""Re-measure what a release has published and fail (alert) when it drifted from what was announced.

Run on a schedule (see ``dags/privacy_release_monitor.py``): the published table
is read back, measured with the same core measures as the release's check, and
compared with the numbers its asset event announced (``extra``). A table that
no longer meets the requirements, or whose rows, classes or measured k/l/t
changed since the release (someone rewrote it, a partial restore, another job
writing there) fails the task with the differences — numbers only — so the
DAG's failure notifications become the alert.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.sdk.exceptions import AirflowFailException

from privacy_plugins.integrations.airflow.connections import airflow_resolver
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.connections import connection_resolver
from privacy_plugins.release.linked import read_release
from privacy_plugins.release.published_numbers import drift, measure_published

__all__ = ["PublishedDrift", "check_published"]


class PublishedDrift(AirflowFailException):
    """The published table no longer matches its release (a retry reads the same table, so no retries)."""


def check_published(
    spec: ReleaseSpec | str, *, released: Mapping[str, Any] | None = None, tolerance: float = 1e-9
) -> dict[str, Any]:
    """The published table's numbers now; raises :class:`PublishedDrift` on drift or when nothing is published.

    Args:
        spec: the release spec or its YAML file (its destination; a ``conn_id`` resolves through Airflow).
        released: the release's announced numbers (the asset event's ``extra`` or its ``numbers``);
            ``None`` checks only that the requirements still hold.
        tolerance: allowed absolute difference of a measure.
    """
    if not isinstance(spec, ReleaseSpec):
        spec = ReleaseSpec.from_yaml(spec)
    with connection_resolver(airflow_resolver):
        table = read_release(spec)
    if table is None:
        raise PublishedDrift(f"nothing is published at {spec.destination.describe()}")
    now = measure_published(spec, table)
    announced = dict(released.get("numbers", released)) if released else {}
    problems = drift(announced, now, tolerance=tolerance)
    if problems:
        raise PublishedDrift(f"{spec.destination.describe()} drifted from its release: " + "; ".join(problems))
    return now
