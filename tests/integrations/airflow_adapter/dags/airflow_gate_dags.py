"""Test DAGs: anonymize to the spec's k, but gate the release on a stricter k (a check that fails).

``privacy_gate_fail`` fails its check task; ``privacy_gate_skip`` short-circuits
(the check succeeds, publish is skipped). Built from the operators directly,
which is also what a DAG looks like without ``release_tasks``.
"""

from __future__ import annotations

from airflow.sdk import DAG, Param

from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckOperator,
    PublishOperator,
)

for dag_id, on_failure in (("privacy_gate_fail", "fail"), ("privacy_gate_skip", "skip_downstream")):
    with DAG(dag_id=dag_id, schedule=None, params={"spec": Param("", type="string"), "gate_k": Param(50)}):
        spec = {"spec_path": "{{ params.spec }}"}
        load = LoadOperator(task_id="load", **spec)
        anonymize = AnonymizeOperator(task_id="anonymize", loaded=load.output, **spec)
        check = PrivacyCheckOperator(
            task_id="check",
            candidate=anonymize.output,
            overrides={"requirements": {"k": "{{ params.gate_k }}"}},
            on_failure=on_failure,
            **spec,
        )
        PublishOperator(task_id="publish", candidate=anonymize.output, check=check.output, **spec)
