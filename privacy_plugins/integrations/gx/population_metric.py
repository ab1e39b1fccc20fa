"""The GX table metric joining a batch's classes with a population table where both live (SQL, Spark).

``privacy_plugins.population_sizes`` groups the batch by the quasi-identifiers, groups the
population table (named by the model: :meth:`PrivacyModel.population_table_in_engine`) the
same way and joins them in the database or on the cluster
(:mod:`privacy_plugins.engines.population_join`): only each class's records and people
reach Python, never a quasi-identifier value. A pandas batch has no engine to join in, so
the expectation keeps the equivalence-classes metric there (the model reads its file).
"""

from __future__ import annotations

from typing import Any

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine.sparkdf_execution_engine import SparkDFExecutionEngine
from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

from privacy_plugins.engines.population_join import JoinedSizes, population_join_spark, population_join_sql
from privacy_plugins.errors import ConfigurationError

__all__ = ["POPULATION_SIZES", "PUSHDOWN_ENGINES", "PopulationSizesMetric"]

POPULATION_SIZES = "privacy_plugins.population_sizes"
PUSHDOWN_ENGINES = (SqlAlchemyExecutionEngine, SparkDFExecutionEngine)


def with_columns(connection: Any, selectable: Any) -> Any:
    """GX's batch selectable as a subquery whose columns are known (GX gives a bare table clause)."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import subquery_of

    source = subquery_of(selectable)
    names = list(connection.execute(sa.select(sa.text("*")).select_from(source).limit(0)).keys())
    return sa.select(*[sa.column(str(n)) for n in names]).select_from(source).subquery("pp_batch")


class PopulationSizesMetric(TableMetricProvider):
    """Per class of ``quasi_identifiers``: its records and the people of ``population_table`` (checked)."""

    metric_name = POPULATION_SIZES
    value_keys: tuple[str, ...] = ("quasi_identifiers", "population_table", "count_column")

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(
        cls,
        execution_engine: SqlAlchemyExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> JoinedSizes:
        from privacy_plugins.engines.table_names import named_table, split_table_name

        selectable, _, _ = execution_engine.get_compute_domain(
            metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
        )
        name = str(metric_value_kwargs["population_table"])
        split_table_name(name, setting="population table")  # a malformed name: one line, before any query
        with execution_engine.get_connection() as connection:
            try:
                population = named_table(connection, name)
            except Exception as exc:  # the driver's own error type: say which setting names the table
                raise ConfigurationError(f"population table {name!r} is not a table of the batch's database") from exc
            sizes = population_join_sql(
                connection,
                with_columns(connection, selectable),
                population,
                list(metric_value_kwargs["quasi_identifiers"]),
                str(metric_value_kwargs["count_column"]),
            )
        return sizes.checked()

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(
        cls,
        execution_engine: SparkDFExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> JoinedSizes:
        frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        name = str(metric_value_kwargs["population_table"])
        try:
            population = execution_engine.spark.table(name)
        except Exception as exc:  # AnalysisException: say which setting names the table
            raise ConfigurationError(f"population table {name!r} is not a table or view of the Spark session") from exc
        sizes = population_join_spark(
            frame, population, list(metric_value_kwargs["quasi_identifiers"]), str(metric_value_kwargs["count_column"])
        )
        return sizes.checked()
