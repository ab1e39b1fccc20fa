"""Monitoring: re-measure the published census release daily and fail (alert) when it drifted.

``remeasure`` reads what ``privacy_release`` published (the spec's destination),
measures it with the core, and compares the numbers with those the latest
``census_release`` asset event announced. A table that no longer meets the
requirements, or whose rows, classes or measured k/l changed since its release,
fails the task with the differences (numbers only); ``on_failure_callback`` is
where a deployment plugs in its alerting (a notifier: e-mail, Slack, ...).
Param: ``spec`` (the release spec YAML). Try it with ``airflow dags test privacy_release_monitor``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Asset, Param, task

REPO = Path(__file__).resolve().parents[1]

CENSUS_RELEASE = Asset(name="census_release", uri="x-privacy-plugins://demo_census/census_release", group="privacy")


def alert(context: Any) -> None:
    """Replace with a notifier (SmtpNotifier, a Slack notifier, ...) in a deployment."""
    logging.getLogger("privacy_release_monitor").error("ALERT: %s", context.get("exception"))


with DAG(
    dag_id="privacy_release_monitor",
    description="Re-measure the published census release and alert when it drifted from what was released",
    schedule="@daily",
    catchup=False,
    params={"spec": Param(str(REPO / "specs" / "demo_census.yaml"), type="string", description="release spec")},
    default_args={"on_failure_callback": alert},
    tags=["privacy", "monitoring"],
):

    @task(inlets=[CENSUS_RELEASE])
    def remeasure(**context: Any) -> dict[str, Any]:
        """The published table's numbers now; fails when they differ from the latest release's."""
        from privacy_plugins.integrations.airflow import check_published

        latest = list(context["inlet_events"][CENSUS_RELEASE].ascending(False).limit(1))
        released = dict(latest[0].extra) if latest else None
        return check_published(context["params"]["spec"], released=released)

    remeasure()
