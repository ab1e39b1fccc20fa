"""The check task with ``gx_context_root``: the suite runs through a stored Checkpoint (issue 29 item 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("airflow")
pytest.importorskip("great_expectations")

from privacy_plugins.integrations.airflow import AnonymizeOperator, LoadOperator, PrivacyCheckOperator

REPO = Path(__file__).resolve().parents[3]


def test_the_check_task_stores_its_result_and_builds_data_docs(
    specs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec_path = str(specs["demo_census"])
    loaded = LoadOperator(task_id="load", spec_path=spec_path).execute(context={"ti": Mock()})
    candidate = AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded).execute(
        context={"ti": Mock()}
    )
    root = tmp_path / "gx_context"
    check = PrivacyCheckOperator(
        task_id="check",
        spec_path=spec_path,
        candidate=candidate,
        expectation_suite=str(REPO / "expectations" / "demo_release.json"),
        gx_context_root=str(root),
    ).execute(context={"ti": Mock()})
    assert check["passed"]
    assert {c["name"] for c in check["checks"]} >= {
        "gx_expect_table_to_be_k_anonymous",
        "gx_expect_table_to_be_l_diverse",
    }
    (stored,) = (root / "gx" / "uncommitted" / "validations" / "demo_release").rglob("*.json")
    assert (
        stored.relative_to(root / "gx" / "uncommitted" / "validations" / "demo_release").parts[0] == candidate["run_id"]
    )
    assert json.loads(stored.read_text(encoding="utf-8"))["success"]
    assert candidate["run_id"] in (root / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").read_text()


def test_release_tasks_hand_gx_context_root_to_the_check_task(specs: dict[str, Path], tmp_path: Path) -> None:
    from airflow.sdk import DAG

    from privacy_plugins.integrations.airflow import release_tasks

    with DAG("gx_context_root", schedule=None) as dag:
        release_tasks(spec_path=str(specs["demo_census"]), expectation_suite="s.json", gx_context_root=str(tmp_path))
    check: Any = dag.get_task("demo_census.check")
    assert check.gx_context_root == str(tmp_path) and "gx_context_root" in check.template_fields
