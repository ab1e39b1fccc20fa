"""The DAG files: they parse cleanly, and run end to end in-process (``dag.test()``, SQLite, no scheduler)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("airflow")

from privacy_plugins.release import ReleaseSpec, publish_table, read_published

RELEASE_DAGS = {"privacy_release", "privacy_release_impossible", "census_release_consumer"}
HAS_GX = importlib.util.find_spec("great_expectations") is not None


def run_dag(dagbag: Any, dag_id: str, **conf: Any) -> tuple[Any, dict[str, str]]:
    run = dagbag.get_dag(dag_id).test(run_conf=conf)
    return run, {ti.task_id: str(ti.state) for ti in run.get_task_instances()}


def previous_release(spec_path: Path) -> pd.DataFrame:
    """Publish a stand-in 'previous release' at the spec's destination and return it."""
    frame = pd.DataFrame({"age": ["[20-39]", "[40-59]"], "disease": ["flu", "none"]})
    publish_table(frame, ReleaseSpec.from_yaml(spec_path).destination)
    return frame


def published(spec_path: Path) -> pd.DataFrame | None:
    return read_published(ReleaseSpec.from_yaml(spec_path).destination)


def test_dag_files_import_cleanly(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert RELEASE_DAGS <= set(dagbag.dag_ids)
    release = dagbag.get_dag("privacy_release")
    assert [t.task_id for t in release.topological_sort()] == ["load", "diagnose", "anonymize", "check", "publish"]
    assert [a.name for a in release.get_task("publish").outlets] == ["census_release"]
    consumer = dagbag.get_dag("census_release_consumer")
    assert [a.name for a in consumer.timetable.asset_condition.objects] == ["census_release"]


def test_parsing_the_dag_folder_does_no_release_work() -> None:
    """A fresh interpreter parses dags/ without import errors and without importing GX (it costs seconds)."""
    dags = Path(__file__).resolve().parents[3] / "dags"
    script = (
        "import sys; from airflow.dag_processing.dagbag import DagBag; "
        f"bag = DagBag(dag_folder={str(dags)!r}); "
        "print(sorted(bag.dag_ids), bag.import_errors, 'great_expectations' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == f"{sorted(RELEASE_DAGS)} {{}} False"


def test_demo_release_publishes_and_emits_the_asset(dagbag: Any, specs: dict[str, Path]) -> None:
    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session
    from sqlalchemy import select

    run, states = run_dag(
        dagbag, "privacy_release", spec=str(specs["demo_census"]), **({} if HAS_GX else {"expectation_suite": ""})
    )
    assert states == dict.fromkeys(("load", "diagnose", "anonymize", "check", "publish"), "success")
    table = published(specs["demo_census"])
    assert table is not None and len(table) > 0
    with create_session() as session:
        events = session.scalars(select(AssetEvent).where(AssetEvent.source_run_id == run.run_id)).all()
        assert [(e.source_task_id, e.extra["rows"]) for e in events] == [("publish", len(table))]


def test_impossible_release_publishes_nothing(dagbag: Any, specs: dict[str, Path]) -> None:
    before = previous_release(specs["demo_impossible"])
    run, states = run_dag(dagbag, "privacy_release_impossible", spec=str(specs["demo_impossible"]))
    assert str(run.state) == "failed"
    assert states == {
        "load": "success",
        "diagnose": "success",  # the diagnosis report is kept
        "anonymize": "failed",  # distinct 9-diversity on 8 diseases: no candidate at all
        "check": "upstream_failed",
        "publish": "upstream_failed",
    }
    pd.testing.assert_frame_equal(published(specs["demo_impossible"]), before)
    assert (specs["demo_impossible"].parents[1] / "release_output" / "impossible" / "diagnosis.html").is_file()


@pytest.mark.parametrize(
    ("dag_id", "check_state", "publish_state"),
    [("privacy_gate_fail", "failed", "upstream_failed"), ("privacy_gate_skip", "success", "skipped")],
)
def test_failed_check_blocks_publishing(
    dagbag: Any, specs: dict[str, Path], dag_id: str, check_state: str, publish_state: str
) -> None:
    before = previous_release(specs["demo_census"])
    run, states = run_dag(dagbag, dag_id, spec=str(specs["demo_census"]), gate_k=50)
    assert states == {"load": "success", "anonymize": "success", "check": check_state, "publish": publish_state}
    pd.testing.assert_frame_equal(published(specs["demo_census"]), before)
    if check_state == "success":  # short-circuited: the verdict is still in XCom
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session

        with create_session() as session:
            query = XComModel.get_many(run_id=run.run_id, dag_ids=dag_id, task_ids="check", key="return_value")
            verdict = session.scalars(query.with_only_columns(XComModel.value)).one()
        assert verdict["passed"] is False
