"""Issue 24, items 6, 9 and 18: no working files outlive a run, publish refuses foreign columns, and re-runs."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from release_fixtures import REPO, age_files, demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release import (
    Candidate,
    CheckResult,
    ReleaseBlocked,
    ReleaseSpec,
    anonymize_step,
    check_step,
    load_step,
    publish_step,
    publish_table,
    read_published,
    remove_run_workdir,
    run_dir,
)
from privacy_plugins.release.workarea import MAX_AGE_ENV, RUN_MARKER, sweep_stale_runs

WORKDIR_ENV = "PRIVACY_PLUGINS_WORKDIR"


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
    loaded = load_step(spec, run_id="r")
    shared = Shared()
    assert remove_run_workdir(spec, "r", shared=shared, keep=True) is False
    assert Path(loaded.path).is_file() and Path(loaded.path).parent == run_dir(spec, "r") and shared.removed == []
    mine = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=600), base_dir=tmp_path)  # workdir: work
    kept = Path(load_step(mine, run_id="r").path)
    assert remove_run_workdir(mine, "r", shared=shared) is False
    assert kept.is_file() and shared.removed == ["r"]  # the user's folder stays; the shared copy goes


# ---------------------------------------------------------------- item 6: a release stopped by a signal

CHILD = """
import pathlib, sys, time
from privacy_plugins.cli import main
from privacy_plugins.release import flow

spec, step, marker = sys.argv[1:4]
original = getattr(flow, step)

def stalled(*args, **kwargs):
    pathlib.Path(marker).write_text(step)
    time.sleep(600)  # the task is stopped here, its raw rows (and staging table) on disk
    return original(*args, **kwargs)

setattr(flow, step, stalled)
if len(sys.argv) > 4:  # the signal again while the command cleans up
    import os, signal
    from privacy_plugins.cli import release

    cleanup = release.remove_run_workdir

    def signalled_again(*args, **kwargs):
        os.kill(os.getpid(), int(sys.argv[4]))
        time.sleep(0.5)
        return cleanup(*args, **kwargs)

    release.remove_run_workdir = signalled_again
sys.exit(main(["release", spec, "--quiet"]))
"""


def census_duckdb(path: Path, rows: int = 600) -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", pp.generate_census(rows, seed=0))
        connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    return path


def in_database_spec(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    """A release of a DuckDB ``census`` table into the same file, in the default (swept) working root."""
    db = census_duckdb(tmp_path / "census.duckdb")
    data = demo_spec_dict(tmp_path, rows=600, source={"duckdb": str(db), "table": "census"}, **overrides)
    data.pop("workdir")
    data["destination"] = {"duckdb": str(db), "table": "census_release"}
    return data


def tables_of(path: Path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return sorted(r[0] for r in connection.execute("SELECT table_name FROM information_schema.tables").fetchall())


def stop_mid_run(
    spec: Path, step: str, signum: int, tmp_path: Path, *, again: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``privacy-plugins release`` in a subprocess and send it ``signum`` while ``step`` runs."""
    marker = tmp_path / "reached"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(spec), step, str(marker), *([str(int(signum))] if again else [])],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never reached the step"
            time.sleep(0.05)
        os.kill(child.pid, signum)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_release_stopped_by_a_signal_removes_its_raw_rows_and_dies_of_it(
    signum: signal.Signals, tmp_path: Path, work_root: Path
) -> None:
    data = demo_spec_dict(tmp_path, rows=600)
    data.pop("workdir")
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    done = stop_mid_run(spec, "diagnose_step", signum, tmp_path)
    assert list(work_root.rglob("*")) == []  # no raw.parquet, no run folder
    assert done.returncode == -signum, done.stderr  # ended by the signal: the exit status says so
    assert f"stopped by {signum.name}" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "release.duckdb").exists()


def test_a_second_signal_does_not_cut_the_clean_up_short(tmp_path: Path, work_root: Path) -> None:
    data = demo_spec_dict(tmp_path, rows=600)
    data.pop("workdir")
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    done = stop_mid_run(spec, "diagnose_step", signal.SIGTERM, tmp_path, again=True)
    assert "stopped by SIGTERM; its working files were removed" in done.stderr  # the clean-up ran to its end
    assert done.returncode == -signal.SIGTERM
    assert list(work_root.rglob("*")) == []


