"""Full-domain lattice search: the optimal search equals an exhaustive scan, and outputs hold their models."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st
from lattice_problems import Problem, grouping_rows, problems

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize_full_domain, generalization_lattice
from privacy_plugins.core.anonymize.generalization_lattice import (
    LatticeSearch,
    exhaustive_search,
    optimal_search,
    samarati_search,
)
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    KAnonymity,
    PersonalizedLeakage,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from privacy_plugins.errors import InfeasibleAnonymizationError
from tests.unnamed_columns import other_columns

model_sets = st.sampled_from(
    [
        [KAnonymity(2)],
        [KAnonymity(3)],
        [DistinctLDiversity("s", 2)],
        [KAnonymity(2), DistinctLDiversity("s", 2)],
        [FrequencyLDiversity("s", 1.5)],
        [EntropyLDiversity("s", 1.8)],
        [RecursiveCLDiversity("s", 2, 2)],
        [TCloseness("s", 0.3)],
        [TCloseness("x", 0.25, "ordered")],
        [PersonalizedLeakage("s", bound=0.5)],
        [PersonalizedLeakage("s", bound_column="bound")],
        [KAnonymity(2), EntropyLDiversity("s", 1.5), TCloseness("s", 0.4)],
    ]
)


def search_for(problem: Problem, models: list[PrivacyModel], max_suppressed: int, metric: str = "ncp") -> LatticeSearch:
    columns = list(dict.fromkeys([m.sensitive_attribute for m in models if m.sensitive_attribute] + ["bound"]))
    snapshot = Snapshot.build(
        problem.frame,
        quasi_identifiers=problem.quasi_identifiers,
        hierarchies=problem.hierarchies,
        model_columns=columns,
    )
    return LatticeSearch(snapshot, models, max_suppressed, metric)  # type: ignore[arg-type]


@given(
    problems(),
    model_sets,
    st.sampled_from([0.0, 0.1, 0.3]),
    st.sampled_from(["ncp", "lm", "discernibility", "height"]),
    st.booleans(),
)
def test_optimal_equals_exhaustive(
    problem: Problem, models: list[PrivacyModel], fraction: float, metric: str, classify_first: bool
) -> None:
    """Also on the path large lattices take with suppression: classify first, then scan."""
    with patch.object(generalization_lattice, "CLASSIFY_WITH_SUPPRESSION_ABOVE", 0 if classify_first else 10**9):
        check_optimal_equals_exhaustive(problem, models, fraction, metric)


def check_optimal_equals_exhaustive(problem: Problem, models: list[PrivacyModel], fraction: float, metric: str) -> None:
    max_suppressed = int(fraction * len(problem.frame))
    reference = exhaustive_search(search_for(problem, models, max_suppressed, metric))
    found = optimal_search(search_for(problem, models, max_suppressed, metric))
    note(f"reference={reference.best} found={found.best}")
    if reference.best is None:
        assert found.best is None
        return
    assert found.best is not None
    assert found.best.loss == pytest.approx(reference.best.loss, abs=1e-12)
    assert found.best.node == reference.best.node
    assert found.nodes_checked <= found.lattice_size


@given(
    problems(),
    st.sampled_from([[KAnonymity(2)], [KAnonymity(3), DistinctLDiversity("s", 2)]]),
    st.sampled_from([0.0, 0.2]),
)
def test_samarati_finds_the_lowest_satisfying_height_for_monotone_models(
    problem: Problem, models: list[PrivacyModel], fraction: float
) -> None:
    max_suppressed = int(fraction * len(problem.frame))
    every = search_for(problem, models, max_suppressed)
    exhaustive_search(every)
    satisfying = [o for o in every.checked.values() if o.satisfied]
    found = samarati_search(search_for(problem, models, max_suppressed))
    if not satisfying:
        assert found.best is None
        return
    assert found.best is not None
    lowest = min(sum(o.node) for o in satisfying)
    assert sum(found.best.node) == lowest
    assert found.best.loss == pytest.approx(min(o.loss for o in satisfying if sum(o.node) == lowest))


@given(problems(), model_sets, st.sampled_from([0.0, 0.15]), st.sampled_from(["optimal", "samarati"]))
def test_every_output_satisfies_its_models(
    problem: Problem, models: list[PrivacyModel], fraction: float, algorithm: str
) -> None:
    assume(all(m.k <= len(problem.frame) for m in models if isinstance(m, KAnonymity)))
    try:
        result = anonymize_full_domain(
            problem.frame,
            quasi_identifiers=problem.quasi_identifiers,
            hierarchies=problem.hierarchies,
            models=models,
            identifiers=["pid"],
            insensitive=other_columns(problem.frame, models, problem.quasi_identifiers, ["pid"]),
            suppression_limit=fraction,
            algorithm=algorithm,  # type: ignore[arg-type]
        )
    except InfeasibleAnonymizationError:
        return
    assert result.passed
    assert result.rows_in == result.rows_out + result.suppressed == len(problem.frame)
    assert result.suppressed <= int(fraction * len(problem.frame) + 1e-9)
    assert "pid" not in result.table.columns
    assert len(result.table) == result.rows_out
    # Re-measure the published table with the plain measure() path as well.
    report = pp.measure(result.table, quasi_identifiers=problem.quasi_identifiers, sensitive_attributes=["s", "x"])
    for model in models:
        if isinstance(model, KAnonymity):
            assert report.k >= model.k
        if isinstance(model, DistinctLDiversity):
            assert report.for_attribute("s").distinct_l >= model.l
        if isinstance(model, EntropyLDiversity):
            assert report.for_attribute("s").entropy_l >= model.l - 1e-9
        if isinstance(model, TCloseness):
            assert report.for_attribute(model.sensitive_attribute).t_closeness <= model.t + 1e-9


def test_suppression_breaks_monotonicity_of_entropy_l() -> None:
    """A satisfying node whose generalization fails: pruning upwards would be wrong here.

    At the bottom node, the homogeneous class (q=1, 6×'a') violates entropy-2 and is
    suppressed (6 rows ≤ limit); the class {a, b} passes (exp H = 2). One level up both
    merge into one class dominated by 'a' (exp H ≈ 1.46) that violates, and suppressing
    it costs all 8 rows.
    """
    frame = pd.DataFrame({"q": [0, 0, 1, 1, 1, 1, 1, 1], "s": ["a", "b", "a", "a", "a", "a", "a", "a"]})
    hierarchy = Hierarchy.from_rows("q", [["0", "*"], ["1", "*"]])
    snapshot = Snapshot.build(frame, quasi_identifiers=["q"], hierarchies={"q": hierarchy}, model_columns=["s"])
    search = LatticeSearch(snapshot, [EntropyLDiversity("s", 2)], max_suppressed=6)
    assert not search.monotone
    assert search.check((0,)).satisfied
    assert not search.check((1,)).satisfied
    result = optimal_search(LatticeSearch(snapshot, [EntropyLDiversity("s", 2)], max_suppressed=6))
    assert result.best is not None and result.best.node == (0,)


def test_per_record_bounds_are_not_monotone_even_without_suppression() -> None:
    """Merging a satisfying class with a lax one pushes a strict record over its bound."""
    frame = pd.DataFrame({"q": [0, 0, 1, 1], "s": ["x", "y", "x", "x"], "bound": [0.5, 0.5, 1.0, 1.0]})
    hierarchy = Hierarchy.from_rows("q", [["0", "*"], ["1", "*"]])
    snapshot = Snapshot.build(
        frame, quasi_identifiers=["q"], hierarchies={"q": hierarchy}, model_columns=["s", "bound"]
    )
    search = LatticeSearch(snapshot, [PersonalizedLeakage("s", bound_column="bound")], max_suppressed=0)
    assert search.check((0,)).satisfied
    assert not search.check((1,)).satisfied


def test_t_closeness_with_suppression_is_checked_against_the_published_distribution() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"q": rng.integers(0, 6, 300), "s": rng.choice(["a", "b", "c"], 300, p=[0.6, 0.3, 0.1])})
    hierarchy = Hierarchy.from_rows("q", [[str(v), f"g{v // 2}", "*"] for v in range(6)])
    result = anonymize_full_domain(
        frame,
        quasi_identifiers=["q"],
        hierarchies={"q": hierarchy},
        models=[TCloseness("s", 0.05)],
        suppression_limit=0.3,
    )
    assert pp.t_closeness(result.table, quasi_identifiers=["q"], sensitive_attribute="s") <= 0.05 + 1e-9


def test_ordered_t_closeness_after_suppression_uses_the_published_domain() -> None:
    """Regression: a value only held by suppressed records must leave the ordered EMD's domain.

    Before suppression both 4-record classes are within 0.33 of the input (0.324 and 0.25);
    the singleton holding 9 is suppressed. With 9 still in the domain, class A's EMD to the
    published table is 0.75/3 = 0.25 ≤ 0.33; on the published values (0, 1, 2) it is
    0.75/2 = 0.375 > 0.33, so the bottom node must fail.
    """
    frame = pd.DataFrame({"q": [0, 0, 0, 0, 1, 1, 1, 1, 2], "x": [0, 0, 0, 1, 2, 2, 2, 1, 9]})
    hierarchy = Hierarchy.from_rows("q", [["0", "*"], ["1", "*"], ["2", "*"]])
    snapshot = Snapshot.build(frame, quasi_identifiers=["q"], hierarchies={"q": hierarchy}, model_columns=["x"])
    models = [KAnonymity(2), TCloseness("x", 0.33, "ordered")]
    assert not LatticeSearch(snapshot, models, max_suppressed=1).check((0,)).satisfied
    result = anonymize_full_domain(
        frame, quasi_identifiers=["q"], hierarchies={"q": hierarchy}, models=models, suppression_limit=0.12
    )
    assert result.passed and result.details.levels == {"q": 1}


@given(
    problems(),
    st.sampled_from(["s", "x"]),
    st.sampled_from([0.05, 0.15, 0.3, 0.5]),
    st.sampled_from(["equal", "ordered"]),
)
def test_t_closeness_suppression_bound_holds_below_every_node(
    problem: Problem, attribute: str, t: float, distance: str
) -> None:
    """Every specialization N of M suppresses at least M's bound (against the same table distribution)."""
    model = TCloseness(attribute, t, distance)
    search = search_for(problem, [model], 0)
    nodes = list(search.nodes())
    suppressed = {}
    bound = {}
    for node in nodes:
        classes = search.snapshot.classes(node)
        suppressed[node] = int(classes.sizes[model.violating_classes(classes)].sum())
        bound[node] = model.suppression_bound(classes)
    for high in nodes:
        for low in nodes:
            if all(a <= b for a, b in zip(low, high, strict=True)):
                assert suppressed[low] >= bound[high] - 1e-9


