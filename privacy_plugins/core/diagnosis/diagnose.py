"""The privacy diagnosis centre: :func:`diagnose` a raw table before changing anything.

It answers, for the candidate quasi-identifiers Q = {A1 … Ad}: k (and l) of
every subset of Q when d is small enough to measure all 2^d of them, and in any
case the positive and negative borders of k-anonymity and of each l-diversity
variant (found level-wise, pruning by monotonicity), the suppression each
subset needs to become k-anonymous, k after suppression (under a limit), sample uniques, the
share of records at risk, and the minimal attribute sets that single out a
person together with the attributes that appear most in them — "which columns
are the quasi-identifiers here".

The empty subset is the whole table as one class (k = number of rows, l = the
table's own l). It belongs to Bd− only when the whole table violates the target
(then nothing can satisfy it), and it is Bd+ alone when no single attribute
satisfies it.

References:
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data
    publishing. PhD thesis, Universiti Teknologi Malaysia, 2011, §1.4 and §3.1.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.diagnosis.budget import DEFAULT_MAX_COST, DEFAULT_TIME_BUDGET, DiagnosisBudget
from privacy_plugins.core.diagnosis.criteria import check_border_model
from privacy_plugins.core.diagnosis.findings import Borders
from privacy_plugins.core.diagnosis.population_section import diagnose_population
from privacy_plugins.core.diagnosis.result import PrivacyDiagnosis, rank_quasi_identifiers
from privacy_plugins.core.diagnosis.search import DEFAULT_MAX_EVALUATIONS, levelwise_borders
from privacy_plugins.core.diagnosis.special_uniques import (
    DEFAULT_DIS_FRACTION,
    DEFAULT_MSU_MAX_SIZE,
    DEFAULT_MSU_MAX_SUBSETS,
    find_msus,
)
from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice, lattice_order
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.identifiers import detect_identifiers
from privacy_plugins.core.metrics.population import PopulationModel
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.models import (
    KAnonymity,
    LVariant,
    PrivacyModel,
    bind_hierarchies,
    requirement_models,
    validate_on_units,
)
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.core.results import size_histogram
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError, RoleConflictError, UnknownColumnError

__all__ = ["DEFAULT_K", "DEFAULT_MAX_EXHAUSTIVE", "diagnose", "find_borders"]

#: Target k when none is given: records in smaller classes have risk above 0.2.
DEFAULT_K = 5
#: Up to this many candidates every subset is measured; beyond, only up to the borders.
DEFAULT_MAX_EXHAUSTIVE = 12
# 2^20 subsets already take minutes and a gigabyte of findings: refuse more.
_EXHAUSTIVE_LIMIT = 20
_SINGLING_OUT = KAnonymity(2)


def _validated_table(
    frame: object, roles: AttributeRoles, weights: Hashable | None
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The table without its weights column, and the records each row stands for (``None``: one each)."""
    table = validate_frame(frame)
    roles.check_columns(list(table.columns))
    if weights is None:
        return table, None
    if weights not in table.columns:
        raise UnknownColumnError(f"weights column {weights!r} not in the table; available: {list(table.columns)!r}")
    if weights in roles.quasi_identifiers or weights in roles.sensitive_attributes:
        raise RoleConflictError(f"weights column {weights!r} holds record counts; it cannot also be an attribute")
    counts = _record_counts(table[weights], weights)
    return table.drop(columns=[weights]), counts


def _record_counts(column: pd.Series, name: Hashable) -> np.ndarray:
    """The weights as int64 record counts; refuse anything that is not an integer ≥ 1 (a missing count too)."""
    refusal = f"weights column {name!r} must hold record counts (integers ≥ 1)"
    if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
        raise ConfigurationError(f"{refusal}, got dtype {column.dtype}")
    if pd.api.types.is_integer_dtype(column) and not column.hasnans:
        counts = column.to_numpy(dtype=np.int64)
        bad = counts < 1
    else:
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values) | (values < 1) | (values != np.floor(values))
        counts = np.where(bad, 1, values).astype(np.int64)
    if bad.any():
        raise ConfigurationError(f"{refusal}; {int(bad.sum())} row(s) are not")
    return counts


