"""Snapshot.from_units (counts from an engine) equals Snapshot.build (the records), and the snapshot search equals
the in-memory full-domain anonymizer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.anonymize.snapshot_search import solve_snapshot
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import HierarchyError

AGE = Hierarchy.from_rows("age", [[str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", "*"] for a in range(20, 30)])
SEX = Hierarchy.from_rows("sex", [["a", "*"], ["b", "*"]])
HIERARCHIES = {"age": AGE, "sex": SEX}


def counted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.groupby(list(frame.columns), dropna=False).size().rename("n").reset_index()


def from_counts(counts: pd.DataFrame) -> Snapshot:
    return Snapshot.from_units(
        quasi_identifiers=["age", "sex"],
        hierarchies=HIERARCHIES,
        leaf_values={"age": counts["age"], "sex": counts["sex"]},
        units=counts[["s"]],
        weights=counts["n"].to_numpy(),
    )


def test_values_equal_as_labels_are_one_unit() -> None:
    counts = pd.DataFrame({"age": [25, 25.0], "sex": ["a", "a"], "s": ["x", "x"], "n": [2, 3]})
    snapshot = from_counts(counts)
    assert len(snapshot.units) == 1 and snapshot.weights.tolist() == [5] and snapshot.n_rows == 5


def test_bad_counts_and_non_leaves_are_errors() -> None:
    counts = pd.DataFrame({"age": [25], "sex": ["c"], "s": ["x"], "n": [1]})
    with pytest.raises(HierarchyError, match="sex"):
        from_counts(counts)
    with pytest.raises(ValueError, match="positive"):
        from_counts(counts.assign(sex="a", n=0))


rows = st.lists(st.tuples(st.integers(20, 29), st.sampled_from("ab"), st.sampled_from("xyz")), min_size=3, max_size=80)


@settings(max_examples=40, deadline=None)
@given(rows=rows, k=st.integers(1, 3), limit=st.sampled_from([0.0, 0.1, 0.25]))
def test_search_on_counts_equals_the_anonymizer_on_records(rows, k: int, limit: float) -> None:
    frame = pd.DataFrame(rows, columns=["age", "sex", "s"])
    models = [KAnonymity(k), DistinctLDiversity("s", 1)]
    built = Snapshot.build(frame, quasi_identifiers=["age", "sex"], hierarchies=HIERARCHIES, model_columns=["s"])
    pushed = from_counts(counted(frame))
    assert pushed.n_rows == built.n_rows and len(pushed.units) == len(built.units)
    try:
        reference = anonymize(frame, algorithm="optimal", quasi_identifiers=["age", "sex"], hierarchies=HIERARCHIES,
                              models=models, sensitive_attributes=["s"], suppression_limit=limit)  # fmt: skip
    except Exception as refused:
        with pytest.raises(type(refused)):
            solve_snapshot(pushed, models, suppression_limit=limit, n_sensitive=1)
        return
    solution = solve_snapshot(pushed, models, suppression_limit=limit, n_sensitive=1)
    assert solution.details.levels == reference.details.levels
    assert solution.suppressed == reference.suppressed
    assert solution.utility.ncp == pytest.approx(reference.utility.ncp, rel=1e-12)
    assert solution.utility.ileft == pytest.approx(reference.utility.ileft, rel=1e-12)
    assert solution.utility.discernibility == reference.utility.discernibility
    assert np.isclose(solution.utility.c_avg, reference.utility.c_avg, equal_nan=True)
