"""What the four privacy expectations share: fields, the call into the core, result shape, Data Docs sentence.

A ``row_condition`` (GX's, as on column expectations) checks the model on a
subpopulation: only the rows it selects form the classes.

A result holds the measured value and the violations as shapes: how many classes,
how many records, which class sizes. It never holds raw quasi-identifier or
sensitive values. GX's unexpected-value lists do not exist for a batch expectation,
so no ``result_format`` can add them. Only ``include_values=True`` adds the QI
values of a few violating classes, and it warns when it does.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.expectations.model_field_types import ConditionParser
from great_expectations.expectations.row_conditions import RowConditionType
from great_expectations.validator.metric_configuration import MetricConfiguration
from great_expectations.validator.validator import ValidationDependencies

from privacy_plugins.core.metrics import class_size_histogram
from privacy_plugins.core.models import ModelResult, PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import size_histogram, to_jsonable
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.engines.population_join import JoinedSizes
from privacy_plugins.errors import ConfigurationError, PrivacyRiskWarning
from privacy_plugins.integrations.gx.expectations._rendering import DataDocsSentences
from privacy_plugins.integrations.gx.metrics import EQUIVALENCE_CLASSES
from privacy_plugins.integrations.gx.population_metric import POPULATION_SIZES, PUSHDOWN_ENGINES

__all__ = ["PrivacyExpectation", "check_qis_and_secret", "gallery_metadata", "set_metric_kwargs", "validation_result"]


def gallery_metadata(maturity: str, *tags: str) -> dict[str, Any]:
    """GX's gallery metadata of this package's expectations (only the maturity and the tags differ)."""
    return {
        "maturity": maturity,
        "tags": ["privacy", *tags, "table expectation"],
        "contributors": ["privacy_plugins developers"],
        "requirements": ["privacy-plugins"],
        "has_full_test_suite": True,
        "manually_reviewed_code": True,
    }


def set_metric_kwargs(
    dependencies: ValidationDependencies, metric: str, value_kwargs: dict[str, Any]
) -> ValidationDependencies:
    """``metric`` as GX configured it (the batch's domain, a row condition) with this expectation's value kwargs."""
    configured = dependencies.get_metric_configuration(metric)
    assert configured is not None
    dependencies.set_metric_configuration(
        metric,
        MetricConfiguration(
            metric_name=metric, metric_domain_kwargs=configured.metric_domain_kwargs, metric_value_kwargs=value_kwargs
        ),
    )
    return dependencies


def validation_result(success: bool, observed: Any, details: Mapping[str, Any]) -> dict[str, Any]:
    """GX's result of ``_validate``: the verdict, the observed value and the details, as plain JSON values."""
    return {
        "success": bool(success),
        "result": {"observed_value": to_jsonable(observed), "details": to_jsonable(details)},
    }


def check_qis_and_secret(values: Mapping[str, Any]) -> None:
    """At least one quasi-identifier, and the sensitive attribute (if any) is not one of them."""
    if not values["quasi_identifiers"]:
        raise ConfigurationError("quasi_identifiers: name at least one column")
    if values.get("sensitive_attribute") in values["quasi_identifiers"]:
        raise ConfigurationError(f"sensitive_attribute {values['sensitive_attribute']!r} is a quasi-identifier")


class PrivacyExpectation(DataDocsSentences, BatchExpectation, ABC):
    """Base class (abstract, so GX does not register it): one core model on the table's equivalence classes."""

    quasi_identifiers: list[pydantic.StrictStr] = pydantic.Field(
        description="Columns an attacker may know (at least one); rows equal on all of them form one class."
    )
    include_values: bool = pydantic.Field(
        False, description="Opt in to adding the QI values of up to 10 violating classes (records at risk)."
    )
    # A subpopulation (GX's own row condition, as column expectations have it): the model holds on its rows.
    row_condition: RowConditionType = None
    condition_parser: ConditionParser | None = None

    metric_dependencies: ClassVar[tuple[str, ...]] = (EQUIVALENCE_CLASSES,)
    success_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "include_values")
    domain_keys: ClassVar[tuple[str, ...]] = ("batch_id", "row_condition", "condition_parser")
    library_metadata: ClassVar[dict[str, Any]] = gallery_metadata("production", "anonymization")

    @pydantic.root_validator(skip_on_failure=True)
    def _check_with_core(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Reject a bad configuration when the expectation is built, with the core's own messages."""
        AttributeRoles(quasi_identifiers=values["quasi_identifiers"], sensitive_attributes=cls.sensitive_of(values))
        cls.build_model(values)
        return values

    @classmethod
    def sensitive_of(cls, params: Mapping[str, Any]) -> list[str]:
        """The sensitive attribute, if the expectation has one."""
        return [params["sensitive_attribute"]] if params.get("sensitive_attribute") is not None else []

    @classmethod
    @abstractmethod
    def build_model(cls, params: Mapping[str, Any]) -> PrivacyModel:
        """The core model for these parameters (raises the core's errors)."""

    @classmethod
    @abstractmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """A Data Docs template (``$name`` placeholders) and its parameters."""

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """Name of the measured value in the Data Docs sentence ("observed k = 7")."""
        return "k"

    def observed_is_integer(self) -> bool:
        """The measured value is a count (k, distinct l)."""
        return False

    def judge(
        self, model: PrivacyModel, result: ModelResult, classes: EquivalenceClasses
    ) -> tuple[bool, float, dict[str, Any]]:
        """Success, observed value and extra details; subclasses add e.g. suppression."""
        return result.passed, result.observed, {}

    def get_validation_dependencies(
        self, execution_engine: Any = None, runtime_configuration: dict[str, Any] | None = None
    ) -> ValidationDependencies:
        """GX's dependencies, with the metric grouping by the QIs plus the columns the core model reads.

        The model says which columns it reads (:attr:`PrivacyModel.columns`: the sensitive
        attribute, a bound column), so the metric pushes exactly that GROUP BY down to SQL/Spark.
        """
        dependencies: ValidationDependencies = super().get_validation_dependencies(
            execution_engine=execution_engine, runtime_configuration=runtime_configuration
        )
        model = self.build_model(self.__dict__)
        columns = [str(column) for column in model.columns]
        in_engine = model.population_table_in_engine()
        if in_engine is not None and isinstance(execution_engine, PUSHDOWN_ENGINES):
            # A population table beside the data: join there; the classes' values never reach Python.
            configured = dependencies.get_metric_configuration(self.metric_dependencies[0])
            assert configured is not None
            dependencies.remove_metric_configuration(self.metric_dependencies[0])
            table, count_column = in_engine
            dependencies.set_metric_configuration(
                POPULATION_SIZES,
                MetricConfiguration(
                    metric_name=POPULATION_SIZES,
                    metric_domain_kwargs=configured.metric_domain_kwargs,
                    metric_value_kwargs={
                        "quasi_identifiers": list(self.quasi_identifiers),
                        "population_table": table,
                        "count_column": count_column,
                    },
                ),
            )
            return dependencies
        for name in self.metric_dependencies:
            set_metric_kwargs(
                dependencies, name, {"quasi_identifiers": list(self.quasi_identifiers), "model_columns": columns}
            )
        return dependencies

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        if POPULATION_SIZES in metrics:
            return self._validate_population_sizes(metrics[POPULATION_SIZES])
        classes: EquivalenceClasses = metrics[self.metric_dependencies[0]]
        if self.include_values:
            message = "include_values=True puts raw QI values of at-risk records in the result"
            warnings.warn(message, PrivacyRiskWarning, stacklevel=2)
        model = self.build_model(self.__dict__)
        result = model.evaluate(classes, include_values=self.include_values)
        success, observed, extra = self.judge(model, result, classes)
        details = {
            "model": result.model,
            "threshold": result.threshold,
            "records": classes.n_rows,
            "classes": classes.n_classes,
            "class_size_histogram": class_size_histogram(classes),
            "violations": result.violations,
            **extra,
        }
        if math.isfinite(observed) and self.observed_is_integer():
            observed = int(observed)
        return validation_result(success, observed, details)

    def _validate_population_sizes(self, sizes: JoinedSizes) -> dict[str, Any]:
        """The verdict from the engine's (records, people) per class: the same details, no class values."""
        result = self.build_model(self.__dict__).evaluate_population_sizes(sizes.sample, sizes.people)
        details = {
            "model": result.model,
            "threshold": result.threshold,
            "records": int(sizes.sample.sum()),
            "classes": int(sizes.sample.shape[0]),
            "class_size_histogram": size_histogram(sizes.sample),
            "violations": result.violations,
        }
        return validation_result(result.passed, result.observed, details)
