"""The data-interval DAG (issue 26 item 5): each run releases its interval's rows, checked against the earlier runs.

``dags/privacy_release_intervals.py`` with a copy of its spec writing under ``tmp_path``, run
with ``dag.test()`` for two daily intervals: the first publishes; the second's composition check
measures it against the first day's release (the history holds one release), and it publishes
exactly when that check passed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("airflow")

from privacy_plugins.release import ReleaseSpec, read_published

REPO = Path(__file__).resolve().parents[3]


def _xcoms(run: Any) -> dict[str, Any]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(
            select(XComModel.task_id, XComModel.key, XComModel.value).where(XComModel.run_id == run.run_id)
        ).all()
    return {f"{task}:{key}": value for task, key, value in rows}


def test_two_data_intervals_release_their_own_rows_and_the_second_sees_the_first(dagbag: Any, tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "specs" / "demo_visits_daily.yaml").read_text(encoding="utf-8"))
    data["source"]["duckdb"] = str(tmp_path / "visits.duckdb")
    data["destination"]["duckdb"] = str(tmp_path / "visits_release.duckdb")
    data["report"] = {"directory": str(tmp_path / "reports")}
    spec_path = tmp_path / "visits.yaml"
    spec_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    dag = dagbag.get_dag("privacy_release_intervals")
    checks = []
    for day in (2, 3):  # the runs of 2026-01-02 and 2026-01-03: intervals [Jan 1, Jan 2) and [Jan 2, Jan 3)
        run = dag.test(logical_date=datetime(2026, 1, day, tzinfo=UTC), run_conf={"spec": str(spec_path)})
        states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
        assert str(run.data_interval_end - run.data_interval_start) == "1 day, 0:00:00"
        check = _xcoms(run)["daily_visits.check:return_value"]
        composition = next(c for c in check["checks"] if c["name"] == "composition")
        assert (states["daily_visits.publish"] == "success") == composition["passed"], states
        checks.append((run, composition))
    (first, first_check), (second, second_check) = checks
    assert first_check["passed"] and "against 0 earlier releases" in first_check["detail"]
    assert "against 1 earlier release" in second_check["detail"]  # the first interval's release is in the history
    loaded = {run.run_id: _xcoms(run)["daily_visits.load:return_value"]["rows"] for run in (first, second)}
    spec = ReleaseSpec.from_yaml(spec_path)
    import duckdb

    with duckdb.connect(str(tmp_path / "visits.duckdb"), read_only=True) as connection:
        per_day = dict(
            connection.execute("SELECT CAST(visit_day AS VARCHAR), count(*) FROM visits GROUP BY 1").fetchall()
        )
    assert loaded == {first.run_id: per_day["2026-01-01"], second.run_id: per_day["2026-01-02"]}  # its interval only
    assert read_published(spec.destination) is not None
