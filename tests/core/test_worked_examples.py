"""The worked examples of DESIGN.md, taken from the source papers, give exactly the stated values."""

from __future__ import annotations

import math
from itertools import combinations

import pandas as pd
import pytest

import privacy_plugins as pp


@pytest.fixture
def song_table3() -> pd.DataFrame:
    """Song et al. 2015, Table 3: the 2-anonymous version of Table 1."""
    return pd.DataFrame(
        {
            "age": ["[5-10]"] * 3 + ["[11-20]"] * 2,
            "zipcode": ["[10001-20000]"] * 3 + ["[20001-25000]"] * 2,
            "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
        }
    )


def test_song_table1_raw_is_1_anonymous() -> None:
    table1 = pd.DataFrame(
        {
            "age": [5, 9, 8, 12, 19],
            "zipcode": [12000, 14000, 19000, 22000, 24000],
            "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
        }
    )
    report = pp.measure(table1, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"])
    assert (report.k, report.classes, report.sample_uniques) == (1, 5, 5)


def test_song_table3_k_l_and_leakage(song_table3: pd.DataFrame) -> None:
    report = pp.measure(song_table3, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"], bound=0.5)
    disease = report.for_attribute("disease")
    assert report.k == 2
    assert report.classes == 2
    assert disease.distinct_l == 1
    leakage = disease.leakage
    assert leakage is not None
    # Rows 4 and 5 (both pneumonia) leak with probability 1 > 0.5; rows 1-3 leak 1/3.
    assert leakage.max_leakage == 1.0
    assert leakage.violations == 2
    assert leakage.infeasible == 0
    assert leakage.classes.classes == 1
    assert leakage.classes.size_histogram == {2: 1}
    assert leakage.mean_leakage == pytest.approx((3 * (1 / 3) + 2 * 1.0) / 5)


def test_song_table3_per_record_leakage(song_table3: pd.DataFrame) -> None:
    classes = pp.EquivalenceClasses.from_frame(song_table3, ["age", "zipcode"])
    counts = classes.sensitive("disease")
    from privacy_plugins.core.metrics.leakage import leakage_per_record

    assert leakage_per_record(classes, counts).tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0, 1.0])