def test_a_release_inside_the_database_stopped_by_sigterm_drops_its_staging_table(
    tmp_path: Path, work_root: Path
) -> None:
    data = in_database_spec(tmp_path)
    db = Path(data["source"]["duckdb"])
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    done = stop_mid_run(spec, "check_step", signal.SIGTERM, tmp_path)
    assert list(work_root.rglob("*")) == []
    assert tables_of(db) == ["census"]  # the staging table went with the run
    assert done.returncode == -signal.SIGTERM, done.stderr


# ---------------------------------------------------------------- item 9: publish refuses columns not written


def _forged(spec: ReleaseSpec, candidate: Candidate, **changes: object) -> tuple[Candidate, CheckResult]:
    """The artifacts as an edited XCom value would carry them: digests and columns made to match.

    The check is the check task re-run on the edited candidate: a genuine, passed check of exactly
    those bytes, so only the publish step's own checks stand between them and the destination.
    """
    forged = Candidate.from_dict({**candidate.to_dict(), **changes})
    check = check_step(spec, forged, run_id=candidate.run_id)
    assert check.passed  # the row re-measure alone does not see the edit
    return forged, check


@pytest.mark.parametrize("forge_columns", [False, True], ids=["artifact-as-written", "artifact-columns-forged"])
def test_publish_refuses_a_candidate_file_with_an_extra_column(
    forge_columns: bool, tmp_path: Path, work_root: Path
) -> None:
    spec = plain_spec(tmp_path)
    loaded = load_step(spec, run_id="r")
    candidate = anonymize_step(spec, loaded, run_id="r")
    check = check_step(spec, candidate, run_id="r")
    assert check.passed
    path = Path(candidate.path)
    frame = pd.read_parquet(path)
    frame.insert(0, "row_number", range(len(frame)))  # links every published row back to the source order
    frame.to_parquet(path, index=False)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    columns = {"table": [f.name for f in pq.read_schema(path)]} if forge_columns else None  # a snapshot release
    forged, forged_check = _forged(spec, candidate, sha256=digest, **({"columns": columns} if columns else {}))
    with pytest.raises(
        ReleaseBlocked, match=r"columns are not the ones the anonymize step wrote \(extra: \['row_number'\]"
    ):
        publish_step(spec, forged, forged_check, run_id="r")
    assert not spec.destination.duckdb.exists()  # type: ignore[union-attr]


def test_publish_inside_the_database_refuses_a_staging_table_with_an_extra_column(
    tmp_path: Path, work_root: Path
) -> None:
    data = in_database_spec(tmp_path)
    db = Path(data["source"]["duckdb"])
    spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    loaded = load_step(spec, run_id="r")
    candidate = anonymize_step(spec, loaded, run_id="r")
    assert candidate.staging_table
    with duckdb.connect(str(db)) as connection:  # someone with access to the database, before the check
        connection.execute(f'ALTER TABLE "{candidate.staging_table}" ADD COLUMN row_number BIGINT')
        connection.execute(f'UPDATE "{candidate.staging_table}" SET row_number = rowid')
    check = check_step(spec, candidate, run_id="r")
    assert check.passed
    with pytest.raises(ReleaseBlocked, match=r"extra: \['row_number'\]"):
        publish_step(spec, candidate, check, run_id="r")
    assert tables_of(db) == ["census"]  # nothing published, the staging table dropped


# ---------------------------------------------------------------- item 6: runs that stop before publishing


def test_a_failed_check_in_a_step_wise_run_leaves_nothing(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path, requirements={"k": 2})
    candidate = anonymize_step(spec, load_step(spec, run_id="dag__r"), run_id="dag__r")
    stricter = plain_spec(tmp_path, requirements={"k": 50})  # e.g. the check task's overrides
    assert not check_step(stricter, candidate, run_id="dag__r").passed
    assert list(work_root.rglob("*")) == []
    with pytest.raises(ConfigurationError, match="re-run the release from the load step"):
        check_step(stricter, candidate, run_id="dag__r")


def test_a_warn_only_failure_or_a_kept_workdir_keeps_the_run(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path, requirements={"k": 2})
    loaded = load_step(spec, run_id="r")
    candidate = anonymize_step(spec, loaded, run_id="r")
    stricter = plain_spec(tmp_path, requirements={"k": 50})
    assert not check_step(stricter, candidate, run_id="r", allowed_failures=["k_anonymity"]).passed
    assert not check_step(stricter, candidate, run_id="r", keep_workdir=True).passed
    assert Path(loaded.path).is_file() and Path(loaded.path).parent == run_dir(spec, "r")


