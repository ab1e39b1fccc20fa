"""The issue-30 models as GX expectations: on pandas and pushed down to SQL (GROUP BY where the table lives)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

import sqlalchemy as sa

from privacy_plugins.integrations.gx import ephemeral_context, load_suite, outcomes, validate_dataframe

FRAME = pd.DataFrame({"zip": ["1"] * 6 + ["2"] * 3 + ["3", "4"], "sex": ["f"] * 11})
MODELS = [
    ("average_reidentification_risk", {"max": 0.3}),
    ("population_uniqueness", {"max": 0.05, "population": 0.1, "estimator": "zayatz"}),
    ("k_map", {"k": 20, "population": 0.25}),
]


def test_population_models_judge_pandas_and_sql_alike(tmp_path: Path) -> None:
    suite = load_suite(
        {
            "name": "population",
            "expectations": [
                {
                    "type": "expect_table_to_satisfy_privacy_model",
                    "kwargs": {"quasi_identifiers": ["zip", "sex"], "privacy_model": name, "parameters": parameters},
                }
                for name, parameters in MODELS
            ],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        verdicts = [(v.status, v.observed) for v in outcomes(validate_dataframe(FRAME, suite))]
    # J/n = 4/11; Zayatz with f = 0.1 from the histogram {1: 2, 3: 1, 6: 1}; k' = 4 (Poisson, λ = 5): smallest 1 / 0.25
    assert verdicts[0] == ("failed", pytest.approx(4 / 11))
    assert verdicts[1][0] == "passed" and 0 < verdicts[1][1] < 0.05
    assert verdicts[2] == ("failed", pytest.approx(4.0))
    url = f"sqlite:///{tmp_path / 'people.sqlite'}"
    engine = sa.create_engine(url)
    FRAME.to_sql("people", engine, index=False)
    engine.dispose()
    source = ephemeral_context().data_sources.add_sqlite("sqlite", connection_string=url)
    batch = source.add_table_asset("people", table_name="people").add_batch_definition_whole_table("all").get_batch()
    assert [(v.status, v.observed) for v in outcomes(batch.validate(suite))] == verdicts


# The population of FRAME's people: zip 3 maps to 4 people only; zip 5 was not sampled.
CENSUS = pd.DataFrame({"zip": ["1", "2", "3", "4", "5"], "sex": ["f"] * 5, "count": [30, 12, 4, 25, 1]})


def sql_batch_with_census(tmp_path: Path, engine_name: str, census: pd.DataFrame) -> object:
    """FRAME as table ``people`` and ``census`` in one SQLite or DuckDB database; a GX batch of ``people``."""
    suffix = "sqlite" if engine_name == "sqlite" else "duckdb"
    url = f"{engine_name}:///{tmp_path / f'people.{suffix}'}"
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        FRAME.to_sql("people", connection, index=False)
        census.to_sql("census", connection, index=False)
    engine.dispose()
    context = ephemeral_context()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="You are using a generic SQLDatasource")
        source = (
            context.data_sources.add_sqlite("db", connection_string=url)
            if engine_name == "sqlite"
            else context.data_sources.add_sql("db", connection_string=url)
        )
    return source.add_table_asset("people", table_name="people").add_batch_definition_whole_table("all").get_batch()


def k_map_suite(population: str) -> object:
    """Exact 10-map on both columns (zip and sex are the quasi-identifiers: FRAME has no other column)."""
    return load_suite(
        {
            "name": "k_map",
            "expectations": [
                {
                    "type": "expect_table_to_satisfy_privacy_model",
                    "kwargs": {
                        "quasi_identifiers": ["zip", "sex"],
                        "privacy_model": "k_map",
                        "parameters": {"k": 10, "population": population},
                    },
                }
            ],
        }
    )


def verdict(batch_or_frame: object, suite: object) -> tuple[str, object, dict[str, object]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        results = validate_dataframe(batch_or_frame, suite) if isinstance(batch_or_frame, pd.DataFrame) else None
        results = results if results is not None else batch_or_frame.validate(suite)  # type: ignore[attr-defined]
    (checked,) = outcomes(results)
    details = {key: checked.details.get(key) for key in ("records", "classes", "class_size_histogram", "violations")}
    return checked.status, checked.observed, details


@pytest.mark.parametrize("engine_name", ["sqlite", "duckdb"])
def test_exact_k_map_joins_the_population_table_in_the_database(
    tmp_path: Path, engine_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A population table of the batch's database is joined there: the pandas verdict, no class value in Python."""
    CENSUS.to_csv(tmp_path / "census.csv", index=False)
    expected = verdict(FRAME, k_map_suite(str(tmp_path / "census.csv")))
    assert expected[:2] == ("failed", 4.0)
    assert expected[2]["violations"]["classes"] == 1 and expected[2]["violations"]["records"] == 1
    batch = sql_batch_with_census(tmp_path, engine_name, CENSUS)

    def no_values(*args: object, **kwargs: object) -> None:
        raise AssertionError("the classes (with their values) were read into Python")

    monkeypatch.setattr("privacy_plugins.engines.classes_from_sql", no_values)
    got = verdict(batch, k_map_suite("census"))
    expected[2]["violations"]["target"] = got[2]["violations"]["target"]  # the model names its table as given
    assert got == expected


