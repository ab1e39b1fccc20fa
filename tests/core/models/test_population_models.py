"""The issue-30 models: AverageReidentificationRisk, PopulationUniqueness, KMap.

Monotonicity is what lets the lattice prune: a model that says it is monotone must
keep holding when classes merge (generalization), and the optimal search must then
find the exhaustive search's optimum; a model that is not says so.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize.generalization_lattice import LatticeSearch, exhaustive_search, optimal_search
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.metrics.uniqueness import ClassSizeHistogram, zayatz
from privacy_plugins.core.models import (
    AverageReidentificationRisk,
    KMap,
    PopulationUniqueness,
    from_config,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError
from tests.core.anonymize.lattice_problems import problems

ROWS = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), min_size=2, max_size=40)


def grouped(rows: list[tuple[int, int]], merge: int) -> tuple[EquivalenceClasses, EquivalenceClasses]:
    """Classes over (a, b), and over (a // merge, b): a generalization merges classes, as a search groups them."""
    frame = pd.DataFrame(rows, columns=["a", "b"])
    fine = EquivalenceClasses.from_frame(frame, ["a", "b"])
    codes = [((frame["a"] // merge).to_numpy(), 5), (frame["b"].to_numpy(), 4)]
    return fine, EquivalenceClasses.from_codes(frame, ("a", "b"), codes)


@settings(max_examples=50)
@given(rows=ROWS, merge=st.integers(2, 5), bound=st.sampled_from([0.2, 0.4, 0.6]))
def test_average_risk_is_monotone_under_generalization(rows, merge, bound) -> None:
    fine, coarse = grouped(rows, merge)
    model = AverageReidentificationRisk(bound)
    assert model.observed(coarse) <= model.observed(fine)
    if model.holds(fine):
        assert model.holds(coarse)


@settings(max_examples=50)
@given(
    rows=ROWS,
    merge=st.integers(2, 5),
    k=st.integers(2, 12),
    extra=st.lists(st.integers(0, 3), min_size=20, max_size=20),
)
def test_k_map_is_monotone_in_both_forms_and_exact_against_a_reference(rows, merge, k, extra) -> None:
    fine, coarse = grouped(rows, merge)
    sample = Counter(rows)
    population = {(a, b): sample.get((a, b), 0) + extra[a * 4 + b] for a in range(5) for b in range(4)}
    table = pd.DataFrame([(a, b, c) for (a, b), c in population.items()], columns=["a", "b", "count"])
    exact = KMap(k, population="census.csv").with_population_frame(table)
    for model in (exact, KMap(k, population=0.25)):
        if model.holds(fine):
            assert model.holds(coarse)
    # reference: a record's class maps to the people of every combination its class holds
    for classes in (fine, coarse):
        members: dict[int, set[tuple[int, int]]] = {}
        for row, cls in zip(rows, classes.class_of_row.tolist(), strict=True):
            members.setdefault(cls, set()).add(row)
        want = [sum(population[c] for c in members[cls]) for cls in range(classes.n_classes)]
        assert exact.population_sizes(classes).tolist() == want
        assert exact.violating_classes(classes).tolist() == [w < k for w in want]


def test_population_uniqueness_is_not_monotone_and_says_so() -> None:
    """Zayatz rises when two classes of 2 merge into one of 4 while the sample unique stays."""
    before = zayatz(ClassSizeHistogram.from_sizes(np.array([1, 2, 2]), population_size=50)).fraction
    after = zayatz(ClassSizeHistogram.from_sizes(np.array([1, 4]), population_size=50)).fraction
    assert after is not None and before is not None and after > before
    model = PopulationUniqueness(0.01, population=0.1, estimator="zayatz")
    assert not model.is_monotonic(with_suppression=False) and not model.is_monotonic(with_suppression=True)
    assert model.monotone_relaxation(with_suppression=False) is None


@settings(max_examples=25)
@given(problem=problems(max_rows=30), choice=st.integers(0, 4), limit=st.sampled_from([0, 3]))
def test_the_optimal_search_finds_the_exhaustive_optimum_with_each_model(problem, choice, limit) -> None:
    from privacy_plugins.core.models import DeltaPresence

    model = [
        AverageReidentificationRisk(0.5),
        KMap(6, population=0.5),
        PopulationUniqueness(0.2, population=0.5),
        DeltaPresence(0.0, 0.6, "study"),
        DeltaPresence(0.2, 0.8, "study"),
    ][choice]
    frame = problem.frame.assign(study=problem.frame["x"] % 2)
    snapshot = Snapshot.build(
        frame, quasi_identifiers=problem.quasi_identifiers, hierarchies=problem.hierarchies, model_columns=model.columns
    )
    reference = exhaustive_search(LatticeSearch(snapshot, [model], limit))
    found = optimal_search(LatticeSearch(snapshot, [model], limit))
    assert (found.best is None) == (reference.best is None)
    if found.best is not None and reference.best is not None:
        assert found.best.loss == pytest.approx(reference.best.loss, abs=1e-12)


def test_the_registry_builds_them_and_refuses_bad_parameters() -> None:
    assert str(from_config("average_reidentification_risk", max=0.1)) == "average re-identification risk <= 0.1"
    assert (
        str(from_config("population_uniqueness", max=0.01, population=0.1)) == "population uniqueness (dankar) <= 0.01"
    )
    assert str(from_config("k_map", k=10, population=0.1)) == "10-map (estimated as 6-anonymity, poisson)"
    with pytest.raises(ConfigurationError, match="population_uniqueness: estimator must be one of"):
        from_config("population_uniqueness", max=0.01, population=0.1, estimator="bayes")
    with pytest.raises(
        ConfigurationError, match=r"population must be a sampling fraction in \(0, 1\] or a population size"
    ):
        from_config("population_uniqueness", max=0.01, population=2.5)
    with pytest.raises(ConfigurationError, match=r"k_map: population must be in \(0, 1\]"):
        from_config("k_map", k=3, population=1.5)
    with pytest.raises(ConfigurationError, match=r"average_reidentification_risk: max must be in \(0, 1\]"):
        from_config("average_reidentification_risk", max=0)


def test_average_risk_marks_the_classes_below_one_over_max() -> None:
    # sizes 1, 1, 2, 4 (n = 8, J = 4, J/n = 0.5): classes under 1/0.35 ≈ 2.9 go, leaving 1/4 ≤ 0.35
    frame = pd.DataFrame({"q": [1, 2, 3, 3, 4, 4, 4, 4]})
    classes = EquivalenceClasses.from_frame(frame, ["q"])
    assert AverageReidentificationRisk(0.35).violating_classes(classes).tolist() == [True, True, True, False]
    assert not AverageReidentificationRisk(0.5).violating_classes(classes).any()
    assert AverageReidentificationRisk(0.35).minimum_class_size == 3


@settings(max_examples=50)
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=30), bound=st.sampled_from([0.1, 0.25, 0.34, 0.5]))
def test_average_risk_holds_once_its_violating_classes_are_gone(sizes, bound) -> None:
    frame = pd.DataFrame({"q": [i for i, size in enumerate(sizes) for _ in range(size)]})
    classes = EquivalenceClasses.from_frame(frame, ["q"])
    model = AverageReidentificationRisk(bound)
    mask = model.violating_classes(classes)
    assert mask.any() == (model.observed(classes) > bound)
    if mask.any() and not mask.all():
        kept = classes.sizes[~mask]
        assert len(kept) / kept.sum() <= bound + 1e-9


def test_k_map_names_an_unreadable_population_table(tmp_path) -> None:
    frame = pd.DataFrame({"a": [1, 1], "b": [2, 2]})
    with pytest.raises(ConfigurationError, match=r"^k_map population .*nope\.csv: table file not found"):
        KMap(3, population=str(tmp_path / "nope.csv")).validate_against(frame)
    census = tmp_path / "census.csv"
    pd.DataFrame({"a": [1], "b": [2], "people": [9]}).to_csv(census, index=False)
    with pytest.raises(ConfigurationError, match="has no count column 'count'"):
        KMap(3, population=str(census)).validate_against(frame)
    counted = KMap(3, population=str(census), count_column="people")
    counted.validate_against(frame)
    assert counted.observed(EquivalenceClasses.from_frame(frame, ["a", "b"])) == 9.0


def test_exact_k_map_checks_a_published_table_against_raw_population_counts() -> None:
    from privacy_plugins.core.hierarchies import Hierarchy
    from privacy_plugins.core.measure import measure

    hierarchies = {
        "age": Hierarchy.from_rows("age", [[str(v), "2x", "*"] for v in range(20, 30)]),
        "zip": Hierarchy.from_rows("zip", [["a", "*"], ["b", "*"]]),
    }
    census = pd.DataFrame({"age": [str(v) for v in range(20, 30)] * 2, "zip": ["a"] * 10 + ["b"] * 10, "count": 1})
    published = pd.DataFrame({"age": ["2x"] * 6, "zip": ["a", "a", "b", "b", "a", "b"]})
    for k, passed in ((10, True), (11, False)):
        model = KMap(k, population="census.csv").with_population_frame(census)
        result = measure(published, quasi_identifiers=["age", "zip"], models=[model], hierarchies=hierarchies)
        assert result.results["k_map"].passed is passed and result.results["k_map"].observed == 10.0
    with pytest.raises(ConfigurationError, match="lacks 2 quasi-identifier combination"):  # without the hierarchies
        measure(
            published, quasi_identifiers=["age", "zip"], models=[KMap(3, population="c").with_population_frame(census)]
        )


def test_exact_k_map_searches_the_lattice_with_a_population_file(tmp_path) -> None:
    """Once refused (the snapshot keeps level codes); now the file's counts are grouped per node."""
    from privacy_plugins.core.anonymize.full_domain import anonymize_full_domain
    from privacy_plugins.core.hierarchies import Hierarchy

    frame = pd.DataFrame({"zip": ["a", "b", "a", "b"]})
    census = tmp_path / "census.csv"
    pd.DataFrame({"zip": ["a", "b"], "count": [9, 9]}).to_csv(census, index=False)
    for k, level in ((9, 0), (18, 1)):
        result = anonymize_full_domain(
            frame,
            quasi_identifiers=["zip"],
            hierarchies={"zip": Hierarchy.from_rows("zip", [["a", "*"], ["b", "*"]])},
            models=[KMap(k, population=str(census))],
        )
        assert result.passed and result.details.levels == {"zip": level}  # type: ignore[attr-defined]


@settings(max_examples=40)
@given(rows=ROWS, merge=st.integers(2, 5), data=st.data(), dmax=st.sampled_from([0.4, 0.6, 1.0]))
def test_delta_presence_against_a_reference_and_monotone_without_a_lower_bound(rows, merge, data, dmax) -> None:
    from privacy_plugins.core.models import DeltaPresence

    flags = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    frame = pd.DataFrame(rows, columns=["a", "b"]).assign(study=flags)
    fine = EquivalenceClasses.from_frame(frame, ["a", "b"])
    codes = [((frame["a"] // merge).to_numpy(), 5), (frame["b"].to_numpy(), 4)]
    coarse = EquivalenceClasses.from_codes(frame, ("a", "b"), codes)
    upper = DeltaPresence(0.0, dmax, "study")
    for classes in (fine, coarse):  # reference: δ per class, record by record
        members: dict[int, list[bool]] = {}
        for flag, cls in zip(flags, classes.class_of_row.tolist(), strict=True):
            members.setdefault(cls, []).append(flag)
        want = [sum(members[c]) / len(members[c]) for c in range(classes.n_classes)]
        assert upper.deltas(classes).tolist() == pytest.approx(want)
        assert upper.violating_classes(classes).tolist() == [d > dmax for d in want]
    assert upper.is_monotonic(with_suppression=False) and not upper.is_monotonic(with_suppression=True)
    if upper.holds(fine):
        assert upper.holds(coarse)


def test_delta_presence_with_a_lower_bound_is_not_monotone_and_says_so() -> None:
    from privacy_plugins.core.models import DeltaPresence

    frame = pd.DataFrame({"zip": ["a", "a"] + ["b"] * 8, "study": [1, 0] + [0] * 8})
    fine = EquivalenceClasses.from_frame(frame, ["zip"])
    merged = EquivalenceClasses.from_frame(frame.assign(zip="*"), ["zip"])
    model = DeltaPresence(0.3, 1.0, "study")
    assert model.holds(fine) and not model.holds(merged)  # δ 0.5 (b has no subset record) → 0.1
    assert not model.is_monotonic(with_suppression=False) and model.monotone_relaxation(with_suppression=False) is None
    with pytest.raises(ConfigurationError, match="subset_column 'study' has 1 value"):
        model.validate_against(frame.assign(study=[1, 0, 2] + [0] * 7))
    with pytest.raises(ConfigurationError, match="delta_presence: dmin must be at most dmax"):
        from_config("delta_presence", dmin=0.5, dmax=0.2, subset_column="study")