def test_song_theorem1_bound_below_one_over_b_is_infeasible(song_table3: pd.DataFrame) -> None:
    # b = 3 for rows 1-3 and 2 for rows 4-5: a bound of 0.4 < 1/2 is infeasible for rows 4-5 only.
    leakage = (
        pp.measure(song_table3, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"], bound=0.4)
        .for_attribute("disease")
        .leakage
    )
    assert leakage is not None
    assert leakage.infeasible == 2
    assert leakage.violations == 2
    # 0.3 < 1/3: now every record is infeasible.
    leakage = (
        pp.measure(song_table3, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"], bound=0.3)
        .for_attribute("disease")
        .leakage
    )
    assert leakage is not None
    assert (leakage.infeasible, leakage.violations) == (5, 5)


def test_song_bound_column_per_record(song_table3: pd.DataFrame) -> None:
    frame = song_table3.assign(pleak=[0.5, 0.3, 0.5, 1.0, 0.9])
    leakage = (
        pp.measure(frame, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"], bound_column="pleak")
        .for_attribute("disease")
        .leakage
    )
    assert leakage is not None
    # row 2 wants 0.3 < 1/3 (infeasible), row 5 wants 0.9 < 1.
    assert (leakage.violations, leakage.infeasible) == (2, 1)


def test_uniform_bound_one_over_l_is_frequency_l_diversity(song_table3: pd.DataFrame) -> None:
    report = pp.measure(
        song_table3, quasi_identifiers=["age", "zipcode"], sensitive_attributes=["disease"], bound=1 / 1
    )
    disease = report.for_attribute("disease")
    assert disease.frequency_l == 1.0  # the pneumonia class: 2 / 2
    assert disease.leakage is not None and disease.leakage.violations == 0


@pytest.fixture
def thesis_table12() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [21, 22, 23, 24],
            "gender": ["Female", "Male", "Male", "Male"],
            "zip": ["17651", "17652", "17661", "17662"],
            "disease": ["Cancer", "Flu", "HIV", "HIV"],
        }
    )


def test_thesis_table12_every_subset_with_zip_is_unique(thesis_table12: pd.DataFrame) -> None:
    qis = ["age", "gender", "zip"]
    for size in range(1, 4):
        for subset in combinations(qis, size):
            report = pp.measure(thesis_table12, quasi_identifiers=list(subset))
            if "zip" in subset:
                assert (report.k, report.sample_uniques) == (1, 4), subset
    # Gender alone singles out only Alice (the one Female).
    gender = pp.measure(thesis_table12, quasi_identifiers=["gender"])
    assert (gender.k, gender.sample_uniques, gender.classes) == (1, 1, 2)


def test_thesis_table14_is_2_anonymous_but_not_diverse() -> None:
    table14 = pd.DataFrame(
        {
            "age": ["[21-22]", "[21-22]", "[23-24]", "[23-24]"],
            "gender": ["*", "*", "Male", "Male"],
            "zip": ["1765*", "1765*", "1766*", "1766*"],
            "disease": ["Cancer", "Flu", "HIV", "HIV"],
        }
    )
    report = pp.measure(table14, quasi_identifiers=["age", "gender", "zip"], sensitive_attributes=["disease"], l=2)
    disease = report.for_attribute("disease")
    assert report.k == 2
    assert disease.distinct_l == 1
    assert disease.frequency_l == 1.0
    assert disease.entropy_l == pytest.approx(1.0)
    assert disease.recursive_c == math.inf  # the HIV class has 1 < l distinct values
    assert disease.l_violations is not None
    assert disease.l_violations["distinct"].classes == 1
    assert disease.l_violations["distinct"].records == 2


def test_thesis_table15_is_2_diverse() -> None:
    table15 = pd.DataFrame(
        {
            "age": ["[21-23]", "[21-23]", "[22-24]", "[22-24]"],
            "gender": ["*", "*", "Male", "Male"],
            "zip": ["176**"] * 4,
            "disease": ["Cancer", "HIV", "Flu", "HIV"],
        }
    )
    report = pp.measure(table15, quasi_identifiers=["age", "gender", "zip"], sensitive_attributes=["disease"], l=2)
    disease = report.for_attribute("disease")
    assert report.k == 2
    assert disease.distinct_l == 2
    assert disease.frequency_l == 2.0
    assert disease.entropy_l == pytest.approx(2.0)
    assert disease.recursive_c == 1.0  # r1 / r2 = 1/1 in both classes
    assert all(v.passed for v in (disease.l_violations or {}).values())


def test_nagendra_table3_homogeneity_attack() -> None:
    """Nagendra & Aparna Table 3 (k = 4): the second class is all HIV.

    The printed zip codes are garbled in the source (they differ inside a class),
    so the classes are formed on Age and Nativity as the paper's text describes.
    """
    table3 = pd.DataFrame(
        {
            "age": ["<30"] * 4 + ["3*"] * 4,
            "nativity": ["*"] * 8,
            "diagnostic": ["Flu", "Flu", "Heart disease", "Cancer", "HIV", "HIV", "HIV", "HIV"],
        }
    )
    report = pp.measure(table3, quasi_identifiers=["age", "nativity"], sensitive_attributes=["diagnostic"], l=2)
    diagnostic = report.for_attribute("diagnostic")
    assert report.k == 4
    assert diagnostic.distinct_l == 1
    assert diagnostic.l_violations is not None
    assert diagnostic.l_violations["distinct"].size_histogram == {4: 1}


def test_li_et_al_ordered_emd_example() -> None:
    """Li et al. 2007: salaries 3k..11k; P1 = {3k,4k,5k} has EMD 0.375, P2 = {6k,8k,11k} has 0.167."""
    salaries = [3, 4, 5, 6, 7, 8, 9, 10, 11]
    group = ["P1", "P1", "P1", "P2", "P3", "P2", "P3", "P3", "P2"]
    frame = pd.DataFrame({"group": group, "salary": salaries})
    classes = pp.EquivalenceClasses.from_frame(frame, ["group"])
    counts = classes.sensitive("salary", ordered=True)
    from privacy_plugins.core.metrics import emd_ordered

    emd = dict(zip(["P1", "P2", "P3"], emd_ordered(classes, counts)[classes.class_of_row[[0, 3, 4]]]))
    assert emd["P1"] == pytest.approx(0.375)
    assert emd["P2"] == pytest.approx(1 / 6)
    assert pp.t_closeness(frame, quasi_identifiers=["group"], sensitive_attribute="salary") == pytest.approx(0.375)


def test_equal_distance_emd_example() -> None:
    # Class {flu, flu} against a table half flu, half hiv: ½(|1 − ½| + |0 − ½|) = ½.
    frame = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": ["flu", "flu", "hiv", "hiv"]})
    assert pp.t_closeness(frame, quasi_identifiers=["q"], sensitive_attribute="s") == pytest.approx(0.5)
    assert pp.t_closeness(frame.assign(q="x"), quasi_identifiers=["q"], sensitive_attribute="s") == 0.0
