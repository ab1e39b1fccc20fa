"""Borders, evaluation counts and per-subset measures agree with the naive brute force on random tables."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from diagnosis_strategies import Table, tables
from hypothesis import example, given
from hypothesis import strategies as st
from naive_lattice import all_subsets, brute_force_borders, satisfies, subset_measures

from privacy_plugins.core.diagnosis import Borders, diagnose, find_borders
from privacy_plugins.core.models import EntropyLDiversity, KAnonymity, l_diversity_model


def as_sets(members: tuple[tuple[Any, ...], ...]) -> set[frozenset[Any]]:
    return {frozenset(m) for m in members}


def check_against_brute_force(
    borders: Borders, qis: list[str], measured: dict[frozenset[Any], dict[str, Any]], model: str, c: float | None
) -> set[frozenset[Any]]:
    positive, negative, evaluated = brute_force_borders(
        qis, lambda s: satisfies(measured[s], model, borders.threshold, c)
    )
    assert as_sets(borders.positive) == positive
    assert as_sets(borders.negative) == negative
    assert borders.subsets_evaluated == len(evaluated)
    assert borders.subsets_total == 2 ** len(qis)
    per_level = [sum(1 for s in evaluated if len(s) == size) for size in range(len(qis) + 1)]
    assert list(borders.evaluated_per_level) == per_level
    return evaluated


L_VALUES = st.sampled_from([1, 1.5, 2, 2.5, 3])
C_VALUES = st.sampled_from([0.5, 1, 1.5, 2, 3])


@given(data=tables(max_qis=6, max_rows=30), l=L_VALUES, c=C_VALUES, k_share=st.floats(0, 1), exhaustive=st.booleans())
@example(data=({"q0": ["x"], "s": ["flu"]}, ["q0"]), l=2, c=2, k_share=1.0, exhaustive=False)
@example(data=({"q0": [1, 1, 2, 2], "q1": [1, 2, 1, 2], "s": ["a", "b", "a", "b"]}, ["q0", "q1"]),
         l=2, c=1, k_share=0.5, exhaustive=True)  # fmt: skip
@example(
    data=({"q0": ["x"] * 3 + ["y"] * 3, "s": ["flu", "hiv", "cancer"] * 2}, ["q0"]),
    l=3,
    c=1,
    k_share=0.0,
    exhaustive=False,
)  # entropy exp(ln 3) = 2.9999999999999996 passes l = 3
def test_every_border_matches_brute_force(
    data: tuple[Table, list[str]], l: float, c: float, k_share: float, exhaustive: bool
) -> None:
    table, qis = data
    n = len(table["s"])
    k = 1 + round(k_share * (n - 1))
    integer_l = float(l).is_integer()
    variants = ["distinct", "frequency", "entropy"] + (["recursive"] if integer_l else [])
    diagnosis = diagnose(
        pd.DataFrame(table),
        quasi_identifiers=qis,
        sensitive_attributes=["s"],
        k=k,
        models=[l_diversity_model(v, l, "s", c=c if v == "recursive" else None) for v in variants],
        max_exhaustive=12 if exhaustive else 0,
    )
    recursive_l = int(l) if integer_l else None
    measured = {s: subset_measures(table, s, n, sensitive="s", k=k, l=recursive_l) for s in all_subsets(qis)}

    union = check_against_brute_force(diagnosis.k_borders, qis, measured, "k", None)
    union |= check_against_brute_force(diagnosis.singling_out, qis, measured, "k", None)
    assert diagnosis.singling_out.threshold == 2
    assert [b.model for b in diagnosis.model_borders] == [f"{v} l-diversity" for v in variants]
    for variant, borders in zip(variants, diagnosis.model_borders, strict=True):
        union |= check_against_brute_force(borders, qis, measured, variant, c)

    measured_now = {frozenset(f.attributes) for f in diagnosis.subsets} | {frozenset()}
    if exhaustive:
        assert measured_now == set(measured)
    else:  # level-wise: exactly the subsets some search evaluated, nothing above a violating subset
        assert measured_now == union
    assert diagnosis.subsets_measured == len(measured_now)


@given(data=tables(max_qis=5), k_share=st.floats(0, 1), suppression_limit=st.sampled_from([None, 0.0, 0.1, 0.34, 1.0]))
def test_every_subset_measure_matches_brute_force(
    data: tuple[Table, list[str]], k_share: float, suppression_limit: float | None
) -> None:
    table, qis = data
    n = len(table["s"])
    k = 1 + round(k_share * (n - 1))
    diagnosis = diagnose(
        pd.DataFrame(table),
        quasi_identifiers=qis,
        sensitive_attributes=["s"],
        k=k,
        l=2,
        l_variant="recursive",
        c=2,  # diagnoses recursive (2,2), so every subset gets its c*
        suppression_limit=suppression_limit,
        risk_threshold=0.3,
    )
    assert diagnosis.exhaustive
    assert len(diagnosis.subsets) == 2 ** len(qis) - 1
    for finding in (diagnosis.whole_table, *diagnosis.subsets):
        expected = subset_measures(
            table,
            frozenset(finding.attributes),
            n,
            sensitive="s",
            k=k,
            l=2,
            suppression_limit=suppression_limit,
            threshold=0.3,
        )
        for name in ("classes", "k", "sample_uniques", "suppression_needed", "records_at_risk", "distinct_l"):
            assert getattr(finding, name) == expected[name], (finding.attributes, name)
        assert finding.suppression_fraction == pytest.approx(expected["suppression_needed"] / n)
        assert finding.share_at_risk == pytest.approx(expected["records_at_risk"] / n)
        assert finding.k_after_suppression == expected.get("k_after_suppression")
        assert finding.frequency_l == pytest.approx(expected["frequency_l"], rel=1e-12)
        assert finding.entropy_l == pytest.approx(expected["entropy_l"], rel=1e-9)
        assert finding.recursive_c == pytest.approx(expected["recursive_c"], rel=1e-12) or (
            math.isinf(expected["recursive_c"]) and finding.recursive_c == math.inf
        )
    assert diagnosis.whole_table.k == n
    assert diagnosis.all_quasi_identifiers == diagnosis.for_subset(qis)


@given(data=tables(max_qis=6, max_rows=30), k_share=st.floats(0, 1))
def test_find_borders_alone_matches_brute_force(data: tuple[Table, list[str]], k_share: float) -> None:
    table, qis = data
    n = len(table["s"])
    k = 1 + round(k_share * (n - 1))
    measured = {s: subset_measures(table, s, n, sensitive="s", k=k, l=2) for s in all_subsets(qis)}
    frame = pd.DataFrame(table)
    borders = find_borders(frame, quasi_identifiers=qis, target=KAnonymity(k))
    check_against_brute_force(borders, qis, measured, "k", None)
    entropy = find_borders(frame, quasi_identifiers=qis, target=EntropyLDiversity("s", 2))
    check_against_brute_force(entropy, qis, measured, "entropy", None)
