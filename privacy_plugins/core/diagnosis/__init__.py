"""The privacy diagnosis centre: risk over every subset of the candidate quasi-identifiers.

:func:`diagnose` is the first thing to run on a raw table: k and l of each
subset of the candidates (all of them when there are few), the positive and
negative borders of k-anonymity and l-diversity found level-wise, the
suppression each subset needs, and the attribute sets that single people out.
The HTML report (:meth:`PrivacyDiagnosis.to_html`) is rendered by
:mod:`privacy_plugins.report`, outside the core.
"""

from privacy_plugins.core.diagnosis.budget import DEFAULT_MAX_COST, DEFAULT_TIME_BUDGET, DiagnosisBudget
from privacy_plugins.core.diagnosis.criteria import (
    L_BORDER_VARIANTS,
    BorderTarget,
    KAnonymityTarget,
    LBorderVariant,
    LDiversityTarget,
)
from privacy_plugins.core.diagnosis.diagnose import DEFAULT_K, DEFAULT_MAX_EXHAUSTIVE, diagnose, find_borders
from privacy_plugins.core.diagnosis.findings import Borders, QuasiIdentifierScore, SubsetFinding
from privacy_plugins.core.diagnosis.result import PrivacyDiagnosis
from privacy_plugins.core.diagnosis.search import DEFAULT_MAX_EVALUATIONS

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MAX_COST",
    "DEFAULT_MAX_EVALUATIONS",
    "DEFAULT_MAX_EXHAUSTIVE",
    "DEFAULT_TIME_BUDGET",
    "L_BORDER_VARIANTS",
    "BorderTarget",
    "Borders",
    "DiagnosisBudget",
    "KAnonymityTarget",
    "LBorderVariant",
    "LDiversityTarget",
    "PrivacyDiagnosis",
    "QuasiIdentifierScore",
    "SubsetFinding",
    "diagnose",
    "find_borders",
]
