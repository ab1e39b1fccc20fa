"""Every subset's measures, rolled up from supersets, agree with a naive pandas group-by of that subset.

The exhaustive walk never groups the rows of a subset: it groups the classes of
a superset (``core/diagnosis/rollup.py``). Here each subset is grouped from
scratch, one class at a time, and compared; the roll-up's fallbacks (keys too
wide for 62 bits, sorting instead of dense counting) are forced by shrinking its
limits. The level-wise search measures subsets bottom-up from the rows, so its
findings must be the very same numbers.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any
from unittest import mock

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.diagnosis import diagnose, rollup

SENSITIVE = ["s", "t"]


@st.composite
def frames(draw: st.DrawFn) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Tables with repeated rows (weighted units), missing values and one or two sensitive attributes."""
    n = draw(st.integers(1, 40))
    d = draw(st.integers(1, 5))
    data: dict[str, list[Any]] = {}
    for i in range(d):
        size = draw(st.integers(1, 6))
        pool: list[Any] = list(range(size)) if draw(st.booleans()) else [f"v{j}" for j in range(size)]
        if draw(st.booleans()):
            pool.append(None)
        data[f"q{i}"] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    for name in SENSITIVE:
        pool = ["flu", "hiv", "cancer", "cold", None][: draw(st.integers(1, 5))]
        data[name] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    sensitive = SENSITIVE[: draw(st.integers(0, 2))]
    return pd.DataFrame(data), [f"q{i}" for i in range(d)], sensitive


def naive_measures(frame: pd.DataFrame, subset: tuple[str, ...], sensitive: list[str], l: int) -> dict[str, Any]:
    """k, classes and every l variant of one subset, class by class (missing values are a value of their own)."""
    groups = [part for _, part in frame.groupby(list(subset), dropna=False)] if subset else [frame]
    out: dict[str, Any] = {"classes": len(groups), "k": min(len(part) for part in groups)}
    if not sensitive:
        return {**out, "distinct_l": None, "frequency_l": None, "entropy_l": None, "recursive_c": None}
    distinct, frequency, entropy, recursive = [], [], [], []
    for name in sensitive:
        for part in groups:
            counts = sorted(part[name].value_counts(dropna=False).tolist(), reverse=True)
            size = len(part)
            distinct.append(len(counts))
            frequency.append(size / counts[0])
            entropy.append(math.exp(-sum(c / size * math.log(c / size) for c in counts)))
            recursive.append(math.inf if len(counts) < l else counts[0] / sum(counts[l - 1 :]))
    out.update(distinct_l=min(distinct), frequency_l=min(frequency), entropy_l=min(entropy), recursive_c=max(recursive))
    return out


@settings(max_examples=150, deadline=None)
@given(
    data=frames(),
    k_share=st.floats(0, 1),
    key_bits=st.sampled_from([62, 62, 4, 9, 16]),
    dense=st.sampled_from([(8, 1024), (0, 0)]),
)
def test_every_rolled_up_subset_matches_a_naive_group_by(
    data: tuple[pd.DataFrame, list[str], list[str]], k_share: float, key_bits: int, dense: tuple[int, int]
) -> None:
    frame, qis, sensitive = data
    k = 1 + round(k_share * (len(frame) - 1))
    limits = {"_KEY_BITS": key_bits, "_DENSE_FACTOR": dense[0], "_DENSE_SLACK": dense[1]}
    with mock.patch.multiple(rollup, **limits):  # small limits force every fallback of the grouping
        diagnosis = diagnose(
            frame,
            quasi_identifiers=qis,
            sensitive_attributes=sensitive,
            k=k,
            **({"l": 2, "l_variant": "recursive", "c": 2} if sensitive else {}),  # type: ignore[arg-type]
        )
    assert diagnosis.exhaustive
    found = {finding.attributes: finding for finding in (diagnosis.whole_table, *diagnosis.subsets)}
    expected_subsets = [subset for size in range(len(qis) + 1) for subset in combinations(qis, size)]
    assert sorted(found) == sorted(expected_subsets)
    for subset in expected_subsets:
        finding, expected = found[subset], naive_measures(frame, subset, sensitive, 2)
        assert (finding.classes, finding.k, finding.distinct_l) == (
            expected["classes"],
            expected["k"],
            expected["distinct_l"],
        ), subset
        if not sensitive:
            assert finding.frequency_l is finding.entropy_l is finding.recursive_c is None
            continue
        assert finding.frequency_l == pytest.approx(expected["frequency_l"], rel=1e-12), subset
        assert finding.entropy_l == pytest.approx(expected["entropy_l"], rel=1e-9), subset
        assert finding.recursive_c == expected["recursive_c"] or finding.recursive_c == pytest.approx(
            expected["recursive_c"], rel=1e-12
        ), subset


@settings(max_examples=60, deadline=None)
@given(data=frames(), k_share=st.floats(0, 1))
def test_levelwise_findings_are_the_rolled_up_numbers(
    data: tuple[pd.DataFrame, list[str], list[str]], k_share: float
) -> None:
    frame, qis, sensitive = data
    k = 1 + round(k_share * (len(frame) - 1))
    common = {"quasi_identifiers": qis, "sensitive_attributes": sensitive, "k": k, **({"l": 2} if sensitive else {})}
    every = {f.attributes: f for f in diagnose(frame, **common).subsets}  # type: ignore[arg-type]
    levelwise = diagnose(frame, max_exhaustive=0, **common)  # type: ignore[arg-type]
    assert not levelwise.exhaustive
    for finding in levelwise.subsets:
        assert finding == every[finding.attributes]
