"""Test DAGs: ``release_tasks`` whose check fails (a strict GX suite), so nothing is published.

``privacy_cleanup_fail`` fails its check task, ``privacy_cleanup_skip`` short-circuits it;
either way the ``release.cleanup`` teardown must remove the run's working files, local
and on the working storage (param ``storage``, e.g. ``s3://bucket/prefix``; empty:
local only) reached through the connection ``privacy_cleanup_s3``.
"""

from __future__ import annotations

from airflow.sdk import DAG, Param

from privacy_plugins.integrations.airflow import release_tasks

for dag_id, on_failure in (("privacy_cleanup_fail", "fail"), ("privacy_cleanup_skip", "skip_downstream")):
    with DAG(
        dag_id=dag_id,
        schedule=None,
        params={"spec": Param("", type="string"), "suite": Param("", type="string"), "storage": Param("")},
    ):
        release_tasks(
            spec_path="{{ params.spec }}",
            expectation_suite="{{ params.suite }}",
            on_check_failure=on_failure,
            working_storage="{{ params.storage }}",
            working_storage_conn_id="privacy_cleanup_s3",
        )
