"""Load a release into downstream assets: ``published`` for anyone, ``anonymized_candidate`` only for named readers.

Downstream code asks for the release like any Dagster input::

    @dg.asset(ins={"people": release.published_in()})
    def people_stats(people: pd.DataFrame) -> ...          # or people: duckdb.DuckDBPyRelation

``published_in()`` points the input at this graph's reader (an IO manager that
only loads; the destination is written by ``published`` alone, through
``publish_step``). The type annotation picks the form: a pandas ``DataFrame``,
or a ``duckdb.DuckDBPyRelation`` over an in-memory copy (no lock is held on the
destination file, so the next release can still publish).

``anonymized_candidate`` is private until its checks pass: only assets named in
``candidate_readers`` — in code, never in run configuration — may load it, and
only in the run that built it: the run's working folder stays until the run
ends when its steps run in one process (the in-process executor), so a reader
may run before or after ``published``; with one process per step ``published``
removes it, so a reader must run before (see :mod:`.binding`).
Any other asset gets a ``dagster.Failure`` naming it.
"""

# No ``from __future__ import annotations``: Dagster resolves annotations of definitions at run time.

from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import dagster as dg
import pandas as pd

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.dagster.binding import ReleaseBinding, load_artifact
from privacy_plugins.release import Candidate, read_published
from privacy_plugins.release.staged_candidate import measured_frame

__all__ = ["ReleaseReader", "release_reader"]


def _downstream_key(context: dg.InputContext) -> dg.AssetKey | None:
    """The asset that is loading this input (``None`` outside an asset, e.g. a plain op)."""
    step = context.step_context
    try:
        return step.job_def.asset_layer.get_asset_key_for_node(step.node_handle)
    except Exception:
        return None


def _wants_duckdb(context: dg.InputContext) -> bool:
    typing_type = getattr(context.dagster_type, "typing_type", None)
    return (
        getattr(typing_type, "__module__", "").startswith("duckdb")
        or (context.definition_metadata or {}).get("as") == "duckdb"
    )


class ReleaseReader(dg.IOManager):
    """Loads ``published`` (anyone) or ``anonymized_candidate`` (``candidate_readers`` only) of one release graph."""

    def __init__(self, binding: ReleaseBinding, resources: Any, candidate_readers: frozenset[dg.AssetKey]) -> None:
        self._binding = binding
        self._resources = resources
        self._candidate_readers = candidate_readers

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        """Refuse: the release writes its destination only through ``published``."""
        raise dg.Failure(
            f"the release reader of {self._binding.namespace!r} only loads; publish through the release graph"
        )

    def load_input(self, context: dg.InputContext) -> Any:
        """The table as published (or the candidate, for an authorized reader), as a DataFrame or DuckDB relation."""
        upstream = context.asset_key
        spec = self._binding.release_spec(SimpleNamespace(resources=self._resources))
        if upstream == self._binding.key("published"):
            frame = read_published(spec.destination)
            if frame is None:
                raise dg.Failure(f"nothing is published at {spec.destination.describe()} yet; materialize published")
        elif upstream == self._binding.key("anonymized_candidate"):
            frame = self._candidate(context, spec)
        else:
            raise dg.Failure(
                f"the release reader of {self._binding.namespace!r} cannot load {upstream.to_user_string()}"
            )
        if _wants_duckdb(context):
            import duckdb

            connection = duckdb.connect()  # in memory: the relation holds no lock on the destination
            return connection.from_df(frame)
        return frame

    def _candidate(self, context: dg.InputContext, spec: Any) -> pd.DataFrame:
        reader = _downstream_key(context)
        if reader is None or reader not in self._candidate_readers:
            name = reader.to_user_string() if reader is not None else context.step_context.op.name
            raise dg.Failure(
                description=(
                    f"{name} may not read {self._binding.key('anonymized_candidate').to_user_string()}: the candidate "
                    "is private until its checks pass; read published, or name this asset in candidate_readers"
                ),
                allow_retries=False,
            )
        run = self._binding.run_id(SimpleNamespace(run=context.step_context.dagster_run))
        candidate = load_artifact(spec, "anonymized_candidate", Candidate, run_id=run)
        return _staged_frame(spec, candidate, run)  # staged by the destination: read there, counted and limited


def _staged_frame(spec: Any, candidate: Candidate, run: str) -> pd.DataFrame:
    """The staged candidate's rows through its destination; a refusal (foreign, changed, too many rows) fails."""
    try:
        return measured_frame(spec, candidate, run)  # bound to this run
    except ConfigurationError as exc:  # ForeignArtifactError too
        raise dg.Failure(
            f"the candidate of run {run} cannot be read: {exc} (published removes it: with one process per step "
            "a reader must run before published — use the in-process executor — or read published instead)",
            allow_retries=False,
        ) from exc


def release_reader(binding: ReleaseBinding, candidate_readers: Iterable[dg.AssetKey] = ()) -> dg.IOManagerDefinition:
    """The reader of one release graph, as an IO manager definition needing the graph's resource."""
    readers = frozenset(candidate_readers)

    @dg.io_manager(required_resource_keys={binding.resource_key})
    def reader(init_context: dg.InitResourceContext) -> ReleaseReader:
        return ReleaseReader(binding, init_context.resources, readers)

    return reader
