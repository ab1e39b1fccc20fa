"""The release's teardown: a run that stops before publishing leaves no working files (issue 24 item 6).

``release_tasks`` adds ``<group>.cleanup`` as an Airflow 3 teardown. These runs stop early
— infeasible requirements, a failed check, a short-circuited check — and afterwards the
run's working folder is gone locally and from the shared working storage (moto's S3 server).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("airflow")

REPO = Path(__file__).resolve().parents[3]
BUCKET = "privacy-cleanup"
CONN_ID = "privacy_cleanup_s3"  # the connection the test DAGs name (dags/airflow_cleanup_dags.py)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _states(run: Any) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in run.get_task_instances()}


@pytest.fixture
def local_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "local"
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(root))
    return root


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    """moto's S3 server on a free port, one bucket, and the connection the test DAGs use (one per module)."""
    pytest.importorskip("airflow.providers.amazon")
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    connection = {
        "conn_type": "aws",
        "login": "testing",
        "password": "testing",
        "extra": {"endpoint_url": endpoint, "region_name": "us-east-1"},
    }
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(connection))
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            patch.delenv(name, raising=False)
        try:
            yield SimpleNamespace(client=client)
        finally:
            server.stop()


def _keys(s3: Any, prefix: str) -> list[str]:
    listing = s3.client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/")
    return sorted(item["Key"] for item in listing.get("Contents", []))


def _strict_suite(tmp_path: Path) -> str:
    suite = json.loads((REPO / "expectations" / "demo_release.json").read_text(encoding="utf-8"))
    suite["expectations"][0]["kwargs"]["k"] = 50  # the candidate is built for k = 5: this critical check fails
    path = tmp_path / "strict_suite.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    return str(path)


def test_an_infeasible_release_leaves_no_working_files(dagbag: Any, specs: dict[str, Path], local_root: Path) -> None:
    run = dagbag.get_dag("privacy_release_impossible").test(run_conf={"spec": str(specs["demo_impossible"])})
    states = _states(run)
    assert str(run.state) == "failed"  # the teardown's success does not hide the failed release
    assert states["demo_impossible.anonymize"] == "failed" and states["demo_impossible.cleanup"] == "success"
    assert local_root.is_dir() and _files(local_root) == []  # snapshot.parquet was written, then removed


@pytest.mark.parametrize(
    ("dag_id", "run_state", "check_state", "publish_state"),
    [
        ("privacy_cleanup_fail", "failed", "failed", "upstream_failed"),
        ("privacy_cleanup_skip", "success", "success", "skipped"),
    ],
)
def test_a_blocked_release_removes_its_files_locally_and_on_s3(
    dagbag: Any,
    specs: dict[str, Path],
    local_root: Path,
    s3: Any,
    tmp_path: Path,
    dag_id: str,
    run_state: str,
    check_state: str,
    publish_state: str,
) -> None:
    pytest.importorskip("great_expectations")
    from privacy_plugins.release import ReleaseSpec, read_published

    prefix = f"runs-{dag_id}"
    conf = {"spec": str(specs["demo_census"]), "suite": _strict_suite(tmp_path), "storage": f"s3://{BUCKET}/{prefix}"}
    run = dagbag.get_dag(dag_id).test(run_conf=conf)
    states = _states(run)
    assert str(run.state) == run_state
    assert (states["release.check"], states["release.publish"]) == (check_state, publish_state)
    assert states["release.cleanup"] == "success"
    assert read_published(ReleaseSpec.from_yaml(specs["demo_census"]).destination) is None
    assert _files(local_root) == []
    assert _keys(s3, prefix) == []


def test_the_cleanup_task_removes_the_files_other_tasks_pushed_to_s3(
    specs: dict[str, Path], local_root: Path, s3: Any
) -> None:
    """Step by step: the shared folder holds raw and candidate after a failed check; the teardown empties it."""
    from privacy_plugins.integrations.airflow import (
        AnonymizeOperator,
        LoadOperator,
        PrivacyCheckFailed,
        PrivacyCheckOperator,
        ReleaseCleanupOperator,
    )

    prefix = "runs-steps"
    context = {"ti": Mock(), "run_id": "manual__cleanup", "dag": SimpleNamespace(dag_id="steps")}
    common = {
        "spec_path": str(specs["demo_census"]),
        "working_storage": f"s3://{BUCKET}/{prefix}",
        "working_storage_conn_id": CONN_ID,
    }
    loaded = LoadOperator(task_id="load", **common).execute(context=context)
    assert _files(local_root) == []  # the worker's copy goes once pushed: the shared copy is the run's
    candidate = AnonymizeOperator(task_id="anonymize", loaded=loaded, **common).execute(context=context)
    strict = {**common, "overrides": {"requirements": {"k": 50}}}
    with pytest.raises(PrivacyCheckFailed):
        PrivacyCheckOperator(task_id="check", candidate=candidate, **strict).execute(context=context)
    assert _files(local_root) == []  # a failed task removes its machine's copy too
    names = {key.rsplit("/", 1)[1] for key in _keys(s3, prefix)}
    assert {"snapshot.parquet", "candidate.parquet"} <= names  # pushed by load and anonymize, left by the failed check

    done = ReleaseCleanupOperator(task_id="cleanup", **common).execute(context=context)
    assert done == {"run_id": "steps__manual__cleanup", "removed": True}
    assert _keys(s3, prefix) == [] and _files(local_root) == []
    again = ReleaseCleanupOperator(task_id="cleanup", **common).execute(context=context)  # idempotent
    assert again["removed"] is True


def test_release_tasks_wire_the_cleanup_as_a_teardown(airflow_db: None) -> None:
    from airflow.sdk import DAG

    from privacy_plugins.integrations.airflow import release_tasks

    with DAG(dag_id="cleanup_wiring", schedule=None):
        tasks = release_tasks(spec_path="/specs/demo_census.yaml")
    cleanup = tasks.cleanup
    assert cleanup.task_id == "demo_census.cleanup" and cleanup.is_teardown
    assert cleanup.upstream_task_ids == {task.task_id for task in tasks}
    assert [task.task_id for task in tasks.group.get_leaves()] == ["demo_census.publish"]
