"""The domain rule inside the clustering and bucket search (issue 26, ``history: {protect: domain}``, deletions).

The oracle is the point-by-point one of ``test_history_domain`` (every point of the ages × zips domain,
H(p) recomputed naively from the published tables): nobody — present, deleted or not yet joined —
may be left below 2 values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import cluster_domain
from privacy_plugins.core.history import class_signature
from privacy_plugins.core.history_boxes import BoxRule
from privacy_plugins.core.history_release import history_models, release_with_history
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from tests.core.test_history_domain import (
    DISEASES,
    QIS,
    ZIPS,
    _hierarchies,
    _history,
    _point_values,
    _sequences,
    oracle,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sequences())
def test_the_box_rule_matches_the_point_by_point_oracle(
    sequence: tuple[list[pd.DataFrame], pd.DataFrame, int],
) -> None:
    """A candidate class given as labels and a value set: broken exactly when some point of its box is narrowed.

    The all-``*`` box is judged like any other (a search proposes classes with values, never marked rows)."""
    history, candidate, l = sequence
    candidate = candidate.loc[candidate["disease"] != "*"]
    assume(len(candidate))
    signatures = [class_signature(release, QIS, ["disease"]) for release in history]
    rule = BoxRule(signatures, QIS, "disease", l, _hierarchies())
    classes = candidate.groupby(QIS, sort=False).ngroup().to_numpy()
    labels = candidate.drop_duplicates(QIS)[QIS].reset_index(drop=True)
    held = rule.held(candidate["disease"].to_numpy(), classes, len(labels))
    expected = np.zeros(len(labels), dtype=bool)
    expected[classes[np.asarray(oracle(history, candidate, l), dtype=bool)]] = True
    assert rule.breaks(labels, held).tolist() == expected.tolist()
    assert rule.breaks(labels.iloc[::-1], held[::-1]).tolist() == expected[::-1].tolist()  # remembered per box


def test_only_the_domain_history_model_asks_a_box_rule() -> None:
    table = pd.DataFrame({"age": ["[20-29]"] * 2, "zip": ["4790*"] * 2, "disease": ["flu", "hiv"]})
    models = [KAnonymity(2), DistinctLDiversity("disease", 2)]
    history = _history(table)
    assert [m.box_rule() for m in history_models(models, history, _hierarchies())] == [None]
    (model,) = history_models(models, history, _hierarchies(), domain=True)
    assert isinstance(model.box_rule(), BoxRule)
    assert model.box_rule() is model.box_rule()  # one memo for the whole search
    assert [m.box_rule() for m in history_models(models, _history(), _hierarchies(), domain=True)] == [None]


@pytest.mark.parametrize(
    ("algorithm", "seed", "limit"),
    [("k-member", 2, 0.0), ("two-phase", 2, 0.0), ("bucket", 3, 0.05)],
)
def test_clustering_releases_with_deletions_leave_no_point_below_two_values(
    algorithm: str, seed: int, limit: float
) -> None:
    """Three releases; before each of the last two, 30% of the rows are deleted and 30 people join. With the domain
    protected every release passes within the suppression limit (none: the search itself must keep the rule, for
    k-member and two-phase) and no point of the domain keeps fewer than 2 values over all releases.
    Before the rule was inside the search, release 2 or 3 failed here (the gate would publish nothing)."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {"age": rng.integers(20, 40, 120), "zip": rng.choice(ZIPS, 120), "disease": rng.choice(DISEASES, 120)}
    )
    tables = [people.iloc[:60]]
    for start in (60, 90):
        kept = tables[-1].loc[np.random.default_rng(start).random(len(tables[-1])) >= 0.3]
        tables.append(pd.concat([kept, people.iloc[start : start + 30]]))
    models = [KAnonymity(3), DistinctLDiversity("disease", 2)]
    history, published = _history(), []
    for table in tables:
        release = release_with_history(
            table, quasi_identifiers=QIS, models=models, history=history, hierarchies=_hierarchies(),
            algorithm=algorithm, suppression_limit=limit, sensitive_attributes=["disease"], protect_domain=True,
        )  # fmt: skip
        assert release.passed, release.tried
        published.append(release.table)
        history = _history(*published)
    left, _ = _point_values(published)
    assert min(len(values) for values in left.values()) >= 2


class _Space:
    """A cost space whose box cost is the sum of its spans (what ``_partners`` prices merges with)."""

    @staticmethod
    def box_costs(low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return np.asarray((high - low).sum(axis=0), dtype=float)


class _Rule:
    """A rule whose verdict on a (box, values) is a fixed pseudo-random function of both: any pattern of refusals."""

    def __init__(self, salt: int) -> None:
        self.salt = salt
        self.asked = 0

    def breaks(self, labels: pd.DataFrame, held: np.ndarray) -> np.ndarray:
        self.asked += len(labels)
        text = labels.astype(str).agg("|".join, axis=1) + "|" + pd.Series(map(str, held.astype(int).tolist()))
        return np.asarray(pd.util.hash_pandas_object(text, index=False).to_numpy() % 3 == self.salt % 3)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 30),
    salt=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
    neighbours=st.integers(1, 12),
)
def test_partners_judged_lazily_are_those_judged_all_at_once(n: int, salt: int, seed: int, neighbours: int) -> None:
    """The repair judges merged boxes cheapest partner first and only as far as it must; it chooses the partners
    judging every one of them up front chooses (a naive run of the same greedy, every merge judged first)."""
    rng = np.random.default_rng(seed)
    low = rng.integers(0, 10, (2, n))
    high = low + rng.integers(0, 5, (2, n))
    held = [rng.random((n, 3)) < 0.5]
    bad = np.flatnonzero(rng.random(n) < 0.5)
    ids = rng.integers(0, n, 4 * n)
    ids[:n] = np.arange(n)

    def labels(coded: object, qis: list[str], low: np.ndarray, high: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({q: [f"{a}-{b}" for a, b in zip(low[i], high[i], strict=True)] for i, q in enumerate(qis)})

    chosen, asked = [], []
    for first in (1, cluster_domain.NEIGHBOURS):
        rule = _Rule(salt)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cluster_domain, "FIRST_PARTNERS", first)
            patch.setattr(cluster_domain, "_box_labels", labels)
            args = (_Space(), None, ["a", "b"], [rule], low, high, held, ids, n, bad, neighbours)
            chosen.append(cluster_domain._partners(*args))  # type: ignore[arg-type]
        asked.append(rule.asked)
    assert chosen[0].tolist() == chosen[1].tolist()
    assert asked[0] <= asked[1]