def _requirements(
    *,
    sensitive_attributes: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    k: int | None,
    l: float | None,
    l_variant: str,
    c: float | None,
    rows: int,
) -> tuple[PrivacyModel, list[PrivacyModel]]:
    """The target k-anonymity and the other border targets: the keyword shorthands plus ``models``."""
    for model in models:
        check_border_model(model)
    stated = requirement_models(sensitive_attributes=sensitive_attributes, k=k, l=l, l_variant=l_variant, c=c)
    every = [*stated, *models]
    given_k = [m for m in every if m.config_name == KAnonymity.config_name]
    if len(given_k) > 1:
        raise ConfigurationError(f"give one k-anonymity target, got {[str(m) for m in given_k]}")
    k_model = given_k[0] if given_k else KAnonymity(min(DEFAULT_K, rows))
    others = [m for m in every if m.config_name != KAnonymity.config_name]
    return k_model, list(dict.fromkeys(others))


def diagnose(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable] = (),
    models: Sequence[PrivacyModel] = (),
    k: int | None = None,
    l: float | None = None,
    l_variant: LVariant = "distinct",
    c: float | None = None,
    suppression_limit: float | None = None,
    risk_threshold: float = DEFAULT_RISK_THRESHOLD,
    max_exhaustive: int = DEFAULT_MAX_EXHAUSTIVE,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    max_cost: int | None = DEFAULT_MAX_COST,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    progress: ProgressCallback | None = None,
    weights: Hashable | None = None,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    msu_max_size: int | None = DEFAULT_MSU_MAX_SIZE,
    msu_max_subsets: int = DEFAULT_MSU_MAX_SUBSETS,
    dis_fraction: float = DEFAULT_DIS_FRACTION,
    direct_identifiers: bool = False,
    population: PopulationModel | None = None,
) -> PrivacyDiagnosis:
    """Diagnose the privacy risk of every subset of the candidate quasi-identifiers.

    A requirement is stated either with the keyword shorthands (``k``, ``l``,
    ``l_variant``, ``c``; ``l`` applies to every sensitive attribute), or as
    privacy models in ``models`` (any model monotone under generalization, e.g.
    several l-diversity variants or a t-closeness), or both; each gets its borders.

    Args:
        frame: the raw table, one row per person.
        quasi_identifiers: the d candidate quasi-identifiers (at least one).
        sensitive_attributes: each adds distinct, frequency and entropy l (and
            recursive c* with ``l_variant="recursive"``) to every subset (the
            worst over them), and its own borders for ``l``.
        models: further border targets (:class:`PrivacyModel` monotone under
            generalization); their sensitive attributes must be among
            ``sensitive_attributes``. At most one k-anonymity in all.
        k: target k, integer in [1, rows]: the borders of k-anonymity and the
            suppression each subset needs. Default :data:`DEFAULT_K` (5), or the
            number of rows for a smaller table.
        l: target l, real ≥ 1: adds the borders of l-diversity of the variant
            ``l_variant`` for each sensitive attribute.
        l_variant: ``"distinct"`` (default), ``"frequency"``, ``"entropy"`` or
            ``"recursive"`` (needs ``c`` and an integer ``l``). Diagnose several
            variants by passing their models in ``models``.
        c: recursive (c,l)-diversity's c > 0 (with ``l_variant="recursive"``).
        suppression_limit: fraction of the records that may be suppressed, in
            [0, 1]: adds k after suppression per subset.
        risk_threshold: record risk 1/|E| above which a record counts as at risk.
        max_exhaustive: measure all 2^d subsets when d is at most this (0..20);
            otherwise only the subsets the level-wise border search visits.
        max_evaluations: refuse to measure more subsets than this (integer ≥ 1).
        max_cost: measure all 2^d subsets only when rows × 2^d is at most this
            (``None``: no limit); see :mod:`privacy_plugins.core.diagnosis.budget`. The
            special-uniques search stops at the same cost (distinct rows × sets grouped).
        time_budget: seconds after which the walk over all subsets stops and the
            diagnosis continues level-wise (``None``: no limit). The borders are
            the same either way; ``mode_reason`` says why a diagnosis went level-wise.
        progress: called as ``progress(subsets_measured, total)`` after each subset
            (``total`` is 2^d while every subset is measured, ``None`` level-wise).
        weights: the column holding how many records each row stands for, when
            ``frame`` is a weighted snapshot (one row per distinct combination of
            the columns diagnosed and its count, e.g. a ``GROUP BY`` in a
            database). Every measure counts records, so the diagnosis equals the
            one of the table with each row repeated that often; the column is
            not an attribute. ``rows`` and ``max_cost`` count records too.
        hierarchies: the sensitive attributes' hierarchies the models measure along
            (e.g. a hierarchical-distance t-closeness), bound to every model.
        msu_max_size: special uniques (SUDA2): search the minimal sample uniques of up to
            this many attributes (integer ≥ 0; ``None``: every size; 0: no search). The
            report says when this bound, or ``msu_max_subsets``, cut the search.
        msu_max_subsets: the most attribute sets the MSU search groups (integer ≥ 1).
        dis_fraction: the sampling fraction of the DIS-SUDA score, in (0, 1] (sdcMicro's 0.01).
        direct_identifiers: also flag every column that looks like a direct identifier
            (:func:`~privacy_plugins.core.identifiers.detect_identifiers`: category and counts,
            never a value); not with ``weights`` (a snapshot's rows are not the records).
        population: what is known of the population the table samples (docs/population-risk.md):
            adds ``population`` — journalist and marketer risk and population uniqueness of
            every subset measured and of all candidates, and each attacker's record-risk
            distribution (``None``: sample risk only).

    Returns:
        A :class:`PrivacyDiagnosis` (``.to_dict()`` for JSON; ``privacy_plugins.report.render`` for HTML).

    Raises:
        UnknownColumnError: a named column is not in the table.
        RoleConflictError: a column is named twice, or is both QI and sensitive
            (or the weights column).
        EmptyTableError: the table has no rows.
        ConfigurationError: a parameter is outside its domain, a model is not
            monotone, a weight is not an integer ≥ 1, or the search would
            exceed ``max_evaluations``.

    Example:
        >>> df = pd.DataFrame({"age": [21, 22, 23, 24], "sex": ["F", "M", "M", "M"],
        ...                    "zip": ["17651", "17652", "17661", "17662"]})
        >>> report = diagnose(df, quasi_identifiers=["age", "sex", "zip"], k=2)
        >>> report.k_borders.negative  # every single attribute singles someone out
        (('age',), ('sex',), ('zip',))
        >>> report.subsets_evaluated, report.subsets_total
        (5, 8)
    """
    if direct_identifiers and weights is not None:
        raise ConfigurationError("direct_identifiers=True needs the rows, not a weighted snapshot (weights=)")
    if isinstance(sensitive_attributes, str):
        raise TypeError(
            f"sensitive_attributes must be a sequence of column names, got the string {sensitive_attributes!r}"
        )
    roles = AttributeRoles(quasi_identifiers=quasi_identifiers, sensitive_attributes=sensitive_attributes)
    table, counts = _validated_table(frame, roles, weights)
    records = len(table) if counts is None else int(counts.sum())
    k_model, targets = _requirements(
        sensitive_attributes=roles.sensitive_attributes,
        models=bind_hierarchies(models, hierarchies),
        k=k,
        l=l,
        l_variant=l_variant,
        c=c,
        rows=records,
    )
    validate_on_units(table, records, (k_model, *targets))
    for model in (k_model, *targets):
        if model.sensitive_attribute is not None and model.sensitive_attribute not in roles.sensitive_attributes:
            raise ConfigurationError(
                f"{model} protects {model.sensitive_attribute!r}, which is not among "
                f"sensitive_attributes {list(roles.sensitive_attributes)!r}"
            )
    if suppression_limit is not None:
        suppression_limit = check_fraction(suppression_limit, name="suppression_limit")
    risk_threshold = check_fraction(risk_threshold, name="risk_threshold")
    max_exhaustive = check_integer(max_exhaustive, name="max_exhaustive", minimum=0)
    if max_exhaustive > _EXHAUSTIVE_LIMIT:
        raise ConfigurationError(f"max_exhaustive must be at most {_EXHAUSTIVE_LIMIT}, got {max_exhaustive}")
    max_evaluations = check_integer(max_evaluations, name="max_evaluations")
    if msu_max_size is not None:
        msu_max_size = check_integer(msu_max_size, name="msu_max_size", minimum=0)
    msu_max_subsets = check_integer(msu_max_subsets, name="msu_max_subsets")
    dis_fraction = check_fraction(dis_fraction, name="dis_fraction", open_low=True)
    budget = DiagnosisBudget(max_exhaustive=max_exhaustive, max_cost=max_cost, time_budget=time_budget)

    target_k = k_model.minimum_class_size
    unique = list(dict.fromkeys([k_model, _SINGLING_OUT, *targets]))
    lattice = SubsetLattice(
        table,
        roles.quasi_identifiers,
        sensitive_attributes=roles.sensitive_attributes,
        k=target_k,
        recursive_l=int(l) if l is not None and l_variant == "recursive" else None,
        suppression_limit=suppression_limit,
        risk_threshold=risk_threshold,
        models=unique,
        weights=counts,
    )
    mode_reason = budget.exhaustive_refusal(rows=lattice.n_rows, d=lattice.d)
    exhaustive = mode_reason is None
    if exhaustive:
        budget.start()
        exhaustive = lattice.measure_all(progress=progress, stop=budget.expired)
        if not exhaustive:
            mode_reason = budget.timeout_reason(len(lattice.findings), 2**lattice.d)
    found = dict(
        zip(unique, levelwise_borders(lattice, unique, max_evaluations=max_evaluations, progress=progress), strict=True)
    )
    singling_out = found[_SINGLING_OUT]
    special = (
        None
        if msu_max_size == 0
        else find_msus(
            lattice,
            max_size=msu_max_size,
            max_subsets=msu_max_subsets,
            max_cost=budget.max_cost,
            dis_fraction=dis_fraction,
        )
    )
    full = lattice.full_mask
    population_section = (
        None
        if population is None
        else diagnose_population(table, lattice, lattice.findings, population, counts=counts, threshold=risk_threshold)
    )
    return PrivacyDiagnosis(
        quasi_identifiers=lattice.attributes,
        sensitive_attributes=tuple(roles.sensitive_attributes),
        rows=lattice.n_rows,
        target_k=target_k,
        target_l=None if l is None else float(l),
        c=None if c is None else float(c),
        suppression_limit=suppression_limit,
        risk_threshold=risk_threshold,
        exhaustive=exhaustive,
        whole_table=lattice.finding(0),
        all_quasi_identifiers=lattice.finding(full),
        class_size_histogram=size_histogram(lattice.class_sizes(full)),
        k_borders=found[k_model],
        model_borders=tuple(found[target] for target in targets),
        singling_out=singling_out,
        quasi_identifier_ranking=rank_quasi_identifiers(lattice.attributes, singling_out.negative),
        subsets=tuple(lattice.findings[mask] for mask in sorted(lattice.findings, key=lattice_order) if mask),
        subsets_measured=len(lattice.findings),
        mode_reason=mode_reason,
        special_uniques=special,
        direct_identifiers=_flagged(frame) if direct_identifiers else (),
        population=population_section,
    )


