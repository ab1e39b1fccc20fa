"""cluster_suppress.publish_kept: the kept rows' NCP is normalized by the whole table's domain, as publish_groups'."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize.cluster_suppress import publish_kept
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.registry import anonymization_request
from privacy_plugins.core.models import KAnonymity


@settings(max_examples=25, deadline=None)
@given(
    ages=st.lists(st.integers(20, 40), min_size=2, max_size=30),
    seed=st.integers(0, 1000),
    domain=st.sampled_from([None, (0.0, 100.0), (20.0, 40.0), (10.0, 60.0)]),
)
def test_kept_rows_ncp_uses_the_tables_domain(ages: list[int], seed: int, domain: tuple[float, float] | None) -> None:
    """A block of a larger table (``domain``: that table's range): suppression must not rescale the kept rows' NCP."""
    frame = pd.DataFrame({"age": ages})
    n = len(frame)
    rng = np.random.default_rng(seed)
    cluster = rng.integers(-1, 3, n)  # -1: left out
    cluster[rng.integers(0, n)] = 0
    kept = np.unique(cluster[cluster >= 0], return_inverse=True)[1].ravel()
    cluster[cluster >= 0] = kept
    n_clusters = int(kept.max()) + 1
    request = anonymization_request(frame, quasi_identifiers=["age"], models=[KAnonymity(1)])
    coded = [_dimension(frame["age"], None, domain)]

    (published, utility, _, _), suppressed = publish_kept(frame, request, coded, cluster, n_clusters)

    # Naive: each kept row costs its cluster's age range over the table's range, each left-out row 1.
    low_end, high_end = domain if domain is not None else (min(ages), max(ages))
    span = high_end - low_end
    cost = 0.0
    for c in cluster:
        members = [ages[i] for i in range(n) if cluster[i] == c]
        cost += 1.0 if c < 0 else ((max(members) - min(members)) / span if span else 0.0)
    assert suppressed == int((cluster < 0).sum())
    assert len(published) == n - suppressed
    assert abs(utility.ncp - cost / n) < 1e-12
