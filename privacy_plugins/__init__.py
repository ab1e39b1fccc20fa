"""privacy_plugins: diagnose, anonymize and gate tables about people.

The top level re-exports the framework-free core only; the GX, Airflow and
Dagster adapters live in ``privacy_plugins.integrations`` and are imported
explicitly (each needs its extra).
"""

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

__all__ = [
    "AttributeRoles",
    "ClassViolations",
    "EquivalenceClasses",
    "MeasureReport",
    "PrivacyDiagnosis",
    "SensitiveReport",
    "__version__",
    "diagnose",
    "generate_census",
    "k_anonymity",
    "l_diversity",
    "measure",
    "read_table",
    "t_closeness",
]
