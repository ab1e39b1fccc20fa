"""The gate's composition check and the history model, against a record-by-record oracle written here."""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, anonymizer_names, get_anonymizer, tags_of
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature, linked_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    HistoryDiversity,
    KAnonymity,
    PersonalizedLeakage,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
    from_config,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError, UnknownColumnError

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
DISEASES = ["flu", "hiv", "cold", "cancer"]


def _hierarchies() -> dict[Hashable, Hierarchy]:
    return {"age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)), "zip": masking_hierarchy("zip", ZIPS)}


def _text(value: object) -> str:
    if isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating)) and float(value).is_integer()):
        return str(int(value))
    return str(value)


_ROWS: dict[int, tuple[Hierarchy, list]] = {}  # keyed by id, holding the hierarchy: a freed one's id is reused


def _rows_of(hierarchy: Hierarchy) -> list:
    """The hierarchy's rows, once per object (the entry keeps it alive, so its id is never another's)."""
    return _ROWS.setdefault(id(hierarchy), (hierarchy, [list(row) for row in hierarchy.to_rows()]))[1]


def _covers(label: object, value: object, hierarchy: Hierarchy | None) -> bool:
    """Naive coverage: equal, ``*``, an ancestor in the hierarchy, or a numeric range holding the value."""
    text = _text(label)
    if text in ("*", _text(value)):
        return True
    rows = [] if hierarchy is None else _rows_of(hierarchy)
    if any(row[0] == _text(value) and text in row for row in rows):
        return True
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    half_open = text.startswith("[") and text.endswith(")")
    parts = text.strip("[]()").split("-")
    if len(parts) != 2:
        return False
    try:
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        return False
    return low <= float(value) < high if half_open else low <= float(value) <= high


def _release_counts(release: list[pd.Series], record: pd.Series, hierarchies: Mapping) -> dict | None:
    """Disease → rows over the classes covering ``record`` (``None``: no class covers it)."""
    found: dict[str, float] | None = None
    for row in release:
        if all(_covers(row[q], record[q], hierarchies.get(q)) for q in QIS):
            found = found or {}
            value = _text(row["disease"])
            found[value] = found.get(value, 0) + float(row.get("__count", 1))
    return found


def _judge(model: PrivacyModel, counts: dict[str, float], bound: float) -> bool:
    """True when the record is at risk (the rule of each family, written plainly)."""
    values = sorted(counts.values(), reverse=True)
    total = sum(values)
    if isinstance(model, (DistinctLDiversity, HistoryDiversity)):
        return len(values) < model.l
    if isinstance(model, FrequencyLDiversity):
        return total == 0 or total / values[0] < model.l - 1e-9
    if isinstance(model, EntropyLDiversity):
        return total == 0 or math.exp(-sum(v / total * math.log(v / total) for v in values)) < model.l - 1e-9
    if isinstance(model, RecursiveCLDiversity):
        tail = sum(values[model.l - 1 :])
        return tail <= 0 or values[0] >= model.c * tail
    if isinstance(model, PersonalizedLeakage):
        return total == 0 or values[0] / total > bound + 1e-9
    raise AssertionError(model)


def oracle(
    targets: pd.DataFrame,
    candidate: pd.DataFrame,
    history: Sequence[pd.DataFrame],
    models: Sequence[PrivacyModel],
    hierarchies: Mapping,
) -> tuple[list[bool], dict[str, tuple[int, int | None, int]]]:
    """Per target: at risk under any model; per model: (records at risk, smallest intersection, already at risk)."""
    at_risk = [False] * len(targets)
    risky = {str(model): 0 for model in models}
    already = {str(model): 0 for model in models}
    smallest: int | None = None
    candidate_rows = [row for _, row in candidate.iterrows()]
    history_rows = [[row for _, row in release.iterrows()] for release in history]
    for position, (_, record) in enumerate(targets.iterrows()):
        new = _release_counts(candidate_rows, record, hierarchies)
        if new is None:
            continue
        before: set[str] | None = None  # what the history alone leaves (None: no earlier class covers her)
        for rows in history_rows:
            earlier = _release_counts(rows, record, hierarchies)
            if earlier is not None:
                before = set(earlier) if before is None else before & set(earlier)
        left = set(new) if before is None else set(new) & before
        smallest = len(left) if smallest is None else min(smallest, len(left))
        for model in models:
            if before is not None and len(before) < model.minimum_class_size:
                already[str(model)] += 1  # no release can repair her; one that narrows her further fails
                fails = len(left) < len(before)
            else:
                fails = _judge(model, {value: new[value] for value in left}, float(record["bound"]))
            if fails:
                risky[str(model)] += 1
                at_risk[position] = True
    return at_risk, {name: (count, smallest, already[name]) for name, count in risky.items()}


