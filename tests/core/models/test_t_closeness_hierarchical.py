"""Hierarchical-distance t-closeness (Li, Li & Venkatasubramanian 2007, §4.2; ARX HierarchicalDistanceTCloseness).

The library computes the EMD as the mean over the levels below the root of the
equal-distance EMD of the generalized distributions; the reference below walks the
tree node by node with the paper's formula, cost(N) = level(N)/H · min(pos_extra(N),
neg_extra(N)), in exact fractions, one class at a time.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.measure import measure, t_closeness
from privacy_plugins.core.metrics import emd_equal, emd_hierarchical
from privacy_plugins.core.models import TCloseness, bind_hierarchies, from_config
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, HierarchyError

# The paper's Figure 2 hierarchy of Disease (height 3) and its Table 3 (9 patients),
# grouped as in its Table 5 (ZIP 4767*, 4790*, 4760*).
DISEASE_ROWS = [
    ["flu", "respiratory infection", "respiratory system diseases", "*"],
    ["pneumonia", "respiratory infection", "respiratory system diseases", "*"],
    ["bronchitis", "respiratory infection", "respiratory system diseases", "*"],
    ["pulmonary edema", "vascular lung diseases", "respiratory system diseases", "*"],
    ["pulmonary embolism", "vascular lung diseases", "respiratory system diseases", "*"],
    ["gastric ulcer", "stomach diseases", "digestive system diseases", "*"],
    ["gastritis", "stomach diseases", "digestive system diseases", "*"],
    ["stomach cancer", "stomach diseases", "digestive system diseases", "*"],
    ["colitis", "colon diseases", "digestive system diseases", "*"],
    ["colon cancer", "colon diseases", "digestive system diseases", "*"],
]
TABLE3 = pd.DataFrame(
    {
        "zip": ["4767*", "4760*", "4767*", "4790*", "4790*", "4790*", "4760*", "4767*", "4760*"],
        "disease": [
            "gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu",
            "bronchitis", "bronchitis", "pneumonia", "stomach cancer",
        ],
    }
)  # fmt: skip


def disease_hierarchy() -> Hierarchy:
    return Hierarchy.from_rows("disease", DISEASE_ROWS)


def naive_emd(class_values: list[Any], table_values: list[Any], rows: list[list[str]]) -> Fraction:
    """The paper's formula, node by node: Σ_N level(N)/H · min(pos_extra(N), neg_extra(N))."""
    height = len(rows[0]) - 1
    if height == 0:
        return Fraction(0)
    p, q = Counter(map(str, class_values)), Counter(map(str, table_values))
    children: dict[tuple[int, str], set[tuple[int, str]]] = defaultdict(set)
    for row in rows:
        for level in range(1, height + 1):
            children[(level, row[level])].add((level - 1, row[level - 1]))

    def extra(node: tuple[int, str]) -> Fraction:
        level, label = node
        if level == 0:
            return Fraction(p[label], len(class_values)) - Fraction(q[label], len(table_values))
        return sum((extra(child) for child in children[node]), Fraction(0))

    cost = Fraction(0)
    for node, kids in children.items():
        extras = [extra(child) for child in kids]
        positive = sum((e for e in extras if e > 0), Fraction(0))
        negative = -sum((e for e in extras if e < 0), Fraction(0))
        cost += Fraction(node[0], height) * min(positive, negative)
    return cost


def naive_per_class(frame: pd.DataFrame, qis: list[str], attribute: str, rows: list[list[str]]) -> dict:
    table = list(frame[attribute])
    groups: dict[tuple, list[Any]] = defaultdict(list)
    for key, value in zip(frame[qis].itertuples(index=False, name=None), table, strict=True):
        groups[key].append(value)
    return {key: naive_emd(values, table, rows) for key, values in groups.items()}


def library_per_class(frame: pd.DataFrame, qis: list[str], hierarchy: Hierarchy, attribute: str = "s") -> dict:
    classes = EquivalenceClasses.from_frame(frame, qis)
    emd = emd_hierarchical(classes, classes.sensitive(attribute), hierarchy)
    firsts = classes.frame.groupby(qis, sort=False, dropna=False).head(1)
    keys = [tuple(row) for row in firsts[qis].itertuples(index=False, name=None)]
    by_first = dict(zip(classes.class_of_row[firsts.index.to_numpy()], keys, strict=True))
    return {by_first[c]: float(emd[c]) for c in range(classes.n_classes)}


