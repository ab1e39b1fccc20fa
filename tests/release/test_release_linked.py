"""Anatomy's two tables round-trip through every destination kind, atomically (both or neither)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from release_fixtures import demo_spec_dict, destination_spec

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import FrequencyLDiversity, KAnonymity
from privacy_plugins.errors import PublishError
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.linked import publish_linked, read_linked
from privacy_plugins.release.spec import DestinationSpec

QIS = ["age", "sex", "zip", "education", "marital_status"]


def _pair(seed: int) -> dict[str, pd.DataFrame]:
    frame = generate_census(300, seed=seed)
    result = anonymize(
        frame,
        algorithm="anatomy",
        quasi_identifiers=QIS,
        identifiers=["person_id"],
        insensitive=["occupation", "income"],
        models=[FrequencyLDiversity("disease", 2), KAnonymity(4)],
        suppression_limit=0.1,
        seed=seed,
    )
    assert result.linked is not None
    return {"qit": result.table, "st": result.linked.table}


def _destination(kind: str, tmp_path: Path) -> DestinationSpec:
    return destination_spec(kind, tmp_path, table="release", database="release.sqlite")


def _assert_pair_is_diverse(pair: dict[str, pd.DataFrame]) -> None:
    qit, st = pair["qit"], pair["st"]
    assert qit["group_id"].value_counts().sort_index().tolist() == st.groupby("group_id")["count"].sum().tolist()
    joined = st.loc[st.index.repeat(st["count"])]
    report = measure(joined, quasi_identifiers=["group_id"], sensitive_attributes=["disease"])
    assert report.k >= 4 and report.for_attribute("disease").frequency_l >= 2


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "sqlite"])
def test_the_pair_round_trips_and_is_replaced_as_a_whole(kind: str, tmp_path: Path) -> None:
    destination = _destination(kind, tmp_path)
    assert read_linked(destination) is None
    first, second = _pair(1), _pair(2)
    assert publish_linked(first, destination) == {"qit": len(first["qit"]), "st": len(first["st"])}
    read = read_linked(destination)
    assert read is not None
    for part in ("qit", "st"):
        pd.testing.assert_frame_equal(read[part].reset_index(drop=True), first[part].reset_index(drop=True),
                                      check_dtype=False)  # fmt: skip
    _assert_pair_is_diverse(read)
    publish_linked(second, destination)
    read = read_linked(destination)
    assert read is not None and len(read["qit"]) == len(second["qit"])
    _assert_pair_is_diverse(read)
    if kind == "parquet":  # the old version folder is gone, one version left
        assert len([p for p in (tmp_path / "out").iterdir() if p.name.startswith(".release.")]) == 1


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "sqlite"])
def test_a_failure_before_the_swap_keeps_the_old_pair(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    destination = _destination(kind, tmp_path)
    first = _pair(1)
    publish_linked(first, destination)

    def disk_full() -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(destination_base, "before_swap", disk_full)
    with pytest.raises(PublishError, match="left as it was"):
        publish_linked(_pair(2), destination)
    read = read_linked(destination)
    assert read is not None
    assert len(read["qit"]) == len(first["qit"]) and len(read["st"]) == len(first["st"])
    if kind == "parquet":
        assert len([p for p in (tmp_path / "out").iterdir() if p.name.startswith(".release.")]) == 1


def test_a_pair_needs_both_parts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly the parts"):
        publish_linked({"qit": pd.DataFrame()}, _destination("duckdb", tmp_path))


def test_a_sensitive_table_changed_after_the_check_is_not_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import copy

    import yaml

    from privacy_plugins.errors import ReleaseBlocked
    from privacy_plugins.release import ReleaseSpec
    from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step

    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    repo = Path(__file__).resolve().parents[2]
    data = copy.deepcopy(yaml.safe_load((repo / "specs" / "demo_census.yaml").read_text(encoding="utf-8")))
    data["source"] = {"generate": "census", "rows": 300, "seed": 3}
    data["sensitive_attributes"] = ["disease"]
    data["insensitive"] = ["occupation", "income"]  # every column has a role (issue 27)
    data["requirements"] = {"k": 4, "l": 2, "suppression_limit": 0.05}
    data["algorithm"] = {"name": "anatomy"}
    data["destination"] = {"duckdb": str(tmp_path / "r.duckdb"), "table": "census_release"}
    data["report"] = {"directory": str(tmp_path / "reports")}
    spec = ReleaseSpec.from_dict(data, base_dir=repo / "specs")
    loaded = load_step(spec)
    candidate = anonymize_step(spec, loaded)
    check = check_step(spec, candidate)
    assert check.passed and "joins exactly one ST group" in check.checks[1].detail
    st_path = Path(candidate.linked_path)
    st = pd.read_parquet(st_path)
    st.loc[0, "disease"] = st.loc[1, "disease"]  # tamper after the check
    st.to_parquet(st_path, index=False)
    with pytest.raises(ReleaseBlocked, match="nothing was published"):
        publish_step(spec, candidate, check)
    assert read_linked(spec.destination) is None


def test_published_re_measures_a_two_table_release_and_fails_when_the_pair_stops_joining(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``privacy-plugins published`` reads an Anatomy release as its pair and measures the groups."""
    import json

    import duckdb
    import yaml
    from release_fixtures import demo_spec_dict

    from privacy_plugins.cli import main

    data = demo_spec_dict(tmp_path, rows=600, sensitive_attributes=["disease"])
    data["algorithm"] = {"name": "anatomy"}
    data["requirements"] = {"k": 4, "l": 2, "l_variant": "frequency"}
    spec = tmp_path / "anatomy.yaml"
    spec.write_text(yaml.safe_dump(data))
    assert main(["published", str(spec)]) == 1  # nothing yet
    assert main(["release", str(spec), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["published", str(spec), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["holds"] is True and report["rows"] == 600
    assert all(r["passed"] for r in report["requirements"])
    with duckdb.connect(str(tmp_path / "release.duckdb")) as connection:  # one QIT row now points nowhere
        connection.execute(
            "UPDATE census_release_qit SET group_id = -1 WHERE rowid = (SELECT min(rowid) FROM census_release_qit)"
        )
    assert main(["published", str(spec), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["holds"] is False


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_a_two_table_release_is_staged_checked_and_swapped_as_one_and_a_rerun_is_recognized(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pair is staged as the run's two working files, measured by its groups, swapped together; a publish
    re-run after the run's folder is gone finds the receipt and the same pair (nothing written again)."""
    from privacy_plugins.release import ReleaseSpec, remove_run_dir
    from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step

    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    data = demo_spec_dict(tmp_path, rows=600, sensitive_attributes=["disease"])
    data["algorithm"] = {"name": "anatomy"}
    data["requirements"] = {"k": 4, "l": 2}
    data["destination"] = {kind: str(tmp_path / ("r.duckdb" if kind == "duckdb" else "out")), "table": "census"}
    del data["workdir"]  # the run's private folder under PRIVACY_PLUGINS_WORKDIR, removed when the run ends
    spec = ReleaseSpec.from_dict(data)
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    assert (Path(candidate.path).name, Path(candidate.linked_path).name) == (
        "candidate.parquet",
        "candidate_st.parquet",
    )
    assert set(candidate.staged_rows) == {"qit", "st"} and candidate.staged_rows["qit"] == candidate.rows_out
    check = check_step(spec, candidate, run_id="r")
    assert check.passed
    first = publish_step(spec, candidate, check, run_id="r")
    pair = read_linked(spec.destination)
    assert pair is not None and len(pair["qit"]) == first.rows == candidate.rows_out
    _assert_pair_is_diverse(pair)
    remove_run_dir(spec, "r")  # the publish task ended the run (or another worker retries it)
    again = publish_step(spec, candidate, check, run_id="r")
    assert again.already_published_by == "r" and again.numbers == first.numbers
