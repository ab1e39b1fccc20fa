"""Deletions between releases: classes keep the last release's signatures (issue 26), against a naive attack."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_history_check import DISEASES, QIS, ZIPS, _covers, _hierarchies, _text

from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_release import release_with_history
from privacy_plugins.core.history_signatures import signature_breaks
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import ConfigurationError


def _releases(seed: int, keep: bool) -> tuple[list[pd.DataFrame], list[pd.DataFrame], list[bool]]:
    """Three releases of a table that loses 30% of its rows and gains new ones before each later release."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {
            "age": rng.integers(20, 46, 70),
            "zip": rng.choice(ZIPS, 70),
            "disease": rng.choice(DISEASES, 70, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    tables = [people.iloc[:40]]
    for start in (40, 55):
        kept = tables[-1].loc[rng.random(len(tables[-1])) >= 0.3]
        tables.append(pd.concat([kept, people.iloc[start : start + 15]]))
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    published, passed = [], []
    for table in tables:
        release = release_with_history(table, quasi_identifiers=QIS, history=history, algorithm="optimal",
                                       models=[KAnonymity(2), DistinctLDiversity("disease", 2)],
                                       hierarchies=_hierarchies(), suppression_limit=0.9,
                                       sensitive_attributes=["disease"], keep_signatures=keep)  # fmt: skip
        passed.append(release.passed)
        published.append(release.table)
        history = history.appended(
            PublishedRelease("r", "", "", release.transformation, class_signature(release.table, QIS, ["disease"]))
        )
    return tables, published, passed


def _deleted_disclosed(tables: list[pd.DataFrame], published: list[pd.DataFrame]) -> int:
    """People deleted after a release whom the naive intersection of every release leaves fewer than 2 values.

    Record by record: a release's values for a person are those of every class covering her QIs
    (none covering: it tells nothing); the adversary intersects them over all releases.
    """
    hierarchies = _hierarchies()
    rows = [[row for _, row in release.iterrows()] for release in published]
    last = set(tables[-1].index)
    disclosed = 0
    for index, person in pd.concat(tables).loc[lambda t: ~t.index.duplicated()].iterrows():
        if index in last:
            continue
        left: set[str] | None = None
        for release in rows:
            values = {
                _text(row["disease"])
                for row in release
                if all(_covers(row[q], person[q], hierarchies.get(q)) for q in QIS)
            }
            if values:
                left = values if left is None else left & values
        disclosed += left is not None and len(left) < 2
    return disclosed


def test_deleted_people_keep_two_values_when_classes_keep_their_signatures() -> None:
    """Every release passes and no deleted person is left below 2 values (the benchmark shows the rule is needed:
    ``bench_history.py --deletions 0.2`` leaves deleted people disclosed without ``--keep-signatures``)."""
    tables, published, passed = _releases(0, keep=True)
    assert all(passed)
    assert any(len(release) < len(table) for release, table in zip(published, tables, strict=True))  # it cost rows
    assert _deleted_disclosed(tables, published) == 0


def test_signature_breaks_compares_boxes_over_the_domain_and_needs_hierarchies() -> None:
    previous = pd.DataFrame({"age": ["[20-24]", "[25-29]"], "zip": ["4790*", "4790*"], "disease": ["flu", "hiv"]})
    previous["__count"] = 1
    candidate = pd.DataFrame(
        {
            "age": ["[20-29]", "[20-29]", "[30-34]"],
            "zip": ["4790*", "4790*", "4790*"],
            "disease": ["flu", "cold", "hiv"],
        }
    )
    # [20-29] overlaps both earlier classes but lacks hiv; [30-34] overlaps neither
    assert signature_breaks(previous, candidate, QIS, ["disease"], _hierarchies()).tolist() == [True, True, False]
    with pytest.raises(ConfigurationError, match="needs a hierarchy for \\['age'\\]"):
        signature_breaks(previous, candidate, QIS, ["disease"], {"zip": _hierarchies()["zip"]})