def _history(signatures: Sequence[pd.DataFrame]) -> ReleaseHistory:
    history = ReleaseHistory("weekly", tuple(QIS), ("disease",))
    for position, signature in enumerate(signatures):
        history = history.appended(PublishedRelease(f"run-{position}", "2026-11-26T00:00:00Z", "f", {}, signature))
    return history


@st.composite
def sources(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=8, max_value=22))
    return pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(20, 45), min_size=n, max_size=n)),
            "zip": draw(st.lists(st.sampled_from(ZIPS), min_size=n, max_size=n)),
            "disease": draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n)),
            "bound": draw(st.lists(st.sampled_from([0.5, 0.75, 1.0]), min_size=n, max_size=n)),
        }
    )


JUDGED = [
    DistinctLDiversity("disease", 2),
    FrequencyLDiversity("disease", 1.5),
    EntropyLDiversity("disease", 1.8),
    RecursiveCLDiversity("disease", 2.0, 2),
    PersonalizedLeakage("disease", bound_column="bound"),
]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=sources(),
    plan=st.lists(st.sampled_from(["optimal", "mondrian", "two-phase"]), min_size=2, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_composition_check_matches_the_record_by_record_oracle(
    source: pd.DataFrame, plan: list[str], seed: int
) -> None:
    """Growing shuffled releases by the product's anonymizers; the last is the candidate."""
    hierarchies = _hierarchies()
    shuffled = source.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    tables = []
    for step, algorithm in enumerate(plan):
        rows = len(source) - (len(plan) - 1 - step) * max(1, len(source) // 5)
        try:
            result = anonymize(
                shuffled.iloc[:rows],
                algorithm=algorithm,
                quasi_identifiers=QIS,
                models=[KAnonymity(2)],
                suppression_limit=0.25,
                hierarchies=hierarchies
                if step % 2 == 0
                else {"zip": hierarchies["zip"]}
                | ({"age": hierarchies["age"]} if tags_of(get_anonymizer(algorithm)).needs_hierarchies else {}),
                sensitive_attributes=["disease"],
                insensitive=["bound"],  # the personalized bound: published as it is (every column has a role)
                seed=seed,
            )
        except InfeasibleAnonymizationError:
            continue
        tables.append(result.table)
    if len(tables) < 2:
        return
    *earlier, candidate = tables
    history = _history([class_signature(table, QIS, ["disease"]) for table in earlier])
    models: list[PrivacyModel] = [*JUDGED, KAnonymity(2), TCloseness("disease", 0.3)]
    # As the release layer passes it: distinct combinations with their counts (a GROUP BY) …
    grouped = source.groupby([*QIS, "bound"], as_index=False).size()
    result = composition_check(grouped, candidate, history, models, hierarchies=hierarchies, count_column="size")
    # … and record by record, the candidate as its signature: the same counts.
    by_record = composition_check(
        source, class_signature(candidate, QIS, ["disease"]), history, models, hierarchies=hierarchies
    )
    at_risk, per_model = oracle(source, candidate, earlier, JUDGED, hierarchies)
    assert by_record.at_risk.tolist() == at_risk
    assert {m.model: (m.records_at_risk, m.smallest, m.already_at_risk) for m in by_record.models} == per_model
    assert {m.model: (m.records_at_risk, m.smallest, m.already_at_risk) for m in result.models} == per_model
    assert result.records_at_risk == by_record.records_at_risk == sum(at_risk)
    assert result.passed == (not any(at_risk))
    assert result.unchecked == (str(KAnonymity(2)), str(TCloseness("disease", 0.3)))
    assert result.releases_compared == len(earlier)
    weights = grouped["size"].to_numpy()
    assert int(weights[result.at_risk].sum()) == result.records_at_risk


def test_worked_example_and_no_value_in_the_report() -> None:
    source = pd.DataFrame(
        {"age": [21, 22, 23, 24], "zip": ["SECRET-ZIP"] * 4, "disease": ["A-VAL", "B-VAL", "A-VAL", "C-VAL"]}
    )
    first = source.assign(age=["[21-22]"] * 2 + ["[23-24]"] * 2, zip="*")
    second = source.assign(age=["[21-23]"] * 3 + ["24"], zip="*")
    history = _history([class_signature(first, QIS, ["disease"])])
    result = composition_check(source, second, history, [KAnonymity(1), DistinctLDiversity("disease", 2)])
    assert not result.passed and result.records_at_risk == 2 and result.judged == 4
    assert result.at_risk.tolist() == [False, False, True, True]
    assert result.models[0].smallest == 1 and result.unchecked == ("1-anonymity",)
    text = json.dumps(result.to_dict()) + str(result)
    for value in ("SECRET", "VAL", "21", "24"):
        assert value not in text
    assert str(result).startswith("composition check against 1 earlier releases FAILED: 2 of 4 records at risk")
    # Nothing in the history: the candidate alone is judged (its class "24" holds one value).
    alone = composition_check(source, second, _history([]), [DistinctLDiversity("disease", 2)])
    assert alone.records_at_risk == 1 and alone.releases_compared == 0


def test_bad_arguments_are_named() -> None:
    source = pd.DataFrame({"age": [21, 22], "zip": ["1", "2"], "disease": ["a", "b"]})
    history = _history([class_signature(source.astype(str), QIS, ["disease"])])
    with pytest.raises(UnknownColumnError, match=r"the targets lack\(s\) column\(s\) \['zip'\]"):
        composition_check(source[["age", "disease"]], source, history, [DistinctLDiversity("disease", 2)])
    with pytest.raises(ConfigurationError, match="reads 'salary', which the release history 'weekly' does not keep"):
        composition_check(source.assign(salary=1), source.assign(salary=1), history, [DistinctLDiversity("salary", 2)])
    with pytest.raises(ConfigurationError, match="does not keep 'salary'"):
        HistoryDiversity("salary", 2, history)
    with pytest.raises(ConfigurationError, match="count_column 'n' must hold record counts"):
        composition_check(source.assign(n=-1), source, history, [DistinctLDiversity("disease", 2)], count_column="n")
    with pytest.raises(ConfigurationError, match="history_l_diversity: history must be a ReleaseHistory"):
        from_config("history_l_diversity", sensitive_attribute="disease", l=2, history={"releases": []})


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=sources(), seed=st.integers(0, 2**16), classes=st.integers(1, 8))
def test_the_history_model_is_monotone_under_generalization(source: pd.DataFrame, seed: int, classes: int) -> None:
    """Merging classes never lowers any record's |H(t) ∩ S(E)|, so a passing partition's coarsenings pass."""
    earlier = anonymize(
        source.iloc[: max(4, len(source) * 2 // 3)],
        algorithm="mondrian",
        quasi_identifiers=QIS,
        models=[KAnonymity(2)],
        hierarchies={"zip": _hierarchies()["zip"]},
        sensitive_attributes=["disease"],
        insensitive=["bound"],
    ).table
    model = HistoryDiversity("disease", 2, _history([class_signature(earlier, QIS, ["disease"])]), _hierarchies())
    frame = source.assign(**{model.set_column: model.derived_columns(source)[model.set_column]})
    fine_ids = np.random.default_rng(seed).integers(0, classes, len(frame))
    coarse_ids = fine_ids // 2
    fine = EquivalenceClasses.from_class_ids(
        frame, tuple(QIS), np.unique(fine_ids, return_inverse=True)[1], len(np.unique(fine_ids))
    )
    coarse = EquivalenceClasses.from_class_ids(
        frame, tuple(QIS), np.unique(coarse_ids, return_inverse=True)[1], len(np.unique(coarse_ids))
    )
    (fine_left, fine_need), (coarse_left, coarse_need) = model.left_per_unit(fine), model.left_per_unit(coarse)
    assert (coarse_left >= fine_left).all() and (coarse_need == fine_need).all()
    if model.holds(fine):
        assert model.holds(coarse)
    assert model.is_monotonic(with_suppression=False) and not model.is_monotonic(with_suppression=True)
    assert model.monotone_relaxation(with_suppression=True) == DistinctLDiversity("disease", 2)


def _every_algorithm_case() -> tuple[pd.DataFrame, ReleaseHistory]:
    rng = np.random.default_rng(7)
    n = 80
    source = pd.DataFrame(
        {
            "age": rng.integers(20, 46, n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(DISEASES, n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    earlier = anonymize(  # a release that passed its own gate
        source.iloc[:50],
        algorithm="mondrian",
        quasi_identifiers=QIS,
        models=[KAnonymity(2), DistinctLDiversity("disease", 2)],
        hierarchies={"zip": _hierarchies()["zip"]},
        sensitive_attributes=["disease"],
    ).table
    return source, _history([class_signature(earlier, QIS, ["disease"])])


@pytest.mark.parametrize("algorithm", anonymizer_names())
def test_every_algorithm_honours_the_history_model_or_refuses_it(algorithm: str) -> None:
    """Through the registry; every output re-measured by the gate's composition check."""
    source, history = _every_algorithm_case()
    model = from_config("history_l_diversity", sensitive_attribute="disease", l=2, history=history)
    support = tags_of(get_anonymizer(algorithm)).supported_models
    # (the bucketizing algorithms need an l-diversity model beside it)
    models = [KAnonymity(3), model, *([DistinctLDiversity("disease", 2)] if support.needs_one_of else [])]
    refusal = support.refusal(models)
    if refusal is not None:
        # (sensitive-values first asks for its required option; it promises no model of the whole table)
        with pytest.raises(ConfigurationError, match="cannot promise history_l_diversity|the set A"):
            anonymize(source, algorithm=algorithm, quasi_identifiers=QIS, models=models, hierarchies=_hierarchies())
        return
    result = anonymize(
        source,
        algorithm=algorithm,
        quasi_identifiers=QIS,
        models=models,
        hierarchies=_hierarchies(),
        sensitive_attributes=["disease"],
        suppression_limit=0.1,
    )
    assert result.passed and model.set_column not in result.table.columns
    candidate = result.table
    if result.linked is not None:  # a two-table output (Anatomy) is judged as published: its pair's signature
        candidate = linked_signature(result.table, result.linked.table, result.linked.group_column, QIS, ["disease"])
    check = composition_check(
        source, candidate, history, [DistinctLDiversity("disease", 2)], hierarchies=_hierarchies()
    )
    assert check.passed, str(check)
    assert check.judged > 0


def test_without_the_history_model_the_same_release_discloses() -> None:
    """The case above is not vacuous: the same spec without the model fails the composition check."""
    source, history = _every_algorithm_case()
    failing = []
    for algorithm in ("optimal", "mondrian", "two-phase", "k-member"):
        result = anonymize(
            source,
            algorithm=algorithm,
            quasi_identifiers=QIS,
            models=[KAnonymity(3), DistinctLDiversity("disease", 2)],
            hierarchies=_hierarchies(),
            sensitive_attributes=["disease"],
            suppression_limit=0.1,
        )
        check = composition_check(
            source, result.table, history, [DistinctLDiversity("disease", 2)], hierarchies=_hierarchies()
        )
        failing.append(not check.passed)
    assert any(failing), failing
