"""Two-table (Anatomy) releases keep a release history and are checked against it (issue 26).

The signature of a pair (``core.history.linked_signature``) against a naive record-by-record
oracle; releases of a growing table to DuckDB and a Parquet folder: appended in the pair's
swap, read back verified, only published values, and a release the history makes disclosing
is blocked with nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from release_fixtures import demo_spec_dict

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory, linked_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.release import ReleaseSpec, run_release
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.linked import read_linked

QIS = ["a", "b"]
CENSUS_QIS = ["age", "sex", "zip", "education", "marital_status"]


def _pairs(seed: int, releases: int, rows: int) -> tuple[pd.DataFrame, list[tuple[pd.DataFrame, pd.DataFrame]]]:
    """A source and ``releases`` random QIT + ST pairs of growing prefixes of it (groups of 2–3 records)."""
    rng = np.random.default_rng(seed)
    source = pd.DataFrame(
        {"a": rng.integers(0, 3, rows), "b": rng.choice(["x", "y"], rows), "s": rng.choice(list("pqrst"), rows)}
    )
    pairs = []
    for r in range(releases):
        n = rows - (releases - 1 - r) * max(1, rows // 6)
        part = source.head(n)
        group = rng.permutation(n) // rng.integers(2, 4)
        qit = part[QIS].assign(group_id=group)
        st_ = part.assign(group_id=group).groupby(["group_id", "s"]).size().rename("count").reset_index()
        pairs.append((qit, st_))
    return source, pairs


def _naive_values(qit: pd.DataFrame, st_: pd.DataFrame, target: dict[str, Any]) -> dict[str, int] | None:
    """Record by record: the values (and summed counts) of every group holding exactly the target's QIs."""
    groups = set()
    for _, row in qit.iterrows():
        if all(str(row[q]) == str(target[q]) for q in QIS):
            groups.add(row["group_id"])
    if not groups:
        return None
    counts: dict[str, int] = {}
    for _, row in st_.iterrows():
        if row["group_id"] in groups:  # each group once, however many of its rows hold the tuple
            counts[str(row["s"])] = counts.get(str(row["s"]), 0) + int(row["count"])
    return counts


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), releases=st.integers(2, 3), rows=st.integers(8, 30))
def test_the_check_on_pair_signatures_matches_a_naive_intersection_oracle(seed: int, releases: int, rows: int) -> None:
    source, pairs = _pairs(seed, releases, rows)
    signatures = [linked_signature(q, s, "group_id", QIS, ["s"]) for q, s in pairs]
    history = ReleaseHistory("h", tuple(QIS), ("s",))
    for signature in signatures[:-1]:
        history = history.appended(PublishedRelease("r", "t", "f", {}, signature))
    result = composition_check(source, signatures[-1], history, [DistinctLDiversity("s", 2)])
    expected = []
    for target in source.to_dict("records"):
        per_release = [_naive_values(q, s, target) for q, s in pairs]
        # the signature of the candidate: union and summed counts over the groups holding her tuple
        candidate = per_release[-1]
        if candidate is not None:
            shown = signatures[-1]
            mine = shown[(shown["a"] == str(target["a"])) & (shown["b"] == str(target["b"]))]
            assert dict(zip(mine["s"], mine[COUNT].astype(int), strict=True)) == candidate
        earlier = [set(v) for v in per_release[:-1] if v is not None]
        before = len(set.intersection(*earlier)) if earlier else np.inf
        left = set.intersection(*earlier, set(candidate)) if candidate is not None else set()
        # the gate's rule: fewer than 2 values left, or — when the history alone already leaves fewer — fewer still
        expected.append(candidate is not None and len(left) < min(2, before))
    assert result.at_risk.tolist() == expected
    assert result.records_at_risk == sum(expected)


def _naive_at_risk(
    source: pd.DataFrame, pairs: list[dict[str, pd.DataFrame]], qis: list[str], attribute: str, l: int
) -> int:
    """Person by person: the values every release's groups holding exactly her QI tuple leave her, intersected.

    At risk: fewer than l values left, unless the earlier releases alone already leave fewer and the
    last narrows nothing further (the gate's rule).
    """
    at_risk = 0
    for target in source.to_dict("records"):
        sets = []
        for pair in pairs:
            qit, st_ = pair["qit"], pair["st"]
            holds = np.logical_and.reduce([qit[q].astype(str).to_numpy() == str(target[q]) for q in qis])
            groups = set(qit.loc[holds, "group_id"])
            if groups:
                sets.append(set(st_.loc[st_["group_id"].isin(groups), attribute].astype(str)))
        if not sets:
            continue
        before = len(set.intersection(*sets[:-1])) if len(sets) > 1 else np.inf
        left = len(set.intersection(*sets))
        at_risk += left < min(l, before)
    return at_risk


