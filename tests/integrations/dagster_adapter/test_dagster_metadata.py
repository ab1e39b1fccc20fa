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
from privacy_plugins.core.anonymize import anonymizer_names, get_anonymizer, tags_of
from privacy_plugins.integrations.dagster import build_release_assets, class_size_table
from privacy_plugins.integrations.dagster.metadata import class_size_buckets, requirements_table
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
#: Values of the options an algorithm needs to run at all, by option name (sensitive-values' set A).
NEEDED_OPTIONS: dict[str, Any] = {"sensitive_values": "HIV,cancer"}


def _value(value: Any) -> Any:
    """A metadata value as plain data; a table as its schema and records, so every cell is searched."""
    if hasattr(value, "records") and hasattr(value, "schema"):
        return {"columns": [c.name for c in value.schema.columns], "records": [r.data for r in value.records]}
    if hasattr(value, "schema"):  # dagster/column_schema: the published columns and their types
        return [(c.name, c.type) for c in value.schema.columns]
    return value.value


def _all_metadata(result: Any) -> str:
    records: list[Any] = []
    for event in result.get_asset_materialization_events():
        records.append({k: _value(v) for k, v in event.materialization.metadata.items()})
    for evaluation in result.get_asset_check_evaluations():
        records.append({k: _value(v) for k, v in evaluation.metadata.items()})
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


def _with_planted_record(tmp_path: Path) -> dict[str, Any]:
    table = pd.concat([generate_census(400, seed=3), pd.DataFrame([PLANTED])], ignore_index=True)
    source = tmp_path / "people.parquet"
    table.to_parquet(source, index=False)
    return {"path": str(source)}


# sensitive-values promises nothing about the whole table, so its release spec is refused on load
# (tests/release/test_release_capabilities.py); every algorithm whose spec loads is run here.
RELEASABLE = [name for name in anonymizer_names() if tags_of(get_anonymizer(name)).supported_models.promises]


@pytest.mark.parametrize("algorithm", RELEASABLE)
def test_no_algorithm_puts_a_raw_value_in_any_metadata(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, run_graph: Any, algorithm: str
) -> None:
    """Every registered algorithm (Anatomy publishes two linked tables) — tables, checks, failures searched."""
    k_only = tags_of(get_anonymizer(algorithm)).supported_models.promises == {"k_anonymity"}
    own = {option.name for option in get_anonymizer(algorithm).options}
    data = census_spec(source=_with_planted_record(tmp_path), **({"l": None} if k_only else {}))
    data["algorithm"] = {"name": algorithm, **{k: v for k, v in NEEDED_OPTIONS.items() if k in own}}
    result = run_graph(build_release_assets(ReleaseSpec.from_dict(data, base_dir=tmp_path)))
    text = _all_metadata(result)
    assert '"requirement": "k_anonymity"' in text and '"class size"' in text  # the tables were searched
    for token in TOKENS:
        assert token not in text, f"{algorithm} leaked {token!r}"


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
    sizes = events["anonymized_candidate"]["class sizes"]
    assert [column.name for column in sizes.schema.columns] == ["class size", "classes", "records"]
    assert sum(record.data["records"] for record in sizes.records) == candidate["rows published"]
    assert sum(record.data["classes"] for record in sizes.records) == candidate["equivalence classes"]
    requirements = {r.data["requirement"]: r.data for r in events["anonymized_candidate"]["requirements"].records}
    assert requirements["k_anonymity"]["measured"] == candidate["measured k"]
    assert requirements["k_anonymity"]["target"] == 3.0 and requirements["k_anonymity"]["met"] is True
    published = {r.data["requirement"]: r.data for r in events["published"]["requirements"].records}
    assert published.keys() == requirements.keys() and all(row["met"] for row in published.values())
    assert events["raw"]["dagster/row_count"].value == 400
    assert events["raw"]["dropped identifier columns"].value == ["person_id"]
    assert events["privacy_diagnosis"]["k (raw)"].value == 1
    k_check = inspect_run.evaluations(result)["k_anonymity"].metadata
    assert k_check["observed"].value >= k_check["target"].value == 3.0


def test_class_size_buckets_count_classes_and_records() -> None:
    assert class_size_buckets({1: 2, 2: 1, 3: 1, 4: 2, 7: 1, 12_000: 1}) == [
        ("1", 2, 2),
        ("2", 1, 2),
        ("3–4", 3, 11),
        ("5–9", 1, 7),
        ("≥ 10000", 1, 12000),
    ]


def test_class_size_table_is_a_dagster_table_of_counts() -> None:
    table = class_size_table({3: 4, 12: 2})
    assert [(c.name, c.type) for c in table.schema.columns] == [
        ("class size", "string"),
        ("classes", "int"),
        ("records", "int"),
    ]
    assert [r.data for r in table.records] == [
        {"class size": "3–4", "classes": 4, "records": 12},
        {"class size": "10–19", "classes": 2, "records": 24},
    ]


def test_requirements_table_leaves_an_unbounded_measure_empty() -> None:
    numbers = {
        "measured": {"k_anonymity": 5.0, "l_diversity": None},
        "targets": {"k_anonymity": 3.0, "l_diversity": 2.0},
        "met": {"k_anonymity": True, "l_diversity": True},
    }
    rows = [r.data for r in requirements_table(numbers).records]
    assert rows == [
        {"requirement": "k_anonymity", "measured": 5.0, "target": 3.0, "met": True},
        {"requirement": "l_diversity", "measured": None, "target": 2.0, "met": True},
    ]
