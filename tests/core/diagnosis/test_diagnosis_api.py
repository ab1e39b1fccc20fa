"""The thesis's small examples, the JSON contract, and bad input."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy_plugins.core.diagnosis import diagnose, find_borders
from privacy_plugins.core.diagnosis.search import candidates_above
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, PersonalizedLeakage, l_diversity_model
from privacy_plugins.errors import ConfigurationError, EmptyTableError, RoleConflictError, UnknownColumnError

QIS = ["Age", "Gender", "Zip"]


@pytest.fixture
def table_1_2() -> pd.DataFrame:
    """Mirakabad thesis, Table 1.2 (de-identified patient records)."""
    return pd.DataFrame(
        {
            "Age": [21, 22, 23, 24],
            "Gender": ["Female", "Male", "Male", "Male"],
            "Zip": ["17651", "17652", "17661", "17662"],
            "Disease": ["Cancer", "Flu", "HIV", "HIV"],
        }
    )


def test_table_1_2_every_subset_with_zip_has_k_1(table_1_2: pd.DataFrame) -> None:
    diagnosis = diagnose(table_1_2, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=2, l=2)
    with_zip = [f for f in diagnosis.subsets if "Zip" in f.attributes]
    assert len(with_zip) == 4
    assert all(f.k == 1 and f.sample_uniques >= 1 for f in with_zip)
    assert diagnosis.for_subset(["Zip"]).sample_uniques == 4
    assert diagnosis.for_subset(["Gender"]).k == 1  # Alice is the only woman
    assert diagnosis.whole_table.k == 4
    # Every single attribute singles someone out: the minimal sets are the singletons.
    assert diagnosis.singling_out.negative == (("Age",), ("Gender",), ("Zip",))
    assert diagnosis.k_borders.positive == ((),)
    assert [s.smallest_set for s in diagnosis.quasi_identifier_ranking] == [1, 1, 1]
    # Level-wise: the empty set, the full set, then three singletons; nothing above them.
    assert (diagnosis.subsets_evaluated, diagnosis.subsets_total) == (5, 8)
    assert diagnosis.k_borders.evaluated_per_level == (1, 3, 0, 1)
    assert diagnosis.for_subset(["Gender"]).distinct_l == 1


def test_table_1_4_is_2_anonymous_but_not_2_diverse() -> None:
    """Table 1.4: the last class is all HIV (homogeneity)."""
    table = pd.DataFrame(
        {
            "Age": ["[21-22]", "[21-22]", "[23-24]", "[23-24]"],
            "Gender": ["*", "*", "Male", "Male"],
            "Zip": ["1765*", "1765*", "1766*", "1766*"],
            "Disease": ["Cancer", "Flu", "HIV", "HIV"],
        }
    )
    diagnosis = diagnose(table, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=2, l=2)
    assert diagnosis.k_borders.positive == (tuple(QIS),)
    assert diagnosis.k_borders.negative == ()
    assert diagnosis.k_borders.subsets_evaluated == 2  # the full set satisfies: nothing else to look at
    (distinct,) = diagnosis.model_borders
    assert distinct.negative == (("Age",), ("Gender",), ("Zip",))
    assert distinct.positive == ((),)


def test_table_1_5_is_2_diverse() -> None:
    table = pd.DataFrame(
        {
            "Age": ["[21-23]", "[21-23]", "[22-24]", "[22-24]"],
            "Gender": ["*", "*", "Male", "Male"],
            "Zip": ["176**"] * 4,
            "Disease": ["Cancer", "HIV", "Flu", "HIV"],
        }
    )
    models = [l_diversity_model(variant, 2, "Disease") for variant in ("distinct", "entropy")]
    diagnosis = diagnose(table, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=2, models=models)
    assert [b.positive for b in diagnosis.model_borders] == [(tuple(QIS),), (tuple(QIS),)]
    assert diagnosis.all_quasi_identifiers.distinct_l == 2


def test_whole_table_violating_puts_the_empty_set_in_bd_minus(table_1_2: pd.DataFrame) -> None:
    diagnosis = diagnose(table_1_2, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=1, l=4)
    (distinct,) = diagnosis.model_borders
    assert distinct.negative == ((),)
    assert distinct.positive == ()
    assert distinct.subsets_evaluated == 1
    assert not distinct.satisfied_by([])
    # k = 1 holds everywhere: the full set alone decides it.
    assert diagnosis.k_borders.positive == (tuple(QIS),)
    assert diagnosis.k_borders.subsets_evaluated == 2


def test_json_contract_round_trips(table_1_2: pd.DataFrame) -> None:
    models = [l_diversity_model(variant, 2, "Disease") for variant in ("distinct", "frequency", "entropy")]
    diagnosis = diagnose(
        table_1_2,
        quasi_identifiers=QIS,
        sensitive_attributes=["Disease"],
        models=models,
        k=2,
        l=2,
        l_variant="recursive",
        c=2,
        suppression_limit=0.5,
    )
    data = json.loads(json.dumps(diagnosis.to_dict()))
    for key in ("subsets_evaluated", "subsets_total", "positive_border", "negative_border", "k_by_subset"):
        assert key in data
    assert data["sample_uniques"] == 4
    assert data["positive_border"] == [[]]
    assert data["negative_border"] == [["Age"], ["Gender"], ["Zip"]]
    assert len(data["k_by_subset"]) == 7
    first = data["k_by_subset"][0]
    assert first["attributes"] == ["Age"] and first["k"] == 1 and first["suppression_needed"] == 4
    borders = {b["model"]: b for b in data["model_borders"]}
    assert set(borders) == {f"{v} l-diversity" for v in ("distinct", "frequency", "entropy", "recursive")}
    assert {b["sensitive_attribute"] for b in data["model_borders"]} == {"Disease"}
    assert borders["recursive l-diversity"]["negative_border"] == [["Age"], ["Gender"], ["Zip"]]
    # recursive c* is infinite (classes with one value): null in strict JSON.
    assert data["all_quasi_identifiers"]["recursive_c"] is None
    assert data["singling_out"]["minimal_sets"] == [["Age"], ["Gender"], ["Zip"]]


def test_recursive_c_is_measured_only_when_diagnosed(table_1_2: pd.DataFrame) -> None:
    plain = diagnose(table_1_2, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=2, l=2)
    assert plain.for_subset(["Gender"]).recursive_c is None
    recursive = diagnose(
        table_1_2, quasi_identifiers=QIS, sensitive_attributes=["Disease"], k=2, l=2, l_variant="recursive", c=3
    )
    assert recursive.whole_table.recursive_c == 2 / 2  # counts HIV 2, Cancer 1, Flu 1: r1 / (r2 + r3)
    assert recursive.for_subset(["Gender"]).recursive_c == float("inf")  # Alice's class has one value


def test_levelwise_mode_has_no_k_by_subset(table_1_2: pd.DataFrame) -> None:
    diagnosis = diagnose(table_1_2, quasi_identifiers=QIS, k=2, max_exhaustive=2)
    assert not diagnosis.exhaustive
    assert diagnosis.to_dict()["k_by_subset"] is None
    assert {f.attributes for f in diagnosis.subsets} == {("Age",), ("Gender",), ("Zip",), tuple(QIS)}
    with pytest.raises(KeyError, match="not measured"):
        diagnosis.for_subset(["Age", "Zip"])


def test_no_raw_values_in_json(table_1_2: pd.DataFrame) -> None:
    text = json.dumps(diagnose(table_1_2, quasi_identifiers=QIS, sensitive_attributes=["Disease"], l=2, k=2).to_dict())
    for value in ("17651", "Female", "Cancer", "HIV", "Flu"):
        assert value not in text


def test_default_k_is_5_or_the_table_size(table_1_2: pd.DataFrame) -> None:
    assert diagnose(table_1_2, quasi_identifiers=QIS).target_k == 4
    assert diagnose(pd.concat([table_1_2] * 2), quasi_identifiers=QIS).target_k == 5


def test_missing_values_are_one_value_of_their_own() -> None:
    frame = pd.DataFrame({"a": [None, np.nan, "x", "x"], "b": [1.0, np.nan, 1.0, np.nan]})
    diagnosis = diagnose(frame, quasi_identifiers=["a", "b"], k=2)
    assert diagnosis.for_subset(["a"]).k == 2
    assert diagnosis.for_subset(["a", "b"]).classes == 4
    all_missing = diagnose(pd.DataFrame({"a": [None] * 3}), quasi_identifiers=["a"], k=3)
    assert all_missing.k_borders.positive == (("a",),)


@given(frontier=st.sets(st.integers(1, 2**6 - 1), max_size=20).map(lambda s: {m for m in s if m.bit_count() == 2}))
def test_candidates_are_exactly_the_sets_whose_subsets_are_all_in_the_frontier(frontier: set[int]) -> None:
    expected = sorted(
        sum(1 << i for i in combo)
        for combo in combinations(range(6), 3)
        if all(sum(1 << i for i in combo if i != j) in frontier for j in combo)
    )
    assert candidates_above(frontier, 6) == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, ConfigurationError, "k must be an integer >= 1"),
        ({"k": "5"}, TypeError, "k must be an integer"),
        ({"k": 5}, ConfigurationError, "larger than the table"),
        ({"l": 2}, ConfigurationError, "sensitive attribute"),
        ({"sensitive_attributes": ["Disease"], "l": 0.5}, ConfigurationError, "l must be >= 1"),
        ({"sensitive_attributes": ["Disease"], "l": 2, "l_variant": "tsallis"}, ConfigurationError, "l_variant"),
        ({"sensitive_attributes": "Disease", "l": 2}, TypeError, "string"),
        ({"sensitive_attributes": ["Disease"], "l": 2, "l_variant": "recursive"}, ConfigurationError, "needs c"),
        (
            {"sensitive_attributes": ["Disease"], "l": 2.5, "l_variant": "recursive", "c": 2},
            ConfigurationError,
            "integer l",
        ),
        ({"sensitive_attributes": ["Disease"], "l": 2, "c": 2}, ConfigurationError, "c is only used"),
        ({"c": 2}, ConfigurationError, "needs l"),
        ({"models": [KAnonymity(2)], "k": 2}, ConfigurationError, "one k-anonymity"),
        ({"models": [DistinctLDiversity("Disease", 2)]}, ConfigurationError, "not among sensitive_attributes"),
        (
            {"sensitive_attributes": ["Disease"], "models": [PersonalizedLeakage("Disease", bound_column="Age")]},
            ConfigurationError,
            "not monotone",
        ),
        ({"suppression_limit": 1.5}, ConfigurationError, "suppression_limit"),
        ({"risk_threshold": -0.1}, ConfigurationError, "risk_threshold"),
        ({"max_exhaustive": 21}, ConfigurationError, "max_exhaustive"),
        ({"max_exhaustive": -1}, ConfigurationError, "max_exhaustive"),
        ({"max_exhaustive": 0, "max_evaluations": 3}, ConfigurationError, "max_evaluations=3"),
        ({"sensitive_attributes": ["Zip"]}, RoleConflictError, "two roles"),
        ({"sensitive_attributes": ["Salary"]}, UnknownColumnError, "Salary"),
    ],
)
def test_bad_parameters_name_the_parameter(
    table_1_2: pd.DataFrame, kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        diagnose(table_1_2, quasi_identifiers=QIS, **{"k": 2, **kwargs})  # type: ignore[arg-type]


def test_bad_tables(table_1_2: pd.DataFrame) -> None:
    with pytest.raises(EmptyTableError):
        diagnose(table_1_2.iloc[:0], quasi_identifiers=QIS)
    with pytest.raises(UnknownColumnError, match="Height"):
        diagnose(table_1_2, quasi_identifiers=["Age", "Height"], k=2)
    with pytest.raises(TypeError, match="did you mean"):
        diagnose(table_1_2, quasi_identifiers="Age", k=2)
    with pytest.raises(RoleConflictError):
        diagnose(table_1_2, quasi_identifiers=[], k=2)
    with pytest.raises(ConfigurationError, match="larger than the table"):
        find_borders(table_1_2, quasi_identifiers=QIS, target=KAnonymity(9))
    with pytest.raises(UnknownColumnError, match="Salary"):
        find_borders(table_1_2, quasi_identifiers=QIS, target=DistinctLDiversity("Salary", 2))
