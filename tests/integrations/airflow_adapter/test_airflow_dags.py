"""The DAG files: they parse cleanly, and run end to end in-process (``dag.test()``, SQLite, no scheduler)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("airflow")

from privacy_plugins.release import ReleaseSpec, publish_table, read_published

RELEASE_DAGS = {
    "privacy_release",
    "privacy_release_impossible",
    "census_release_consumer",
    "privacy_release_monitor",
    "privacy_release_intervals",
}
HAS_GX = importlib.util.find_spec("great_expectations") is not None
STEPS = ("load", "diagnose", "anonymize", "check", "publish")


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
    assert [t.task_id for t in release.topological_sort()] == [f"demo_census.{step}" for step in (*STEPS, "cleanup")]
    outlets = [a.name for a in release.get_task("demo_census.publish").outlets]
    assert outlets == ["census_release", "privacy-release/privacy_release/demo_census.publish"]  # + the derived one
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
    assert states == {f"demo_census.{step}": "success" for step in (*STEPS, "cleanup")}
    table = published(specs["demo_census"])
    assert table is not None and len(table) > 0
    with create_session() as session:
        events = session.scalars(select(AssetEvent).where(AssetEvent.source_run_id == run.run_id)).all()
        emitted = sorted((e.asset.uri, e.source_task_id, e.extra["rows"]) for e in events)
    # the DAG's own asset, and the one derived from the destination (through the publish task's asset alias)
    database = ReleaseSpec.from_yaml(specs["demo_census"]).destination.duckdb
    assert database is not None
    assert emitted == [
        (f"duckdb://{database.resolve()}/main/census_release", "demo_census.publish", len(table)),
        ("x-privacy-plugins://demo_census/census_release", "demo_census.publish", len(table)),
    ]


def test_impossible_release_publishes_nothing(dagbag: Any, specs: dict[str, Path]) -> None:
    before = previous_release(specs["demo_impossible"])
    run, states = run_dag(dagbag, "privacy_release_impossible", spec=str(specs["demo_impossible"]))
    assert str(run.state) == "failed"
    assert states == {
        "demo_impossible.load": "success",
        "demo_impossible.diagnose": "success",  # the diagnosis report is kept
        "demo_impossible.anonymize": "failed",  # distinct 9-diversity on 8 diseases: no candidate at all
        "demo_impossible.check": "upstream_failed",
        "demo_impossible.publish": "upstream_failed",
        "demo_impossible.cleanup": "success",  # the teardown removed the run's working files
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


def test_release_tasks_twice_in_one_dag(dagbag: Any, specs: dict[str, Path], tmp_path: Path) -> None:
    """Two releases, two task groups (``<group>.load`` …); ``>>`` on the groups; ``dag.test()`` runs both."""
    census = specs["demo_census"]
    second = tmp_path / "second" / "specs" / "demo_census.yaml"  # a copy writes next to itself
    second.parent.mkdir(parents=True)
    second.write_text(census.read_text(encoding="utf-8"), encoding="utf-8")
    dag = dagbag.get_dag("privacy_two_releases")
    assert dag.get_task("after_both").upstream_task_ids == {"census.publish", "second.publish"}
    run, states = run_dag(dagbag, "privacy_two_releases", census=str(census), second=str(second))
    expected = {f"{group}.{step}": "success" for group in ("census", "second") for step in (*STEPS, "cleanup")}
    assert states == {**expected, "after_both": "success"}
    assert str(run.state) == "success"
    tis = {ti.task_id: ti for ti in run.get_task_instances()}
    anonymize = tis["second.anonymize"]
    assert (anonymize.queue, anonymize.executor_config) == ("heavy", {"pod_override": {"cpu": "4"}})
    assert dag.get_task("second.anonymize").execution_timeout == timedelta(minutes=30)
    assert dag.get_task("second.anonymize").on_failure_callback
    assert [tis[f"second.{step}"].max_tries for step in ("load", "check", "publish")] == [2, 2, 0]
    assert dag.get_task("second.publish").priority_weight == 7 and tis["census.load"].max_tries == 0
    assert tis["census.anonymize"].queue != "heavy"
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rendered = session.scalars(
            select(RenderedTaskInstanceFields.rendered_fields).where(
                RenderedTaskInstanceFields.run_id == run.run_id, RenderedTaskInstanceFields.task_id == "second.load"
            )
        ).one()
    assert rendered["working_storage_conn_id"] == "no_storage_conn"  # a template field
    for spec in (census, second):
        table = published(spec)
        assert table is not None and len(table) > 0


def test_release_tasks_refuses_unknown_steps_and_wired_arguments(airflow_db: None) -> None:
    from airflow.sdk import DAG

    from privacy_plugins.errors import ConfigurationError
    from privacy_plugins.integrations.airflow import release_tasks

    with DAG(dag_id="bad_task_args", schedule=None):
        with pytest.raises(ConfigurationError, match=r"unknown step\(s\) \['anonymise'\]"):
            release_tasks(spec_path="/specs/a.yaml", task_args={"anonymise": {"pool": "heavy"}})
        with pytest.raises(ConfigurationError, match=r"task_args\['check'\]: \['spec_path'\] are set by"):
            release_tasks(spec_path="/specs/b.yaml", task_args={"check": {"spec_path": "/other.yaml"}})


def test_release_tasks_group_id_defaults_to_the_spec_file_stem(airflow_db: None) -> None:
    from airflow.sdk import DAG
    from airflow.sdk.exceptions import DuplicateTaskIdFound

    from privacy_plugins.integrations.airflow import release_tasks

    with DAG(dag_id="stems", schedule=None) as dag:
        first = release_tasks(spec_path="/specs/demo_census.yaml")
        second = release_tasks(spec_path="specs/other release.yml", overrides={"requirements": {"k": 10}})
        templated = release_tasks(spec_path="{{ params.spec }}")
    assert first.group.group_id == "demo_census" and first.load.task_id == "demo_census.load"
    assert [t.task_id for t in second] == [f"other_release.{step}" for step in STEPS]
    assert templated.group.group_id == "release"
    assert set(dag.task_group.children) == {"demo_census", "other_release", "release"}
    with DAG(dag_id="same_spec_twice", schedule=None), pytest.raises(DuplicateTaskIdFound):
        release_tasks(spec_path="/specs/demo_census.yaml")
        release_tasks(spec_path="/elsewhere/demo_census.yaml")  # same stem: needs its own group_id
