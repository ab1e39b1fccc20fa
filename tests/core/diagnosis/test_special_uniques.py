"""Special uniques (SUDA2) in the diagnosis: MSUs, SUDA / DIS scores, contributions, bounds, no values.

The worked examples are the ones sdcMicro's ``suda2`` is checked with (its tests:
the SDC practice guideline's 10 records, Templ's book example, the three-record
contribution example); the reference below enumerates MSUs record by record.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.cli import EXIT_BAD_INPUT, main
from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.diagnosis.special_uniques import find_msus
from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice
from privacy_plugins.errors import ConfigurationError

GUIDELINE = pd.DataFrame(
    {
        "Residence": ["Urban", "Urban", "Urban", "Urban", "Rural", "Urban", "Urban", "Urban", "Urban", "Urban"],
        "Gender": ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male", "Female", "Female"],
        "Education": ["Secondary incomplete", "Secondary incomplete", "Primary incomplete", "Secondary complete",
                      "Secondary complete", "Secondary complete", "Primary complete", "Post-secondary",
                      "Secondary incomplete", "Secondary incomplete"],
        "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed", "Non-LF", "Unemployed",
                  "Non-LF", "Non-LF"],
    }
)  # fmt: skip


def suda(frame: pd.DataFrame, **options: object):  # type: ignore[no-untyped-def]
    return find_msus(SubsetLattice(frame, list(frame.columns), k=2), **options)  # type: ignore[arg-type]


def naive_msus(frame: pd.DataFrame) -> list[list[tuple[int, ...]]]:
    """Per record, every attribute set (column indices) that is a minimal sample unique, by brute force."""
    rows = [tuple(row) for row in frame.itertuples(index=False, name=None)]
    d = frame.shape[1]

    def unique(r: int, attrs: tuple[int, ...]) -> bool:
        key = tuple(rows[r][a] for a in attrs)
        return sum(tuple(row[a] for a in attrs) == key for row in rows) == 1

    out: list[list[tuple[int, ...]]] = []
    for r in range(len(rows)):
        found = []
        for size in range(1, d + 1):
            for attrs in itertools.combinations(range(d), size):
                if unique(r, attrs) and not any(unique(r, attrs[:i] + attrs[i + 1 :]) for i in range(size)):
                    found.append(attrs)
        out.append(found)
    return out


def test_sdc_guideline_example() -> None:
    """sdcMicro's test "suda2 sdc guideline": scores 0,0,6,0,12,0,6,10,0,0 (M = 4: a 1-MSU weighs 3!, a 2-MSU 2!)."""
    found = suda(GUIDELINE)
    assert found.scores.tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    assert found.complete and found.bound_hit is None
    assert found.records_unique == 4 and found.special_uniques == 4
    assert dict(found.msus_by_size) == {1: 4, 2: 5}
    # record 5: {Residence}, {Gender, Labor}, {Gender, Education}, {Education, Labor}
    assert dict(found.msu_sets)[("Education",)] == 3 and dict(found.msu_sets)[("Gender", "Labor")] == 2
    # DIS by hand: U = 4 records unique on all four, P = 2 × 3 pairs, f = 0.01 → DIS = 0.04 / (0.04 + 6 · 0.99);
    # Q = 1 + (8 − 4)/20 = 1.2, S = Σ score^−Q over the four scored records
    dis = 0.04 / (0.04 + 6 * 0.99)
    adjust = 2 * 6**-1.2 + 12**-1.2 + 10**-1.2
    expected = [0.0 if s == 0 else 1 / (1 + (4 / dis - 4) / (s**1.2 * adjust)) for s in found.scores]
    np.testing.assert_allclose(found.dis_scores, expected, rtol=1e-12)
    assert found.dis_histogram["0"] == 6 and found.dis_histogram["(0, 0.1]"] == 4


def test_book_example() -> None:
    """sdcMicro's test "suda2 book example": the last four records score 4, 2, 6, 8."""
    tab = pd.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+", "50k+"] + ["50k-"] * 6,
            "education": ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"],
        }
    )
    assert suda(tab).scores[4:].tolist() == [4, 2, 6, 8]


def test_contributions_example() -> None:
    """sdcMicro's "simple example contribution": a 50 %, b and c 37.5 % of the total score (in any column order)."""
    frame = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    for order in (["a", "b", "c"], ["c", "a", "b"], ["b", "c", "a"]):
        found = suda(frame[order])
        assert dict(found.attribute_contributions) == pytest.approx({"a": 50.0, "b": 37.5, "c": 37.5})
    found = suda(frame)
    assert found.scores.tolist() == [2, 4, 2]
    np.testing.assert_allclose(found.contributions, [[1, 0, 0], [0, 0.5, 0.5], [1, 0.5, 0.5]])


def test_one_or_two_candidates_weigh_as_sdcmicros_padded_three() -> None:
    """sdcMicro's suda2 pads one or two key variables with constant columns, so M = 3: a 1-MSU weighs 2!, a 2-MSU 1!.

    Records (a, b): (1, x) (1, y) (2, y) (3, z) (3, z). Record 0: MSU {b} → 2; record 1: {a, b} → 1;
    record 2: {a} → 2. Unpadded (M = 2) all three would score 1: the 2-MSU would weigh as much as a 1-MSU.
    """
    frame = pd.DataFrame({"a": [1, 1, 2, 3, 3], "b": ["x", "y", "y", "z", "z"]})
    found = suda(frame)
    assert found.scores.tolist() == [2, 1, 2, 0, 0]
    # DIS with M = 3: Q = 1 + (8 − 3)/20 = 1.25; U = 3 unique on (a, b), P = 2 × 1 pair (3, z), f = 0.01
    dis = 3 * 0.01 / (3 * 0.01 + 2 * 0.99)
    adjust = 2 * 2**-1.25 + 1**-1.25
    expected = [0.0 if s == 0 else 1 / (1 + (3 / dis - 3) / (s**1.25 * adjust)) for s in found.scores]
    np.testing.assert_allclose(found.dis_scores, expected, rtol=1e-12)
    # one candidate: a 1-MSU weighs 2! (sdcMicro pads two constant columns)
    assert suda(frame[["a"]]).scores.tolist() == [0, 0, 2, 0, 0]


