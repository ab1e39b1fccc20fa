"""Shared working storage (an ObjectStoragePath, ``file://`` here): each task may run on another machine."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("airflow")

from airflow.sdk.exceptions import AirflowFailException

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

CONTEXT = {"run_id": "manual__1", "dag": SimpleNamespace(dag_id="shared")}
RUN = "shared__manual__1"


def run(operator: Any) -> dict[str, Any]:
    payload = operator.execute(context={"ti": Mock(), **CONTEXT})
    json.dumps(payload)
    return payload  # type: ignore[no-any-return]


def other_machine(spec_path: str) -> None:
    """The next task runs elsewhere: this machine's local working folder of the run is gone."""
    try:
        shutil.rmtree(run_dir(load_spec(spec_path), RUN))
    except ConfigurationError:  # with a working storage each task removes its local copy itself
        pass


@pytest.fixture
def setup(specs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "local"))
    return {"spec_path": str(specs["demo_census"]), "shared": tmp_path / "shared"}


def test_a_release_whose_tasks_run_on_different_machines_publishes(setup: dict[str, Any]) -> None:
    spec_path, shared = setup["spec_path"], setup["shared"]
    common = {"spec_path": spec_path, "working_storage": f"file://{shared}"}
    loaded = run(LoadOperator(task_id="load", **common))
    remote = next(shared.glob(f"*/{RUN}*"))
    assert sorted(p.name for p in remote.iterdir()) == ["snapshot.parquet"]
    assert stat.S_IMODE(remote.stat().st_mode) == 0o700 == stat.S_IMODE(remote.parent.stat().st_mode)
    other_machine(spec_path)
    snapshot = remote / "snapshot.parquet"
    uploaded = snapshot.stat().st_mtime_ns, snapshot.stat().st_ino
    candidate = run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))
    # the anonymize task pulled the snapshot and did not change it: it is not sent back
    assert (snapshot.stat().st_mtime_ns, snapshot.stat().st_ino) == uploaded
    assert "candidate.parquet" in {p.name for p in remote.iterdir()}
    other_machine(spec_path)
    check = run(PrivacyCheckOperator(task_id="check", candidate=candidate, **common))
    other_machine(spec_path)
    publication = run(PublishOperator(task_id="publish", candidate=candidate, check=check, **common))
    spec = load_spec(spec_path)
    published = read_published(spec.destination)
    assert published is not None and publication["rows"] == len(published) == candidate["rows_out"]
    assert candidate["rows_in"] == loaded["rows"] == candidate["rows_out"] + candidate["suppressed"]
    assert k_anonymity(published, quasi_identifiers=list(spec.quasi_identifiers)) >= 5
    assert not remote.exists()  # the publish task removed the run's shared folder


def test_without_working_storage_the_next_machine_has_nothing(setup: dict[str, Any]) -> None:
    loaded = run(LoadOperator(task_id="load", spec_path=setup["spec_path"]))
    other_machine(setup["spec_path"])
    with pytest.raises(AirflowFailException):
        run(AnonymizeOperator(task_id="anonymize", spec_path=setup["spec_path"], loaded=loaded))


def test_a_file_changed_on_the_shared_storage_is_refused(setup: dict[str, Any]) -> None:
    spec_path, shared = setup["spec_path"], setup["shared"]
    common = {"spec_path": spec_path, "working_storage": f"file://{shared}"}
    loaded = run(LoadOperator(task_id="load", **common))
    candidate = run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))
    other_machine(spec_path)
    remote_candidate = next(shared.glob(f"*/{RUN}*/candidate.parquet"))
    remote_candidate.write_bytes(
        next(shared.glob(f"*/{RUN}*/snapshot.parquet")).read_bytes()
    )  # the snapshot, not the anonymized rows
    with pytest.raises(AirflowFailException, match="changed after it was written"):
        run(PrivacyCheckOperator(task_id="check", candidate=candidate, **common))
