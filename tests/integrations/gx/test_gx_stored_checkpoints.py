"""Stored privacy checks (issue 29 item 10): a Checkpoint keeps each run's result and rebuilds Data Docs, no value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations import gx as privacy_gx
from privacy_plugins.integrations.gx.checkpoints import validate_candidate_stored
from privacy_plugins.release import ReleaseSpec, anonymize_step, load_step
from privacy_plugins.release.staged_candidate import measured_frame
from tests.release.release_fixtures import demo_spec_dict

REPO = Path(__file__).resolve().parents[3]
TEXT = (".json", ".html", ".yml", ".yaml", ".css", ".js")


def stored_texts(root: Path) -> dict[Path, str]:
    """Every text file of the GX context (results, pages, config)."""
    return {p: p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file() and p.suffix in TEXT}


def distinctive_values(frame: Any) -> set[str]:
    """The candidate's values that could not appear by chance in a GX page (not short, not a bare number)."""
    values = {str(v) for column in frame.columns for v in frame[column].dropna().unique()}
    common = {"none", "null", "true", "false"}  # words any GX page has (a disease "none" among the values)
    return {
        v
        for v in values
        if len(v) >= 4 and not v.replace(".", "").isdigit() and v.lower() not in common and set(v) != {"*"}
    }


def assert_no_value(root: Path, values: set[str]) -> None:
    texts = stored_texts(root)
    patterns = {v: re.compile(rf"(?<![\w-]){re.escape(v)}(?![\w-])") for v in values}  # a whole value, not in "fluent"
    leaked = {
        (str(p.relative_to(root)), v)
        for p, text in texts.items()
        for v, found in patterns.items()
        if found.search(text)
    }
    assert not leaked, sorted(leaked)[:5]


def test_two_runs_store_two_results_and_data_docs_list_both_without_a_value(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=300))
    suite = privacy_gx.load_suite(REPO / "expectations" / "demo_release.json")
    root = tmp_path / "gx_context"
    values: set[str] = set()
    for run in ("run-1", "run-2"):
        candidate = anonymize_step(spec, load_step(spec, run_id=run), run_id=run)
        values |= distinctive_values(measured_frame(spec, candidate))
        result = validate_candidate_stored(spec, candidate, suite, context_root=root)
        verdicts = privacy_gx.outcomes(result)
        assert {o.expectation_type for o in verdicts} == {
            "expect_table_to_be_k_anonymous",
            "expect_table_to_be_l_diverse",
        }
        assert all(o.status == "passed" for o in verdicts)
    stored = sorted((root / "gx" / "uncommitted" / "validations" / "demo_release").rglob("*.json"))
    assert [p.relative_to(root / "gx" / "uncommitted" / "validations" / "demo_release").parts[0] for p in stored] == [
        "run-1",
        "run-2",
    ]
    for path in stored:  # each holds the measured k and l, as counts
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
        assert {r["expectation_config"]["type"] for r in results} == {
            "expect_table_to_be_k_anonymous",
            "expect_table_to_be_l_diverse",
        }
        assert all(r["success"] and r["result"]["observed_value"] >= 2 for r in results)
    site = root / "gx" / "uncommitted" / "data_docs" / "local_site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "run-1" in index and "run-2" in index
    assert len(list((site / "validations" / "demo_release").rglob("*.html"))) == 2
    definitions = [json.loads(p.read_text()) for p in (root / "gx" / "validation_definitions").glob("*.json")]
    assert [d["name"] for d in definitions] == [f"{spec.name}: demo_release"]
    assert (root / "gx" / "checkpoints" / f"privacy {spec.name}.json").is_file()
    assert values and len(values) > 10  # the scan has something to find
    assert_no_value(root, values)
    config = (root / "gx" / "great_expectations.yml").read_text(encoding="utf-8")
    assert str(tmp_path / "release.duckdb") not in "".join(stored_texts(root).values())  # the URL: a ${variable}
    assert "${PRIVACY_PLUGINS_GX_CANDIDATE_URL}" in config


def test_a_column_statistic_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=200))
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    expectation = {"type": "expect_column_max_to_be_between", "kwargs": {"column": "disease", "max_value": 1}}
    suite = privacy_gx.load_suite({"name": "statistics", "expectations": [expectation]})
    root = tmp_path / "gx_context"
    with pytest.raises(ConfigurationError, match=r"gx_context_root: .*expect_column_max_to_be_between"):
        validate_candidate_stored(spec, candidate, suite, context_root=root)
    assert not root.exists()


def test_a_failed_builtin_map_expectation_stores_counts_never_its_unexpected_values(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=200))
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    expectation = {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "disease", "value_set": []}}
    suite = privacy_gx.load_suite({"name": "builtin", "expectations": [expectation]})
    root = tmp_path / "gx_context"
    (verdict,) = privacy_gx.outcomes(validate_candidate_stored(spec, candidate, suite, context_root=root))
    assert verdict.status == "failed" and verdict.details["unexpected_count"] == candidate.rows_out
    diseases = {str(v) for v in measured_frame(spec, candidate)["disease"].unique()} - {"none"}
    assert len(diseases) >= 3
    assert_no_value(root, diseases)