def test_paper_worked_example_table5() -> None:
    """Hand computation with the paper's formula (extras per node in ninths of the 9 patients).

    4767* {gastric ulcer, stomach cancer, pneumonia}: stomach diseases' children extras
    (+2, −2, +1)/9 cost 1/3 · 2/9; respiratory infection (−1, −2, +2)/9 costs 1/3 · 2/9;
    the level-2 nodes each have one non-zero child (cost 0); the root moves 1/9 at weight 1:
    2/27 + 2/27 + 3/27 = 7/27. 4790* {gastritis, flu, bronchitis}: 1/27 + 1/27 + 6/27 = 8/27.
    4760* {gastritis, bronchitis, stomach cancer}: 1/27 + 1/27 + 3/27 = 5/27.
    """
    hierarchy = disease_hierarchy()
    expected = {"4767*": Fraction(7, 27), "4790*": Fraction(8, 27), "4760*": Fraction(5, 27)}
    got = library_per_class(TABLE3, ["zip"], hierarchy, "disease")
    assert {key[0]: value for key, value in got.items()} == pytest.approx({k: float(v) for k, v in expected.items()})
    naive = naive_per_class(TABLE3, ["zip"], "disease", DISEASE_ROWS)
    assert {key[0]: value for key, value in naive.items()} == expected
    model = TCloseness("disease", 0.3, "hierarchical", sensitive_hierarchy=hierarchy)
    result = model.evaluate(EquivalenceClasses.from_frame(TABLE3, ["zip"]))
    assert result.passed and result.observed == pytest.approx(8 / 27)
    assert (
        not TCloseness("disease", 0.29, "hierarchical", sensitive_hierarchy=hierarchy)
        .evaluate(EquivalenceClasses.from_frame(TABLE3, ["zip"]))
        .passed
    )


def test_semantic_closeness_is_what_the_hierarchy_adds() -> None:
    """Three stomach diseases (the paper's similarity attack) are far in the hierarchy, as in the paper's §3."""
    frame = TABLE3.assign(zip=["a", "a", "a", "b", "b", "b", "c", "c", "c"])
    frame["disease"] = ["gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu",
                        "bronchitis", "bronchitis", "pneumonia", "stomach cancer"]  # fmt: skip
    hier = t_closeness(frame, quasi_identifiers=["zip"], sensitive_attribute="disease",
                       t_distance="hierarchical", sensitive_hierarchy=disease_hierarchy())  # fmt: skip
    # class a holds only stomach diseases: its 4/9 excess crosses the root (distance 1)
    assert hier == pytest.approx(4 / 9)


@st.composite
def hierarchical_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, list[list[str]]]:
    """A random tree hierarchy (height 1–3) over up to 6 leaves and a table of its leaves."""
    n_leaves = draw(st.integers(1, 6))
    height = draw(st.integers(1, 3))
    paths = [[f"v{i}"] for i in range(n_leaves)]
    nodes = [f"v{i}" for i in range(n_leaves)]
    for level in range(1, height):
        parent_of = {node: f"n{level}_{draw(st.integers(0, max(0, len(nodes) - 2)))}" for node in nodes}
        for path in paths:
            path.append(parent_of[path[-1]])
        nodes = sorted(set(parent_of.values()))
    for path in paths:
        path.append("*")
    rows = draw(st.integers(1, 30))
    frame = pd.DataFrame(
        {
            "a": draw(st.lists(st.integers(0, 2), min_size=rows, max_size=rows)),
            "b": draw(st.lists(st.integers(0, 1), min_size=rows, max_size=rows)),
            "s": draw(st.lists(st.sampled_from([p[0] for p in paths]), min_size=rows, max_size=rows)),
        }
    )
    return frame, paths


@settings(max_examples=60)
@given(hierarchical_tables())
def test_equals_the_papers_formula_class_by_class(case: tuple[pd.DataFrame, list[list[str]]]) -> None:
    frame, rows = case
    hierarchy = Hierarchy.from_rows("s", rows)
    got = library_per_class(frame, ["a", "b"], hierarchy)
    naive = naive_per_class(frame, ["a", "b"], "s", rows)
    assert got.keys() == naive.keys()
    for key, value in naive.items():
        assert got[key] == pytest.approx(float(value), abs=1e-12)
        assert -1e-12 <= got[key] <= 1.0


@settings(max_examples=40)
@given(hierarchical_tables())
def test_flat_hierarchy_is_the_equal_distance(case: tuple[pd.DataFrame, list[list[str]]]) -> None:
    frame, rows = case
    flat = Hierarchy.from_rows("s", [[row[0], "*"] for row in rows])
    classes = EquivalenceClasses.from_frame(frame, ["a", "b"])
    counts = classes.sensitive("s")
    np.testing.assert_allclose(emd_hierarchical(classes, counts, flat), emd_equal(classes, counts), atol=1e-12)


@settings(max_examples=40)
@given(hierarchical_tables(), st.integers(1, 3))
def test_a_class_with_the_tables_distribution_is_at_distance_zero(
    case: tuple[pd.DataFrame, list[list[str]]], copies: int
) -> None:
    frame, rows = case
    base = frame.assign(a=0, b=0)
    # every class is a copy of the whole table: same distribution as the table
    table = pd.concat([base.assign(a=i) for i in range(copies)], ignore_index=True)
    classes = EquivalenceClasses.from_frame(table, ["a", "b"])
    emd = emd_hierarchical(classes, classes.sensitive("s"), Hierarchy.from_rows("s", rows))
    np.testing.assert_allclose(emd, 0.0, atol=1e-12)


