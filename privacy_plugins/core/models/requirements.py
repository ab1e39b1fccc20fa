"""Keyword requirements (``k``, ``l``, ``l_variant``, ``c``, ``t``, ``t_distance``, ``bound``) as privacy models.

Every surface states a requirement with the same words — Python keywords, CLI
flags, a release spec's ``requirements`` and GX kwargs — and this is the one
place those shorthands become :class:`~privacy_plugins.core.models.PrivacyModel`
instances. ``l``, ``t`` and the leakage bound apply to every sensitive attribute.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.k_anonymity import KAnonymity
from privacy_plugins.core.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    RecursiveCLDiversity,
)
from privacy_plugins.core.models.personalized import PersonalizedLeakage
from privacy_plugins.core.models.registry import check_unique_names
from privacy_plugins.core.models.t_closeness import TCloseness, TDistance
from privacy_plugins.core.parameters import check_positive
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError

__all__ = ["L_VARIANTS", "LVariant", "check_model_roles", "l_diversity_model", "requirement_models"]

LVariant = Literal["distinct", "frequency", "entropy", "recursive"]
#: The l-diversity variants a requirement's ``l_variant`` may name.
L_VARIANTS: tuple[str, ...] = ("distinct", "frequency", "entropy", "recursive")
_L_MODELS = {"distinct": DistinctLDiversity, "frequency": FrequencyLDiversity, "entropy": EntropyLDiversity}


def l_diversity_model(
    l_variant: str, l: float, sensitive_attribute: Hashable, *, c: float | None = None
) -> PrivacyModel:
    """The l-diversity model of an ``l_variant`` name.

    Args:
        l_variant: ``"distinct"``, ``"frequency"``, ``"entropy"`` or ``"recursive"``.
        l: the target l, real ≥ 1 (an integer for ``"recursive"``).
        sensitive_attribute: the attribute whose values must be diverse.
        c: recursive (c,l) only: the table satisfies iff c > c*, c > 0.

    Example:
        >>> str(l_diversity_model("recursive", 2, "disease", c=3))
        "recursive (3,2)-diversity for 'disease'"
        >>> str(l_diversity_model("entropy", 2, "disease"))
        "entropy-2-diversity for 'disease'"
    """
    if l_variant not in L_VARIANTS:
        raise ConfigurationError(f"l_variant must be one of {list(L_VARIANTS)}, got {l_variant!r}")
    value = check_positive(l, name="l", minimum=1.0, inclusive=True)
    if l_variant != "recursive":
        if c is not None:
            raise ConfigurationError(f"c is only used by l_variant 'recursive', got l_variant {l_variant!r}")
        return _L_MODELS[l_variant](sensitive_attribute, value)
    if c is None:
        raise ConfigurationError("l_variant 'recursive' needs c (a real number > 0)")
    if not value.is_integer():
        raise ConfigurationError(f"recursive (c,l)-diversity needs an integer l, got {l!r}")
    return RecursiveCLDiversity(sensitive_attribute, check_positive(c, name="c"), int(value))


def requirement_models(
    *,
    sensitive_attributes: Sequence[Hashable] = (),
    k: int | None = None,
    l: float | None = None,
    l_variant: str = "distinct",
    c: float | None = None,
    t: float | None = None,
    t_distance: TDistance = "auto",
    bound: float | None = None,
    bound_column: Hashable | None = None,
    models: Sequence[PrivacyModel] = (),
) -> list[PrivacyModel]:
    """The privacy models that keyword requirements stand for, then ``models`` (the list form).

    The one expansion of the keyword shorthands: :func:`~privacy_plugins.core.measure.measure`'s
    keywords, the CLI flags and a release spec's ``k:``/``l:``/``t:`` keys all come here.

    Args:
        sensitive_attributes: ``l``, ``t`` and the bound apply to each of them.
        k: k-anonymity's k (integer ≥ 1).
        l: l-diversity's l (≥ 1), of the variant ``l_variant``.
        l_variant: ``"distinct"`` (default), ``"frequency"``, ``"entropy"`` or
            ``"recursive"`` (which needs ``c`` and an integer ``l``).
        c: recursive (c,l)-diversity's c > 0.
        t: t-closeness's t in [0, 1].
        t_distance: t-closeness's ground distance, ``"equal"``, ``"ordered"`` or
            ``"auto"`` (default: ordered for numeric columns, equal otherwise).
        bound: one personalized leakage bound in (0, 1] for every record (the default with bound_column).
        bound_column: a column holding each record's own bound.
        models: models stated as such (any :class:`PrivacyModel`, e.g. from
            :func:`~privacy_plugins.core.models.models_from_entries`), after the keyword ones.

    Raises:
        ConfigurationError: a parameter is outside its domain, ``l``/``t``/a
            bound is given without a sensitive attribute, or two models share a check name.

    Example:
        >>> [str(m) for m in requirement_models(sensitive_attributes=["disease"], k=5, l=2, t=0.3)]
        ['5-anonymity', "distinct-2-diversity for 'disease'", "0.3-closeness (auto distance) for 'disease'"]
    """
    if isinstance(sensitive_attributes, str):
        raise TypeError(
            f"sensitive_attributes must be a sequence of column names, got the string {sensitive_attributes!r}"
        )
    if l_variant not in L_VARIANTS:
        raise ConfigurationError(f"l_variant must be one of {list(L_VARIANTS)}, got {l_variant!r}")
    if c is not None and l is None:
        raise ConfigurationError("c (recursive (c,l)-diversity) needs l as well")
    wants_sensitive = l is not None or t is not None or bound is not None or bound_column is not None
    if wants_sensitive and not sensitive_attributes:
        raise ConfigurationError("l, t, bound and bound_column need at least one sensitive attribute")
    expanded: list[PrivacyModel] = [KAnonymity(k)] if k is not None else []
    for attribute in sensitive_attributes:
        if l is not None:
            expanded.append(l_diversity_model(l_variant, l, attribute, c=c))
        if t is not None:
            expanded.append(TCloseness(attribute, t, t_distance))
        if bound is not None or bound_column is not None:
            expanded.append(PersonalizedLeakage(attribute, bound=bound, bound_column=bound_column))
    expanded += models
    check_unique_names(expanded)
    return expanded


def check_model_roles(models: Sequence[PrivacyModel], roles: AttributeRoles) -> None:
    """Each model's sensitive attribute is a declared one; any other column it reads has no role.

    A bound column (or a custom model's column) that is also a quasi-identifier or a
    sensitive attribute would be measured as something it is not.
    """
    for model in models:
        attribute = model.sensitive_attribute
        if attribute is not None and attribute not in roles.sensitive_attributes:
            raise ConfigurationError(
                f"{model} protects {attribute!r}, which is not among the sensitive attributes "
                f"{list(roles.sensitive_attributes)}: add it there"
            )
        for column in model.columns:
            if column != attribute and column in roles.named_columns:
                raise ConfigurationError(f"{model} reads column {column!r}, which already has another role")
