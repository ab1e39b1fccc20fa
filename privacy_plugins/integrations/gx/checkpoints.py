"""Stored privacy checks: a GX ``Checkpoint`` in a file context, so Data Docs show every run's verdicts.

Orchestrated checks validate through an ephemeral context (:func:`validate_candidate`): nothing
is kept. With ``gx_context_root`` set (the same setting in Airflow's check task and Dagster's
suite checks) the candidate is validated instead through GX's own production objects, in a
file-backed context at that folder (created on first use):

- the suite is stored (``expectations/``), a ``ValidationDefinition`` named
  ``<release>: <suite>`` ties it to a data asset named after the release, and a ``Checkpoint``
  named ``privacy <release>`` runs it with an ``UpdateDataDocsAction`` (``<release>``: the
  release's name with anything but letters, digits, ``_-.`` as ``_``);
- each run's ``ExpectationSuiteValidationResult`` is kept in the validation results store
  under the release's run id, and the local Data Docs site (``gx/uncommitted/data_docs``) is
  rebuilt: its index lists the history of the release's privacy checks.

Nothing of the data is stored: the checkpoint's result format is ``BASIC`` with no partial
unexpected list, the privacy expectations report shapes only (``_base.py``), and a suite
expectation whose observed value is a statistic of a column's values (GX's column aggregate
expectations: a column's max, its distinct values …) is refused here rather than stored.
The connection of a candidate staged in a database is stored as a ``${…}`` config variable
that GX reads from the environment during the run only, never as its URL (no password on disk).
"""

from __future__ import annotations

import os
import re
import threading
from os import PathLike
from pathlib import Path
from typing import Any

import great_expectations as gx
from great_expectations.checkpoint.actions import UpdateDataDocsAction
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.expectations.expectation import ColumnAggregateExpectation

from privacy_plugins.errors import ConfigurationError, DestinationError

__all__ = ["STORED_RESULT_FORMAT", "file_context", "validate_candidate_stored"]

STORED_RESULT_FORMAT: dict[str, Any] = {"result_format": "BASIC", "partial_unexpected_count": 0}
"""Counts and observed measures, never a list of unexpected values."""

DATA_SOURCE = "privacy_plugins"
_URL_VARIABLE = "PRIVACY_PLUGINS_GX_CANDIDATE_URL"  # GX substitutes ${…} from the environment at run time
_URL_REFERENCE = "${" + _URL_VARIABLE + "}"
_RUN_LOCK = threading.Lock()  # the URL variable is process-wide: one stored validation at a time


