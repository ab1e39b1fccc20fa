"""The factory and the resource reject bad definitions before any data is read."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

dg = pytest.importorskip("dagster")

from privacy_plugins.errors import ConfigurationError  # noqa: E402
from privacy_plugins.integrations.dagster import (  # noqa: E402
    STRUCTURAL_CHECKS,
    Policy,
    PrivacyReleaseResource,
    build_release_assets,
    requirement_check_names,
)
from privacy_plugins.release import ReleaseSpec  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def spec(census_spec: Callable[..., dict[str, Any]], tmp_path: Path) -> ReleaseSpec:
    return ReleaseSpec.from_dict(census_spec(t=0.9, bound=0.9), base_dir=tmp_path)


def test_one_check_per_requirement_named_after_the_model_registry(spec: ReleaseSpec) -> None:
    names = requirement_check_names(spec)
    assert names == (
        *STRUCTURAL_CHECKS,
        "k_anonymity",
        "distinct_l_diversity_disease",
        "t_closeness_disease",
        "personalized_leakage_disease",
        "composition",  # against the release history
    )
    release = build_release_assets(spec)
    assert release.check_names == names
    assert release.key("published") == dg.AssetKey(["census", "published"])
    assert release.resource_key == "census_release"
    for checks in release.asset_checks:
        assert all(check.blocking for check in checks.check_specs)


def test_loading_a_yaml_spec_touches_no_data(tmp_path: Path) -> None:
    release = build_release_assets(REPO / "specs" / "demo_impossible.yaml")
    assert release.spec.name == "demo_impossible"
    assert release.spec.workdir is None  # runs get private per-run folders; none is made at definition time
    assert not (REPO / "release_output" / ".work").exists()


@pytest.mark.parametrize(
    ("severity", "message"),
    [
        ({"k_anonimity": "warning"}, "unknown check 'k_anonimity'"),
        ({"k_anonymity": "warn"}, "must be one of \\['critical', 'warning', 'info'\\]"),
        ({"no_identifiers": "info"}, "structural check and always blocks"),
    ],
)
def test_bad_severities_are_rejected(spec: ReleaseSpec, severity: dict[str, str], message: str) -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=message):
        build_release_assets(spec, severity=severity)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"key_prefix": "my-release"}, dg.DagsterInvalidDefinitionError, "key_prefix"),
        ({"resource_key": "release key"}, dg.DagsterInvalidDefinitionError, "resource_key"),
        ({"policy": {"min_kk": 5}}, ConfigurationError, "unknown policy keys \\['min_kk'\\]"),
        ({"policy": {"min_k": 0}}, ConfigurationError, "policy min_k must be an integer >= 1"),
        ({"policy": {"max_t": 1.5}}, ConfigurationError, "policy max_t"),
    ],
)
def test_bad_options_are_rejected(spec: ReleaseSpec, options: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build_release_assets(spec, **options)


def test_a_policy_floor_needs_the_requirement_in_the_spec(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    spec = ReleaseSpec.from_dict(census_spec(l=None), base_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="does not require l"):
        build_release_assets(spec, policy=Policy(min_l=3))


def test_bad_suites_are_rejected(spec: ReleaseSpec, tmp_path: Path) -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="cannot be read as JSON"):
        build_release_assets(spec, expectation_suite=tmp_path / "missing.json")
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"name": "empty", "expectations": []}), encoding="utf-8")
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="non-empty 'expectations'"):
        build_release_assets(spec, expectation_suite=empty)
    suite = REPO / "expectations" / "demo_release.json"
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="share a check name"):
        build_release_assets(spec, expectation_suite=[suite, suite])


def test_a_suite_adds_one_blocking_check_without_importing_gx(spec: ReleaseSpec) -> None:
    release = build_release_assets(spec, expectation_suite=REPO / "expectations" / "demo_release.json")
    assert release.check_names[-1] == "gx_demo_release"


def test_two_graphs_of_one_spec_need_two_prefixes(spec: ReleaseSpec) -> None:
    first, second = build_release_assets(spec), build_release_assets(spec, key_prefix="census_strict")
    defs = dg.Definitions.merge(first.definitions(), second.definitions())
    assert len(defs.resolve_asset_graph().get_all_asset_keys()) == 8
    resources = first.resources()
    duplicate = dg.Definitions(assets=[*first.assets, *build_release_assets(spec).assets], resources=resources)
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="Duplicate asset key"):
        duplicate.resolve_asset_graph()


def test_resource_overrides_destination_and_paths_and_only_tightens(spec: ReleaseSpec, tmp_path: Path) -> None:
    resource = PrivacyReleaseResource(
        destination_parquet=str(tmp_path / "out"),
        destination_table="other",
        workdir=str(tmp_path / "w"),
        report_directory=str(tmp_path / "r"),
        min_k=2,
        max_t=0.5,
    )
    applied = resource.gate_spec(resource.release_spec(spec, namespace="census"))
    assert applied.destination.describe() == f"parquet:{tmp_path / 'out'}#other"
    assert applied.workdir == tmp_path / "w" / "census"
    assert applied.report.directory == tmp_path / "r"
    assert (applied.requirements.k, applied.requirements.t) == (3, 0.5)  # k=3 stays: a floor never loosens
    assert dataclasses.replace(applied.requirements, k=3, t=0.9) == spec.requirements
    with pytest.raises(ConfigurationError, match="exactly one of duckdb, parquet or url"):
        PrivacyReleaseResource(destination_parquet="a", destination_duckdb="b").release_spec(spec, namespace="x")
    with pytest.raises(Exception, match="greater than or equal to 1"):
        PrivacyReleaseResource(min_k=0)
