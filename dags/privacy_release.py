"""The demo privacy release: generated census → load → diagnose → anonymize → check → publish.

The five tasks are in the task group ``demo_census`` (``demo_census.load`` …).

The release is published into the spec's DuckDB file
(``release_output/release.duckdb``, table ``census_release``) only when every
check passes: the spec's requirements, re-measured by the core, and the GX suite
``expectations/demo_release.json``. It runs weekly (and on demand). The publish
task then emits an event for the ``census_release`` asset whose ``extra`` carries
the release's numbers (rows, classes, measured k/l/t, NCP — never values), and
``census_release_consumer`` is scheduled on it and reads them.

Params (trigger form or ``-c``): ``spec`` (the release spec YAML) and
``expectation_suite`` (a GX suite JSON; empty = core checks only). Try it with
``airflow dags test privacy_release``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Asset, Param, task

from privacy_plugins.integrations.airflow import release_tasks

REPO = Path(__file__).resolve().parents[1]

CENSUS_RELEASE = Asset(name="census_release", uri="x-privacy-plugins://demo_census/census_release", group="privacy")

with DAG(
    dag_id="privacy_release",
    description="Anonymize the demo census and publish it only when every privacy check passes",
    schedule="@weekly",
    catchup=False,
    max_active_runs=1,  # one release of a destination at a time
    params={
        "spec": Param(str(REPO / "specs" / "demo_census.yaml"), type="string", description="release spec (YAML)"),
        "expectation_suite": Param(
            str(REPO / "expectations" / "demo_release.json"), type="string", description="GX suite; empty: none"
        ),
    },
    tags=["privacy"],
):
    release_tasks(  # task ids demo_census.load … demo_census.publish
        spec_path="{{ params.spec }}",
        group_id="demo_census",
        expectation_suite="{{ params.expectation_suite }}",
        outlets=[CENSUS_RELEASE],
    )

with DAG(
    dag_id="census_release_consumer",
    description="Runs after every successful census release",
    schedule=[CENSUS_RELEASE],
    tags=["privacy"],
):

    @task(inlets=[CENSUS_RELEASE])
    def announce_release(**context: Any) -> dict[str, Any]:
        """The release's numbers from the asset event that triggered this run (the latest one when run by hand)."""
        events = list(context["triggering_asset_events"].get(CENSUS_RELEASE, []))
        if not events:  # a manual run or `dag.test()`: the latest release of the asset
            events = list(context["inlet_events"][CENSUS_RELEASE].ascending(False).limit(1))
        numbers = dict(events[-1].extra["numbers"])
        print(
            f"census release: {numbers['rows']} rows in {numbers['classes']} classes, "
            f"measured {numbers['measured']} (targets {numbers['targets']}), NCP {numbers['ncp']:.3f}"
        )
        return numbers

    announce_release()
