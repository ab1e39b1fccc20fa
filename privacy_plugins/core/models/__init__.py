"""Privacy models ("is it acceptable at X?"), one per file, and a name → model registry.

``from_config("k_anonymity", k=5)`` builds a model from primitives, the form
GX suites, Airflow templates and Dagster config all share.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from privacy_plugins.core.models.base import ModelResult, PrivacyModel, bind_hierarchies, validate_on_units
from privacy_plugins.core.models.k_anonymity import KAnonymity
from privacy_plugins.core.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    RecursiveCLDiversity,
)
from privacy_plugins.core.models.personalized import PersonalizedLeakage, resolve_bounds
from privacy_plugins.core.models.requirements import L_VARIANTS, LVariant, l_diversity_model, requirement_models
from privacy_plugins.core.models.sensitive_scope import SensitiveValueScope
from privacy_plugins.core.models.t_closeness import T_DISTANCES, TCloseness, TDistance, resolve_t_distance
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "L_VARIANTS",
    "MODEL_REGISTRY",
    "T_DISTANCES",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "FrequencyLDiversity",
    "KAnonymity",
    "LVariant",
    "ModelResult",
    "PersonalizedLeakage",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SensitiveValueScope",
    "TCloseness",
    "TDistance",
    "bind_hierarchies",
    "from_config",
    "l_diversity_model",
    "requirement_models",
    "resolve_bounds",
    "resolve_t_distance",
    "validate_on_units",
]

MODEL_REGISTRY: dict[str, Callable[..., PrivacyModel]] = {
    model.config_name: model
    for model in (
        KAnonymity,
        DistinctLDiversity,
        FrequencyLDiversity,
        EntropyLDiversity,
        RecursiveCLDiversity,
        TCloseness,
        PersonalizedLeakage,
    )
}


def from_config(name: str, **params: Any) -> PrivacyModel:
    """Build a model from its registry name and primitive parameters.

    Example:
        >>> str(from_config("k_anonymity", k=5))
        '5-anonymity'
        >>> str(from_config("distinct_l_diversity", sensitive_attribute="disease", l=3))
        "distinct-3-diversity for 'disease'"
    """
    factory = MODEL_REGISTRY.get(name)
    if factory is None:
        close = difflib.get_close_matches(name, MODEL_REGISTRY, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(f"unknown privacy model {name!r}{hint} Known models: {sorted(MODEL_REGISTRY)}")
    try:
        return factory(**params)
    except TypeError as exc:
        raise ConfigurationError(f"bad parameters for {name!r}: {exc}") from exc
