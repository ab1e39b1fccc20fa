"""The compiled phase 1 of two-phase (numba, optional): same merges and lends as the numpy path, valid, seeded."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import cluster_merge, cluster_merge_kernel
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace
from privacy_plugins.core.anonymize.cluster_merge import merge_clusters
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.hierarchies import Hierarchy

compiled = pytest.mark.skipif(not cluster_merge_kernel.AVAILABLE, reason="numba is not installed (optional)")

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


def _space(ages: list[int], colors: list[str] | None = None) -> CostSpace:
    dimensions = [_dimension(pd.Series(ages), None)[0]]
    if colors is not None:
        dimensions.append(_dimension(pd.Series(colors), COLOR)[0])
    return CostSpace(dimensions)


def _merge(space: CostSpace, k: int, seed: int, *, by_size: bool) -> np.ndarray:
    rows = np.arange(space.codes.shape[1])

    def failing(rows: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
        return np.asarray(np.bincount(group, minlength=n_groups) < k, dtype=bool)

    return merge_clusters(space, failing, rows, np.random.default_rng(seed), min_size=k, by_size=by_size)


def _sets(groups: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(groups == g).tolist()) for g in set(groups.tolist())}


@compiled
@pytest.mark.parametrize("by_size", [False, True])
def test_merging_grows_a_cluster_past_k_when_that_is_cheapest(by_size: bool) -> None:
    # As test_clustering's: {20}+{21} (2/21) before {1} into {0,0} (3/21); then {0,0,1}.
    groups = _merge(_space([0, 0, 1, 20, 21]), 2, 0, by_size=by_size)
    assert _sets(groups) == {frozenset({0, 1, 2}), frozenset({3, 4})}


@compiled
@pytest.mark.parametrize("seed", range(4))
def test_a_valid_cluster_lends_its_closest_records(seed: int) -> None:
    # The unit of four 5s spares two: each end borrows one (a piece split) instead of merging whole.
    groups = _merge(_space([0, 10, 5, 5, 5, 5]), 2, seed, by_size=True)
    assert sorted(np.bincount(groups).tolist()) == [2, 2, 2]
    assert groups[0] != groups[1] and len(set(groups[2:].tolist())) == 3


@compiled
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from(COLOR.leaves.tolist())), min_size=2, max_size=60),
    st.integers(1, 6),
    st.integers(0, 3),
)
def test_every_cluster_has_k_records_and_the_seed_fixes_the_output(
    records: list[tuple[int, str]], k: int, seed: int
) -> None:
    if len(records) < k:
        return
    space = _space([a for a, _ in records], [c for _, c in records])
    groups = _merge(space, k, seed, by_size=True)
    assert groups.shape == (len(records),) and groups.min() == 0
    sizes = np.bincount(groups)
    assert (sizes >= k).all() and sizes.sum() == len(records)
    assert set(groups.tolist()) == set(range(int(groups.max()) + 1))  # dense ids
    assert np.array_equal(groups, _merge(space, k, seed, by_size=True))


def test_without_numba_or_size_only_models_the_numpy_path_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the compiled kernel must not run here")

    monkeypatch.setattr(cluster_merge_kernel, "merge_units", refuse)
    space = _space([0, 0, 1, 20, 21])
    assert _sets(_merge(space, 2, 0, by_size=False)) == {frozenset({0, 1, 2}), frozenset({3, 4})}
    monkeypatch.setattr(cluster_merge, "_compiled", lambda: False)
    assert _sets(_merge(space, 2, 0, by_size=True)) == {frozenset({0, 1, 2}), frozenset({3, 4})}


@compiled
@pytest.mark.parametrize("seed", [9, 39])
def test_skewed_tables_with_seven_quasi_identifiers_keep_every_record(seed: int) -> None:
    # Adult-like: seven QIs, skewed values, so big units lend to many small clusters and partners
    # change often. Every cluster pointing at a changed partner must be re-priced, also when a
    # re-priced one picks the lender again (a stale lend loses records; these seeds did).
    rng = np.random.default_rng(seed)
    n, columns = 2000, []
    for card in (70, 16, 7, 40, 5, 2, 7):
        weights = rng.zipf(1.6, card).astype(float)
        columns.append(rng.choice(card, n, p=weights / weights.sum()))
    space = CostSpace([_dimension(pd.Series(column), None)[0] for column in columns])
    groups = _merge(space, 5, seed, by_size=True)
    sizes = np.bincount(groups)
    assert groups.shape == (n,) and (sizes >= 5).all() and sizes.sum() == n


@compiled
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(40, 300), st.booleans())
def test_the_price_bounds_skip_only_what_could_not_win(seed: int, k: int, n: int, one_qi: bool) -> None:
    # Issue 28: buckets, offers and candidates are skipped on lower bounds of their prices; pricing
    # every bucket and every candidate instead (``prune=False``) must take the very same steps.
    # One QI: the buckets are keyed by it alone; five: by two of them.
    rng = np.random.default_rng(seed)
    cards = (30,) if one_qi else (30, 9, 5, 4)
    columns = [rng.choice(card, n, p=(w := rng.zipf(1.6, card).astype(float)) / w.sum()) for card in cards]
    dimensions = [_dimension(pd.Series(column), None)[0] for column in columns]
    if not one_qi:
        dimensions.append(_dimension(pd.Series(rng.choice(COLOR.leaves, n)), COLOR)[0])
    space = CostSpace(dimensions)
    assert space.flat is not None
    runs = [
        cluster_merge_kernel.merge_units(
            space.flat, space.offsets, space.strides, space.codes, np.random.default_rng(seed), min_size=k, prune=prune
        )
        for prune in (True, False)
    ]
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1:] == runs[1][1:]


def _naive_first_prices(
    unit_codes: np.ndarray, counts: np.ndarray, space: CostSpace, k: int, prio: np.ndarray
) -> tuple[list[int], list[float]]:
    """Per unit: its cheapest partner among the units differing in at most two QIs (ties: lower ``prio``)."""
    offsets, strides = space.offsets.ravel(), space.strides.ravel()
    assert space.flat is not None
    flat = space.flat

    def cost(lo: np.ndarray, hi: np.ndarray) -> float:
        total = 0.0
        for q in range(lo.shape[0]):  # summed from the first QI, as the kernel does
            total += flat[offsets[q] + lo[q] * strides[q] + hi[q]]
        return total

    best, price = [], []
    for x in range(len(counts)):
        if counts[x] >= k:
            best.append(-1)
            price.append(np.inf)
            continue
        need = k - counts[x]
        priced = []
        for p in range(len(counts)):
            if p == x or (unit_codes[p] != unit_codes[x]).sum() > 2:
                continue
            lends = counts[p] >= k and counts[p] - need >= k
            taken = need if lends else counts[p]
            lo, hi = np.minimum(unit_codes[x], unit_codes[p]), np.maximum(unit_codes[x], unit_codes[p])
            value = (counts[x] + taken) * cost(lo, hi)
            value -= counts[x] * cost(unit_codes[x], unit_codes[x]) + taken * cost(unit_codes[p], unit_codes[p])
            priced.append((value, prio[p], p))
        if not priced:
            best.append(-1)
            price.append(np.inf)
            continue
        low = min(v for v, _, _ in priced)
        best.append(min((r, p) for v, r, p in priced if v <= low + 1e-9)[1])
        price.append(low)
    return best, price


@compiled
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 7),
            st.integers(0, 7),
            st.integers(0, 2),
            st.sampled_from(COLOR.leaves.tolist()),
            st.integers(1, 8),
        ),
        min_size=2,
        max_size=60,
    ),
    st.integers(2, 6),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_first_prices_come_from_the_units_differing_in_at_most_two_qis(
    monkeypatch: pytest.MonkeyPatch, records: list[tuple[int, int, int, str, int]], k: int, seed: int, wide: bool
) -> None:
    # Issue 28 (tp28d): phase 1 first prices each small unit among the units differing from it in at
    # most two QIs (per QI pair, its run of equal other codes), not over every cluster: the same
    # partners and prices as trying every such unit (runs of at most 64 here: a window of 64 covers
    # them), with a lower priority winning a tie. Records repeat (big units lend), so a far unit may win.
    monkeypatch.setattr(cluster_merge_kernel, "_NEAR", 64)
    if wide:  # the runs from dense ranks of the other QIs, as for codes too wide for one int64 key (tp28e)
        monkeypatch.setattr(cluster_merge_kernel, "_KEY_LIMIT", 0)
    rows = [record[:4] for record in records for _ in range(record[4])]
    df = pd.DataFrame(rows, columns=["a", "b", "c", "color"])
    dimensions = [_dimension(df[c], None)[0] for c in ("a", "b", "c")] + [_dimension(df["color"], COLOR)[0]]
    space = CostSpace(dimensions)
    assert space.flat is not None
    tuples, counts = np.unique(space.codes.T, axis=0, return_counts=True)
    unit_codes = np.ascontiguousarray(tuples.astype(np.int64))
    prio = np.random.default_rng(seed).random(len(counts))
    best, price, _ = cluster_merge_kernel._near_prices(
        unit_codes, counts, space.flat, space.offsets.ravel().astype(np.int64),
        space.strides.ravel().astype(np.int64), float(k), prio, cluster_merge_kernel._SLACK,
    )  # fmt: skip
    naive_best, naive_price = _naive_first_prices(unit_codes, counts, space, k, prio)
    assert best.tolist() == naive_best
    assert np.allclose(price, naive_price, rtol=0, atol=1e-9) and (np.isinf(price) == np.isinf(naive_price)).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_the_outward_stop_runs_only_where_wider_spans_cost_no_less(size: int, seed: int, bump: bool) -> None:
    # Issue 28 (tp28h): a full pricing reads the buckets outwards from x's span of the first QI and
    # stops a side at the first code whose widened span is dearer than the best so far; that is
    # sound only when no span costs less than one inside it, checked here against every containment.
    rng = np.random.default_rng(seed)
    table = np.zeros((size, size))
    for low in range(size):
        for high in range(low, size):
            table[low, high] = high - low + rng.integers(0, 2)  # wider spans cost more, ±1 of noise
    if bump:
        table[rng.integers(0, size), rng.integers(0, size)] += 3.0
    flat = np.concatenate(([7.0], table.ravel()))
    naive = all(
        table[outer_low, outer_high] >= table[low, high]
        for low in range(size)
        for high in range(low, size)
        for outer_low in range(low + 1)
        for outer_high in range(high, size)
    )
    assert cluster_merge_kernel._widening(flat, 1, size) == naive
