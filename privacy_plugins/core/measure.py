"""One call that measures how private a table is: :func:`measure`.

The table is grouped once (:class:`EquivalenceClasses`) and every measure of
DESIGN.md is read off that grouping: k, sample uniques, suppression, k after
suppression, prosecutor risk and, per sensitive attribute, distinct /
frequency / entropy l, recursive (c,l) c*, t-closeness and personalized leakage.
Small frame-level functions (:func:`k_anonymity`, :func:`l_diversity`,
:func:`t_closeness`) answer a single question with the same code.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core import metrics
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.population import PopulationModel, PopulationRisk, population_risk
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.models import (
    ModelResult,
    PrivacyModel,
    bind_hierarchies,
    check_model_roles,
    check_name,
    requirement_models,
)
from privacy_plugins.core.models.personalized import resolve_bounds
from privacy_plugins.core.models.t_closeness import TDistance, emd_per_class, resolve_t_distance
from privacy_plugins.core.parameters import TOLERANCE, check_fraction, check_integer, check_positive
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts
from privacy_plugins.core.results import ClassViolations, to_jsonable, violations_from_mask
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError, PrivacyRiskWarning

__all__ = [
    "LVariant",
    "MeasureReport",
    "SensitiveReport",
    "TDistance",
    "k_anonymity",
    "l_diversity",
    "measure",
    "measure_sensitive",
    "t_closeness",
]

LVariant = Literal["distinct", "frequency", "entropy"]
L_VARIANTS: tuple[str, ...] = ("distinct", "frequency", "entropy")


@dataclass(frozen=True)
class SensitiveReport:
    """Every measure that involves one sensitive attribute.

    Attributes:
        sensitive_attribute: the sensitive attribute.
        distinct_l: min over classes of the number of distinct values.
        frequency_l: min over classes of |E| / max_v count(E, v) (real-valued).
        entropy_l: min over classes of exp(H(E)) (real-valued).
        t_closeness: max over classes of the EMD to the table's distribution.
        t_distance: the ground distance used, ``"equal"``, ``"ordered"`` or ``"hierarchical"``.
        recursive_l: the l for which ``recursive_c`` was computed, if any.
        recursive_c: c* = max over classes of r1 / (r_l + … + r_m); the table is
            recursive (c,l)-diverse iff c > c*. ``inf`` (``null`` in JSON) when a
            class has fewer than l distinct values, so no c works.
        l_violations: per l variant, the classes below the requested l.
        t_violations: the classes farther than the requested t.
        leakage: personalized leakage against the bounds, if bounds were given.
    """

    sensitive_attribute: Hashable
    distinct_l: int
    frequency_l: float
    entropy_l: float
    t_closeness: float
    t_distance: str
    recursive_l: int | None = None
    recursive_c: float | None = None
    l_violations: Mapping[str, ClassViolations] | None = None
    t_violations: ClassViolations | None = None
    leakage: metrics.LeakageReport | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (``inf`` becomes ``None``)."""
        return to_jsonable(self)


