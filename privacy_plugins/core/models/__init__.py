"""Privacy models ("is it acceptable at X?"), one per file, and a name → model registry.

``from_config("k_anonymity", k=5)`` builds a model from primitives, and
``models_from_entries([{"k_anonymity": {"k": 5}}])`` a requirement list: the forms
release specs, ``--requirements-file``, GX suites, Airflow templates and Dagster
config all share (:mod:`~privacy_plugins.core.models.registry`). A model defined
elsewhere joins with :func:`register_model` or is named ``module:Class``.
"""

from __future__ import annotations

from privacy_plugins.core.models.attack_risk import AttackRisk
from privacy_plugins.core.models.average_risk import AverageReidentificationRisk
from privacy_plugins.core.models.base import ModelResult, PrivacyModel, bind_hierarchies, validate_on_units
from privacy_plugins.core.models.delta_presence import DeltaPresence
from privacy_plugins.core.models.history_diversity import HistoryDiversity
from privacy_plugins.core.models.k_anonymity import KAnonymity
from privacy_plugins.core.models.k_map import KMap
from privacy_plugins.core.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    RecursiveCLDiversity,
)
from privacy_plugins.core.models.personalized import PersonalizedLeakage, resolve_bounds
from privacy_plugins.core.models.population_uniqueness import PopulationUniqueness
from privacy_plugins.core.models.registry import (
    EVERY_MODEL_KIND,
    MODEL_REGISTRY,
    check_name,
    check_unique_names,
    from_config,
    model_from_entry,
    models_from_entries,
    register_model,
)
from privacy_plugins.core.models.requirements import (
    L_VARIANTS,
    LVariant,
    check_model_roles,
    l_diversity_model,
    requirement_models,
)
from privacy_plugins.core.models.sensitive_scope import SensitiveValueScope
from privacy_plugins.core.models.t_closeness import T_DISTANCES, TCloseness, TDistance, resolve_t_distance

__all__ = [
    "EVERY_MODEL_KIND",
    "L_VARIANTS",
    "MODEL_REGISTRY",
    "T_DISTANCES",
    "AttackRisk",
    "AverageReidentificationRisk",
    "DeltaPresence",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "FrequencyLDiversity",
    "HistoryDiversity",
    "KAnonymity",
    "KMap",
    "LVariant",
    "ModelResult",
    "PersonalizedLeakage",
    "PopulationUniqueness",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SensitiveValueScope",
    "TCloseness",
    "TDistance",
    "bind_hierarchies",
    "check_model_roles",
    "check_name",
    "check_unique_names",
    "from_config",
    "l_diversity_model",
    "model_from_entry",
    "models_from_entries",
    "register_model",
    "requirement_models",
    "resolve_bounds",
    "resolve_t_distance",
    "validate_on_units",
]
