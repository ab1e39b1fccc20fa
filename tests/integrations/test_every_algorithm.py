"""Every registered anonymizer runs through every surface: ``anonymize``, the CLI, the release spec, Airflow, Dagster.

The list comes from the registry, so a newly registered algorithm is tested here
without touching this file; a surface that lists algorithm names by hand (or
rejects a registered one) fails. Each run's output is re-measured independently.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pandas as pd
import pytest
import yaml

from privacy_plugins.cli import main
from privacy_plugins.cli.release import format_release
from privacy_plugins.core.anonymize import AnonymizationResult, anonymize, anonymizer_names, get_anonymizer, tags_of
from privacy_plugins.core.anonymize.base import AnonymizationDetails
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.hierarchies import write_hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.linked import read_linked
from tests.unnamed_columns import other_columns

REPO = Path(__file__).resolve().parents[2]
QIS = ["age", "sex", "zip", "education", "marital_status"]
#: Values of the options that have no usable default (sensitive-values' set A), by option name.
NEEDED_OPTIONS: dict[str, Any] = {"sensitive_values": "HIV,cancer"}
#: Algorithms tagged ``partial_scope``: they protect only part of the table by design.
#: sensitive-values publishes the records outside A unchanged, so table-wide k = 4 and l = 2
#: cannot hold: instead of the table-wide runs below, it is checked against its scoped
#: promise (Python entry) and the release flow must refuse it (nothing published).
PARTIAL = tuple(name for name in anonymizer_names() if tags_of(get_anonymizer(name)).partial_scope)
#: Algorithms tagged ``linked_tables`` (Anatomy: QIT + ST by group id): every surface
#: publishes both (``<table>_qit`` and ``<table>_st``); the pair is re-measured per group.
LINKED = tuple(name for name in anonymizer_names() if tags_of(get_anonymizer(name)).linked_tables)
ALGORITHMS = tuple(name for name in anonymizer_names() if name not in PARTIAL and name not in LINKED)
RELEASED = ALGORITHMS + LINKED
#: Algorithms that declare they enforce k-anonymity only (dpp2ga: the protocol compares class
#: sizes): their requirement is k = 4 alone, and l is not asserted.
K_ONLY = {n for n in ALGORITHMS if tags_of(get_anonymizer(n)).supported_models.promises == {"k_anonymity"}}


def _needed_options(algorithm: str) -> dict[str, Any]:
    """The values of :data:`NEEDED_OPTIONS` that ``algorithm`` takes (read from its option schema)."""
    own = {option.name for option in get_anonymizer(algorithm).options}
    return {name: value for name, value in NEEDED_OPTIONS.items() if name in own}


def _requirements(algorithm: str) -> dict[str, Any]:
    if algorithm in K_ONLY:
        return {"k": 4, "suppression_limit": 0.05}
    return {"k": 4, "l": 2, "suppression_limit": 0.05}


def _spec_data(tmp_path: Path, algorithm: str, *, rows: int = 600) -> dict[str, Any]:
    data = copy.deepcopy(yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8")))
    data["source"] = {"generate": "census", "rows": rows, "seed": 3}
    data["sensitive_attributes"] = ["disease"]
    data["insensitive"] = ["occupation", "income"]  # every column has a role (issue 27)
    data["requirements"] = _requirements(algorithm)
    data["algorithm"] = {"name": algorithm}
    data["destination"] = {"duckdb": str(tmp_path / f"{algorithm}.duckdb"), "table": "census_release"}
    data["report"] = {"directory": str(tmp_path / "reports" / algorithm)}
    return data


def _spec(tmp_path: Path, algorithm: str) -> ReleaseSpec:
    return ReleaseSpec.from_dict(_spec_data(tmp_path, algorithm), base_dir=REPO / "specs")


def _anonymize_census(spec: ReleaseSpec, algorithm: str, **options: Any) -> AnonymizationResult:
    """600 census records anonymized in Python with the models and hierarchies of ``spec``."""
    frame = generate_census(600, seed=3)
    return anonymize(
        frame,
        algorithm=algorithm,
        quasi_identifiers=QIS,
        identifiers=["person_id"],
        models=spec.models(),
        insensitive=other_columns(frame, spec.models(), QIS, ["person_id"]),  # every column has a role (issue 27)
        suppression_limit=0.05,
        hierarchies=spec.build_hierarchies(frame),
        **options,
    )


def _assert_meets_the_targets(table: pd.DataFrame, rows_in: int, algorithm: str, *, k: int = 4, l: int = 2) -> None:
    assert "person_id" not in table.columns
    assert 0 < len(table) <= rows_in
    report = measure(table, quasi_identifiers=QIS, sensitive_attributes=["disease"])
    assert report.k >= k
    if algorithm not in K_ONLY:
        assert report.for_attribute("disease").distinct_l >= l


def _assert_published(destination: Any, algorithm: str) -> None:
    if algorithm in LINKED:
        assert read_published(destination) is None  # no one-table release under the plain name
        pair = read_linked(destination)
        assert pair is not None
        _assert_the_pair_meets_the_targets(pair["qit"], pair["st"], 600)
        return
    published = read_published(destination)
    assert published is not None
    _assert_meets_the_targets(published, 600, algorithm)


def test_the_registry_lists_the_seed_algorithms() -> None:
    assert {"optimal", "samarati", "exhaustive", "mondrian"} <= set(ALGORITHMS)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_python_entry_point(algorithm: str, tmp_path: Path) -> None:
    result = _anonymize_census(_spec(tmp_path, algorithm), algorithm)
    assert result.algorithm == algorithm and result.rows_in == result.rows_out + result.suppressed == 600
    _assert_meets_the_targets(result.table, 600, algorithm)
    _assert_declares_a_headline(result)


def _assert_declares_a_headline(result: AnonymizationResult) -> None:
    """Each algorithm's details say what it produced in their own words (no name checks in summaries)."""
    assert type(result.details).headline is not AnonymizationDetails.headline
    headline = result.details.headline()
    assert re.search(r"\d", headline) and "\n" not in headline, headline


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_cli(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, algorithm)
    frame = generate_census(600, seed=3)
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    for column, hierarchy in spec.build_hierarchies(frame).items():
        write_hierarchy(hierarchy, folder / f"{column}.csv")
    out, report = tmp_path / "out.parquet", tmp_path / "report.json"
    argv = [
        "anonymize", str(data), "--quasi-identifiers", ",".join(QIS), "--sensitive-attributes", "disease",
        "--insensitive", "occupation,income",
        "--identifiers", "person_id", "--hierarchies", str(folder), "--k", "4",
        *([] if algorithm in K_ONLY else ["--l", "2"]),
        "--suppression-limit", "0.05", "--algorithm", algorithm, "--out", str(out), "--report", str(report),
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(report.read_text())["algorithm"] == algorithm
    _assert_meets_the_targets(pd.read_parquet(out), 600, algorithm)


@pytest.mark.parametrize("algorithm", RELEASED)
def test_release_spec(algorithm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec = _spec(tmp_path, algorithm)
    result = run_release(spec)
    assert result.passed, result.failure
    assert result.candidate is not None and result.candidate.algorithm == algorithm
    _assert_published(spec.destination, algorithm)
    # The summary's anonymized line carries the algorithm's own headline, never an empty "search: ;".
    line = next(x for x in format_release(result, spec).splitlines() if x.lstrip().startswith("anonymized"))
    assert line.split(f"{algorithm}: ", 1)[1].startswith(result.candidate.headline) and result.candidate.headline
    assert "search: ;" not in line


@pytest.mark.parametrize("algorithm", RELEASED)
def test_airflow_operators(algorithm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("airflow")
    from privacy_plugins.integrations.airflow import (
        AnonymizeOperator,
        LoadOperator,
        PrivacyCheckOperator,
        PublishOperator,
    )

    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec_path = tmp_path / "spec.yaml"
    data = _spec_data(tmp_path, "optimal")
    data["requirements"] = _requirements(algorithm)
    spec_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    # The algorithm comes in as a templated override, as a DAG's params would give it.
    common: dict[str, Any] = {"spec_path": str(spec_path), "overrides": {"algorithm": {"name": algorithm}}}

    def run(operator: Any) -> dict[str, Any]:
        payload: dict[str, Any] = operator.execute(context={"ti": Mock(), "run_id": f"test_{algorithm}"})
        json.dumps(payload)
        return payload

    loaded = run(LoadOperator(task_id="load", **common))
    candidate = run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))
    assert candidate["algorithm"] == algorithm
    check = run(PrivacyCheckOperator(task_id="check", candidate=candidate, **common))
    assert check["passed"]
    run(PublishOperator(task_id="publish", candidate=candidate, check=check, **common))
    _assert_published(ReleaseSpec.from_yaml(spec_path).destination, algorithm)


@pytest.mark.parametrize("algorithm", RELEASED)
def test_dagster_assets(algorithm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dg = pytest.importorskip("dagster")
    from privacy_plugins.integrations.dagster import build_release_assets

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    (tmp_path / "dagster_home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec = _spec(tmp_path, algorithm)
    release = build_release_assets(spec)
    result = dg.materialize(
        [*release.assets, *release.asset_checks],
        resources=release.resources(),
        raise_on_error=False,
    )
    assert result.success
    _assert_published(spec.destination, algorithm)


@pytest.mark.filterwarnings("ignore::privacy_plugins.errors.PrivacyRiskWarning")
@pytest.mark.parametrize("algorithm", sorted(PARTIAL))
def test_partial_algorithms_keep_their_scoped_promise(algorithm: str, tmp_path: Path) -> None:
    result = _anonymize_census(_spec(tmp_path, "optimal"), algorithm, **_needed_options(algorithm))
    _assert_declares_a_headline(result)
    assert result.passed and result.rows_in == result.rows_out + result.suppressed == 600
    assert all(
        "for the records whose 'disease' is one of the 2 sensitive_values" in model.model for model in result.models
    )
    report = measure(result.table, quasi_identifiers=QIS, sensitive_attributes=["disease"])
    assert report.k < 4  # the records outside A are published as they are


@pytest.mark.filterwarnings("ignore::privacy_plugins.errors.PrivacyRiskWarning")
@pytest.mark.parametrize("algorithm", sorted(PARTIAL))
def test_the_release_flow_refuses_a_partial_algorithm(
    algorithm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    data = _spec_data(tmp_path, algorithm)
    data["algorithm"] = {"name": algorithm, **_needed_options(algorithm)}
    with pytest.raises(ConfigurationError, match=f"algorithm.name {algorithm!r} cannot promise"):
        ReleaseSpec.from_dict(data, base_dir=REPO / "specs")  # refused on load: it never protects the whole table
    assert not (tmp_path / f"{algorithm}.duckdb").exists()


def _assert_the_pair_meets_the_targets(qit: pd.DataFrame, st: pd.DataFrame, rows_in: int) -> None:
    """Each QIT row joins one group; each group has ≥ 4 records and ≥ 2 distinct values (re-measured)."""
    assert "person_id" not in qit.columns and "disease" not in qit.columns
    assert 0 < len(qit) <= rows_in
    per_group = st.groupby("group_id")["count"].sum()
    assert qit["group_id"].value_counts().sort_index().tolist() == per_group.sort_index().tolist()
    joined = st.loc[st.index.repeat(st["count"])].reset_index(drop=True)
    report = measure(joined, quasi_identifiers=["group_id"], sensitive_attributes=["disease"])
    assert report.k >= 4 and report.for_attribute("disease").distinct_l >= 2


def test_anatomy_is_the_linked_algorithm() -> None:
    assert "anatomy" in LINKED


@pytest.mark.parametrize("algorithm", LINKED)
def test_linked_python_entry_point(algorithm: str, tmp_path: Path) -> None:
    result = _anonymize_census(_spec(tmp_path, "optimal"), algorithm)
    assert result.linked is not None and result.rows_in == result.rows_out + result.suppressed == 600
    _assert_the_pair_meets_the_targets(result.table, result.linked.table, 600)


@pytest.mark.parametrize("algorithm", LINKED)
def test_linked_cli_writes_both_tables(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = generate_census(600, seed=3)
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    out, report = tmp_path / "out.parquet", tmp_path / "report.json"
    argv = [
        "anonymize", str(data), "--quasi-identifiers", ",".join(QIS), "--sensitive-attributes", "disease",
        "--insensitive", "occupation,income",
        "--identifiers", "person_id", "--k", "4", "--l", "2", "--suppression-limit", "0.05",
        "--algorithm", algorithm, "--out", str(out), "--report", str(report),
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    written = json.loads(report.read_text())
    assert written["algorithm"] == algorithm and written["linked_out"] == str(tmp_path / "out.st.parquet")
    _assert_the_pair_meets_the_targets(pd.read_parquet(out), pd.read_parquet(tmp_path / "out.st.parquet"), 600)


@pytest.mark.parametrize("algorithm", LINKED)
def test_linked_gx_suite_measures_the_groups(algorithm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("airflow")
    pytest.importorskip("great_expectations")
    from privacy_plugins.integrations.airflow import AnonymizeOperator, LoadOperator, PrivacyCheckOperator

    monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path / "work"))
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(_spec_data(tmp_path, algorithm)), encoding="utf-8")
    suite = json.loads((REPO / "expectations" / "demo_release.json").read_text(encoding="utf-8"))
    suite["expectations"][0]["kwargs"]["k"] = 4
    (tmp_path / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    common: dict[str, Any] = {"spec_path": str(spec_path)}

    def run(operator: Any) -> dict[str, Any]:
        payload: dict[str, Any] = operator.execute(context={"ti": Mock(), "run_id": f"gx_{algorithm}"})
        return payload

    loaded = run(LoadOperator(task_id="load", **common))
    candidate = run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common))
    check = run(PrivacyCheckOperator(task_id="check", candidate=candidate, expectation_suite="suite.json", **common))
    gx_checks = [c for c in check["checks"] if c["requirement"].startswith("GX demo_release:")]
    assert check["passed"] and len(gx_checks) == 2 and all(c["passed"] for c in gx_checks)
