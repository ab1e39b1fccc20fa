"""The release end to end: publish only when every check passes, atomically, idempotently."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from release_fixtures import demo_spec_dict, kept_by_the_history

import privacy_plugins as pp
from privacy_plugins.errors import ForeignArtifactError
from privacy_plugins.release import (
    CheckResult,
    ReleaseBlocked,
    ReleaseSpec,
    anonymize_step,
    check_step,
    diagnose_step,
    load_step,
    publish_step,
    read_published,
    run_release,
)
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.steps import Candidate, LoadedTable


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


QIS = ["age", "sex", "zip", "education", "marital_status"]


def spec_for(tmp_path: Path, **overrides: object) -> ReleaseSpec:
    return ReleaseSpec.from_dict(demo_spec_dict(tmp_path, **overrides), base_dir=tmp_path)


def test_demo_release_publishes_a_table_that_re_measures_above_target(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    result = run_release(spec)
    assert result.passed and result.failure is None
    published = read_published(spec.destination)
    assert published is not None and len(published) == result.published.rows  # type: ignore[union-attr]
    report = pp.measure(published, quasi_identifiers=QIS, sensitive_attributes=["disease", "income"])
    assert report.k >= 5
    assert report.for_attribute("disease").distinct_l >= 2
    assert "person_id" not in published.columns
    candidate = result.candidate
    assert candidate is not None
    assert candidate.rows_in == candidate.rows_out + candidate.suppressed == 1_500
    assert Path(result.diagnosis.html_path).exists() and spec.report.release_json.exists()
    assert json.loads(spec.report.release_json.read_text())["passed"] is True


def test_rerunning_gives_the_same_release(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    run_release(spec)
    first = read_published(spec.destination)
    run_release(spec)
    pd.testing.assert_frame_equal(first, read_published(spec.destination))


def test_impossible_requirement_publishes_nothing_and_keeps_the_old_release(tmp_path: Path) -> None:
    good = spec_for(tmp_path)
    run_release(good)
    before = read_published(good.destination)
    # Other roles cannot share the release history (refused, exit 2): this spec checks its release alone.
    impossible = spec_for(tmp_path, requirements={"l": 9}, sensitive_attributes=["disease"], history=False)
    result = run_release(impossible)
    assert not result.passed and result.published is None
    assert "distinct-9-diversity" in (result.failure or "")
    pd.testing.assert_frame_equal(before, read_published(good.destination))
    assert Path(result.diagnosis.html_path).exists()  # the diagnosis stays for the user
    assert json.loads(impossible.report.release_json.read_text())["passed"] is False


def test_a_failed_check_blocks_publishing(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    loaded = load_step(spec)
    candidate = anonymize_step(spec, loaded)
    # Tamper with the candidate: a unique record makes k = 1.
    frame = pd.read_parquet(candidate.path)
    frame.loc[0, "age"] = "[0-1)"
    frame.to_parquet(candidate.path, index=False)
    with pytest.raises(ForeignArtifactError, match="changed after it was written"):
        check_step(spec, candidate)
    # As if the anonymizer itself had produced it: the artifact names the new bytes.
    candidate = Candidate.from_dict({**candidate.to_dict(), "sha256": sha256(Path(candidate.path))})
    check = check_step(spec, candidate)
    assert not check.passed
    assert "5-anonymity: observed k = 1, needs ≥ 5 (short by 4)" in check.summary()
    assert [c.name for c in check.checks] == [
        "no_identifiers",
        "row_accounting",
        "suppression_limit",
        "no_direct_identifiers",
        "k_anonymity",
        "distinct_l_diversity_disease",
        "distinct_l_diversity_income",
        "composition",  # against the release history (empty: the first release passes it)
    ]
    # The tampered record is alone in its class: k and both l-diversities fail.
    assert [c.name for c in check.checks if not c.passed] == [
        "k_anonymity",
        "distinct_l_diversity_disease",
        "distinct_l_diversity_income",
    ]
    with pytest.raises(ReleaseBlocked, match="failed checks"):
        publish_step(spec, candidate, check)
    assert read_published(spec.destination) is None


def test_steps_pass_json_artifacts_and_match_the_flow(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    loaded = LoadedTable.from_dict(json.loads(json.dumps(load_step(spec).to_dict())))
    assert "person_id" not in pd.read_parquet(loaded.path).columns  # no working file holds identifiers
    diagnose_step(spec, loaded)
    candidate = Candidate.from_dict(json.loads(json.dumps(anonymize_step(spec, loaded).to_dict())))
    check = CheckResult.from_dict(json.loads(json.dumps(check_step(spec, candidate).to_dict())))
    publication = publish_step(spec, candidate, check)
    stepwise = read_published(spec.destination)
    assert publication.rows == len(stepwise)
    other = spec_for(tmp_path / "flow")
    run_release(other)
    pd.testing.assert_frame_equal(stepwise, read_published(other.destination))


def _crash(*_: object) -> None:
    raise RuntimeError("injected crash between write and swap")


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "sqlite"])
def test_crash_between_write_and_swap_leaves_the_old_table(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    destination = {
        "duckdb": {"duckdb": str(tmp_path / "r.duckdb"), "table": "t"},
        "parquet": {"parquet": str(tmp_path / "pq"), "table": "t"},
        "sqlite": {"url": f"sqlite:///{tmp_path / 'r.sqlite'}", "table": "t"},
    }[kind]
    # Other people in the bigger release: the snapshot search steers it clear of what the first one disclosed
    # (docs/release-history.md), so it reaches the swap this test crashes.
    data = demo_spec_dict(tmp_path)
    data["destination"] = destination
    spec = ReleaseSpec.from_dict(data)
    assert run_release(spec).passed
    before = read_published(spec.destination)
    bigger = ReleaseSpec.from_dict({**data, "source": {**data["source"], "rows": 2_000}})
    monkeypatch.setattr(destination_base, "before_swap", _crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        run_release(bigger)
    pd.testing.assert_frame_equal(before, read_published(spec.destination))
    if kind == "parquet":
        names = [p.name for p in (tmp_path / "pq").iterdir() if p.name != ".t.lock"]
        assert [name for name in names if not kept_by_the_history(name)] == ["t.parquet"]


def test_hard_crash_of_the_process_leaves_the_old_duckdb_table(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path)  # other people next: as in the test above
    spec = ReleaseSpec.from_dict(data)
    run_release(spec)
    before = read_published(spec.destination)
    (tmp_path / "spec.json").write_text(json.dumps({**data, "source": {**data["source"], "rows": 2_000}}))
    script = (
        "import json, os, sys\n"
        "from privacy_plugins.release import ReleaseSpec, run_release\n"
        "from privacy_plugins.release.destination import base as destination_base\n"
        "destination_base.before_swap = lambda: os._exit(9)\n"
        f"run_release(ReleaseSpec.from_dict(json.load(open({str(tmp_path / 'spec.json')!r}))))\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True)
    assert completed.returncode == 9
    pd.testing.assert_frame_equal(before, read_published(spec.destination))


def test_csv_and_sqlite_sources(tmp_path: Path) -> None:
    frame = pp.generate_census(1_500, seed=0)
    frame.to_csv(tmp_path / "census.csv", index=False)
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'src.sqlite'}")
    frame.to_sql("people", engine, index=False)
    engine.dispose()
    generated = spec_for(tmp_path / "a")
    run_release(generated)
    expected = read_published(generated.destination)
    sources = [
        {"path": str(tmp_path / "census.csv")},
        {"url": f"sqlite:///{tmp_path / 'src.sqlite'}", "table": "people"},
        {"url": f"sqlite:///{tmp_path / 'src.sqlite'}", "query": "SELECT * FROM people"},
    ]
    for number, source in enumerate(sources):
        spec = ReleaseSpec.from_dict({**demo_spec_dict(tmp_path / f"s{number}"), "source": source})
        result = run_release(spec)
        assert result.passed, result.failure
        got = read_published(spec.destination)
        assert got is not None
        assert got["age"].tolist() == expected["age"].tolist()
        assert len(got) == len(expected)


def test_unknown_column_and_value_outside_hierarchy_fail_before_writing(tmp_path: Path) -> None:
    spec = spec_for(
        tmp_path,
        quasi_identifiers=["age", "sex", "zipcode"],
        hierarchies={"age": {"masking": {}}, "sex": {"masking": {}}, "zipcode": {"masking": {}}},
    )
    with pytest.raises(pp.errors.UnknownColumnError, match="zipcode"):
        run_release(spec)
    assert not (tmp_path / "release.duckdb").exists()
    frame = pp.generate_census(300, seed=0)
    frame.to_csv(tmp_path / "c.csv", index=False)
    bad = spec_for(
        tmp_path,
        source={"path": str(tmp_path / "c.csv")},
        hierarchies={**demo_spec_dict(tmp_path)["hierarchies"], "sex": {"taxonomy": {"*": ["Female"]}}},
    )
    with pytest.raises(
        pp.errors.HierarchyError, match=r"'sex' has 1 value\(s\) that are not leaves of its hierarchy \(values hidden"
    ):
        run_release(bad)
    assert read_published(bad.destination) is None


def test_marked_suppression_is_published_with_stars_and_checked_with_them(tmp_path: Path) -> None:
    # Marked rows are published, so they are one class of the published table and are measured with it.
    spec = spec_for(tmp_path, algorithm={"suppressed_rows": "mark"}, requirements={"l": None})
    result = run_release(spec)
    assert result.passed, result.failure
    published = read_published(spec.destination)
    assert published is not None and len(published) == 1_500
    stars = published[QIS].eq("*").all(axis=1)
    assert int(stars.sum()) == result.candidate.suppressed > 0  # type: ignore[union-attr]
    assert published.loc[stars, "disease"].eq("*").all()
    assert published.loc[stars, "income"].isna().all() and published.loc[~stars, "income"].notna().all()
    assert pp.k_anonymity(published, quasi_identifiers=QIS) >= 5  # the marked class included


def test_tampered_accounting_fails_the_check(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    candidate = anonymize_step(spec, load_step(spec))
    lying = Candidate.from_dict({**candidate.to_dict(), "rows_in": candidate.rows_in + 1})
    check = check_step(spec, lying)
    assert not check.passed and "row accounting" in check.summary()


def test_a_candidate_replaced_after_its_check_is_not_published(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    candidate = anonymize_step(spec, load_step(spec))
    check = check_step(spec, candidate)
    assert check.passed
    frame = pd.read_parquet(candidate.path)
    frame.loc[0, "age"] = "[0-1)"  # e.g. a concurrent run overwrote the working file
    frame.to_parquet(candidate.path, index=False)
    with pytest.raises(ReleaseBlocked, match="changed after it was (checked|written)"):
        publish_step(spec, candidate, check)
    assert read_published(spec.destination) is None
