"""The intersection attack over published tables against a record-by-record oracle written here."""

from __future__ import annotations

import itertools
import json
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError, UnknownColumnError

QIS = ["age", "zip"]


def _text(value: object) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def _in_range(label: str, value: float) -> bool:
    """Naive reading of "[a-b]", "[a-b)" and "a-b" (non-negative bounds only, as the tests publish)."""
    closed_end = True
    body = label
    if label.startswith("["):
        closed_end = label.endswith("]")
        body = label[1:-1]
    parts = body.split("-")
    if len(parts) != 2:
        return False
    try:
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        return False
    return low <= value <= high if closed_end else low <= value < high


def _covers(label: object, value: object, hierarchy: Hierarchy | None) -> bool:
    text = _text(label)
    if text in ("*", _text(value)):
        return True
    if hierarchy is not None:
        for row in hierarchy.to_rows():
            if row[0] == _text(value) and text in row:
                return True
    if isinstance(value, (int, float, np.integer, np.floating)):
        return _in_range(text, float(value))
    return False


def _marked(row: pd.Series, qis: Sequence[str], sensitive: str) -> bool:
    """Every QI ``*`` and the sensitive value hidden (``*`` or missing)."""
    return all(_text(row[q]) == "*" for q in qis) and (pd.isna(row[sensitive]) or _text(row[sensitive]) == "*")


def oracle(
    source: pd.DataFrame,
    releases: Sequence[pd.DataFrame],
    qis: Sequence[str],
    sensitive: str,
    hierarchies: Mapping[Hashable, Hierarchy],
    l: int,
) -> dict[tuple[int, ...], tuple[int, int, int, int, int | None]]:
    """Per set of releases (singles, pairs, all), record by record.

    (disclosed, disclosed to the record's own value, below l, empty, smallest)
    """
    rows = [row for release in releases for _, row in release.iterrows() if not _marked(row, qis, sensitive)]
    universe = {_text(row[sensitive]) for row in rows}
    candidates: list[list[set[str] | None]] = []
    for _, record in source.iterrows():
        per_release: list[set[str] | None] = []
        for release in releases:
            held: set[str] | None = None
            for _, row in release.iterrows():
                if _marked(row, qis, sensitive):  # a marked suppressed row publishes no value: it covers nobody
                    continue
                if all(_covers(row[q], record[q], hierarchies.get(q)) for q in qis):
                    held = (held or set()) | {_text(row[sensitive])}
            per_release.append(held)  # None: no class covers her, the release tells nothing about her
        candidates.append(per_release)
    n = len(releases)
    sets = [(i,) for i in range(n)] + list(itertools.combinations(range(n), 2)) + [tuple(range(n))]
    out = {}
    for members in sets:
        # Records some release of ``members`` covers (every value where one does not); the others are never at risk.
        left = [
            set.intersection(*(universe if c[m] is None else c[m] for m in members))
            for c in candidates
            if any(c[m] is not None for m in members)
        ]
        truth = [
            _text(value)
            for value, c in zip(source[sensitive], candidates, strict=True)
            if any(c[m] is not None for m in members)
        ]
        sizes = [len(values) for values in left]
        out[members] = (
            sum(s == 1 for s in sizes),
            sum(values == {true} for values, true in zip(left, truth, strict=True)),
            sum(s < l for s in sizes),
            sum(s == 0 for s in sizes),
            min(sizes) if sizes else None,
        )
    return out


def _measured(report_dict: dict) -> dict[tuple[int, ...], tuple[int, int, int, int, int | None]]:
    counts = [*report_dict["per_release"], *report_dict["pairs"], report_dict["overall"]]
    return {
        tuple(c["releases"]): (c["disclosed"], c["disclosed_correctly"], c["below_l"], c["empty"], c["smallest"])
        for c in counts
    }


def _hierarchies(source: pd.DataFrame) -> dict[Hashable, Hierarchy]:
    return {
        "age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)),
        "zip": masking_hierarchy("zip", sorted(set(source["zip"]))),
    }


