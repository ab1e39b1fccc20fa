"""Load a release into downstream assets: ``published`` for anyone, ``anonymized_candidate`` only for named readers.

Downstream code asks for the release like any Dagster input::

    @dg.asset(ins={"people": release.published_in()})
    def people_stats(people: pd.DataFrame) -> ...          # or people: duckdb.DuckDBPyRelation

``published_in()`` points the input at this graph's reader (an IO manager that
only loads; the destination is written by ``published`` alone, through
``publish_step``). The reader is a ``ConfigurableIOManager`` whose type handlers
pick the form from the annotation: a pandas ``DataFrame``; a ``polars.DataFrame``
(when polars is installed); a ``duckdb.DuckDBPyRelation`` queried in place — over
the DuckDB destination's table (a read-only connection: until the relation is
released, a publish from another process waits for DuckDB's file lock) or the
Parquet destination's file — or over an in-memory copy for other destinations.
A ``conn_id`` destination is reached through the reader's ``connection_url``
field, set with ``dg.EnvVar``.

``anonymized_candidate`` is private until its checks pass: only assets named in
``candidate_readers`` — in code, never in run configuration — may load it, and
only in the run that built it: the run's working folder stays until the run
ends when its steps run in one process (the in-process executor), so a reader
may run before or after ``published``; with one process per step ``published``
removes it, so a reader must run before (see :mod:`.binding`).
Any other asset gets a ``dagster.Failure`` naming it.
"""

# No ``from __future__ import annotations``: Dagster resolves annotations of definitions at run time.

import importlib.util
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import dagster as dg
import pandas as pd
from pydantic import Field

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.dagster.binding import ReleaseBinding
from privacy_plugins.integrations.dagster.partitions import PARTITION_TAG
from privacy_plugins.release import Candidate, read_published
from privacy_plugins.release.connections import connection_resolver
from privacy_plugins.release.spec import DestinationSpec
from privacy_plugins.release.staged_candidate import measured_frame

__all__ = [
    "DuckDBRelationHandler",
    "PolarsHandler",
    "ReaderTypeHandler",
    "ReleaseReader",
    "release_reader",
    "type_handlers",
]


def _downstream_key(context: dg.InputContext) -> dg.AssetKey | None:
    """The asset that is loading this input (``None`` outside an asset, e.g. a plain op)."""
    step = context.step_context
    try:
        return step.job_def.asset_layer.get_asset_key_for_node(step.node_handle)
    except Exception:
        return None


class ReaderTypeHandler:
    """How the reader hands the published table to an input of one Python type (Dagster's type-handler idea).

    ``handles`` looks at the input's annotation (and its ``as`` metadata); ``load`` gets a function reading
    the table into pandas and, for ``published``, the destination, which it may read directly instead.
    """

    name = "pandas"

    def handles(self, context: dg.InputContext) -> bool:
        """Whether this handler serves the input (the pandas handler serves every input the others do not)."""
        return True

    def load(self, frame: Callable[[], pd.DataFrame], destination: DestinationSpec | None) -> Any:
        """The table in this handler's type (``destination``: where it is published; ``None`` for the candidate)."""
        return frame()


class DuckDBRelationHandler(ReaderTypeHandler):
    """A ``duckdb.DuckDBPyRelation`` queried where the table is.

    Over a DuckDB destination's table in its file (read-only) or a Parquet destination's file;
    other destinations (and the candidate) through a DataFrame.
    """

    name = "duckdb"

    def handles(self, context: dg.InputContext) -> bool:
        """Annotated ``duckdb.DuckDBPyRelation`` (or ``metadata={"as": "duckdb"}``)."""
        return _annotated(context, "duckdb") or (context.definition_metadata or {}).get("as") == "duckdb"

    def load(self, frame: Callable[[], pd.DataFrame], destination: DestinationSpec | None) -> Any:
        """Over the destination itself when it is a file DuckDB reads; no copy of the rows is made."""
        import duckdb

        if destination is not None and destination.duckdb is not None and Path(destination.duckdb).is_file():
            connection = duckdb.connect(str(destination.duckdb), read_only=True)  # closed with the relation
            listed = connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_name = ?", [destination.table]
            ).fetchall()
            if listed:
                return connection.table(destination.table)
            connection.close()
        if destination is not None and destination.parquet is not None:
            published = Path(destination.parquet) / f"{destination.table}.parquet"
            if published.is_file():
                return duckdb.connect().read_parquet(str(published))
        return duckdb.connect().from_df(frame())  # in memory: no lock on the destination


class PolarsHandler(ReaderTypeHandler):
    """A ``polars.DataFrame`` (when polars is installed), through Arrow."""

    name = "polars"

    def handles(self, context: dg.InputContext) -> bool:
        """Annotated ``polars.DataFrame``."""
        return _annotated(context, "polars")

    def load(self, frame: Callable[[], pd.DataFrame], destination: DestinationSpec | None) -> Any:
        """Through Arrow (no copy of Arrow-backed columns)."""
        import polars

        return polars.from_pandas(frame())


