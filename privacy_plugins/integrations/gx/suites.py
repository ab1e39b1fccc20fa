"""Load suites safely and validate a table with one: the wiring Airflow and Dagster share.

GX drops an expectation it cannot build. The expectation type may be unknown
because its module was not imported, or its parameters may be invalid. GX only
logs the drop, so a suite of privacy checks can load empty, and an empty suite
passes. :func:`load_suite` compares the loaded count with the declared one and
raises instead.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import great_expectations as gx
from great_expectations.data_context.types.base import ProgressBarsConfig

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx import expectations as _registered  # noqa: F401 (registers the types)

__all__ = ["ephemeral_context", "load_suite", "validate_dataframe"]


def load_suite(source: str | PathLike[str] | Mapping[str, Any]) -> gx.ExpectationSuite:
    """Build a GX 1.x suite from its JSON file (or dict), failing if any expectation was dropped.

    Raises:
        ConfigurationError: the suite declares expectations that GX did not load.
    """
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    declared = [str(e.get("type")) for e in data.get("expectations", [])]
    suite = gx.ExpectationSuite(**data)
    loaded = [e.expectation_type for e in suite.expectations]
    if len(loaded) != len(declared):
        dropped = sorted((Counter(declared) - Counter(loaded)).elements())
        raise ConfigurationError(
            f"suite {suite.name!r} declares {len(declared)} expectations but GX loaded {len(loaded)}; "
            f"dropped: {dropped}. Import the module that defines them (privacy_plugins.integrations.gx) "
            "in this process and check their parameters (GX's log has the reason)."
        )
    return suite


def ephemeral_context() -> Any:
    """An in-memory GX context with progress bars off (nothing written to disk)."""
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def validate_dataframe(frame: Any, suite: gx.ExpectationSuite, *, result_format: str = "SUMMARY") -> Any:
    """Validate a pandas or Spark DataFrame with ``suite`` in an ephemeral context.

    Returns:
        The ``ExpectationSuiteValidationResult``; read it with :func:`outcomes`.
    """
    context = ephemeral_context()
    spark = type(frame).__module__.startswith("pyspark")
    source = (
        context.data_sources.add_spark("privacy_plugins")
        if spark
        else context.data_sources.add_pandas("privacy_plugins")
    )
    batch_definition = source.add_dataframe_asset("table").add_batch_definition_whole_dataframe("whole table")
    batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
    return batch.validate(suite, result_format=result_format)