def _flagged(frame: pd.DataFrame) -> tuple[dict[str, Any], ...]:
    """Every column that looks like a direct identifier, as findings (category, counts; no value)."""
    return tuple(finding.to_dict() for finding in detect_identifiers(frame))


def find_borders(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    target: PrivacyModel,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    weights: Hashable | None = None,
) -> Borders:
    """Only the borders of one model, level-wise (the cheapest question; any d).

    Args:
        frame: the table.
        quasi_identifiers: the candidate quasi-identifiers.
        target: any privacy model monotone under generalization, e.g. ``KAnonymity(5)``
            or ``EntropyLDiversity("disease", 2)``; it decides on each subset's classes.
        max_evaluations: refuse to measure more subsets than this.
        weights: the column of record counts when ``frame`` is a weighted snapshot (see :func:`diagnose`).

    Example:
        >>> df = pd.DataFrame({"age": [30, 30, 40, 40], "sex": ["F", "M", "F", "M"]})
        >>> borders = find_borders(df, quasi_identifiers=["age", "sex"], target=KAnonymity(2))
        >>> borders.positive, borders.negative
        ((('age',), ('sex',)), (('age', 'sex'),))
    """
    model = check_border_model(target)
    sensitive = model.sensitive_attribute
    roles = AttributeRoles(
        quasi_identifiers=quasi_identifiers, sensitive_attributes=[] if sensitive is None else [sensitive]
    )
    table, counts = _validated_table(frame, roles, weights)
    validate_on_units(table, len(table) if counts is None else int(counts.sum()), [model])
    lattice = SubsetLattice(table, roles.quasi_identifiers, k=model.minimum_class_size, models=[model], weights=counts)
    max_evaluations = check_integer(max_evaluations, name="max_evaluations")
    return levelwise_borders(lattice, [model], max_evaluations=max_evaluations)[0]
