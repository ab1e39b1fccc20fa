"""A personalized release whose sensitive column holds generalized values, through every surface.

The release spec's ``hierarchies:`` gives the sensitive attribute's hierarchy; every place
that measures the leakage model (the core re-check, the release check and publish, the
``published`` command, the GX expectation on pandas and SQL, the Dagster asset check and
the Airflow check operator) must count a generalized value as every leaf below it
(DCorrelate over the hierarchy). Ignoring it errs both ways: two records published as
"respiratory infection" look like one value held twice (a false alarm on a good release),
while "pneumonia" beside "respiratory infection" look like two different values (a leak
passed). A hand-tampered table — one record's generalized sensitive value replaced so
that a record's Pleak exceeds its bound — must fail each surface.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import numpy as np
import pandas as pd
import pytest
import yaml

from privacy_plugins.cli import main
from privacy_plugins.core.anonymize import AnonymizationResult
from privacy_plugins.core.hierarchies import Hierarchy, build_hierarchy, write_hierarchy
from privacy_plugins.core.metrics.leakage import leakage_per_record
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release import steps as release_steps

QIS = ["age", "zipcode"]
BOUND = 0.5
GROUPING = {
    "gastric ulcer": ["stomach disease"],
    "dyspepsia": ["stomach disease"],
    "bronchitis": ["respiratory infection"],
    "pneumonia": ["respiratory infection"],
    "flu": ["respiratory infection"],
}
HIERARCHY = build_hierarchy("disease", {"grouping": GROUPING})


def _people(n: int = 40, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = ["pneumonia", "pneumonia", "flu", "bronchitis", "gastric ulcer", "dyspepsia"]
    return pd.DataFrame(
        {
            "pid": np.arange(n),
            "age": rng.integers(20, 60, n),
            "zipcode": rng.integers(10000, 10100, n),
            "disease": rng.choice(values, n),
        }
    )


def _leakage(table: pd.DataFrame, hierarchy: Hierarchy | None) -> np.ndarray:
    classes = EquivalenceClasses.from_frame(table.reset_index(drop=True), QIS)
    return leakage_per_record(classes, classes.sensitive("disease"), hierarchy)


def tamper(table: pd.DataFrame) -> pd.DataFrame:
    """Replace one record's generalized sensitive value (by a leaf below it) so that a Pleak exceeds the bound."""
    inner = {str(label) for level in HIERARCHY.labels[1:] for label in level}
    generalized = [i for i, v in enumerate(table["disease"]) if str(v) in inner]
    for row in generalized:
        for leaf in HIERARCHY.leaves:
            changed = table.copy()
            changed.iloc[row, changed.columns.get_loc("disease")] = str(leaf)
            if _leakage(changed, HIERARCHY).max() > BOUND + 1e-9:
                return changed
    raise AssertionError("no single replacement breaks the bound; change the test data")


def _spec_data(tmp_path: Path) -> dict[str, Any]:
    source = tmp_path / "people.csv"
    _people().to_csv(source, index=False)
    return {
        "name": "personalized_generalized",
        "source": {"path": str(source)},
        "identifiers": ["pid"],
        "quasi_identifiers": QIS,
        "sensitive_attributes": ["disease"],
        "hierarchies": {"disease": {"grouping": GROUPING}},
        "requirements": {"bound": BOUND},
        "algorithm": {"name": "personalized"},
        "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "people_release"},
        "report": {"directory": str(tmp_path / "reports")},
        "workdir": str(tmp_path / "work"),
    }


@pytest.fixture
def spec_path(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec_data(tmp_path)), encoding="utf-8")
    return path


@pytest.fixture
def tampered_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every candidate the release writes is tampered after the anonymizer's own (passing) re-check."""
    real = release_steps.anonymize

    def anonymize_then_tamper(*args: Any, **kwargs: Any) -> AnonymizationResult:
        result = real(*args, **kwargs)
        assert result.passed
        return dataclasses.replace(result, table=tamper(result.table))

    monkeypatch.setattr(release_steps, "anonymize", anonymize_then_tamper)


def _leakage_check(checks: list[Any]) -> Any:
    (check,) = [c for c in checks if c.name == "personalized_leakage_disease"]
    return check


