"""``diagnose`` reports each column flagged as a direct identifier, with counts only, in JSON, text and HTML."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.cli import main


def _table(rows: int = 240) -> pd.DataFrame:
    index = pd.RangeIndex(rows)
    return pd.DataFrame(
        {
            "contact": [f"someone{i}@example.org" for i in index],
            "ssn": [f"{123 + i % 400:03d}-{12 + i % 80:02d}-{2000 + i:04d}" for i in index],
            "age": 20 + index % 40,
            "sex": ["F", "M"] * (rows // 2),
            "order_number": [f"{10_000_000 + 17 * (i % 60):010d}" for i in index],  # a look-alike, repeated
        }
    )


def test_json_text_and_html_name_each_flagged_column_with_counts_and_no_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _table()
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    report, page = tmp_path / "d.json", tmp_path / "d.html"
    args = [str(data), "--quasi-identifiers", "age,sex", "--json", str(report), "--html", str(page)]
    assert main(["diagnose", *args]) == 0
    text = capsys.readouterr().out
    found = {f["column"]: f for f in json.loads(report.read_text())["direct_identifiers"]}
    assert set(found) == {"contact", "ssn"}
    assert found["contact"]["category"] == "email" and found["ssn"]["category"] == "ssn"
    assert found["contact"]["matching_share"] == 1.0 and found["contact"]["rows"] == 240
    assert found["contact"]["uniqueness"] == 1.0 and found["contact"]["distinct_values"] == 240
    assert "direct identifiers flagged: 2 column(s)" in text
    assert "contact: email (100.0% of 240 sampled values match; uniqueness 1.00" in text
    html = page.read_text()
    assert "<h2>Direct identifiers</h2>" in html and ">ssn<" in html
    raw = [str(v) for c in ("contact", "ssn", "order_number") for v in frame[c]]
    for output in (text, report.read_text(), html):
        assert not [v for v in raw if v in output]


def test_a_table_without_identifiers_says_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "plain.csv"
    _table()[["age", "sex", "order_number"]].to_csv(data, index=False)
    assert main(["diagnose", str(data), "--quasi-identifiers", "age,sex", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["direct_identifiers"] == []
