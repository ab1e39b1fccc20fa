"""Airflow-native release: Connections (no password anywhere), asset events with numbers, consumer and monitor DAGs.

One release runs per module (``dag.test()``, in-process): source and destination are
named connections (``AIRFLOW_CONN_*`` with a password), the asset event's ``extra``
carries the release's numbers, the consumer DAG reads them and the monitor DAG
re-measures the published table, then fails once it is tampered with.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("airflow")

from privacy_plugins.core.demo import generate_census
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, publish_table, read_published
from privacy_plugins.release.connections import connection_resolver
from privacy_plugins.release.published_numbers import measure_published

REPO = Path(__file__).resolve().parents[3]

PASSWORD = "Pw-7xQ2-secret"
STEPS = ("load", "diagnose", "anonymize", "check", "publish")


def _sqlite_uri(path: Path, login: str) -> str:
    return f"sqlite://{login}:{PASSWORD}@{str(path).replace('/', '%2F')}"


@pytest.fixture(scope="module")
def release(dagbag: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Run ``privacy_release`` once on a spec whose source and destination are connections."""
    folder = tmp_path_factory.mktemp("native")
    with sqlite3.connect(folder / "warehouse.db") as connection:
        generate_census(1_500, seed=5).to_sql("people", connection, index=False)
    env = {"AIRFLOW_CONN_WAREHOUSE": _sqlite_uri(folder / "warehouse.db", "reader")}
    os.environ.update(env)
    os.environ.pop("AIRFLOW_CONN_MART", None)
    _airflow_db_connection("mart", folder / "mart.db")  # only Airflow knows it: proves resolution through Airflow
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8"))
    data["source"] = {"conn_id": "warehouse", "table": "people"}
    data["destination"] = {"conn_id": "mart", "table": "census_release"}
    data["report"] = {"directory": str(folder / "reports")}
    spec_path = folder / "census.yaml"
    spec_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    lineage = folder / "openlineage.ndjson"
    with _openlineage_to_file(lineage):
        run = dagbag.get_dag("privacy_release").test(run_conf={"spec": str(spec_path), "expectation_suite": ""})
    try:
        yield {
            "run": run,
            "spec_path": spec_path,
            "spec": ReleaseSpec.from_yaml(spec_path),
            "folder": folder,
            "mart": f"sqlite:///{folder / 'mart.db'}",
            "lineage": lineage,
        }
    finally:
        for name in env:
            os.environ.pop(name, None)


@contextmanager
def _openlineage_to_file(path: Path) -> Iterator[None]:
    """Airflow's OpenLineage listener (the provider's own) emitting to a file transport during the run.

    The provider registers its listener at plugin load only when a transport is configured; the test
    session's plugins are loaded already, so the same listener is added to the task runner's manager here.
    """
    if importlib.util.find_spec("airflow.providers.openlineage") is None:
        yield
        return
    from airflow.listeners.listener import get_listener_manager as scheduler_listeners
    from airflow.providers.openlineage import conf
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener
    from airflow.sdk.listener import get_listener_manager

    manager = get_listener_manager()
    scheduler_listeners()  # plugins load now, before a transport is set: only this test's listener emits
    env = {
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(path), "append": True}),
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",  # no fork inside pytest
    }
    os.environ.update(env)
    _clear_openlineage_conf(conf)
    listener = get_openlineage_listener()
    manager.add_listener(listener)
    try:
        yield
    finally:
        manager.pm.unregister(listener)
        listener.before_stopping(component=None)  # the provider's own teardown: its process pool, if one started
        for name in env:
            os.environ.pop(name, None)
        _clear_openlineage_conf(conf)


def _clear_openlineage_conf(conf: Any) -> None:
    for value in vars(conf).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def _airflow_db_connection(conn_id: str, database: Path) -> None:
    """A connection stored in Airflow's metadata database (not in the environment)."""
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session

    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id == conn_id).delete()
        session.add(Connection(conn_id=conn_id, conn_type="sqlite", host=str(database), login="w", password=PASSWORD))


def _published(release: dict[str, Any]) -> Any:
    """The published table, read from outside Airflow (where only the test knows the mart's URL)."""
    with connection_resolver(lambda _conn_id: release["mart"]):
        return read_published(release["spec"].destination)


def _states(run: Any) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in run.get_task_instances()}


def _xcoms(run: Any) -> dict[str, Any]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(
            select(XComModel.task_id, XComModel.key, XComModel.value).where(XComModel.run_id == run.run_id)
        ).all()
    return {f"{task}:{key}": value for task, key, value in rows}


