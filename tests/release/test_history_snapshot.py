"""The release history on the full-domain snapshot path, and (a) re-apply / (c) suppress at risk in the anonymize step.

The snapshot search must respect the history exactly as the in-memory search does (same node,
same published multiset); a second release that differs finds a node that passes instead of
being refused; (a) keeps the last release's levels when they still pass; (c) leaves out the
records at risk within the suppression limit. ``docs/release-history.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_census import census_duckdb
from release_fixtures import demo_spec_dict

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_release import history_models
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.engines.full_domain_in_engine import anonymize_in_engine
from privacy_plugins.engines.pandas_engine import PandasTable
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release import ReleaseSpec, read_published
from privacy_plugins.release import steps as release_steps
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.history_anonymize import UNIT, anonymize_history, choose
from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
DISEASES = ["flu", "hiv", "cold", "cancer", "asthma"]
HIERARCHIES = {
    "age": interval_hierarchy("age", range(20, 60), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}


def _table(seed: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, rows),
            "zip": rng.choice(ZIPS, rows),
            "disease": rng.choice(DISEASES, rows, p=[0.4, 0.2, 0.2, 0.1, 0.1]),
        }
    )


def _history_of(earlier: pd.DataFrame, k: int) -> ReleaseHistory:
    """One earlier release of ``earlier`` (optimal, k-anonymous, 2-diverse) as the history keeps it."""
    first = anonymize(
        earlier, quasi_identifiers=QIS, models=[KAnonymity(k), DistinctLDiversity("disease", 2)],
        hierarchies=HIERARCHIES, suppression_limit=0.1,
    )  # fmt: skip
    signature = class_signature(first.table, QIS, ["disease"])
    release = PublishedRelease("r1", "2026-11-26T00:00:00Z", "f", {}, signature)
    return ReleaseHistory("h", tuple(QIS), ("disease",)).appended(release)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(40, 120),
    k=st.integers(2, 5),
    limit=st.sampled_from([0.0, 0.05, 0.2]),
)
def test_the_snapshot_search_respects_the_history_exactly_as_the_in_memory_search(
    seed: int, rows: int, k: int, limit: float
) -> None:
    earlier, now = _table(seed, rows), _table(seed + 1, rows + 10)  # other people next time
    history = _history_of(earlier, 3)
    models = [KAnonymity(k), DistinctLDiversity("disease", 2)]
    everything = [*models, *history_models(models, history, HIERARCHIES)]
    options = {"quasi_identifiers": QIS, "hierarchies": HIERARCHIES, "suppression_limit": limit}
    try:
        in_memory = anonymize(now, models=everything, sensitive_attributes=["disease"], **options)
    except InfeasibleAnonymizationError:
        with pytest.raises(InfeasibleAnonymizationError):
            anonymize_in_engine(PandasTable(now), models=everything, sensitive_attributes=["disease"], **options)
        return
    in_engine = anonymize_in_engine(PandasTable(now), models=everything, sensitive_attributes=["disease"], **options)
    assert in_engine.solution.details.recoding_levels() == in_memory.details.recoding_levels()
    assert in_engine.solution.suppressed == in_memory.suppressed
    assert in_engine.solution.utility.ncp == pytest.approx(in_memory.utility.ncp)
    published = in_engine.published.to_pandas()
    assert list(published.columns) == list(in_memory.table.columns)  # no history-set column published
    ordered = [*QIS, "disease"]
    expected = in_memory.table.astype(str).sort_values(ordered).reset_index(drop=True)
    pd.testing.assert_frame_equal(published.astype(str).sort_values(ordered).reset_index(drop=True), expected)


def _units(table: pd.DataFrame) -> pd.DataFrame:
    return table.groupby([*QIS, "disease"], as_index=False).size().rename(columns={"size": COUNT})


def test_c_suppresses_exactly_the_records_at_risk_within_the_limit_and_reports_counts() -> None:
    """(c): a candidate of an algorithm that cannot take the history model, its at-risk records left out."""
    ages = [21, 22, 23, 24] * 3 + [41, 42, 43, 44] * 3
    now = pd.DataFrame(
        {"age": ages, "zip": ["47906"] * 24, "disease": ["flu", "hiv", "cold"] * 4 + ["flu", "cancer", "asthma"] * 4}
    )
    earlier = pd.DataFrame({"age": ["[20-24]"] * 2, "zip": ["47906"] * 2, "disease": ["flu", "hiv"]})
    release = PublishedRelease("r1", "2026-11-26T00:00:00Z", "f", {}, class_signature(earlier, QIS, ["disease"]))
    history = ReleaseHistory("h", tuple(QIS), ("disease",)).appended(release)
    units = _units(now)

    def solve(extra: Any) -> pd.DataFrame:  # the candidate: ages 21-24 in one class without "hiv"
        published = units.assign(**{UNIT: np.arange(len(units))})
        published["age"] = np.where(published["age"] < 30, "[20-24]", "[40-44]")
        return published.loc[~((published["age"] == "[20-24]") & (published["disease"] == "hiv"))]

    def choice(limit: float) -> Any:
        kept = anonymize_history(
            history, quasi_identifiers=QIS, models=[KAnonymity(2), DistinctLDiversity("disease", 2)],
            hierarchies=HIERARCHIES, algorithm="optimistic", suppression_limit=limit, reapply_levels=True,
        )  # fmt: skip
        assert kept is not None and kept.extra == ()  # optimistic cannot take the history model: (c) does the rest
        return choose(kept, units, solve, lambda candidate: candidate.reset_index(drop=True))

    # Ages 21-24 keep {flu, hiv} ∩ {flu, cold} = {flu}: their 8 records (4 hiv already left out) are at risk.
    chosen = choice(0.5)
    assert chosen.outcome.way == "anonymize" and not chosen.outcome.history_model
    assert chosen.outcome.suppressed_at_risk == 8 and chosen.outcome.records_at_risk == 0
    assert chosen.records_out == 12 and set(chosen.published.loc[chosen.kept, "age"]) == {"[40-44]"}  # type: ignore[union-attr]
    assert "flu" not in str(chosen.outcome.to_dict())  # counts only
    short = choice(0.2)  # 4 + 8 records would exceed the limit: the candidate is left as it is, for the gate
    assert short.published is None and short.outcome.records_at_risk == 12 and short.outcome.suppressed_at_risk == 0


def _spec_data(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return demo_spec_dict(tmp_path, rows=300, **overrides)


def _release(spec: ReleaseSpec) -> Any:
    """Load, anonymize, check and publish (the diagnosis is not this file's subject); the candidate."""
    candidate = anonymize_step(spec, load_step(spec))
    check = check_step(spec, candidate)
    assert check.passed, check.summary()
    publish_step(spec, candidate, check)
    return candidate


def _candidate_rows(candidate: Any) -> pd.DataFrame:
    frame = pd.read_parquet(candidate.path).astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


@pytest.mark.parametrize("rows", [300, 350])  # 300: (a) re-applies the levels; 350: other people, (b)
def test_both_paths_choose_the_same_release_and_a_second_release_passes_on_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    # A DuckDB source: the snapshot path recodes and removes records in the database.
    source = {"duckdb": str(census_duckdb(tmp_path / "first.duckdb", rows=300)), "table": "census"}
    data = _spec_data(tmp_path, source=source)
    first = ReleaseSpec.from_dict(data)
    assert release_steps.pushdown_reason(first) is None  # the default release runs on the snapshot
    _release(first)
    grown = {"duckdb": str(census_duckdb(tmp_path / "second.duckdb", rows=rows)), "table": "census"}
    spec = ReleaseSpec.from_dict({**data, "source": grown})
    with monkeypatch.context() as patched:
        patched.setattr(release_steps, "_on_snapshot", lambda _: False)  # the same spec on the rows, in memory
        in_memory = anonymize_step(spec, load_step(spec))
    on_snapshot = anonymize_step(spec, load_step(spec))
    assert on_snapshot.history == in_memory.history and on_snapshot.headline == in_memory.headline
    assert ("re-applied" if rows == 300 else "with the history as a model") in on_snapshot.headline  # the summary
    if rows == 300:  # the same rows again: the node, and its suppressed records removed in the database
        assert on_snapshot.history["way"] == "reapply" and on_snapshot.suppressed > 0
    else:  # refused by the composition check before the snapshot search took the history
        assert on_snapshot.history["way"] == "anonymize" and on_snapshot.history["history_model"] is True
    assert on_snapshot.levels == in_memory.levels
    assert (on_snapshot.rows_out, on_snapshot.suppressed) == (in_memory.rows_out, in_memory.suppressed)
    assert on_snapshot.ncp == pytest.approx(in_memory.ncp)
    check = check_step(spec, on_snapshot)
    assert check.passed, check.summary()  # the composition check included
    publish_step(spec, on_snapshot, check)
    assert len(read_history(spec, open_destination(spec.destination))) == 2
    published = read_published(spec.destination)  # staged in the destination database, published from there
    assert published is not None
    published = published.astype(str).sort_values(list(published.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(published, _candidate_rows(in_memory))


def test_reapply_keeps_the_last_levels_unless_the_spec_turns_it_off(tmp_path: Path) -> None:
    data = _spec_data(tmp_path, requirements={"k": 8})
    first = _release(ReleaseSpec.from_dict(data))
    looser = {**data, "requirements": {**data["requirements"], "k": 3}}  # a lower node is optimal now
    again = _release(ReleaseSpec.from_dict(looser))
    assert again.history["way"] == "reapply" and again.levels == first.levels
    fresh = _release(ReleaseSpec.from_dict({**looser, "history": {"reapply": False}}))
    assert fresh.history["way"] == "anonymize" and fresh.levels != first.levels
    published = read_published(ReleaseSpec.from_dict(looser).destination)
    assert published is not None and len(published) == fresh.rows_out


def test_a_bad_reapply_setting_names_it() -> None:
    from privacy_plugins.release.history_spec import HistorySpec

    assert HistorySpec.from_value(None).reapply and not HistorySpec.from_value({"reapply": False}).reapply
    with pytest.raises(ConfigurationError, match=r"history.reapply must be true or false, got 'no'"):
        HistorySpec.from_value({"reapply": "no"})


@pytest.mark.parametrize(
    ("transformation", "reapply_levels", "expected"),
    [
        ({"algorithm": "optimal", "levels": {"zip": 1, "age": 2}}, True, {"age": 2, "zip": 1}),
        ({"algorithm": "optimal", "levels": {"zip": 1, "age": 2}}, False, None),  # history: {reapply: false}
        ({"algorithm": "samarati", "levels": {"zip": 1, "age": 2}}, True, None),  # another algorithm's node
        ({"algorithm": "optimal", "levels": {"zip": 1, "age": 9}}, True, None),  # above the hierarchy now
        ({"algorithm": "optimal", "levels": {"age": 2}}, True, None),  # other quasi-identifiers
        ({"adopted": True}, True, None),  # adopted: no transformation to re-apply
    ],
)
def test_a_reapplies_only_a_node_of_the_specs_own_algorithm_that_fits_its_hierarchies(
    transformation: dict[str, Any], reapply_levels: bool, expected: dict[str, int] | None
) -> None:
    signature = class_signature(_table(0, 20).astype(str), QIS, ["disease"])
    release = PublishedRelease("r1", "2026-11-26T00:00:00Z", "f", transformation, signature)
    history = ReleaseHistory("h", tuple(QIS), ("disease",)).appended(release)
    found = anonymize_history(
        history, quasi_identifiers=QIS, models=[KAnonymity(2)], hierarchies=HIERARCHIES, algorithm="optimal",
        suppression_limit=0.0, reapply_levels=reapply_levels,
    )  # fmt: skip
    assert found is not None and found.levels == expected
