"""Issue 24, items 6, 9 and 18: no working files outlive a run, publish refuses foreign columns, and re-runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, load_step, remove_run_workdir, run_dir
from privacy_plugins.release.workarea import MAX_AGE_ENV, RUN_MARKER, sweep_stale_runs

WORKDIR_ENV = "PRIVACY_PLUGINS_WORKDIR"


@pytest.fixture
def work_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "work_root"
    monkeypatch.setenv(WORKDIR_ENV, str(root))
    monkeypatch.delenv(MAX_AGE_ENV, raising=False)
    return root


def plain_spec(tmp_path: Path, *, rows: int = 600, **overrides: object) -> ReleaseSpec:
    """The demo spec without ``workdir:`` (working files under the work root, removed when the run ends)."""
    data = demo_spec_dict(tmp_path, rows=rows, **overrides)
    data.pop("workdir")
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


class Shared:
    """A stand-in for shared working storage: records what it was asked to remove."""

    def __init__(self) -> None:
        self.removed: list[str] = []

    def remove(self, spec: ReleaseSpec, run_id: str) -> None:
        self.removed.append(run_id)


# ---------------------------------------------------------------- item 6: the orchestrators' cleanup function


def test_remove_run_workdir_removes_the_local_folder_and_the_shared_copy(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path)
    loaded = load_step(spec, run_id="dag__run1")
    assert Path(loaded.path).is_file()
    shared = Shared()
    assert remove_run_workdir(spec, "dag__run1", shared=shared) is True
    assert files_under(work_root) == [] and shared.removed == ["dag__run1"]
    assert remove_run_workdir(spec, "dag__run1", shared=shared) is True  # twice: still fine
    assert remove_run_workdir(spec, "never-started") is True


def test_remove_run_workdir_keeps_what_the_user_kept(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path)
    load_step(spec, run_id="r")
    shared = Shared()
    assert remove_run_workdir(spec, "r", shared=shared, keep=True) is False
    assert (run_dir(spec, "r") / "raw.parquet").is_file() and shared.removed == []
    mine = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=600), base_dir=tmp_path)  # workdir: work
    kept = Path(load_step(mine, run_id="r").path)
    assert remove_run_workdir(mine, "r", shared=shared) is False
    assert kept.is_file() and shared.removed == ["r"]  # the user's folder stays; the shared copy goes
