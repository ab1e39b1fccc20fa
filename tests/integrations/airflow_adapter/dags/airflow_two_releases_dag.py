"""Test DAG: two ``release_tasks`` in one DAG (two specs, two task groups), both upstream of one task.

Params ``census`` and ``second`` are the two specs; ``>>`` on the groups makes
``after_both`` wait for both releases. The second release sets per-task operator
arguments and group ``default_args`` (``test_release_tasks_twice_in_one_dag``).
"""

from __future__ import annotations

from datetime import timedelta

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param

from privacy_plugins.integrations.airflow import release_tasks

with DAG(
    dag_id="privacy_two_releases",
    schedule=None,
    params={
        "census": Param("", type="string"),
        "second": Param("", type="string"),
        "storage_conn": Param("no_storage_conn", type="string"),
    },
):
    census = release_tasks(spec_path="{{ params.census }}", group_id="census")
    second = release_tasks(  # per-task operator arguments, group default_args, a templated storage connection
        spec_path="{{ params.second }}",
        group_id="second",
        working_storage_conn_id="{{ params.storage_conn }}",
        default_args={"retries": 2, "retry_delay": timedelta(seconds=1)},
        task_args={
            "anonymize": {
                "queue": "heavy",
                "executor_config": {"pod_override": {"cpu": "4"}},
                "execution_timeout": timedelta(minutes=30),
                "on_failure_callback": lambda context: None,
            },
            "publish": {"retries": 0, "priority_weight": 7},
        },
    )
    [census.group, second.group] >> EmptyOperator(task_id="after_both")
