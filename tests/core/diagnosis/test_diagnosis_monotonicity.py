"""Monotonicity of every model the border search prunes with, checked on random tables.

Removing a quasi-identifier merges classes; k and distinct, frequency and
entropy l may then only go up, recursive c* only down (the thesis, §3.1.2). The
property is checked on the naive brute force (independent of the library) and on
the library's own measures, so pruning can never hide a satisfying subset.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from diagnosis_strategies import Table, tables
from hypothesis import given
from hypothesis import strategies as st
from naive_lattice import TOLERANCE, all_subsets, subset_measures

from privacy_plugins.core.diagnosis import diagnose

RISING = ("k", "distinct_l", "frequency_l", "entropy_l")


def assert_monotone(values: dict[frozenset[Any], dict[str, Any]]) -> None:
    for subset, measures in values.items():
        for attribute in subset:
            parent = values[subset - {attribute}]
            for name in RISING:
                assert parent[name] >= measures[name] - TOLERANCE, (sorted(subset), attribute, name)
            assert parent["recursive_c"] <= measures["recursive_c"] * (1 + TOLERANCE) or math.isinf(
                measures["recursive_c"]
            ), (sorted(subset), attribute, "recursive_c")


@given(data=tables(max_qis=5, max_rows=30), l=st.integers(1, 4))
def test_models_are_monotone_on_the_brute_force(data: tuple[Table, list[str]], l: int) -> None:
    table, qis = data
    n = len(table["s"])
    assert_monotone({s: subset_measures(table, s, n, sensitive="s", l=l) for s in all_subsets(qis)})


@given(data=tables(max_qis=5, max_rows=30), l=st.integers(1, 4))
def test_models_are_monotone_in_the_library(data: tuple[Table, list[str]], l: int) -> None:
    table, qis = data
    diagnosis = diagnose(
        pd.DataFrame(table), quasi_identifiers=qis, sensitive_attributes=["s"], k=1, l=l, l_variant="recursive", c=1
    )
    values = {
        frozenset(f.attributes): {name: getattr(f, name) for name in (*RISING, "recursive_c")}
        for f in (diagnosis.whole_table, *diagnosis.subsets)
    }
    assert len(values) == 2 ** len(qis)
    assert_monotone(values)


@given(data=tables(max_qis=5, max_rows=30))
def test_satisfying_subsets_are_down_closed(data: tuple[Table, list[str]]) -> None:
    """What pruning relies on: below a Bd+ member everything satisfies, above a Bd− member nothing does."""
    table, qis = data
    diagnosis = diagnose(
        pd.DataFrame(table), quasi_identifiers=qis, sensitive_attributes=["s"], k=2 if len(table["s"]) > 1 else 1, l=2
    )
    for borders in (diagnosis.k_borders, *diagnosis.model_borders):
        for finding in diagnosis.subsets:
            below_positive = borders.satisfied_by(finding.attributes)
            above_negative = any(set(m) <= set(finding.attributes) for m in borders.negative)
            assert below_positive != above_negative, (borders.target, finding.attributes)
