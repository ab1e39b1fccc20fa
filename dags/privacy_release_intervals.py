"""A daily privacy release driven by Airflow's data intervals, checked against every earlier day's release.

Each DAG run releases the visits of its data interval only: ``release_tasks`` gets the spec's
``source.query`` as a templated override, filtered on ``{{ data_interval_start | ds }}`` ..
``{{ data_interval_end | ds }}``. The spec (``specs/demo_visits_daily.yaml``) keeps a release
history (``daily_visits``) beside the published table: the check task's composition check
measures the day's candidate against every day published before it, so a day that would
disclose a disease or an income together with them fails its check and publishes nothing.

``demo_visits`` creates the demo source once (``release_output/visits.duckdb``: two weeks of
visits in which the same people recur). Try it with
``airflow dags test privacy_release_intervals 2026-01-02`` then ``… 2026-01-03``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, Param, task
from airflow.timetables.interval import CronDataIntervalTimetable

from privacy_plugins.integrations.airflow import release_tasks

REPO = Path(__file__).resolve().parents[1]

INTERVAL_QUERY = (
    "SELECT * EXCLUDE (visit_day) FROM visits "
    "WHERE visit_day >= DATE '{{ data_interval_start | ds }}' AND visit_day < DATE '{{ data_interval_end | ds }}'"
)

with DAG(
    dag_id="privacy_release_intervals",
    description="Release each day's visits, checked against every earlier day's release",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),  # a run per day: [day, next day)
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,  # one release of a destination (and its history) at a time
    params={
        "spec": Param(str(REPO / "specs" / "demo_visits_daily.yaml"), type="string", description="release spec"),
    },
    tags=["privacy"],
):

    @task
    def demo_visits(spec: str) -> str:
        """The demo source, once: 14 days of visits, each day a seeded 60% of the same 3,000 people."""
        import duckdb
        import pandas as pd

        from privacy_plugins import generate_census
        from privacy_plugins.release import ReleaseSpec

        path = ReleaseSpec.from_yaml(spec).source.duckdb
        assert path is not None
        if path.exists():
            return str(path)
        people = generate_census(3_000, seed=0)
        days = [
            people.sample(frac=0.6, random_state=day).assign(
                visit_day=pd.Timestamp("2026-01-01") + pd.Timedelta(days=day)
            )
            for day in range(14)
        ]
        visits = pd.concat(days, ignore_index=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        with duckdb.connect(str(path)) as connection:
            connection.register("visits_frame", visits)
            connection.execute(
                "CREATE TABLE visits AS SELECT * REPLACE (CAST(visit_day AS DATE) AS visit_day) FROM visits_frame"
            )
        return str(path)

    release = release_tasks(  # task ids daily_visits.load … daily_visits.publish
        spec_path="{{ params.spec }}",
        group_id="daily_visits",
        overrides={"source": {"query": INTERVAL_QUERY}},  # this run's interval only
    )
    demo_visits("{{ params.spec }}") >> release.group
