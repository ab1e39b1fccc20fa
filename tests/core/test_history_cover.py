"""Issue 26: the clustering judges every record a published class covers, as the gate does (a leakage bound)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.anonymize.cluster_cover import CoverJudge
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.registry import with_derived_columns
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import history_models
from privacy_plugins.core.models import HistoryDiversity, KAnonymity, PersonalizedLeakage

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
HIERARCHIES = {
    "age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}
MODELS = [KAnonymity(4), PersonalizedLeakage("disease", bound=0.5)]
BOUND = 0.5


def _entry(published: pd.DataFrame) -> PublishedRelease:
    return PublishedRelease("r", "2026-11-27T00:00:00Z", "f", {}, class_signature(published, QIS, ["disease"]))


@functools.cache
def _covers(label: object, value: object, qi: str) -> bool:
    """The label covers the raw value: ``*``, a closed ``[a-b]`` range, or the value's text at some hierarchy level."""
    text = str(label)
    if text == "*":
        return True
    if text.startswith("[") and text.endswith("]"):
        low, high = text[1:-1].split("-")
        return float(low) <= float(value) <= float(high)  # type: ignore[arg-type]
    hierarchy = HIERARCHIES[qi]
    return any(str(hierarchy.generalize(pd.Series([value]), level)[0]) == text for level in range(hierarchy.height + 1))


def _rows(table: pd.DataFrame) -> list[dict[str, object]]:
    """Every published row as a dict (labels as text), one per record."""
    return [{q: str(v) for q, v in row.items()} for row in table[[*QIS, "disease"]].to_dict("records")]


def _naive_at_risk(source: pd.DataFrame, earlier: Sequence[pd.DataFrame], candidate: pd.DataFrame) -> list[int]:
    """The records of ``source`` the threat model puts at risk, record by record (``docs/composition.md``).

    H(t): the values of the classes covering t, intersected over the earlier releases (none
    covering: every value). N(t): the candidate's covering rows per value of H(t). At risk: a
    target the candidate covers with fewer than 2 values or one value over the bound of N(t);
    one the history alone leaves fewer than 2 values, only when the candidate drops one of them.
    """
    risky = []
    earlier = [_rows(release) for release in earlier]
    published = _rows(candidate)
    for i, record in source.iterrows():
        history: set[str] | None = None
        for release in earlier:
            holds = [all(_covers(row[q], record[q], q) for q in QIS) for row in release]
            if any(holds):
                values = {row["disease"] for row, held in zip(release, holds, strict=True) if held}
                history = values if history is None else history & values
        holds = [all(_covers(row[q], record[q], q) for q in QIS) for row in published]
        if not any(holds):
            continue
        counts = pd.Series([row["disease"] for row, held in zip(published, holds, strict=True) if held]).value_counts()
        if history is not None:
            counts = counts[counts.index.isin(sorted(history))]
        if history is not None and len(history) < 2:
            if len(history - set(counts.index)) > 0:
                risky.append(int(i))  # type: ignore[call-overload]
            continue
        if len(counts) < 2 or counts.max() > BOUND * counts.sum():
            risky.append(int(i))  # type: ignore[call-overload]
    return risky


def _tipped() -> tuple[pd.DataFrame, HistoryDiversity, np.ndarray]:
    """Her own class holds one flu and one hiv of H = {flu, hiv}; a neighbour covering her adds one flu."""
    earlier = pd.DataFrame({"age": ["[20-29]"] * 2, "zip": ["4790*"] * 2, "disease": ["flu", "hiv"]})
    history = ReleaseHistory("w", tuple(QIS), ("disease",)).appended(_entry(earlier))
    model = HistoryDiversity("disease", 2, history, HIERARCHIES, bound=BOUND)
    table = pd.DataFrame(
        {  # class 0: [20-25) 4790* (her and a hiv); class 1: [20-25) 47906, which covers her age and zip
            "age": [21, 22, 20, 24],
            "zip": ["47906", "47907", "47906", "47906"],
            "disease": ["flu", "hiv", "cold", "flu"],
        }
    )
    return with_derived_columns(table, [model]), model, np.array([0, 0, 1, 1])


def _judge(frame: pd.DataFrame, model: HistoryDiversity) -> CoverJudge:
    dimensions = [_dimension(frame[q], HIERARCHIES[q])[0] for q in QIS]
    members_only = lambda rows, group, n: np.zeros(n, dtype=bool)  # noqa: E731 (every class passes on its members)
    return CoverJudge(members_only, dimensions, frame, [model, PersonalizedLeakage("disease", bound=BOUND)])


def test_a_neighbour_covering_her_values_is_blamed_for_tipping_her_share() -> None:
    frame, model, group = _tipped()
    published = pd.DataFrame(
        {"age": ["[20-25)"] * 4, "zip": ["4790*", "4790*", "47906", "47906"], "disease": frame["disease"]}
    )
    earlier = pd.DataFrame({"age": ["[20-29]"] * 2, "zip": ["4790*"] * 2, "disease": ["flu", "hiv"]})
    # Her own class alone passes (one flu, one hiv); the neighbour's flu tips N = {flu: 2, hiv: 1}.
    assert 0 in _naive_at_risk(frame[[*QIS, "disease"]], [earlier], published)
    blamed = _judge(frame, model)(np.arange(4), group, 2)
    assert blamed.tolist() == [False, True]
    # The neighbour holding a hiv instead balances her: nobody at risk, nothing blamed.
    frame.loc[2, "disease"] = "hiv"
    published["disease"] = frame["disease"]
    assert _naive_at_risk(frame[[*QIS, "disease"]], [earlier], published) == []
    assert not _judge(frame, model)(np.arange(4), group, 2).any()


