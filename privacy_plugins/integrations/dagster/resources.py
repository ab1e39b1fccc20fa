"""PrivacyReleaseResource: where one release graph writes, and the policy its checks enforce.

The resource also ends the graph's runs: Dagster tears it down when the run's
steps are done in this process (``teardown_after_execution``), whatever they did,
and it then removes the working folder of every run of the graph that ran here
whole (see :mod:`privacy_plugins.integrations.dagster.binding`).

No ``from __future__ import annotations`` here: it breaks Dagster's pydantic-based
``ConfigurableResource`` classes (``../shared/STACK.md``).
"""

import dataclasses
from pathlib import Path

import dagster as dg
from pydantic import Field, PrivateAttr

from privacy_plugins.integrations.dagster.policy import Policy, tighten
from privacy_plugins.release import ReleaseSpec, remove_run_dir
from privacy_plugins.release.spec import DestinationSpec, ReportSpec

__all__ = ["PrivacyReleaseResource"]


class PrivacyReleaseResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Deployment settings of one release graph: where it writes, and policy floors for this deployment.

    Destination and paths replace the spec's (relative paths resolve against the
    working directory of the run). ``min_k``, ``min_l`` and ``max_t`` add to the
    factory's ``policy`` and can only tighten what the checks enforce (see
    :mod:`privacy_plugins.integrations.dagster.policy`). Dagster resets every
    field that run configuration leaves out, so a floor that must always hold
    belongs in ``build_release_assets(policy=...)``. Severities are not
    configurable here: softening a check is a code change, not run configuration.
    """

    destination_table: str | None = Field(default=None, description="Table name at the destination.")
    destination_duckdb: str | None = Field(default=None, description="Publish to this DuckDB file.")
    destination_parquet: str | None = Field(default=None, description="Publish to <folder>/<table>.parquet.")
    destination_url: str | None = Field(default=None, description="Publish through this SQLAlchemy URL.")
    workdir: str | None = Field(
        default=None, description="Private working folder; the graph uses <workdir>/<asset key prefix>."
    )
    report_directory: str | None = Field(default=None, description="Where the diagnosis reports go.")
    min_k: int | None = Field(default=None, ge=1, description="Policy: k checked is at least this.")
    min_l: float | None = Field(default=None, ge=1.0, description="Policy: l checked is at least this.")
    max_t: float | None = Field(default=None, ge=0.0, le=1.0, description="Policy: t checked is at most this.")

    # run id -> the spec its working folder belongs to, for the runs whose every step runs in this process
    _runs: dict[str, ReleaseSpec] = PrivateAttr(default_factory=dict)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """A fresh list of the runs to end (Dagster sets the resource up once per run and process)."""
        self._runs = {}

    def end_with_run(self, spec: ReleaseSpec, run_id: str) -> None:
        """Remove ``run_id``'s working folder when this resource is torn down (the run's end in this process)."""
        self._runs[run_id] = spec

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """The run is over here, however it ended: remove its working folders (a spec's ``workdir`` keeps its own)."""
        for run_id, spec in self._runs.items():
            if spec.workdir is None:
                remove_run_dir(spec, run_id)
        self._runs = {}

    def release_spec(self, spec: ReleaseSpec, *, namespace: str) -> ReleaseSpec:
        """The spec with this deployment's destination and paths; working files go under ``<workdir>/<namespace>``."""
        destination = spec.destination
        table = self.destination_table or destination.table
        if self.destination_duckdb or self.destination_parquet or self.destination_url:
            destination = DestinationSpec(  # rejects two kinds at once
                table=table,
                duckdb=_path(self.destination_duckdb),
                parquet=_path(self.destination_parquet),
                url=self.destination_url,
            )
        elif table != destination.table:
            destination = dataclasses.replace(destination, table=table)
        report = spec.report
        if self.report_directory is not None:
            report = ReportSpec(directory=Path(self.report_directory).expanduser().resolve())
        workdir = _path(self.workdir) or spec.workdir  # None: a private per-run area under the system temp dir
        return dataclasses.replace(
            spec, destination=destination, report=report, workdir=workdir / namespace if workdir else None
        )

    def gate_spec(self, spec: ReleaseSpec) -> ReleaseSpec:
        """``spec`` tightened by this resource's policy floors (see :mod:`.policy`)."""
        return tighten(spec, Policy(self.min_k, self.min_l, self.max_t))


def _path(value: str | None) -> Path | None:
    return Path(value).expanduser().resolve() if value is not None else None
