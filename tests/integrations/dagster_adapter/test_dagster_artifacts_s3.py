"""Artifacts through an IO manager on S3 (issue 29 item 6): steps in separate processes share nothing local.

moto's S3 server stands in for the bucket. The release graph runs with Dagster's multiprocess
executor (one process per step, as ``k8s_job_executor`` or ``docker_executor`` would run them):
each step removes its local copy of the run's files after pushing them, so the next step can
only get them from ``s3://…``. Whatever the run's end — published, a failing blocking check, a
step raising — no object (raw rows above all) stays in the bucket, and no file in the local root.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

dg = pytest.importorskip("dagster")
pytest.importorskip("s3fs")
pytest.importorskip("upath")
pytest.importorskip("moto.server")

import boto3  # noqa: E402
import yaml  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import LoadedTable, ReleaseSpec, read_published, run_dir  # noqa: E402

BUCKET = "privacy-artifacts"

LOCATION = """
import os

import dagster as dg

from privacy_plugins.integrations.dagster import build_release_assets
from privacy_plugins.integrations.dagster import assets as release_assets
from privacy_plugins.release import ReleaseSpec

_diagnose = release_assets.diagnose_step


def _boom(spec, *args, **kwargs):  # a step that raises (patched in every step process: each imports this module)
    if spec.name == "census_boom":
        raise RuntimeError("boom in the diagnosis")
    return _diagnose(spec, *args, **kwargs)


release_assets.diagnose_step = _boom


def graph(name, **options):
    release = build_release_assets(ReleaseSpec.from_yaml(os.environ["RELEASE_SPECS"] + f"/{name}.yaml"), **options)
    artifacts = release.artifacts(
        f"s3://{os.environ['RELEASE_BUCKET']}/runs",
        endpoint_url=os.environ["RELEASE_S3_ENDPOINT"],
        access_key_id=dg.EnvVar("RELEASE_S3_KEY"),
        secret_access_key=dg.EnvVar("RELEASE_S3_SECRET"),
    )
    return release.definitions(artifacts=artifacts)


defs = dg.Definitions.merge(
    graph("census"),  # passes and publishes
    graph("census_gate", policy={"min_k": 50}),  # a blocking check fails
    graph("census_boom"),  # the diagnosis raises
    dg.Definitions(jobs=[dg.define_asset_job("release", selection="*")]),
)


def everything():
    return defs.resolve_job_def("release")
"""

NAMES = ("census", "census_gate", "census_boom")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[SimpleNamespace]:
    """moto's S3 server on a free port with one empty bucket."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    try:
        yield SimpleNamespace(client=client, endpoint=endpoint)
    finally:
        server.stop()


