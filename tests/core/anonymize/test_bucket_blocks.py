"""Bucket clustering in blocks, compiled or not (issue 28): the same clusters either way, and every block valid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, bucket_clustering, bucket_kernel
from privacy_plugins.core.anonymize.bucket_clustering import cluster_block
from privacy_plugins.core.anonymize.cluster_blocks import split_blocks
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import FrequencyLDiversity, KAnonymity
from privacy_plugins.core.parameters import TOLERANCE

compiled = pytest.mark.skipif(not bucket_kernel.AVAILABLE, reason="numba is not installed (optional)")

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


@st.composite
def eligible_blocks(draw: st.DrawFn) -> tuple[CostSpace, np.ndarray, float, int]:
    """Coded ages and colours, sensitive codes (the top one at n / l, others may be above), the cluster size."""
    l = draw(st.sampled_from([2.0, 2.5, 3.0]))
    s = draw(st.integers(int(np.ceil(l)), 5))
    n = draw(st.integers(2 * s, 50))
    top = int(np.floor(n / l + TOLERANCE))
    others = draw(st.integers(int(np.ceil(l)), 5))
    rest = draw(st.lists(st.integers(1, others), min_size=n - top, max_size=n - top))
    values = np.array([0] * top + rest, dtype=np.int64)
    ages = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    colors = draw(st.lists(st.sampled_from(["red", "blue", "orange", "green"]), min_size=n, max_size=n))
    space = CostSpace([_dimension(pd.Series(ages), None)[0], _dimension(pd.Series(colors), COLOR)[0]])
    return space, values, l, s


@compiled
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eligible_blocks(), st.integers(0, 3))
def test_the_kernel_builds_the_numpy_loops_clusters(case: tuple[CostSpace, np.ndarray, float, int], seed: int) -> None:
    space, values, l, s = case
    n = values.shape[0]
    rows = np.arange(n, dtype=np.int64)
    keys = np.random.default_rng(seed).random(n)
    n_values = int(values.max()) + 1
    expected, enlarged = cluster_block(space, rows, values, keys, n_values, s, l)
    got, got_enlarged = bucket_kernel.cluster_block(
        space.codes, values, keys, n_values, s, l, TOLERANCE, int(np.argmin(keys)), space
    )
    assert got.tolist() == expected.tolist() and got_enlarged == enlarged


@compiled
@pytest.mark.parametrize("unit_values", [0, bucket_kernel.UNIT_VALUES])
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 10_000), st.sampled_from([2.0, 3.0]), st.integers(2, 4))
def test_units_of_equal_qis_build_the_records_clusters(
    monkeypatch: pytest.MonkeyPatch, unit_values: int, seed: int, l: float, s: int
) -> None:
    """Many records per QI tuple (the unit kernel's case) and the record kernel (no units): the numpy clusters."""
    monkeypatch.setattr(bucket_kernel, "UNIT_VALUES", unit_values)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4 * s, 80))
    values = rng.integers(0, 5, n)
    values[: n // 3] = np.arange(n // 3) % 5  # no value above n / l
    assume(np.bincount(values).max() <= np.floor(n / l + TOLERANCE))
    space = CostSpace([_dimension(pd.Series(rng.integers(0, 3, n)), None)[0],
                       _dimension(pd.Series(rng.choice(["red", "blue", "orange", "green"], n)), COLOR)[0]])  # fmt: skip
    keys = rng.random(n)
    expected, enlarged = cluster_block(space, np.arange(n, dtype=np.int64), values, keys, 5, s, l)
    got, got_enlarged = bucket_kernel.cluster_block(
        space.codes, values, keys, 5, s, l, TOLERANCE, int(np.argmin(keys)), space
    )
    assert got.tolist() == expected.tolist() and got_enlarged == enlarged


@settings(max_examples=30, deadline=None)
@given(eligible_blocks(), st.integers(2, 12))
def test_blocks_cover_the_rows_once_and_stay_admissible(
    case: tuple[CostSpace, np.ndarray, float, int], limit: int
) -> None:
    space, values, l, s = case
    n = values.shape[0]

    def admissible(rows: np.ndarray) -> bool:
        return rows.shape[0] >= 2 * s and int(np.bincount(values[rows]).max()) <= np.floor(
            rows.shape[0] / l + TOLERANCE
        )

    assume(admissible(np.arange(n)))
    blocks = split_blocks(space, np.arange(n, dtype=np.int64), admissible, limit=limit)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(n))
    assert all(admissible(block) for block in blocks)


def test_a_large_table_is_cut_into_blocks_near_the_limit() -> None:
    ages = np.repeat(np.arange(64), 4)
    space = CostSpace([_dimension(pd.Series(ages), None)[0]])
    blocks = split_blocks(space, np.arange(256, dtype=np.int64), lambda rows: rows.shape[0] >= 4, limit=32)
    assert len(blocks) == 8 and all(block.shape[0] == 32 for block in blocks)
    assert all(np.ptp(ages[block]) == 7 for block in blocks)  # contiguous age ranges


@pytest.mark.parametrize("numpy_only", [False, True])
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 5), l=st.sampled_from([2.0, 3.0]), k=st.integers(1, 4))
def test_small_blocks_still_give_frequency_l_diverse_k_anonymous_clusters(
    monkeypatch: pytest.MonkeyPatch, numpy_only: bool, seed: int, l: float, k: int
) -> None:
    monkeypatch.setattr(bucket_clustering, "BLOCK", 16)
    if numpy_only:
        monkeypatch.setattr(bucket_clustering, "_compiled", lambda space: False)
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"age": rng.integers(0, 90, 150), "zip": rng.integers(0, 9, 150),
                          "s": rng.choice(list("abcdef"), 150)})  # fmt: skip
    models = [FrequencyLDiversity("s", l), KAnonymity(k)]
    result = anonymize(table, algorithm="bucket", quasi_identifiers=["age", "zip"], models=models, seed=seed)
    report = measure(result.table, quasi_identifiers=["age", "zip"], sensitive_attributes=["s"])
    assert result.passed and result.rows_out == 150 and report.k >= k
    assert report.for_attribute("s").frequency_l >= l - 1e-9


def test_the_seed_fixes_the_clusters() -> None:
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"age": rng.integers(0, 9, 80), "s": rng.choice(list("abcd"), 80)})
    runs = [anonymize(table, algorithm="bucket", quasi_identifiers=["age"], models=[FrequencyLDiversity("s", 2)],
                      seed=7).table for _ in range(2)]  # fmt: skip
    pd.testing.assert_frame_equal(runs[0], runs[1])