@settings(max_examples=40)
@given(hierarchical_tables())
def test_dropping_a_quasi_identifier_never_raises_t(case: tuple[pd.DataFrame, list[list[str]]]) -> None:
    """Merging classes (generalizing) never raises the largest EMD: the lattice and the borders prune with it."""
    frame, rows = case
    model = TCloseness("s", 0.5, "hierarchical", sensitive_hierarchy=Hierarchy.from_rows("s", rows))
    assert model.is_monotonic(with_suppression=False) and not model.is_monotonic(with_suppression=True)
    fine = model.observed(EquivalenceClasses.from_frame(frame, ["a", "b"]))
    coarse = model.observed(EquivalenceClasses.from_frame(frame, ["a"]))
    assert coarse <= fine + 1e-12


def test_weighted_classes_equal_the_records() -> None:
    """A weighted snapshot (the engines' GROUP BY) measures what the records measure."""
    grouped = TABLE3.value_counts().rename("n").reset_index()
    weighted = EquivalenceClasses.from_frame(grouped[["zip", "disease"]], ["zip"], weights=grouped["n"].to_numpy())
    plain = EquivalenceClasses.from_frame(TABLE3, ["zip"])
    model = TCloseness("disease", 0.3, "hierarchical", sensitive_hierarchy=disease_hierarchy())
    assert model.observed(weighted) == pytest.approx(model.observed(plain))


def test_measure_and_the_list_form_bind_the_hierarchy() -> None:
    hierarchies = {"disease": disease_hierarchy()}
    report = measure(TABLE3, quasi_identifiers=["zip"], sensitive_attributes=["disease"], t=0.25,
                     t_distance="hierarchical", hierarchies=hierarchies)  # fmt: skip
    sensitive = report.for_attribute("disease")
    assert sensitive.t_distance == "hierarchical" and sensitive.t_closeness == pytest.approx(8 / 27)
    assert sensitive.t_violations is not None and sensitive.t_violations.classes == 2
    (listed,) = bind_hierarchies(
        [from_config("t_closeness", sensitive_attribute="disease", t=0.3, t_distance="hierarchical")], hierarchies
    )
    assert listed.observed(EquivalenceClasses.from_frame(TABLE3, ["zip"])) == pytest.approx(8 / 27)
    # other distances are not bound (nothing changes for them)
    equal = TCloseness("disease", 0.3, "equal")
    assert equal.with_hierarchies(hierarchies) is equal


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="needs a hierarchy of the sensitive attribute 'disease'"):
        measure(TABLE3, quasi_identifiers=["zip"], sensitive_attributes=["disease"], t=0.2, t_distance="hierarchical")
    with pytest.raises(ConfigurationError, match="needs a hierarchy"):
        measure(TABLE3, quasi_identifiers=["zip"], sensitive_attributes=["disease"], t_distance="hierarchical")
    other = Hierarchy.from_rows("disease", [["flu", "*"], ["gastritis", "*"]])
    with pytest.raises(HierarchyError, match="not leaves of its hierarchy"):
        TCloseness("disease", 0.2, "hierarchical", sensitive_hierarchy=other).validate_against(TABLE3)
    with pytest.raises(TypeError, match="must be a Hierarchy, an ARX CSV path or a builder mapping"):
        TCloseness("disease", 0.2, "hierarchical", sensitive_hierarchy=3)  # type: ignore[arg-type]
    with pytest.raises(HierarchyError, match="hierarchy file not found"):
        TCloseness("disease", 0.2, "hierarchical", sensitive_hierarchy="absent.csv")  # type: ignore[arg-type]


def test_the_list_form_may_carry_its_hierarchy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A path or a builder mapping (what YAML, JSON and GX kwargs can hold) is built into the hierarchy."""
    path = tmp_path / "disease.csv"
    path.write_text("\n".join(";".join(row) for row in DISEASE_ROWS) + "\n")
    classes = EquivalenceClasses.from_frame(TABLE3, ["zip"])
    tree = {"*": {"respiratory": {"infection": ["flu", "pneumonia", "bronchitis"]},
                  "digestive": {"stomach": ["gastric ulcer", "gastritis", "stomach cancer"]}}}  # fmt: skip
    for config in (str(path), {"file": {"path": str(path)}}, {"taxonomy": tree}):
        model = from_config(
            "t_closeness", sensitive_attribute="disease", t=0.3, t_distance="hierarchical", sensitive_hierarchy=config
        )
        assert model.observed(classes) == pytest.approx(8 / 27)
