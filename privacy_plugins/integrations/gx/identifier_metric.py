"""The GX table metric behind ``expect_table_to_have_no_direct_identifiers``: findings, counts only.

``privacy_plugins.direct_identifiers`` returns one dict per flagged column (category,
evidence, share of matching values, uniqueness, counts; never a value). On pandas the
detector samples the frame itself; on SQL and Spark the engine counts and draws at most
``sample_size`` distinct values per column (:mod:`privacy_plugins.engines.identifier_sample`),
so no row leaves the database.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.execution_engine.sparkdf_execution_engine import SparkDFExecutionEngine
from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

from privacy_plugins.core.identifiers import detect_identifiers
from privacy_plugins.engines.identifier_sample import (
    DistinctSample,
    sample_distinct_spark,
    sample_distinct_sql,
    sql_columns,
)
from privacy_plugins.errors import UnknownColumnError

__all__ = ["DIRECT_IDENTIFIERS", "DirectIdentifiersMetric"]

DIRECT_IDENTIFIERS = "privacy_plugins.direct_identifiers"


def _selected(available: Sequence[Hashable], value_kwargs: dict[str, Any]) -> list[str]:
    wanted = value_kwargs.get("columns")
    names = [str(c) for c in available]
    if wanted is None:
        return names
    missing = [c for c in wanted if c not in names]
    if missing:
        raise UnknownColumnError(f"columns not in the table: {', '.join(map(repr, missing))}")
    return list(wanted)


def _judge_sample(sample: DistinctSample, value_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    findings: list[dict[str, Any]] = []
    for frame in sample.frames():
        found = detect_identifiers(frame, sample_size=value_kwargs["sample_size"], totals=sample.totals)
        findings += [f.to_dict() for f in found]
    return findings


class DirectIdentifiersMetric(TableMetricProvider):
    """The columns that look like direct identifiers, as findings without values."""

    metric_name = DIRECT_IDENTIFIERS
    value_keys: tuple[str, ...] = ("columns", "sample_size")
    default_kwarg_values = {"columns": None, "sample_size": 5000}  # noqa: RUF012 (GX reads this class attribute)

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(
        cls,
        execution_engine: PandasExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> list[dict[str, Any]]:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        columns = _selected(list(frame.columns), metric_value_kwargs)
        found = detect_identifiers(pd.DataFrame(frame), columns=columns, sample_size=metric_value_kwargs["sample_size"])
        return [f.to_dict() for f in found]

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(
        cls,
        execution_engine: SqlAlchemyExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> list[dict[str, Any]]:
        selectable, _, _ = execution_engine.get_compute_domain(
            metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
        )
        with execution_engine.get_connection() as connection:
            columns = _selected(sql_columns(connection, selectable), metric_value_kwargs)
            sample = sample_distinct_sql(connection, selectable, columns, metric_value_kwargs["sample_size"])
        return _judge_sample(sample, metric_value_kwargs)

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(
        cls,
        execution_engine: SparkDFExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> list[dict[str, Any]]:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        columns = _selected(list(frame.columns), metric_value_kwargs)
        sample = sample_distinct_spark(frame, columns, metric_value_kwargs["sample_size"])
        return _judge_sample(sample, metric_value_kwargs)