def _objects(s3: SimpleNamespace) -> list[str]:
    listing = s3.client.list_objects_v2(Bucket=BUCKET)
    return sorted(item["Key"] for item in listing.get("Contents", []))


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def location(
    s3: SimpleNamespace, census_spec: Callable[..., dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> SimpleNamespace:
    """The code location module above and its three specs (no ``workdir:``: run folders under a temporary root)."""
    specs = {}
    for name in NAMES:
        data = census_spec(name=name)
        del data["workdir"]
        data["destination"]["duckdb"] = str(tmp_path / f"{name}.duckdb")  # one writer per file
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        specs[name] = ReleaseSpec.from_yaml(tmp_path / f"{name}.yaml")
    module = tmp_path / "s3_location.py"
    module.write_text(LOCATION, encoding="utf-8")
    root = tmp_path / "work_root"
    for variable, value in {
        "PRIVACY_PLUGINS_WORKDIR": str(root),
        "RELEASE_SPECS": str(tmp_path),
        "RELEASE_BUCKET": BUCKET,
        "RELEASE_S3_ENDPOINT": s3.endpoint,
        "RELEASE_S3_KEY": "testing",
        "RELEASE_S3_SECRET": "testing",
    }.items():
        monkeypatch.setenv(variable, value)
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)  # the IO manager's own settings must be enough
    return SimpleNamespace(module=module, specs=specs, root=root)


def _run_multiprocess(location: SimpleNamespace) -> Any:
    """The graph with the multiprocess executor: every step in its own process (forkserver, preloaded)."""
    from dagster._core.definitions.reconstruct import ReconstructableJob

    preload = ["dagster", "pandas", "duckdb", "privacy_plugins.integrations.dagster"]
    config = {"execution": {"config": {"multiprocess": {"start_method": {"forkserver": {"preload_modules": preload}}}}}}
    with dg.instance_for_test() as instance:
        return dg.execute_job(
            ReconstructableJob.for_file(str(location.module), "everything"),
            instance=instance,
            run_config=config,
            raise_on_error=False,
        )


def _step_failures(result: Any) -> list[str]:
    return [event.step_key for event in result.all_events if event.event_type_value == "STEP_FAILURE"]


@pytest.mark.slow  # one run of three graphs, one process per step (~14 processes)
def test_steps_in_separate_processes_hand_over_through_s3_and_leave_no_raw_rows_however_the_run_ends(
    s3: SimpleNamespace, location: SimpleNamespace
) -> None:
    """One run, three graphs: one publishes, one is stopped by a blocking check, one's diagnosis raises."""
    result = _run_multiprocess(location)
    assert not result.success
    pids = {e.pid for e in result.all_events if e.event_type_value == "STEP_START"}
    assert len(pids) >= 8  # one process per step: nothing local was shared
    started = {e.step_key for e in result.all_events if e.event_type_value == "STEP_START"}
    assert set(_step_failures(result)) == {"census_boom__privacy_diagnosis", "census_gate__privacy_requirements"}
    evaluations = {(e.asset_key.path[0], e.check_name): e for e in result.get_asset_check_evaluations()}
    assert evaluations[("census", "k_anonymity")].passed
    assert not evaluations[("census_gate", "k_anonymity")].passed
    assert {"census__published"} <= started and "census_gate__published" not in started
    published = read_published(location.specs["census"].destination)
    assert published is not None and len(published) > 0  # the files travelled through s3:// only
    assert read_published(location.specs["census_gate"].destination) is None
    assert read_published(location.specs["census_boom"].destination) is None
    assert _objects(s3) == []  # raw rows and candidates gone from the bucket, however each release ended
    assert _files(location.root) == []  # and from every step's local folder


@pytest.mark.parametrize("base", ["s3", "local"])
def test_an_artifact_of_another_run_or_release_is_refused_by_the_io_manager(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, s3: SimpleNamespace, base: str
) -> None:
    """An artifact planted in this run's folder (copied from another run, or another release) never reaches a step."""
    import dataclasses
    import json

    spec = ReleaseSpec.from_dict(census_spec(), base_dir=tmp_path)
    release = build_release_assets(spec)
    if base == "s3":
        artifacts = release.artifacts(
            f"s3://{BUCKET}/refusal", endpoint_url=s3.endpoint, access_key_id="testing", secret_access_key="testing"
        )
    else:
        artifacts = release.artifacts()
    run = "census__this-run"
    ours = LoadedTable(
        path="x", rows=1, columns=["age"], dropped_identifiers=[], run_id=run, spec_name=spec.name,
        source_fingerprint=spec.source_fingerprint,
    )  # fmt: skip
    planted = {
        "belongs to run": dataclasses.replace(ours, run_id="census__another-run"),
        "comes from another release": dataclasses.replace(ours, source_fingerprint="0" * 64),
    }
    for message, artifact in planted.items():
        if base == "s3":
            target = artifacts._folder(spec, run) / "artifacts" / "raw.json"
            target.parent.mkdir(parents=True, exist_ok=True)
        else:
            target = run_dir(spec, run, create=True) / "raw.json"
        target.write_text(json.dumps(artifact.to_dict()), encoding="utf-8")
        with pytest.raises(dg.Failure, match=message):
            artifacts.load(spec, run, "raw")
    target.write_text(json.dumps(ours.to_dict()), encoding="utf-8")
    assert artifacts.load(spec, run, "raw") == ours  # its own run's artifact loads
    artifacts.end_run(spec, run)
    assert not any(key.startswith("refusal/") for key in _objects(s3))