@st.composite
def small_tables(draw: st.DrawFn) -> pd.DataFrame:
    d = draw(st.integers(1, 4))
    rows = draw(st.integers(1, 12))
    columns = {f"q{i}": draw(st.lists(st.integers(0, draw(st.integers(1, 3))), min_size=rows, max_size=rows))
               for i in range(d)}  # fmt: skip
    return pd.DataFrame(columns)


@settings(max_examples=60)
@given(small_tables(), st.integers(1, 4))
def test_equals_brute_force_and_the_bound_is_sound(frame: pd.DataFrame, max_size: int) -> None:
    """Scores, contributions and MSU counts equal a brute-force enumeration cut at ``max_size``;
    a search that calls itself complete missed no MSU, and one that missed an MSU says so."""
    d = frame.shape[1]
    msus = naive_msus(frame)
    kept = [[a for a in found if len(a) <= max_size] for found in msus]
    found = suda(frame, max_size=max_size)
    weights = [[math.factorial(max(d, 3) - len(a)) for a in record] for record in kept]  # sdcMicro pads M to 3
    np.testing.assert_allclose(found.scores, [sum(w) for w in weights])
    for r, record in enumerate(kept):
        for i in range(d):
            part = sum(w for a, w in zip(record, weights[r], strict=True) if i in a)
            assert found.contributions[r, i] == pytest.approx(part / sum(weights[r]) if weights[r] else 0.0)
    assert dict(found.msus_by_size) == dict(Counter(len(a) for record in kept for a in record))
    assert found.special_uniques == sum(bool(record) for record in kept)
    assert found.records_unique == int((frame.value_counts() == 1).sum())
    if any(len(a) > max_size for record in msus for a in record):  # the bound cut an MSU: said so
        assert not found.complete and found.bound_hit is not None and f"max_size={max_size}" in found.bound_hit
    if max_size >= d:
        assert found.complete


def test_the_subset_budget_stops_the_search_and_says_so() -> None:
    found = suda(GUIDELINE, max_subsets=3)
    assert not found.complete and found.subsets_grouped == 3
    assert found.bound_hit is not None and "max_subsets=3" in found.bound_hit


def test_the_diagnosis_cost_budget_stops_the_search_too() -> None:
    """Each grouped set is one pass over the distinct rows (7 here): max_cost=20 allows two sets."""
    found = diagnose(GUIDELINE, quasi_identifiers=list(GUIDELINE.columns), k=2, max_cost=20).special_uniques
    assert found is not None and found.subsets_grouped == 2
    assert not found.complete and found.bound_hit is not None and found.bound_hit.startswith("max_cost=20 ")


def test_a_weighted_snapshot_has_the_records_msus() -> None:
    snapshot = GUIDELINE.value_counts().rename("n").reset_index()
    weighted = diagnose(snapshot, quasi_identifiers=list(GUIDELINE.columns), weights="n", k=2).special_uniques
    plain = diagnose(GUIDELINE, quasi_identifiers=list(GUIDELINE.columns), k=2).special_uniques
    assert weighted is not None and plain is not None
    assert weighted.to_dict() == plain.to_dict()


def test_diagnosis_json_text_and_html_name_columns_and_counts_only(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "people.csv"
    GUIDELINE.to_csv(path, index=False)
    html = tmp_path / "report.html"
    argv = ["diagnose", str(path), "--quasi-identifiers", ",".join(GUIDELINE.columns), "--k", "2"]
    assert main([*argv, "--html", str(html), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["special_uniques"]
    assert data["special_uniques"] == 4 and data["msus_by_size"] == {"1": 4, "2": 5} and data["complete"] is True
    assert "scores" not in data  # per-record arrays stay in the Python object
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "special uniques (SUDA2, MSUs of ≤ 4 attributes): 4 records with 9 MSUs" in text
    assert "search          complete" in text
    page = html.read_text()
    assert "Special uniques (SUDA2)" in page
    values = {str(v) for column in GUIDELINE.columns for v in GUIDELINE[column]}
    for output in (json.dumps(data), text, page):
        assert not [v for v in values if v in output]  # no value of the table, only names and counts
    assert main([*argv, "--msu-max-size", "1", "--format", "json"]) == 0
    cut = json.loads(capsys.readouterr().out)["special_uniques"]
    assert cut["complete"] is False and cut["bound_hit"].startswith("max_size=1: ")
    assert main([*argv, "--msu-max-size", "0", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["special_uniques"] is None


@pytest.mark.parametrize(
    ("options", "message"),
    [({"msu_max_size": -1}, "msu_max_size"), ({"dis_fraction": 0}, "dis_fraction"), ({"msu_max_subsets": 0}, "msu")],
)
def test_bad_bounds_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        diagnose(GUIDELINE, quasi_identifiers=list(GUIDELINE.columns), **options)


def test_bad_bounds_exit_2_from_the_shell(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "people.csv"
    GUIDELINE.to_csv(path, index=False)
    assert main(["diagnose", str(path), "--quasi-identifiers", "Gender", "--dis-fraction", "2"]) == EXIT_BAD_INPUT