@given(
    problems(max_rows=60),
    st.sampled_from(["s", "x"]),
    st.sampled_from([0.05, 0.15, 0.3]),
    st.sampled_from(["equal", "ordered"]),
    st.sampled_from([0.05, 0.1, 0.3]),
    st.booleans(),
)
def test_optimal_equals_exhaustive_with_t_closeness_pruning(
    problem: Problem, attribute: str, t: float, distance: str, fraction: float, with_k: bool
) -> None:
    """The suppression bound prunes t-closeness searches; the optimum stays that of an exhaustive scan."""
    models: list[PrivacyModel] = [TCloseness(attribute, t, distance)] + ([KAnonymity(2)] if with_k else [])
    check_optimal_equals_exhaustive(problem, models, fraction, "ncp")


def test_t_closeness_suppression_bound_skips_nodes() -> None:
    """Sensitive values tied to q0: fine q0 levels fail by their bound and are never checked."""
    rng = np.random.default_rng(1)
    n = 1000
    frame = pd.DataFrame({"q0": rng.integers(0, 16, n), "q1": rng.integers(0, 9, n), "q2": rng.integers(0, 8, n)})
    frame["s"] = np.where(rng.random(n) < 0.4, frame["q0"] % 4, rng.integers(0, 4, n)).astype(str)
    frame["bound"] = 1.0
    hierarchies = {
        "q0": Hierarchy.from_rows("q0", grouping_rows(16, [2, 2, 2])),
        "q1": Hierarchy.from_rows("q1", grouping_rows(9, [3])),
        "q2": Hierarchy.from_rows("q2", grouping_rows(8, [2, 2])),
    }
    problem = Problem(frame, ["q0", "q1", "q2"], hierarchies)
    for t in (0.05, 0.1):
        models: list[PrivacyModel] = [TCloseness("s", t)]
        found = optimal_search(search_for(problem, models, 50))
        reference = exhaustive_search(search_for(problem, models, 50))
        assert found.best is not None and reference.best is not None
        assert found.best.node == reference.best.node
        with patch.object(TCloseness, "bounds_suppression", False):
            unpruned = optimal_search(search_for(problem, models, 50))
        assert found.nodes_checked < unpruned.nodes_checked * 0.6


