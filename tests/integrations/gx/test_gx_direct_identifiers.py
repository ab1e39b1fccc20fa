"""expect_table_to_have_no_direct_identifiers on pandas, SQLite, DuckDB, PostgreSQL and Spark; counts only, no value."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from great_expectations.render.renderer import ValidationResultsPageRenderer
from great_expectations.render.view import DefaultJinjaPageView

from privacy_plugins.integrations.gx import ExpectTableToHaveNoDirectIdentifiers
from tests.integrations.gx.conftest import SQL_ENGINES

RESULT_FORMATS = ["BOOLEAN_ONLY", "BASIC", "SUMMARY", "COMPLETE"]
EXPECTED = {"contact": "email", "ssn": "ssn", "card": "card_number", "customer_id": "unique_per_row"}


def table(rows: int = 300) -> pd.DataFrame:
    """Identifiers of four categories and look-alikes (an order number, a product code, ages) that must pass."""
    rng = np.random.default_rng(7)
    cards = ["4111111111111111", "5500005555555559", "4012888888881881", "378282246310005"]
    return pd.DataFrame(
        {
            "contact": [f"person{i}@example.org" for i in range(rows)],
            "ssn": [f"{123 + i % 500:03d}-{45 + i % 40:02d}-{1000 + i:04d}" for i in range(rows)],
            "card": [cards[i % 4] for i in range(rows)],
            "customer_id": rng.permutation(rows) + 10_000,
            "order_number": [f"{1_000_000_000 + 7919 * (i % 120):010d}" for i in range(rows)],  # repeat per order
            "product_code": [f"PRD-{i % 40:05d}" for i in range(rows)],
            "age": rng.integers(18, 90, rows),
        }
    )


def serialized(result) -> str:
    """Every form of a validation result: describe_dict, JSON, str and the Data Docs HTML."""
    forms = [json.dumps(result.describe_dict()), json.dumps(result.to_json_dict()), str(result)]
    if hasattr(result, "results"):
        forms.append(DefaultJinjaPageView().render(ValidationResultsPageRenderer().render(result)))
    return "\n".join(forms)


def raw_values(frame: pd.DataFrame) -> list[str]:
    """The identifier values a leak would show (numbers as text, of a length no count reaches)."""
    return [str(v) for column in EXPECTED if column in frame for v in frame[column].head(50)]


def flagged(result) -> dict[str, str]:
    return {f["column"]: f["category"] for f in result.result["details"]["flagged"]}


@pytest.mark.parametrize("engine", ["pandas", *SQL_ENGINES])
def test_flags_the_identifiers_not_the_look_alikes_on_every_engine(engine: str, pandas_batch, sql_batch) -> None:
    frame = table()
    batch = pandas_batch(frame) if engine == "pandas" else sql_batch(frame, engine)
    result = batch.validate(ExpectTableToHaveNoDirectIdentifiers())
    assert not result.success and result.exception_info.get("raised_exception") is not True
    assert flagged(result) == EXPECTED
    assert result.result["observed_value"] == 4
    finding = next(f for f in result.result["details"]["flagged"] if f["column"] == "contact")
    assert finding["matching_share"] == 1.0 and finding["rows"] == 300 and finding["distinct_values"] == 300
    acknowledged = batch.validate(ExpectTableToHaveNoDirectIdentifiers(acknowledged=list(EXPECTED)))
    assert acknowledged.success and acknowledged.result["observed_value"] == 0
    assert {f["column"] for f in acknowledged.result["details"]["acknowledged"]} == set(EXPECTED)
    clean = batch.validate(ExpectTableToHaveNoDirectIdentifiers(columns=["order_number", "product_code", "age"]))
    assert clean.success, clean.result


def test_sql_sends_back_a_sample_of_distinct_values_not_the_table(sql_batch, monkeypatch: pytest.MonkeyPatch) -> None:
    from privacy_plugins.integrations.gx import identifier_metric

    frame = pd.concat([table()] * 4, ignore_index=True)  # each value four times: distinct values leave, not rows
    drawn: list[int] = []
    original = identifier_metric.sample_distinct_sql

    def spy(connection, selectable, columns, limit):
        sample = original(connection, selectable, columns, limit)
        drawn.extend(len(values) for values in sample.drawn.values())
        return sample

    monkeypatch.setattr(identifier_metric, "sample_distinct_sql", spy)
    result = sql_batch(frame, "duckdb").validate(ExpectTableToHaveNoDirectIdentifiers(sample_size=100))
    assert drawn and max(drawn) <= 100
    assert {f["column"] for f in result.result["details"]["flagged"]} == set(EXPECTED) - {"customer_id"}
    assert next(f for f in result.result["details"]["flagged"] if f["column"] == "contact")["rows"] == 1200


@pytest.mark.parametrize("result_format", RESULT_FORMATS)
def test_no_result_format_shows_a_value(result_format: str, pandas_batch) -> None:
    frame = table()
    result = pandas_batch(frame).validate(ExpectTableToHaveNoDirectIdentifiers(), result_format=result_format)
    text = serialized(result)
    assert not result.success
    assert not [value for value in raw_values(frame) if value in text]


def test_a_bad_sample_size_is_refused() -> None:
    with pytest.raises(Exception, match="sample_size must be an integer >= 1"):
        ExpectTableToHaveNoDirectIdentifiers(sample_size=0)
