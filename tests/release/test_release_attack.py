"""Issue 24, attacks on the merged hardening: receipts, sweep, signals, staging registry."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from release_fixtures import age_files, demo_spec_dict

from privacy_plugins.errors import PublishError
from privacy_plugins.release import (
    Candidate,
    CheckResult,
    ReleaseSpec,
    anonymize_step,
    check_step,
    load_step,
    publish_step,
    publish_table,
    read_published,
)
from privacy_plugins.release.composition_gate import adopt_published
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.workarea import WORKDIR_ENV


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
    adopt_published(spec, open_destination(spec.destination))  # it was published with its history

    def full_disk() -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(destination_base, "before_swap", full_disk)
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
        loaded = Path(child.stdout.readline().strip())  # the live run's working file (its snapshot)
        live = loaded.parent
        assert live.is_dir()
        age_files(live, 30)  # its files were written 30 h ago; the anonymize step is still searching
        load_step(spec, run_id="next")  # another run starts and sweeps
        assert loaded.is_file()
    finally:
        child.communicate("", timeout=60)
    assert child.returncode == 0
    load_step(spec, run_id="after")  # the run is gone (killed): now its folder is a leftover
    assert not live.exists()


# ---------------------------------------------------------------- a stop signal in the instant after a swap


def test_a_stop_signal_while_the_previous_version_is_removed_leaves_the_new_linked_release_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privacy_plugins.cli._signals import Stopped, stopped_by_signals
    from privacy_plugins.release import versions
    from privacy_plugins.release.linked import publish_linked, read_linked
    from privacy_plugins.release.spec import DestinationSpec

    destination = DestinationSpec(table="pair", parquet=tmp_path / "out")
    old = {"qit": pd.DataFrame({"g": [1, 1]}), "st": pd.DataFrame({"g": [1], "n": [2]})}
    new = {"qit": pd.DataFrame({"g": [7, 7, 7]}), "st": pd.DataFrame({"g": [7], "n": [3]})}
    publish_linked(old, destination)
    remove = shutil.rmtree

    def terminated_meanwhile(path: object, *args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # docker stop while the previous version's files are removed
        remove(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(versions.shutil, "rmtree", terminated_meanwhile)
    with pytest.raises(Stopped), stopped_by_signals():
        publish_linked(new, destination)
    monkeypatch.undo()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    published = read_linked(destination)  # the link was swapped: the new pair is the release, whole
    assert published is not None
    assert published["qit"]["g"].tolist() == [7, 7, 7]


def test_a_stop_signal_during_a_duckdb_commit_is_not_turned_into_a_false_nothing_was_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb_engine

    from privacy_plugins.cli._signals import Stopped, stopped_by_signals
    from privacy_plugins.release.spec import DestinationSpec

    def commit_then_terminated(self: duckdb_engine.ConnectionWrapper) -> None:
        """DuckDB's COMMIT, interrupted by SIGTERM (handled right after it returns)."""
        duckdb_engine.ConnectionWrapper.__getattr__(self, "commit")()  # the DuckDB connection's own commit
        os.kill(os.getpid(), signal.SIGTERM)

    destination = DestinationSpec(table="people", duckdb=tmp_path / "out.duckdb")
    monkeypatch.setattr(duckdb_engine.ConnectionWrapper, "commit", commit_then_terminated, raising=False)
    try:
        with pytest.raises(Stopped), stopped_by_signals():
            publish_table(pd.DataFrame({"a": [1, 2, 3]}), destination)
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    published = read_published(destination)  # the commit happened: published, and the stop is still a stop
    assert published is not None and len(published) == 3


# ---------------------------------------------------------------- source.query: one statement in every dialect

_SMUGGLED = [
    "SELECT * FROM people WHERE name <> $$'$$; DROP TABLE victim; SELECT $$'$$",  # dollar quoting
    "SELECT * FROM people WHERE name <> $q$'$q$; DROP TABLE victim; SELECT $q$'$q$",
    "SELECT * FROM people WHERE name <> E'\\''; DROP TABLE victim; SELECT 'x'",  # backslash escapes
    "SELECT * FROM people # '\n; DROP TABLE victim; -- '",  # MySQL '#' comment
]


@pytest.mark.parametrize("query", _SMUGGLED)
def test_a_second_statement_hidden_by_a_dialects_quoting_is_refused(query: str) -> None:
    from privacy_plugins.errors import ConfigurationError
    from privacy_plugins.release.spec import SourceSpec

    with pytest.raises(ConfigurationError, match="source.query must be one SELECT statement"):
        SourceSpec(url="sqlite:///x.db", query=query)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM people WHERE note = 'a;b'",
        "SELECT * FROM people WHERE note = 'it''s; fine'",
        'SELECT "odd;name" FROM people',
        "SELECT $$a$$ AS x FROM people WHERE note = 'a;b'",
        "SELECT * FROM people WHERE path = 'C:\\' -- a Windows folder\n",
    ],
)
def test_a_single_statement_with_quoted_semicolons_is_accepted(query: str) -> None:
    from privacy_plugins.release.spec import SourceSpec

    assert SourceSpec(url="sqlite:///x.db", query=query).query is not None