def test_spec_binds_the_sensitive_hierarchy_to_every_model(spec_path: Path) -> None:
    spec = ReleaseSpec.from_yaml(spec_path)
    (model,) = spec.models()
    hierarchy = model.measuring_hierarchy()
    assert hierarchy is not None and sorted(hierarchy.to_rows()) == sorted(HIERARCHY.to_rows())
    assert spec.build_hierarchies(_people()) == {}  # QIs are numeric ranges; the sensitive one is the models'


def test_release_passes_check_publish_and_published(spec_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = ReleaseSpec.from_yaml(spec_path)
    result = run_release(spec)
    assert result.passed, result.failure
    assert result.check is not None
    check = _leakage_check(result.check.checks)
    published = read_published(spec.destination)
    assert published is not None and len(published) == 40 and "pid" not in published.columns
    inner = {str(label) for label in HIERARCHY.labels[1]}
    assert inner & set(published["disease"].astype(str)), "the test needs generalized sensitive values"
    leak = _leakage(published, HIERARCHY)
    assert check.passed and check.observed == pytest.approx(leak.max()) and leak.max() <= BOUND + 1e-9
    assert main(["published", str(spec_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["holds"] and report["requirements"][0]["observed"] == pytest.approx(leak.max())


def test_tampered_published_table_fails_published(spec_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import duckdb

    spec = ReleaseSpec.from_yaml(spec_path)
    assert run_release(spec).passed
    published = read_published(spec.destination)
    assert published is not None
    changed = tamper(published)
    (row,) = np.flatnonzero(changed["disease"].to_numpy() != published["disease"].to_numpy())
    assert _leakage(changed, HIERARCHY)[row] > BOUND >= _leakage(changed, None)[row]  # blind to the hierarchy: missed
    with duckdb.connect(str(spec.destination.duckdb)) as connection:
        connection.register("changed", changed)
        connection.execute("CREATE OR REPLACE TABLE people_release AS SELECT * FROM changed")
    assert main(["published", str(spec_path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["holds"] and report["requirements"][0]["observed"] > BOUND


@pytest.mark.usefixtures("tampered_candidates")
def test_tampered_candidate_fails_the_release_check(spec_path: Path) -> None:
    spec = ReleaseSpec.from_yaml(spec_path)
    result = run_release(spec)
    assert not result.passed and result.check is not None
    check = _leakage_check(result.check.checks)
    assert not check.passed and check.observed > BOUND
    assert read_published(spec.destination) is None


@pytest.mark.usefixtures("tampered_candidates")
def test_tampered_candidate_fails_the_airflow_check_operator(spec_path: Path) -> None:
    pytest.importorskip("airflow")
    from privacy_plugins.integrations.airflow import AnonymizeOperator, LoadOperator, PrivacyCheckOperator
    from privacy_plugins.integrations.airflow.exceptions import PrivacyCheckFailed

    context: dict[str, Any] = {"ti": Mock(), "run_id": "tampered"}
    loaded = LoadOperator(task_id="load", spec_path=str(spec_path)).execute(context=context)
    candidate = AnonymizeOperator(task_id="anonymize", spec_path=str(spec_path), loaded=loaded).execute(context=context)
    operator = PrivacyCheckOperator(task_id="check", spec_path=str(spec_path), candidate=candidate)
    with pytest.raises(PrivacyCheckFailed, match="leakage") as failed:
        operator.execute(context=context)
    assert failed.value.check is not None
    (check,) = [c for c in failed.value.check["checks"] if c["name"] == "personalized_leakage_disease"]
    assert not check["passed"] and check["observed"] > BOUND


@pytest.mark.usefixtures("tampered_candidates")
def test_tampered_candidate_fails_the_dagster_asset_check(
    spec_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dg = pytest.importorskip("dagster")
    from privacy_plugins.integrations.dagster import build_release_assets

    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    spec = ReleaseSpec.from_yaml(spec_path)
    release = build_release_assets(spec)
    result = dg.materialize(
        [*release.assets, *release.asset_checks],
        resources=release.resources(),
        raise_on_error=False,
    )
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    leakage = evaluations["personalized_leakage_disease"]
    assert not leakage.passed and leakage.severity == dg.AssetCheckSeverity.ERROR
    # The candidate's metadata measures with the same hierarchy (the tampered record shows).
    leakage_key = "measured personalized_leakage_disease"  # the check's name, as the metadata keys it
    metadata = [
        event.materialization.metadata
        for event in result.get_asset_materialization_events()
        if event.materialization is not None and leakage_key in event.materialization.metadata
    ]
    (candidate_file,) = (tmp_path / "work").rglob("candidate.parquet")
    expected = _leakage(pd.read_parquet(candidate_file), HIERARCHY).max()
    assert expected > BOUND and metadata and metadata[0][leakage_key].value == pytest.approx(expected)
    assert read_published(spec.destination) is None


def _sqlite_batch(context: Any, frame: pd.DataFrame, directory: Path) -> Any:
    import sqlalchemy as sa

    url = f"sqlite:///{directory / 'published.sqlite'}"
    engine = sa.create_engine(url)
    frame.to_sql("published", engine, index=False, if_exists="replace")
    engine.dispose()
    asset = context.data_sources.add_sqlite("sqlite", connection_string=url).add_table_asset(
        "published", table_name="published"
    )
    return asset.add_batch_definition_whole_table("whole").get_batch()


@pytest.mark.parametrize("engine", ["pandas", "sqlite"])
def test_gx_expectation_measures_along_the_sensitive_hierarchy(engine: str, tmp_path: Path) -> None:
    pytest.importorskip("great_expectations")  # the adapter imports it: skip, not fail, without the gx extra
    gx = pytest.importorskip("privacy_plugins.integrations.gx")
    anonymized = _anonymized()
    changed = tamper(anonymized)
    hierarchy_file = write_hierarchy(HIERARCHY, tmp_path / "disease.csv")
    forms: list[Any] = [str(hierarchy_file), {"grouping": GROUPING}]

    def validate(frame: pd.DataFrame, hierarchy: Any) -> Any:
        context = gx.ephemeral_context()
        if engine == "pandas":
            asset = context.data_sources.add_pandas("pandas").add_dataframe_asset("table")
            batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": frame})
        else:
            folder = tmp_path / f"db_{len(list(tmp_path.glob('db_*')))}"
            folder.mkdir()
            batch = _sqlite_batch(context, frame, folder)
        expectation = gx.ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=QIS, sensitive_attribute="disease", bound=BOUND, sensitive_hierarchy=hierarchy
        )
        result = batch.validate(expectation)
        assert not result.exception_info.get("raised_exception"), result.exception_info
        return result

    for form in forms:
        good, bad = validate(anonymized, form), validate(changed, form)
        assert good.success and good.result["observed_value"] == pytest.approx(_leakage(anonymized, HIERARCHY).max())
        assert not bad.success and bad.result["observed_value"] > BOUND
        assert bad.result["details"]["leakage_violations"] >= 1
    assert not validate(anonymized, None).success  # without the hierarchy: a false alarm on a good table


def test_gx_without_the_hierarchy_would_pass_a_leak() -> None:
    pytest.importorskip("great_expectations")  # the adapter imports it: skip, not fail, without the gx extra
    gx = pytest.importorskip("privacy_plugins.integrations.gx")
    # pneumonia beside "respiratory infection" (3 leaves): Pleak(pneumonia) = (1 + 1/3) / 2 > 0.5.
    frame = pd.DataFrame({"age": [1, 1, 2, 2], "zipcode": [1, 1, 2, 2]})
    frame["disease"] = ["pneumonia", "respiratory infection", "flu", "gastric ulcer"]
    context = gx.ephemeral_context()
    asset = context.data_sources.add_pandas("pandas").add_dataframe_asset("table")
    batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": frame})

    def expect(hierarchy: Any) -> Any:
        return gx.ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=QIS, sensitive_attribute="disease", bound=BOUND, sensitive_hierarchy=hierarchy
        )

    assert batch.validate(expect(None)).success
    aware = batch.validate(expect({"grouping": GROUPING}))
    assert not aware.success and aware.result["observed_value"] == pytest.approx(2 / 3)


def _anonymized() -> pd.DataFrame:
    from privacy_plugins.core.anonymize import anonymize
    from privacy_plugins.core.models import PersonalizedLeakage

    result = anonymize(
        _people(),
        algorithm="personalized",
        quasi_identifiers=QIS,
        identifiers=["pid"],
        models=[PersonalizedLeakage("disease", bound=BOUND)],
        hierarchies={"disease": HIERARCHY},
    )
    assert result.passed
    return result.table


def test_song_table1_as_a_release_meets_one_half_for_everybody(tmp_path: Path) -> None:
    data = _spec_data(tmp_path)
    table1 = pd.DataFrame(
        {
            "pid": range(5),
            "age": [5, 9, 8, 12, 19],
            "zipcode": [12000, 14000, 19000, 22000, 24000],
            "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
        }
    )
    table1.to_csv(data["source"]["path"], index=False)
    spec = ReleaseSpec.from_dict(data)
    result = run_release(spec)
    assert result.passed, result.failure
    published = read_published(spec.destination)
    assert published is not None and len(published) == 5
    assert (_leakage(published, HIERARCHY) <= BOUND + 1e-9).all()
    # Song's own 2-anonymous Table 3 fails the same check (rows 4-5: Pleak = 1).
    table3 = table1.drop(columns="pid").assign(age=["[5-10]"] * 3 + ["[11-20]"] * 2, zipcode=["a"] * 3 + ["b"] * 2)
    (model,) = spec.models()
    verdict = model.evaluate(EquivalenceClasses.from_frame(table3, QIS))
    assert not verdict.passed and verdict.observed == 1.0 and verdict.violations.records == 2


def test_a_bound_column_with_a_default_bound_in_the_spec(tmp_path: Path) -> None:
    data = _spec_data(tmp_path)
    people = _people().assign(pleak=[None, 1.0] * 20)
    people.to_csv(data["source"]["path"], index=False)
    data["requirements"] = {"bound": BOUND, "bound_column": "pleak"}
    spec = ReleaseSpec.from_dict(data)
    result = run_release(spec)
    assert result.passed, result.failure
    published = read_published(spec.destination)
    assert published is not None
    bounds = published["pleak"].fillna(BOUND).to_numpy()
    assert (_leakage(published, HIERARCHY) <= bounds + 1e-9).all()


def test_a_sensitive_value_missing_from_its_hierarchy_stops_the_release_before_anything_is_written(
    tmp_path: Path,
) -> None:
    from privacy_plugins.errors import HierarchyError

    data = _spec_data(tmp_path)
    _people().assign(disease=["cholera", "typhus", *["flu"] * 38]).to_csv(data["source"]["path"], index=False)
    spec = ReleaseSpec.from_dict(data)
    with pytest.raises(HierarchyError, match=r"'disease' has 2 value\(s\) that are neither leaves"):
        run_release(spec)
    assert read_published(spec.destination) is None
    assert not list((tmp_path / "work").rglob("*.parquet"))


def test_a_sensitive_hierarchy_must_not_need_the_raw_data(tmp_path: Path) -> None:
    from privacy_plugins.errors import HierarchyError

    data = _spec_data(tmp_path)
    data["hierarchies"] = {"disease": {"masking": {}}}
    with pytest.raises(HierarchyError, match=r"sensitive attribute 'disease' must be one of \['file', 'taxonomy'"):
        ReleaseSpec.from_dict(data)


def test_a_hierarchy_folder_gives_the_sensitive_hierarchy_too(tmp_path: Path) -> None:
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    write_hierarchy(HIERARCHY, folder / "disease.csv")
    data = _spec_data(tmp_path)
    data["hierarchies"] = str(folder)
    spec = ReleaseSpec.from_dict(data)
    (model,) = spec.models()
    hierarchy = model.measuring_hierarchy()
    assert hierarchy is not None and sorted(hierarchy.to_rows()) == sorted(HIERARCHY.to_rows())


@pytest.mark.parametrize(
    ("pleak", "message"),
    [
        ([1.5] + [0.5] * 39, r"'pleak' has 1 bounds outside \(0, 1\]"),
        (["high"] + [0.5] * 39, r"'pleak' has 1 non-numeric bounds"),
        ([None, None] + [0.5] * 38, r"'pleak' has 2 missing bounds and no default"),
    ],
)
def test_bad_bounds_stop_the_release_before_anything_is_written(
    pleak: list[object], message: str, tmp_path: Path
) -> None:
    from privacy_plugins.errors import ConfigurationError

    data = _spec_data(tmp_path)
    _people().assign(pleak=pleak).to_csv(data["source"]["path"], index=False)
    data["requirements"] = {"bound_column": "pleak"}
    spec = ReleaseSpec.from_dict(data)
    with pytest.raises(ConfigurationError, match=message):
        run_release(spec)
    assert read_published(spec.destination) is None
    assert not list((tmp_path / "work").rglob("*.parquet"))
