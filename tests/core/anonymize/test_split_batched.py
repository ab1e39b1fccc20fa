"""Splitting B over every big cluster at once (issue 28): parts stay inside their cluster, hold k, never cost more."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, boxes
from privacy_plugins.core.anonymize.clustering import _split_all_b
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.partition_split import partition_rows
from privacy_plugins.core.hierarchies import Hierarchy

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


def _space(records: list[tuple[int, str]]) -> CostSpace:
    df = pd.DataFrame(records, columns=["age", "color"])
    return CostSpace([_dimension(df["age"], None)[0], _dimension(df["color"], COLOR)[0]])


def _losses(space: CostSpace, group: np.ndarray, owner: np.ndarray, n_owners: int) -> np.ndarray:
    """Per owner (each row's old cluster), the loss Σ |c| · D(c) of its clusters in ``group``."""
    n = int(group.max()) + 1
    low, high = boxes(space.codes, group, n)
    of_group = np.zeros(n, dtype=np.int64)
    of_group[group] = owner
    return np.bincount(of_group, weights=space.box_costs(low, high) * np.bincount(group), minlength=n_owners)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.sampled_from(COLOR.leaves.tolist())), min_size=4, max_size=90),
    st.integers(2, 4),
    st.integers(1, 5),
    st.integers(0, 3),
)
def test_every_big_cluster_is_split_inside_itself_into_valid_cheaper_parts(
    records: list[tuple[int, str]], k: int, n_clusters: int, seed: int
) -> None:
    space = _space(records)
    n = len(records)
    cluster = np.random.default_rng(seed).integers(0, min(n_clusters, n), n)
    cluster = np.unique(cluster, return_inverse=True)[1].ravel().astype(np.int64)
    sizes = np.bincount(cluster)
    if (sizes < k).any():
        return

    def failing(rows: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
        return np.asarray(np.bincount(group, minlength=n_groups)[:n_groups] < k, dtype=bool)

    is_big = sizes >= 2 * k
    new, n_big = _split_all_b(space, failing, cluster, is_big, np.random.default_rng(seed))  # type: ignore[arg-type]
    assert n_big == int(is_big.sum())
    assert np.array_equal(np.unique(new), np.arange(int(new.max()) + 1))  # dense
    owner = np.zeros(int(new.max()) + 1, dtype=np.int64)
    owner[new] = cluster
    assert np.array_equal(owner[new], cluster)  # every part inside one cluster
    assert (np.diff(owner) >= 0).all()  # numbered in cluster order
    assert (np.bincount(new) >= k).all()
    assert (np.bincount(owner, minlength=sizes.shape[0])[~is_big] == 1).all()  # small clusters untouched
    before = _losses(space, cluster, cluster, sizes.shape[0])
    after = _losses(space, new, cluster, sizes.shape[0])
    assert (after <= before + 1e-9).all()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.sampled_from(COLOR.leaves.tolist())), min_size=2, max_size=60),
    st.sampled_from(["strict", "relaxed"]),
    st.integers(0, 3),
)
def test_one_start_partition_is_the_plain_run(records: list[tuple[int, str]], mode: str, seed: int) -> None:
    space = _space(records)

    def allowed(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
        counts = np.bincount(class_of_row, minlength=n_classes)[: 2 * n_candidates].reshape(n_candidates, 2)
        return np.asarray((counts >= 2).all(axis=1), dtype=bool)

    plain = partition_rows(space.dimensions, allowed, mode=mode, rng=np.random.default_rng(seed))  # type: ignore[arg-type]
    started = partition_rows(space.dimensions, allowed, mode=mode, rng=np.random.default_rng(seed),  # type: ignore[arg-type]
                             start=np.zeros(len(records), dtype=np.int64))  # fmt: skip
    assert np.array_equal(plain.partition_of_row, started.partition_of_row)
