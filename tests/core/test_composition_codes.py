"""The integer-code composition check against a record-by-record oracle written here.

Releases are generated directly (no anonymizer): random classes over a prefix of the records
(the later records are newcomers the earlier classes may still cover), each class labelled per
QI by its exact value, a closed range, a hierarchy ancestor or ``*``, and some releases carry a
suppressed class (every QI ``*``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.composition import covering_sets
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.models import DistinctLDiversity, FrequencyLDiversity, PersonalizedLeakage, PrivacyModel

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
DISEASES = ["flu", "hiv", "cold", "cancer", "gout"]
HIERARCHIES: dict[Hashable, Hierarchy] = {
    "age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}
ROWS = {qi: [[str(cell) for cell in row] for row in h.to_rows()] for qi, h in HIERARCHIES.items()}
MODELS: list[PrivacyModel] = [
    DistinctLDiversity("disease", 2),
    DistinctLDiversity("disease", 3),
    FrequencyLDiversity("disease", 1.5),
    PersonalizedLeakage("disease", bound_column="bound"),
]


def _covers(qi: str, label: str, value: object) -> bool:
    """Naive coverage: equal, ``*``, an ancestor in the hierarchy, or a closed range holding the number."""
    if label in ("*", str(value)):
        return True
    if any(row[0] == str(value) and label in row for row in ROWS[qi]):
        return True
    if qi == "age" and label.startswith("[") and label.endswith("]"):
        low, high = label[1:-1].split("-")
        return int(low) <= int(str(value)) <= int(high)
    return False


def _label(qi: str, values: pd.Series, kind: int) -> str:
    """A label covering every value of a class: exact (when one value), a range, an ancestor, or ``*``."""
    distinct = sorted({str(v) for v in values})
    if kind == 0 and len(distinct) == 1:
        return distinct[0]
    if kind <= 1 and qi == "age":
        return f"[{min(values)}-{max(values)}]"
    if kind <= 2:
        for level in range(1, len(ROWS[qi][0])):
            ancestors = {row[level] for row in ROWS[qi] if row[0] in distinct}
            if len(ancestors) == 1:
                return ancestors.pop()
    return "*"


@st.composite
def cases(draw: st.DrawFn) -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]:
    """A source, 0–3 earlier releases of growing prefixes, and a candidate."""
    n = draw(st.integers(min_value=4, max_value=18))
    source = pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(20, 45), min_size=n, max_size=n)),
            "zip": draw(st.lists(st.sampled_from(ZIPS), min_size=n, max_size=n)),
            "disease": draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n)),
            "bound": draw(st.lists(st.sampled_from([0.5, 0.75, 1.0]), min_size=n, max_size=n)),
        }
    )

    def release() -> pd.DataFrame:
        rows = source.iloc[: draw(st.integers(1, n))]
        kept = rows.loc[draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))]
        if kept.empty:
            kept = rows.iloc[:1]
        classes = np.asarray(draw(st.lists(st.integers(0, 3), min_size=len(kept), max_size=len(kept))))
        published = kept[["disease"]].copy()
        for qi in QIS:
            published[qi] = ""
            for cls in np.unique(classes):
                published.loc[classes == cls, qi] = _label(qi, kept[qi][classes == cls], draw(st.integers(0, 3)))
        if draw(st.booleans()):  # suppressed records, marked with every QI "*"
            suppressed = source.iloc[draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))]
            published = pd.concat([published, suppressed[["disease"]].assign(age="*", zip="*")])
        return published.reset_index(drop=True)

    history = [release() for _ in range(draw(st.integers(0, 3)))]
    return source, history, release()


def _counts(release: pd.DataFrame, record: pd.Series) -> dict[str, int] | None:
    """Disease → rows over the classes covering ``record`` (``None``: no class covers it)."""
    found: dict[str, int] | None = None
    for _, row in release.iterrows():
        if all(_covers(qi, str(row[qi]), record[qi]) for qi in QIS):
            found = found or {}
            found[row["disease"]] = found.get(row["disease"], 0) + 1
    return found


def _at_risk(model: PrivacyModel, counts: Mapping[str, int], bound: float) -> bool:
    values = sorted(counts.values(), reverse=True)
    if isinstance(model, DistinctLDiversity):
        return len(values) < model.l
    if isinstance(model, FrequencyLDiversity):
        return not values or sum(values) / values[0] < model.l - 1e-9
    assert isinstance(model, PersonalizedLeakage)
    return not values or values[0] / sum(values) > bound + 1e-9


def oracle(
    source: pd.DataFrame, history: Sequence[pd.DataFrame], candidate: pd.DataFrame
) -> tuple[list[bool], dict[str, tuple[int, int | None, int]]]:
    """Record by record: at risk under any model; per model (at risk, smallest intersection, already at risk)."""
    at_risk = [False] * len(source)
    risky = dict.fromkeys(map(str, MODELS), 0)
    already = dict.fromkeys(map(str, MODELS), 0)
    smallest: int | None = None
    for position, (_, record) in enumerate(source.iterrows()):
        new = _counts(candidate, record)
        if new is None:
            continue  # the candidate covers nobody with her values: it tells nothing new
        before: set[str] | None = None
        for release in history:
            earlier = _counts(release, record)
            if earlier is not None:
                before = set(earlier) if before is None else before & set(earlier)
        left = set(new) if before is None else set(new) & before
        smallest = len(left) if smallest is None else min(smallest, len(left))
        for model in MODELS:
            if before is not None and len(before) < model.minimum_class_size:
                already[str(model)] += 1  # a newcomer the history alone pins down: only narrowing her fails
                fails = len(left) < len(before)
            else:
                fails = _at_risk(model, {value: new[value] for value in left}, float(record["bound"]))
            risky[str(model)] += fails
            at_risk[position] |= fails
    return at_risk, {name: (risky[name], smallest, already[name]) for name in risky}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_code_lookup_check_equals_the_record_by_record_oracle(
    case: tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame],
) -> None:
    source, earlier, candidate = case
    history = ReleaseHistory("h", tuple(QIS), ("disease",))
    for position, table in enumerate(earlier):
        signature = class_signature(table, QIS, ["disease"])
        history = history.appended(PublishedRelease(f"r{position}", "2026-11-26T00:00:00Z", "f", {}, signature))
    at_risk, per_model = oracle(source, earlier, candidate)
    signature = class_signature(candidate, QIS, ["disease"])
    by_record = composition_check(source, signature, history, MODELS, hierarchies=HIERARCHIES)
    assert by_record.at_risk.tolist() == at_risk
    assert {m.model: (m.records_at_risk, m.smallest, m.already_at_risk) for m in by_record.models} == per_model
    grouped = source.groupby([*QIS, "bound"], as_index=False).size()
    counted = composition_check(grouped, candidate, history, MODELS, hierarchies=HIERARCHIES, count_column="size")
    assert {m.model: (m.records_at_risk, m.smallest, m.already_at_risk) for m in counted.models} == per_model
    assert int(grouped["size"].to_numpy()[counted.at_risk].sum()) == sum(at_risk) == counted.records_at_risk


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_every_covering_class_is_found_once(case: tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]) -> None:
    """``matches``: each (combination, covering class) pair exactly once, class ids consistent with the rows'."""
    source, _, candidate = case
    combos = source[QIS].drop_duplicates().reset_index(drop=True)
    found = covering_sets(combos, [candidate], QIS, "disease", HIERARCHIES)
    assert found.matches is not None
    combo, cls, class_of_row = found.matches[0]
    labels_of = {int(c): tuple(candidate.loc[class_of_row == c, QIS].iloc[0]) for c in np.unique(class_of_row)}
    for c in np.unique(class_of_row):  # one id per label tuple
        assert len(candidate.loc[class_of_row == c, QIS].drop_duplicates()) == 1
    assert len(set(labels_of.values())) == len(labels_of)
    pairs = sorted(zip(combo.tolist(), cls.tolist(), strict=True))
    assert len(pairs) == len(set(pairs))
    expected = sorted(
        (position, c)
        for position, record in combos.iterrows()
        for c, labels in labels_of.items()
        if all(_covers(qi, str(label), record[qi]) for qi, label in zip(QIS, labels, strict=True))
    )
    assert pairs == expected


