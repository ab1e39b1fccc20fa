"""Test DAG: two ``release_tasks`` in one DAG (two specs, two task groups), both upstream of one task.

Params ``census`` and ``second`` are the two specs; ``>>`` on the groups makes
``after_both`` wait for both releases.
"""

from __future__ import annotations

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param

from privacy_plugins.integrations.airflow import release_tasks

with DAG(
    dag_id="privacy_two_releases",
    schedule=None,
    params={"census": Param("", type="string"), "second": Param("", type="string")},
):
    census = release_tasks(spec_path="{{ params.census }}", group_id="census")
    second = release_tasks(spec_path="{{ params.second }}", group_id="second")
    [census.group, second.group] >> EmptyOperator(task_id="after_both")
