"""The model registry: name → model class, and the list form every surface states requirements in.

A requirement list is the same everywhere — a release spec's ``requirements:``, a
``--requirements-file`` of the CLI, a GX expectation, ``measure(models=...)`` —
one mapping per model, its name to its parameters::

    - k_anonymity: {k: 5}
    - distinct_l_diversity: {sensitive_attribute: disease, l: 2}
    - mypkg.models:MinClassShare: {share: 0.1}

A name is a registered ``config_name`` (the built-in models, and any model a
program registered with :func:`register_model`), or ``module:Class``: the module
is imported and the class (a :class:`PrivacyModel` subclass) is registered under
its ``config_name``, so a spec or a CLI run can use a model defined outside the
package without a line of glue. Its kind then works wherever a kind does (an
anonymizer that promises every kind accepts it) and its check is named by
:func:`check_name`.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from privacy_plugins.core.models.attack_risk import AttackRisk
from privacy_plugins.core.models.average_risk import AverageReidentificationRisk
from privacy_plugins.core.models.base import PrivacyModel
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
from privacy_plugins.core.models.personalized import PersonalizedLeakage
from privacy_plugins.core.models.population_uniqueness import PopulationUniqueness
from privacy_plugins.core.models.t_closeness import TCloseness
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "EVERY_MODEL_KIND",
    "MODEL_REGISTRY",
    "check_name",
    "check_unique_names",
    "from_config",
    "model_from_entry",
    "models_from_entries",
    "register_model",
]

#: Registry name (``PrivacyModel.config_name``) → model class.
MODEL_REGISTRY: dict[str, type[PrivacyModel]] = {
    model.config_name: model
    for model in (
        KAnonymity,
        DistinctLDiversity,
        FrequencyLDiversity,
        EntropyLDiversity,
        RecursiveCLDiversity,
        TCloseness,
        PersonalizedLeakage,
        AverageReidentificationRisk,  # issue 30: population risk
        PopulationUniqueness,
        KMap,
        DeltaPresence,
        AttackRisk,  # issue 31: judged on tables (evaluate_tables), never pruned with
        HistoryDiversity,  # issue 26: the release history
    )
}


class _EveryKind(frozenset[str]):
    """Every model kind, registered now or later: what an anonymizer promising all of them promises.

    It holds (and iterates, and compares as) the built-in kinds; membership is true for any name,
    so a model registered later is promised too.
    """

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str)

    def __repr__(self) -> str:
        return "EVERY_MODEL_KIND"


#: The kinds an anonymizer promises by default: every model, custom ones included.
#: (Iterated: the kinds a spec can state; a model bound by the release layer, such as the history's, is not.)
EVERY_MODEL_KIND: frozenset[str] = _EveryKind(name for name, model in MODEL_REGISTRY.items() if model.stated_in_specs)


def register_model(model: type[PrivacyModel], *, replace: bool = False) -> type[PrivacyModel]:
    """Make ``model`` known by its ``config_name`` to YAML, the CLI, GX and the release (usable as a decorator).

    Raises:
        ConfigurationError: not a PrivacyModel subclass, no ``config_name``, or the name is taken
            by another class (pass ``replace=True`` to replace it on purpose).

    Example:
        >>> register_model(KAnonymity) is KAnonymity
        True
    """
    if not (inspect.isclass(model) and issubclass(model, PrivacyModel)):
        raise ConfigurationError(f"register_model needs a PrivacyModel subclass, got {model!r}")
    name = model.config_name
    if not name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ConfigurationError(
            f"{model.__name__} needs a config_name made of letters, digits and '_' to be registered, got {name!r}"
        )
    known = MODEL_REGISTRY.get(name)
    if known is not None and known is not model and not replace:
        raise ConfigurationError(f"privacy model name {name!r} is taken by {known.__module__}.{known.__qualname__}")
    MODEL_REGISTRY[name] = model
    return model


def _imported(path: str) -> type[PrivacyModel]:
    """The class at ``module:Class``, registered under its ``config_name``."""
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any failure of the user's module is one line naming it
        reason = str(exc).splitlines()[0] if str(exc) else ""
        raise ConfigurationError(
            f"privacy model {path!r}: cannot import module {module_name!r} ({type(exc).__name__}: {reason})"
        ) from None
    found = getattr(module, attribute, None)
    if found is None:
        raise ConfigurationError(f"privacy model {path!r}: module {module_name!r} has no {attribute!r}")
    return register_model(found)


def _model_class(name: str) -> type[PrivacyModel]:
    if ":" in name:
        return _imported(name)
    found = MODEL_REGISTRY.get(name)
    if found is None:
        close = difflib.get_close_matches(name, MODEL_REGISTRY, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(
            f"unknown privacy model {name!r}{hint} Known models: {sorted(MODEL_REGISTRY)} "
            "(or module:Class for a model defined elsewhere)"
        )
    return found


def _parameters(model: type[PrivacyModel]) -> tuple[list[str], list[str]]:
    """All keyword parameters of the class, and the required ones."""
    parameters = [
        p
        for p in inspect.signature(model).parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    return [p.name for p in parameters], [p.name for p in parameters if p.default is inspect.Parameter.empty]


def from_config(name: str, **params: Any) -> PrivacyModel:
    """Build a model from its registry name (or ``module:Class``) and primitive parameters.

    A list parameter (YAML, JSON) is passed as a tuple: a model is a frozen, hashable value.

    Raises:
        ConfigurationError: unknown name (with a close match), an unknown or missing
            parameter, or a value the model refuses — each naming the model.

    Example:
        >>> str(from_config("k_anonymity", k=5))
        '5-anonymity'
        >>> str(from_config("distinct_l_diversity", sensitive_attribute="disease", l=3))
        "distinct-3-diversity for 'disease'"
    """
    model = _model_class(name)
    known, required = _parameters(model)
    for key in params:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigurationError(f"{name}: unknown parameter {key!r}{hint} Parameters: {known}")
    missing = [key for key in required if key not in params]
    if missing:
        raise ConfigurationError(f"{name}: missing parameter(s) {missing} Parameters: {known}")
    try:
        return model(**{key: tuple(value) if isinstance(value, list) else value for key, value in params.items()})
    except (ConfigurationError, TypeError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigurationError(f"{name}: {message}") from None


def model_from_entry(entry: object, *, setting: str) -> PrivacyModel:
    """One list entry, ``{name: {parameter: value, ...}}``, as a model; errors start with ``setting``."""
    if isinstance(entry, PrivacyModel):
        return entry
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise ConfigurationError(
            f"{setting} must be one mapping from a model name to its parameters, e.g. "
            f"{{k_anonymity: {{k: 5}}}}; got {entry!r}"
        )
    ((name, params),) = entry.items()
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigurationError(f"{setting} ({name}): the parameters must be a mapping, got {params!r}")
    try:
        return from_config(str(name), **{str(k): v for k, v in params.items()})
    except ConfigurationError as exc:
        raise ConfigurationError(f"{setting}: {exc}") from None


def models_from_entries(entries: object, *, setting: str = "requirements") -> list[PrivacyModel]:
    """A requirement list as models (each entry's error names ``setting[i]``); check names must differ.

    Example:
        >>> [str(m) for m in models_from_entries([{"k_anonymity": {"k": 5}}])]
        ['5-anonymity']
    """
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise ConfigurationError(f"{setting} must be a list of models, e.g. [{{k_anonymity: {{k: 5}}}}]")
    models = [model_from_entry(entry, setting=f"{setting}[{i}]") for i, entry in enumerate(entries)]
    check_unique_names(models, setting=setting)
    return models


def check_name(model: PrivacyModel) -> str:
    """The stable name of a model's check and result: registry name, plus the sensitive attribute if any.

    Example:
        >>> check_name(DistinctLDiversity("disease", 2))
        'distinct_l_diversity_disease'
    """
    name = model.config_name or type(model).__name__.lower()
    attribute = model.sensitive_attribute
    return name if attribute is None else f"{name}_{re.sub(r'[^A-Za-z0-9_]', '_', str(attribute))}"


def check_unique_names(models: Iterable[PrivacyModel], *, setting: str = "requirements") -> None:
    """Refuse two models with one check name (their results would overwrite each other)."""
    seen: dict[str, PrivacyModel] = {}
    for model in models:
        name = check_name(model)
        if name in seen:
            raise ConfigurationError(
                f"{setting}: {seen[name]} and {model} share the check name {name!r}; state each model once"
            )
        seen[name] = model
