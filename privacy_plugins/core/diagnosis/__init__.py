"""The privacy diagnosis centre: risk over every subset of the candidate quasi-identifiers.

:func:`diagnose` is the first thing to run on a raw table: k and l of each
subset of the candidates (all of them when there are few), the positive and
negative borders of k-anonymity and l-diversity found level-wise, the
suppression each subset needs, the attribute sets that single people out, and
the special uniques (SUDA2: minimal sample uniques and scores per record).
A weighted snapshot (``weights=`` its count column, e.g. a database's
``GROUP BY``) gets the same diagnosis as the records it stands for.
The HTML report is rendered by :func:`privacy_plugins.report.render`, outside
the core; nothing here imports it. Borders are computed for the core's own
privacy models (:mod:`privacy_plugins.core.models`).
"""

from privacy_plugins.core.diagnosis.budget import DEFAULT_MAX_COST, DEFAULT_TIME_BUDGET, DiagnosisBudget
from privacy_plugins.core.diagnosis.diagnose import DEFAULT_K, DEFAULT_MAX_EXHAUSTIVE, diagnose, find_borders
from privacy_plugins.core.diagnosis.findings import Borders, QuasiIdentifierScore, SubsetFinding
from privacy_plugins.core.diagnosis.result import PrivacyDiagnosis
from privacy_plugins.core.diagnosis.search import DEFAULT_MAX_EVALUATIONS
from privacy_plugins.core.diagnosis.special_uniques import (
    DEFAULT_DIS_FRACTION,
    DEFAULT_MSU_MAX_SIZE,
    DEFAULT_MSU_MAX_SUBSETS,
    SpecialUniques,
    find_msus,
)

__all__ = [
    "DEFAULT_DIS_FRACTION",
    "DEFAULT_K",
    "DEFAULT_MAX_COST",
    "DEFAULT_MAX_EVALUATIONS",
    "DEFAULT_MAX_EXHAUSTIVE",
    "DEFAULT_MSU_MAX_SIZE",
    "DEFAULT_MSU_MAX_SUBSETS",
    "DEFAULT_TIME_BUDGET",
    "Borders",
    "DiagnosisBudget",
    "PrivacyDiagnosis",
    "QuasiIdentifierScore",
    "SpecialUniques",
    "SubsetFinding",
    "diagnose",
    "find_borders",
    "find_msus",
]
