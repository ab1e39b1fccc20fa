"""Issue 24, attacks on the merged hardening: receipts, sweep, signals, staging registry."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.errors import PublishError
from privacy_plugins.release import (
    Candidate,
    CheckResult,
    ReleaseSpec,
    anonymize_step,
    check_step,
    destinations,
    load_step,
    publish_step,
    publish_table,
    read_published,
)
from privacy_plugins.release.workarea import MAX_AGE_ENV, WORKDIR_ENV


@pytest.fixture
def work_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "work_root"
    monkeypatch.setenv(WORKDIR_ENV, str(root))
    monkeypatch.delenv(MAX_AGE_ENV, raising=False)
    return root


def _spec(tmp_path: Path) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=600)
    data.pop("workdir")
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def _through_check(spec: ReleaseSpec, run: str) -> tuple[Candidate, CheckResult]:
    candidate = anonymize_step(spec, load_step(spec, run_id=run), run_id=run)
    check = check_step(spec, candidate, run_id=run)
    assert check.passed
    return candidate, check


def test_a_publish_retry_after_a_failed_write_publishes_instead_of_trusting_its_own_receipt(
    tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tmp_path)
    candidate, check = _through_check(spec, "b")
    ours = pd.read_parquet(candidate.path)
    # The release published before: the same classes and measures, other values in an unmeasured column.
    before = ours.assign(occupation="(last month)")
    publish_table(before, spec.destination)

    def full_disk() -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(destinations, "_swap_hook", full_disk)
    with pytest.raises(PublishError):
        publish_step(spec, candidate, check, run_id="b")  # the receipt says "publishing"; nothing was committed
    monkeypatch.undo()
    monkeypatch.setenv(WORKDIR_ENV, str(work_root))
    retried = publish_step(spec, candidate, check, run_id="b")  # the task's retry: the candidate is still there
    published = read_published(spec.destination)
    assert published is not None
    assert retried.already_published_by == ""
    assert (published["occupation"] != "(last month)").all()


# ---------------------------------------------------------------- the age-based sweep and live runs

_LIVE_RUN = """
import sys
from privacy_plugins.release import ReleaseSpec, load_step
spec = ReleaseSpec.from_yaml(sys.argv[1])
print(load_step(spec, run_id=sys.argv[2]).path, flush=True)
sys.stdin.read()  # works on (one long step) until told to end
"""


def _age(folder: Path, hours: float) -> None:
    then = time.time() - hours * 3600
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (then, then), follow_symlinks=False)


def test_the_sweep_never_removes_the_folder_of_a_live_run_whose_files_are_old(tmp_path: Path, work_root: Path) -> None:
    data = demo_spec_dict(tmp_path, rows=300)
    data.pop("workdir")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    spec = ReleaseSpec.from_yaml(spec_file)
    child = subprocess.Popen(
        [sys.executable, "-c", _LIVE_RUN, str(spec_file), "long"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        live = Path(child.stdout.readline().strip()).parent
        assert live.is_dir()
        _age(live, 30)  # its files were written 30 h ago; the anonymize step is still searching
        load_step(spec, run_id="next")  # another run starts and sweeps
        assert (live / "raw.parquet").is_file()
    finally:
        child.communicate("", timeout=60)
    assert child.returncode == 0
    load_step(spec, run_id="after")  # the run is gone (killed): now its folder is a leftover
    assert not live.exists()