def test_an_infeasible_step_wise_run_leaves_nothing(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path, requirements={"l": 9})
    loaded = load_step(spec, run_id="r")
    with pytest.raises(InfeasibleAnonymizationError):
        anonymize_step(spec, loaded, run_id="r")
    assert list(work_root.rglob("*")) == []


def test_an_infeasible_run_inside_the_database_leaves_nothing(tmp_path: Path, work_root: Path) -> None:
    db = census_duckdb(tmp_path / "census.duckdb")
    data = demo_spec_dict(tmp_path, rows=600, source={"duckdb": str(db), "table": "census"}, requirements={"l": 9})
    data.pop("workdir")
    spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    loaded = load_step(spec, run_id="r")
    assert loaded.kind == "snapshot"
    with pytest.raises(InfeasibleAnonymizationError):
        anonymize_step(spec, loaded, run_id="r")
    assert list(work_root.rglob("*")) == []


# ---------------------------------------------------------------- item 6: the age-based sweep


def _ended_run(tmp_path: Path, run: str) -> Path:
    """The run folder of ``plain_spec(tmp_path)`` loaded by a process that has ended since (as a killed run's)."""
    data = demo_spec_dict(tmp_path, rows=600)
    data.pop("workdir")
    spec_file = tmp_path / "ended_spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    code = (
        "import sys; from privacy_plugins.release import ReleaseSpec, load_step; "
        "print(load_step(ReleaseSpec.from_yaml(sys.argv[1]), run_id=sys.argv[2]).path)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(spec_file), run], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()).parent


