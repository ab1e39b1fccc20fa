"""The algorithm core: pure Python + numpy/pandas, no framework imports."""

from privacy_plugins.core.composition import IntersectionReport, intersection_attack
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.diagnosis import PrivacyDiagnosis, diagnose
from privacy_plugins.core.io import read_table
from privacy_plugins.core.measure import MeasureReport, SensitiveReport, k_anonymity, l_diversity, measure, t_closeness
from privacy_plugins.core.partition import EquivalenceClasses, SensitiveCounts
from privacy_plugins.core.results import ClassViolations
from privacy_plugins.core.roles import AttributeRoles

__all__ = [
    "AttributeRoles",
    "ClassViolations",
    "EquivalenceClasses",
    "IntersectionReport",
    "MeasureReport",
    "PrivacyDiagnosis",
    "SensitiveCounts",
    "SensitiveReport",
    "diagnose",
    "generate_census",
    "intersection_attack",
    "k_anonymity",
    "l_diversity",
    "measure",
    "read_table",
    "t_closeness",
]
