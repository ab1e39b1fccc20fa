"""GX table metrics that return the core's :class:`EquivalenceClasses`, on pandas, SQL and Spark.

Two metrics, registered when this module is imported:

* ``privacy_plugins.equivalence_classes``: the classes over the quasi-identifiers
  (their size profile; all k-anonymity needs).
* ``privacy_plugins.sensitive_classes``: the same classes with the (class,
  sensitive value) counts. The bound column is included for personalized leakage.

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

from privacy_plugins import engines
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["EQUIVALENCE_CLASSES", "SENSITIVE_CLASSES", "EquivalenceClassesMetric", "SensitiveClassesMetric"]

EQUIVALENCE_CLASSES = "privacy_plugins.equivalence_classes"
SENSITIVE_CLASSES = "privacy_plugins.sensitive_classes"


class _ClassesMetric(TableMetricProvider):
    """Engine dispatch shared by both metrics (no ``metric_name``: not registered itself)."""

    value_keys: tuple[str, ...] = ("quasi_identifiers",)

    @classmethod
    def grouped_columns(cls, value_kwargs: dict[str, Any]) -> list[str]:
        """The columns to group by."""
        return list(value_kwargs["quasi_identifiers"])

    @classmethod
    def grouping(cls, value_kwargs: dict[str, Any]) -> dict[str, list[str]]:
        """Keyword arguments of the ``engines.classes_from_*`` functions."""
        return {
            "columns": cls.grouped_columns(value_kwargs),
            "quasi_identifiers": list(value_kwargs["quasi_identifiers"]),
        }

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
        return engines.classes_from_sql(
            execution_engine.get_connection, selectable, **cls.grouping(metric_value_kwargs)
        )

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


class EquivalenceClassesMetric(_ClassesMetric):
    """The equivalence classes over ``quasi_identifiers``."""

    metric_name = EQUIVALENCE_CLASSES


class SensitiveClassesMetric(_ClassesMetric):
    """The classes over ``quasi_identifiers`` with the counts of ``sensitive_attribute`` (and ``bound_column``)."""

    metric_name = SENSITIVE_CLASSES
    value_keys = ("quasi_identifiers", "sensitive_attribute", "bound_column")
    default_kwarg_values = {"bound_column": None}  # noqa: RUF012 (GX reads this class attribute)

    @classmethod
    def grouped_columns(cls, value_kwargs: dict[str, Any]) -> list[str]:
        """QIs, the sensitive attribute and, when given, the per-record bound column."""
        bound = value_kwargs.get("bound_column")
        return [*value_kwargs["quasi_identifiers"], value_kwargs["sensitive_attribute"], *([bound] if bound else [])]
