"""privacy_plugins: diagnose, anonymize and gate tables about people.

The top level re-exports the framework-free core — :func:`anonymize`, :func:`diagnose`,
:func:`measure`, the privacy models and :func:`register_model` (for a model of your
own) — and the release flow's :class:`ReleaseSpec` and :func:`run_release` (imported
on first use, so ``import privacy_plugins`` stays light). The GX, Airflow and Dagster
adapters live in ``privacy_plugins.integrations`` and are imported explicitly (each
needs its extra).

Example:
    >>> import privacy_plugins as pp
    >>> table = pp.generate_census(200, seed=1)[["age", "income", "disease"]]
    >>> result = pp.anonymize(  # every column needs a role: QI, sensitive, identifier or insensitive
    ...     table, algorithm="mondrian", quasi_identifiers=["age", "income"], sensitive_attributes=["disease"],
    ...     models=[pp.KAnonymity(5)],
    ... )
    >>> pp.measure(result.table, quasi_identifiers=["age", "income"]).k >= 5
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from privacy_plugins._version import __version__
from privacy_plugins.core import (
    AttributeRoles,
    ClassViolations,
    EquivalenceClasses,
    MeasureReport,
    PrivacyDiagnosis,
    SensitiveReport,
    diagnose,
    generate_census,
    k_anonymity,
    l_diversity,
    measure,
    read_table,
    t_closeness,
)
from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    KAnonymity,
    PersonalizedLeakage,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
    register_model,
)

if TYPE_CHECKING:
    from privacy_plugins.release import ReleaseSpec, run_release

__all__ = [
    "AttributeRoles",
    "ClassViolations",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "EquivalenceClasses",
    "FrequencyLDiversity",
    "KAnonymity",
    "MeasureReport",
    "PersonalizedLeakage",
    "PrivacyDiagnosis",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "ReleaseSpec",
    "SensitiveReport",
    "TCloseness",
    "__version__",
    "anonymize",
    "diagnose",
    "generate_census",
    "k_anonymity",
    "l_diversity",
    "measure",
    "read_table",
    "register_model",
    "run_release",
    "t_closeness",
]

_RELEASE_NAMES = frozenset({"ReleaseSpec", "run_release"})


def __getattr__(name: str) -> Any:
    """The release flow's names, imported on first use (PEP 562)."""
    if name in _RELEASE_NAMES:
        from privacy_plugins import release

        return getattr(release, name)
    raise AttributeError(f"module 'privacy_plugins' has no attribute {name!r}")