def test_a_new_run_removes_stale_run_folders_and_nothing_else(
    tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = plain_spec(tmp_path)
    stale = _ended_run(tmp_path, "killed")
    young = _ended_run(tmp_path, "live")
    age_files(stale, 25)
    age_files(young, 23)
    release = stale.parent
    legacy = release / "20250101T000000Z-0123456789ab-0123456789"  # an earlier version's run folder: no marker
    legacy.mkdir(mode=0o700)
    (legacy / "raw.parquet").write_bytes(b"rows")
    (legacy / ".candidate.parquet.0badc0de.tmp").write_bytes(b"half")
    notes = release / "notes-0123456789"  # looks like a run folder, but holds a file no run writes
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    forged = release / "other-0123456789"  # a marker that does not name this folder
    forged.mkdir()
    (forged / RUN_MARKER).write_text("someone-else")
    elsewhere = work_root / "photos"  # not a release folder at all
    (elsewhere / "x-0123456789").mkdir(parents=True)
    (elsewhere / "x-0123456789" / "raw.parquet").write_bytes(b"mine")
    for folder in (legacy, notes, forged, elsewhere):
        age_files(folder, 100)
    load_step(spec, run_id="next")  # a new run starts
    left = sorted(p.name for p in release.iterdir())
    assert not stale.exists() and not legacy.exists()
    assert young.is_dir() and notes.is_dir() and forged.is_dir() and (elsewhere / "x-0123456789").is_dir()
    assert len(left) == 4  # live, next, notes, other
    monkeypatch.setenv(MAX_AGE_ENV, "20")
    assert sweep_stale_runs(work_root) == [young]
    monkeypatch.setenv(MAX_AGE_ENV, "off")
    assert sweep_stale_runs(work_root) == []


def test_the_default_temp_root_is_swept_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKDIR_ENV, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    spec = plain_spec(tmp_path)
    stale = _ended_run(tmp_path, "killed")
    assert stale.is_relative_to(tmp_path / "tmp")
    age_files(stale, 30)
    load_step(spec, run_id="next")
    assert not stale.exists()


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan", "inf"])
def test_a_bad_max_age_is_refused_before_anything_is_written(
    value: str, tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_AGE_ENV, value)
    with pytest.raises(ConfigurationError, match=MAX_AGE_ENV):
        load_step(plain_spec(tmp_path), run_id="r")
    assert list(work_root.rglob("*")) == []


# ---------------------------------------------------------------- item 18: a publish re-run after it published


def _through_check(spec: ReleaseSpec, run: str) -> tuple[Candidate, CheckResult]:
    candidate = anonymize_step(spec, load_step(spec, run_id=run), run_id=run)
    check = check_step(spec, candidate, run_id=run)
    assert check.passed
    return candidate, check


def _published_rows(spec: ReleaseSpec) -> int:
    table = read_published(spec.destination)
    assert table is not None
    return len(table)


@pytest.mark.parametrize("where", ["memory", "database", "database-to-parquet"])
def test_a_publish_rerun_after_it_published_succeeds_and_says_so(
    where: str, tmp_path: Path, work_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if where == "memory":
        spec = plain_spec(tmp_path)
    else:
        data = in_database_spec(tmp_path)
        if where == "database-to-parquet":
            data["destination"] = {"parquet": str(tmp_path / "out"), "table": "census_release"}
        spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    candidate, check = _through_check(spec, "dag__r")
    first = publish_step(spec, candidate, check, run_id="dag__r")
    remove_run_workdir(spec, "dag__r")  # the publish task ends the run
    published = spec.destination.duckdb or tmp_path / "out" / "census_release.parquet"
    mtime = published.stat().st_mtime_ns
    with caplog.at_level("WARNING", logger="privacy_plugins.release"):
        again = publish_step(spec, candidate, check, run_id="dag__r")  # Airflow "Clear" on the publish task
    assert again.already_published_by == "dag__r" and first.already_published_by == ""
    assert (again.rows, again.numbers) == (first.rows, first.numbers)
    assert "already published by run dag__r" in caplog.text
    assert published.stat().st_mtime_ns == mtime  # nothing written again
    assert list(work_root.rglob("*")) == []


def test_a_publish_rerun_after_the_worker_died_past_the_commit_succeeds(
    tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privacy_plugins.release import receipts

    spec = plain_spec(tmp_path)
    candidate, check = _through_check(spec, "r")
    write = receipts.write_receipt

    def die_after_commit(*args: object, **kwargs: object) -> None:
        if args[-1] == "published":
            raise SystemExit(-9)  # the worker is gone: the commit happened, the receipt was not updated
        write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(receipts, "write_receipt", die_after_commit)
    with pytest.raises(SystemExit):
        publish_step(spec, candidate, check, run_id="r")
    monkeypatch.setattr(receipts, "write_receipt", write)
    assert _published_rows(spec) == candidate.rows_out
    remove_run_workdir(spec, "r")  # e.g. swept, or the retry runs on another machine
    assert publish_step(spec, candidate, check, run_id="r").already_published_by == "r"


def test_a_publish_rerun_of_a_run_that_did_not_publish_still_fails_clearly(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path)
    candidate, check = _through_check(spec, "a")
    remove_run_workdir(spec, "a")  # its folder is gone, it never published
    with pytest.raises(ConfigurationError, match="working folder of run 'a' does not exist.*load step"):
        publish_step(spec, candidate, check, run_id="a")
    assert not spec.destination.duckdb.exists()  # type: ignore[union-attr]


def test_a_publish_rerun_after_another_run_replaced_the_release_fails(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path, history=False)  # other people each time, and a table replaced by hand: no history
    candidate, check = _through_check(spec, "a")
    publish_step(spec, candidate, check, run_id="a")
    remove_run_workdir(spec, "a")
    other = plain_spec(tmp_path, rows=700, history=False)  # a later release to the same destination replaced it
    later, later_check = _through_check(other, "b")
    publish_step(other, later, later_check, run_id="b")
    with pytest.raises(ConfigurationError, match="working folder of run 'a' does not exist"):
        publish_step(spec, candidate, check, run_id="a")
    publish_table(pp.generate_census(50, seed=3).drop(columns=["person_id"]), other.destination)  # replaced by hand
    remove_run_workdir(other, "b")
    with pytest.raises(ConfigurationError, match="working folder of run 'b' does not exist"):
        publish_step(other, later, later_check, run_id="b")  # its receipt, but not its table any more
    later, later_check = _through_check(other, "b")
    publish_step(other, later, later_check, run_id="b")
    remove_run_workdir(other, "b")
    forged = CheckResult.from_dict({**later_check.to_dict(), "candidate_sha256": "0" * 64})
    with pytest.raises(ConfigurationError, match="does not exist"):
        publish_step(other, later, forged, run_id="b")  # not the digest that run published
    assert _published_rows(spec) == later.rows_out


def test_publish_refuses_reordered_candidate_columns(tmp_path: Path, work_root: Path) -> None:
    spec = plain_spec(tmp_path)
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    assert check_step(spec, candidate, run_id="r").passed
    path = Path(candidate.path)
    table = pq.read_table(path)
    pq.write_table(table.select(list(reversed(table.column_names))), path)  # same names and values, new order
    forged, forged_check = _forged(spec, candidate, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    with pytest.raises(ReleaseBlocked, match=r"columns are not the ones the anonymize step wrote \(now \["):
        publish_step(spec, forged, forged_check, run_id="r")
    assert not spec.destination.duckdb.exists()  # type: ignore[union-attr]
