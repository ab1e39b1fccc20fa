"""A built-in GX expectation as a Dagster check: GX's unexpected counts in the description, no values (item 19)."""

from __future__ import annotations

import json
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


def test_a_failed_builtin_expectation_is_described_by_gx_counts(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    suite = tmp_path / "builtin.json"
    expectation = {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "disease", "value_set": []}}
    suite.write_text(json.dumps({"name": "builtin", "expectations": [expectation]}), encoding="utf-8")
    spec = ReleaseSpec.from_dict(census_spec(), base_dir=tmp_path)
    result = run_graph(build_release_assets(spec, expectation_suite=suite))
    check = inspect_run.evaluations(result)["gx_builtin"]
    rows = next(
        e.materialization.metadata["rows published"].value
        for e in result.get_asset_materialization_events()
        if e.asset_key.path[-1] == "anonymized_candidate"
    )
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    assert f"{rows} of {rows} rows unexpected" in check.description
    assert "classes" not in check.description and "in violation" not in check.description
    (summary,) = check.metadata["expectations"].value
    assert f"{rows} of {rows} rows unexpected" in summary["message"]
    text = check.description + json.dumps(summary)
    assert not [d for d in ("flu", "asthma", "none", "cancer", "diabetes", "hypertension") if f"'{d}'" in text]
    assert read_published(spec.destination) is None