def _assert_anatomy_groups(st_: pd.DataFrame, *, k: int, l: int) -> None:
    """Anatomy's guarantee on every (merged) group: ≥ k rows, no value above size / l (hence l distinct values)."""
    sizes = st_.groupby("group_id")["count"].sum()
    most = st_.groupby("group_id")["count"].max()
    assert (sizes >= k).all() and (most * l <= sizes).all()
    assert (st_.groupby("group_id").size() >= l).all()


def _data(tmp_path: Path, kind: str, source: Path, **overrides: Any) -> dict[str, Any]:
    data = demo_spec_dict(tmp_path, sensitive_attributes=["disease"], **overrides)
    data["source"] = {"path": str(source)}
    data["insensitive"] = ["occupation", "income"]
    data["algorithm"] = {"name": "anatomy"}
    data["requirements"] = {"k": 4, "l": 2}
    data["destination"] = {kind: str(tmp_path / ("r.duckdb" if kind == "duckdb" else "out")), "table": "census"}
    return data


def _spec(tmp_path: Path, kind: str, source: Path, **overrides: Any) -> ReleaseSpec:
    return ReleaseSpec.from_dict(_data(tmp_path, kind, source, **overrides))


def _cli_json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict[str, Any]]:
    from privacy_plugins.cli import main

    code = main(list(arguments))
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_anatomy_releases_keep_a_history_and_a_disclosing_one_is_blocked(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    census = generate_census(400, seed=3)
    source = tmp_path / "source.parquet"
    census.head(300).to_parquet(source, index=False)
    spec_file = tmp_path / "anatomy.yaml"
    spec_file.write_text(yaml.safe_dump(_data(tmp_path, kind, source)))
    spec = _spec(tmp_path, kind, source)
    assert spec.history.enabled  # on by default, as for every release
    assert run_release(spec).passed
    assert run_release(spec).passed  # the same rows: the same groups, every intersection its own group's values
    history = read_history(spec, open_destination(spec.destination))  # read back and verified (digests, chain)
    assert [r.sequence for r in history.releases] == [1, 2] and [r.rows for r in history.releases] == [300, 300]
    pair = read_linked(spec.destination)
    assert pair is not None
    published = linked_signature(pair["qit"], pair["st"], "group_id", spec.quasi_identifiers, ["disease"])
    for release in history.releases:  # the pair's signature exactly, and nothing the pair did not show
        pd.testing.assert_frame_equal(release.classes, published, check_dtype=False)
        for column in spec.quasi_identifiers:
            assert set(release.classes[column]) <= set(pair["qit"][column].astype(str))
        assert set(release.classes["disease"]) <= set(pair["st"]["disease"].astype(str))
        assert set(release.classes.columns) == {*spec.quasi_identifiers, "disease", COUNT}  # no group id
        assert release.transformation == {"algorithm": "anatomy"}
    capsys.readouterr()
    code, listed = _cli_json(capsys, "history", str(spec_file), "--format", "json")  # lists it, attacks it
    assert code == 0 and len(listed["releases"]) == 2
    assert next(a for a in listed["attacks"] if a["sensitive_attribute"] == "disease")["overall"]["below_l"] == 0

    census.to_parquet(source, index=False)  # grown: Anatomy regroups, and the groups' intersections narrow
    from privacy_plugins.core.anonymize.anatomy import AnatomyAnonymizer
    from privacy_plugins.core.anonymize.feasibility import BUCKETIZING
    from privacy_plugins.core.anonymize.registry import AnonymizerTags

    with pytest.MonkeyPatch.context() as patch:  # an Anatomy without the history model (lead40's): the gate blocks it
        patch.setattr(AnatomyAnonymizer, "tags", AnonymizerTags(supported_models=BUCKETIZING, linked_tables=True))
        result = run_release(spec)
    assert not result.passed and result.check is not None
    failed = {c.name: c for c in result.check.checks if not c.passed}
    assert set(failed) == {"composition"} and failed["composition"].observed > 0
    assert (
        result.candidate is not None and result.candidate.history["records_at_risk"] == failed["composition"].observed
    )
    assert result.candidate.history["history_model"] is False  # that Anatomy refuses the history model
    after = read_linked(spec.destination)
    assert after is not None and len(after["qit"]) == 300  # nothing written: the old pair, the old history
    assert len(read_history(spec, open_destination(spec.destination))) == 2
    capsys.readouterr()
    from privacy_plugins.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AnatomyAnonymizer, "tags", AnonymizerTags(supported_models=BUCKETIZING, linked_tables=True))
        assert main(["release", str(spec_file), "--quiet"]) == 1  # the CLI: exit 1, with the composition numbers
        assert "composition" in capsys.readouterr().out

    grown = run_release(spec)  # Anatomy takes the history model: groups merged until no intersection narrows
    assert grown.passed and grown.candidate is not None
    assert grown.candidate.history["history_model"] is True and grown.candidate.history["records_at_risk"] == 0
    after = read_linked(spec.destination)
    assert after is not None and len(after["qit"]) == 400
    assert [r.rows for r in read_history(spec, open_destination(spec.destination)).releases] == [300, 300, 400]
    assert _naive_at_risk(census, [pair, pair, after], spec.quasi_identifiers, "disease", 2) == 0
    _assert_anatomy_groups(after["st"], k=4, l=2)


