"""The GX table metric that hands an expectation the batch's rows (some columns), for checks judged on rows.

The attack-risk expectation attacks the released records one by one (nearest neighbours,
predicates), so it needs rows, not classes. pandas only: the frame is already in memory.
On SQL and Spark the metric raises, and GX reports the expectation as errored (never passed).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.execution_engine.sparkdf_execution_engine import SparkDFExecutionEngine
from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

from privacy_plugins.errors import ConfigurationError

__all__ = ["TABLE_ROWS", "TableRowsMetric"]

TABLE_ROWS = "privacy_plugins.table_rows"


class TableRowsMetric(TableMetricProvider):
    """The batch's rows, restricted to ``columns`` (pandas batches only)."""

    metric_name = TABLE_ROWS
    value_keys: tuple[str, ...] = ("columns",)

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(
        cls,
        execution_engine: PandasExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> pd.DataFrame:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        columns = list(metric_value_kwargs["columns"])
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ConfigurationError(f"column(s) {missing} are not in the table")
        return frame[columns].reset_index(drop=True)

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(cls, *args: Any, **kwargs: Any) -> pd.DataFrame:
        raise ConfigurationError("the attack-risk expectation runs on pandas batches only; validate a DataFrame")

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(cls, *args: Any, **kwargs: Any) -> pd.DataFrame:
        raise ConfigurationError("the attack-risk expectation runs on pandas batches only; validate a DataFrame")
