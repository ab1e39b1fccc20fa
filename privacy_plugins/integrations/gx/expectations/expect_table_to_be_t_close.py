"""ExpectTableToBeTClose: every class's sensitive distribution is within EMD t of the table's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic

from privacy_plugins.core.hierarchies import build_hierarchy
from privacy_plugins.core.models import ModelResult, PrivacyModel, TCloseness, TDistance
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation

__all__ = ["ExpectTableToBeTClose"]


class ExpectTableToBeTClose(PrivacyExpectation):
    """Expect the table to be t-close for a sensitive attribute over its quasi-identifiers.

    ``observed_value`` is the table's t: the largest Earth Mover's Distance between
    a class's distribution of ``sensitive_attribute`` and the whole table's. The
    distance is ``"equal"`` (categorical: ½ Σ|p − q|), ``"ordered"`` (numeric, over
    the sorted values), ``"hierarchical"`` (along ``sensitive_hierarchy``: two values
    are level(common ancestor)/height apart; the GROUP BY still runs where the table
    lives) or ``"auto"`` (default): ordered for a numeric column,
    equal otherwise — the core's one rule, applied to the column's type on every
    engine (SQL and Spark numeric and decimal columns are numeric). ``details``
    names the distance used. A missing sensitive value counts as a value of its
    own, sorted last.

    Args:
        quasi_identifiers: columns an attacker may know.
        sensitive_attribute: the sensitive attribute.
        t: in [0, 1].
        t_distance: ``"auto"`` (default), ``"equal"``, ``"ordered"`` or ``"hierarchical"``.
        sensitive_hierarchy: the hierarchical distance's hierarchy: a path to an ARX CSV
            (``leaf;parent;…;*``) or inline ``{"grouping": {...}}``, ``{"taxonomy": {...}}``
            or ``{"file": {"path": ..., "sep": ";"}}``.
        include_values: opt in to the QI values of a few violating classes.

    References:
        Li N., Li T., Venkatasubramanian S. t-Closeness: Privacy Beyond k-Anonymity
        and l-Diversity. ICDE 2007.

    Example:
        >>> ExpectTableToBeTClose(quasi_identifiers=["zip"], sensitive_attribute="disease", t=0.2).expectation_type
        'expect_table_to_be_t_close'
    """

    sensitive_attribute: pydantic.StrictStr = pydantic.Field(description="The sensitive attribute.")
    t: pydantic.StrictInt | pydantic.StrictFloat = pydantic.Field(description="Largest EMD allowed (0..1).")
    t_distance: TDistance = pydantic.Field(
        "auto", description="auto (ordered for numeric columns, equal otherwise) | equal | ordered | hierarchical"
    )
    sensitive_hierarchy: pydantic.StrictStr | dict[str, Any] | None = pydantic.Field(
        None, description="The sensitive attribute's hierarchy (ARX CSV path or {grouping|taxonomy|file: ...})."
    )

    success_keys: ClassVar[tuple[str, ...]] = (
        "quasi_identifiers", "sensitive_attribute", "t", "t_distance", "sensitive_hierarchy", "include_values",
    )  # fmt: skip
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive_attribute", "t")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> TCloseness:
        """t-closeness with the chosen ground distance (bound to ``sensitive_hierarchy`` if given)."""
        attribute = params["sensitive_attribute"]
        model = TCloseness(attribute, params["t"], params.get("t_distance", "auto"))
        config = params.get("sensitive_hierarchy")
        return model if config is None else model.with_hierarchies({attribute: build_hierarchy(attribute, config)})

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Table is 0.2-close for disease (auto distance) on age, zip, sex'."""
        values = {
            "t": params.get("t"),
            "sensitive_attribute": params.get("sensitive_attribute"),
            "t_distance": params.get("t_distance", "auto"),
        }
        return "Table is $t-close for $sensitive_attribute ($t_distance distance) on $quasi_identifiers", values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """T."""
        return "t"

    def judge(
        self, model: PrivacyModel, result: ModelResult, classes: EquivalenceClasses
    ) -> tuple[bool, float, dict[str, Any]]:
        """Adds the ground distance used (``auto`` resolved from the column's type)."""
        t_close = self.build_model(self.__dict__)  # the typed model (``model`` is the same one)
        return (
            result.passed,
            result.observed,
            {"t_distance": t_close.distance_for(classes.frame[self.sensitive_attribute])},
        )
