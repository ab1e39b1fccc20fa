"""What every asset and check of one release graph shares: the spec, its keys, its resources and its run.

Assets hand the release layer's small JSON artifacts (paths, digests and numbers) to
each other through the graph's artifacts IO manager (:mod:`.artifact_store`): bound
to the run, refusing another run's, in the run's local working folder by default or in
an object store (``s3://…``) when steps run in separate processes or pods. The candidate
table itself never reaches the destination until ``published`` copies it there through
``publish_step``.

The run id of a graph is ``<key prefix>__<Dagster root run id>``: every asset
and check of one run — and of its re-executions, which share the root run id —
finds the same private folder (see :mod:`privacy_plugins.release.workarea`);
another run never sees it.

The folder goes when the run ends, however it ends (published, a blocking check
failed, infeasible requirements, an error), unless the spec or the resource sets
``workdir``, which keeps it. Dagster has no run-end hook that works without its
daemon; a resource's teardown is the closest, and it runs once per run *and per
process*. So:

* when every step of the run runs in one process (the in-process executor:
  ``dg.materialize``, ``execute_in_process``, a ``Definitions`` or job with
  ``in_process_executor``, or run config ``execution: {config: {in_process: {}}}``),
  each asset and check registers the run with the graph's
  :class:`PrivacyReleaseResource` (and artifacts IO manager), whose
  ``teardown_after_execution`` removes the folder after the last step — after every
  ``candidate_readers`` asset of the run has read the candidate, and also when the run
  failed or was blocked;
* with one process per step (the multiprocess default, Kubernetes, Docker) a teardown
  cannot tell the run's last step, so ``published`` removes the folder after publishing,
  a failing blocking check or a failing step removes it when it fails, and a candidate
  reader must run before ``published``.

A re-execution of a run (from failure) has no working files left: re-execute
all of its steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.dagster.gx_suites import SuiteRef
from privacy_plugins.integrations.dagster.partitions import partition_key_of, partition_spec
from privacy_plugins.integrations.dagster.policy import Policy, tighten
from privacy_plugins.integrations.dagster.resources import PrivacyReleaseResource
from privacy_plugins.release import ReleaseSpec

__all__ = [
    "ASSET_NAMES",
    "ReleaseAssets",
    "ReleaseBinding",
    "runs_whole_here",
]

ASSET_NAMES = ("raw", "privacy_diagnosis", "anonymized_candidate", "published")


@dataclass(frozen=True)
class ReleaseBinding:
    """One release graph's fixed parts (all validated when the graph is defined)."""

    spec: ReleaseSpec
    prefix: tuple[str, ...]
    resource_key: str
    severities: Mapping[str, str]
    suites: tuple[SuiteRef, ...]
    policy: Policy
    #: Partitions of every asset of the graph (one release per partition; see :mod:`.partitions`).
    partitions_def: dg.PartitionsDefinition[Any] | None = None

    @property
    def namespace(self) -> str:
        """The prefix as one name: the working sub-folder and the stem of op names."""
        return "__".join(self.prefix)

    def run_id(self, context: Any) -> str:
        """This graph's run id in the Dagster run of ``context`` (re-executions share their root run's)."""
        run = getattr(context, "run", None)
        if run is None:
            run = context.op_execution_context.run
        return f"{self.namespace}__{run.root_run_id or run.run_id}"

    @property
    def artifacts_key(self) -> str:
        """The resource key of the graph's artifacts IO manager (``<resource key>_artifacts``)."""
        return f"{self.resource_key}_artifacts"

    def artifacts(self, context: Any) -> Any:
        """The run's artifacts IO manager (:class:`.artifact_store.ReleaseArtifacts`)."""
        return getattr(context.resources, self.artifacts_key)

    def key(self, name: str) -> dg.AssetKey:
        """The asset key of ``raw``, ``privacy_diagnosis``, ``anonymized_candidate`` or ``published``."""
        return dg.AssetKey([*self.prefix, name])

    def release_spec(self, context: Any) -> ReleaseSpec:
        """The spec with the run's resource applied (destination, paths).

        In a step of a run that runs whole in this process, the run is also registered
        with the resource, which removes its working folder when the run ends.
        """
        resource: PrivacyReleaseResource = getattr(context.resources, self.resource_key)
        spec = resource.release_spec(self.spec, namespace=self.namespace)
        if self.partitions_def is not None:  # this run's partition: its source rows, its table, the shared history
            instance = getattr(context, "instance", None)  # a dynamic definition's keys live in the instance
            spec = partition_spec(spec, self.partitions_def, partition_key_of(context), instance)
        if runs_whole_here(context):
            resource.end_with_run(spec, self.run_id(context))
            self.artifacts(context).end_with_run(spec, self.run_id(context))
        return spec

    def gate_spec(self, context: Any) -> ReleaseSpec:
        """:meth:`release_spec` tightened by the factory's and the resource's policy: what the checks enforce."""
        resource: PrivacyReleaseResource = getattr(context.resources, self.resource_key)
        return resource.gate_spec(tighten(self.release_spec(context), self.policy))