@given(
    problems(),
    st.sampled_from([[KAnonymity(1)], [KAnonymity(2)], [KAnonymity(3)], [KAnonymity(2), KAnonymity(4)]]),
    st.sampled_from([0.0, 0.1, 0.3]),
    st.sampled_from(["ncp", "lm", "discernibility", "height"]),
)
def test_a_check_by_class_sizes_equals_the_check_on_the_classes(
    problem: Problem, models: list[PrivacyModel], fraction: float, metric: str
) -> None:
    """k-anonymity is checked by one bincount of class keys: same verdict, suppression and loss on every node."""
    search = search_for(problem, models, int(fraction * len(problem.frame)), metric)
    assert search.size_threshold == max(m.minimum_class_size for m in models)
    for node in search.nodes():
        by_size = search._check_by_size(node, search.size_threshold)
        assert by_size is not None  # small lattices: the keys always fit a dense count
        reference = search._check_classes(node)
        assert (by_size.satisfied, by_size.suppressed, by_size.relaxation_failed) == (
            reference.satisfied,
            reference.suppressed,
            reference.relaxation_failed,
        )
        assert by_size.loss == pytest.approx(reference.loss, abs=1e-12) or by_size.loss == reference.loss
        classes = search.snapshot.classes(node)
        for model in models:  # what judged_by_size promises
            assert np.array_equal(model.violating_classes(classes), classes.sizes < model.minimum_class_size)


