"""ExpectTableToBeTClose: every class's sensitive distribution is within EMD t of the table's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic

from privacy_plugins.core.models import TCloseness
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation
from privacy_plugins.integrations.gx.metrics import SENSITIVE_CLASSES

__all__ = ["ExpectTableToBeTClose"]


class ExpectTableToBeTClose(PrivacyExpectation):
    """Expect the table to be t-close for a sensitive attribute over its quasi-identifiers.

    ``observed_value`` is the table's t: the largest Earth Mover's Distance between
    a class's distribution of ``sensitive`` and the whole table's. The distance is
    ``"equal"`` (categorical: ½ Σ|p − q|) or ``"ordered"`` (numeric, over the
    sorted values). A missing sensitive value counts as a value of its own, sorted last.

    Args:
        quasi_identifiers: columns an attacker may know.
        sensitive: the sensitive attribute.
        t: in [0, 1].
        distance: ``"equal"`` (default) or ``"ordered"``.
        include_values: opt in to the QI values of a few violating classes.

    References:
        Li N., Li T., Venkatasubramanian S. t-Closeness: Privacy Beyond k-Anonymity
        and l-Diversity. ICDE 2007.

    Example:
        >>> ExpectTableToBeTClose(quasi_identifiers=["zip"], sensitive="disease", t=0.2).expectation_type
        'expect_table_to_be_t_close'
    """

    sensitive: pydantic.StrictStr = pydantic.Field(description="The sensitive attribute.")
    t: pydantic.StrictInt | pydantic.StrictFloat = pydantic.Field(description="Largest EMD allowed (0..1).")
    distance: Literal["equal", "ordered"] = pydantic.Field(
        "equal", description="equal (categorical) | ordered (numeric)"
    )

    metric_dependencies: ClassVar[tuple[str, ...]] = (SENSITIVE_CLASSES,)
    success_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive", "t", "distance", "include_values")
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive", "t")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> TCloseness:
        """t-closeness with the chosen ground distance."""
        return TCloseness(params["sensitive"], params["t"], distance=params.get("distance", "equal"))

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table is 0.2-close for disease (equal distance) on age, zip, sex'."""
        values = {
            "t": params.get("t"),
            "sensitive": params.get("sensitive"),
            "distance": params.get("distance", "equal"),
        }
        return "Table is $t-close for $sensitive ($distance distance) on $quasi_identifiers", values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """T."""
        return "t"
