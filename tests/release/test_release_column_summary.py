"""release.json says every column's role and what was dropped, pseudonymized, published unchanged and flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.release import ReleaseSpec, run_release

KEY = "a-summary-test-key-that-is-long-enough-0123"
ENV = "PP_TEST_SUMMARY_KEY"


def _people(rows: int = 200) -> pd.DataFrame:
    index = pd.RangeIndex(rows)
    return pd.DataFrame(
        {
            "patient_id": [f"P{i:06d}" for i in index],
            "email": [f"person{i}@example.org" for i in index],
            "phone": [f"(555) 201-{i:04d}" for i in index],
            "age": 20 + index % 50,
            "sex": ["Female", "Male"] * (rows // 2),
            "disease": ["flu", "cold", "asthma", "none"] * (rows // 4),
            "ward": ["A", "B"] * (rows // 2),
            "comment_code": ["x"] * rows,
        }
    )


def test_release_json_accounts_for_every_column_without_a_value_or_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, KEY)
    frame = _people()
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    spec = ReleaseSpec.from_dict(
        {
            "name": "people",
            "source": {"path": str(source)},
            "identifiers": ["phone"],
            "pseudonymize": {"columns": ["patient_id"], "key": {"env": ENV}, "scope": "stable"},
            "quasi_identifiers": ["age", "sex"],
            "sensitive_attributes": ["disease"],
            "insensitive": ["email", "ward"],
            "acknowledged_identifiers": ["email"],
            "unlisted_columns": "drop",
            "hierarchies": {
                "age": {"interval": {"widths": [10, 20, 40]}},
                "sex": {"taxonomy": {"*": ["Female", "Male"]}},
            },
            "requirements": {"k": 5},
            "destination": {"duckdb": str(tmp_path / "out.duckdb"), "table": "people_release"},
            "report": {"directory": str(tmp_path / "reports")},
        }
    )
    result = run_release(spec)
    assert result.passed
    text = spec.report.release_json.read_text(encoding="utf-8")
    columns = json.loads(text)["columns"]
    assert columns["roles"] == {
        "patient_id": "pseudonym",
        "email": "insensitive",
        "phone": "identifier",
        "age": "quasi_identifier",
        "sex": "quasi_identifier",
        "disease": "sensitive",
        "ward": "insensitive",
        "comment_code": "unlisted_dropped",
    }
    assert columns["dropped"] == {"identifiers": ["phone"], "unlisted": ["comment_code"]}
    assert columns["pseudonymized"] == {"columns": ["patient_id"], "scope": "stable", "key": {"env": ENV}}
    assert columns["published_unchanged"] == ["email", "ward"]
    email = next(f for f in columns["flagged_identifiers"] if f["column"] == "email")
    assert email["category"] == "email" and email["acknowledged"] and email["published_unchanged"]
    assert email["rows"] == 200 and email["matching_share"] == 1.0
    assert KEY not in text
    assert not [v for c in ("patient_id", "email", "phone") for v in frame[c] if str(v) in text]
