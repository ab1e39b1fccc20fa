"""A privacy model defined outside the package, at every edge: YAML release, CLI, measure, anonymize, diagnose, GX.

``SmallClassShare`` lives in this test module and is named ``<module>:SmallClassShare``
(imported and registered on first use), the way a user's own package would name it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

import privacy_plugins as pp
from privacy_plugins.cli import main
from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.hierarchies import build_hierarchy
from privacy_plugins.core.hierarchies.io import write_hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import MODEL_REGISTRY, PrivacyModel, from_config
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.release.destinations import read_published
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec
from tests.unnamed_columns import other_columns

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SmallClassShare(PrivacyModel):
    """At most ``share`` of the records sit in classes smaller than ``size`` (all of those classes violate)."""

    size: int
    share: float

    config_name: ClassVar[str] = "small_class_share"
    family: ClassVar[str] = "small-class share"
    report_key: ClassVar[str] = "small_share"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_integer(self.size, name="size")
        check_fraction(self.share, name="share")

    def __str__(self) -> str:
        return f"at most {self.share:g} of records in classes smaller than {self.size}"

    @property
    def threshold(self) -> float:
        return float(self.share)

    def observed(self, classes: EquivalenceClasses) -> float:
        sizes = classes.sizes
        total = int(sizes.sum())
        return float(sizes[sizes < self.size].sum()) / total if total else 0.0

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        small = classes.sizes < self.size
        return small if self.observed(classes) > self.share else np.zeros_like(small)


NAME = f"{SmallClassShare.__module__}:SmallClassShare"
QIS = ["age", "sex", "zip", "education", "marital_status"]


@pytest.fixture(autouse=True)
def _forget_the_model():
    """Every test names the model by ``module:Class``, as a fresh process would (registration is its job)."""
    MODEL_REGISTRY.pop("small_class_share", None)
    yield
    MODEL_REGISTRY.pop("small_class_share", None)


def _spec(tmp_path: Path, requirements: object, **overrides: object) -> dict:
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text())
    data["source"]["rows"] = 1_500
    data["requirements"] = requirements
    data["destination"] = {"duckdb": str(tmp_path / "release.duckdb"), "table": "census_release"}
    data["report"] = {"directory": str(tmp_path / "reports")}
    data["workdir"] = str(tmp_path / "work")
    data.update(overrides)
    return data


LISTED = [
    {"k_anonymity": {"k": 5}},
    {"distinct_l_diversity": {"sensitive_attribute": "disease", "l": 2}},
    {NAME: {"size": 8, "share": 0.2}},
]


def test_the_list_form_equals_the_sugar(tmp_path: Path) -> None:
    sugar = ReleaseSpec.from_dict(_spec(tmp_path, {"k": 5, "l": 2, "suppression_limit": 0.05}))
    listed = ReleaseSpec.from_dict(
        _spec(
            tmp_path,
            {
                "models": [
                    {"k_anonymity": {"k": 5}},
                    {"distinct_l_diversity": {"sensitive_attribute": "disease", "l": 2}},
                    {"distinct_l_diversity": {"sensitive_attribute": "income", "l": 2}},
                ],
                "suppression_limit": 0.05,
            },
        )
    )
    assert listed.models() == sugar.models()
    bare = ReleaseSpec.from_dict(_spec(tmp_path, [{"k_anonymity": {"k": 5}}]))
    assert [str(m) for m in bare.models()] == ["5-anonymity"] and bare.requirements.suppression_limit == 0.0


@pytest.mark.parametrize(
    ("requirements", "message"),
    [
        (
            [{"k_anonimity": {"k": 5}}],
            "requirements[0]: unknown privacy model 'k_anonimity'; did you mean 'k_anonymity'?",
        ),
        ({"models": [{"k_anonymity": {"kk": 5}}]}, "requirements.models[0]: k_anonymity: unknown parameter 'kk'"),
        ([{NAME: {"size": 8, "share": 2}}], "requirements[0]: " + NAME + ": share must be in [0, 1]"),
        ({"k": 5, "models": [{"k_anonymity": {"k": 7}}]}, "requirements: 5-anonymity and 7-anonymity share the check"),
        ([{"distinct_l_diversity": {"sensitive_attribute": "zip", "l": 2}}], "'zip', which is not among the sensitive"),
        ([], "requirements must list a model or set at least one of k"),
    ],
)
def test_a_bad_requirement_list_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], requirements: object, message: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec(tmp_path, requirements)), encoding="utf-8")
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.count("requirements") == 1, err
    assert not (tmp_path / "release.duckdb").exists()


def _small_share(frame: pd.DataFrame, size: int) -> float:
    sizes = frame.groupby(QIS, dropna=False).size()
    return float(sizes[sizes < size].sum()) / float(sizes.sum())


def test_a_release_of_a_custom_model_in_memory(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(_spec(tmp_path, {"models": LISTED, "suppression_limit": 0.05}))
    result = run_release(spec)
    assert result.passed, result.failure
    checks = {c.name: c for c in result.check.checks}
    assert checks["small_class_share"].passed and checks["small_class_share"].target == 0.2
    published = read_published(spec.destination)
    assert published is not None
    assert (
        checks["small_class_share"].observed == pytest.approx(_small_share(published, 8))
        and _small_share(published, 8) <= 0.2
    )
    assert published.groupby(QIS).size().min() >= 5
    numbers = result.published.numbers
    assert numbers["met"]["small_class_share"] is True
    assert numbers["measured"]["small_class_share"] == pytest.approx(_small_share(published, 8))
    # The model decides: no record may sit in a class smaller than the table, which nothing can meet …
    strict = ReleaseSpec.from_dict(
        _spec(tmp_path / "strict", {"models": [{NAME: {"size": 1_501, "share": 0.0}}], "suppression_limit": 0.0})
    )
    refused = run_release(strict)
    assert not refused.passed and read_published(strict.destination) is None
    # … and the diagnosis draws its borders (the model is monotone over quasi-identifier subsets)
    diagnosis = json.loads(spec.report.diagnosis_json.read_text())
    assert any("smaller than 8" in json.dumps(b) for b in diagnosis["model_borders"])


def test_a_release_of_a_custom_model_inside_duckdb(tmp_path: Path) -> None:
    """A DuckDB source with a full-domain algorithm: the model is judged on the GROUP BY classes."""
    db = tmp_path / "source.duckdb"
    with duckdb.connect(str(db)) as connection:
        connection.register("frame", pp.generate_census(1_500, seed=0))
        connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    requirements = {"models": LISTED, "suppression_limit": 0.05}
    inside = ReleaseSpec.from_dict(
        _spec(tmp_path / "inside", requirements, source={"duckdb": str(db), "table": "census"})
    )
    memory = ReleaseSpec.from_dict(_spec(tmp_path / "memory", requirements))
    inside_result, memory_result = run_release(inside), run_release(memory)
    assert inside_result.loaded.kind == "snapshot"
    assert inside_result.passed and memory_result.passed
    by_name = {c.name: (c.passed, c.observed) for c in inside_result.check.checks}
    assert by_name == {c.name: (c.passed, c.observed) for c in memory_result.check.checks}
    assert by_name["small_class_share"][0]
    # the database's diagnosis counts records at risk against the listed k_anonymity's k (not k = 1)
    sizes = pp.generate_census(1_500, seed=0).groupby(QIS, dropna=False).size()
    expected = sizes[sizes < 5].sum() / 1_500
    assert expected > 0 and inside_result.diagnosis.share_at_risk == pytest.approx(expected)


def _census_csv(tmp_path: Path) -> Path:
    path = tmp_path / "census.csv"
    pp.generate_census(600, seed=1).to_csv(path, index=False)
    return path


def _requirements_file(tmp_path: Path, entries: list) -> Path:
    path = tmp_path / "requirements.yaml"
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    return path


def test_cli_measure_with_a_requirements_file_in_a_fresh_process(tmp_path: Path) -> None:
    data = _census_csv(tmp_path)
    file = _requirements_file(tmp_path, [{NAME: {"size": 3, "share": 0.1}}])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(Path(__file__).parent)])}
    command = [sys.executable, "-m", "privacy_plugins.cli", "measure", str(data), "--quasi-identifiers", "age,sex,zip"]
    done = subprocess.run(
        [*command, "--k", "2", "--requirements-file", str(file), "--format", "json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["models"]
    assert list(results) == ["k_anonymity", "small_class_share"]  # the flags and the file: the union
    frame = pd.read_csv(data)
    sizes = frame.groupby(["age", "sex", "zip"]).size()
    assert results["small_class_share"]["observed"] == pytest.approx(sizes[sizes < 3].sum() / len(frame))
    assert results["small_class_share"]["passed"] is False
    table = subprocess.run([*command, "--requirements-file", str(file)], capture_output=True, text=True, env=env)
    assert table.returncode == 0 and "small_class_share  fails" in table.stdout
    misspelled = _requirements_file(tmp_path, [{"k_anonymty": {"k": 2}}])
    bad = subprocess.run([*command, "--requirements-file", str(misspelled)], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "did you mean 'k_anonymity'?" in bad.stderr, bad.stderr


def test_cli_anonymize_and_diagnose_with_a_requirements_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pp.generate_census(600, seed=1)
    data = tmp_path / "census.parquet"  # zip codes keep their leading zeros
    frame.to_parquet(data)
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    spec = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text())
    for column in ("age", "sex", "zip"):
        write_hierarchy(build_hierarchy(column, spec["hierarchies"][column], frame[column]), folder / f"{column}.csv")
    file = _requirements_file(tmp_path, [{NAME: {"size": 4, "share": 0.05}}])
    out = tmp_path / "out.csv"
    roles = ["--quasi-identifiers", "age,sex,zip", "--identifiers", "person_id",
             "--insensitive", "education,marital_status,occupation,income,disease"]  # fmt: skip
    code = main(
        ["anonymize", str(data), *roles, "--hierarchies", str(folder), "--requirements-file", str(file),
         "--k", "2", "--out", str(out), "--quiet", "--format", "json"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    sizes = published.groupby(["age", "sex", "zip"]).size()
    assert sizes.min() >= 2 and sizes[sizes < 4].sum() / len(published) <= 0.05
    assert "small-class" in json.dumps(report) or "smaller than 4" in json.dumps(report)

    assert (
        main(
            [
                "diagnose",
                str(data),
                "--quasi-identifiers",
                "age,sex,zip",
                "--requirements-file",
                str(file),
                "--format",
                "json",
            ]
        )
        == 0
    )
    diagnosis = json.loads(capsys.readouterr().out)
    assert [b["target"] for b in diagnosis["model_borders"]] == ["at most 0.05 of records in classes smaller than 4"]

    assert (
        main(["anonymize", str(data), *roles, "--out", str(out), "--requirements-file", str(tmp_path / "no.yaml")]) == 2
    )
    assert "no.yaml" in capsys.readouterr().err


def test_python_measure_anonymize_diagnose_with_the_model(tmp_path: Path) -> None:
    frame = pp.generate_census(600, seed=1)
    model = from_config(NAME, size=4, share=0.05)
    report = measure(frame, quasi_identifiers=["age", "sex", "zip"], models=[model])
    assert set(report.results) == {"small_class_share"} and not report.results["small_class_share"].passed
    spec = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text())
    hierarchies = {c: build_hierarchy(c, spec["hierarchies"][c], frame[c]) for c in ("age", "sex", "zip")}
    result = anonymize(
        frame, algorithm="optimal", quasi_identifiers=["age", "sex", "zip"], hierarchies=hierarchies, models=[model],
        insensitive=other_columns(frame, [model], ["age", "sex", "zip"]),
    )  # fmt: skip
    assert (
        measure(result.table, quasi_identifiers=["age", "sex", "zip"], models=[model])
        .results["small_class_share"]
        .passed
    )
    found = diagnose(frame, quasi_identifiers=["age", "sex", "zip"], models=[model], k=2)
    assert [b.target for b in found.model_borders] == [str(model)]


def test_gx_suite_with_the_custom_model(tmp_path: Path) -> None:
    pytest.importorskip("great_expectations")
    gx = pytest.importorskip("privacy_plugins.integrations.gx")
    frame = pd.DataFrame({"zip": ["1"] * 6 + ["2"] * 3 + ["3"], "disease": ["a", "b"] * 5})
    suite = gx.load_suite(
        {
            "name": "custom",
            "expectations": [
                {
                    "type": "expect_table_to_satisfy_privacy_model",
                    "kwargs": {"quasi_identifiers": ["zip"], "privacy_model": NAME,
                               "parameters": {"size": 3, "share": share}},
                }
                for share in (0.1, 0.05)
            ] + [
                {
                    "type": "expect_table_to_satisfy_privacy_model",
                    "kwargs": {"quasi_identifiers": ["zip"], "privacy_model": "distinct_l_diversity",
                               "parameters": {"sensitive_attribute": "disease", "l": 2}},
                }
            ],
        }
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        verdicts = gx.outcomes(gx.validate_dataframe(frame, suite))
    assert [(v.status, v.observed) for v in verdicts] == [("passed", 0.1), ("failed", 0.1), ("failed", 1.0)]
    assert verdicts[1].details["violations"]["classes"] == 1 and verdicts[1].details["violations"]["records"] == 1
    # On SQL the metric groups where the table lives; the custom model judges those classes the same way.
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'people.sqlite'}"
    engine = sa.create_engine(url)
    frame.to_sql("people", engine, index=False)
    engine.dispose()
    source = gx.ephemeral_context().data_sources.add_sqlite("sqlite", connection_string=url)
    batch = source.add_table_asset("people", table_name="people").add_batch_definition_whole_table("all").get_batch()
    sql_verdicts = gx.outcomes(batch.validate(suite))
    assert [(v.status, v.observed) for v in sql_verdicts] == [(v.status, v.observed) for v in verdicts]
    with pytest.raises(Exception, match="did you mean 'k_anonymity'"):
        gx.ExpectTableToSatisfyPrivacyModel(quasi_identifiers=["zip"], privacy_model="k_anonimity", parameters={"k": 2})


def test_a_dagster_policy_floor_on_a_listed_model_says_it_tightens_the_shorthands(tmp_path: Path) -> None:
    pytest.importorskip("dagster")
    from privacy_plugins.errors import ConfigurationError
    from privacy_plugins.integrations.dagster.policy import Policy

    spec = ReleaseSpec.from_dict(_spec(tmp_path, [{"k_anonymity": {"k": 5}}]))
    with pytest.raises(ConfigurationError, match="not a model in requirements' list"):
        Policy.for_spec(spec, {"min_k": 10})