def test_diagnose_releases_attacks_anatomy_pairs_given_as_qit_plus_st(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    census = generate_census(400, seed=3)
    paths = []
    for n in (300, 400):  # two Anatomy releases of a growing table, as any tool might have published them
        result = anonymize(
            census.head(n), algorithm="anatomy", quasi_identifiers=CENSUS_QIS, identifiers=["person_id"],
            insensitive=["occupation", "income"], models=[DistinctLDiversity("disease", 2), KAnonymity(4)], seed=1,
        )  # fmt: skip
        assert result.linked is not None
        qit, st_ = tmp_path / f"r{n}_qit.parquet", tmp_path / f"r{n}_st.parquet"
        result.table.to_parquet(qit, index=False)
        result.linked.table.to_parquet(st_, index=False)
        paths.append(f"{qit}+{st_}")
    source = tmp_path / "source.parquet"
    census.to_parquet(source, index=False)
    common = ["--source", str(source), "--quasi-identifiers", ",".join(CENSUS_QIS)]
    common += ["--sensitive-attributes", "disease", "--format", "json"]
    code, alone = _cli_json(capsys, "diagnose-releases", paths[0], *common)
    assert code == 0 and alone["attacks"][0]["overall"]["below_l"] == 0  # one release: its groups' 2 values
    code, both = _cli_json(capsys, "diagnose-releases", *paths, *common)
    assert code == 1 and both["attacks"][0]["overall"]["below_l"] > 0  # regrouped: the intersections narrow


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_a_crash_before_the_pair_swap_keeps_the_old_pair_with_the_old_history(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privacy_plugins.release.destination import base as destination_base

    source = tmp_path / "source.parquet"
    generate_census(300, seed=3).to_parquet(source, index=False)
    spec = _spec(tmp_path, kind, source)
    assert run_release(spec).passed
    before = read_linked(spec.destination)

    def crash() -> None:
        raise RuntimeError("injected crash before the swap")

    monkeypatch.setattr(destination_base, "before_swap", crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        run_release(spec)
    monkeypatch.undo()
    after = read_linked(spec.destination)
    assert before is not None and after is not None
    for part in ("qit", "st"):
        pd.testing.assert_frame_equal(before[part], after[part])
    assert [r.sequence for r in read_history(spec, open_destination(spec.destination)).releases] == [1]
    assert run_release(spec).passed
    assert [r.sequence for r in read_history(spec, open_destination(spec.destination)).releases] == [1, 2]


def test_a_published_pair_without_history_is_an_error_until_adopted(tmp_path: Path) -> None:
    from privacy_plugins.errors import HistoryError
    from privacy_plugins.release.composition_gate import adopt_published

    source = tmp_path / "source.parquet"
    generate_census(300, seed=3).to_parquet(source, index=False)
    spec = _spec(tmp_path, "parquet", source)
    assert run_release(_spec(tmp_path, "parquet", source, history=False)).passed
    with pytest.raises(HistoryError, match="no release history"):
        read_history(spec, open_destination(spec.destination))
    adopted = adopt_published(spec, open_destination(spec.destination))
    assert len(adopted) == 1 and adopted.releases[0].rows == 300
    assert run_release(spec).passed
    assert len(read_history(spec, open_destination(spec.destination))) == 2


def _grown_releases(seed: int, sizes: list[int], merge: bool = True) -> tuple[pd.DataFrame, list[Any]]:
    """Anatomy releases (k = 3, distinct 2-diversity) of growing prefixes, each with the earlier ones' history model."""
    from privacy_plugins.core.history_release import history_models

    rng = np.random.default_rng(seed)
    n = sizes[-1]
    source = pd.DataFrame(
        {"a": rng.integers(0, 15, n), "b": rng.choice(["x", "y", "z"], n), "s": rng.permutation(np.arange(n) % 5)}
    ).astype({"s": str})
    models = [DistinctLDiversity("s", 2), KAnonymity(3)]
    history = ReleaseHistory("h", tuple(QIS), ("s",))
    results = []
    for size in sizes:
        extra = history_models(models, history) if merge else []
        result = anonymize(source.head(size), algorithm="anatomy", quasi_identifiers=QIS,
                           models=[*models, *extra], seed=seed)  # fmt: skip
        assert result.linked is not None
        results.append(result)
        signature = linked_signature(result.table, result.linked.table, "group_id", QIS, ["s"])
        history = history.appended(PublishedRelease("r", "t", "f", {}, signature))
    return source, results


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), releases=st.integers(2, 3))
def test_anatomy_with_the_history_model_leaves_nobody_below_l_and_keeps_its_groups(seed: int, releases: int) -> None:
    sizes = [40 + 15 * r for r in range(releases)]
    source, results = _grown_releases(seed, sizes)
    pairs = [{"qit": r.table, "st": r.linked.table} for r in results if r.linked is not None]
    for upto, size in enumerate(sizes, start=1):  # every release against the ones before it
        assert _naive_at_risk(source.head(size), pairs[:upto], QIS, "s", 2) == 0
    for pair in pairs:
        _assert_anatomy_groups(pair["st"], k=3, l=2)  # merged groups keep Anatomy's guarantee
    assert results[0].details.merged == 0  # the first release has no history to keep


def test_the_naive_oracle_sees_the_regrouping_that_the_merge_repairs() -> None:
    sizes = [40, 55, 70]
    source, plain = _grown_releases(7, sizes, merge=False)
    pairs = [{"qit": r.table, "st": r.linked.table} for r in plain if r.linked is not None]
    assert _naive_at_risk(source, pairs, QIS, "s", 2) > 0  # without the history model: someone narrowed
    _, merged = _grown_releases(7, sizes)
    assert sum(r.details.merged for r in merged) > 0


def test_the_re_check_judges_the_history_model_on_the_groups_covering_each_tuple(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from privacy_plugins.core.anonymize import anatomy
    from privacy_plugins.core.anonymize.base import VerificationError

    monkeypatch.setattr(anatomy, "merge_until_covered", lambda qit, sensitive, group, models, qis: (group, 0))
    with pytest.raises(VerificationError, match="history"):  # an Anatomy that skips the merge is refused
        _grown_releases(7, [40, 55, 70])


def test_release_with_history_releases_a_growing_table_with_anatomy() -> None:
    from privacy_plugins.core.history_release import release_with_history

    census = generate_census(420, seed=5)
    models = [DistinctLDiversity("disease", 2), KAnonymity(4)]
    history = ReleaseHistory("h", tuple(CENSUS_QIS), ("disease",))
    pairs = []
    for n in (300, 360, 420):
        release = release_with_history(
            census.head(n), quasi_identifiers=CENSUS_QIS, models=models, history=history, algorithm="anatomy",
            identifiers=["person_id"], insensitive=["occupation", "income"], seed=2,
        )  # fmt: skip
        assert release.passed and release.check.records_at_risk == 0 and release.linked is not None
        assert release.method == "anonymize" and len(release.table) == n  # nothing suppressed, no helper column
        assert "__history_row" not in release.table.columns
        pairs.append({"qit": release.table, "st": release.linked})
        assert _naive_at_risk(census.head(n), pairs, CENSUS_QIS, "disease", 2) == 0
        _assert_anatomy_groups(release.linked, k=4, l=2)
        signature = linked_signature(release.table, release.linked, "group_id", CENSUS_QIS, ["disease"])
        history = history.appended(PublishedRelease("r", "t", "f", {}, signature, published_rows=n))
