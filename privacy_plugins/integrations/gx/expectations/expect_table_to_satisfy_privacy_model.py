"""ExpectTableToSatisfyPrivacyModel: any registered privacy model — a custom one too — as one expectation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic

from privacy_plugins.core.models import PrivacyModel, from_config
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation

__all__ = ["ExpectTableToSatisfyPrivacyModel"]


class ExpectTableToSatisfyPrivacyModel(PrivacyExpectation):
    """Expect the table to satisfy one privacy model, named as a release spec's requirement list names it.

    ``privacy_model`` is a registered name (``k_anonymity``, ``distinct_l_diversity`` … or
    a model a program registered with :func:`~privacy_plugins.core.models.register_model`)
    or ``module:Class`` (imported and registered when the expectation is built), and
    ``parameters`` its parameters — the entry ``{privacy_model: parameters}`` of a
    ``requirements:`` list. The model decides: ``observed_value`` is its measured
    value, and the metric groups by the quasi-identifiers plus the columns it reads.

    Args:
        quasi_identifiers: columns an attacker may know.
        privacy_model: the model's registry name or ``module:Class``.
        parameters: the model's parameters (primitives: numbers, strings, lists).
        include_values: opt in to the QI values of a few violating classes.

    Example:
        >>> ExpectTableToSatisfyPrivacyModel(
        ...     quasi_identifiers=["zip"], privacy_model="k_anonymity", parameters={"k": 2}
        ... ).expectation_type
        'expect_table_to_satisfy_privacy_model'
    """

    privacy_model: pydantic.StrictStr = pydantic.Field(description="Registry name of the model, or module:Class.")
    parameters: dict[str, Any] = pydantic.Field(default_factory=dict, description="The model's parameters.")

    success_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "privacy_model", "parameters", "include_values")
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "privacy_model", "parameters")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> PrivacyModel:
        """The model from the registry (unknown names and parameters raise the core's one-line errors)."""
        return from_config(str(params["privacy_model"]), **dict(params.get("parameters") or {}))

    @classmethod
    def sensitive_of(cls, params: Mapping[str, Any]) -> list[str]:
        """The model's sensitive attribute, if it has one."""
        attribute = cls.build_model(params).sensitive_attribute
        return [] if attribute is None else [str(attribute)]

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table satisfies 5-anonymity on age, zip, sex'."""
        try:
            described = str(cls.build_model(params))
        except (ValueError, TypeError):  # rendering a stored, now-broken configuration: name it as written
            described = str(params.get("privacy_model"))
        return "Table satisfies $model on $quasi_identifiers", {"model": described}

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """The model's report key (``k``, ``l``, ``t`` … or a custom model's)."""
        try:
            return cls.build_model(params).report_key
        except (ValueError, TypeError):
            return "value"