@dataclass(frozen=True)
class MeasureReport:
    """The privacy measures of one table, as returned by :func:`measure`.

    ``to_dict()`` gives the JSON of ``privacy-plugins measure --format json``:
    the contract keys (``rows``, ``classes``, ``k``, ``sample_uniques``,
    ``distinct_l``, ``frequency_l``, ``entropy_l``, ``t_closeness``,
    ``recursive_c``, ``suppression_needed``, ``max_leakage``,
    ``leakage_violations``) at top level — with several sensitive attributes
    the worst value over them — and the full detail under
    ``sensitive_attributes``. ``results`` (JSON ``models``) holds the verdict of
    every requested model — the keyword targets expanded to models, then
    ``models=`` — keyed by its check name (``k_anonymity``,
    ``distinct_l_diversity_disease``…), the names a release's checks use.
    """

    quasi_identifiers: tuple[Hashable, ...]
    rows: int
    classes: int
    k: int
    sample_uniques: int
    class_size_histogram: Mapping[int, int]
    risk: metrics.ProsecutorRisk
    target_k: int | None = None
    k_violations: ClassViolations | None = None
    suppression_needed: metrics.SuppressionNeeded | None = None
    k_after_suppression: metrics.KAfterSuppression | None = None
    sensitive_attributes: tuple[SensitiveReport, ...] = ()
    results: Mapping[str, ModelResult] = field(default_factory=dict)
    #: Risk beyond the sample under ``population=`` (docs/population-risk.md); JSON ``population_risk``.
    population_risk: PopulationRisk | None = None

    def for_attribute(self, attribute: Hashable) -> SensitiveReport:
        """The report of one sensitive attribute."""
        for report in self.sensitive_attributes:
            if report.sensitive_attribute == attribute:
                return report
        raise KeyError(attribute)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form with the CLI contract keys at top level."""
        out: dict[str, Any] = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "rows": self.rows,
            "classes": self.classes,
            "k": self.k,
            "sample_uniques": self.sample_uniques,
            "class_size_histogram": self.class_size_histogram,
            "risk": self.risk,
        }
        if self.target_k is not None and self.suppression_needed is not None:
            out["target_k"] = self.target_k
            out["suppression_needed"] = self.suppression_needed.rows
            out["suppression_needed_fraction"] = self.suppression_needed.fraction
            out["k_violations"] = self.k_violations
        if self.k_after_suppression is not None:
            out["k_after_suppression"] = self.k_after_suppression
        if self.sensitive_attributes:
            out["distinct_l"] = min(r.distinct_l for r in self.sensitive_attributes)
            out["frequency_l"] = min(r.frequency_l for r in self.sensitive_attributes)
            out["entropy_l"] = min(r.entropy_l for r in self.sensitive_attributes)
            out["t_closeness"] = max(r.t_closeness for r in self.sensitive_attributes)
            recursive = [r.recursive_c for r in self.sensitive_attributes if r.recursive_c is not None]
            if recursive:
                out["recursive_l"] = self.sensitive_attributes[0].recursive_l
                out["recursive_c"] = max(recursive)
            leakages = [r.leakage for r in self.sensitive_attributes if r.leakage is not None]
            if leakages:
                out["max_leakage"] = max(x.max_leakage for x in leakages)
                out["leakage_violations"] = max(x.violations for x in leakages)
                out["leakage_infeasible"] = max(x.infeasible for x in leakages)
            out["sensitive_attributes"] = {str(r.sensitive_attribute): r for r in self.sensitive_attributes}
        if self.results:
            out["models"] = dict(self.results)
        if self.population_risk is not None:
            out["population_risk"] = self.population_risk
        return to_jsonable(out)


def _bounds_per_row(
    frame: pd.DataFrame, *, bound: float | None, bound_column: Hashable | None, roles: AttributeRoles
) -> np.ndarray | None:
    """Resolve the personalized bound to one float per row (a bound column may not be a QI or SA)."""
    if bound_column is not None and (
        bound_column in roles.quasi_identifiers or bound_column in roles.sensitive_attributes
    ):
        raise ConfigurationError(f"bound_column {bound_column!r} is also a quasi-identifier or sensitive attribute")
    return resolve_bounds(frame, bound=bound, bound_column=bound_column)


def measure_sensitive(
    classes: EquivalenceClasses,
    attribute: Hashable,
    t_distance: TDistance = "auto",
    *,
    hierarchy: Hierarchy | None = None,
) -> SensitiveReport:
    """The l (every variant) and t of one sensitive attribute over classes already built (weighted or not).

    What :func:`measure` reports per attribute without targets, for callers that grouped the
    records elsewhere (a release measured by ``GROUP BY`` where its rows are). ``hierarchy``:
    the attribute's hierarchy (needed by ``t_distance="hierarchical"``).
    """
    return _measure_sensitive(
        classes,
        attribute,
        l=None,
        c=None,
        t=None,
        t_distance=t_distance,
        bounds=None,
        include_values=False,
        hierarchy=hierarchy,
    )


def _resolve_distance(frame: pd.DataFrame, attribute: Hashable, t_distance: str) -> str:
    return resolve_t_distance(frame[attribute], t_distance)


def _l_violations(
    classes: EquivalenceClasses,
    per_class: Mapping[str, np.ndarray],
    *,
    attribute: Hashable,
    l: float,
    include_values: bool,
) -> dict[str, ClassViolations]:
    return {
        variant: violations_from_mask(
            classes,
            values < l - TOLERANCE,
            target=f"{variant}_l>={l:g} on {attribute}",
            include_values=include_values,
        )
        for variant, values in per_class.items()
    }


def _measure_sensitive(
    classes: EquivalenceClasses,
    attribute: Hashable,
    *,
    l: float | None,
    c: float | None,
    t: float | None,
    t_distance: str,
    bounds: np.ndarray | None,
    include_values: bool,
    hierarchy: Hierarchy | None = None,
) -> SensitiveReport:
    distance = _resolve_distance(classes.frame, attribute, t_distance)
    counts: SensitiveCounts = classes.sensitive(attribute, ordered=distance == "ordered")
    per_class = {
        "distinct": metrics.distinct_l_per_class(counts),
        "frequency": metrics.frequency_l_per_class(classes, counts),
        "entropy": metrics.entropy_l_per_class(classes, counts),
    }
    emd = emd_per_class(classes, attribute, distance, hierarchy)
    recursive_l = recursive_c = None
    l_violations = None
    if l is not None:
        l_violations = _l_violations(classes, per_class, attribute=attribute, l=l, include_values=include_values)
        if float(l).is_integer():
            recursive_l = int(l)
            c_per_class = metrics.recursive_c_per_class(classes, counts, recursive_l)
            recursive_c = float(c_per_class.max())
            if c is not None:
                l_violations["recursive"] = violations_from_mask(
                    classes,
                    c_per_class >= c,
                    target=f"recursive_({c:g},{recursive_l}) on {attribute}",
                    include_values=include_values,
                )
    t_violations = None
    if t is not None:
        t_violations = violations_from_mask(
            classes, emd > t + TOLERANCE, target=f"t<={t:g} on {attribute}", include_values=include_values
        )
    leakage = None
    if bounds is not None:
        leakage = metrics.personalized_leakage(
            classes, counts, bounds, include_values=include_values, hierarchy=hierarchy
        )
    return SensitiveReport(
        sensitive_attribute=attribute,
        distinct_l=int(per_class["distinct"].min()),
        frequency_l=float(per_class["frequency"].min()),
        entropy_l=float(per_class["entropy"].min()),
        t_closeness=float(emd.max()),
        t_distance=distance,
        recursive_l=recursive_l,
        recursive_c=recursive_c,
        l_violations=l_violations,
        t_violations=t_violations,
        leakage=leakage,
    )


def _prepare(frame: object, roles: AttributeRoles) -> tuple[pd.DataFrame, EquivalenceClasses]:
    table = validate_frame(frame)
    roles.check_columns(list(table.columns))
    return table, EquivalenceClasses.from_frame(table, roles.quasi_identifiers)


def measure(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable] = (),
    identifiers: Sequence[Hashable] = (),
    k: int | None = None,
    l: float | None = None,
    c: float | None = None,
    t: float | None = None,
    t_distance: TDistance = "auto",
    suppression_limit: float | None = None,
    bound: float | None = None,
    bound_column: Hashable | None = None,
    risk_threshold: float = DEFAULT_RISK_THRESHOLD,
    include_values: bool = False,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    models: Sequence[PrivacyModel] = (),
    l_variant: str | None = None,
    population: PopulationModel | None = None,
) -> MeasureReport:
    """Measure every privacy property of ``frame`` in one grouping pass.

    Args:
        frame: the table, one row per person.
        quasi_identifiers: columns an attacker may know (at least one).
        sensitive_attributes: columns to protect; each is measured separately.
        identifiers: direct identifiers; validated to exist, never measured.
        k: target k (integer ≥ 1, ≤ rows): adds suppression needed and the classes below k.
        l: target l (≥ 1): adds the classes below l per variant and, for an
            integer l, recursive (c,l)'s c*.
        c: with ``l``, reports the classes violating recursive (c,l)-diversity.
        t: target t in [0, 1]: adds the classes farther than t.
        t_distance: ``"equal"`` (categorical), ``"ordered"`` (numeric),
            ``"hierarchical"`` (along the attribute's hierarchy in ``hierarchies``) or
            ``"auto"``: ordered for numeric columns, equal otherwise.
        suppression_limit: fraction of the records that may be suppressed, in
            [0, 1]: adds k after suppression.
        bound: one personalized leakage bound for every record, in (0, 1].
        bound_column: a column holding each record's own bound, in (0, 1].
        risk_threshold: record risk above which a record counts as at risk.
        include_values: also return the QI values of a few violating classes.
            This prints the records at risk; it is off by default and warns.
        hierarchies: a sensitive attribute's hierarchy: the hierarchical t-distance measures
            along it, and when its published values may be generalized, leakage counts a
            generalized value as each leaf below it (DCorrelate, as
            :class:`~privacy_plugins.core.models.PersonalizedLeakage` does).
        models: privacy models to judge besides the keyword targets (any
            :class:`~privacy_plugins.core.models.PrivacyModel`, a custom one too); a model's
            sensitive attribute must be among ``sensitive_attributes``.
        l_variant: the variant of the l-diversity model ``l`` stands for in ``results``
            (default: ``"recursive"`` with ``c`` and an integer ``l``, else ``"distinct"``);
            the per-variant violations are reported for every variant regardless.
        population: what is known of the population the table samples (a sampling fraction,
            a population size or a population table): adds ``population_risk`` — journalist
            and marketer risk and the population-uniqueness estimates (docs/population-risk.md).

    The keyword targets (``k``, ``l``, ``c``, ``t``, ``bound``, ``bound_column``) expand to
    models with :func:`~privacy_plugins.core.models.requirement_models`, the expansion the
    CLI flags and a release spec's keys use; every model's verdict is in ``results``.

    Returns:
        A :class:`MeasureReport` (``.to_dict()`` for JSON).

    Raises:
        UnknownColumnError: a named column is not in the table.
        RoleConflictError: a column is named twice or in two roles.
        EmptyTableError: the table has no rows.
        ConfigurationError: a parameter is outside its domain.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"age": [21, 22, 23, 24], "zip": ["176*"] * 4,
        ...                    "disease": ["cancer", "flu", "hiv", "hiv"]})
        >>> report = measure(df, quasi_identifiers=["zip"], sensitive_attributes=["disease"])
        >>> report.k, report.for_attribute("disease").distinct_l
        (4, 3)
    """
    roles = AttributeRoles(
        quasi_identifiers=quasi_identifiers,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
    )
    table = validate_frame(frame)
    roles.check_columns(list(table.columns))
    if k is not None:
        k = check_integer(k, name="k")
        if k > len(table):
            raise ConfigurationError(f"k={k} is larger than the table ({len(table)} rows)")
    if l is not None:
        l = check_positive(l, name="l", minimum=1.0, inclusive=True)
    if c is not None:
        if l is None:
            raise ConfigurationError("c (recursive (c,l)-diversity) needs l as well")
        c = check_positive(c, name="c")
    if t is not None:
        t = check_fraction(t, name="t")
    if suppression_limit is not None:
        suppression_limit = check_fraction(suppression_limit, name="suppression_limit")
    bounds = _bounds_per_row(table, bound=bound, bound_column=bound_column, roles=roles)
    if (l is not None or t is not None or bounds is not None) and not roles.sensitive_attributes:
        raise ConfigurationError("l, t and leakage bounds need at least one sensitive attribute")
    if include_values:
        warnings.warn(
            "include_values=True puts raw quasi-identifier values of at-risk records in the report",
            PrivacyRiskWarning,
            stacklevel=2,
        )

    requested = _requested_models(
        roles, table, k=k, l=l, c=c, t=t, t_distance=t_distance, bound=bound, bound_column=bound_column,
        l_variant=l_variant, models=models, hierarchies=hierarchies,
    )  # fmt: skip
    classes = EquivalenceClasses.from_frame(table, roles.quasi_identifiers)
    per_attribute = tuple(
        _measure_sensitive(
            classes,
            attribute,
            l=l,
            c=c,
            t=t,
            t_distance=t_distance,
            bounds=bounds,
            include_values=include_values,
            hierarchy=(hierarchies or {}).get(attribute),
        )
        for attribute in roles.sensitive_attributes
    )
    return MeasureReport(
        quasi_identifiers=tuple(roles.quasi_identifiers),
        rows=classes.n_rows,
        classes=classes.n_classes,
        k=metrics.k_of(classes),
        sample_uniques=metrics.sample_uniques(classes),
        class_size_histogram=metrics.class_size_histogram(classes),
        risk=metrics.prosecutor_risk(classes, threshold=risk_threshold),
        target_k=k,
        k_violations=metrics.k_violations(classes, k, include_values=include_values) if k is not None else None,
        suppression_needed=metrics.suppression_needed(classes, k) if k is not None else None,
        k_after_suppression=(
            metrics.k_after_suppression(classes, suppression_limit) if suppression_limit is not None else None
        ),
        sensitive_attributes=per_attribute,
        results={check_name(m): m.evaluate(classes, include_values=include_values) for m in requested},
        population_risk=(
            population_risk(classes, population, threshold=risk_threshold) if population is not None else None
        ),
    )


def _requested_models(
    roles: AttributeRoles,
    table: pd.DataFrame,
    *,
    k: int | None,
    l: float | None,
    c: float | None,
    t: float | None,
    t_distance: TDistance,
    bound: float | None,
    bound_column: Hashable | None,
    l_variant: str | None,
    models: Sequence[PrivacyModel],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
) -> list[PrivacyModel]:
    """The keyword targets expanded to models, then ``models``: checked against the roles and the table."""
    if l_variant is None:
        l_variant = "recursive" if c is not None and l is not None and float(l).is_integer() else "distinct"
    expanded = requirement_models(
        sensitive_attributes=roles.sensitive_attributes,
        k=k,
        l=l,
        l_variant=l_variant,
        c=c if l_variant == "recursive" else None,
        t=t,
        t_distance=t_distance,
        bound=bound,
        bound_column=bound_column,
        models=models,
    )
    check_model_roles(expanded, roles)
    bound_models = bind_hierarchies(expanded, hierarchies)
    for model in bound_models:
        model.validate_against(table)
    return bound_models


def k_anonymity(frame: pd.DataFrame, *, quasi_identifiers: Sequence[Hashable]) -> int:
    """K of ``frame`` over ``quasi_identifiers`` (the smallest class size).

    Example:
        >>> import pandas as pd
        >>> k_anonymity(pd.DataFrame({"sex": ["F", "F", "M", "M"]}), quasi_identifiers=["sex"])
        2
    """
    _, classes = _prepare(frame, AttributeRoles(quasi_identifiers=quasi_identifiers))
    return metrics.k_of(classes)


def l_diversity(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attribute: Hashable,
    l_variant: LVariant = "distinct",
) -> float:
    """L of one sensitive attribute (``distinct`` is an integer; the others are real-valued)."""
    if l_variant not in L_VARIANTS:
        raise ConfigurationError(f"l_variant must be one of {list(L_VARIANTS)}, got {l_variant!r}")
    _, classes = _prepare(
        frame, AttributeRoles(quasi_identifiers=quasi_identifiers, sensitive_attributes=[sensitive_attribute])
    )
    counts = classes.sensitive(sensitive_attribute)
    if l_variant == "distinct":
        return int(metrics.distinct_l_per_class(counts).min())
    if l_variant == "frequency":
        return float(metrics.frequency_l_per_class(classes, counts).min())
    return float(metrics.entropy_l_per_class(classes, counts).min())


def t_closeness(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attribute: Hashable,
    t_distance: TDistance = "auto",
    sensitive_hierarchy: Hierarchy | None = None,
) -> float:
    """T of one sensitive attribute: max over classes of the EMD to the whole table.

    ``sensitive_hierarchy``: the attribute's hierarchy, which ``t_distance="hierarchical"`` needs.
    """
    table, classes = _prepare(
        frame, AttributeRoles(quasi_identifiers=quasi_identifiers, sensitive_attributes=[sensitive_attribute])
    )
    distance = _resolve_distance(table, sensitive_attribute, t_distance)
    return float(emd_per_class(classes, sensitive_attribute, distance, sensitive_hierarchy).max())
