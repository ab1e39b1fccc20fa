"""k-member in blocks and compiled (issue 28): every cluster still meets the models; the kernel equals numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, cluster_greedy, cluster_greedy_kernel, clustering
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, GreedyStats, greedy_clusters
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


def _table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(0, 90, n), "zip": rng.integers(0, 9, n), "s": rng.choice(list("abcd"), n)})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 50), k=st.integers(2, 6), diverse=st.booleans())
def test_blocks_keep_every_model_and_every_row(
    monkeypatch: pytest.MonkeyPatch, seed: int, k: int, diverse: bool
) -> None:
    monkeypatch.setattr(clustering, "BLOCK", 40)
    table = _table(seed, 200)
    models = [KAnonymity(k), *([DistinctLDiversity("s", 2)] if diverse else [])]
    result = anonymize(table, algorithm="k-member", quasi_identifiers=["age", "zip"], models=models, seed=seed,
                       sensitive_attributes=["s"])  # fmt: skip
    report = measure(result.table, quasi_identifiers=["age", "zip"], sensitive_attributes=["s"])
    assert result.passed and result.rows_out == 200 and report.k >= k
    if diverse:
        assert report.for_attribute("s").distinct_l >= 2


def test_small_tables_are_one_block_and_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(3, 150)

    def run() -> pd.DataFrame:
        return anonymize(table, algorithm="k-member", quasi_identifiers=["age", "zip"], models=[KAnonymity(4)], seed=1,
                         sensitive_attributes=["s"]).table  # fmt: skip

    whole = run()
    monkeypatch.setattr(clustering, "BLOCK", 30)
    cut = run()
    monkeypatch.setattr(clustering, "BLOCK", 150)
    pd.testing.assert_frame_equal(whole, run())
    assert not whole.equals(cut)  # the limit does cut a larger table


@pytest.mark.skipif(not cluster_greedy_kernel.AVAILABLE, reason="numba is not installed (optional)")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ages=st.lists(st.integers(0, 20), min_size=1, max_size=60),
    k=st.integers(1, 6),
    seed=st.integers(0, 3),
)
def test_the_compiled_pass_builds_the_numpy_clusters(
    monkeypatch: pytest.MonkeyPatch, ages: list[int], k: int, seed: int
) -> None:
    colors = [["red", "blue", "orange", "green"][a % 4] for a in ages]
    space = CostSpace([_dimension(pd.Series(ages), None)[0], _dimension(pd.Series(colors), COLOR)[0]])
    rows = np.arange(len(ages), dtype=np.int64)

    def failing(rows: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
        return np.asarray(np.bincount(group, minlength=n_groups) < k, dtype=bool)

    def run() -> list[int]:
        stats = GreedyStats()
        groups = greedy_clusters(space, failing, rows, np.random.default_rng(seed), min_size=k, relax=False,
                                 stats=stats, by_size=True)  # fmt: skip
        return groups.tolist()

    compiled = run()
    monkeypatch.setattr(cluster_greedy, "_numba", lambda: False)
    assert compiled == run()
    assert min(np.bincount(compiled)) >= min(k, len(ages))
