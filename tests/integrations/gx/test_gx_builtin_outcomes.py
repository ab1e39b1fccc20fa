"""A failed built-in GX expectation is described by GX's own counts, not as a privacy model (issue 24 item 19)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.integrations.gx import load_suite, outcomes, validate_dataframe

ZIPS = [f"9{i % 90:04d}" for i in range(5_000)]


def _verdicts(expectations: list[dict[str, object]]) -> list[object]:
    frame = pd.DataFrame({"zip": ZIPS, "age": range(5_000)})
    return list(outcomes(validate_dataframe(frame, load_suite({"name": "builtin", "expectations": expectations}))))


def test_a_failed_column_expectation_reports_gx_unexpected_counts() -> None:
    (verdict,) = _verdicts(
        [{"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "zip", "value_set": []}}]
    )
    assert verdict.status == "failed" and verdict.blocks_release
    assert "5000 of 5000 rows unexpected" in verdict.message and "'zip'" in verdict.message
    assert "classes" not in verdict.message and "in violation" not in verdict.message
    assert verdict.details == {
        "element_count": 5000,
        "unexpected_count": 5000,
        "unexpected_percent": 100.0,
        "missing_count": 0,
        "missing_percent": 0.0,
    }
    text = json.dumps(verdict.to_dict()) + verdict.message
    assert not [z for z in set(ZIPS) if z in text]  # GX's partial_unexpected_list never gets through


def test_table_counts_are_reported_and_column_statistics_withheld() -> None:
    count, maximum = _verdicts(
        [
            {"type": "expect_table_row_count_to_be_between", "kwargs": {"max_value": 10}},
            {"type": "expect_column_max_to_be_between", "kwargs": {"column": "age", "max_value": 10}},
        ]
    )
    assert count.status == "failed" and count.observed == 5000 and "observed 5000" in count.message
    assert maximum.status == "failed" and maximum.observed is None  # the max is one record's value
    assert "4999" not in json.dumps(maximum.to_dict()) + maximum.message and "withheld" in maximum.message


def test_privacy_expectations_keep_their_classes_and_records() -> None:
    (verdict,) = _verdicts(
        [{"type": "expect_table_to_be_k_anonymous", "kwargs": {"quasi_identifiers": ["zip"], "k": 100}}]
    )
    assert verdict.status == "failed" and verdict.observed == 55
    assert "90 classes / 5000 records in violation" in verdict.message