def _annotated(context: dg.InputContext, module: str) -> bool:
    typing_type = getattr(context.dagster_type, "typing_type", None)
    return bool(getattr(typing_type, "__module__", "").startswith(module))


def type_handlers() -> tuple[ReaderTypeHandler, ...]:
    """The handlers in the order they are asked (pandas last: it serves the rest); polars only when installed."""
    handlers: list[ReaderTypeHandler] = [DuckDBRelationHandler()]
    if importlib.util.find_spec("polars") is not None:
        handlers.append(PolarsHandler())
    return (*handlers, ReaderTypeHandler())


class ReleaseReader(dg.ConfigurableIOManager):
    """Loads ``published`` (anyone) or ``anonymized_candidate`` (``candidate_readers`` only) of one release graph.

    It requires the graph's :class:`PrivacyReleaseResource` by its key, so it reads where the run's
    (configured) resource says the release is published. A destination named by
    ``conn_id`` is reached through ``connection_url``, set with ``dg.EnvVar("…")`` so its password lives in
    the environment of the code location, never in config, the UI or the event log (outside Dagster's
    resources, ``AIRFLOW_CONN_<ID>`` is still read).
    """

    connection_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the destination's conn_id (with its password): set it with dg.EnvVar.",
    )

    # Code, not config: the graph and who may read its candidate (set by :func:`release_reader`'s subclass).
    binding: ClassVar[ReleaseBinding]
    candidate_readers: ClassVar[frozenset[dg.AssetKey]] = frozenset()

    def get_resource_definition(self) -> Any:
        """Dagster's definition of this reader, requiring the graph's resource by key (run config included).

        A nested resource field would be a copy configured apart from the run's resource.
        """
        definition = super().get_resource_definition()
        keys = {self.binding.resource_key, self.binding.artifacts_key}
        definition._required_resource_keys = {*definition.required_resource_keys, *keys}
        return definition

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        """Refuse: the release writes its destination only through ``published``."""
        raise dg.Failure(
            f"the release reader of {self.binding.namespace!r} only loads; publish through the release graph"
        )

    def load_input(self, context: dg.InputContext) -> Any:
        """The table as published (or the candidate, for an authorized reader), in the input's type."""
        upstream = context.asset_key
        partitions = list(context.asset_partition_keys) if context.has_asset_partitions else []
        if len(partitions) > 1:
            raise dg.Failure(
                f"{upstream.to_user_string()} is partitioned: load one partition (a downstream asset partitioned "
                f"like it), not {len(partitions)}",
                allow_retries=False,
            )
        run = SimpleNamespace(tags={PARTITION_TAG: partitions[0]} if partitions else {})
        instance = context._instance  # dynamic partitions' keys (None in a bare build_input_context)
        resources = self.get_resource_context().resources
        spec = self.binding.release_spec(SimpleNamespace(resources=resources, run=run, instance=instance))
        handler = next(h for h in type_handlers() if h.handles(context))
        with self._connections():
            if upstream == self.binding.key("published"):
                return handler.load(lambda: _published_frame(spec), spec.destination)
            if upstream == self.binding.key("anonymized_candidate"):
                candidate = self._candidate(context, spec)
                return handler.load(lambda: candidate, None)
        raise dg.Failure(f"the release reader of {self.binding.namespace!r} cannot load {upstream.to_user_string()}")

    @contextmanager
    def _connections(self) -> Iterator[None]:
        """Resolve the destination's ``conn_id`` to ``connection_url`` when it is set."""
        url = self.connection_url
        if not url:
            yield
            return
        with connection_resolver(lambda conn_id: url):
            yield

    def _candidate(self, context: dg.InputContext, spec: Any) -> pd.DataFrame:
        reader = _downstream_key(context)
        if reader is None or reader not in self.candidate_readers:
            name = reader.to_user_string() if reader is not None else context.step_context.op.name
            raise dg.Failure(
                description=(
                    f"{name} may not read {self.binding.key('anonymized_candidate').to_user_string()}: the candidate "
                    "is private until its checks pass; read published, or name this asset in candidate_readers"
                ),
                allow_retries=False,
            )
        run = self.binding.run_id(SimpleNamespace(run=context.step_context.dagster_run))
        artifacts = getattr(self.get_resource_context().resources, self.binding.artifacts_key)
        candidate: Candidate = artifacts.load(spec, run, "anonymized_candidate")  # this run's, or a Failure
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


def _published_frame(spec: Any) -> pd.DataFrame:
    frame = read_published(spec.destination)
    if frame is None:
        raise dg.Failure(f"nothing is published at {spec.destination.describe()} yet; materialize published")
    return frame


def release_reader(
    binding: ReleaseBinding, candidate_readers: Iterable[dg.AssetKey] = (), *, connection_url: Any = None
) -> ReleaseReader:
    """The reader of one release graph (a ``ConfigurableIOManager``), bound to the graph in code."""
    bound = type(
        "ReleaseReader",
        (ReleaseReader,),
        {"binding": binding, "candidate_readers": frozenset(candidate_readers), "__module__": __name__},
    )
    return bound(connection_url=connection_url)
