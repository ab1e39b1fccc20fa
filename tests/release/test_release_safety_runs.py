"""Issue 11, items 2, 3, 6, 7 and 9: per-run private working areas, marked rows, writing nothing on bad input,
and a publish step that re-measures what it writes."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.cli import main
from privacy_plugins.release import (
    Candidate,
    CheckResult,
    LoadedTable,
    ReleaseBlocked,
    ReleaseSpec,
    anonymize_step,
    check_step,
    load_step,
    publish_step,
    read_published,
    run_release,
)
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.staged_candidate import staged_measure

WORKDIR_ENV = "PRIVACY_PLUGINS_WORKDIR"

QIS = ["age", "sex", "zip", "education", "marital_status"]


def plain_spec(folder: Path, name: str, *, rows: int, seed: int = 0, **overrides: object) -> dict[str, object]:
    """A demo spec as a user writes it: no ``report:`` and no ``workdir:`` (the defaults apply)."""
    data = demo_spec_dict(folder, rows=rows, **overrides)
    data["name"] = name
    data["source"] = {**data["source"], "seed": seed}  # type: ignore[dict-item]
    data.pop("report")
    data.pop("workdir")
    return data


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# ---------------------------------------------------------------- item 2: runs never share working files


def test_two_specs_in_one_folder_never_read_each_others_working_files(tmp_path: Path, work_root: Path) -> None:
    a = ReleaseSpec.from_dict(
        plain_spec(tmp_path, "a", rows=900, destination={"duckdb": "a.duckdb"}), base_dir=tmp_path
    )
    b = ReleaseSpec.from_dict(
        plain_spec(tmp_path, "b", rows=1_100, seed=1, destination={"duckdb": "b.duckdb"}), base_dir=tmp_path
    )
    loaded_a = load_step(a)
    load_step(b)  # started just after a, in the same folder
    candidate = anonymize_step(a, loaded_a)
    assert candidate.rows_in == 900  # a's own table, not b's


def test_a_step_refuses_an_artifact_of_another_run_spec_or_place(tmp_path: Path, work_root: Path) -> None:
    from privacy_plugins.release import ForeignArtifactError

    a = ReleaseSpec.from_dict(plain_spec(tmp_path, "a", rows=600), base_dir=tmp_path)
    b = ReleaseSpec.from_dict(plain_spec(tmp_path, "b", rows=600, seed=1), base_dir=tmp_path)
    loaded = load_step(a, run_id="run-1")
    assert (loaded.run_id, loaded.spec_name, loaded.source_fingerprint) == ("run-1", "a", a.source_fingerprint)
    with pytest.raises(ForeignArtifactError, match="another release"):
        anonymize_step(b, loaded)
    with pytest.raises(ForeignArtifactError, match="belongs to run 'run-1'"):
        anonymize_step(a, loaded, run_id="run-2")
    elsewhere = tmp_path / "planted.parquet"
    pp.generate_census(600, seed=5).to_parquet(elsewhere)
    forged = LoadedTable.from_dict({**loaded.to_dict(), "path": str(elsewhere)})  # e.g. an edited XCom value
    with pytest.raises(ForeignArtifactError, match="not to its run's working file"):
        anonymize_step(a, forged)
    unnamed = LoadedTable.from_dict({k: v for k, v in loaded.to_dict().items() if k != "spec_name"})
    with pytest.raises(ForeignArtifactError):
        anonymize_step(a, unnamed)
    candidate = anonymize_step(a, loaded, run_id="run-1")
    with pytest.raises(ForeignArtifactError):
        check_step(a, candidate, run_id="run-2")


def _release_cli(spec: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-m", "privacy_plugins.cli", "release", str(spec), "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _expected(tmp_path: Path, name: str, data: dict[str, object]) -> pd.DataFrame:
    alone = tmp_path / f"alone_{name}"
    alone.mkdir()
    spec = ReleaseSpec.from_dict({**data, "destination": {"duckdb": "x.duckdb", "table": "t"}}, base_dir=alone)
    assert run_release(spec).passed
    published = read_published(spec.destination)
    assert published is not None
    return published


def test_concurrent_releases_in_one_folder_each_publish_their_own_data(tmp_path: Path, work_root: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    specs = {
        "a": plain_spec(shared, "a", rows=700, seed=0, destination={"duckdb": "a.duckdb", "table": "t"}),
        "b": plain_spec(shared, "b", rows=900, seed=1, destination={"duckdb": "b.duckdb", "table": "t"}),
    }
    for name, data in specs.items():
        (shared / f"{name}.yaml").write_text(yaml.safe_dump(data))
    running = [_release_cli(shared / f"{name}.yaml") for name in specs]
    outcomes = [process.communicate(timeout=300) for process in running]
    assert [p.returncode for p in running] == [0, 0], outcomes
    for name, data in specs.items():
        got = read_published(ReleaseSpec.from_yaml(shared / f"{name}.yaml").destination)
        pd.testing.assert_frame_equal(got, _expected(tmp_path, name, data))
    assert files_under(work_root) == []  # both runs cleaned up after themselves


def test_concurrent_releases_to_one_destination_leave_one_whole_release(tmp_path: Path, work_root: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    specs = {
        "a": plain_spec(shared, "a", rows=700, seed=0, destination={"duckdb": "one.duckdb", "table": "t"}),
        "b": plain_spec(shared, "b", rows=900, seed=1, destination={"duckdb": "one.duckdb", "table": "t"}),
    }
    for name, data in specs.items():
        (shared / f"{name}.yaml").write_text(yaml.safe_dump(data))
    running = {name: _release_cli(shared / f"{name}.yaml") for name in specs}
    outcomes = {name: (p.communicate(timeout=300), p.returncode) for name, p in running.items()}
    codes = {name: code for name, (_, code) in outcomes.items()}
    assert 0 in codes.values(), outcomes
    for name, ((_, err), code) in outcomes.items():
        assert code == 0 or (code == 2 and "another release is publishing" in err), (name, err)
    got = read_published(ReleaseSpec.from_yaml(shared / "a.yaml").destination)
    matches = [name for name, data in specs.items() if got.equals(_expected(tmp_path, name, data))]
    assert len(matches) == 1 and codes[matches[0]] == 0


def test_publishing_while_another_release_holds_the_destination_fails_clearly(tmp_path: Path) -> None:
    from privacy_plugins.release import DestinationBusy
    from privacy_plugins.release.workarea import destination_lock

    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=600))
    loaded = load_step(spec)
    candidate = anonymize_step(spec, loaded)
    check = check_step(spec, candidate)
    with destination_lock(spec.destination), pytest.raises(DestinationBusy, match="another release is publishing"):
        publish_step(spec, candidate, check)
    assert read_published(spec.destination) is None
    assert publish_step(spec, candidate, check).rows == candidate.rows_out  # free again


# ---------------------------------------------------------------- item 3: marked rows are checked as published


@pytest.mark.parametrize("requirements", [{}, {"l": None}], ids=["k5-l2", "k5"])
def test_release_and_published_agree_on_a_mark_spec(
    tmp_path: Path, requirements: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    data = demo_spec_dict(tmp_path, algorithm={"suppressed_rows": "mark"}, requirements=requirements)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    released = main(["release", str(spec), "--quiet", "--format", "json"])
    summary = json.loads(capsys.readouterr().out)
    published = main(["published", str(spec), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert released == 0 and published == 0, (summary, report)
    assert report["holds"] is True
    for check in summary["check"]["checks"]:
        assert check["passed"]
    measured = {r["model"]: r["observed"] for r in report["requirements"]}
    gate = {c["requirement"]: c["observed"] for c in summary["check"]["checks"] if c["requirement"] in measured}
    assert gate == measured  # the gate measured exactly what `published` measures


# ---------------------------------------------------------------- item 6: bad input writes nothing


def test_k_larger_than_the_table_writes_nothing(
    tmp_path: Path, work_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(demo_spec_dict(tmp_path, rows=600, requirements={"k": 100_000})))
    assert main(["release", str(spec), "--quiet"]) == 2
    assert "larger than the table" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists() and not (tmp_path / "work").exists()
    assert not (tmp_path / "release.duckdb").exists()
    assert files_under(work_root) == []


# ---------------------------------------------------------------- item 7: working files are private and temporary


@pytest.mark.parametrize("requirements", [{}, {"l": 9}], ids=["published", "refused"])
def test_working_files_are_outside_the_report_folder_and_removed(
    tmp_path: Path, work_root: Path, requirements: dict[str, object]
) -> None:
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600, requirements=requirements), base_dir=tmp_path)
    result = run_release(spec)
    assert result.passed is not bool(requirements)
    assert spec.report.directory.is_dir()
    assert [p for p in files_under(spec.report.directory) if p.suffix == ".parquet" or ".work" in p.parts] == []
    assert files_under(work_root) == [] and result.workdir is None


def test_a_crashed_release_removes_its_working_files(
    tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    def crash() -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(destination_base, "before_swap", crash)
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600), base_dir=tmp_path)
    with pytest.raises(RuntimeError, match="injected"):
        run_release(spec)
    assert files_under(work_root) == []


def test_kept_working_files_are_private_and_per_run(tmp_path: Path, work_root: Path) -> None:
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600), base_dir=tmp_path)
    first = run_release(spec, keep_workdir=True)
    second = run_release(spec, keep_workdir=True)
    assert first.workdir and second.workdir and first.workdir != second.workdir
    for kept, result in ((Path(first.workdir), first), (Path(second.workdir), second)):
        assert stat.S_IMODE(kept.stat().st_mode) == 0o700
        assert Path(result.loaded.path).parent == kept and Path(result.loaded.path).is_file()
        assert kept.is_relative_to(work_root)
    in_spec = ReleaseSpec.from_dict({**plain_spec(tmp_path, "r", rows=600), "workdir": "mine"}, base_dir=tmp_path)
    kept = run_release(in_spec).workdir
    assert kept is not None and Path(kept).is_relative_to(tmp_path / "mine")
    assert stat.S_IMODE(Path(kept).stat().st_mode) == 0o700


def test_a_shared_work_root_owned_by_someone_else_or_a_symlink_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.delenv(WORKDIR_ENV, raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    target = tmp_path / "attacker"
    target.mkdir()
    (tmp_path / f"privacy-plugins-{os.getuid()}").symlink_to(target)
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600), base_dir=tmp_path)
    with pytest.raises(pp.errors.ConfigurationError, match="not a plain directory"):
        run_release(spec)
    assert list(target.iterdir()) == []


# ---------------------------------------------------------------- item 9: publishing re-measures


@pytest.mark.parametrize("algorithm", [{}, {"suppressed_rows": "mark"}], ids=["snapshot", "rows"])
def test_a_hand_made_check_result_cannot_publish_a_k1_table(tmp_path: Path, algorithm: dict[str, str]) -> None:
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=600, algorithm=algorithm))
    candidate = anonymize_step(spec, load_step(spec))
    frame = pd.read_parquet(candidate.path)
    frame.loc[0, "age"] = "[0-1)"  # a unique record: k = 1
    frame.to_parquet(candidate.path, index=False)
    digest = hashlib.sha256(Path(candidate.path).read_bytes()).hexdigest()
    forged_candidate = Candidate.from_dict({**candidate.to_dict(), "sha256": digest})
    digest = staged_measure(spec, forged_candidate).digest  # a check carries the digest of what it measured
    forged = CheckResult.from_dict(
        {
            "passed": True,
            "checks": [],
            "candidate_path": candidate.path,
            "candidate_sha256": digest,
            "run_id": candidate.to_dict().get("run_id", ""),
            "spec_name": spec.name,
            "source_fingerprint": getattr(spec, "source_fingerprint", ""),
        }
    )
    with pytest.raises(ReleaseBlocked, match=r"(?s)re-measured before writing.*5-anonymity"):
        publish_step(spec, forged_candidate, forged)
    assert read_published(spec.destination) is None


# ---------------------------------------------------------------- found while attacking the flow


@pytest.mark.parametrize("workdir", ["release_output/r/.work", "release_output/r"])  # spec "r"'s report folder
def test_a_workdir_inside_the_report_folder_is_refused(tmp_path: Path, workdir: str) -> None:
    data = {**plain_spec(tmp_path, "r", rows=600), "workdir": workdir}  # the old default was <report>/.work
    with pytest.raises(pp.errors.ConfigurationError, match="inside the report folder"):
        ReleaseSpec.from_dict(data, base_dir=tmp_path)


def test_a_work_root_from_the_environment_inside_the_report_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKDIR_ENV, str(tmp_path / "release_output" / "r" / "tmp"))
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600), base_dir=tmp_path)
    with pytest.raises(pp.errors.ConfigurationError, match="inside the report folder"):
        run_release(spec)
    assert not (tmp_path / "release_output").exists()


def test_a_spec_name_cannot_escape_the_work_root(tmp_path: Path, work_root: Path) -> None:
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "../../escape", rows=600), base_dir=tmp_path)
    loaded = load_step(spec, run_id="../../../run")
    assert Path(loaded.path).resolve().is_relative_to(work_root.resolve())
    assert not (tmp_path / "escape").exists() and not (tmp_path / "run").exists()


def test_a_planted_symlink_in_the_run_folder_is_not_followed(tmp_path: Path, work_root: Path) -> None:
    spec = ReleaseSpec.from_dict(plain_spec(tmp_path, "r", rows=600), base_dir=tmp_path)
    loaded = load_step(spec, run_id="run-1")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    candidate_path = Path(loaded.path).with_name("candidate.parquet")
    candidate_path.symlink_to(victim)  # e.g. left by someone with access to the folder
    candidate = anonymize_step(spec, loaded)
    assert victim.read_text() == "keep me" and not Path(candidate.path).is_symlink()
