"""The GX table metric that returns the core's :class:`EquivalenceClasses`, on pandas, SQL and Spark.

``privacy_plugins.equivalence_classes`` (registered when this module is imported)
groups the table by the quasi-identifiers plus ``model_columns``: the columns the
expectation's core model reads besides them (:attr:`PrivacyModel.columns` — the
sensitive attribute, and personalized leakage's bound column). The expectation
passes them (:meth:`PrivacyExpectation.get_validation_dependencies`), so this
module knows no model: a new model that reads another column needs no change here.

GX computes a metric once per validation for the same arguments. Because of
this, an l-diversity and a t-closeness expectation on the same columns share a
single GROUP BY.
"""

from __future__ import annotations

from typing import Any

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.execution_engine.sparkdf_execution_engine import SparkDFExecutionEngine
from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.integrations.gx import engines

__all__ = ["EQUIVALENCE_CLASSES", "EquivalenceClassesMetric"]

EQUIVALENCE_CLASSES = "privacy_plugins.equivalence_classes"


class EquivalenceClassesMetric(TableMetricProvider):
    """The equivalence classes over ``quasi_identifiers``, with the values of ``model_columns`` counted per class."""

    metric_name = EQUIVALENCE_CLASSES
    value_keys: tuple[str, ...] = ("quasi_identifiers", "model_columns")
    default_kwarg_values = {"model_columns": ()}  # noqa: RUF012 (GX reads this class attribute)

    @classmethod
    def grouping(cls, value_kwargs: dict[str, Any]) -> dict[str, list[str]]:
        """Keyword arguments of the ``engines.classes_from_*`` functions: group by QIs + model columns."""
        qis = list(value_kwargs["quasi_identifiers"])
        extra = [c for c in value_kwargs.get("model_columns") or () if c not in qis]
        return {"columns": list(dict.fromkeys([*qis, *extra])), "quasi_identifiers": qis}

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(
        cls,
        execution_engine: PandasExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> EquivalenceClasses:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        return engines.classes_from_pandas(frame, **cls.grouping(metric_value_kwargs))

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(
        cls,
        execution_engine: SqlAlchemyExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> EquivalenceClasses:
        selectable, _, _ = execution_engine.get_compute_domain(
            metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
        )
        return engines.classes_from_sql(execution_engine, selectable, **cls.grouping(metric_value_kwargs))

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(
        cls,
        execution_engine: SparkDFExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> EquivalenceClasses:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        return engines.classes_from_spark(frame, **cls.grouping(metric_value_kwargs))
