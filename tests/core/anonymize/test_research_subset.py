"""δ-presence's partial scope (issue 30): search the population, judge the others on the subset, publish it alone."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.anonymize.full_domain import FullDomainAnonymizer
from privacy_plugins.core.anonymize.research_scope import scoped_models
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import DeltaPresence, KAnonymity
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

AGES = list(range(20, 36))
ZIPS = ["4790", "4791", "4760", "4761"]
HIERARCHIES = {
    "age": Hierarchy.from_rows("age", [[a, f"{a // 4 * 4}-{a // 4 * 4 + 3}", f"{a // 8 * 8}+", "*"] for a in AGES]),
    "zip": Hierarchy.from_rows("zip", [[z, z[:3] + "*", "*"] for z in ZIPS]),
}


@st.composite
def populations(draw: st.DrawFn) -> pd.DataFrame:
    rows = draw(st.integers(8, 40))
    return pd.DataFrame(
        {
            "age": draw(st.lists(st.sampled_from(AGES), min_size=rows, max_size=rows)),
            "zip": draw(st.lists(st.sampled_from(ZIPS), min_size=rows, max_size=rows)),
            "study": draw(st.lists(st.booleans(), min_size=rows, max_size=rows)),
        }
    )


def naive_feasible(frame: pd.DataFrame, levels: tuple[int, int], k: int, dmax: float) -> bool:
    """Record by record: every generalized class with a subset record has ≥ k of them and δ ≤ dmax."""
    ages = HIERARCHIES["age"].generalize(frame["age"], levels[0]).tolist()
    zips = HIERARCHIES["zip"].generalize(frame["zip"], levels[1]).tolist()
    keys = list(zip(ages, zips, strict=True))
    for key in set(keys):
        members = [i for i, other in enumerate(keys) if other == key]
        in_subset = sum(bool(frame["study"].iloc[i]) for i in members)
        if in_subset and (in_subset < k or in_subset / len(members) > dmax + 1e-12):
            return False
    return True


@settings(max_examples=12, deadline=None)
@given(populations(), st.integers(1, 3), st.sampled_from([0.5, 0.75, 1.0]))
def test_the_optimum_publishes_the_subset_of_a_feasible_node_as_the_exhaustive_scan(
    frame: pd.DataFrame, k: int, dmax: float
) -> None:
    feasible = [node for node in itertools.product(range(4), range(3)) if naive_feasible(frame, node, k, dmax)]
    models = [KAnonymity(k), DeltaPresence(0.0, dmax, "study")]
    problem = {"quasi_identifiers": ["age", "zip"], "hierarchies": HIERARCHIES, "models": models}
    if not feasible:
        with pytest.raises(InfeasibleAnonymizationError):
            anonymize(frame, **problem)
        return
    optimal = anonymize(frame, **problem)
    exhaustive = anonymize(frame, algorithm="exhaustive", **problem)
    node = (optimal.details.levels["age"], optimal.details.levels["zip"])
    assert node in feasible
    assert optimal.utility.ncp == pytest.approx(exhaustive.utility.ncp)  # same optimum as the exhaustive scan
    # the subset alone is published, without its flag; the accounting holds
    subset = frame[frame["study"]]
    assert "study" not in optimal.table.columns and len(optimal.table) == len(subset)
    assert optimal.rows_in == optimal.rows_out + optimal.suppressed + optimal.out_of_scope
    assert optimal.out_of_scope == len(frame) - len(subset) and optimal.suppressed == 0
    expected = sorted(
        zip(
            HIERARCHIES["age"].generalize(subset["age"], node[0]).tolist(),
            HIERARCHIES["zip"].generalize(subset["zip"], node[1]).tolist(),
            strict=True,
        )
    )
    assert sorted(zip(optimal.table["age"].tolist(), optimal.table["zip"].tolist(), strict=True)) == expected
    if len(subset):
        assert optimal.table.groupby(["age", "zip"]).size().min() >= k


def test_suppressed_subset_rows_and_rows_out_of_scope_are_counted() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"age": rng.choice(AGES, 300), "zip": rng.choice(ZIPS, 300), "study": rng.random(300) < 0.3})
    result = anonymize(
        frame,
        quasi_identifiers=["age", "zip"],
        hierarchies=HIERARCHIES,
        models=[KAnonymity(4), DeltaPresence(0.0, 0.6, "study")],
        suppression_limit=0.1,
    )
    in_subset = int(frame["study"].sum())
    assert result.out_of_scope == 300 - in_subset
    assert result.rows_out + result.suppressed == in_subset == len(result.table)
    report = result.to_dict()
    assert report["rows_in"] == report["rows_out"] + report["suppressed"] + report["out_of_scope"]
    assert "of the research subset 'study'" in " ".join(m.model for m in result.models)


def test_an_algorithm_that_does_not_declare_research_subset_refuses_it() -> None:
    frame = pd.DataFrame({"age": AGES * 2, "zip": ZIPS * 8, "study": [True, False] * 16})
    with pytest.raises(ConfigurationError, match="cannot publish only a research subset.*research_subset"):
        anonymize(frame, algorithm="mondrian", quasi_identifiers=["age", "zip"], hierarchies=HIERARCHIES,
                  models=[KAnonymity(2), DeltaPresence(0.0, 0.6, "study")])  # fmt: skip


def test_the_snapshot_search_honours_a_research_subset_as_the_search_over_the_rows() -> None:
    """With the models scoped as ``anonymize`` scopes them, the snapshot search finds the in-memory node."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"age": rng.choice(AGES, 200), "zip": rng.choice(ZIPS, 200), "study": rng.random(200) < 0.3})
    models = [KAnonymity(3), DeltaPresence(0.0, 0.5, "study")]
    snapshot = Snapshot.build(frame, quasi_identifiers=["age", "zip"], hierarchies=HIERARCHIES, model_columns=["study"])
    scoped, column = scoped_models(models, "optimal", True)
    assert column == "study"
    solution = FullDomainAnonymizer().solve_snapshot(snapshot, scoped, suppression_limit=0.05)
    reference = anonymize(frame, quasi_identifiers=["age", "zip"], hierarchies=HIERARCHIES, models=models,
                          suppression_limit=0.05)  # fmt: skip
    assert solution.details.levels == reference.details.levels
    with pytest.raises(ConfigurationError, match="cannot publish only a research subset"):
        scoped_models(models, "mondrian", False)
