"""The diagnosis of a weighted snapshot (``weights=``) equals the diagnosis of the records it stands for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from diagnosis_strategies import Table, tables
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_lattice import subset_measures

from privacy_plugins.core.diagnosis import diagnose, find_borders
from privacy_plugins.core.io import read_table
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage, TCloseness, l_diversity_model
from privacy_plugins.errors import ConfigurationError, RoleConflictError, UnknownColumnError
from tests.json_trees import assert_same_json

COUNT = "n"
ADULT = Path(__file__).resolve().parents[4] / "shared" / "data" / "adult" / "adult.csv"


def snapshot_of(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One row per distinct row and its count, shuffled, with some counts split over two rows."""
    counts = frame.groupby(list(frame.columns), dropna=False, sort=False).size().rename(COUNT).reset_index()
    rng = np.random.default_rng(seed)
    split = (counts[COUNT] > 1) & (rng.random(len(counts)) < 0.5)
    part = counts[split].copy()
    part[COUNT] = rng.integers(1, part[COUNT].to_numpy(), endpoint=False) if len(part) else part[COUNT]
    counts.loc[split, COUNT] -= part[COUNT]
    both = pd.concat([counts, part], ignore_index=True)
    return both.iloc[rng.permutation(len(both))].reset_index(drop=True)


def expanded(snapshot: pd.DataFrame) -> pd.DataFrame:
    """The records a snapshot stands for (pandas repeat)."""
    rows = snapshot.index.repeat(snapshot[COUNT].to_numpy())
    return snapshot.drop(columns=[COUNT]).loc[rows].reset_index(drop=True)


@settings(max_examples=150, deadline=None)
@given(
    data=tables(max_qis=4, max_rows=25),
    k_share=st.floats(0, 1),
    l=st.sampled_from([None, 1, 2, 3, 1.5]),
    variant=st.sampled_from(["distinct", "frequency", "entropy", "recursive"]),
    suppression_limit=st.sampled_from([None, 0.0, 0.2, 1.0]),
    extra=st.sampled_from(["none", "t", "leakage", "variants"]),
    max_exhaustive=st.sampled_from([0, 1, 12]),
    seed=st.integers(0, 2**32 - 1),
)
def test_weighted_diagnosis_equals_the_diagnosis_of_the_records(
    data: tuple[Table, list[str]],
    k_share: float,
    l: float | None,
    variant: str,
    suppression_limit: float | None,
    extra: str,
    max_exhaustive: int,
    seed: int,
) -> None:
    table, qis = data
    frame = pd.DataFrame(table)
    n = len(frame)
    if variant == "recursive" and l is not None and not float(l).is_integer():
        variant = "distinct"
    models = {
        "none": [],
        "t": [TCloseness("s", 0.3, "equal")],
        "leakage": [PersonalizedLeakage("s", bound=0.5)],
        "variants": [l_diversity_model("entropy", 2, "s"), l_diversity_model("recursive", 2, "s", c=1.5)],
    }[extra]
    options: dict[str, Any] = {
        "quasi_identifiers": qis,
        "sensitive_attributes": ["s"],
        "models": models,
        "k": 1 + round(k_share * (n - 1)),
        "l": l,
        "l_variant": variant,
        "c": 2.0 if variant == "recursive" and l is not None else None,
        "suppression_limit": suppression_limit,
        "max_exhaustive": max_exhaustive,
        "time_budget": None,
    }
    snapshot = snapshot_of(frame, seed)
    weighted = diagnose(snapshot, weights=COUNT, **options)
    assert_same_json(diagnose(frame, **options).to_dict(), weighted.to_dict())
    assert_same_json(diagnose(expanded(snapshot), **options).to_dict(), weighted.to_dict())
    # And the borders alone.
    target = KAnonymity(options["k"])
    assert find_borders(snapshot, quasi_identifiers=qis, target=target, weights=COUNT) == find_borders(
        frame, quasi_identifiers=qis, target=target
    )


@settings(max_examples=60, deadline=None)
@given(data=tables(max_qis=3, max_rows=8), seed=st.integers(0, 2**32 - 1), scale=st.integers(1, 4))
def test_weighted_findings_match_the_naive_brute_force(data: tuple[Table, list[str]], seed: int, scale: int) -> None:
    """Without pandas: repeat each snapshot row ``count`` times in plain Python and group by hand."""
    table, qis = data
    snapshot = snapshot_of(pd.DataFrame(table), seed)
    snapshot[COUNT] *= scale  # counts far above one: every record repeated ``scale`` times
    columns = [*qis, "s"]
    records: dict[str, list[Any]] = {c: [] for c in columns}
    for row in snapshot.to_dict(orient="records"):
        for column in columns:
            value = row[column]
            records[column].extend([None if pd.isna(value) else value] * int(row[COUNT]))
    n = len(records["s"])
    k = min(2, n)
    diagnosis = diagnose(snapshot, weights=COUNT, quasi_identifiers=qis, sensitive_attributes=["s"], k=k, l=2)
    assert diagnosis.rows == n
    for finding in (diagnosis.whole_table, *diagnosis.subsets):
        naive = subset_measures(records, frozenset(finding.attributes), n, sensitive="s", k=k)
        for name in ("classes", "k", "sample_uniques", "suppression_needed", "records_at_risk", "distinct_l"):
            assert getattr(finding, name) == naive[name], (finding.attributes, name)
        assert finding.frequency_l == pytest.approx(naive["frequency_l"], rel=1e-12)
        assert finding.entropy_l == pytest.approx(naive["entropy_l"], rel=1e-9)