def test_a_record_left_out_is_still_judged_by_the_classes_covering_her() -> None:
    # Earlier: ages 20-22 were left {flu, hiv}, ages 23-29 {flu, cold}.
    earlier = pd.DataFrame(
        {"age": ["[20-22]"] * 2 + ["[23-29]"] * 2, "zip": ["4790*"] * 4, "disease": ["flu", "hiv", "flu", "cold"]}
    )
    history = ReleaseHistory("w", tuple(QIS), ("disease",)).appended(_entry(earlier))
    model = HistoryDiversity("disease", 2, history, HIERARCHIES, bound=BOUND)
    table = pd.DataFrame(
        {  # two classes of one flu and one hiv, both [20-25) 47906; the last record (23, cold) is left out
            "age": [21, 22, 20, 22, 23],
            "zip": ["47906"] * 5,
            "disease": ["flu", "hiv", "hiv", "flu", "cold"],
        }
    )
    frame = with_derived_columns(table, [model])
    rows, group = np.arange(4), np.array([0, 0, 1, 1])
    # Her H = {flu, cold}: the classes covering her leave her the flu alone.
    assert _naive_at_risk(table, [earlier], table.iloc[:4].assign(age="[20-24]")) == [4]
    assert _judge(frame, model)(rows, group, 2).tolist() == [True, True]
    without_her = with_derived_columns(table.iloc[:4], [model])
    assert not _judge(without_her, model)(rows, group, 2).any()  # the members alone pass


@pytest.mark.parametrize(
    ("algorithm", "seed", "limit"),
    [("k-member", 0, 0.05), ("two-phase", 1, 0.05), ("two-phase", 9, 0.05), ("two-phase", 3, 0.03),
     ("two-phase", 18, 0.03)],
)  # fmt: skip
def test_the_clusterings_own_output_passes_the_gate_when_neighbours_overlap(
    algorithm: str, seed: int, limit: float
) -> None:
    # On c430be5 the first two outputs left records whom a neighbouring class tipped over the bound (6 and 24
    # at risk) and the third was infeasible within 5%; with 4 removal rounds (not 12) it still was. On f364ed8
    # the last two were infeasible within 3% (two-phase's relaxed merging left classes only removals repair).
    rng = np.random.default_rng(seed)
    source = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 260),
            "zip": rng.choice(ZIPS, 260),
            "disease": rng.choice(["flu", "hiv", "cold", "cancer"], 260, p=[0.4, 0.25, 0.2, 0.15]),
        }
    )
    options = {"quasi_identifiers": QIS, "hierarchies": HIERARCHIES, "sensitive_attributes": ["disease"]}
    first = anonymize(source.iloc[:200], algorithm=algorithm, models=MODELS, **options)
    history = ReleaseHistory("w", tuple(QIS), ("disease",)).appended(_entry(first.table))
    models = [*MODELS, *history_models(MODELS, history, HIERARCHIES)]
    result = anonymize(source, algorithm=algorithm, models=models, suppression_limit=limit, **options)
    assert result.suppressed <= int(limit * 260)
    assert all(check.passed for check in result.models)
    assert composition_check(source, result.table, history, models, hierarchies=HIERARCHIES).passed
    assert _naive_at_risk(source, [first.table], result.table) == []


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(1, 12))
def test_the_cover_join_finds_exactly_the_points_inside_each_extent_also_when_remembered(
    seed: int, n_classes: int
) -> None:
    _, model, _ = _tipped()
    rng = np.random.default_rng(seed)
    table = pd.DataFrame(
        {"age": rng.integers(18, 40, 40), "zip": rng.choice(ZIPS, 40), "disease": rng.choice(["flu", "hiv"], 40)}
    )
    judge = _judge(with_derived_columns(table, [model]), model)
    for _ in range(2):  # the second join of the same or other extents reads the memo
        group = rng.integers(0, n_classes, 40)
        low, high = judge.extents(np.arange(40), group, n_classes)
        point, cls = judge.pairs(low, high)
        inside = np.all(
            (low[:, None, :] <= judge.points[:, :, None]) & (judge.points[:, :, None] <= high[:, None, :]), axis=0
        )
        assert sorted(zip(point.tolist(), cls.tolist(), strict=True)) == sorted(zip(*np.nonzero(inside), strict=True))
        # every class covers its own members' points
        assert inside[judge.point_of_row, group].all()


def test_a_blamed_neighbour_gives_up_the_value_over_her_share_not_its_own_most_frequent() -> None:
    frame, model, _ = _tipped()
    # The neighbour (class 1) holds two colds and one flu: its most frequent value is cold, but what tips
    # her N = {flu: 2, hiv: 1} over the bound is its flu (cold is not in her H = {flu, hiv}).
    frame = pd.concat([frame, frame.iloc[[2]].assign(age=23)], ignore_index=True)
    group = np.array([0, 0, 1, 1, 1])
    judge = _judge(frame, model)
    assert judge(np.arange(5), group, 2).tolist() == [False, True]
    hint = judge.over_share(np.arange(5), group, 2)
    assert {c: rows.tolist() for c, rows in hint.items()} == {1: [3]}  # the flu, one record is enough
    assert frame.loc[3, "disease"] == "flu"
