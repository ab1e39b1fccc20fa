"""The personalized anonymizer (Song et al. 2015): every published record within its own leakage bound."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import PersonalizedDetails, anonymize
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.personalized import sort_order
from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.metrics.leakage import leakage_per_record
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, PersonalizedLeakage
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

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
TABLE1 = pd.DataFrame(
    {
        "age": [5, 9, 8, 12, 19],
        "zipcode": [12000, 14000, 19000, 22000, 24000],
        "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
    }
)
QIS = ["age", "zipcode"]


def _run(table: pd.DataFrame, *models: object, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("hierarchies", {"disease": DISEASE})
    return anonymize(table, algorithm="personalized", quasi_identifiers=QIS, models=list(models), **kwargs)  # type: ignore[arg-type]


def _remeasure(table: pd.DataFrame, hierarchy: Hierarchy | None = DISEASE) -> np.ndarray:
    classes = EquivalenceClasses.from_frame(table, QIS)
    return leakage_per_record(classes, classes.sensitive("disease"), hierarchy)


def test_song_table1_meets_one_half_for_everybody() -> None:
    result = _run(TABLE1, KAnonymity(2), PersonalizedLeakage("disease", bound=0.5))
    assert result.passed and result.rows_out == 5 and result.suppressed == 0
    leak = _remeasure(result.table)
    assert (leak <= 0.5 + 1e-12).all() and result.measures["max_leakage"] <= 0.5
    details = result.details
    assert isinstance(details, PersonalizedDetails)
    assert details.sensitive_generalized >= 1 and details.generalization_steps >= 1
    assert np.allclose(details.leakage, leak) and (details.bounds == 0.5).all()
    # The generalized value is one level up: a pneumonia published as its parent.
    assert "respiratory infection" in set(result.table["disease"])
    report = result.to_dict()
    json.dumps(report)
    assert report["details"]["kind"] == "personalized" and "leakage" not in report["details"]
    assert 0 < report["ileft"] < 1 and 0 < report["ncp"] < 1


def test_song_table3_grouping_fails_and_plain_k_anonymity_does_not_fix_it() -> None:
    table3 = TABLE1.assign(age=["[5-10]"] * 3 + ["[11-20]"] * 2, zipcode=["a"] * 3 + ["b"] * 2)
    assert _remeasure(table3).tolist()[3:] == [1.0, 1.0]
    mondrian = anonymize(
        TABLE1, algorithm="mondrian", quasi_identifiers=QIS, models=[KAnonymity(2)], insensitive=["disease"]
    )
    assert _remeasure(mondrian.table).max() == 1.0  # plain 2-anonymity leaks pneumonia


def test_per_record_bounds_with_a_default() -> None:
    table = TABLE1.assign(pleak=[None, 1.0, None, 0.5, 1.0])
    model = PersonalizedLeakage("disease", bound=0.5, bound_column="pleak")
    result = _run(table, KAnonymity(2), model)
    assert result.passed
    assert result.details.bounds.tolist() == [0.5, 1.0, 0.5, 0.5, 1.0]  # type: ignore[attr-defined]
    assert (_remeasure(result.table) <= result.details.bounds + 1e-12).all()  # type: ignore[attr-defined]


def test_sort_order_for_mixed_quasi_identifiers() -> None:
    sex = Hierarchy.from_rows("sex", [["m", "*"], ["f", "*"]])
    frame = pd.DataFrame({"sex": ["f", "m", "f", "m"], "age": [30, 20, 10, 20]})
    dims = [_dimension(frame["sex"], sex)[0], _dimension(frame["age"], None)[0]]
    # sex by hierarchy leaf order (m before f), then age ascending, ties in input order.
    assert sort_order(dims).tolist() == [1, 3, 2, 0]


def test_theorem1_regroups_a_strict_record() -> None:
    rng = np.random.default_rng(1)
    table = pd.DataFrame(
        {
            "age": np.arange(12),
            "zipcode": np.arange(12) * 10,
            "disease": rng.choice(DISEASE.leaves, size=12).tolist(),
            "pleak": [1.0] * 11 + [0.2],
        }
    )
    result = _run(table, KAnonymity(2), PersonalizedLeakage("disease", bound_column="pleak"))
    details = result.details
    assert isinstance(details, PersonalizedDetails)
    assert details.theorem1_regrouped == 1 and details.merges >= 1 and details.unsatisfiable == 0
    sizes = EquivalenceClasses.from_frame(result.table, QIS).row_size
    assert sizes[11] >= 5 and result.passed


def test_theorem1_for_the_whole_table_is_reported_then_suppressed_within_the_limit() -> None:
    table = TABLE1.assign(pleak=[0.5, 0.5, 0.1, 0.5, 0.5])
    model = PersonalizedLeakage("disease", bound_column="pleak")
    with pytest.raises(InfeasibleAnonymizationError, match=r"1 records have a leakage bound below 1/5"):
        _run(table, KAnonymity(2), model)
    result = _run(table, KAnonymity(2), model, suppression_limit=0.2)
    assert result.suppressed == 1 and result.rows_in == result.rows_out + result.suppressed == 5
    assert result.details.unsatisfiable == 1 and result.passed  # type: ignore[attr-defined]


def test_without_a_sensitive_hierarchy_only_regrouping_remains() -> None:
    result = _run(TABLE1, KAnonymity(2), PersonalizedLeakage("disease", bound=0.5), hierarchies={})
    assert result.passed and set(result.table["disease"]) <= set(DISEASE.leaves)
    assert (_remeasure(result.table, None) <= 0.5).all()
    same = TABLE1.assign(disease="flu")
    with pytest.raises(InfeasibleAnonymizationError, match="even one group of all 5 records"):
        _run(same, KAnonymity(2), PersonalizedLeakage("disease", bound=0.5), hierarchies={})


def test_other_models_hold_too() -> None:
    result = _run(TABLE1, KAnonymity(2), DistinctLDiversity("disease", 2), hierarchies={})
    assert result.passed and result.measures["l"] >= 2


@pytest.mark.parametrize(
    ("pleak", "error", "message"),
    [
        ([0.5, 1.5, 0.5, 0.5, 0.5], ConfigurationError, r"'pleak' has 1 bounds outside \(0, 1\]"),
        ([0.5, 0.0, 0.5, 0.5, 0.5], ConfigurationError, r"'pleak' has 1 bounds outside \(0, 1\]"),
        ([0.5, "x", 0.5, 0.5, None], ConfigurationError, r"'pleak' has 1 non-numeric bounds"),
        ([0.5, None, 0.5, 0.5, None], ConfigurationError, r"'pleak' has 2 missing bounds and no default"),
    ],
)
def test_bad_bounds_are_named(pleak: list[object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        _run(TABLE1.assign(pleak=pleak), KAnonymity(2), PersonalizedLeakage("disease", bound_column="pleak"))


def test_a_sensitive_value_missing_from_the_hierarchy_is_named() -> None:
    table = TABLE1.assign(disease=["cholera", *TABLE1["disease"][1:]])
    with values_shown(), pytest.raises(HierarchyError, match=r"'disease' has 1 value.*'cholera'"):
        _run(table, KAnonymity(2), PersonalizedLeakage("disease", bound=0.5))


SEX = Hierarchy.from_rows("sex", [["m", "*"], ["f", "*"]])


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(4, 40),
    k=st.integers(2, 4),
    seed=st.integers(0, 10_000),
)
def test_random_per_record_bounds_hold_when_remeasured(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = min(k, n)
    table = pd.DataFrame(
        {
            "age": rng.integers(0, 30, n),
            "zipcode": rng.integers(0, 5, n) * 1000,
            "sex": rng.choice(["m", "f"], n),
            "disease": rng.choice(DISEASE.leaves, n, p=[0.5, 0.2, 0.1, 0.1, 0.1]).tolist(),
            "pleak": rng.uniform(1.0 / k, 1.0, n),
        }
    )
    model = PersonalizedLeakage("disease", bound_column="pleak")
    result = anonymize(
        table,
        algorithm="personalized",
        quasi_identifiers=[*QIS, "sex"],
        models=[KAnonymity(k), model],
        hierarchies={"disease": DISEASE, "sex": SEX},
    )
    assert result.passed and result.rows_in == result.rows_out + result.suppressed == n
    classes = EquivalenceClasses.from_frame(result.table, [*QIS, "sex"])
    leak = leakage_per_record(classes, classes.sensitive("disease"), DISEASE)
    assert (leak <= result.table["pleak"].to_numpy() + 1e-9).all()
    assert classes.sizes.min() >= k


def _groups_one_record_at_a_time(codes: list[np.ndarray], k: int, quality: object) -> list[int]:
    """The grouping rule applied record by record (the reference the vectorized grouping must equal)."""
    from privacy_plugins.core.anonymize.personalized import TOLERANCE

    def ileft(low: list[int], high: list[int]) -> float:
        return float(quality.ileft([np.array([x]) for x in low], [np.array([x]) for x in high])[0])  # type: ignore[attr-defined]

    n = codes[0].shape[0]
    if n < 2 * k:
        return [0]
    starts, pos = [0], k
    low, high = [int(c[:k].min()) for c in codes], [int(c[:k].max()) for c in codes]
    size, current = k, ileft(low, high)
    while n - pos >= k:
        new_low = [min(lo, int(c[pos])) for lo, c in zip(low, codes, strict=True)]
        new_high = [max(hi, int(c[pos])) for hi, c in zip(high, codes, strict=True)]
        joined = ileft(new_low, new_high)
        window = ileft([int(c[pos : pos + k].min()) for c in codes], [int(c[pos : pos + k].max()) for c in codes])
        if (size + 1) * joined - size * current >= window - TOLERANCE:
            low, high, size, current, pos = new_low, new_high, size + 1, joined, pos + 1
            continue
        starts.append(pos)
        low, high = [int(c[pos : pos + k].min()) for c in codes], [int(c[pos : pos + k].max()) for c in codes]
        size, current, pos = k, window, pos + k
    return starts


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["a", "b", "c", "d"])), min_size=1, max_size=150),
    st.integers(1, 6),
)
def test_grouping_decides_runs_at_once_as_record_by_record(rows: list[tuple[int, str]], k: int) -> None:
    from privacy_plugins.core.anonymize.personalized import _adaptive_groups, _Quality

    letters = Hierarchy.from_rows("x", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]])
    df = pd.DataFrame(rows, columns=["age", "x"])
    dims = [_dimension(df["age"], None)[0], _dimension(df["x"], letters)[0]]
    order = sort_order(dims)
    codes = [d.codes[order] for d in dims]
    quality = _Quality(dims)
    assert _adaptive_groups(codes, k, quality) == _groups_one_record_at_a_time(codes, k, quality)
