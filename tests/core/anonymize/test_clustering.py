"""Clustering anonymizers (k-member, two-phase A/B): properties, the relaxing and splitting phases, seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, anonymizer_names
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, GreedyStats, boxes, greedy_clusters
from privacy_plugins.core.anonymize.cluster_merge import merge_clusters
from privacy_plugins.core.anonymize.cluster_refine import RefineStats, refine_clusters
from privacy_plugins.core.anonymize.clustering import ClusterDetails, _Checker, _split_b, anonymize_clustering
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.registry import anonymization_request as _request
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import DistinctLDiversity, EntropyLDiversity, KAnonymity, PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from tests.unnamed_columns import other_columns

COLOR = Hierarchy.from_rows(
    "color",
    [
        ["red", "warm", "*"],
        ["blue", "cold", "*"],
        ["orange", "warm", "*"],
        ["green", "cold", "*"],
        ["yellow", "warm", "*"],
    ],
)
VARIANTS = [("k-member", {}), ("two-phase", {"split": "a"}), ("two-phase", {"split": "b"})]


def _run(df: pd.DataFrame, models: list[PrivacyModel], algorithm: str, seed: int = 0, **options: str):  # type: ignore[no-untyped-def]
    return anonymize(
        df,
        algorithm=algorithm,
        quasi_identifiers=[q for q in ("age", "color") if q in df.columns],
        hierarchies={"color": COLOR} if "color" in df.columns else {},
        models=models,
        seed=seed,
        insensitive=other_columns(df, models, ["age", "color"]),
        **options,
    )


def test_registered_with_the_split_option() -> None:
    assert {"k-member", "two-phase"} <= set(anonymizer_names())
    df = pd.DataFrame({"age": [1, 2, 3, 4]})
    with pytest.raises(ConfigurationError, match="split"):
        _run(df, [KAnonymity(2)], "two-phase", split="c")


@pytest.mark.parametrize(("algorithm", "options"), VARIANTS)
def test_labels_costs_and_details(algorithm: str, options: dict[str, str]) -> None:
    df = pd.DataFrame({"age": [1, 2, 3, 10, 11, 12], "color": ["red", "orange", "yellow", "blue", "green", "blue"]})
    result = _run(df, [KAnonymity(3)], algorithm, **options)
    assert result.table["age"].tolist() == ["[1-3]"] * 3 + ["[10-12]"] * 3
    assert result.table["color"].tolist() == ["warm"] * 3 + ["cold"] * 3
    # NCP: age spans 2/11 per record; warm (3 leaves) and cold (2 leaves) of 5 leaves.
    expected = (2 / 11 + (0.5 * 3 + 0.25 * 3) / 6) / 2
    assert result.utility.ncp == pytest.approx(expected)
    assert isinstance(result.details, ClusterDetails)
    details = result.details.to_dict()
    assert details["kind"] == "clusters" and details["seed"] == 0 and details["n_clusters"] == 2
    assert details["split"] == options.get("split") and result.suppressed == 0


def _space_and_checker(ages: list[int], k: int) -> tuple[CostSpace, _Checker, pd.DataFrame]:
    df = pd.DataFrame({"age": ages})
    request = _request(
        df, quasi_identifiers=["age"], models=[KAnonymity(k)], suppression_limit=0.0, hierarchies=None,
        sensitive_attributes=None, identifiers=(), seed=0, progress=None,
    )  # fmt: skip
    dimension, _ = _dimension(df["age"], None)
    return CostSpace([dimension]), _Checker(request, df), df


@pytest.mark.parametrize("seed", range(6))
def test_relaxing_lets_a_cluster_grow_past_k(seed: int) -> None:
    # Whatever the start, the first cluster holds an end (0 or 10) and a 5; its box then
    # contains every other 5, which relaxing absorbs at no cost: one cluster of 6 > k = 2.
    space, checker, _ = _space_and_checker([0, 10, 5, 5, 5, 5], 2)
    stats = GreedyStats()
    rows = np.arange(6)
    relaxed = greedy_clusters(space, checker, rows, np.random.default_rng(seed), min_size=2, relax=True, stats=stats)
    assert relaxed.tolist() == [0] * 6 and stats.absorbed == 3 and stats.leftovers == 1
    plain = greedy_clusters(space, checker, rows, np.random.default_rng(seed), min_size=2, relax=False)
    assert sorted(np.bincount(plain).tolist()) == [2, 2, 2]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("split", ["a", "b"])
def test_a_cluster_of_2k_plus_1_splits_into_two(seed: int, split: str) -> None:
    space, checker, _ = _space_and_checker([0, 1, 2, 8, 9], 2)
    rows, rng = np.arange(5), np.random.default_rng(seed)
    if split == "a":
        groups = greedy_clusters(space, checker, rows, rng, min_size=2, relax=False)
    else:
        groups = _split_b(space, checker, rows, rng)
    assert len(set(groups.tolist())) == 2
    assert {frozenset(np.flatnonzero(groups == g).tolist()) for g in set(groups.tolist())} == {
        frozenset({0, 1, 2}),
        frozenset({3, 4}),
    }


def test_merging_grows_a_cluster_past_k_when_that_is_cheapest() -> None:
    # k = 2, ages 0,0,1,20,21 (span 21). Prices: {20}+{21} 2/21; {1} into {0,0} 3/21 (the
    # {0,0} pair has no record to lend); so {20,21} forms, then {0,0,1} grows past k.
    space, checker, _ = _space_and_checker([0, 0, 1, 20, 21], 2)
    stats = GreedyStats()
    groups = merge_clusters(space, checker, np.arange(5), np.random.default_rng(0), min_size=2, stats=stats)
    assert {frozenset(np.flatnonzero(groups == g).tolist()) for g in set(groups.tolist())} == {
        frozenset({0, 1, 2}),
        frozenset({3, 4}),
    }
    assert stats.steps == 2


@pytest.mark.parametrize("seed", range(4))
def test_a_valid_cluster_lends_its_closest_records(seed: int) -> None:
    # k = 2, ages 0,10,5,5,5,5: the four 5s can spare two records, so each end borrows one 5
    # (price 2 · 5/10 each) instead of merging whole (price 5 · 5/10): {0,5} {10,5} {5,5}.
    space, checker, _ = _space_and_checker([0, 10, 5, 5, 5, 5], 2)
    groups = merge_clusters(space, checker, np.arange(6), np.random.default_rng(seed), min_size=2)
    sizes = np.bincount(groups)
    assert sorted(sizes.tolist()) == [2, 2, 2]
    assert groups[0] != groups[1] and len(set(groups[2:].tolist())) == 3


@pytest.mark.parametrize("split", ["a", "b"])
def test_two_phase_splits_a_big_phase1_cluster(split: str) -> None:
    # Five equal records form one phase-1 cluster of 5 >= 2k (k = 2): phase 2 takes it; A
    # re-clusters it (2 + 3), B has no width to bisect and keeps it.
    df = pd.DataFrame({"age": [3, 3, 3, 3, 3, 9, 9]})
    result = _run(df, [KAnonymity(2)], "two-phase", split=split)
    assert isinstance(result.details, ClusterDetails)
    assert result.details.clusters_after_phase1 == 2 and result.details.big_clusters_split == 1
    assert result.details.n_clusters == {"a": 3, "b": 2}[split] and result.details.absorbed == 3
    assert result.utility.ncp == 0.0 and result.table["age"].tolist() == df["age"].astype(str).tolist()


def test_local_search_moves_a_record_to_the_cheaper_cluster() -> None:
    # k = 2, ages 0..11 span 11: {0,1,9} {10,11}. Moving 9 saves 3·9/11 − 2·1/11 and adds
    # 3·2/11 − 2·1/11 (gain 21/11): {0,1} {9,10,11}. Nothing else gains.
    space, checker, _ = _space_and_checker([0, 1, 9, 10, 11], 2)
    stats = RefineStats()
    start = np.array([0, 0, 0, 1, 1])
    moved = refine_clusters(space, checker, np.arange(5), start, np.random.default_rng(0), min_size=2, stats=stats)
    assert moved.tolist() == [0, 0, 1, 1, 1] and stats.moves == 1 and stats.rounds == 2


def test_local_search_dissolves_a_cluster_whose_records_fit_elsewhere() -> None:
    # k = 2, span 22: {0,4} {18,22} {2,20}; no cluster can give a record. Dissolving {2,20}
    # (loss 2·18/22) adds 3·4/22 − 2·4/22 twice (8/22): {0,2,4} {18,20,22}.
    space, checker, _ = _space_and_checker([0, 4, 18, 22, 2, 20], 2)
    stats = RefineStats()
    start = np.array([0, 0, 1, 1, 2, 2])
    moved = refine_clusters(space, checker, np.arange(6), start, np.random.default_rng(0), min_size=2, stats=stats)
    assert moved.tolist() == [0, 0, 1, 1, 0, 1] and stats.dissolved == 1 and stats.moves == 0
    assert _loss(space, moved) == pytest.approx(24 / 22)


def _loss(space: CostSpace, group: np.ndarray) -> float:
    low, high = boxes(space.codes, group, int(group.max()) + 1)
    return float((space.box_costs(low, high) * np.bincount(group)).sum())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=6, max_size=60), st.integers(2, 4), st.integers(0, 3))
def test_local_search_never_raises_the_loss_nor_breaks_k(ages: list[int], k: int, seed: int) -> None:
    if len(ages) < k:
        return
    space, checker, _ = _space_and_checker(ages, k)
    rows, rng = np.arange(len(ages)), np.random.default_rng(seed)
    start = greedy_clusters(space, checker, rows, rng, min_size=k, relax=True)
    moved = refine_clusters(space, checker, rows, start, rng, min_size=k)
    assert np.bincount(moved).min() >= k and moved.max() <= start.max()  # dense ids, maybe fewer
    assert _loss(space, moved) <= _loss(space, start) + 1e-9


# k-member adds each of the 500 records once; two-phase counts its three passes over them.
@pytest.mark.parametrize(
    ("algorithm", "options", "total"),
    [("k-member", {}, 500), ("two-phase", {"split": "a"}, 1500), ("two-phase", {"split": "b"}, 1500)],
)
def test_progress_is_reported_up_to_the_total(algorithm: str, options: dict[str, str], total: int) -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"age": rng.integers(0, 60, 500), "color": rng.choice(COLOR.leaves, 500)})
    calls: list[tuple[int, int]] = []
    anonymize(df, algorithm=algorithm, quasi_identifiers=["age", "color"], hierarchies={"color": COLOR},
              models=[KAnonymity(5)], progress=lambda done, total: calls.append((done, total)), **options)  # fmt: skip
    assert 3 <= len(calls) <= 250 and all(t == total for _, t in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == total


def test_distinct_l_closes_a_cluster_only_when_diverse() -> None:
    df = pd.DataFrame({"age": list(range(12)), "disease": ["flu"] * 6 + ["hiv", "cancer"] * 3})
    for algorithm, options in VARIANTS:
        result = anonymize(df, algorithm=algorithm, quasi_identifiers=["age"],
                           models=[KAnonymity(2), DistinctLDiversity("disease", 2)], **options)  # fmt: skip
        assert result.passed and result.measures["l"] >= 2


def test_infeasible_models_are_reported() -> None:
    df = pd.DataFrame({"age": [1, 2, 3, 4], "disease": ["flu", "flu", "hiv", "hiv"]})
    with pytest.raises(InfeasibleAnonymizationError, match="whole table"):
        anonymize(df, algorithm="k-member", quasi_identifiers=["age"], models=[DistinctLDiversity("disease", 3)])


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, list[PrivacyModel], str, dict[str, str]]:
    n = draw(st.integers(4, 40))
    ages = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    colors = draw(st.lists(st.sampled_from(COLOR.leaves.tolist()), min_size=n, max_size=n))
    disease = draw(st.lists(st.sampled_from(["flu", "hiv", "cancer"]), min_size=n, max_size=n))
    k = draw(st.integers(1, 5))
    models: list[PrivacyModel] = [KAnonymity(k)]
    extra = draw(st.sampled_from(["none", "distinct", "entropy"]))
    if extra == "distinct":
        models.append(DistinctLDiversity("disease", 2))
    elif extra == "entropy":
        models.append(EntropyLDiversity("disease", 1.5))
    algorithm, options = draw(st.sampled_from(VARIANTS))
    return pd.DataFrame({"age": ages, "color": colors, "disease": disease}), models, algorithm, options


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(0, 3))
def test_every_output_satisfies_the_models_when_remeasured(case: tuple, seed: int) -> None:  # type: ignore[type-arg]
    df, models, algorithm, options = case
    whole = EquivalenceClasses.from_class_ids(df, ("age", "color"), np.zeros(len(df), dtype=np.int64), 1)
    if any(model.violating_classes(whole)[0] for model in models) or len(df) < models[0].minimum_class_size:
        with pytest.raises((InfeasibleAnonymizationError, ConfigurationError)):
            _run(df, models, algorithm, seed, **options)
        return
    result = _run(df, models, algorithm, seed, **options)
    assert result.rows_in == result.rows_out == len(df) and result.suppressed == 0
    classes = EquivalenceClasses.from_frame(result.table, ["age", "color"])
    for model in models:
        assert not model.violating_classes(classes).any()
    assert result.table["disease"].tolist() == df["disease"].tolist()


def test_seeded_runs_are_reproducible_and_seeds_may_differ() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.integers(0, 40, 200), "color": rng.choice(COLOR.leaves, 200)})
    for algorithm, options in VARIANTS:
        runs = {seed: _run(df, [KAnonymity(4)], algorithm, seed, **options) for seed in range(4)}
        again = _run(df, [KAnonymity(4)], algorithm, 2, **options)
        timing = {"seconds_phase1", "seconds_phase2"}
        same = {key: value for key, value in again.details.to_dict().items() if key not in timing}
        assert again.table.equals(runs[2].table)
        assert same == {key: value for key, value in runs[2].details.to_dict().items() if key not in timing}
        assert len({tuple(r.table["age"]) for r in runs.values()}) > 1


def test_shorthand_matches_anonymize() -> None:
    df = pd.DataFrame({"age": [1, 2, 3, 10, 11, 12, 30, 31]})
    short = anonymize_clustering(df, quasi_identifiers=["age"], models=[KAnonymity(2)], method="k-member", seed=3)
    long = anonymize(df, algorithm="k-member", quasi_identifiers=["age"], models=[KAnonymity(2)], seed=3)
    assert short.table.equals(long.table)


def test_k_member_takes_records_with_equal_quasi_identifiers_in_bulk() -> None:
    # Six equal records, k = 3: each cluster's seed brings the two others of its unit at
    # once (no growth step); record by record it took two steps per cluster.
    space, checker, _ = _space_and_checker([5] * 6, 3)
    stats = GreedyStats()
    groups = greedy_clusters(space, checker, np.arange(6), np.random.default_rng(0), min_size=3, relax=False,
                             stats=stats)  # fmt: skip
    assert sorted(np.bincount(groups).tolist()) == [3, 3] and stats.steps == 0 and stats.leftovers == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=5, max_size=40), st.integers(1, 5), st.integers(0, 3))
def test_the_size_only_check_agrees_with_the_models(ages: list[int], k: int, seed: int) -> None:
    # k-anonymity declares it is judged by class size: the checker counts; it must say what the model says.
    _, checker, _ = _space_and_checker(ages, k)
    assert checker.by_size
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(ages), size=rng.integers(1, len(ages) + 1), replace=False))
    n_groups = int(rng.integers(1, rows.shape[0] + 1))
    group = rng.integers(0, n_groups, rows.shape[0])
    counted = checker(rows, group, n_groups)
    checker.by_size = False
    assert counted.tolist() == checker(rows, group, n_groups).tolist()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from(COLOR.leaves.tolist())), min_size=2, max_size=30),
    st.integers(1, 4),
)
def test_refine_prices_records_against_boxes_exactly(records: list[tuple[int, str]], n_groups: int) -> None:
    from privacy_plugins.core.anonymize.cluster_refine import _joined

    df = pd.DataFrame(records, columns=["age", "color"])
    space = CostSpace([_dimension(df["age"], None)[0], _dimension(df["color"], COLOR)[0]])
    group = np.arange(len(df)) % min(n_groups, len(df))
    low, high = boxes(space.codes, group, int(group.max()) + 1)
    block = np.arange(len(df))
    priced = _joined(space, space.codes, low, high, block)
    for g in range(low.shape[1]):  # the flat-table path for one box agrees with the per-code path
        assert np.array_equal(
            space.join_one(low[:, g], high[:, g], space.codes), space.join_costs(low[:, g], high[:, g], space.codes)
        )
    for r in block.tolist():
        expected = space.box_costs(
            np.minimum(low, space.codes[:, r : r + 1]), np.maximum(high, space.codes[:, r : r + 1])
        )
        assert priced[r] == pytest.approx(expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from(COLOR.leaves.tolist())), min_size=1, max_size=40))
def test_first_pass_prices_units_as_the_general_union_does(records: list[tuple[int, str]]) -> None:
    from privacy_plugins.core.anonymize.cluster_merge import _Boxes

    df = pd.DataFrame(records, columns=["age", "color"])
    space = CostSpace([_dimension(df["age"], None)[0], _dimension(df["color"], COLOR)[0]])
    box = _Boxes(space, space.codes)
    rows = box.point_rows()
    assert rows is not None
    block = np.arange(box.size.shape[0])
    assert np.array_equal(box.point_union(rows, block), box.union(block))
    # The kept tables follow merges and compaction: equal to tables built afresh.
    for a in range(0, box.size.shape[0] - 1, 3):
        box.absorb(a, a + 1)
    box.compact()
    assert box.rows is not None
    assert all(np.array_equal(kept, fresh) for kept, fresh in zip(box.rows, box.point_rows() or [], strict=True))
    points = np.flatnonzero((box.low == box.high).all(axis=0))
    assert np.array_equal(box.point_union(box.rows, points), box.union(points))


def test_pricing_without_the_memory_bounded_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # Past their memory bounds the span / point tables are not built: the same prices, valid clusters.
    import privacy_plugins.core.anonymize.cluster_merge as merge_module
    import privacy_plugins.core.anonymize.cluster_refine as refine_module

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(0, 40, 120), "color": rng.choice(COLOR.leaves, 120)})
    space = CostSpace([_dimension(df["age"], None)[0], _dimension(df["color"], COLOR)[0]])
    group = np.arange(120) % 17
    low, high = boxes(space.codes, group, 17)
    tabled = refine_module._joined(space, space.codes, low, high, np.arange(120))
    monkeypatch.setattr(refine_module, "_SPAN_ROWS_LIMIT", 0)
    monkeypatch.setattr(merge_module, "_POINT_ROWS_LIMIT", 0)
    assert np.array_equal(refine_module._joined(space, space.codes, low, high, np.arange(120)), tabled)
    assert merge_module._Boxes(space, space.codes).rows is None
    result = _run(df, [KAnonymity(4)], "two-phase", split="b")
    assert result.passed and EquivalenceClasses.from_frame(result.table, ["age", "color"]).sizes.min() >= 4
