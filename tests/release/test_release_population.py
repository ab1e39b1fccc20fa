"""The release spec's ``population:`` block (issue 30): the population models and the diagnosis read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import yaml
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.cli import EXIT_BAD_INPUT, main
from privacy_plugins.errors import ConfigurationError, PopulationMismatchError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.population_spec import PopulationSpec

ROWS = 400
QIS = ["age", "sex", "zip", "education", "marital_status"]
LISTED = [{"k_anonymity": {"k": 2}}, {"population_uniqueness": {"max": 1.0}}, {"k_map": {"k": 3}}]


def spec_dict(tmp_path: Path, population: object, requirements: object = LISTED, **more: Any) -> dict[str, Any]:
    data = demo_spec_dict(tmp_path, rows=ROWS, requirements=requirements, **more)
    data["population"] = population
    return data


def census(rows: int = ROWS) -> pd.DataFrame:
    return pp.generate_census(rows, seed=0)


def census_counts(times: int = 10) -> pd.DataFrame:
    """People per QI combination: each sample combination ``times`` as often as in the sample."""
    counts = census().groupby(QIS, as_index=False).size().rename(columns={"size": "count"})
    return counts.assign(count=counts["count"] * times)


def test_models_without_a_population_take_the_blocks(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path, {"fraction": 0.1}), base_dir=tmp_path)
    k_map, uniqueness = spec.models()[1:]
    assert uniqueness.population == 0.1 and k_map.population == 0.1  # type: ignore[attr-defined]
    own = [*LISTED[:1], {"k_map": {"k": 3, "population": 0.5}}]
    assert ReleaseSpec.from_dict(spec_dict(tmp_path, {"size": 4000}, own)).models()[1].population == 0.5  # type: ignore[attr-defined]
    sized = ReleaseSpec.from_dict(spec_dict(tmp_path, {"size": 4000}, [*LISTED[:2]]))
    assert sized.models()[1].population == 4000  # type: ignore[attr-defined]
    # Python: the same block as a PopulationSpec
    assert ReleaseSpec.from_dict(spec_dict(tmp_path, None, LISTED[:1])).population is None
    assert spec.population == PopulationSpec(fraction=0.1)


def test_the_release_diagnosis_reports_risk_beyond_the_sample(tmp_path: Path) -> None:
    path = tmp_path / "census_counts.csv"
    census_counts().to_csv(path, index=False)
    listed = [*LISTED[:1], {"population_uniqueness": {"max": 1.0, "population": 0.1}}, LISTED[2]]
    exact = ReleaseSpec.from_dict(spec_dict(tmp_path, {"table": "census_counts.csv"}, listed), base_dir=tmp_path)
    assert exact.models()[2].exact  # type: ignore[attr-defined]  # k_map: the block's table, exact
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path, {"table": "census_counts.csv"}, listed[:1]), base_dir=tmp_path)
    result = run_release(spec)
    assert result.passed, result.failure
    report = json.loads(spec.report.diagnosis_json.read_text())
    population = report["population"]
    assert population["candidates"]["exact_population"] is True
    # exact: every class maps to 10 × its sample count, so the journalist's highest risk is 1/(10 × smallest class)
    smallest = int(census().groupby(QIS).size().min())
    assert population["candidates"]["journalist"] == pytest.approx(1 / (10 * smallest))
    assert len(population["by_subset"]) == 2 ** len(QIS) - 1
    assert "Risk beyond the sample" in spec.report.diagnosis_html.read_text()


def test_a_population_table_of_the_source_database(tmp_path: Path) -> None:
    database = tmp_path / "source.duckdb"
    connection = duckdb.connect(str(database))
    connection.register("people", census())
    connection.register("counts", census_counts(times=3))
    connection.execute("CREATE TABLE census AS SELECT * FROM people")
    connection.execute("CREATE TABLE census_counts AS SELECT * FROM counts")
    connection.close()
    source = {"duckdb": str(database), "table": "census"}
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path, {"table": "census_counts"}, LISTED[:1], source=source))
    assert run_release(spec).passed
    candidates = json.loads(spec.report.diagnosis_json.read_text())["population"]["candidates"]
    assert candidates["exact_population"] and candidates["population_size"] == 3 * ROWS
    # a table name needs a database source to live in
    with pytest.raises(ConfigurationError, match="population.table 'census_counts' is not a file"):
        ReleaseSpec.from_dict(spec_dict(tmp_path, {"table": "census_counts"}, LISTED[:1]))


def test_a_weights_column_gets_a_role_and_weights_the_diagnosis(tmp_path: Path) -> None:
    frame = census().assign(weight=25.0)
    frame.to_csv(tmp_path / "sample.csv", index=False)
    spec = ReleaseSpec.from_dict(
        spec_dict(tmp_path, {"weights": "weight"}, LISTED[:1], source={"path": "sample.csv"}), base_dir=tmp_path
    )
    assert run_release(spec).passed  # no "column(s) ['weight'] have no role"
    candidates = json.loads(spec.report.diagnosis_json.read_text())["population"]["candidates"]
    assert candidates["population_size"] == 25 * ROWS
    published = read_published(spec.destination)
    assert published is not None and "weight" in published.columns  # published unchanged (documented)
    with pytest.raises(ConfigurationError, match="population.weights 'weight' already has another role"):
        ReleaseSpec.from_dict(
            spec_dict(
                tmp_path, {"weights": "weight"}, LISTED[:1], source={"path": "sample.csv"}, identifiers=["weight"]
            ),
            base_dir=tmp_path,
        )


@pytest.mark.parametrize(
    ("population", "requirements", "message"),
    [
        ({"fraction": 1.5}, LISTED, "population.fraction must be"),
        ({"fraction": 0}, LISTED, "population.fraction must be"),
        ({"fractoin": 0.1}, LISTED, "unknown key 'fractoin' in population"),
        ({"fraction": 0.1, "size": 10}, LISTED, "population needs exactly one of fraction, size, table or weights"),
        ({"table": "missing.csv"}, LISTED, "population.table: file not found"),
        (None, [LISTED[0], LISTED[2]], "k_map needs a population"),
        ({"weights": "w"}, LISTED[:2], "population_uniqueness needs a sampling fraction or a population size"),
        ({"size": 5000}, LISTED, "k_map cannot use population.size"),
        ({"weights": "nope"}, LISTED[:1], "population.weights 'nope' not found in table"),
        ({"size": 10}, LISTED[:1], "population.size: population_size 10 is smaller than the sample (400 records)"),
    ],
)
def test_bad_population_blocks_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], population: object, requirements: object, message: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec_dict(tmp_path, population, requirements)))
    assert main(["release", "--quiet", str(path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert read_published(ReleaseSpec.from_dict(spec_dict(tmp_path, {"fraction": 0.1})).destination) is None


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        (lambda c: c.iloc[1:], "population.table: population_table lacks 1 quasi-identifier combination"),
        (
            lambda c: c.assign(count=c["count"].where(c.index != 0, 0)),
            "population.table: population_table counts are smaller than the sample for 1 combination",
        ),
    ],
)
def test_a_population_table_that_does_not_cover_the_sample_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], counts: Any, message: str
) -> None:
    counts(census_counts()).to_csv(tmp_path / "counts.csv", index=False)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec_dict(tmp_path, {"table": "counts.csv"}, LISTED[:1])))
    assert main(["release", "--quiet", str(path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert read_published(ReleaseSpec.from_yaml(path).destination) is None


def jittered_counts() -> pd.DataFrame:
    """People per sample combination: 1 to 4 times its records (so exact k-map is not a k-anonymity)."""
    counts = census_counts(times=1)
    return counts.assign(count=counts["count"] * (1 + pd.util.hash_pandas_object(counts[QIS], index=False) % 4))


def test_exact_k_map_releases_the_same_rows_in_memory_and_in_duckdb(tmp_path: Path) -> None:
    """Issue 30: exact k-map inside the full-domain search, released from DuckDB's snapshot.

    The population block names a schema-qualified table of the DuckDB source (each part quoted;
    pulled summed, once); the published rows equal the core's in-memory anonymization of the same
    records with the same counts (a file there) and the same hierarchies.
    """
    from privacy_plugins.core.anonymize import anonymize
    from privacy_plugins.core.models import KMap

    database = tmp_path / "source.duckdb"
    connection = duckdb.connect(str(database))
    connection.register("people", census())
    connection.register("counts", jittered_counts())
    connection.execute("CREATE TABLE census AS SELECT * FROM people")
    connection.execute("CREATE SCHEMA pop")
    connection.execute("CREATE TABLE pop.census_counts AS SELECT * FROM counts")
    connection.close()
    source = {"duckdb": str(database), "table": "census"}
    spec = ReleaseSpec.from_dict(
        spec_dict(tmp_path, {"table": "pop.census_counts"}, [{"k_map": {"k": 9}}], source=source)
    )
    result = run_release(spec)
    assert result.passed, result.failure
    assert result.check is not None and result.candidate is not None
    (k_map,) = (c for c in result.check.checks if c.name == "k_map")
    assert k_map.passed and k_map.observed is not None and k_map.observed >= 9
    published = read_published(spec.destination)
    assert published is not None and 0 < len(published) <= ROWS
    jittered_counts().to_csv(tmp_path / "counts.csv", index=False)
    frame = census()
    memory = anonymize(
        frame,
        quasi_identifiers=QIS,
        hierarchies=spec.build_hierarchies(frame),
        models=[KMap(9, population=str(tmp_path / "counts.csv"))],
        suppression_limit=spec.requirements.suppression_limit,
        unlisted_columns="drop",
    )
    assert memory.passed and dict(memory.details.levels) == result.candidate.levels  # type: ignore[attr-defined]
    assert any(result.candidate.levels.values())  # k-map generalized something
    rows = [
        published[QIS].astype(str).sort_values(QIS).reset_index(drop=True) for published in (published, memory.table)
    ]
    assert rows[0].equals(rows[1])


def test_exact_k_map_with_a_population_value_its_hierarchy_cannot_build_is_one_line(tmp_path: Path) -> None:
    """The release builds the QIs' hierarchies from the population's values (to re-measure published labels)."""
    counts = census_counts()
    counts = pd.concat([counts, counts.iloc[:1].assign(age="ninety")], ignore_index=True)  # age: interval builder
    counts.to_csv(tmp_path / "counts.csv", index=False)
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path, {"table": "counts.csv"}, [{"k_map": {"k": 3}}]), base_dir=tmp_path)
    (model,) = spec.models()  # naming the checks (Dagster definitions) reads no data: bound on first use
    with pytest.raises(
        PopulationMismatchError, match=r"^population.table: column 'age' holds values its hierarchy"
    ) as raised:
        model.population_table()
    assert "ninety" not in str(raised.value)