def test_thesis_table_1_2_with_every_record_twice() -> None:
    """Mirakabad Table 1.2 with each record standing for two people: k doubles, nobody is unique."""
    table = pd.DataFrame(
        {
            "Age": [21, 22, 23, 24],
            "Gender": ["Female", "Male", "Male", "Male"],
            "Zip": ["17651", "17652", "17661", "17662"],
            "Disease": ["Cancer", "Flu", "HIV", "HIV"],
            COUNT: [2, 2, 2, 2],
        }
    )
    options: dict[str, Any] = {
        "quasi_identifiers": ["Age", "Gender", "Zip"],
        "sensitive_attributes": ["Disease"],
        "k": 3,  # more than the snapshot's 1 row per class, at most the 8 records
        "l": 2,
    }
    weighted = diagnose(table, weights=COUNT, **options)
    assert_same_json(weighted.to_dict(), diagnose(expanded(table), **options).to_dict())
    assert (weighted.rows, weighted.whole_table.k, weighted.all_quasi_identifiers.k) == (8, 8, 2)
    assert weighted.singling_out.negative == ()  # 2 records per combination: nobody alone
    assert weighted.k_borders.negative == (("Age",), ("Gender",), ("Zip",))


def test_a_k_above_the_records_is_refused_as_on_the_records() -> None:
    table = pd.DataFrame({"q": ["a", "b"], COUNT: [2, 3]})
    with pytest.raises(ConfigurationError, match=r"k=6 is larger than the table \(5 rows\)"):
        diagnose(table, quasi_identifiers=["q"], k=6, weights=COUNT)
    assert diagnose(table, quasi_identifiers=["q"], k=5, weights=COUNT).k_borders.positive == ((),)
    assert diagnose(table, quasi_identifiers=["q"], weights=COUNT).target_k == 5  # default min(5, records)


@pytest.mark.parametrize(
    ("counts", "error", "message"),
    [
        ([1, 0], ConfigurationError, r"weights column 'n' must hold record counts \(integers ≥ 1\); 1 row"),
        ([1, -2], ConfigurationError, "integers ≥ 1"),
        ([1.5, 2.0], ConfigurationError, "integers ≥ 1"),
        ([1.0, float("nan")], ConfigurationError, "integers ≥ 1"),
        (pd.array([1, None], dtype="Int64"), ConfigurationError, "integers ≥ 1"),
        (["1", "2"], ConfigurationError, "got dtype (str|object)"),
        ([True, True], ConfigurationError, "got dtype bool"),
    ],
)
def test_bad_weights_are_refused_naming_the_column(counts: Any, error: type[Exception], message: str) -> None:
    table = pd.DataFrame({"q": ["a", "b"], "s": ["x", "y"], COUNT: counts})
    with pytest.raises(error, match=message):
        diagnose(table, quasi_identifiers=["q"], weights=COUNT)


def test_integral_float_weights_are_counts() -> None:
    table = pd.DataFrame({"q": ["a", "b"], COUNT: [2.0, 3.0]})
    assert diagnose(table, quasi_identifiers=["q"], weights=COUNT).all_quasi_identifiers.k == 2


def test_the_weights_column_is_no_attribute() -> None:
    table = pd.DataFrame({"q": ["a", "b"], "s": ["x", "y"], COUNT: [1, 2]})
    with pytest.raises(UnknownColumnError, match="weights column 'count' not in the table"):
        diagnose(table, quasi_identifiers=["q"], weights="count")
    with pytest.raises(RoleConflictError, match="weights column 'n'"):
        diagnose(table, quasi_identifiers=["q", COUNT], weights=COUNT)
    with pytest.raises(RoleConflictError, match="weights column 'n'"):
        diagnose(table, quasi_identifiers=["q"], sensitive_attributes=[COUNT], weights=COUNT)
    with pytest.raises(UnknownColumnError, match="reads column"):  # a model cannot read the counts either
        diagnose(table, quasi_identifiers=["q"], models=[TCloseness(COUNT, 0.3)], weights=COUNT)


def test_rows_and_max_cost_count_records() -> None:
    """The budget counts records, so the weighted diagnosis goes level-wise exactly when the records' would."""
    table = pd.DataFrame({"a": [1, 2], "b": [1, 2], COUNT: [600, 400]})
    weighted = diagnose(table, quasi_identifiers=["a", "b"], max_cost=3_999, weights=COUNT)
    assert weighted.rows == 1_000
    assert weighted.mode_reason == diagnose(expanded(table), quasi_identifiers=["a", "b"], max_cost=3_999).mode_reason
    assert weighted.mode_reason is not None and "1,000 rows" in weighted.mode_reason


def test_adult_snapshot_diagnosis_equals_the_records() -> None:
    """Adult (../shared/data): 30,162 records and their group-by counts give the same diagnosis."""
    if not ADULT.exists():
        pytest.skip(f"Adult data not found at {ADULT} (../shared/data is not part of the repository)")
    adult = read_table(ADULT)
    qis = [c for c in adult.columns if c != "occupation"]
    options: dict[str, Any] = {
        "quasi_identifiers": qis,
        "sensitive_attributes": ["occupation"],
        "k": 5,
        "l": 2,
        "l_variant": "entropy",
        "suppression_limit": 0.05,
        "time_budget": None,
    }
    snapshot = adult.groupby(list(adult.columns), dropna=False).size().rename(COUNT).reset_index()
    assert len(snapshot) < len(adult)
    weighted = diagnose(snapshot, weights=COUNT, **options)
    assert weighted.exhaustive and weighted.rows == len(adult)
    assert_same_json(diagnose(adult, **options).to_dict(), weighted.to_dict())
