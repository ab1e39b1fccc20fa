"""ExpectTableToBeLDiverse: every class holds well-represented sensitive values (four variants)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic

from privacy_plugins.core.models import PrivacyModel, from_config
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation
from privacy_plugins.integrations.gx.metrics import SENSITIVE_CLASSES

__all__ = ["ExpectTableToBeLDiverse"]

_MODEL_NAMES = {
    "distinct": "distinct_l_diversity",
    "frequency": "frequency_l_diversity",
    "entropy": "entropy_l_diversity",
    "recursive": "recursive_cl_diversity",
}


class ExpectTableToBeLDiverse(PrivacyExpectation):
    """Expect the table to be l-diverse for a sensitive attribute over its quasi-identifiers.

    ``observed_value`` is the table's l for the variant: distinct values (an integer),
    min |E|/max count (frequency) or min exp(entropy) (entropy). For ``recursive``
    it is c* = max over classes of r1/(r_l + … + r_m). The table is recursive
    (c,l)-diverse iff c > c*. c* is ``None`` when a class has fewer than l values.

    Args:
        quasi_identifiers: columns an attacker may know.
        sensitive: the sensitive attribute; a missing value counts as a value of its own.
        l: ≥ 1 (an integer ≥ 1 for ``recursive``).
        variant: ``"distinct"`` (default), ``"frequency"``, ``"entropy"`` or ``"recursive"``.
        c: > 0, for ``recursive`` only.
        include_values: opt in to the QI values of a few violating classes.

    References:
        Machanavajjhala A. et al. l-Diversity: Privacy Beyond k-Anonymity. ACM TKDD 1(1), 2007.

    Example:
        >>> ExpectTableToBeLDiverse(quasi_identifiers=["zip"], sensitive="disease", l=2).expectation_type
        'expect_table_to_be_l_diverse'
    """

    sensitive: pydantic.StrictStr = pydantic.Field(description="The sensitive attribute.")
    l: pydantic.StrictInt | pydantic.StrictFloat = pydantic.Field(description="Required l (≥ 1).")
    variant: Literal["distinct", "frequency", "entropy", "recursive"] = pydantic.Field(
        "distinct", description="distinct | frequency | entropy | recursive"
    )
    c: pydantic.StrictInt | pydantic.StrictFloat | None = pydantic.Field(
        None, description="c of recursive (c,l)-diversity (> 0); recursive only."
    )

    metric_dependencies: ClassVar[tuple[str, ...]] = (SENSITIVE_CLASSES,)
    success_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive", "l", "variant", "c", "include_values")
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive", "l")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> PrivacyModel:
        """The variant's core model, through the model registry."""
        variant, c = params.get("variant", "distinct"), params.get("c")
        if (variant == "recursive") != (c is not None):
            raise ConfigurationError(f"c is required for variant='recursive' and only for it (variant={variant!r})")
        extra = {"c": c} if c is not None else {}
        return from_config(_MODEL_NAMES[variant], attribute=params["sensitive"], l=params["l"], **extra)

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table is distinct 2-diverse for disease on age, zip, sex'."""
        values = {
            "variant": params.get("variant", "distinct"),
            "l": params.get("l"),
            "sensitive": params.get("sensitive"),
        }
        if values["variant"] == "recursive":
            values["c"] = params.get("c")
            return "Table is recursive ($c, $l)-diverse for $sensitive on $quasi_identifiers", values
        return "Table is $variant $l-diverse for $sensitive on $quasi_identifiers", values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """L, or c* for the recursive variant."""
        return "c*" if params.get("variant") == "recursive" else "l"

    def observed_is_integer(self) -> bool:
        """Distinct l is a count."""
        return self.variant == "distinct"