@st.composite
def sources(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=6, max_value=24))
    ages = draw(st.lists(st.integers(20, 45), min_size=n, max_size=n))
    zips = draw(st.lists(st.sampled_from(["47906", "47907", "47610", "47611"]), min_size=n, max_size=n))
    disease = draw(st.lists(st.sampled_from(["flu", "hiv", "cold", "cancer"]), min_size=n, max_size=n))
    return pd.DataFrame({"age": ages, "zip": zips, "disease": disease})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=sources(),
    plan=st.lists(
        st.tuples(st.sampled_from(["optimal", "mondrian", "two-phase"]), st.booleans(), st.booleans()),
        min_size=1,
        max_size=3,
    ),
    seed=st.integers(0, 2**16),
    l=st.integers(1, 3),
)
def test_matches_the_record_by_record_oracle_on_growing_releases(
    source: pd.DataFrame, plan: list[tuple[str, bool, bool]], seed: int, l: int
) -> None:
    """Releases of growing shuffled subsets by the product's anonymizers; attack = naive oracle."""
    hierarchies = _hierarchies(source)
    shuffled = source.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    releases = []
    for step, (algorithm, age_hierarchy, mark) in enumerate(plan):
        rows = len(source) - (len(plan) - 1 - step) * max(1, len(source) // 6)
        given_hierarchies = dict(hierarchies)
        if not age_hierarchy and algorithm != "optimal":
            del given_hierarchies["age"]  # published as "[a-b]" ranges
        options = {"suppressed_rows": "mark"} if mark and algorithm == "optimal" else {}
        try:
            result = anonymize(
                shuffled.iloc[:rows],
                algorithm=algorithm,
                quasi_identifiers=QIS,
                models=[KAnonymity(2)],
                suppression_limit=0.3,
                hierarchies=given_hierarchies,
                sensitive_attributes=["disease"],
                seed=seed,
                **options,
            )
        except InfeasibleAnonymizationError:
            continue
        releases.append(result.table)
    if not releases:
        return
    report = intersection_attack(
        source, releases, quasi_identifiers=QIS, sensitive_attribute="disease", hierarchies=hierarchies, l=l
    )
    assert _measured(report.to_dict()) == oracle(source, releases, QIS, "disease", hierarchies, l)
    assert report.records == len(source)


def test_worked_example_two_releases_disclose_one_person() -> None:
    """Each release is 2-diverse alone; intersecting them singles out Carol's disease."""
    source = pd.DataFrame(
        {
            "age": [21, 22, 23, 24, 25, 26],
            "zip": ["47906", "47906", "47907", "47907", "47906", "47907"],
            "disease": ["flu", "hiv", "flu", "cold", "hiv", "cold"],
        }
    )
    first = pd.DataFrame(
        {
            "age": ["[21-22]", "[21-22]", "[23-24]", "[23-24]"],
            "zip": ["4790*"] * 4,
            "disease": ["flu", "hiv", "flu", "cold"],
        }
    )
    second = pd.DataFrame(
        {
            "age": ["[21-23]"] * 3 + ["[24-26]"] * 3,
            "zip": ["4790*"] * 6,
            "disease": ["flu", "hiv", "flu", "cold", "hiv", "cold"],
        }
    )
    hierarchies = {"zip": masking_hierarchy("zip", source["zip"])}
    report = intersection_attack(
        source, [first, second], quasi_identifiers=QIS, sensitive_attribute="disease", hierarchies=hierarchies
    )
    # Age 23 (flu): {flu, cold} ∩ {flu, hiv} = {flu}. Age 24 (cold): {flu, cold} ∩ {cold, hiv} = {cold}.
    assert [c.disclosed for c in report.per_release] == [0, 0]
    assert report.overall.disclosed == 2
    assert report.overall.smallest == 1
    assert report.overall.below_l == 2
    # 25 and 26 are not covered by the first release: it tells nothing about them.
    assert report.per_release[0].uncovered == 2
    assert report.overall.empty == 0
    assert [p.releases for p in report.pairs] == [(0, 1)]
    assert report.to_dict()["overall"] == report.pairs[0].to_dict() | {"releases": [0, 1]}


def test_an_all_star_class_covers_everyone_marked_rows_and_missing_releases_tell_nothing() -> None:
    source = pd.DataFrame({"age": [30, 31, 50], "disease": ["flu", "hiv", "cold"]})
    marked = pd.DataFrame({"age": ["[30-31]", "[30-31]", "*"], "disease": ["flu", "hiv", "cold"]})
    removed = pd.DataFrame({"age": ["[30-31]", "[30-31]"], "disease": ["flu", "hiv"]})
    report = intersection_attack(source, [marked], quasi_identifiers=["age"], sensitive_attribute="disease")
    # 30 and 31 are covered by both classes ({flu, hiv} ∪ {cold}); 50 only by the marked row.
    assert report.overall.disclosed == 1 and report.overall.smallest == 1
    report = intersection_attack(source, [removed], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert report.overall.disclosed == 0 and report.overall.uncovered == 1
    assert report.overall.smallest == 2
    # Marked suppressed rows (the value hidden: "*" or missing) publish no value: as removed rows.
    for hidden in ("*", None):
        marked = removed.iloc[[0, 1, 1]].reset_index(drop=True).assign(disease=["flu", "hiv", hidden])
        marked.loc[2, "age"] = "*"
        report = intersection_attack(source, [marked], quasi_identifiers=["age"], sensitive_attribute="disease")
        assert (report.overall.disclosed, report.overall.uncovered, report.overall.smallest) == (0, 1, 2)
    only_marked = pd.DataFrame({"age": ["*"], "disease": ["*"]})  # a release of marked rows only: no value at all
    report = intersection_attack(source, [only_marked], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert (report.overall.disclosed, report.overall.uncovered) == (0, 3)
    # Nobody is covered: nobody is narrowed (her set is the whole domain, not the no value published).
    assert (report.overall.below_l, report.overall.empty, report.overall.smallest) == (0, 0, None)
    # A record no release covers is not "disclosed" by the one label published about others.
    one_value = pd.DataFrame({"age": ["[30-31]", "[30-31]"], "disease": ["flu", "flu"]})
    report = intersection_attack(source, [one_value], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert (report.overall.disclosed, report.overall.below_l, report.overall.uncovered) == (2, 2, 1)
    assert report.overall.smallest == 1


def test_interval_hierarchy_labels_are_read_as_half_open_ranges_without_the_hierarchy() -> None:
    source = pd.DataFrame({"age": [20, 24, 25, 29, 30], "disease": ["a", "b", "c", "d", "e"]})
    release = pd.DataFrame({"age": ["[20-25)", "[20-25)", "[25-30)", "[25-30)", "30"], "disease": list("abcde")})
    report = intersection_attack(source, [release], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert report.overall.disclosed == 1  # 30, published as itself
    assert report.overall.smallest == 1 and report.overall.below_l == 1


def test_no_value_in_the_report() -> None:
    source = pd.DataFrame({"age": [41, 42], "disease": ["SECRET-VALUE", "OTHER-SECRET"]})
    release = pd.DataFrame({"age": ["41", "42"], "disease": ["SECRET-VALUE", "OTHER-SECRET"]})
    report = intersection_attack(source, [release, release], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert report.overall.disclosed == 2
    text = json.dumps(report.to_dict()) + str(report) + repr(report)
    for value in ("SECRET", "41", "42"):
        assert value not in text


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"l": 0}, ConfigurationError, "l must be an integer >= 1, got 0"),
        ({"quasi_identifiers": ["zipcode"]}, UnknownColumnError, "zipcode"),
        ({"sensitive_attribute": "salary"}, UnknownColumnError, r"releases\[0\] lacks column\(s\) \['salary'\]"),
        ({"releases": []}, ConfigurationError, "releases must be a non-empty"),
        ({"quasi_identifiers": ["age", "disease"]}, ConfigurationError, "both a quasi-identifier and the sensitive"),
        ({"hierarchies": {"age": {"41": "*"}}}, TypeError, r"hierarchies\['age'\] must be a Hierarchy"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, error: type[Exception], match: str) -> None:
    source = pd.DataFrame({"age": [41, 42], "disease": ["a", "b"]})
    arguments = {
        "releases": [source.astype({"age": str})],
        "quasi_identifiers": ["age"],
        "sensitive_attribute": "disease",
    } | kwargs
    with pytest.raises(error, match=match):
        intersection_attack(source, **arguments)


def test_a_target_assumed_in_a_release_that_lacks_her_can_be_disclosed_wrongly() -> None:
    """25 joined after the first release, which still covers her: she is "disclosed" as flu, wrongly."""
    source = pd.DataFrame({"age": [23, 24, 25, 26], "disease": ["flu", "cold", "hiv", "flu"]})
    first = pd.DataFrame({"age": ["[23-26]"] * 2, "disease": ["flu", "cold"]})
    second = pd.DataFrame({"age": ["[23-24]"] * 2 + ["[25-26]"] * 2, "disease": ["flu", "cold", "hiv", "flu"]})
    arguments = {"quasi_identifiers": ["age"], "sensitive_attribute": "disease"}
    report = intersection_attack(source, [first, second], **arguments)
    assert (report.overall.disclosed, report.overall.disclosed_correctly) == (2, 1)
    blind = intersection_attack(source[["age"]], [first, second], **arguments)
    assert (blind.overall.disclosed, blind.overall.disclosed_correctly) == (2, None)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=sources(), releases=st.integers(2, 3), seed=st.integers(0, 2**16))
def test_people_in_every_release_keep_their_value_and_one_diverse_release_discloses_none(
    source: pd.DataFrame, releases: int, seed: int
) -> None:
    """Insertions only, nothing suppressed: each 2-diverse release alone discloses nobody, and the
    intersection of the people present in every release always holds their own value."""
    grown = pd.concat([source, source.sample(frac=1.0, random_state=seed)], ignore_index=True)
    tables = []
    for step in range(releases):
        rows = len(source) + step * len(source) // max(1, releases - 1)
        try:
            result = anonymize(
                grown.iloc[:rows],
                algorithm="mondrian",
                quasi_identifiers=QIS,
                models=[KAnonymity(2), DistinctLDiversity("disease", 2)],
                hierarchies={"zip": _hierarchies(source)["zip"]},
                sensitive_attributes=["disease"],
                seed=seed,
            )
        except InfeasibleAnonymizationError:
            return
        tables.append(result.table)
    report = intersection_attack(
        source, tables, quasi_identifiers=QIS, sensitive_attribute="disease", hierarchies=_hierarchies(source)
    )
    assert [count.disclosed for count in report.per_release] == [0] * releases
    assert report.overall.empty == 0
    assert report.overall.disclosed_correctly == report.overall.disclosed
    assert report.overall.smallest is not None and report.overall.smallest >= 1
