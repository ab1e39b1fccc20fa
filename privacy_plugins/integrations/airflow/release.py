"""release_tasks: the five release operators wired from one spec, so a release DAG is a few lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from privacy_plugins.integrations.airflow.operators import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckOperator,
    PrivacyDiagnosisOperator,
    PublishOperator,
)

__all__ = ["ReleaseTasks", "release_tasks"]


class ReleaseTasks(NamedTuple):
    """The tasks of one release, in order."""

    load: LoadOperator
    diagnose: PrivacyDiagnosisOperator
    anonymize: AnonymizeOperator
    check: PrivacyCheckOperator
    publish: PublishOperator


def release_tasks(
    *,
    spec_path: str,
    overrides: Mapping[str, Any] | None = None,
    expectation_suite: str | None = None,
    on_check_failure: str = "fail",
    outlets: Sequence[Any] = (),
) -> ReleaseTasks:
    """Create load → diagnose → anonymize → check → publish in the current DAG.

    Artifacts travel as XCom dicts (``upstream.output``); the publish task runs
    only when the check passed and declares ``outlets`` (e.g. an ``Asset``).

    Example:
        ``with DAG("release", schedule=None): release_tasks(spec_path="specs/demo_census.yaml")``
    """
    common: dict[str, Any] = {"spec_path": spec_path, "overrides": overrides}
    load = LoadOperator(task_id="load", **common)
    diagnose = PrivacyDiagnosisOperator(task_id="diagnose", loaded=load.output, **common)
    anonymize = AnonymizeOperator(task_id="anonymize", loaded=load.output, **common)
    check = PrivacyCheckOperator(
        task_id="check",
        candidate=anonymize.output,
        expectation_suite=expectation_suite,
        on_failure=on_check_failure,
        **common,
    )
    publish = PublishOperator(
        task_id="publish", candidate=anonymize.output, check=check.output, outlets=list(outlets), **common
    )
    diagnose >> anonymize
    return ReleaseTasks(load, diagnose, anonymize, check, publish)