def test_a_dollar_quoted_second_statement_never_reaches_a_duckdb_source(tmp_path: Path) -> None:
    import duckdb

    from privacy_plugins.errors import ConfigurationError

    database = tmp_path / "source.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("CREATE TABLE people AS SELECT 'a' AS name, 1 AS age")
        connection.execute("CREATE TABLE victim AS SELECT 1 AS x")
    query = (
        "SELECT * FROM people WHERE name <> $$'$$) AS a; DROP TABLE victim; COMMIT; "
        "SELECT * FROM (SELECT * FROM people WHERE name <> $$'$$"
    )
    data = demo_spec_dict(tmp_path, source={"duckdb": str(database), "query": query})
    with pytest.raises(ConfigurationError, match="one SELECT statement"):
        load_step(ReleaseSpec.from_dict(data, base_dir=tmp_path), run_id="r")
    with duckdb.connect(str(database)) as connection:
        assert ("victim",) in connection.execute("SHOW TABLES").fetchall()


# ---------------------------------------------------------------- a database's message quoting a cell


def test_a_postgresql_conversion_error_does_not_quote_the_cell_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_url: str
) -> None:
    import sqlalchemy as sa

    from privacy_plugins.cli import main

    engine = sa.create_engine(postgres_url)
    with engine.begin() as connection:
        pd.DataFrame({"person_id": [1, 2], "note": ["Jane Roe, HIV+", "x"], "age": [30, 40]}).to_sql(
            "patients", connection, index=False
        )
    engine.dispose()
    data = demo_spec_dict(
        tmp_path,
        source={"url": postgres_url, "query": "SELECT person_id, CAST(note AS integer) AS n, age FROM patients"},
    )
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    assert main(["release", str(spec_file), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "source.query" in err and "invalid input syntax for type integer" in err
    assert "Jane Roe" not in err, err
    assert main(["release", str(spec_file), "--quiet", "--include-values"]) == 2
    assert "Jane Roe" in capsys.readouterr().err  # asked for


# ---------------------------------------------------------------- a stop whose exception Python dropped


class _SignalledWhileCollected:
    """An object whose finalizer runs when SIGTERM arrives (Python drops what a ``__del__`` raises)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs here, inside __del__: its Stopped is "ignored"
            pass


def _default_handlers() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_whose_exception_was_dropped_still_stops_the_release_before_its_next_step() -> None:
    from rich.progress import Progress

    from privacy_plugins.cli._signals import Stopped, stopped_by_signals
    from privacy_plugins.cli.release import _StepDisplay

    display = _StepDisplay(Progress(disable=True), bar=False, lines=False)
    try:
        with pytest.raises(Stopped), stopped_by_signals():
            display.on_step("load")
            _SignalledWhileCollected()  # collected at once; its Stopped is lost
            display.on_step("diagnose")  # … but the run goes no further
            pytest.fail("the release went on after SIGTERM")
    finally:
        _default_handlers()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_block_that_ends_after_a_dropped_stop_still_ends_by_the_signal() -> None:
    from privacy_plugins.cli._signals import Stopped, stopped_by_signals

    try:
        with pytest.raises(Stopped), stopped_by_signals():
            _SignalledWhileCollected()
    finally:
        _default_handlers()


def test_a_run_folder_kept_with_keep_workdir_is_never_swept(tmp_path: Path, work_root: Path) -> None:
    from privacy_plugins.release.workarea import KEPT_MARKER

    data = demo_spec_dict(tmp_path, rows=300)
    data.pop("workdir")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    done = subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", "release", str(spec_file), "--quiet", "--keep-workdir"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (kept,) = [p.parent for p in work_root.rglob(".privacy-plugins-run")]
    assert (kept / KEPT_MARKER).is_file()
    age_files(kept, 100)  # the user comes back days later
    load_step(ReleaseSpec.from_yaml(spec_file), run_id="next")  # another run starts and sweeps
    assert kept.is_dir() and any(kept.glob("*.parquet"))


def test_a_publish_retry_inside_the_database_swaps_its_staging_table_in_instead_of_trusting_its_receipt(
    tmp_path: Path, work_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    import privacy_plugins as pp

    database = tmp_path / "census.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", pp.generate_census(600, seed=0))
        connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    data = demo_spec_dict(tmp_path, rows=600, source={"duckdb": str(database), "table": "census"})
    data.pop("workdir")
    data["destination"] = {"duckdb": str(database), "table": "census_release"}
    spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    candidate, check = _through_check(spec, "b")
    assert candidate.staging_table
    with duckdb.connect(str(database)) as connection:  # the release before: same measures, other occupations
        connection.execute(
            f"CREATE TABLE census_release AS SELECT * REPLACE ('(last month)' AS occupation) "
            f'FROM "{candidate.staging_table}"'
        )
    adopt_published(spec, open_destination(spec.destination))  # it was published with its history

    def full_disk() -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(destination_base, "before_swap", full_disk)
    with pytest.raises((PublishError, OSError)):
        publish_step(spec, candidate, check, run_id="b")  # rolled back: the staging table is still there
    monkeypatch.undo()
    monkeypatch.setenv(WORKDIR_ENV, str(work_root))
    retried = publish_step(spec, candidate, check, run_id="b")
    with duckdb.connect(str(database), read_only=True) as connection:
        stale = connection.execute("SELECT COUNT(*) FROM census_release WHERE occupation = '(last month)'").fetchone()
    assert retried.already_published_by == ""
    assert stale == (0,)
