"""Metadata shows counts, measures and shapes — and never a raw value of a planted unique record."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("dagster")

from privacy_plugins import generate_census
from privacy_plugins.integrations.dagster import build_release_assets, class_size_table
from privacy_plugins.release import ReleaseSpec

PLANTED = {
    "person_id": "PLANTED-PERSON-0001",
    "age": 97,
    "sex": "Female",
    "zip": "90909",
    "education": "Doctorate",
    "marital_status": "Widowed",
    "occupation": "Astronaut-Planted",
    "income": 987654,
    "disease": "kuru-planted",
}
TOKENS = ("PLANTED-PERSON-0001", "90909", "Astronaut-Planted", "987654", "kuru-planted")


def _all_metadata(result: Any) -> str:
    records: list[Any] = []
    for event in result.get_asset_materialization_events():
        records.append({k: v.value for k, v in event.materialization.metadata.items()})
    for evaluation in result.get_asset_check_evaluations():
        records.append({k: v.value for k, v in evaluation.metadata.items()})
        records.append(evaluation.description)
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            records.append(event.event_specific_data.error.message)
    return json.dumps(records, default=str)


@pytest.mark.parametrize("min_k", [None, 50], ids=["passing", "blocked"])
def test_metadata_holds_no_raw_value_of_a_planted_unique_record(
    census_spec: Callable[..., dict[str, Any]],
    tmp_path: Path,
    run_graph: Any,
    min_k: int | None,
) -> None:
    table = pd.concat([generate_census(400, seed=3), pd.DataFrame([PLANTED])], ignore_index=True)
    source = tmp_path / "people.parquet"
    table.to_parquet(source, index=False)
    spec = ReleaseSpec.from_dict(census_spec(source={"path": str(source)}), base_dir=tmp_path)
    policy = {"min_k": min_k} if min_k is not None else None
    result = run_graph(build_release_assets(spec, policy=policy))
    assert result.success is (min_k is None)
    text = _all_metadata(result)
    assert "measured k" in text  # the metadata was collected
    for token in TOKENS:
        assert token not in text


def test_candidate_metadata_accounts_for_every_row_and_shows_the_measures(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, inspect_run: SimpleNamespace
) -> None:
    spec = ReleaseSpec.from_dict(census_spec(), base_dir=tmp_path)
    result = run_graph(build_release_assets(spec))
    events = {e.asset_key.path[-1]: e.materialization.metadata for e in result.get_asset_materialization_events()}
    candidate = {k: v.value for k, v in events["anonymized_candidate"].items()}
    assert candidate["rows in"] == 400 == candidate["rows published"] + candidate["rows suppressed"]
    assert candidate["rows suppressed"] <= candidate["suppression budget"]
    assert candidate["measured k"] >= 3
    assert candidate["measured distinct l (disease)"] >= 2
    assert 0.0 <= candidate["measured t (disease, equal)"] <= 1.0
    assert 0.0 <= candidate["utility loss (NCP)"] <= 1.0
    assert candidate["class sizes"].startswith("| class size | classes | records |")
    assert events["raw"]["dagster/row_count"].value == 400
    assert events["raw"]["dropped identifier columns"].value == ["person_id"]
    assert events["privacy_diagnosis"]["k (raw)"].value == 1
    k_check = inspect_run.evaluations(result)["k_anonymity"].metadata
    assert k_check["observed"].value >= k_check["target"].value == 3.0


def test_class_size_table_buckets_sizes_and_counts_records() -> None:
    table = class_size_table({1: 2, 2: 1, 3: 1, 4: 2, 7: 1, 12_000: 1})
    rows = table.splitlines()
    assert rows[:2] == ["| class size | classes | records |", "|---|---:|---:|"]
    assert rows[2:] == [
        "| 1 | 2 | 2 |",
        "| 2 | 1 | 2 |",
        "| 3–4 | 3 | 11 |",
        "| 5–9 | 1 | 7 |",
        "| ≥ 10000 | 1 | 12000 |",
    ]
