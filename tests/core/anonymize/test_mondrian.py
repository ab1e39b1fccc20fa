"""anonymize_mondrian: the seed README's example, LCA labels, models on halves, NCP, seeds, properties, Adult."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import privacy_plugins as pp
from privacy_plugins.core.anonymize.mondrian import PartitionDetails, anonymize_mondrian
from privacy_plugins.core.anonymize.partition_split import Dimension, partition_rows
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PersonalizedLeakage,
    PrivacyModel,
    TCloseness,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

ADULT = Path(__file__).resolve().parents[4] / "shared" / "data" / "adult"
ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]

# Leaves deliberately listed with siblings apart (a1, b1, a2, …): Mondrian must regroup them.
COLOR = Hierarchy.from_rows(
    "color",
    [
        ["red", "warm", "*"],
        ["blue", "cold", "*"],
        ["orange", "warm", "*"],
        ["green", "cold", "*"],
        ["yellow", "warm", "*"],
        ["teal", "cold", "*"],
    ],
)


def _numeric(values: list[int]) -> Dimension:
    uniques, codes = np.unique(np.asarray(values), return_inverse=True)
    return Dimension(codes=codes.ravel(), size=uniques.shape[0], values=uniques)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("strict", [[1, 2, 3, 3], [4, 5]]), ("relaxed", [[1, 2, 3], [3, 4, 5]])],
)
def test_seed_readme_example_first_split(mode: str, expected: list[list[int]]) -> None:
    """Seed 004 README: k=2 on [1,2,3,3,4,5]: strict [1,2,3,3],[4,5]; relaxed [1,2,3],[3,4,5]."""
    values = [1, 2, 3, 3, 4, 5]
    calls = []

    def first_split_only(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
        calls.append(n_candidates)
        return np.full(n_candidates, len(calls) == 1)

    run = partition_rows([_numeric(values)], first_split_only, mode=mode, rng=np.random.default_rng(0))  # type: ignore[arg-type]
    parts = sorted(
        (sorted(np.asarray(values)[run.partition_of_row == p].tolist()) for p in range(run.n_partitions)),
        key=lambda part: part[0],
    )
    assert parts == expected
    assert run.splits == (1,)


def test_seed_readme_example_end_to_end() -> None:
    df = pd.DataFrame({"x": [1, 2, 3, 3, 4, 5]})
    strict = anonymize_mondrian(df, quasi_identifiers=["x"], models=[KAnonymity(2)])
    # [1,2,3,3] splits once more into [1,2] and [3,3]; [4,5] cannot.
    assert strict.table["x"].tolist() == ["[1-2]", "[1-2]", "3", "3", "[4-5]", "[4-5]"]
    relaxed = anonymize_mondrian(df, quasi_identifiers=["x"], models=[KAnonymity(2)], mode="relaxed")
    labels = relaxed.table["x"].tolist()
    assert labels[:2] == ["[1-3]", "[1-3]"] and labels[4:] == ["[3-5]", "[3-5]"]
    assert sorted(labels[2:4]) == ["[1-3]", "[3-5]"]  # the two 3s are divided
    assert relaxed.details is not None and strict.details is not None
    assert (strict.details.n_partitions, relaxed.details.n_partitions) == (3, 2)


def test_relaxed_beats_strict_when_the_median_value_is_heavy() -> None:
    df = pd.DataFrame({"x": [1, 2, 3, 3, 3, 3, 4, 5]})
    strict = anonymize_mondrian(df, quasi_identifiers=["x"], models=[KAnonymity(4)])
    relaxed = anonymize_mondrian(df, quasi_identifiers=["x"], models=[KAnonymity(4)], mode="relaxed")
    assert strict.table["x"].unique().tolist() == ["[1-5]"]  # ≤3 | >3 is 6 | 2: not allowed
    assert strict.utility.ncp == 1.0
    assert sorted(relaxed.table["x"].unique().tolist()) == ["[1-3]", "[3-5]"]
    assert relaxed.utility.ncp == pytest.approx(0.5) and relaxed.utility.ncp <= strict.utility.ncp


def _colors() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": range(12),
            "color": ["red", "orange", "yellow", "red", "orange", "yellow", "blue", "green", "teal"] * 1
            + ["blue", "green", "teal"],
            "age": [30, 31, 32, 33, 34, 35, 40, 41, 42, 43, 44, 45],
            "disease": ["flu", "hiv", "flu", "cold", "hiv", "cold", "flu", "hiv", "cold", "flu", "hiv", "cold"],
        }
    )


def test_hierarchical_qi_publishes_the_lowest_common_ancestor() -> None:
    df = _colors()
    result = anonymize_mondrian(
        df, quasi_identifiers=["color"], models=[KAnonymity(6)], hierarchies={"color": COLOR}, identifiers=["id"],
        insensitive=["age", "disease"],
    )  # fmt: skip
    assert result.table["color"].tolist() == ["warm"] * 6 + ["cold"] * 6
    assert "id" not in result.table.columns and result.dropped_identifiers == ("id",)
    assert result.table["disease"].tolist() == df["disease"].tolist()  # other columns as they were
    assert result.table["age"].tolist() == df["age"].tolist()  # not a QI: untouched
    # 3 of 6 leaves under warm/cold: (3 − 1)/(6 − 1)
    assert result.utility.ncp == pytest.approx(2 / 5)
    single = anonymize_mondrian(
        df, quasi_identifiers=["color"], models=[KAnonymity(2)], hierarchies={"color": COLOR},
        insensitive=["id", "age", "disease"],
    )  # fmt: skip
    assert set(single.table["color"]) == {"red", "orange", "yellow", "blue", "green", "teal"}


def test_numeric_qi_with_a_hierarchy_uses_it() -> None:
    df = _colors()
    ages = Hierarchy.from_rows("age", [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(30, 50)])
    result = anonymize_mondrian(
        df, quasi_identifiers=["age"], models=[KAnonymity(6)], hierarchies={"age": ages},
        insensitive=["id", "color", "disease"],
    )  # fmt: skip
    assert result.table["age"].tolist() == ["30-39"] * 6 + ["40-49"] * 6
    assert result.details is not None and result.details.encodings == {"age": "hierarchy"}


def _naive_ncp(original: pd.DataFrame, published: pd.DataFrame, qis: list[str], hierarchies: dict) -> float:  # type: ignore[type-arg]
    """Per cell, straight from the published text and the original value (DESIGN.md NCP)."""
    costs = []
    for q in qis:
        if q in hierarchies:
            rows = hierarchies[q].to_rows()
            by_leaf = {row[0]: row for row in rows}
            for value, label in zip(original[q].astype(str), published[q], strict=True):
                level = by_leaf[value].index(label)  # lowest level where the leaf's ancestor is the label
                covered = sum(1 for row in rows if row[level] == label)
                costs.append((covered - 1) / (len(rows) - 1))
        else:
            span = original[q].max() - original[q].min()
            for label in published[q]:
                match = re.fullmatch(r"\[(-?[\d.]+)-(-?[\d.]+)\]", label)
                costs.append(0.0 if match is None else (float(match[2]) - float(match[1])) / span)
    return float(np.mean(costs))


@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_ncp_matches_a_naive_per_cell_computation(mode: str) -> None:
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, 300),
            "color": rng.choice(["red", "orange", "yellow", "blue", "green", "teal"], 300),
            "disease": rng.choice(["flu", "hiv", "cold", "ulcer"], 300),
        }
    )
    hierarchies = {"color": COLOR}
    result = anonymize_mondrian(
        df, quasi_identifiers=["age", "color"], models=[KAnonymity(5), DistinctLDiversity("disease", 2)],
        hierarchies=hierarchies, mode=mode,  # type: ignore[arg-type]
    )  # fmt: skip
    assert result.utility.ncp == pytest.approx(_naive_ncp(df, result.table, ["age", "color"], hierarchies))
    assert result.utility.lm == pytest.approx(2 * result.utility.ncp)
    assert (result.rows_in, result.rows_out, result.suppressed) == (300, 300, 0)


def test_t_closeness_is_checked_against_the_whole_table() -> None:
    # Whole table 8 A / 8 B. Cutting at x ≤ 8 gives two classes at EMD 0.25 (allowed at t = 0.25).
    # Cutting [1-8] again gives [1-4] all A: EMD 0.5 from the table (but only 0.25 from its
    # parent [1-8]), so with the whole table as reference the cut is refused.
    sa = ["A", "A", "A", "A", "A", "B", "A", "B", "B", "B", "B", "B", "B", "A", "B", "A"]
    df = pd.DataFrame({"x": range(1, 17), "sa": sa})
    result = anonymize_mondrian(df, quasi_identifiers=["x"], models=[TCloseness("sa", 0.25)])
    assert result.table["x"].tolist() == ["[1-8]"] * 8 + ["[9-16]"] * 8
    assert result.measures["t"] == pytest.approx(0.25)


def test_same_seed_same_release_and_seed_in_report() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {"a": rng.integers(0, 5, 200), "b": rng.integers(0, 5, 200), "s": rng.choice(["x", "y", "z"], 200)}
    )
    runs = [
        anonymize_mondrian(
            df, quasi_identifiers=["a", "b"], models=[KAnonymity(4)], mode="relaxed", seed=seed, insensitive=["s"]
        )
        for seed in (11, 11, 12)
    ]
    assert runs[0].table.equals(runs[1].table)
    report = runs[0].to_dict()
    json.dumps(report)
    assert report["details"]["seed"] == 11 and report["details"]["mode"] == "relaxed"
    assert report["seed"] == 11 and report["details"]["kind"] == "partition" and "levels" not in report
    assert report["algorithm"] == "mondrian" and report["suppressed"] == 0
    assert isinstance(runs[2].details, PartitionDetails) and runs[2].details.seed == 12


def test_personalized_and_entropy_models_steer_the_splits() -> None:
    df = _colors()
    models: list[PrivacyModel] = [PersonalizedLeakage("disease", bound=0.5), EntropyLDiversity("disease", 2)]
    result = anonymize_mondrian(
        df, quasi_identifiers=["age", "color"], models=models, hierarchies={"color": COLOR}, insensitive=["id"]
    )
    assert result.passed and result.measures["max_leakage"] <= 0.5


def test_errors() -> None:
    df = _colors()
    others = ["id", "color", "disease"]
    with pytest.raises(HierarchyError, match="'color'"):
        anonymize_mondrian(
            df, quasi_identifiers=["color"], models=[KAnonymity(2)], insensitive=["id", "age", "disease"]
        )
    with pytest.raises(ConfigurationError, match="mode"):
        anonymize_mondrian(df, quasi_identifiers=["age"], models=[KAnonymity(2)], mode="loose", insensitive=others)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="missing"):
        anonymize_mondrian(
            df.assign(age=[None, *df["age"][1:]]), quasi_identifiers=["age"], models=[KAnonymity(2)], insensitive=others
        )
    with pytest.raises(InfeasibleAnonymizationError, match="whole table"):
        anonymize_mondrian(
            df, quasi_identifiers=["age"], models=[DistinctLDiversity("disease", 4)], insensitive=["id", "color"]
        )
    with pytest.raises(ConfigurationError, match="suppression_limit"):
        anonymize_mondrian(
            df, quasi_identifiers=["age"], models=[KAnonymity(2)], suppression_limit=1.5, insensitive=others
        )


LEAVES = ["red", "orange", "yellow", "blue", "green", "teal"]


@st.composite
def problems(draw: st.DrawFn) -> tuple[pd.DataFrame, list[PrivacyModel], str, int]:
    n = draw(st.integers(4, 40))
    df = pd.DataFrame(
        {
            "a": draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)),
            "color": draw(st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=n, max_size=n)),
        }
    )
    candidates: list[PrivacyModel] = [
        KAnonymity(draw(st.integers(1, 4))),
        DistinctLDiversity("s", draw(st.integers(1, 3))),
        EntropyLDiversity("s", draw(st.floats(1.0, 2.5))),
        TCloseness("s", draw(st.floats(0.1, 1.0))),
    ]
    chosen = draw(st.lists(st.sampled_from(range(4)), min_size=1, max_size=4, unique=True))
    return df, [candidates[i] for i in chosen], draw(st.sampled_from(["strict", "relaxed"])), draw(st.integers(0, 9))


@given(problems())
def test_property_output_satisfies_every_model_or_whole_table_fails(
    problem: tuple[pd.DataFrame, list[PrivacyModel], str, int],
) -> None:
    df, models, mode, seed = problem
    try:
        result = anonymize_mondrian(
            df, quasi_identifiers=["a", "color"], models=models, hierarchies={"color": COLOR}, mode=mode, seed=seed,  # type: ignore[arg-type]
            insensitive=[c for c in ["s"] if all(c not in m.columns for m in models)],
        )  # fmt: skip
    except InfeasibleAnonymizationError:
        whole = EquivalenceClasses.from_frame(df.assign(one=0), ["one"])
        assert any(not model.evaluate(whole).passed for model in models)
        return
    classes = EquivalenceClasses.from_frame(result.table, ["a", "color"])
    assert all(model.evaluate(classes).passed for model in models)
    assert result.rows_in == result.rows_out + result.suppressed == len(df)
    assert result.table["s"].tolist() == df["s"].tolist()


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    if not (ADULT / "adult.csv").is_file():
        pytest.skip(f"Adult data not found at {ADULT} (expected ../shared/data/adult beside the repo)")
    frame = pp.read_table(ADULT / "adult.csv")
    hierarchies = load_hierarchies(ADULT, columns=ADULT_QIS)
    return frame, {q: h for q, h in hierarchies.items() if q != "age"}


@pytest.mark.parametrize(
    "models",
    [[KAnonymity(10)], [DistinctLDiversity("occupation", 3)], [KAnonymity(5), TCloseness("occupation", 0.2)]],
    ids=["k=10", "distinct l=3", "k=5 t=0.2"],
)
@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_adult(adult: tuple[pd.DataFrame, dict[str, Hierarchy]], models: list[PrivacyModel], mode: str) -> None:
    frame, hierarchies = adult
    result = anonymize_mondrian(
        frame, quasi_identifiers=ADULT_QIS, models=models, hierarchies=hierarchies, mode=mode,  # type: ignore[arg-type]
        insensitive=[c for c in ("occupation", "salary-class") if all(c not in m.columns for m in models)],
    )  # fmt: skip
    assert result.passed and result.rows_out == 30162
    recheck = EquivalenceClasses.from_frame(result.table, ADULT_QIS)
    assert all(model.evaluate(recheck).passed for model in models)
    if models == [KAnonymity(10)] and mode == "strict":
        assert result.utility.ncp <= 0.12


def _naive_partition(dimensions: list[Dimension], k: int, mode: str, rng: np.random.Generator) -> list[int]:
    """The partitioner as plain lists, one partition at a time (same rounds and generator calls): group of each row."""
    codes = [np.asarray(d.codes, dtype=np.int64).tolist() for d in dimensions]
    n_dims, group, n_groups = len(dimensions), [-1] * len(codes[0]), 0
    open_parts: list[tuple[list[int], list[bool]]] = [(list(range(len(codes[0]))), [False] * n_dims)]
    while open_parts:
        widths = np.array(
            [
                [0.0 if tried[j] else float(d.widths(np.array([min(codes[j][r] for r in rows)]),
                                                     np.array([max(codes[j][r] for r in rows)]))[0])
                 for j, d in enumerate(dimensions)]
                for rows, tried in open_parts
            ]
        )  # fmt: skip
        best = widths.max(axis=1)
        priority = rng.random(widths.shape)
        choices = []
        for p, (rows, _) in enumerate(open_parts):
            if not (widths[p] > 0).any():
                group = [n_groups if i in rows else g for i, g in enumerate(group)]
                n_groups += 1
                choices.append(-1)
                continue
            tied = [j for j in range(n_dims) if widths[p, j] > 0 and abs(widths[p, j] - best[p]) <= 1e-12 * best[p]]
            choices.append(max(tied, key=lambda j: (priority[p, j], -j)))
        kept = [(part, c) for part, c in zip(open_parts, choices, strict=True) if c >= 0]
        if not kept:
            break
        if mode == "relaxed":  # the open rows, concatenated, are shuffled before the (stable) sort
            flat = [r for (rows, _), _ in kept for r in rows]
            position = {r: i for i, r in enumerate(flat[s] for s in rng.permutation(len(flat)))}
            kept = [((sorted(rows, key=position.__getitem__), tried), c) for (rows, tried), c in kept]
        open_parts = []
        for (rows, tried), c in kept:
            rows = sorted(rows, key=lambda r: codes[c][r])
            median = codes[c][rows[(len(rows) - 1) // 2]]
            n_left = sum(codes[c][r] <= median for r in rows)
            if n_left == len(rows):
                n_left = sum(codes[c][r] < median for r in rows)
            if mode == "relaxed" and dimensions[c].hierarchy is None:
                n_left = len(rows) // 2
            if min(n_left, len(rows) - n_left) >= k:
                open_parts += [(rows[:n_left], [False] * n_dims), (rows[n_left:], [False] * n_dims)]
            else:
                open_parts.append((rows, [t or j == c for j, t in enumerate(tried)]))
    return group


@given(
    st.lists(st.tuples(st.integers(0, 9), st.sampled_from(LEAVES), st.integers(-3, 3)), min_size=1, max_size=40),
    st.integers(1, 4),
    st.sampled_from(["strict", "relaxed"]),
    st.integers(0, 9),
    st.booleans(),
)
def test_property_partitioner_equals_a_naive_one(
    rows: list[tuple[int, str, int]], k: int, mode: str, seed: int, narrow: bool
) -> None:
    """Same partitions as a list-based partitioner, whatever the codes' integer type (narrow codes, int32 keys)."""
    from privacy_plugins.core.anonymize.mondrian import _dimension
    from privacy_plugins.core.anonymize.mondrian import narrow as narrowed

    a, color, b = (list(column) for column in zip(*rows, strict=True))
    dimensions = [_numeric(a), _dimension(pd.Series(color, name="color"), COLOR)[0], _numeric(b)]
    if narrow:
        dimensions = [narrowed(d) for d in dimensions]

    def k_anonymous_halves(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
        sizes = np.bincount(class_of_row, minlength=n_classes)[: 2 * n_candidates]
        return np.asarray((sizes.reshape(n_candidates, 2) >= k).all(axis=1))

    run = partition_rows(dimensions, k_anonymous_halves, mode=mode, rng=np.random.default_rng(seed))  # type: ignore[arg-type]
    expected = _naive_partition(dimensions, k, mode, np.random.default_rng(seed))
    assert run.partition_of_row.tolist() == expected
