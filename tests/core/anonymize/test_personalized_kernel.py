"""The compiled grouping and SA_Generalization of the personalized anonymizer (issue 28) decide as the Python ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, personalized, personalized_kernel
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage

compiled = pytest.mark.skipif(not personalized_kernel.AVAILABLE, reason="numba is not installed (optional)")

LETTERS = Hierarchy.from_rows("x", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]])
DISEASE = Hierarchy.from_rows(
    "disease",
    [
        ["gastric ulcer", "stomach disease", "*"],
        ["dyspepsia", "stomach disease", "*"],
        ["bronchitis", "respiratory infection", "*"],
        ["pneumonia", "respiratory infection", "*"],
        ["flu", "respiratory infection", "*"],
        ["hiv", "hiv", "*"],
    ],
)


@compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["a", "b", "c", "d"])), min_size=1, max_size=150),
    st.integers(1, 6),
)
def test_compiled_grouping_equals_the_numpy_runs(
    monkeypatch: pytest.MonkeyPatch, rows: list[tuple[int, str]], k: int
) -> None:
    df = pd.DataFrame(rows, columns=["age", "x"])
    dims = [_dimension(df["age"], None)[0], _dimension(df["x"], LETTERS)[0]]
    order = personalized.sort_order(dims)
    codes = [d.codes[order] for d in dims]
    quality = personalized._Quality(dims)
    fast = personalized._adaptive_groups(codes, k, quality)
    monkeypatch.setattr(personalized, "_numba", lambda: False)
    assert fast == personalized._adaptive_groups(codes, k, quality)


@compiled
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_compiled_sa_generalization_equals_the_python_rule(data: st.DataObject) -> None:
    sa = personalized._Sensitive(DISEASE)
    level, leaves = sa.tables[0], sa.tables[1]
    n_nodes = level.shape[0]
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=6))
    m = sum(sizes)
    original = np.array(data.draw(st.lists(st.integers(0, n_nodes - 1), min_size=m, max_size=m)), dtype=np.int64)
    bounds = np.array(data.draw(st.lists(st.sampled_from([0.1, 0.25, 0.34, 0.5, 1.0]), min_size=m, max_size=m)))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).tolist()
    ends = np.cumsum(sizes).tolist()
    fast: dict[tuple[int, int], tuple[np.ndarray, int, bool]] = {}
    slow: dict[tuple[int, int], tuple[np.ndarray, int, bool]] = {}
    personalized._generalize_new(sa, original, bounds, starts, ends, fast, compiled=True)
    personalized._generalize_new(sa, original, bounds, starts, ends, slow, compiled=False)
    for key in slow:
        assert fast[key][0].tolist() == slow[key][0].tolist() and fast[key][1:] == slow[key][1:]
        assert (leaves[fast[key][0]] >= leaves[original[key[0] : key[1]]]).all()  # only ever generalized


@pytest.mark.parametrize("seed", [0, 1])
def test_the_anonymizer_publishes_the_same_table_with_and_without_numba(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    n = 120
    table = pd.DataFrame(
        {
            "age": rng.integers(0, 40, n),
            "x": rng.choice(["a", "b", "c", "d"], n),
            "disease": rng.choice(DISEASE.leaves, n).tolist(),
            "pleak": rng.choice([0.2, 0.34, 0.5, 1.0], n),
        }
    )

    def run() -> pd.DataFrame:
        result = anonymize(
            table,
            algorithm="personalized",
            quasi_identifiers=["age", "x"],
            models=[KAnonymity(3), PersonalizedLeakage("disease", bound_column="pleak")],
            hierarchies={"disease": DISEASE, "x": LETTERS},
        )
        assert result.passed and result.rows_in == result.rows_out + result.suppressed
        return result.table

    first = run()
    monkeypatch.setattr(personalized, "_numba", lambda: False)
    pd.testing.assert_frame_equal(first, run())


@settings(max_examples=60, deadline=None)
@given(codes=st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=40), data=st.data())
def test_window_spans_equal_a_naive_min_and_max_of_every_window(codes: list[int], data: st.DataObject) -> None:
    """The doubling window minimum/maximum equals the minimum/maximum of each window computed one by one."""
    k = data.draw(st.integers(min_value=1, max_value=len(codes)), label="k")  # drawn in range: nothing filtered
    array = np.asarray(codes, dtype=np.int64)
    low, high = personalized._window_span(array, k)
    assert low.tolist() == [min(codes[i : i + k]) for i in range(len(codes) - k + 1)]
    assert high.tolist() == [max(codes[i : i + k]) for i in range(len(codes) - k + 1)]
