"""ExpectTableToHaveNoDirectIdentifiers: no column looks like a direct identifier (e-mail, SSN, card number, …).

The detector of the release gate (:func:`~privacy_plugins.core.identifiers.detect_identifiers`)
on any GX table: pandas in memory; SQL and Spark count and draw a sample of distinct values
where the table lives. The result lists each flagged column with its category and counts
(share of matching sampled values, uniqueness, distinct values, rows), never a value, in
every ``result_format``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.validator.validator import ValidationDependencies

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx.expectations._base import gallery_metadata, set_metric_kwargs, validation_result
from privacy_plugins.integrations.gx.expectations._rendering import DataDocsSentences
from privacy_plugins.integrations.gx.identifier_metric import DIRECT_IDENTIFIERS

__all__ = ["ExpectTableToHaveNoDirectIdentifiers"]


class ExpectTableToHaveNoDirectIdentifiers(DataDocsSentences, BatchExpectation):
    """Expect no column of the table to look like a direct identifier (HIPAA Safe Harbor categories, unique ids).

    Args:
        columns: the columns to check (default: all).
        acknowledged: columns accepted although flagged (reported, not failed).
        sample_size: distinct values checked per column (drawn in the engine for SQL and Spark).

    Example:
        >>> ExpectTableToHaveNoDirectIdentifiers(acknowledged=["customer_id"]).expectation_type
        'expect_table_to_have_no_direct_identifiers'
    """

    columns: list[pydantic.StrictStr] | None = pydantic.Field(None, description="Columns to check (default: all).")
    acknowledged: list[pydantic.StrictStr] = pydantic.Field(
        default_factory=list, description="Columns accepted although flagged (they are reported, not failed)."
    )
    sample_size: pydantic.StrictInt = pydantic.Field(5000, description="Distinct values checked per column (≥ 1).")

    metric_dependencies: ClassVar[tuple[str, ...]] = (DIRECT_IDENTIFIERS,)
    success_keys: ClassVar[tuple[str, ...]] = ("columns", "acknowledged", "sample_size")
    domain_keys: ClassVar[tuple[str, ...]] = ("batch_id",)
    args_keys: ClassVar[tuple[str, ...]] = ()
    library_metadata: ClassVar[dict[str, Any]] = gallery_metadata("production", "direct identifiers")

    @pydantic.root_validator(skip_on_failure=True)
    def _check_settings(cls, values: dict[str, Any]) -> dict[str, Any]:
        if values["sample_size"] < 1:
            raise ConfigurationError(f"sample_size must be an integer >= 1, got {values['sample_size']!r}")
        return values

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table has no direct identifiers' (and what is checked or acknowledged)."""
        template, values = "Table has no direct identifiers", {}
        if params.get("columns"):
            template += " in $columns"
            values["columns"] = ", ".join(params["columns"])
        if params.get("acknowledged"):
            template += " besides the acknowledged $acknowledged"
            values["acknowledged"] = ", ".join(params["acknowledged"])
        return template, values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """The count of flagged, unacknowledged columns."""
        return "flagged columns"

    def get_validation_dependencies(
        self, execution_engine: Any = None, runtime_configuration: dict[str, Any] | None = None
    ) -> ValidationDependencies:
        """The metric with this expectation's columns and sample size."""
        dependencies: ValidationDependencies = super().get_validation_dependencies(
            execution_engine=execution_engine, runtime_configuration=runtime_configuration
        )
        value_kwargs = {"columns": self.columns, "sample_size": self.sample_size}
        return set_metric_kwargs(dependencies, DIRECT_IDENTIFIERS, value_kwargs)

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        findings: list[dict[str, Any]] = metrics[DIRECT_IDENTIFIERS]
        flagged = [f for f in findings if f["column"] not in self.acknowledged]
        details = {
            "flagged": flagged,
            "acknowledged": [f for f in findings if f["column"] in self.acknowledged],
            "categories": sorted({f["category"] for f in flagged}),
        }
        return validation_result(not flagged, len(flagged), details)
