"""ExpectTableToBeKAnonymous: every class over the quasi-identifiers holds at least k records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic

from privacy_plugins.core.metrics import k_after_suppression
from privacy_plugins.core.models import KAnonymity, ModelResult, PrivacyModel
from privacy_plugins.core.parameters import check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation

__all__ = ["ExpectTableToBeKAnonymous"]


class ExpectTableToBeKAnonymous(PrivacyExpectation):
    """Expect the table to be k-anonymous over its quasi-identifiers.

    k is the size of the smallest equivalence class. With a ``suppression_limit``
    the table also passes when suppressing at most ⌊suppression_limit·n⌋ records (whole smallest
    classes first) leaves every class with at least k records. ``observed_value``
    is then the k after that suppression.

    Args:
        quasi_identifiers: columns an attacker may know.
        k: integer ≥ 1.
        suppression_limit: fraction of rows in [0, 1] that may be suppressed (default 0).
        include_values: opt in to the QI values of a few violating classes.

    References:
        Sweeney L. k-anonymity: a model for protecting privacy. IJUFKS 10(5), 2002.

    Example:
        >>> ExpectTableToBeKAnonymous(quasi_identifiers=["age", "zip"], k=5).expectation_type
        'expect_table_to_be_k_anonymous'
    """

    k: pydantic.StrictInt = pydantic.Field(description="Smallest class size required (integer ≥ 1).")
    suppression_limit: pydantic.StrictInt | pydantic.StrictFloat = pydantic.Field(
        0.0, description="Fraction of rows that may be suppressed, whole smallest classes first (0..1)."
    )

    success_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "k", "suppression_limit", "include_values")
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "k")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> KAnonymity:
        """k-anonymity (the suppression limit is checked here as well)."""
        check_fraction(params.get("suppression_limit", 0.0), name="suppression_limit")
        return KAnonymity(params["k"])

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table is 5-anonymous on age, zip, sex'."""
        template = "Table is $k-anonymous on $quasi_identifiers"
        values: dict[str, Any] = {"k": params.get("k")}
        if params.get("suppression_limit"):
            template += " after suppressing at most $suppression_limit of its rows"
            values["suppression_limit"] = f"{params['suppression_limit']:.2%}"
        return template, values

    def observed_is_integer(self) -> bool:
        """K is a count."""
        return True

    def judge(
        self, model: PrivacyModel, result: ModelResult, classes: EquivalenceClasses
    ) -> tuple[bool, float, dict[str, Any]]:
        """Without suppression the model decides; with it, k after suppressing whole smallest classes."""
        if not self.suppression_limit:
            return result.passed, result.observed, {}
        after = k_after_suppression(classes, self.suppression_limit)
        extra = {"k_before_suppression": int(result.observed), "suppression": after}
        return after.k >= self.k, float(after.k), extra
