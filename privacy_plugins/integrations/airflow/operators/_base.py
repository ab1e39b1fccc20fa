"""What the release operators share: the spec (plus templated overrides) and the upstream artifacts.

Every operator stores primitives in ``__init__`` and does all its work in
``execute()``: it reads the ``ReleaseSpec``, rebuilds its inputs from the
upstream tasks' XCom dicts, runs one release step and returns that step's
artifact as a dict (paths and numbers, never a DataFrame or a raw value).

A database or Spark source (or a file larger than ``source.out_of_core_bytes``)
with a full-domain algorithm runs inside the database, task by task: the load
task stores only the weighted snapshot, the anonymize task stages the rows in a
run-bound staging table of the source database (or a Parquet working file), the
check task measures it by ``GROUP BY`` (dropping it when a check fails) and the
publish task swaps it in — no source row reaches the worker (see
:mod:`privacy_plugins.release.snapshot_path`).

Every task of one DAG run uses the run id ``<dag_id>__<run_id>`` (the same for
every try: a retried task must find its upstream's working files), so they all
share one private working folder on the worker's machine (see
:mod:`privacy_plugins.release.workarea`; set ``PRIVACY_PLUGINS_WORKDIR`` or the
spec's ``workdir:`` to a folder every worker sees when tasks run on several
machines) and refuse artifacts of any other run. The publish task removes the
folder after publishing; for a run that stops before publishing (infeasible
requirements, a failed check) the ``cleanup`` teardown that ``release_tasks``
adds removes it (see :mod:`.cleanup`). Operators wired by hand without that
teardown keep it, private (0700), under the temp root. With a working storage
(several machines) each task removes its machine's copy when it ends, after
pushing what it wrote: the shared copy is the run's, and the teardown removes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.connections import airflow_resolver, airflow_secret
from privacy_plugins.integrations.airflow.storage import ReportStorage, WorkingStorage
from privacy_plugins.release import ReleaseSpec, remove_run_dir
from privacy_plugins.release.connections import connection_resolver
from privacy_plugins.release.pseudonym_keys import secret_resolver

if TYPE_CHECKING:
    from airflow.sdk import Context, XComArg

__all__ = ["LoadedTableStepOperator", "ReleaseStepOperator", "load_spec"]

A = TypeVar("A")
_INTEGER = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def _number(value: Any) -> Any:
    """Templated values arrive as strings: ``"5"`` → 5, ``"0.05"`` → 0.05, anything else unchanged."""
    if isinstance(value, str):
        if _INTEGER.fullmatch(value.strip()):
            return int(value)
        if _FLOAT.fullmatch(value.strip()):
            return float(value)
    return value


def _numbers(value: Any) -> Any:
    """``_number`` applied throughout nested overrides."""
    if isinstance(value, Mapping):
        return {key: _numbers(item) for key, item in value.items()}
    return _number(value)


def load_spec(spec_path: str, overrides: Mapping[str, Any] | None = None, *, native: bool = False) -> ReleaseSpec:
    """Read the spec; ``overrides`` (same layout as the YAML) are merged in before it is validated.

    ``native``: the overrides were rendered as native objects (the DAG's ``render_template_as_native_obj``,
    with typed ``Param``s), so they are taken as they are; otherwise numeric strings become numbers.
    """
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ConfigurationError(f"overrides must be a mapping like the spec's YAML, got {overrides!r}")
    if not overrides:
        return ReleaseSpec.from_yaml(spec_path)
    return ReleaseSpec.from_yaml(spec_path, overrides=dict(overrides) if native else _numbers(overrides))


class ReleaseStepOperator(BaseOperator):
    """Base of the release operators: ``spec_path`` plus ``overrides``, both templated.

    Args:
        spec_path: the release spec (YAML); relative paths in it resolve against its folder.
        overrides: merged into the spec's YAML before validation, as a JSON Merge Patch (``None`` removes a
            key); numeric strings become numbers, unless the DAG sets ``render_template_as_native_obj=True``
            (then typed ``Param``s arrive typed, and a string stays a string). E.g.
            ``{"requirements": {"k": "{{ params.k }}"}}`` or
            ``{"destination": {"duckdb": None, "parquet": "out", "table": "census"}}``.
        working_storage, working_storage_conn_id: the run's working files on shared storage (storage.py).
        report_storage, report_storage_conn_id: an ``ObjectStoragePath`` URL (and connection) where the
            diagnosis and the release summary of every run are kept (``ReportStorage``).
    """

    template_fields: Sequence[str] = (
        "spec_path",
        "overrides",
        "working_storage",
        "working_storage_conn_id",
        "report_storage",
        "report_storage_conn_id",
    )
    ui_color = "#e8f0fe"

    def __init__(
        self,
        *,
        spec_path: str,
        overrides: Mapping[str, Any] | None = None,
        working_storage: str | None = None,
        working_storage_conn_id: str | None = None,
        report_storage: str | None = None,
        report_storage_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spec_path = spec_path
        self.overrides = overrides
        self.working_storage = working_storage  # an ObjectStoragePath URL; see integrations/airflow/storage.py
        self.working_storage_conn_id = working_storage_conn_id
        self.report_storage = report_storage  # where the reports are kept beyond the worker (storage.py)
        self.report_storage_conn_id = report_storage_conn_id
        self._storage: WorkingStorage | None = None
        self._ended = False

    def execute(self, context: Context) -> dict[str, Any]:
        """Run the step; a bad spec or input fails the task at once (a retry cannot fix it)."""
        try:
            spec = self.release_spec()
            self._storage = WorkingStorage.configured(self.working_storage, self.working_storage_conn_id)
            run = self.run_id(context)
            try:
                if self._storage is not None and run is not None:
                    pulled = self._storage.pull(spec, run)  # this task may run on another machine than the last
                    self.log.info("working storage: pulled %d file(s) of run %s", len(pulled), run)
                # a spec's conn_id (and a pseudonym key's) resolves through Airflow's connections
                with connection_resolver(airflow_resolver), secret_resolver(airflow_secret):
                    artifact = self.run_step(spec, context)
                if self._storage is not None and run is not None and not self._ended:
                    pushed = self._storage.push(spec, run)
                    self.log.info("working storage: pushed %d file(s) of run %s", len(pushed), run)
            finally:
                if self._storage is not None and run is not None and spec.workdir is None:
                    # The shared copy is the run's; this machine's is a cache: no raw row stays on a worker.
                    remove_run_dir(spec, run)
        except (ConfigurationError, FileNotFoundError) as exc:
            raise AirflowFailException(f"{self.task_id}: bad release spec or input ({self.spec_path}): {exc}") from exc
        result: dict[str, Any] = artifact.to_dict()
        return result

    def release_spec(self) -> ReleaseSpec:
        """The spec with the (rendered) overrides; typed as rendered when the DAG renders native objects."""
        dag = self.dag if self.has_dag() else None  # type: ignore[no-untyped-call]
        native = bool(getattr(dag, "render_template_as_native_obj", False))
        return load_spec(str(self.spec_path), self.overrides, native=native)

    def run_id(self, context: Context) -> str | None:
        """``<dag_id>[__<task group>]__<run_id>``; ``None`` outside a DAG run (then the artifacts' own run is used).

        The task group is part of it so that two releases in one DAG (``release_tasks`` twice,
        even of the same spec) never share a working folder.
        """
        run_id = context.get("run_id")
        dag = context.get("dag")
        if not isinstance(run_id, str) or not run_id:
            return None
        group = getattr(getattr(self, "task_group", None), "group_id", None)
        prefix = getattr(dag, "dag_id", None) or self.dag_id
        return f"{prefix}__{group}__{run_id}" if group else f"{prefix}__{run_id}"

    def end_run(self, spec: ReleaseSpec, context: Context, run_id: str) -> None:
        """Remove the run's private working folder (kept when the spec sets ``workdir:``)."""
        if spec.workdir is None:
            remove_run_dir(spec, run_id)
            self.log.info("removed the working files of run %s", run_id)
        if self._storage is not None:
            self._storage.remove(spec, run_id)
            self.log.info("removed the shared working files of run %s", run_id)
        self._ended = True

    def run_step(self, spec: ReleaseSpec, context: Context) -> Any:
        """Run one release step and return its artifact (subclasses implement this)."""
        raise NotImplementedError

    def store_reports(self, spec: ReleaseSpec, context: Context, reports: Mapping[str, Path | bytes]) -> None:
        """Keep ``reports`` on the ``report_storage`` (if set), in this run's folder there."""
        storage = ReportStorage.configured(self.report_storage, self.report_storage_conn_id)
        run = self.run_id(context)
        if storage is None or run is None:
            return
        for location in storage.store(spec, run, reports):
            self.log.info("report kept at %s", location)

    def artifact(self, cls: type[A], value: Any, *, name: str) -> A:
        """Rebuild an upstream artifact from its XCom dict (pass ``upstream_task.output``)."""
        if not isinstance(value, Mapping):
            raise ConfigurationError(
                f"{self.task_id}: {name} must be the upstream task's XCom dict (pass upstream.output), "
                f"got {type(value).__name__}"
            )
        return cls.from_dict(value)  # type: ignore[attr-defined]


class LoadedTableStepOperator(ReleaseStepOperator):
    """A step that reads the loaded table: ``loaded`` is the ``LoadOperator``'s output (``load.output``)."""

    template_fields: Sequence[str] = (*ReleaseStepOperator.template_fields, "loaded")

    def __init__(self, *, loaded: Mapping[str, Any] | XComArg, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
