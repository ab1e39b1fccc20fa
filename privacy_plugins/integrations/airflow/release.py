"""release_tasks: the five release operators wired from one spec, in one task group, so a release DAG is a few lines.

The group also holds ``cleanup``, an Airflow 3 teardown task (see
:mod:`~privacy_plugins.integrations.airflow.operators.cleanup`) that removes the
run's working files — local and on the ``working_storage`` — once the five
steps are done, whether the release was published, blocked or failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, NamedTuple

from airflow.sdk import TaskGroup

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.operators import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckOperator,
    PrivacyDiagnosisOperator,
    PublishOperator,
    ReleaseCleanupOperator,
)

__all__ = ["DEFAULT_GROUP_ID", "ReleaseTasks", "default_group_id", "release_tasks"]

DEFAULT_GROUP_ID = "release"
"""The group id of a release whose ``spec_path`` is a template (its file is only known at run time)."""


class ReleaseTasks(NamedTuple):
    """The five steps of one release, in order; ``group`` is the ``TaskGroup`` holding them and ``cleanup``."""

    load: LoadOperator
    diagnose: PrivacyDiagnosisOperator
    anonymize: AnonymizeOperator
    check: PrivacyCheckOperator
    publish: PublishOperator

    @property
    def group(self) -> TaskGroup:
        """The release's task group: ``upstream >> tasks.group >> downstream`` wires the whole release."""
        group = self.load.task_group
        if group is None:  # pragma: no cover  (release_tasks always creates one)
            raise ConfigurationError("these release tasks are not in a task group")
        return group

    @property
    def cleanup(self) -> ReleaseCleanupOperator:
        """The group's teardown task (``<group_id>.cleanup``): removes the run's working files however it ended."""
        task = self.group.children[f"{self.group.group_id}.cleanup"]
        if not isinstance(task, ReleaseCleanupOperator):  # pragma: no cover  (release_tasks always adds it)
            raise ConfigurationError("these release tasks have no cleanup task")
        return task


def default_group_id(spec_path: str) -> str:
    """The spec file's stem as a group id (``specs/demo_census.yaml`` → ``demo_census``).

    A templated ``spec_path`` (``"{{ params.spec }}"``) is only known at run time, and nothing
    is read at DAG-parse time, so its group id is ``DEFAULT_GROUP_ID``; pass ``group_id=`` to
    put two such releases in one DAG.
    """
    if "{{" in spec_path or "{%" in spec_path:
        return DEFAULT_GROUP_ID
    stem = PurePath(spec_path.strip()).name.split(".")[0]
    return re.sub(r"[^\w-]+", "_", stem).strip("_") or DEFAULT_GROUP_ID


def release_tasks(
    *,
    spec_path: str,
    group_id: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    expectation_suite: str | None = None,
    on_check_failure: str = "fail",
    outlets: Sequence[Any] = (),
    working_storage: str | None = None,
    working_storage_conn_id: str | None = None,
) -> ReleaseTasks:
    """Create load → diagnose → anonymize → check → publish in a ``TaskGroup`` of the current DAG.

    The task ids are ``<group_id>.load`` … ``<group_id>.publish``; ``group_id`` defaults to the spec
    file's stem (see :func:`default_group_id`), so releases of different specs share one DAG.
    Artifacts travel as XCom dicts (``upstream.output``); the publish task runs only when the
    check passed and declares ``outlets`` (e.g. an ``Asset``). A teardown task ``<group_id>.cleanup``
    runs after the five whatever their outcome and removes the run's working files (local and
    on ``working_storage``); ``upstream >> tasks.group >> downstream`` still wires the steps
    (Airflow leaves teardowns out of a group's leaves), and the DAG run's state is the steps'.

    Example:
        ``with DAG("release", schedule=None): release_tasks(spec_path="specs/demo_census.yaml")``
        creates ``demo_census.load`` … ``demo_census.publish``; the result's ``.group`` takes ``>>``.
    """
    common: dict[str, Any] = {
        "spec_path": spec_path,
        "overrides": overrides,
        "working_storage": working_storage,  # shared working files for multi-machine executors (storage.py)
        "working_storage_conn_id": working_storage_conn_id,
    }
    tooltip = "privacy release: load → diagnose → anonymize → check → publish"
    with TaskGroup(group_id=group_id or default_group_id(spec_path), tooltip=tooltip):
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
        cleanup = ReleaseCleanupOperator(task_id="cleanup", **common).as_teardown()
        [load, diagnose, anonymize, check, publish] >> cleanup  # runs when all are done, however they ended
    return ReleaseTasks(load, diagnose, anonymize, check, publish)
