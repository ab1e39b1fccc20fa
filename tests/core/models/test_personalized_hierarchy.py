"""PersonalizedLeakage over a generalized sensitive column (DCorrelate, 1/Nleaf; Song et al. Def. 6–8)."""

from __future__ import annotations

import pandas as pd
import pytest

from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import PersonalizedLeakage
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, HierarchyError

DISEASE = Hierarchy.from_rows(
    "disease",
    [
        ["gastric ulcer", "stomach disease", "*"],
        ["dyspepsia", "stomach disease", "*"],
        ["bronchitis", "respiratory infection", "*"],
        ["pneumonia", "respiratory infection", "*"],
        ["flu", "respiratory infection", "*"],
    ],
)
TABLE3 = pd.DataFrame(
    {
        "age": ["[5-10]"] * 3 + ["[11-20]"] * 2,
        "zip": ["[10001-20000]"] * 3 + ["[20001-25000]"] * 2,
        "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
    }
)


def _leak(table: pd.DataFrame, model: PersonalizedLeakage) -> list[float]:
    from privacy_plugins.core.metrics.leakage import leakage_per_record

    classes = EquivalenceClasses.from_frame(table, ["age", "zip"])
    return leakage_per_record(classes, classes.sensitive("disease"), model.sensitive_hierarchy).round(4).tolist()


def test_song_table3_fails_a_bound_of_one_half() -> None:
    model = PersonalizedLeakage("disease", bound=0.5, sensitive_hierarchy=DISEASE)
    classes = EquivalenceClasses.from_frame(TABLE3, ["age", "zip"])
    result = model.evaluate(classes)
    assert not result.passed and result.observed == 1.0
    assert _leak(TABLE3, model) == [0.3333] * 3 + [1.0] * 2


def test_generalizing_the_sensitive_value_lowers_the_leakage() -> None:
    # One pneumonia published as its parent (3 leaves): the other pneumonia leaks (1 + 1/3)/2,
    # the generalized one is measured at its worst leaf, pneumonia, the same (1 + 1/3)/2.
    table = TABLE3.assign(disease=[*TABLE3["disease"][:4], "respiratory infection"])
    model = PersonalizedLeakage("disease", bound=0.7, sensitive_hierarchy=DISEASE)
    assert _leak(table, model)[3:] == [0.6667, 0.6667]
    assert model.evaluate(EquivalenceClasses.from_frame(table, ["age", "zip"])).passed
    # Both at the root: 1/Nleaf(*) each, so (1/5 + 1/5)/2.
    root = TABLE3.assign(disease=[*TABLE3["disease"][:3], "*", "*"])
    assert _leak(root, model)[3:] == [0.2, 0.2]
    # Without the hierarchy the generalized labels would be counted as values of their own.
    plain = PersonalizedLeakage("disease", bound=0.5)
    assert plain.evaluate(EquivalenceClasses.from_frame(table, ["age", "zip"])).passed


def test_a_leaf_table_measures_as_without_hierarchy() -> None:
    with_h = PersonalizedLeakage("disease", bound=0.5, sensitive_hierarchy=DISEASE)
    assert _leak(TABLE3, with_h) == _leak(TABLE3, PersonalizedLeakage("disease", bound=0.5))


def test_values_outside_the_hierarchy_and_bad_bounds_are_named() -> None:
    model = PersonalizedLeakage("disease", bound=0.5, sensitive_hierarchy=DISEASE)
    cholera = TABLE3.assign(disease=["cholera", *TABLE3["disease"][1:]])
    with pytest.raises(HierarchyError, match=r"'disease' has 1 value.*\(values hidden"):
        model.validate_against(cholera)
    with values_shown(), pytest.raises(HierarchyError, match="'disease' has 1 value.*'cholera'"):
        model.validate_against(cholera)
    with pytest.raises(ConfigurationError, match="bound must be in"):
        PersonalizedLeakage("disease", bound=1.5)
    both = PersonalizedLeakage("disease", bound=0.5, bound_column="pleak")
    assert both.minimum_class_size == 1 and "default 0.5" in str(both)
    with pytest.raises(ConfigurationError, match="'pleak' has 2 bounds outside"):
        both.validate_against(TABLE3.assign(pleak=[0.5, 2.0, None, 0.0, 1.0]))


def test_with_hierarchies_binds_the_sensitive_hierarchy() -> None:
    model = PersonalizedLeakage("disease", bound=0.5)
    assert model.with_hierarchies({"disease": DISEASE}).sensitive_hierarchy is DISEASE
    assert model.with_hierarchies({}).sensitive_hierarchy is None
