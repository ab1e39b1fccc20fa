"""Bucket clustering keeps the release history's model by merging clusters (issue 26), against the naive oracle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_history_check import DISEASES, QIS, ZIPS, _hierarchies, _history, oracle

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_release import release_with_history
from privacy_plugins.core.models import DistinctLDiversity, FrequencyLDiversity, KAnonymity, from_config
from privacy_plugins.errors import InfeasibleAnonymizationError


def _table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 46, n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(DISEASES, n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )


def _earlier(source: pd.DataFrame) -> ReleaseHistory:
    first = anonymize(
        source,
        algorithm="mondrian",
        quasi_identifiers=QIS,
        models=[KAnonymity(2), DistinctLDiversity("disease", 2)],
        hierarchies={"zip": _hierarchies()["zip"]},
        sensitive_attributes=["disease"],
    ).table
    return _history([class_signature(first, QIS, ["disease"])])


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16))
def test_bucket_takes_the_history_model_and_every_record_keeps_two_values(seed: int) -> None:
    source = _table(seed, 60)
    history = _earlier(source.iloc[:40])
    model = from_config("history_l_diversity", sensitive_attribute="disease", l=2, history=history)
    models = [KAnonymity(3), FrequencyLDiversity("disease", 2), model]
    result = anonymize(source, algorithm="bucket", quasi_identifiers=QIS, models=models, hierarchies=_hierarchies(),
                       sensitive_attributes=["disease"], suppression_limit=0.1)  # fmt: skip
    assert result.passed and model.set_column not in result.table.columns
    published = result.table
    sizes = published.groupby(QIS).size()
    assert (sizes >= 3).all()  # merging keeps k …
    share = published.groupby(QIS)["disease"].agg(lambda s: s.value_counts().iloc[0] / len(s))
    assert (share <= 0.5 + 1e-9).all()  # … and frequency l (max count ≤ size / l)
    at_risk, _ = oracle(
        source.assign(bound=1.0), published, history.signatures(), [DistinctLDiversity("disease", 2)], _hierarchies()
    )
    assert not any(at_risk)


def test_bucket_releases_of_a_growing_table_pass_the_naive_intersection_attack() -> None:
    """Three releases through the history path; every record of each, with every earlier release, keeps 2 values."""
    table = _table(3, 60)
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    for size in (40, 50, 60):
        batch = table.iloc[:size]
        release = release_with_history(batch, quasi_identifiers=QIS, history=history, algorithm="bucket",
                                       models=[KAnonymity(3), DistinctLDiversity("disease", 2)],
                                       hierarchies=_hierarchies(), suppression_limit=0.05,
                                       sensitive_attributes=["disease"], reuse=False)  # fmt: skip
        assert release.passed, release.tried
        assert not any("without the history model" in step for step in release.tried)  # bucket takes it now
        targets = batch.assign(bound=1.0)
        at_risk, _ = oracle(
            targets, release.table, history.signatures(), [DistinctLDiversity("disease", 2)], _hierarchies()
        )
        assert not any(at_risk)
        signature = class_signature(release.table, QIS, ["disease"])
        history = history.appended(PublishedRelease(f"r{size}", "", "", release.transformation, signature))


def test_bucket_says_infeasible_when_even_one_cluster_cannot_keep_the_history() -> None:
    """Everyone kept {flu, hiv}; the table now holds no hiv: no grouping leaves two of those values."""
    source = _table(1, 30).assign(disease=["flu", "cold"] * 15)
    earlier = pd.DataFrame({"age": ["*"] * 2, "zip": ["*"] * 2, "disease": ["flu", "hiv"]})
    history = _history([class_signature(earlier, QIS, ["disease"])])
    model = from_config("history_l_diversity", sensitive_attribute="disease", l=2, history=history)
    models = [KAnonymity(3), DistinctLDiversity("disease", 2), model]
    with pytest.raises(InfeasibleAnonymizationError, match="does not hold even for the whole table"):
        anonymize(source, algorithm="bucket", quasi_identifiers=QIS, hierarchies=_hierarchies(), models=models)
