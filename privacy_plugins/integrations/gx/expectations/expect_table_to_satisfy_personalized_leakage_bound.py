"""ExpectTableToSatisfyPersonalizedLeakageBound: each record's leakage stays within its own bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic

from privacy_plugins.core.hierarchies import build_hierarchy
from privacy_plugins.core.metrics import personalized_leakage
from privacy_plugins.core.models import ModelResult, PersonalizedLeakage, PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import RoleConflictError
from privacy_plugins.integrations.gx.expectations._base import PrivacyExpectation

__all__ = ["ExpectTableToSatisfyPersonalizedLeakageBound"]


class ExpectTableToSatisfyPersonalizedLeakageBound(PrivacyExpectation):
    """Expect every record's leakage of its sensitive value to be within its bound (Song et al. 2015).

    A record t in class QG leaks Pleak(t) = count(QG, t.s) / |QG|. The table passes
    when Pleak(t) ≤ pleak(t) for every record. The bound is one ``bound`` for all,
    each record's own value in ``bound_column``, or both (``bound`` fills empty cells).
    ``observed_value`` is the largest leakage. ``details`` adds the records over their
    bound and the infeasible ones: a bound below 1/|class| can never be met in that class.

    When the published sensitive column may hold generalized values (the
    ``personalized`` anonymizer's SA_Generalization), give ``sensitive_hierarchy``:
    a generalized value then counts as every leaf below it, 1/Nleaf each (DCorrelate),
    exactly as the core's re-check does. Without it a ``"*"`` would count as a value
    of its own and the leakage would be under-counted. The GROUP BY still runs where
    the table lives (SQL/Spark); the hierarchy is applied to the aggregates.

    Args:
        quasi_identifiers: columns an attacker may know.
        sensitive_attribute: the sensitive attribute.
        bound: one bound in (0, 1] for every record (the default for empty ``bound_column`` cells).
        bound_column: a column holding each record's bound in (0, 1].
        sensitive_hierarchy: the sensitive attribute's hierarchy: a path to an ARX CSV
            (``leaf;parent;…;*``), or inline ``{"grouping": {leaf: [parent, …]}}``,
            ``{"taxonomy": {...}}`` or ``{"file": {"path": ..., "sep": ";"}}`` — the
            release spec's ``hierarchies:`` forms that need no data.
        include_values: opt in to the QI values of a few violating classes.

    References:
        Song F. et al. The K-Anonymization Method Satisfying Personalized Privacy
        Preservation. Chem. Eng. Trans. 46, 2015.

    Example:
        >>> ExpectTableToSatisfyPersonalizedLeakageBound(
        ...     quasi_identifiers=["zip"], sensitive_attribute="disease", bound=0.5,
        ...     sensitive_hierarchy={"grouping": {"flu": ["respiratory"], "cold": ["respiratory"]}},
        ... ).expectation_type
        'expect_table_to_satisfy_personalized_leakage_bound'
    """

    sensitive_attribute: pydantic.StrictStr = pydantic.Field(description="The sensitive attribute.")
    bound: pydantic.StrictInt | pydantic.StrictFloat | None = pydantic.Field(
        None, description="One leakage bound in (0, 1] for every record."
    )
    bound_column: pydantic.StrictStr | None = pydantic.Field(
        None, description="Column holding each record's own bound in (0, 1]."
    )
    sensitive_hierarchy: pydantic.StrictStr | dict[str, Any] | None = pydantic.Field(
        None,
        description="The sensitive attribute's hierarchy (ARX CSV path or {grouping|taxonomy|file: ...}), "
        "when its published values may be generalized.",
    )

    success_keys: ClassVar[tuple[str, ...]] = (
        "quasi_identifiers", "sensitive_attribute", "bound", "bound_column", "sensitive_hierarchy", "include_values",
    )  # fmt: skip
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive_attribute")

    @classmethod
    def build_model(cls, params: Mapping[str, Any]) -> PersonalizedLeakage:
        """Personalized leakage: a bound, a bound_column, or both; measured along ``sensitive_hierarchy`` if given."""
        column = params.get("bound_column")
        attribute = params["sensitive_attribute"]
        if column is not None and (column in params["quasi_identifiers"] or column == attribute):
            raise RoleConflictError(f"bound_column {column!r} is also a quasi-identifier or the sensitive attribute")
        config = params.get("sensitive_hierarchy")
        hierarchy = None if config is None else build_hierarchy(attribute, config)
        return PersonalizedLeakage(attribute, bound=params.get("bound"), bound_column=column).with_hierarchies(
            {} if hierarchy is None else {attribute: hierarchy}
        )

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Every record's leakage of disease is at most 0.5 on age, zip, sex'."""
        values: dict[str, Any] = {"sensitive_attribute": params.get("sensitive_attribute")}
        if params.get("bound_column") is not None:
            values["bound_column"] = params["bound_column"]
            template = "Every record's leakage of $sensitive_attribute is at most its bound in $bound_column"
            return template + " on $quasi_identifiers", values
        values["bound"] = params.get("bound")
        return "Every record's leakage of $sensitive_attribute is at most $bound on $quasi_identifiers", values

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """The largest leakage."""
        return "max leakage"

    def judge(
        self, model: PrivacyModel, result: ModelResult, classes: EquivalenceClasses
    ) -> tuple[bool, float, dict[str, Any]]:
        """Adds the records over their bound, the infeasible ones and the mean leakage (same hierarchy as the model)."""
        bounds = model.leakage_bounds(classes.frame)
        assert bounds is not None
        report = personalized_leakage(
            classes,
            classes.sensitive(self.sensitive_attribute),
            bounds,
            hierarchy=model.measuring_hierarchy(),
        )
        extra = {
            "leakage_violations": report.violations,
            "leakage_infeasible": report.infeasible,
            "mean_leakage": report.mean_leakage,
        }
        return result.passed, result.observed, extra