@dataclass(frozen=True)
class ReleaseAssets:
    """One release graph: pass ``assets`` and ``asset_checks`` to ``Definitions`` or ``materialize``."""

    spec: ReleaseSpec
    key_prefix: tuple[str, ...]
    resource_key: str
    assets: tuple[dg.AssetsDefinition, ...]
    asset_checks: tuple[dg.AssetChecksDefinition, ...]
    check_names: tuple[str, ...]
    binding: ReleaseBinding | None = None

    def key(self, name: str) -> dg.AssetKey:
        """The key of one of :data:`ASSET_NAMES`."""
        if name not in ASSET_NAMES:
            raise KeyError(f"{name!r} is not one of {list(ASSET_NAMES)}")
        return dg.AssetKey([*self.key_prefix, name])

    @property
    def reader_key(self) -> str:
        """The resource key of this graph's reader (``<resource key>_reader``)."""
        return f"{self.resource_key}_reader"

    def published_in(self, **kwargs: Any) -> dg.AssetIn:
        """An ``AssetIn`` loading ``published`` through the reader (annotate DataFrame or DuckDBPyRelation)."""
        return dg.AssetIn(key=self.key("published"), input_manager_key=self.reader_key, **kwargs)

    def candidate_in(self, **kwargs: Any) -> dg.AssetIn:
        """An ``AssetIn`` loading ``anonymized_candidate``; only assets in ``candidate_readers`` may use it."""
        return dg.AssetIn(key=self.key("anonymized_candidate"), input_manager_key=self.reader_key, **kwargs)

    def reader(
        self,
        candidate_readers: Iterable[dg.AssetKey | str | Sequence[str]] = (),
        *,
        connection_url: Any = None,
    ) -> Any:
        """The reader (a ``ConfigurableIOManager``; see :mod:`.io_manager`).

        ``candidate_readers`` are the asset keys allowed to load the candidate; ``connection_url``
        (a ``dg.EnvVar``) reaches a ``conn_id`` destination.
        """
        from privacy_plugins.integrations.dagster.io_manager import release_reader

        if self.binding is None:  # pragma: no cover  (build_release_assets always sets it)
            raise ConfigurationError("these release assets were not built by build_release_assets")
        readers = [dg.AssetKey.from_coercible(key) for key in candidate_readers]
        return release_reader(self.binding, readers, connection_url=connection_url)

    @property
    def artifacts_key(self) -> str:
        """The resource key of this graph's artifacts IO manager (``<resource key>_artifacts``)."""
        return f"{self.resource_key}_artifacts"

    def artifacts(
        self,
        base_path: Any = None,
        *,
        endpoint_url: Any = None,
        access_key_id: Any = None,
        secret_access_key: Any = None,
    ) -> Any:
        """The IO manager handing artifacts from step to step (see :mod:`.artifact_store`).

        ``base_path`` unset: the run's local working folder; ``s3://bucket/prefix``: shared between step
        processes (``multiprocess``, ``k8s_job_executor``, ``docker_executor``). Set secrets with ``dg.EnvVar``.
        """
        from privacy_plugins.integrations.dagster.artifact_store import release_artifacts

        if self.binding is None:  # pragma: no cover  (build_release_assets always sets it)
            raise ConfigurationError("these release assets were not built by build_release_assets")
        return release_artifacts(
            self.binding,
            base_path=base_path,
            endpoint_url=endpoint_url,
            access_key_id=access_key_id,
            secret_access_key=secret_access_key,
        )

    def monitoring(self, *, cron_schedule: str = "@daily") -> dg.Definitions:
        """A check re-measuring ``published`` on an ``AutomationCondition`` (each cron tick; see monitoring.py)."""
        from privacy_plugins.integrations.dagster.monitoring import release_monitoring

        if self.binding is None:  # pragma: no cover  (build_release_assets always sets it)
            raise ConfigurationError("these release assets were not built by build_release_assets")
        return release_monitoring(self.binding, cron_schedule=cron_schedule)

    def resources(
        self,
        resource: PrivacyReleaseResource | None = None,
        *,
        artifacts: Any = None,
        candidate_readers: Iterable[dg.AssetKey | str | Sequence[str]] = (),
    ) -> dict[str, Any]:
        """The graph's resources by key: its release resource, its artifacts IO manager and its reader."""
        return {
            self.resource_key: resource or PrivacyReleaseResource(),
            self.artifacts_key: artifacts or self.artifacts(),
            self.reader_key: self.reader(candidate_readers),
        }

    def definitions(
        self,
        resource: PrivacyReleaseResource | None = None,
        *,
        artifacts: Any = None,
        candidate_readers: Iterable[dg.AssetKey | str | Sequence[str]] = (),
    ) -> dg.Definitions:
        """``Definitions`` with this graph and :meth:`resources` (default: the spec's own settings, local artifacts)."""
        resources = self.resources(resource, artifacts=artifacts, candidate_readers=candidate_readers)
        return dg.Definitions(assets=self.assets, asset_checks=self.asset_checks, resources=resources)


_IN_PROCESS_EXECUTORS = frozenset({"in_process", "execute_in_process_executor"})


def runs_whole_here(context: Any) -> bool:
    """Whether every step of ``context``'s run executes in this process (an in-process executor).

    ``False`` outside a step (e.g. the reader's ``SimpleNamespace``) and for any executor
    that may run steps elsewhere (multiprocess, Celery, Kubernetes …).
    """
    step: Any = getattr(context, "op_execution_context", None)
    if step is None:
        return False
    try:
        executor = step.job_def.executor_def.name
    except Exception:  # e.g. a directly invoked asset (build_asset_context): no job, no run to end
        return False
    if executor in _IN_PROCESS_EXECUTORS:
        return True
    if executor != "multi_or_in_process_executor":  # the default executor: run config picks the mode
        return False
    execution = (step.run.run_config or {}).get("execution") or {}
    config = execution.get("config", execution) if isinstance(execution, dict) else {}
    return isinstance(config, dict) and "in_process" in config
