"""Shared working storage on S3: moto's S3-compatible server, reached through an Airflow ``aws`` connection.

Each task runs as if on another machine (its local working folder removed in between),
so the run's files can only travel through ``s3://bucket/prefix``. The test proves the
per-run folder is created there, read by the next task, and removed after publishing.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("airflow.providers.amazon")
pytest.importorskip("s3fs")
pytest.importorskip("moto.server")

import boto3
from moto.server import ThreadedMotoServer

from privacy_plugins.core import k_anonymity
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckOperator,
    PublishOperator,
)
from privacy_plugins.integrations.airflow.operators._base import load_spec
from privacy_plugins.release import read_published, run_dir

CONTEXT = {"run_id": "manual__s3", "dag": SimpleNamespace(dag_id="shared")}
RUN = "shared__manual__s3"
BUCKET, PREFIX = "privacy-work", "runs"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A local S3 server on a free port, an empty bucket, and the Airflow connection pointing at it."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
    connection = {
        "conn_type": "aws",
        "login": credentials["aws_access_key_id"],
        "password": credentials["aws_secret_access_key"],
        "extra": {"endpoint_url": endpoint, "region_name": credentials["region_name"]},
    }
    conn_id = f"moto_s3_{port}"  # Airflow caches a file system per connection: one id per server
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(connection))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)  # the connection alone must be enough
    client = boto3.client("s3", endpoint_url=endpoint, **credentials)
    client.create_bucket(Bucket=BUCKET)
    try:
        yield SimpleNamespace(client=client, conn_id=conn_id)
    finally:
        server.stop()


def _keys(s3: Any) -> list[str]:
    listing = s3.client.list_objects_v2(Bucket=BUCKET, Prefix=f"{PREFIX}/")
    return sorted(item["Key"] for item in listing.get("Contents", []))


def _run(operator: Any) -> dict[str, Any]:
    payload = operator.execute(context={"ti": Mock(), **CONTEXT})
    json.dumps(payload)  # what goes to XCom is JSON
    return payload  # type: ignore[no-any-return]


def _other_machine(spec_path: str) -> None:
    """The next task runs elsewhere: this machine's local working folder of the run is gone."""
    try:
        shutil.rmtree(run_dir(load_spec(spec_path), RUN))
    except ConfigurationError:  # each task removes its local copy itself
        pass


def test_release_tasks_share_a_private_run_folder_on_s3(
    s3: Any, specs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "local"))
    spec_path = str(specs["demo_census"])
    common = {
        "spec_path": spec_path,
        "working_storage": f"s3://{BUCKET}/{PREFIX}",
        "working_storage_conn_id": s3.conn_id,
        "report_storage": f"s3://{BUCKET}/reports",  # the reports outlive the worker (issue 29 item 4)
        "report_storage_conn_id": s3.conn_id,
    }
    loaded = _run(LoadOperator(task_id="load", **common))
    after_load = _keys(s3)
    folders = {key.rsplit("/", 1)[0] for key in after_load}
    assert len(folders) == 1 and RUN in next(iter(folders))  # one folder, of this run only
    assert [key.rsplit("/", 1)[1] for key in after_load] == ["snapshot.parquet"]
    _other_machine(spec_path)
    candidate = _run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))  # read snapshot.parquet from S3
    assert {key.rsplit("/", 1)[1] for key in _keys(s3)} >= {"snapshot.parquet", "candidate.parquet"}
    _other_machine(spec_path)
    check = _run(PrivacyCheckOperator(task_id="check", candidate=candidate, **common))
    _other_machine(spec_path)
    publication = _run(PublishOperator(task_id="publish", candidate=candidate, check=check, **common))
    spec = load_spec(spec_path)
    published = read_published(spec.destination)
    assert published is not None and publication["rows"] == len(published) == candidate["rows_out"]
    assert candidate["rows_in"] == loaded["rows"] == candidate["rows_out"] + candidate["suppressed"]
    assert k_anonymity(published, quasi_identifiers=list(spec.quasi_identifiers)) >= 5
    assert _keys(s3) == []  # the publish task removed the run's folder from the bucket
    kept = s3.client.list_objects_v2(Bucket=BUCKET, Prefix="reports/")["Contents"]
    reports = {item["Key"].rsplit("/", 1)[1]: item["Key"] for item in kept}
    assert sorted(reports) == ["release.html", "release.json"] and RUN in reports["release.json"]  # (no diagnose task)
    assert json.loads(s3.client.get_object(Bucket=BUCKET, Key=reports["release.json"])["Body"].read()) == publication


def test_without_the_shared_folder_the_next_task_fails(
    s3: Any, specs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The S3 copy is what the next machine uses: delete it and the anonymize task has nothing to read."""
    from airflow.sdk.exceptions import AirflowFailException

    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "local"))
    spec_path = str(specs["demo_census"])
    common = {
        "spec_path": spec_path,
        "working_storage": f"s3://{BUCKET}/{PREFIX}",
        "working_storage_conn_id": s3.conn_id,
        "report_storage": f"s3://{BUCKET}/reports",  # the reports outlive the worker (issue 29 item 4)
        "report_storage_conn_id": s3.conn_id,
    }
    loaded = _run(LoadOperator(task_id="load", **common))
    for key in _keys(s3):
        s3.client.delete_object(Bucket=BUCKET, Key=key)
    _other_machine(spec_path)
    with pytest.raises(AirflowFailException):
        _run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))
