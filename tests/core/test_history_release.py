"""Re-applying a published transformation, suppression of records at risk, and the (a) → (b) → (c) orchestration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from privacy_plugins.core import history_release
from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import reapply, release_with_history, suppress_at_risk
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    KAnonymity,
    PrivacyModel,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

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


LDIV = [DistinctLDiversity, FrequencyLDiversity, EntropyLDiversity]


@settings(max_examples=60, deadline=None)
@example(values=["a", "a", "b"], kept=[False] + [True] * 7, k=1, l=2)  # frequency l-diversity: 1.5, then 2
@given(
    values=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=8),
    kept=st.lists(st.booleans(), min_size=8, max_size=8),
    k=st.integers(1, 4),
    l=st.integers(1, 3),
)
def test_a_class_that_fails_a_model_failing_on_every_subset_fails_on_every_subset(
    values: list[str], kept: list[bool], k: int, l: int
) -> None:
    """What ``fails_on_every_subset`` declares (k-anonymity, distinct l-diversity): leaving records of a violating
    class out never makes it pass. (c)'s shortcut on a re-applied candidate counts such classes as lost."""
    one = pd.DataFrame({"q": ["x"] * len(values), "disease": values})
    some = one.loc[np.asarray(kept[: len(values)])]
    assume(len(some))
    models = [KAnonymity(k), *(variant("disease", l) for variant in LDIV)]
    for model in (m for m in models if m.fails_on_every_subset):
        if not model.holds(EquivalenceClasses.from_frame(one, ["q"])):
            assert not model.holds(EquivalenceClasses.from_frame(some.reset_index(drop=True), ["q"])), model


def _grown_releases(algorithm: str, seed: int, limit: float, protect_domain: bool) -> list[tuple[object, ...]]:
    """Three growing releases of a random table (insertions only); what each publishes and how."""
    rng = np.random.default_rng(seed)
    n = 150
    source = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(["flu", "hiv", "cold", "cancer"], n, p=[0.5, 0.2, 0.2, 0.1]),
        }
    )
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    out = []
    for size in (90, 120, 150):
        release = release_with_history(
            source.iloc[:size], quasi_identifiers=QIS, models=[KAnonymity(3), DistinctLDiversity("disease", 2)],
            history=history, hierarchies=HIERARCHIES, algorithm=algorithm, suppression_limit=limit,
            sensitive_attributes=["disease"], protect_domain=protect_domain,
        )  # fmt: skip
        out.append((release.table.to_csv(index=False), release.method, release.suppressed, release.check.to_dict()))
        if release.passed:
            history = history.appended(_release(release.table, dict(release.transformation)))
    return out


@settings(max_examples=4, deadline=None)
@example(algorithm="mondrian", seed=1, limit=0.1, protect_domain=False)  # reapply+suppress, then (a) ruled out
@example(algorithm="k-member", seed=3, limit=0.02, protect_domain=True)
@given(
    algorithm=st.sampled_from(["mondrian", "k-member"]),
    seed=st.integers(0, 10_000),
    limit=st.sampled_from([0.0, 0.02, 0.1]),
    protect_domain=st.booleans(),
)
def test_a_reapplied_candidate_the_models_rule_out_publishes_what_running_its_suppression_would(
    algorithm: str, seed: int, limit: float, protect_domain: bool
) -> None:
    """(a) skips (c) when its classes below k / distinct l alone exceed the limit (``lost_to_the_models``):
    every release publishes the same table, by the same method, as when (c) runs on every re-applied candidate."""
    shortcut = _grown_releases(algorithm, seed, limit, protect_domain)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(history_release, "lost_to_the_models", lambda *args, **kwargs: 0)
        assert _grown_releases(algorithm, seed, limit, protect_domain) == shortcut


def _after_a_first_mondrian_release() -> tuple[pd.DataFrame, list[PrivacyModel], ReleaseHistory]:
    """The growing source, k = 4 and distinct 2-diversity, a history of Mondrian's release of its first 200 rows."""
    source = _growing()
    models: list[PrivacyModel] = [KAnonymity(4), DistinctLDiversity("disease", 2)]
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    first = release_with_history(
        source.iloc[:200], quasi_identifiers=QIS, models=models, history=history, hierarchies=HIERARCHIES,
        algorithm="mondrian", suppression_limit=0.02, sensitive_attributes=["disease"],
    )  # fmt: skip
    return source, models, history.appended(_release(first.table, dict(first.transformation)))


def test_the_shortcut_is_taken_and_reported_with_counts() -> None:
    """Half the people deleted: the last release's classes, re-applied, miss k; (c) is not run, ``tried`` says why."""
    source, models, history = _after_a_first_mondrian_release()
    with pytest.MonkeyPatch.context() as patch:
        ran = []
        patch.setattr(
            history_release, "suppress_at_risk",
            lambda *args, **kwargs: ran.append(len(args[1])) or suppress_at_risk(*args, **kwargs),
        )  # fmt: skip
        second = release_with_history(
            source.iloc[100:240], quasi_identifiers=QIS, models=models, history=history,
            hierarchies=HIERARCHIES, algorithm="mondrian", suppression_limit=0.02, sensitive_attributes=["disease"],
        )  # fmt: skip
    assert second.passed and second.tried[0].startswith("reapply: 0 uncovered, ")
    assert "in classes below a model, above the suppression limit (2)" in second.tried[0], second.tried
    assert len(ran) == 1  # (c) on (b)'s candidate only


def test_when_anonymizing_finds_nothing_the_skipped_reapply_is_reported_as_if_it_had_run() -> None:
    """(b) infeasible after (a)'s shortcut: the failed result is what (c) on the re-applied candidate leaves."""
    source, models, history = _after_a_first_mondrian_release()

    def second() -> tuple[object, ...]:
        release = release_with_history(
            source.iloc[100:240], quasi_identifiers=QIS, models=models, history=history, hierarchies=HIERARCHIES,
            algorithm="mondrian", suppression_limit=0.02, sensitive_attributes=["disease"],
        )  # fmt: skip
        return release.table.to_csv(index=False), release.method, release.suppressed, release.check.to_dict()

    def infeasible(*args: object, **kwargs: object) -> None:
        raise InfeasibleAnonymizationError("nothing")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(history_release, "anonymize", infeasible)
        skipped = second()
        patch.setattr(history_release, "lost_to_the_models", lambda *args, **kwargs: 0)
        assert skipped == second() and skipped[1] == "failed"
