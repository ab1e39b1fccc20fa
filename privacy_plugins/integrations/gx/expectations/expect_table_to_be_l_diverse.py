"""ExpectTableToBeLDiverse: every class holds well-represented sensitive values (four variants)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic

from privacy_plugins.core.models import LVariant, PrivacyModel, l_diversity_model
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation

__all__ = ["ExpectTableToBeLDiverse"]


class ExpectTableToBeLDiverse(PrivacyExpectation):
    """Expect the table to be l-diverse for a sensitive attribute over its quasi-identifiers.

    ``observed_value`` is the table's l for the variant: distinct values (an integer),
    min |E|/max count (frequency) or min exp(entropy) (entropy). For ``recursive``
    it is c* = max over classes of r1/(r_l + … + r_m). The table is recursive
    (c,l)-diverse iff c > c*. c* is ``None`` when a class has fewer than l values.

    Args:
        quasi_identifiers: columns an attacker may know.
        sensitive_attribute: the sensitive attribute; a missing value counts as a value of its own.
        l: ≥ 1 (an integer ≥ 1 for ``recursive``).
        l_variant: ``"distinct"`` (default), ``"frequency"``, ``"entropy"`` or ``"recursive"``.
        c: > 0, for ``recursive`` only.
        include_values: opt in to the QI values of a few violating classes.

    References:
        Machanavajjhala A. et al. l-Diversity: Privacy Beyond k-Anonymity. ACM TKDD 1(1), 2007.

    Example:
        >>> ExpectTableToBeLDiverse(quasi_identifiers=["zip"], sensitive_attribute="disease", l=2).expectation_type
        'expect_table_to_be_l_diverse'
    """

    sensitive_attribute: pydantic.StrictStr = pydantic.Field(description="The sensitive attribute.")
    l: pydantic.StrictInt | pydantic.StrictFloat = pydantic.Field(description="Required l (≥ 1).")
    l_variant: LVariant = pydantic.Field("distinct", description="distinct | frequency | entropy | recursive")
    c: pydantic.StrictInt | pydantic.StrictFloat | None = pydantic.Field(
        None, description="c of recursive (c,l)-diversity (> 0); recursive only."
    )

    success_keys: ClassVar[tuple[str, ...]] = (
        "quasi_identifiers", "sensitive_attribute", "l", "l_variant", "c", "include_values",
    )  # fmt: skip
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive_attribute", "l")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> PrivacyModel:
        """The variant's core model, built by the core from the same words every surface uses."""
        return l_diversity_model(
            params.get("l_variant", "distinct"), params["l"], params["sensitive_attribute"], c=params.get("c")
        )

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table is distinct 2-diverse for disease on age, zip, sex'."""
        values = {
            "l_variant": params.get("l_variant", "distinct"),
            "l": params.get("l"),
            "sensitive_attribute": params.get("sensitive_attribute"),
        }
        if values["l_variant"] == "recursive":
            values["c"] = params.get("c")
            return "Table is recursive ($c, $l)-diverse for $sensitive_attribute on $quasi_identifiers", values
        return "Table is $l_variant $l-diverse for $sensitive_attribute on $quasi_identifiers", values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """L, or c* for the recursive variant."""
        return "c*" if params.get("l_variant") == "recursive" else "l"

    def observed_is_integer(self) -> bool:
        """Distinct l is a count."""
        return self.l_variant == "distinct"
