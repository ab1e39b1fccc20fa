"""Grouping: weighted units measure exactly like the records they stand for."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from privacy_plugins.core import metrics
from privacy_plugins.core.partition import EquivalenceClasses, combine_codes

tables = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "q1": st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n),
            "q2": st.lists(st.integers(0, 2), min_size=n, max_size=n),
            "s": st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n),
            "o": st.lists(st.integers(0, 5), min_size=n, max_size=n),
            "b": st.lists(st.sampled_from([0.25, 0.5, 1.0]), min_size=n, max_size=n),
        }
    )
)


@given(tables)
def test_weighted_units_equal_expanded_records(data: dict) -> None:
    frame = pd.DataFrame(data)
    units = frame.groupby(["q1", "q2", "s", "o", "b"], dropna=False).size().rename("w").reset_index()
    weights = units.pop("w").to_numpy()
    plain = EquivalenceClasses.from_frame(frame, ["q1", "q2"])
    weighted = EquivalenceClasses.from_frame(units, ["q1", "q2"], weights=weights)
    assert weighted.n_rows == plain.n_rows
    assert sorted(weighted.sizes.tolist()) == sorted(plain.sizes.tolist())
    assert metrics.k_of(weighted) == metrics.k_of(plain)
    for suppression_limit in (0.0, 0.1, 0.5):
        assert metrics.k_after_suppression(weighted, suppression_limit) == metrics.k_after_suppression(
            plain, suppression_limit
        )
    assert metrics.prosecutor_risk(weighted) == metrics.prosecutor_risk(plain)
    for ordered in (False, True):
        attribute = "o" if ordered else "s"
        a, b = plain.sensitive(attribute, ordered=ordered), weighted.sensitive(attribute, ordered=ordered)
        assert metrics.distinct_l_per_class(a).min() == metrics.distinct_l_per_class(b).min()
        assert np.isclose(metrics.entropy_l_per_class(plain, a).min(), metrics.entropy_l_per_class(weighted, b).min())
        assert np.isclose(
            metrics.frequency_l_per_class(plain, a).min(), metrics.frequency_l_per_class(weighted, b).min()
        )
        assert metrics.recursive_c_per_class(plain, a, 2).max() == metrics.recursive_c_per_class(weighted, b, 2).max()
        emd = metrics.emd_ordered if ordered else metrics.emd_equal
        assert np.isclose(emd(plain, a).max(), emd(weighted, b).max())
    leak_plain = metrics.personalized_leakage(plain, plain.sensitive("s"), frame["b"].to_numpy())
    leak_weighted = metrics.personalized_leakage(weighted, weighted.sensitive("s"), units["b"].to_numpy())
    assert leak_plain.violations == leak_weighted.violations
    assert leak_plain.infeasible == leak_weighted.infeasible
    assert np.isclose(leak_plain.max_leakage, leak_weighted.max_leakage)
    assert np.isclose(leak_plain.mean_leakage, leak_weighted.mean_leakage)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=50), st.data())
def test_restricted_partition_equals_regrouping(values: list[int], data: st.DataObject) -> None:
    frame = pd.DataFrame({"q": values, "s": [v % 2 for v in values]})
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))))
    if not keep.any():
        keep[0] = True
    restricted = EquivalenceClasses.from_frame(frame, ["q"]).restricted(keep)
    direct = EquivalenceClasses.from_frame(frame[keep].reset_index(drop=True), ["q"])
    assert sorted(restricted.sizes.tolist()) == sorted(direct.sizes.tolist())
    assert restricted.sensitive("s").value_totals.tolist() == direct.sensitive("s").value_totals.tolist()


def test_combine_codes_compacts_huge_key_spaces() -> None:
    rng = np.random.default_rng(0)
    columns = [(rng.integers(0, 1_000_003, size=200), 1_000_003) for _ in range(5)]
    ids, n = combine_codes(columns, 200)
    keys = pd.DataFrame({i: c for i, (c, _) in enumerate(columns)})
    assert n == len(keys.drop_duplicates())
    assert pd.Series(ids).groupby([keys[i] for i in range(5)]).nunique().eq(1).all()
