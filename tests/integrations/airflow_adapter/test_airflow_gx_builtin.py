"""A built-in GX expectation in the check task's suite: GX's unexpected counts in XCom, no values (issue 24 item 19)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pandas as pd
import pytest

pytest.importorskip("airflow")
pytest.importorskip("great_expectations")

from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckFailed,
    PrivacyCheckOperator,
)


def _run(operator: Any) -> dict[str, Any]:
    payload = operator.execute(context={"ti": Mock()})
    json.dumps(payload)
    return payload  # type: ignore[no-any-return]


@pytest.fixture
def candidate(specs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec_path = str(specs["demo_census"])
    loaded = _run(LoadOperator(task_id="load", spec_path=spec_path))
    yield {
        "spec_path": spec_path,
        "candidate": _run(AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded)),
    }


def _suite(tmp_path: Path, severity: str) -> str:
    expectation = {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "disease", "value_set": []}}
    path = tmp_path / f"builtin_{severity}.json"
    path.write_text(json.dumps({"name": "builtin", "expectations": [{**expectation, "severity": severity}]}))
    return str(path)


def test_a_failed_builtin_expectation_reports_gx_counts_in_xcom(candidate: dict[str, Any], tmp_path: Path) -> None:
    rows = candidate["candidate"]["rows_out"]
    diseases = set(pd.read_parquet(candidate["candidate"]["path"])["disease"].astype(str))
    check = _run(PrivacyCheckOperator(task_id="check", expectation_suite=_suite(tmp_path, "warning"), **candidate))
    (builtin,) = [c for c in check["checks"] if c["requirement"].startswith("GX builtin:")]
    assert f"{rows} of {rows} rows unexpected" in builtin["detail"]
    assert "classes" not in builtin["detail"] and "in violation" not in builtin["detail"]
    assert check["passed"]  # a warning does not block
    text = json.dumps(check)
    assert not [value for value in diseases if f'"{value}"' in text or f"'{value}'" in text]

    with pytest.raises(PrivacyCheckFailed, match=rf"{rows} of {rows} rows unexpected") as info:
        _run(PrivacyCheckOperator(task_id="check", expectation_suite=_suite(tmp_path, "critical"), **candidate))
    assert not [value for value in diseases if f"'{value}'" in str(info.value)]
