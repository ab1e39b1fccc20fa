"""A GX suite as an extra blocking check: its expectations' severities decide ERROR or WARN."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

dg = pytest.importorskip("dagster")
pytest.importorskip("great_expectations")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, read_published  # noqa: E402

SUITES = Path(__file__).resolve().parents[3] / "expectations"


def test_a_failing_critical_suite_blocks_published(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    """The spec asks for k=2 only; the suite requires k=5 and l=2, so the GX check fails with ERROR."""
    spec = ReleaseSpec.from_dict(census_spec(k=2, l=None), base_dir=tmp_path)
    result = run_graph(build_release_assets(spec, expectation_suite=SUITES / "demo_release.json"))
    assert not result.success
    checks = inspect_run.evaluations(result)
    assert all(check.passed for name, check in checks.items() if name != "gx_demo_release")
    suite = checks["gx_demo_release"]
    assert not suite.passed and suite.severity == dg.AssetCheckSeverity.ERROR
    assert suite.metadata["failed"].value >= 1
    assert {o["expectation_type"] for o in suite.metadata["expectations"].value} == {
        "expect_table_to_be_k_anonymous",
        "expect_table_to_be_l_diverse",
    }
    assert "census__published" not in inspect_run.started_steps(result)
    assert read_published(spec.destination) is None


def test_a_failing_warning_suite_warns_and_publishes(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = ReleaseSpec.from_dict(census_spec(), base_dir=tmp_path)
    suites = [SUITES / "demo_release_monitoring.json"]
    result = run_graph(build_release_assets(spec, expectation_suite=suites))
    assert result.success
    monitoring = inspect_run.evaluations(result)["gx_demo_release_monitoring"]
    assert not monitoring.passed and monitoring.severity == dg.AssetCheckSeverity.WARN
    published = next(e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == "published")
    assert published.materialization.metadata["warn-only failures"].value == ["gx_demo_release_monitoring"]
    assert read_published(spec.destination) is not None


def test_gx_context_root_stores_the_suite_check_and_builds_data_docs(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    """The same setting as Airflow's check task: the suite check's result is kept, Data Docs list the run."""
    spec = ReleaseSpec.from_dict(census_spec(k=2, l=2), base_dir=tmp_path)
    root = tmp_path / "gx_context"
    release = build_release_assets(spec, expectation_suite=SUITES / "demo_release.json", gx_context_root=root)
    result = run_graph(release)
    checks = inspect_run.evaluations(result)
    assert "gx_demo_release" in checks
    (stored,) = (root / "gx" / "uncommitted" / "validations" / "demo_release").rglob("*.json")
    run = stored.relative_to(root / "gx" / "uncommitted" / "validations" / "demo_release").parts[0]
    assert run.endswith(result.run_id)  # the release's run id: <prefix>__<Dagster run id>
    assert (root / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()
