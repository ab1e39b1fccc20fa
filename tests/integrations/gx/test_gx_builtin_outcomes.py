"""A failed built-in GX expectation is described by GX's own counts, not as a privacy model (issue 24 item 19)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


_values = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 -", min_size=1, max_size=12), max_size=20)


@settings(max_examples=200, deadline=None)
@given(values=_values, count=st.integers(0, 10**9), total=st.integers(0, 10**9), column=st.booleans())
def test_no_value_gx_saw_reaches_the_outcome(values: list[str], count: int, total: int, column: bool) -> None:
    """Whatever GX lists (unexpected values, their counts, an observed value), only its counts get through."""
    from privacy_plugins.integrations.gx import outcome

    marked = [f"<{value}>" for value in values]  # a mark no count or word of ours contains
    result = SimpleNamespace(
        expectation_config=SimpleNamespace(
            type="expect_column_values_to_be_in_set", severity="critical", kwargs={"column": "zip"} if column else {}
        ),
        exception_info={},
        success=False,
        result={
            "element_count": total,
            "unexpected_count": count,
            "partial_unexpected_list": marked,
            "partial_unexpected_counts": [{"value": v, "count": 1} for v in marked],
            "observed_value": marked[0] if marked else None,
            "details": {"value_counts": [{"value": v, "count": 1} for v in marked]},
        },
    )
    verdict = outcome(result)
    text = json.dumps(verdict.to_dict()) + verdict.message
    assert not [v for v in marked if v in text]
    assert f"{count} of {total} rows unexpected" in verdict.message