def file_context(root: str | PathLike[str]) -> Any:
    """The file-backed GX context at ``root`` (created when missing), progress bars off."""
    folder = Path(root).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ConfigurationError(f"gx_context_root: {str(folder)!r} is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    context = gx.get_context(mode="file", project_root_dir=str(folder))
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def _asset_name(release: str) -> str:
    """The release's name as GX names it (letters, digits, ``_``, ``-``, ``.``: a file name too), stable across runs."""
    return re.sub(r"[^\w.-]+", "_", release).strip("_") or "release"


def _refuse_value_statistics(suite: gx.ExpectationSuite) -> None:
    """A column aggregate's observed value is a statistic of the values (a max, a set …): never stored."""
    leaking = sorted({e.expectation_type for e in suite.expectations if isinstance(e, ColumnAggregateExpectation)})
    if leaking:
        raise ConfigurationError(
            f"gx_context_root: suite {suite.name!r} has {leaking}, whose stored results would hold a statistic of "
            "the column's values; drop them from the suite or validate it without gx_context_root"
        )


def _asset(context: Any, release: str, where: Any) -> Any:
    """The release's data asset, re-pointed at this run's staged candidate (a table, a query or a DataFrame)."""
    name = _asset_name(release)
    if where is None:
        source = context.data_sources.add_or_update_pandas(DATA_SOURCE)
    elif where.url.startswith("sqlite"):
        source = context.data_sources.add_or_update_sqlite(DATA_SOURCE, connection_string=_URL_REFERENCE)
    else:
        source = context.data_sources.add_or_update_sql(DATA_SOURCE, connection_string=_URL_REFERENCE)
    if name in {asset.name for asset in source.assets}:
        source.delete_asset(name)
    if where is None:
        asset = source.add_dataframe_asset(name)
        return asset.add_batch_definition_whole_dataframe("whole table")
    if where.table is not None:
        asset = source.add_table_asset(name, table_name=where.table)
    else:
        asset = source.add_query_asset(name, query=str(where.query))
    return asset.add_batch_definition_whole_table("whole table")


def validate_candidate_stored(
    spec: Any, candidate: Any, suite: gx.ExpectationSuite, *, context_root: str | PathLike[str], run_id: str = ""
) -> Any:
    """Validate the staged candidate through a stored ``Checkpoint`` and keep its result (see the module doc).

    Args:
        spec: the :class:`~privacy_plugins.release.spec.ReleaseSpec`.
        candidate: its anonymize step's :class:`~privacy_plugins.release.artifacts.Candidate`.
        suite: the suite (:func:`~privacy_plugins.integrations.gx.load_suite`).
        context_root: the folder of the file context (``gx/`` is created inside it).
        run_id: the release's run id: the stored result's run name (default: the candidate's).

    Returns:
        The ``CheckpointResult``; read it with :func:`~privacy_plugins.integrations.gx.outcomes`.
    """
    import warnings
    from contextlib import nullcontext

    from privacy_plugins.integrations.gx.suites import _duckdb_keeps_its_connection, _hidden
    from privacy_plugins.release.staged_candidate import measured_frame, open_candidate

    _refuse_value_statistics(suite)
    opened = open_candidate(spec, candidate, None)
    where = opened.destination.sql_location(opened.staged, opened.stage_run)
    context = file_context(context_root)
    stored: dict[str, Any] = dict(suite.to_json_dict())
    stored_suite = context.suites.add_or_update(gx.ExpectationSuite(**stored))  # a copy: the caller's stays unbound
    run = RunIdentifier(run_name=run_id or candidate.run_id or None)
    duckdb = where is not None and where.url.startswith("duckdb")
    with _RUN_LOCK, _duckdb_keeps_its_connection() if duckdb else nullcontext():
        if where is not None:
            os.environ[_URL_VARIABLE] = where.url
        try:
            with warnings.catch_warnings():  # GX warns that the generic SQL datasource is generic
                warnings.filterwarnings("ignore", message="You are using a generic SQLDatasource")
                batch = _asset(context, spec.name, where)
            definition = context.validation_definitions.add_or_update(
                gx.ValidationDefinition(name=f"{_asset_name(spec.name)}: {suite.name}", data=batch, suite=stored_suite)
            )
            checkpoint = context.checkpoints.add_or_update(
                gx.Checkpoint(
                    name=f"privacy {_asset_name(spec.name)}",  # a file name in the checkpoint store
                    validation_definitions=[definition],
                    actions=[UpdateDataDocsAction(name="update_data_docs")],
                    result_format=STORED_RESULT_FORMAT,
                )
            )
            parameters = {"dataframe": measured_frame(spec, candidate)} if where is None else {}
            return checkpoint.run(batch_parameters=parameters, run_id=run)
        except Exception as exc:  # GX's or the driver's message may quote the URL: never its password
            if where is None:
                raise
            raise DestinationError(
                f"GX could not validate the staged candidate in {spec.destination.describe()}: "
                f"{_hidden(exc, where.url)}"
            ) from None
        finally:
            try:
                if where is not None and DATA_SOURCE in context.data_sources.all():
                    context.data_sources.get(DATA_SOURCE).get_execution_engine().close()
            finally:
                os.environ.pop(_URL_VARIABLE, None)