@given(problems())
def test_models_reading_more_than_sizes_keep_the_check_on_the_classes(problem: Problem) -> None:
    for models in ([KAnonymity(2), DistinctLDiversity("s", 2)], [TCloseness("s", 0.3)], [EntropyLDiversity("s", 1.5)]):
        assert search_for(problem, models, 0).size_threshold is None


@given(problems(), st.sampled_from([[KAnonymity(2)], [KAnonymity(3), DistinctLDiversity("s", 2)]]), st.data())
def test_utility_over_class_groups_equals_the_metrics_over_every_record(
    problem: Problem, models: list[PrivacyModel], data: st.DataObject
) -> None:
    """_utility sums over (class, suppressed) groups; the metric functions over records must agree."""
    from privacy_plugins.core.anonymize.full_domain import _suppressed_units, _utility
    from privacy_plugins.core.metrics.information_loss import generalization_costs, ileft, ncp

    search = search_for(problem, models, 0)
    node = data.draw(st.sampled_from(list(search.nodes())))
    snapshot = search.snapshot
    units = _suppressed_units(snapshot, node, models)
    got = _utility(snapshot, node, units, k=2, n_sensitive=1)
    rows = units[snapshot.unit_of_row]
    leaves = [codes[snapshot.unit_of_row] for codes in snapshot.leaf_codes]
    hierarchies = snapshot.hierarchies
    costs = [generalization_costs(h, leaves[qi], level) for qi, (h, level) in enumerate(zip(hierarchies, node))]
    counts = [h.leaf_counts[level][h.codes[level][leaves[qi]]] for qi, (h, level) in enumerate(zip(hierarchies, node))]
    assert got.ncp == pytest.approx(ncp(costs, rows), abs=1e-12)
    assert got.ileft == pytest.approx(ileft(counts, [h.n_leaves for h in hierarchies], rows, n_ungeneralized=1))
    classes = snapshot.classes(node)
    published = np.bincount(classes.class_of_row[~units], weights=snapshot.weights[~units], minlength=classes.n_classes)
    published = published[published > 0]
    assert got.discernibility == float((published**2).sum()) + float(rows.sum()) * len(rows)