@pytest.mark.parametrize("n_values", [3, 65, 300])
def test_small_and_large_sensitive_domains_give_the_same_sets(n_values: int) -> None:
    """Bitsets (up to 256 values, one or more words) and sorted codes (beyond) against a plain loop."""
    rng = np.random.default_rng(n_values)
    source = pd.DataFrame({"age": rng.integers(20, 46, 25), "zip": rng.choice(ZIPS, 25)})
    rows = max(80, n_values)
    release = pd.DataFrame(
        {
            "age": [_label("age", pd.Series([a, a + int(rng.integers(0, 6))]), 1) for a in rng.integers(20, 46, rows)],
            "zip": rng.choice([*ZIPS, "4790*", "*"], rows),
            "disease": rng.permutation([f"v{i % n_values}" for i in range(rows)]),
        }
    )
    combos = source.drop_duplicates().reset_index(drop=True)
    found = covering_sets(combos, [release], QIS, "disease", HIERARCHIES)
    assert len(found.labels) == n_values
    counted = covering_sets(combos, [release], QIS, "disease", HIERARCHIES, with_counts=True)
    assert counted.counts is not None
    for position, record in combos.iterrows():
        counts = _counts(release, record)
        expected = set(found.labels) if counts is None else set(counts)
        assert set(found.labels[found.held[0][position]]) == expected
        assert set(counted.labels[counted.held[0][position]]) == expected
        if counts is not None:
            assert dict(zip(counted.labels, counted.counts[0][position], strict=True)) == {
                value: counts.get(value, 0) for value in counted.labels
            }