def test_connections_resolve_through_airflow_and_the_password_appears_nowhere(
    release: dict[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.utils.session import create_session
    from sqlalchemy import select

    run = release["run"]
    assert _states(run) == {f"demo_census.{step}": "success" for step in (*STEPS, "cleanup")}
    published = _published(release)
    assert published is not None and "person_id" not in published.columns
    with pytest.raises(ConfigurationError, match="AIRFLOW_CONN_MART"):  # outside Airflow: not defined
        read_published(release["spec"].destination)
    xcoms = _xcoms(run)
    assert xcoms["demo_census.publish:return_value"]["destination"] == "conn:mart#census_release"
    with create_session() as session:
        rendered = session.scalars(
            select(RenderedTaskInstanceFields.rendered_fields).where(RenderedTaskInstanceFields.run_id == run.run_id)
        ).all()
    assert len(rendered) == len(STEPS) + 1  # and the cleanup teardown
    logs = capfd.readouterr()
    files = [p.read_text(errors="replace") for p in release["folder"].rglob("*") if p.suffix in (".json", ".html")]
    home_logs = [p.read_text(errors="replace") for p in Path(os.environ["AIRFLOW_HOME"]).rglob("*.log")]
    for where, text in {
        "xcom": repr(xcoms),
        "rendered template fields": repr(rendered),
        "stdout/stderr": logs.out + logs.err,
        "reports": "".join(files),
        "task logs": "".join(home_logs),
    }.items():
        assert PASSWORD not in text, where


def test_asset_event_carries_the_release_numbers(release: dict[str, Any]) -> None:
    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        events = session.scalars(select(AssetEvent).where(AssetEvent.source_run_id == release["run"].run_id)).all()
        extras = {event.asset.uri: dict(event.extra) for event in events}
    # The DAG's own asset and the one derived from the destination connection (no login or password in it).
    mart = Path(release["folder"] / "mart.db").resolve()
    assert sorted(extras) == [f"sqlite://{mart}/census_release", "x-privacy-plugins://demo_census/census_release"]
    extra = extras[f"sqlite://{mart}/census_release"]
    assert extra == extras["x-privacy-plugins://demo_census/census_release"]
    numbers = extra["numbers"]
    published = _published(release)
    assert published is not None
    again = measure_published(release["spec"], published)  # the core's measures of what is really published
    assert {k: numbers[k] for k in again} == again
    assert numbers["rows"] == extra["rows"] == len(published)
    assert numbers["rows_in"] == 1_500 == numbers["rows"] + numbers["suppressed"]  # nothing lost
    assert numbers["measured"]["k_anonymity"] >= numbers["targets"]["k_anonymity"] == 5
    assert 0.0 <= numbers["ncp"] <= 1.0 and numbers["holds"] is True


def test_consumer_dag_reads_the_numbers_of_the_latest_release(dagbag: Any, release: dict[str, Any]) -> None:
    run = dagbag.get_dag("census_release_consumer").test()
    assert _states(run) == {"announce_release": "success"}
    announced = _xcoms(run)["announce_release:return_value"]
    assert announced == _xcoms(release["run"])["demo_census.publish:return_value"]["numbers"]


def test_monitor_passes_then_alerts_when_the_published_table_drifts(dagbag: Any, release: dict[str, Any]) -> None:
    monitor = dagbag.get_dag("privacy_release_monitor")
    run = monitor.test(run_conf={"spec": str(release["spec_path"])})
    assert _states(run) == {"remeasure": "success"}
    assert _xcoms(run)["remeasure:return_value"]["holds"] is True
    spec = release["spec"]
    published = _published(release)
    assert published is not None
    with connection_resolver(lambda _conn_id: release["mart"]):
        publish_table(published.iloc[: len(published) // 2], spec.destination)  # someone rewrote the table
    run = monitor.test(run_conf={"spec": str(release["spec_path"])})
    assert _states(run) == {"remeasure": "failed"}


def test_check_published_names_each_drift_in_numbers_only(tmp_path: Path) -> None:
    from privacy_plugins.integrations.airflow import PublishedDrift, check_published
    from privacy_plugins.release import run_release
    from tests.release.release_fixtures import demo_spec_dict

    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path))
    result = run_release(spec)
    assert result.published is not None
    released = result.published.to_dict()
    assert check_published(spec, released=released) == {k: released["numbers"][k] for k in check_published(spec)}
    published = read_published(spec.destination)
    assert published is not None
    publish_table(published.iloc[:-3], spec.destination)
    with pytest.raises(PublishedDrift, match=r"rows: \d+ at release, \d+ now") as info:
        check_published(spec, released=released)
    assert not [value for value in published["disease"].unique() if str(value) in str(info.value)]
    with pytest.raises(PublishedDrift, match="nothing is published"):
        check_published(ReleaseSpec.from_dict(demo_spec_dict(tmp_path / "never")))


@pytest.mark.skipif(
    importlib.util.find_spec("airflow.providers.openlineage") is None,
    reason="Airflow's OpenLineage provider is not installed (the airflow extra installs it)",
)
def test_openlineage_events_name_the_source_and_destination_with_counts_only(release: dict[str, Any]) -> None:
    """The provider's listener calls ``get_openlineage_facets_on_complete`` of the publish task of a real run."""
    text = release["lineage"].read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    (publish,) = [e for e in events if e["eventType"] == "COMPLETE" and e["job"]["name"].endswith(".publish")]
    warehouse, mart = (Path(release["folder"] / name).resolve() for name in ("warehouse.db", "mart.db"))
    assert [(d["namespace"], d["name"]) for d in publish["inputs"]] == [(f"sqlite://{warehouse}", "people")]
    (output,) = publish["outputs"]
    assert (output["namespace"], output["name"]) == (f"sqlite://{mart}", "census_release")
    published = _published(release)
    assert published is not None
    assert [f["name"] for f in output["facets"]["schema"]["fields"]] == list(published.columns)
    numbers = publish["run"]["facets"]["privacyRelease"]["numbers"]
    xcom = _xcoms(release["run"])["demo_census.publish:return_value"]["numbers"]
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == xcom["rows"]
    assert numbers["rows"] == xcom["rows"] and numbers["measured"] == xcom["measured"]
    assert numbers["suppressed"] == xcom["suppressed"] and numbers["targets"] == xcom["targets"]
    assert PASSWORD not in text and "reader" not in text
    source = generate_census(1_500, seed=5)
    strings = {str(v) for column in source.select_dtypes(exclude="number") for v in source[column].unique()}
    found = {v for v in strings if len(v) > 3 and f'"{v}"' in text}  # a value as a JSON string anywhere
    assert not found, sorted(found)[:5]