def test_a_population_table_missing_a_sampled_combination_is_an_error_naming_it(tmp_path: Path) -> None:
    batch = sql_batch_with_census(tmp_path, "duckdb", CENSUS[CENSUS["zip"] != "4"])
    status, _, _ = verdict(batch, k_map_suite("census"))
    assert status == "error"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (checked,) = outcomes(batch.validate(k_map_suite("census")))  # type: ignore[attr-defined]
    assert "population_table lacks 1 quasi-identifier combination" in checked.message
    status, _, _ = verdict(batch, k_map_suite("no_such_table"))
    assert status == "error"


def batch_with_schema_census(url: str, schema: str) -> object:
    """FRAME as ``people`` (default schema) and CENSUS as ``census_counts`` in ``schema``; a GX batch of ``people``."""
    quoted = '"' + schema.replace('"', '""') + '"'
    if url.startswith("duckdb"):  # (duckdb_engine cannot name a schema holding a dot: DuckDB itself)
        import duckdb

        with duckdb.connect(url.removeprefix("duckdb:///")) as connection:
            connection.register("frame", FRAME)
            connection.register("counts", CENSUS)
            connection.execute("CREATE TABLE people AS SELECT * FROM frame")
            connection.execute(f"CREATE SCHEMA {quoted}")
            connection.execute(f"CREATE TABLE {quoted}.census_counts AS SELECT * FROM counts")
    else:
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            FRAME.to_sql("people", connection, index=False)
            connection.execute(sa.text(f"CREATE SCHEMA {quoted}"))
            CENSUS.to_sql("census_counts", connection, index=False, schema=schema)
        engine.dispose()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="You are using a generic SQLDatasource")
        source = ephemeral_context().data_sources.add_sql("db", connection_string=url)
    return source.add_table_asset("people", table_name="people").add_batch_definition_whole_table("all").get_batch()


@pytest.mark.parametrize("engine_name", ["duckdb", "postgresql"])
def test_a_schema_qualified_population_table_is_joined_in_the_database(
    tmp_path: Path, engine_name: str, request: pytest.FixtureRequest
) -> None:
    """``myschema.census_counts``: each part quoted on its own (not one identifier with a dot)."""
    CENSUS.to_csv(tmp_path / "census.csv", index=False)
    expected = verdict(FRAME, k_map_suite(str(tmp_path / "census.csv")))
    url = (
        str(request.getfixturevalue("postgres_url"))
        if engine_name == "postgresql"
        else f"duckdb:///{tmp_path / 'people.duckdb'}"
    )
    batch = batch_with_schema_census(url, "myschema")
    got = verdict(batch, k_map_suite("myschema.census_counts"))
    expected[2]["violations"]["target"] = got[2]["violations"]["target"]
    assert got == expected and got[:2] == ("failed", 4.0)
    # a name with a dot inside quotes is one part; three parts or an open quote are one clear line
    for name, message in (
        ("a.b.c", "population table 'a.b.c' must be 'table' or 'schema.table'"),
        ('"myschema.census_counts', "has an unclosed double quote"),
        ("nope.census_counts", "is not a table of the batch's database"),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            (checked,) = outcomes(batch.validate(k_map_suite(name)))  # type: ignore[attr-defined]
        assert checked.status == "error" and message in checked.message and "\n" not in checked.message.strip()


@pytest.mark.parametrize("engine_name", ["duckdb", "postgresql"])
def test_a_quoted_schema_holding_a_dot_names_one_schema(
    tmp_path: Path, engine_name: str, request: pytest.FixtureRequest
) -> None:
    url = (
        str(request.getfixturevalue("postgres_url"))
        if engine_name == "postgresql"
        else f"duckdb:///{tmp_path / 'people.duckdb'}"
    )
    batch = batch_with_schema_census(url, "My.Schema")
    CENSUS.to_csv(tmp_path / "census.csv", index=False)
    expected = verdict(FRAME, k_map_suite(str(tmp_path / "census.csv")))
    got = verdict(batch, k_map_suite('"My.Schema".census_counts'))
    expected[2]["violations"]["target"] = got[2]["violations"]["target"]
    assert got == expected
