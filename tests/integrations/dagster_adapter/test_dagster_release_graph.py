"""The release graph end to end, in process: publish only when the blocking checks pass."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

dg = pytest.importorskip("dagster")

from privacy_plugins import measure  # noqa: E402
from privacy_plugins.integrations.dagster import PrivacyReleaseResource, build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, publish_table, read_published  # noqa: E402

QIS = ["age", "sex", "zip", "education", "marital_status"]
SENTINEL = pd.DataFrame({"release": ["previous"], "rows": [3]})


def _spec(census_spec: Callable[..., dict[str, Any]], tmp_path: Path, **overrides: Any) -> ReleaseSpec:
    return ReleaseSpec.from_dict(census_spec(**overrides), base_dir=tmp_path)


def _previous_release(spec: ReleaseSpec) -> None:
    publish_table(SENTINEL, spec.destination)


def _destination_unchanged(spec: ReleaseSpec) -> bool:
    current = read_published(spec.destination)
    return current is not None and current.equals(SENTINEL)


def test_passing_graph_publishes_a_table_that_meets_the_targets(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _spec(census_spec, tmp_path)
    release = build_release_assets(spec, owners=["team:privacy"], tags={"domain": "health"})
    result = run_graph(release)
    assert result.success
    # catalog metadata: kinds, owners, tags on every asset; the published table named as dagster-duckdb does
    specs = {key.path[-1]: asset.specs_by_key[key] for asset in release.assets for key in asset.keys}
    assert {name: set(s.kinds) for name, s in specs.items()} == {
        "raw": {"python"},
        "privacy_diagnosis": {"python", "html"},
        "anonymized_candidate": {"python", "parquet"},
        "published": {"python", "duckdb"},
    }
    assert {(tuple(s.owners), s.tags["domain"], s.tags["privacy"]) for s in specs.values()} == {
        (("team:privacy",), "health", "release")
    }
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == "published"]
    metadata = event.materialization.metadata
    database = Path(spec.destination.duckdb).resolve()  # type: ignore[arg-type]
    assert metadata["dagster/uri"].value == f"duckdb://{database}/main/census_release"
    assert metadata["dagster/table_name"].value == "main.census_release"
    published_columns = [c.name for c in metadata["dagster/column_schema"].schema.columns]
    assert metadata["dagster/row_count"].value == metadata["release numbers"].value["rows"]
    assert inspect_run.materialized(result) == {"raw", "privacy_diagnosis", "anonymized_candidate", "published"}
    checks = inspect_run.evaluations(result)
    assert set(checks) == set(release.check_names)
    assert all(c.passed for c in checks.values())
    table = read_published(spec.destination)
    assert table is not None and "person_id" not in table.columns
    assert published_columns == [str(c) for c in table.columns]
    report = measure(table, quasi_identifiers=QIS, sensitive_attributes=["disease"])
    assert report.k >= 3
    assert report.for_attribute("disease").distinct_l >= 2
    # the private copy, in the run's own folder under the key prefix
    assert len(list((tmp_path / "work" / "census").glob("*/*/candidate.parquet"))) == 1


def test_failing_blocking_check_stops_published_and_keeps_the_destination(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _spec(census_spec, tmp_path)
    _previous_release(spec)
    release = build_release_assets(spec, policy={"min_k": 50})
    result = run_graph(release)
    assert not result.success
    k_check = inspect_run.evaluations(result)["k_anonymity"]
    assert not k_check.passed
    assert k_check.severity == dg.AssetCheckSeverity.ERROR
    assert "needs ≥ 50" in k_check.description
    assert "anonymized_candidate" in inspect_run.materialized(result)  # stored privately, as Dagster does
    assert "published" not in inspect_run.materialized(result)
    assert "census__published" not in inspect_run.started_steps(result)
    assert _destination_unchanged(spec)


def test_published_alone_re_gates_the_candidate(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    """Selecting only ``published`` skips the checks; a run of its own finds no candidate of its own.

    A candidate belongs to the run that made it (issue 11): ``published`` never picks up another run's.
    Within one run, ``publish_step`` re-measures the candidate before writing (``tests/release``).
    """
    spec = _spec(census_spec, tmp_path)
    _previous_release(spec)
    strict = PrivacyReleaseResource(min_k=50)
    release = build_release_assets(spec)
    assert not run_graph(release, strict).success
    result = run_graph(release, strict, selection=["published"])
    assert not result.success
    assert inspect_run.started_steps(result) == {"census__published"}
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "no anonymized_candidate in this run" in failure.event_specific_data.error.message
    assert _destination_unchanged(spec)


def test_infeasible_requirements_fail_the_candidate_and_publish_nothing(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _spec(census_spec, tmp_path, l=9)
    _previous_release(spec)
    result = run_graph(build_release_assets(spec))
    assert not result.success
    assert inspect_run.materialized(result) == {"raw", "privacy_diagnosis"}
    assert inspect_run.evaluations(result) == {}
    assert "census__published" not in inspect_run.started_steps(result)
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert failure.step_key == "census__anonymized_candidate"
    assert "requirements cannot be met" in failure.event_specific_data.error.message
    assert _destination_unchanged(spec)


def test_an_infeasible_rerun_leaves_no_stale_candidate_to_publish(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any
) -> None:
    feasible = _spec(census_spec, tmp_path)
    assert run_graph(build_release_assets(feasible, policy={"min_k": 50})).success is False  # candidate stored
    _previous_release(feasible)
    impossible = build_release_assets(_spec(census_spec, tmp_path, l=9))
    assert not run_graph(impossible).success
    result = run_graph(impossible, selection=["published"])
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "no anonymized_candidate in this run" in failure.event_specific_data.error.message
    assert _destination_unchanged(feasible)


def test_warn_only_requirement_warns_and_still_publishes(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = _spec(census_spec, tmp_path)
    release = build_release_assets(spec, severity={"k_anonymity": "warning"}, policy={"min_k": 50})
    result = run_graph(release)
    assert result.success
    k_check = inspect_run.evaluations(result)["k_anonymity"]
    assert not k_check.passed and k_check.severity == dg.AssetCheckSeverity.WARN
    assert "published" in inspect_run.materialized(result)
    published = next(e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == "published")
    assert published.materialization.metadata["warn-only failures"].value == ["k_anonymity"]
    assert read_published(spec.destination) is not None


def test_resource_points_the_graph_at_another_destination(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any
) -> None:
    spec = _spec(census_spec, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    resource = PrivacyReleaseResource(destination_parquet=str(elsewhere), workdir=str(tmp_path / "private"))
    assert run_graph(build_release_assets(spec), resource).success
    assert (elsewhere / "census_release.parquet").is_file()
    assert len(list((tmp_path / "private" / "census").glob("*/*/candidate.parquet"))) == 1
    assert read_published(spec.destination) is None


def test_a_source_column_without_a_role_fails_the_raw_asset_and_publishes_nothing(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    data = census_spec()
    data["insensitive"] = ["income"]  # occupation has no role now
    spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    _previous_release(spec)
    result = run_graph(build_release_assets(spec))
    assert not result.success and inspect_run.materialized(result) == set()
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    error = failure.event_specific_data.error
    assert failure.step_key == "census__raw" and error.cause.cls_name == "ConfigurationError"
    assert "['occupation'] have no role" in error.cause.message
    assert _destination_unchanged(spec)


def test_attack_risk_check_metadata_holds_each_attacks_rates_and_interval(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    """Issue 31: the attack_risk check's metadata: per attack the risk, interval and rates (no value)."""
    attacks = {"n_attacks": 40, "sensitive_attribute": "disease", "singling_out": 1, "linkability": 1, "inference": 1}
    spec = _spec(census_spec, tmp_path, models=[{"attack_risk": attacks}])  # roles: the fixture names every column's
    release = build_release_assets(spec)
    result = run_graph(release, selection=["raw", "anonymized_candidate"])
    (name,) = [n for n in inspect_run.evaluations(result) if n.startswith("attack_risk")]
    check = inspect_run.evaluations(result)[name]
    assert check.passed
    metadata = {key: value.value for key, value in check.metadata.items()}
    for attack in ("singling_out", "linkability", "inference"):
        lo, hi = metadata[f"{attack} ci"]
        assert 0 <= lo <= metadata[f"{attack} risk"] <= hi <= 1
        for rate in ("attack rate", "baseline rate", "control rate"):
            assert 0 <= metadata[f"{attack} {rate}"] <= 1
        assert metadata["measures"][attack]["n_attacks"] == 40
    assert "k_anonymity" in inspect_run.evaluations(result)
    assert "measures" not in inspect_run.evaluations(result)["k_anonymity"].metadata
    raw = str(metadata)
    assert not any(value in raw for value in ("flu", "cold", "hiv", "diabetes"))
