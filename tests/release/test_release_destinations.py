"""Destinations and report folders that cannot be written fail up front (exit 2), I/O errors at publish
are one-line ``PublishError``s, and ``read_published`` refuses a destination that is not what it claims."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import yaml
from release_fixtures import REPO, demo_spec_dict

from privacy_plugins.cli import main
from privacy_plugins.release import publish_table, read_published
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.destinations import DestinationError, PublishError
from privacy_plugins.release.spec import DestinationSpec, ReportSpec

ON_LINUX_PROC = Path("/proc/self/mounts").exists()


def write_spec(tmp_path: Path, destination: dict[str, str] | None = None, **overrides: Any) -> Path:
    data = demo_spec_dict(tmp_path, rows=300, **overrides)
    if destination is not None:
        data["destination"] = destination  # replaced, not merged
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], **overrides: Any) -> tuple[int, str]:
    code = main(["release", str(write_spec(tmp_path, **overrides)), "--quiet"])
    _, err = capsys.readouterr()
    return code, err


def text_file(path: Path, text: str = "not a database\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def assert_nothing_written(tmp_path: Path, *, allowed: set[str]) -> None:
    """Only the spec and the files the test set up exist: no report folder, no workdir, no database."""
    present = {p.name for p in tmp_path.iterdir()}
    assert present <= allowed | {"spec.yaml"}, present - allowed


CASES = {
    "duckdb path under a file": (
        lambda t: (text_file(t / "file.txt"), {"duckdb": str(t / "file.txt" / "out.duckdb"), "table": "census"}),
        "destination.duckdb: {t}/file.txt/out.duckdb: a parent is a file",
    ),
    "duckdb file that is not DuckDB": (
        lambda t: (text_file(t / "release.duckdb"), {"duckdb": str(t / "release.duckdb"), "table": "census"}),
        "destination.duckdb: {t}/release.duckdb exists but is not a DuckDB database",
    ),
    "duckdb path that is a folder": (
        lambda t: ((t / "release.duckdb").mkdir(), {"duckdb": str(t / "release.duckdb"), "table": "census"}),
        "destination.duckdb: {t}/release.duckdb is a folder",
    ),
    "sqlite file under a file": (
        lambda t: (text_file(t / "file.txt"), {"url": f"sqlite:///{t}/file.txt/out.db", "table": "census"}),
        "destination.url: {t}/file.txt/out.db: a parent is a file",
    ),
    "sqlite file in a missing folder": (
        lambda t: (None, {"url": f"sqlite:///{t}/missing/out.db", "table": "census"}),
        "destination.url: {t}/missing/out.db: the folder {t}/missing does not exist",
    ),
    "sqlite file that is not SQLite": (
        lambda t: (text_file(t / "out.db"), {"url": f"sqlite:///{t}/out.db", "table": "census"}),
        "destination.url: {t}/out.db exists but is not a SQLite database",
    ),
    "unknown URL dialect": (
        lambda t: (None, {"url": "nosuchdb://user:secret@host/db", "table": "census"}),
        "destination.url: unknown database dialect 'nosuchdb'",
    ),
    "URL that is not a URL": (
        lambda t: (None, {"url": "just some text", "table": "census"}),
        "destination.url: not a SQLAlchemy URL",
    ),
    "parquet folder that is a file": (
        lambda t: (text_file(t / "out"), {"parquet": str(t / "out"), "table": "census"}),
        "destination.parquet: {t}/out is a file, not a folder",
    ),
    "parquet file that is not Parquet": (
        lambda t: (text_file(t / "out" / "census.parquet"), {"parquet": str(t / "out"), "table": "census"}),
        "destination.parquet: {t}/out/census.parquet exists but is not a Parquet file",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_unwritable_destination_exits_2_before_any_work(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup, expected = CASES[case]
    _, destination = setup(tmp_path)
    before = {p.name for p in tmp_path.iterdir()}
    code, err = run_cli(tmp_path, capsys, destination=destination)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert expected.format(t=tmp_path) in err, err
    assert "secret" not in err
    assert_nothing_written(tmp_path, allowed=before)


def test_report_folder_that_is_a_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text_file(tmp_path / "reports")
    code, err = run_cli(tmp_path, capsys, report={"directory": str(tmp_path / "reports")})
    assert code == 2 and err.count("\n") == 1
    assert f"report.directory: {tmp_path}/reports is a file, not a folder" in err
    assert (tmp_path / "reports").read_text() == "not a database\n"
    assert_nothing_written(tmp_path, allowed={"reports"})


def test_report_folder_under_a_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text_file(tmp_path / "file.txt")
    code, err = run_cli(tmp_path, capsys, report={"directory": str(tmp_path / "file.txt" / "reports")})
    assert code == 2 and f"report.directory: {tmp_path}/file.txt/reports: a parent is a file" in err
    assert_nothing_written(tmp_path, allowed={"file.txt"})


@pytest.mark.skipif(not ON_LINUX_PROC, reason="needs Linux /proc")
@pytest.mark.parametrize(
    "destination",
    [
        {"duckdb": "/proc/privacy_plugins_release.duckdb", "table": "census"},
        {"parquet": "/proc/self/privacy_plugins_out", "table": "census"},
        {"url": "sqlite:////proc/privacy_plugins_release.db", "table": "census"},
    ],
    ids=["duckdb", "parquet", "sqlite"],
)
def test_destination_under_proc_exits_2(
    destination: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(tmp_path, capsys, destination=destination)
    assert code == 2 and err.count("\n") == 1
    setting = next(k for k in destination if k != "table")
    assert f"destination.{setting}: " in err and "proc filesystem" in err, err
    assert_nothing_written(tmp_path, allowed=set())


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root can write anywhere")
def test_unwritable_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = run_cli(tmp_path, capsys, destination={"url": f"sqlite:///{locked}/out.db", "table": "census"})
        assert code == 2 and f"the folder {locked} is not writable" in err
    finally:
        locked.chmod(0o700)


def test_the_checks_create_nothing(tmp_path: Path) -> None:
    DestinationSpec(table="t", duckdb=tmp_path / "a" / "b" / "x.duckdb").check_writable()
    DestinationSpec(table="t", parquet=tmp_path / "p" / "q").check_writable()
    DestinationSpec(table="t", url=f"sqlite:///{tmp_path}/x.db").check_writable()
    ReportSpec(directory=tmp_path / "r" / "s").check_writable()
    assert list(tmp_path.iterdir()) == []


def test_the_checks_accept_existing_destinations(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    for spec in (
        DestinationSpec(table="t", duckdb=tmp_path / "x.duckdb"),
        DestinationSpec(table="t", parquet=tmp_path / "p"),
        DestinationSpec(table="t", url=f"sqlite:///{tmp_path}/x.db"),
    ):
        publish_table(frame, spec)
        spec.check_writable()
    (tmp_path / "empty.db").touch()  # SQLite takes an empty file as a new database
    DestinationSpec(table="t", url=f"sqlite:///{tmp_path}/empty.db").check_writable()


def test_io_error_at_publish_is_a_one_line_publish_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(destination_base, "before_swap", disk_full)
    for index, destination in enumerate(
        [
            {"duckdb": str(tmp_path / "release.duckdb"), "table": "census"},
            {"parquet": str(tmp_path / "out"), "table": "census"},
            {"url": f"sqlite:///{tmp_path}/release.db", "table": "census"},
        ]
    ):
        code, err = run_cli(tmp_path, capsys, destination=destination)
        assert code == 2, (destination, err)
        assert err.count("\n") == 1 and "No space left on device" in err and "left as it was" in err
        kind, where = next((k, v) for k, v in destination.items() if k != "table")
        spec = DestinationSpec(table="census", **{kind: where if kind == "url" else Path(where)})  # type: ignore[arg-type]
        assert read_published(spec) is None, index


def test_duckdb_error_at_publish_is_a_publish_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise duckdb.IOException("IO Error: could not write file")

    monkeypatch.setattr(destination_base, "before_swap", broken)
    with pytest.raises(PublishError, match="could not write file") as info:
        publish_table(pd.DataFrame({"a": [1]}), DestinationSpec(table="t", duckdb=tmp_path / "x.duckdb"))
    assert isinstance(info.value.__cause__, duckdb.Error)


@pytest.mark.parametrize(
    "make",
    [
        lambda t: DestinationSpec(table="t", duckdb=text_file(t / "x.duckdb")),
        lambda t: DestinationSpec(table="t", duckdb=(t / "dir.duckdb", (t / "dir.duckdb").mkdir())[0]),
        lambda t: DestinationSpec(table="t", parquet=text_file(t / "p")),
        lambda t: DestinationSpec(table="t", parquet=text_file(t / "q" / "t.parquet").parent),
        lambda t: DestinationSpec(table="t", url=f"sqlite:///{text_file(t / 'x.db')}"),
        lambda t: DestinationSpec(table="t", url="nosuchdb://host/db"),
    ],
    ids=["duckdb-text", "duckdb-folder", "parquet-file", "parquet-text", "sqlite-text", "unknown-dialect"],
)
def test_read_published_refuses_a_destination_that_is_not_what_it_claims(make: Any, tmp_path: Path) -> None:
    spec = make(tmp_path)
    with pytest.raises(DestinationError) as info:
        read_published(spec)
    assert "\n" not in str(info.value) and f"destination.{spec.kind}" in str(info.value)


def test_read_published_does_not_create_a_sqlite_file(tmp_path: Path) -> None:
    assert read_published(DestinationSpec(table="t", url=f"sqlite:///{tmp_path}/x.db")) is None
    assert list(tmp_path.iterdir()) == []


def test_published_cli_exits_2_for_a_destination_that_is_not_duckdb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text_file(tmp_path / "release.duckdb")
    assert main(["published", str(write_spec(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a DuckDB database" in err


def test_console_script_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    text_file(tmp_path / "file.txt")
    spec = write_spec(tmp_path, destination={"duckdb": str(tmp_path / "file.txt" / "x.duckdb"), "table": "census"})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", "release", str(spec), "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("privacy-plugins: error: destination.duckdb: ")
    assert_nothing_written(tmp_path, allowed={"file.txt"})
