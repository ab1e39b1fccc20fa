"""The release history kept with the destination: appended in the swap, checked in the gate, never raw, never silent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import yaml
from release_fixtures import REPO, demo_spec_dict, rerun_crashing_before_the_swap

from privacy_plugins.core.history import COUNT
from privacy_plugins.errors import HistoryError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.history_store import RELEASE, appended_tables, history_tables

DESTINATIONS = {
    "duckdb": lambda tmp: {"duckdb": str(tmp / "r.duckdb"), "table": "t"},
    "parquet": lambda tmp: {"parquet": str(tmp / "pq"), "table": "t"},
    "sqlite": lambda tmp: {"url": f"sqlite:///{tmp / 'r.sqlite'}", "table": "t"},
}


def _data(tmp_path: Path, kind: str = "duckdb", **overrides: Any) -> dict[str, Any]:
    data = demo_spec_dict(tmp_path, rows=600, **overrides)
    data["destination"] = DESTINATIONS[kind](tmp_path)
    return data


def _spec(data: dict[str, Any]) -> ReleaseSpec:
    return ReleaseSpec.from_dict(data)


def _history(spec: ReleaseSpec) -> Any:
    return read_history(spec, open_destination(spec.destination))


@pytest.mark.parametrize("kind", sorted(DESTINATIONS))
def test_each_publish_appends_its_classes_and_only_published_labels(tmp_path: Path, kind: str) -> None:
    spec = _spec(_data(tmp_path, kind))
    assert len(_history(spec)) == 0
    assert run_release(spec).passed
    assert run_release(spec).passed  # the same release again: its intersection is its own classes
    history = _history(spec)
    assert [r.sequence for r in history.releases] == [1, 2]
    published = read_published(spec.destination)
    assert published is not None
    for release in history.releases:
        assert release.rows == len(published)
        for column in [*spec.quasi_identifiers, *spec.sensitive_attributes]:  # nothing the release did not show
            shown = set(published[column].astype(str).str.replace(r"\.0$", "", regex=True))
            assert set(release.classes[column]) <= shown, column
        assert release.transformation["algorithm"] == "optimal"
        assert set(release.transformation["levels"]) == set(spec.quasi_identifiers)


def _disclosing_history(spec: ReleaseSpec) -> dict[str, pd.DataFrame]:
    """Two earlier 'releases' that, intersected, leave every record one disease the source never holds: any
    candidate fails (their incomes are hidden: they tell nothing about income)."""
    star = dict.fromkeys(spec.quasi_identifiers, "*")

    def release(values: list[str]) -> pd.DataFrame:
        rows = [{**star, "disease": value, "income": "*"} for value in values]
        return pd.DataFrame(rows).assign(**{COUNT: 300})

    empty = read_history(spec, open_destination(spec.destination))
    first = appended_tables(spec, empty, run_id="r1", classes=release(["smallpox", "asthma"]), transformation={})
    from privacy_plugins.release.history_store import history_from_tables

    grown = history_from_tables(spec, first)
    return appended_tables(spec, grown, run_id="r2", classes=release(["smallpox", "diabetes"]), transformation={})


def test_a_candidate_that_the_history_undoes_is_blocked_and_nothing_changes(tmp_path: Path) -> None:
    spec = _spec(_data(tmp_path))
    destination = open_destination(spec.destination)
    destination.write_companions(_disclosing_history(spec))
    result = run_release(spec)
    assert not result.passed
    failed = {c.name: c for c in result.check.checks if not c.passed} if result.check else {}
    assert "composition" in failed, result.failure
    assert failed["composition"].observed > 0  # the history leaves only "smallpox": every class empties it
    assert read_published(spec.destination) is None
    assert len(_history(spec)) == 2


def test_the_cli_exits_1_for_a_composition_failure_and_history_lists_it(tmp_path: Path) -> None:
    data = _data(tmp_path)
    spec = _spec(data)
    open_destination(spec.destination).write_companions(_disclosing_history(spec))
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(json.loads(json.dumps(data))))
    cli = [sys.executable, "-m", "privacy_plugins.cli"]
    env = {"PYTHONPATH": str(REPO)}
    released = subprocess.run([*cli, "release", str(spec_file)], capture_output=True, text=True, env=env)
    assert released.returncode == 1, released.stderr
    assert "composition" in released.stdout
    listed = subprocess.run([*cli, "history", str(spec_file), "--format", "json"], capture_output=True, text=True)
    assert listed.returncode == 1, listed.stderr
    report = json.loads(listed.stdout)
    assert [r["run_id"] for r in report["releases"]] == ["r1", "r2"]
    disease = next(a for a in report["attacks"] if a["sensitive_attribute"] == "disease")
    assert disease["overall"]["below_l"] == disease["records"] == 600
    assert "smallpox" not in listed.stdout  # counts only


@pytest.mark.parametrize("kind", sorted(DESTINATIONS))
def test_a_changed_history_stops_the_next_release_before_any_work(tmp_path: Path, kind: str) -> None:
    spec = _spec(_data(tmp_path, kind))
    assert run_release(spec).passed
    before = read_published(spec.destination)
    destination = open_destination(spec.destination)
    names = history_tables(spec)
    tables = destination.read_companions(names.names)
    classes = tables[names.classes]
    tables[names.classes] = classes.assign(**{COUNT: classes[COUNT] + (classes.index == 0)})  # one count edited
    destination.write_companions(tables)
    with pytest.raises(HistoryError, match="changed outside privacy-plugins"):
        run_release(spec)
    pd.testing.assert_frame_equal(before, read_published(spec.destination))
    dropped = {names.classes: tables[names.classes], names.releases: tables[names.releases].iloc[:0]}
    destination.write_companions(dropped)  # a release removed from the list: its rows no longer match
    with pytest.raises(HistoryError):
        run_release(spec)


def test_a_published_table_without_history_is_an_error_until_adopted(tmp_path: Path) -> None:
    data = _data(tmp_path, history=False)
    assert run_release(_spec(data)).passed
    data.pop("history")
    spec = _spec(data)
    with pytest.raises(HistoryError, match="--adopt"):
        run_release(spec)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    adopted = subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", "history", str(spec_file), "--adopt", "--no-attack"],
        capture_output=True,
        text=True,
    )
    assert adopted.returncode == 0, adopted.stderr
    assert [r.run_id.startswith("adopted-") for r in _history(spec).releases] == [True]
    assert run_release(spec).passed
    assert len(_history(spec)) == 2


@pytest.mark.parametrize("kind", sorted(DESTINATIONS))
def test_a_crash_before_the_swap_keeps_the_old_release_with_the_old_history(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privacy_plugins as pp

    source = tmp_path / "people.csv"
    people = pp.generate_census(600)
    people.to_csv(source, index=False)
    spec = _spec({**_data(tmp_path, kind), "source": {"path": str(source)}})
    assert run_release(spec).passed
    before = read_published(spec.destination)
    rerun_crashing_before_the_swap(lambda: run_release(spec), source, people, monkeypatch)
    pd.testing.assert_frame_equal(before, read_published(spec.destination))
    assert [r.sequence for r in _history(spec).releases] == [1]  # a Parquet history swapped early is reconciled
    assert run_release(spec).passed
    assert [r.sequence for r in _history(spec).releases] == [1, 2]


def test_keep_releases_bounds_the_history_and_numbers_keep_counting(tmp_path: Path) -> None:
    spec = _spec(_data(tmp_path, history={"keep_releases": 2, "name": "weekly"}))
    for _ in range(3):
        assert run_release(spec).passed
    assert [r.sequence for r in _history(spec).releases] == [2, 3]
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as connection:
        tables = {row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert {"pp_history_weekly", "pp_history_weekly_releases"} <= tables
        assert connection.execute(f"SELECT COUNT(DISTINCT {RELEASE}) FROM pp_history_weekly").fetchone() == (2,)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"name": "a-b"}, "history.name"),
        ({"keep_releases": 0}, "history.keep_releases"),
        ({"every": 2}, "unknown setting"),
        ("sometimes", "history must be"),
    ],
)
def test_bad_history_settings_name_the_setting(tmp_path: Path, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _spec(_data(tmp_path, history=value))


def test_a_spark_table_refuses_an_explicit_history_and_a_spark_folder_keeps_one(tmp_path: Path) -> None:
    data = _data(tmp_path)
    data["destination"] = {"spark": "census_release"}
    assert not _spec(data).history.enabled
    with pytest.raises(ValueError, match="spark: table keeps no release history.*publish to a folder"):
        _spec({**data, "history": {"name": "x"}})
    data["destination"] = {"spark": str(tmp_path / "spark_out")}  # a folder: swapped by a link, like Parquet
    assert _spec(data).history.enabled


def test_diagnose_releases_attacks_any_published_tables_and_prints_counts_only(tmp_path: Path) -> None:
    source = pd.DataFrame({"age": [21, 22, 23, 24, 25], "disease": ["flu", "hiv", "flu", "cold", "hiv"]})
    first = pd.DataFrame({"age": ["[21-22]"] * 2 + ["[23-24]"] * 2, "disease": ["flu", "hiv", "flu", "cold"]})
    second = source.assign(age=["[21-23]"] * 3 + ["[24-25]"] * 2)
    paths = []
    for name, frame in (("source.csv", source), ("first.csv", first), ("second.parquet", second)):
        paths.append(tmp_path / name)
        frame.to_csv(paths[-1], index=False) if name.endswith(".csv") else frame.to_parquet(paths[-1])
    args = ["diagnose-releases", str(paths[1]), str(paths[2]), "--source", str(paths[0])]
    args += ["--quasi-identifiers", "age", "--sensitive-attributes", "disease", "--format", "json"]
    done = subprocess.run([sys.executable, "-m", "privacy_plugins.cli", *args], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    attack = json.loads(done.stdout)["attacks"][0]
    assert attack["overall"]["disclosed"] == 2 and attack["per_release"][0]["disclosed"] == 0
    assert not any(value in done.stdout for value in ("flu", "hiv", "cold"))
    missing = subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", *args[:-4], "--sensitive-attributes", "nope"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "nope" in missing.stderr and len(missing.stderr.splitlines()) == 1


def test_the_gate_attacks_the_candidate_when_the_spec_asks_for_attack_risk(tmp_path: Path) -> None:
    """An attack_risk requirement is judged on the original and the candidate rows, never passed unjudged."""
    requirements = [{"k_anonymity": {"k": 1}}, {"attack_risk": {"n_attacks": 100, "sensitive_attribute": "disease"}}]
    data = _data(tmp_path, history=False)
    data["requirements"] = requirements  # k = 1: the optimal node publishes the rows as they are
    result = run_release(_spec(data))
    assert not result.passed and read_published(_spec(data).destination) is None
    assert result.check is not None
    attack = next(c for c in result.check.checks if c.name.startswith("attack_risk"))
    assert not attack.passed and attack.observed is not None and attack.observed > 0.5
