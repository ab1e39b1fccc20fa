"""dagster_defs loads (specs only, no data) and its must-fail releases fail the way its docs say."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

dg = pytest.importorskip("dagster")

from privacy_plugins.integrations.dagster import PrivacyReleaseResource  # noqa: E402
from privacy_plugins.release import publish_table, read_published  # noqa: E402
from privacy_plugins.release.spec import DestinationSpec  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def demo() -> Any:
    return importlib.import_module("dagster_defs.definitions")


def test_definitions_hold_four_release_graphs_with_distinct_keys(demo: Any) -> None:
    graph = demo.defs.resolve_asset_graph()
    release_keys = {key for key in graph.get_all_asset_keys() if len(key.path) > 1}
    prefixes = {key.path[0] for key in release_keys}
    assert prefixes == {"demo_census", "census_policy_gate", "demo_impossible", "demo_census_monthly"}
    assert len(release_keys) == 16
    downstream = dg.AssetKey("census_release_summary")  # loads demo_census/published through the release's reader
    extract = dg.AssetKey("census_extract")  # the monthly release's source
    assert set(graph.get_all_asset_keys()) - release_keys == {downstream, extract}
    assert graph.get(downstream).parent_keys == {dg.AssetKey(["demo_census", "published"])}
    assert {key.asset_key.path[0] for key in graph.asset_check_keys} == prefixes
    assert importlib.import_module("dagster_defs").defs is demo.defs
    assert demo.policy_gate.spec.destination == demo.census.spec.destination  # the gate guards the same table


def test_the_must_fail_releases_fail_and_leave_the_destination_alone(
    demo: Any, tmp_path: Path, inspect_run: SimpleNamespace
) -> None:
    destination = DestinationSpec(table="census_release", duckdb=tmp_path / "release.duckdb")
    previous = pd.DataFrame({"release": ["previous"]})
    publish_table(previous, destination)
    releases = (demo.policy_gate, demo.impossible)
    resources = {
        key: value
        for release in releases
        for key, value in release.resources(
            PrivacyReleaseResource(
                destination_duckdb=str(destination.duckdb),
                workdir=str(tmp_path / "work"),
                report_directory=str(tmp_path / release.resource_key),
            )
        ).items()
    }
    result = dg.materialize(
        [part for release in releases for part in (*release.assets, *release.asset_checks)],
        resources=resources,
        raise_on_error=False,
    )
    assert not result.success
    checks = inspect_run.evaluations(result)
    assert not checks["k_anonymity"].passed and checks["k_anonymity"].severity == dg.AssetCheckSeverity.ERROR
    assert all(check.passed for name, check in checks.items() if name != "k_anonymity")
    failed = {e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"}
    assert failed == {"demo_impossible__anonymized_candidate", "census_policy_gate__privacy_requirements"}
    assert not {"census_policy_gate__published", "demo_impossible__published"} & inspect_run.started_steps(result)
    current = read_published(destination)
    assert current is not None and current.equals(previous)
