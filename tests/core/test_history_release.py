"""Re-applying a published transformation, suppression of records at risk, and the (a) → (b) → (c) orchestration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import reapply, release_with_history, suppress_at_risk
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import ConfigurationError

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
HIERARCHIES = {
    "age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}


def _release(table: pd.DataFrame, transformation: dict | None = None) -> PublishedRelease:
    return PublishedRelease(
        "r", "2026-11-26T00:00:00Z", "f", transformation or {}, class_signature(table, QIS, ["disease"])
    )


def test_full_domain_reapply_recodes_at_the_stored_levels_and_reports_values_outside_the_hierarchy() -> None:
    table = pd.DataFrame({"age": [21, 37, 150], "zip": ["47906", "47611", "47906"], "disease": ["a", "b", "c"]})
    release = _release(table.iloc[:0].astype(str), {"levels": {"age": 1, "zip": 1}})
    out = reapply(table, release, QIS, HIERARCHIES)
    assert out.uncovered == 1 and out.rows.tolist() == [0, 1]
    assert out.table["age"].tolist() == list(HIERARCHIES["age"].generalize(pd.Series([21, 37]), 1))
    assert out.table["zip"].tolist() == list(HIERARCHIES["zip"].generalize(pd.Series(["47906", "47611"]), 1))
    assert out.table["disease"].tolist() == ["a", "b"]


def test_local_reapply_takes_the_most_specific_covering_class_and_never_the_suppressed_one() -> None:
    published = pd.DataFrame(
        {
            "age": ["[20-29]", "[20-29]", "[20-45]", "[20-45]", "*"],
            "zip": ["4790*", "4790*", "47***", "47***", "*"],
            "disease": ["flu", "hiv", "flu", "cold", "hiv"],
        }
    )
    grown = pd.DataFrame({"age": [25, 40, 60], "zip": ["47907", "47610", "47907"], "disease": ["x", "y", "z"]})
    out = reapply(grown, _release(published), QIS, HIERARCHIES)
    assert out.table[QIS].to_numpy().tolist() == [["[20-29]", "4790*"], ["[20-45]", "47***"]]
    assert out.uncovered == 1 and out.rows.tolist() == [0, 1]  # 60 is covered only by the all-* (suppressed) row


def _growing() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 240
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(["flu", "hiv", "cold", "cancer"], n, p=[0.5, 0.2, 0.2, 0.1]),
        }
    )


@pytest.mark.parametrize("algorithm", ["optimal", "k-member"])
def test_release_with_history_passes_the_composition_check_at_every_release(algorithm: str) -> None:
    source = _growing().assign(person_id=lambda frame: [f"p{i}" for i in range(len(frame))])
    models = [KAnonymity(4), DistinctLDiversity("disease", 2)]
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    methods = []
    for size in (160, 200, 240):
        table = source.iloc[:size]
        release = release_with_history(
            table,
            quasi_identifiers=QIS,
            models=models,
            history=history,
            hierarchies=HIERARCHIES,
            algorithm=algorithm,
            suppression_limit=0.05,
            sensitive_attributes=["disease"],
            identifiers=["person_id"],
        )
        assert release.passed, release.tried
        assert list(release.table.columns) == ["age", "zip", "disease"]  # no identifier, no helper column
        assert release.suppressed == size - len(release.table) <= int(0.05 * size)
        again = composition_check(table, release.table, history, models, hierarchies=HIERARCHIES)
        assert again.passed and again.to_dict() == release.check.to_dict()
        methods.append(release.method)
        history = history.appended(_release(release.table, dict(release.transformation)))
    assert methods[0].startswith("anonymize")
    if tags_of(get_anonymizer(algorithm)).searches_lattice:  # insertions only: the stored node still fits
        assert methods[1:] == ["reapply", "reapply"]


def test_a_history_of_other_quasi_identifiers_is_refused() -> None:
    history = ReleaseHistory("weekly", ("age",), ("disease",)).appended(_release(_growing().astype(str)))
    with pytest.raises(
        ConfigurationError, match=r"quasi_identifiers \['age', 'zip'\] differ from those of the release"
    ):
        release_with_history(_growing(), quasi_identifiers=QIS, models=[KAnonymity(2)], history=history)


def test_every_column_needs_a_role_before_a_stored_transformation_is_reapplied() -> None:
    """(a) publishes the rows' other columns as they are: an unlisted one is refused (or dropped), never published."""
    source = _growing().assign(email=lambda frame: [f"p{i}@example.org" for i in range(len(frame))])
    first = source.iloc[:200].drop(columns=["email"])
    kwargs = {"quasi_identifiers": QIS, "models": [KAnonymity(4)], "hierarchies": HIERARCHIES,
              "sensitive_attributes": ["disease"]}  # fmt: skip
    earlier = release_with_history(first, history=ReleaseHistory("weekly", tuple(QIS), ("disease",)), **kwargs)
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",)).appended(
        _release(earlier.table, dict(earlier.transformation))
    )
    with pytest.raises(ConfigurationError, match=r"column\(s\) \['email'\] have no role"):
        release_with_history(source, history=history, **kwargs)
    dropped = release_with_history(source, history=history, unlisted_columns="drop", **kwargs)
    assert dropped.method == "reapply" and "email" not in dropped.table.columns
    kept = release_with_history(source, history=history, insensitive=["email"], **kwargs)
    assert kept.method == "reapply" and kept.table["email"].str.endswith("@example.org").all()


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), limit=st.sampled_from([0.05, 0.5]))
def test_suppress_at_risk_on_weighted_units_equals_it_on_the_records(seed: int, limit: float) -> None:
    """The snapshot path hands (c) distinct combinations with counts: the same records go as on the rows."""
    rng = np.random.default_rng(seed)
    raw = _growing().sample(frac=0.5, random_state=seed).reset_index(drop=True)
    raw["age"] = rng.integers(20, 40, len(raw))  # few distinct combinations: units hold several records
    earlier = raw.sample(frac=0.6, random_state=seed + 1)  # small earlier classes: records at risk to leave out
    earlier = earlier.assign(disease=rng.choice(["flu", "hiv", "cold", "cancer"], len(earlier)))
    signature = class_signature(earlier.assign(age=HIERARCHIES["age"].generalize(earlier["age"], 1)), QIS, ["disease"])
    history = ReleaseHistory("h", tuple(QIS), ("disease",)).appended(
        PublishedRelease("r1", "2026-11-26T00:00:00Z", "f", {}, signature)
    )
    models = [KAnonymity(2), DistinctLDiversity("disease", 2)]
    recoded = raw.assign(age=HIERARCHIES["age"].generalize(raw["age"], 1), zip=raw["zip"].str[:4] + "*")
    budget = int(limit * len(raw))
    options = {"quasi_identifiers": QIS, "hierarchies": HIERARCHIES, "max_suppressed": budget}
    rows_kept, rows, check, passed = suppress_at_risk(raw, recoded, np.arange(len(raw)), history, models, **options)
    units = raw.groupby([*QIS, "disease"], as_index=False).size().rename(columns={"size": COUNT})
    published = units.assign(age=HIERARCHIES["age"].generalize(units["age"], 1), zip=units["zip"].str[:4] + "*")
    kept, unit_rows, unit_check, unit_passed = suppress_at_risk(
        units, published, np.arange(len(units)), history, models, weighted=True, **options
    )
    assert unit_passed == passed
    assert unit_check.records_at_risk == check.records_at_risk
    on_rows = raw.iloc[rows][[*QIS, "disease"]].value_counts().sort_index()
    on_units = units.iloc[unit_rows].set_index([*QIS, "disease"])[COUNT].sort_index()
    assert on_rows.to_dict() == on_units.to_dict()  # the same records kept
    assert len(rows_kept) == int(kept[COUNT].sum())
