"""A release that must fail: distinct 9-diversity for ``disease``, which has only 8 values.

The ``demo_impossible.anonymize`` task fails (no generalization can meet the requirement), so the
check and publish tasks never run and the destination — the same DuckDB table
as the demo release — keeps its previous contents. The diagnosis report is
still written (``release_output/impossible``). Param: ``spec``.
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG, Param

from privacy_plugins.integrations.airflow import release_tasks

SPEC = Path(__file__).resolve().parents[1] / "specs" / "demo_impossible.yaml"

with DAG(
    dag_id="privacy_release_impossible",
    description="A release whose requirements cannot be met: publishes nothing",
    schedule=None,
    max_active_runs=1,  # runs of one spec share its workdir
    params={"spec": Param(str(SPEC), type="string", description="release spec (YAML)")},
    tags=["privacy"],
):
    release_tasks(spec_path="{{ params.spec }}", group_id="demo_impossible")  # demo_impossible.load …
