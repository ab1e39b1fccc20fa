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

__all__ = ["DEFAULT_GROUP_ID", "STEPS", "ReleaseTasks", "default_group_id", "release_tasks"]

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


STEPS = ("load", "diagnose", "anonymize", "check", "publish", "cleanup")
# What release_tasks sets itself: a step's own arguments cannot replace them.
_WIRED = frozenset(
    {"task_id", "spec_path", "overrides", "working_storage", "working_storage_conn_id", "loaded", "candidate", "check"}
    | {"report_storage", "report_storage_conn_id", "expectation_suite", "on_failure", "task_group", "dag"}
    | {"gx_context_root"}
)


def _task_args(task_args: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Each step's own operator arguments (empty for steps not named); a bad step or argument is refused."""
    given = dict(task_args or {})
    unknown = sorted(set(given) - set(STEPS))
    if unknown:
        raise ConfigurationError(f"task_args: unknown step(s) {unknown}; the steps are {list(STEPS)}")
    per_task: dict[str, dict[str, Any]] = {}
    for step in STEPS:
        arguments = given.get(step) or {}
        if not isinstance(arguments, Mapping):
            raise ConfigurationError(f"task_args[{step!r}] must be a mapping of operator arguments")
        wired = sorted(set(arguments) & _WIRED)
        if wired:
            raise ConfigurationError(f"task_args[{step!r}]: {wired} are set by release_tasks (use its own arguments)")
        per_task[step] = dict(arguments)
    return per_task


def release_tasks(
    *,
    spec_path: str,
    group_id: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    expectation_suite: str | None = None,
    gx_context_root: str | None = None,
    on_check_failure: str = "fail",
    outlets: Sequence[Any] = (),
    working_storage: str | None = None,
    working_storage_conn_id: str | None = None,
    report_storage: str | None = None,
    report_storage_conn_id: str | None = None,
    default_args: Mapping[str, Any] | None = None,
    task_args: Mapping[str, Mapping[str, Any]] | None = None,
) -> ReleaseTasks:
    """Create load → diagnose → anonymize → check → publish in a ``TaskGroup`` of the current DAG.

    The task ids are ``<group_id>.load`` … ``<group_id>.publish``; ``group_id`` defaults to the spec
    file's stem (see :func:`default_group_id`), so releases of different specs share one DAG.
    Artifacts travel as XCom dicts (``upstream.output``); the publish task runs only when the
    check passed and declares ``outlets`` (e.g. an ``Asset``). A teardown task ``<group_id>.cleanup``
    runs after the five whatever their outcome and removes the run's working files (local and
    on ``working_storage``); ``upstream >> tasks.group >> downstream`` still wires the steps
    (Airflow leaves teardowns out of a group's leaves), and the DAG run's state is the steps'.

    ``default_args`` apply to every task of the group (over the DAG's); ``task_args`` give one step its own
    operator arguments, keyed by step (``load``, ``diagnose``, ``anonymize``, ``check``, ``publish``,
    ``cleanup``): ``pool``, ``queue``, ``executor_config`` (e.g. the KubernetesExecutor pod of the heavy
    ``anonymize``), ``retries``, ``execution_timeout``, ``on_failure_callback`` …

    Example:
        ``with DAG("release", schedule=None): release_tasks(spec_path="specs/demo_census.yaml")``
        creates ``demo_census.load`` … ``demo_census.publish``; the result's ``.group`` takes ``>>``.
        ``task_args={"anonymize": {"pool": "heavy", "execution_timeout": timedelta(hours=2)}}``.
    """
    per_task = _task_args(task_args)
    common: dict[str, Any] = {
        "spec_path": spec_path,
        "overrides": overrides,
        "working_storage": working_storage,  # shared working files for multi-machine executors (storage.py)
        "working_storage_conn_id": working_storage_conn_id,
        "report_storage": report_storage,  # the diagnosis and release summary of every run, kept off the worker
        "report_storage_conn_id": report_storage_conn_id,
    }
    tooltip = "privacy release: load → diagnose → anonymize → check → publish"
    group_args: dict[str, Any] = {"default_args": dict(default_args or {})}  # (attrs' typing of TaskGroup is off)
    with TaskGroup(group_id=group_id or default_group_id(spec_path), tooltip=tooltip, **group_args):
        load = LoadOperator(task_id="load", **common, **per_task["load"])
        diagnose = PrivacyDiagnosisOperator(task_id="diagnose", loaded=load.output, **common, **per_task["diagnose"])
        anonymize = AnonymizeOperator(task_id="anonymize", loaded=load.output, **common, **per_task["anonymize"])
        check = PrivacyCheckOperator(
            task_id="check",
            candidate=anonymize.output,
            expectation_suite=expectation_suite,
            gx_context_root=gx_context_root,
            on_failure=on_check_failure,
            **common,
            **per_task["check"],
        )
        publish = PublishOperator(
            task_id="publish",
            candidate=anonymize.output,
            check=check.output,
            outlets=[*outlets, *per_task["publish"].pop("outlets", [])],
            **common,
            **per_task["publish"],
        )
        diagnose >> anonymize
        cleanup = ReleaseCleanupOperator(task_id="cleanup", **common, **per_task["cleanup"]).as_teardown()
        [load, diagnose, anonymize, check, publish] >> cleanup  # runs when all are done, however they ended
    return ReleaseTasks(load, diagnose, anonymize, check, publish)
