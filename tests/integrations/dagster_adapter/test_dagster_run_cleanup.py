"""A Dagster run leaves no working files, however it ends; candidate readers read first (issue 24 items 6, 17).

The specs here have no ``workdir:`` (the default): the run's private folder lives under
``$PRIVACY_PLUGINS_WORKDIR`` (a temporary root here, as the system temp dir would be) and
must be gone once the run is over — published, blocked by a check, or infeasible — and
not before every ``candidate_readers`` asset of the run has read the candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

dg = pytest.importorskip("dagster")

import pandas as pd  # noqa: E402

from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, read_published  # noqa: E402


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work_root"
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(folder))
    return folder


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _default_spec(census_spec: Callable[..., dict[str, Any]], tmp_path: Path, **requirements: Any) -> ReleaseSpec:
    data = census_spec(**requirements)
    del data["workdir"]  # the default: a private per-run folder, removed when the run ends
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def _reader_after_publishing(release: Any, seen: dict[str, Any]) -> Any:
    """A named candidate reader that runs after ``published`` (an audit of what was and was not published)."""

    @dg.asset(ins={"candidate": release.candidate_in()}, deps=[release.key("published")])
    def audit(candidate: pd.DataFrame) -> dg.MaterializeResult[None]:
        seen["rows"] = len(candidate)
        return dg.MaterializeResult(metadata={"rows": len(candidate)})

    return audit


def test_a_candidate_reader_after_published_reads_the_candidate_then_the_run_folder_goes(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, root: Path
) -> None:
    spec = _default_spec(census_spec, tmp_path)
    release = build_release_assets(spec)
    seen: dict[str, Any] = {}
    result = dg.materialize(
        [*release.assets, *release.asset_checks, _reader_after_publishing(release, seen)],
        resources=release.resources(candidate_readers=["audit"]),
        raise_on_error=False,
    )
    failures = [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert result.success, failures
    published = read_published(spec.destination)
    assert published is not None and seen["rows"] == len(published) > 0
    assert _files(root) == []  # snapshot.parquet and candidate.parquet are gone with the run


def test_the_definitions_reader_of_the_default_spec_works_in_one_process(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, root: Path
) -> None:
    """Through ``definitions(candidate_readers=...)`` and a job with the in-process executor, as deployed."""
    spec = _default_spec(census_spec, tmp_path)
    release = build_release_assets(spec)
    seen: dict[str, Any] = {}
    defs = dg.Definitions.merge(
        release.definitions(candidate_readers=["audit"]),
        dg.Definitions(
            assets=[_reader_after_publishing(release, seen)],
            jobs=[dg.define_asset_job("everything", selection="*", executor_def=dg.in_process_executor)],
        ),
    )
    result = defs.resolve_job_def("everything").execute_in_process(raise_on_error=False)
    assert result.success and seen["rows"] > 0
    assert _files(root) == []


def test_a_run_blocked_by_a_check_leaves_no_working_files(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, root: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _default_spec(census_spec, tmp_path)
    release = build_release_assets(spec, policy={"min_k": 50})  # built for k = 3: the k check fails
    result = run_graph(release)
    assert not result.success
    assert not inspect_run.evaluations(result)["k_anonymity"].passed
    assert "anonymized_candidate" in inspect_run.materialized(result)  # the candidate was written …
    assert "published" not in inspect_run.materialized(result)
    assert read_published(spec.destination) is None
    assert root.is_dir() and _files(root) == []  # … and is gone with raw once the run ended


def test_an_infeasible_run_leaves_no_working_files(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, root: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _default_spec(census_spec, tmp_path, l=9)  # 9 distinct diseases do not exist
    result = run_graph(build_release_assets(spec))
    assert not result.success
    assert inspect_run.materialized(result) == {"raw", "privacy_diagnosis"}
    assert root.is_dir() and _files(root) == []


def test_a_spec_workdir_keeps_its_folder(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any
) -> None:
    """``workdir:`` asks to keep the working files: the run end leaves them (as the CLI does)."""
    spec = ReleaseSpec.from_dict(census_spec(), base_dir=tmp_path)
    assert run_graph(build_release_assets(spec)).success
    assert {p.name for p in (tmp_path / "work").rglob("*.parquet")} >= {"snapshot.parquet", "candidate.parquet"}


@pytest.mark.parametrize(
    ("executor", "run_config", "whole"),
    [
        ("in_process", {}, True),
        ("execute_in_process_executor", {}, True),
        ("multi_or_in_process_executor", {"execution": {"config": {"in_process": {}}}}, True),
        ("multi_or_in_process_executor", {}, False),  # the default: one process per step
        ("multi_or_in_process_executor", {"execution": {"config": {"multiprocess": {}}}}, False),
        ("multiprocess", {}, False),
        ("celery", {}, False),
    ],
)
def test_only_a_run_whose_steps_all_run_here_is_ended_by_the_resource_teardown(
    executor: str, run_config: dict[str, Any], whole: bool
) -> None:
    """With one process per step a teardown is a step's end, not the run's: ``published`` removes the folder then."""
    from privacy_plugins.integrations.dagster.binding import runs_whole_here

    step = SimpleNamespace(
        job_def=SimpleNamespace(executor_def=SimpleNamespace(name=executor)), run=SimpleNamespace(run_config=run_config)
    )
    assert runs_whole_here(SimpleNamespace(op_execution_context=step)) is whole
    assert runs_whole_here(SimpleNamespace(resources=None)) is False  # the reader's context: no step


_MULTIPROCESS_LOCATION = """
import os
from pathlib import Path

import dagster as dg

from privacy_plugins.integrations.dagster import build_release_assets
from privacy_plugins.release import ReleaseSpec

release = build_release_assets(ReleaseSpec.from_yaml(os.environ["RELEASE_SPEC"]))
defs = release.definitions()  # no executor: Dagster's default, one process per step
"""


def test_with_one_process_per_step_the_run_still_publishes_and_published_removes_the_folder(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, root: Path
) -> None:
    """A resource teardown per step must not end the run early; ``published`` removes the folder."""
    import os
    import subprocess
    import sys

    import yaml

    data = census_spec()
    del data["workdir"]
    spec_path = tmp_path / "census.yaml"
    spec_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    (tmp_path / "multiprocess_location.py").write_text(_MULTIPROCESS_LOCATION, encoding="utf-8")
    env = {
        **os.environ,
        "RELEASE_SPEC": str(spec_path),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
    }
    command = [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "multiprocess_location", "--select", "*"]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "multiprocess" in result.stderr or "Launching subprocess" in result.stderr
    spec = ReleaseSpec.from_yaml(spec_path)
    assert read_published(spec.destination) is not None
    assert _files(root) == []
