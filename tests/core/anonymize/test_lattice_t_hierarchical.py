"""The full-domain lattice with hierarchical-distance t-closeness: its pruning keeps the exhaustive optimum."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lattice_problems import Problem, problems
from test_generalization_lattice import check_optimal_equals_exhaustive, search_for

from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import KAnonymity, PrivacyModel, TCloseness

#: A hierarchy over the sensitive values the lattice problems draw ("a".."d").
S_HIERARCHY = Hierarchy.from_rows("s", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]])


def hierarchical(t: float) -> TCloseness:
    return TCloseness("s", t, "hierarchical", sensitive_hierarchy=S_HIERARCHY)


@settings(max_examples=40)
@given(problems(), st.sampled_from([0.05, 0.15, 0.3, 0.5]))
def test_suppression_bound_holds_below_every_node(problem: Problem, t: float) -> None:
    """Every specialization of a node suppresses at least the node's bound (the EMD is convex, ≤ 1)."""
    model = hierarchical(t)
    search = search_for(problem, [model], 0)
    nodes = list(search.nodes())
    suppressed, bound = {}, {}
    for node in nodes:
        classes = search.snapshot.classes(node)
        suppressed[node] = int(classes.sizes[model.violating_classes(classes)].sum())
        bound[node] = model.suppression_bound(classes)
    for high in nodes:
        for low in nodes:
            if all(a <= b for a, b in zip(low, high, strict=True)):
                assert suppressed[low] >= bound[high] - 1e-9


@settings(max_examples=40)
@given(problems(max_rows=60), st.sampled_from([0.05, 0.15, 0.3]), st.sampled_from([0.0, 0.1, 0.3]), st.booleans())
def test_optimal_equals_exhaustive(problem: Problem, t: float, fraction: float, with_k: bool) -> None:
    """Monotone without suppression, bounded with it: pruning never loses the exhaustive scan's optimum."""
    models: list[PrivacyModel] = [hierarchical(t)] + ([KAnonymity(2)] if with_k else [])
    check_optimal_equals_exhaustive(problem, models, fraction, "ncp")
