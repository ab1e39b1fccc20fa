"""A ``source.query`` the database rejects: exit 2, one line naming ``source.query`` and the database's message.

In the database (a full-domain algorithm: the step-wise pushdown) and in memory
(Mondrian reads the rows), on DuckDB, SQLite and PostgreSQL. A second statement
(``SELECT …; DROP TABLE people``) is refused when the spec is loaded, so it never
reaches the database: the table is still there afterwards, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from release_fixtures import people_query_spec

from privacy_plugins.cli import main
from privacy_plugins.core.demo import generate_census

QUERIES = {
    "second statement": ("SELECT * FROM people; DROP TABLE people", "must be one SELECT statement"),
    "syntax error": ("SELECT * FROMM people", "syntax error"),
    "unknown table": ("SELECT * FROM nosuch", "nosuch"),
}
ALGORITHMS = {"in the database": "optimal", "in memory": "mondrian"}


def _people(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        generate_census(200, seed=2).to_sql("people", connection, index=False)
    engine.dispose()


def _rows(url: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text("SELECT COUNT(*) FROM people")).scalar_one())
    finally:
        engine.dispose()


def _check_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, source: dict[str, Any], mode: str, case: str
) -> None:
    query, expected = QUERIES[case]
    code = main(["release", str(people_query_spec(tmp_path, {**source, "query": query}, ALGORITHMS[mode])), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "source.query" in err and expected in err and "Traceback" not in err
    assert _rows(url) == 200  # the second statement never ran
    assert not (tmp_path / "reports").exists() and not (tmp_path / "out.duckdb").exists()
    assert not any((tmp_path / "work").glob("**/*.parquet"))


@pytest.mark.parametrize("mode", ALGORITHMS)
@pytest.mark.parametrize("case", QUERIES)
def test_duckdb(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, case: str) -> None:
    url = f"duckdb:///{tmp_path / 'source.duckdb'}"
    _people(url)
    _check_refused(tmp_path, capsys, url, {"duckdb": str(tmp_path / "source.duckdb")}, mode, case)


@pytest.mark.parametrize("mode", ALGORITHMS)
@pytest.mark.parametrize("case", QUERIES)
def test_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, case: str) -> None:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    _people(url)
    _check_refused(tmp_path, capsys, url, {"url": url}, mode, case)


@pytest.mark.parametrize("mode", ALGORITHMS)
@pytest.mark.parametrize("case", QUERIES)
def test_postgresql(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_url: str, mode: str, case: str
) -> None:
    _people(postgres_url)
    _check_refused(tmp_path, capsys, postgres_url, {"url": postgres_url}, mode, case)


def test_a_trailing_semicolon_and_a_semicolon_in_a_literal_are_one_statement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    _people(url)
    query = "SELECT * FROM people WHERE disease <> 'a;b' -- every row\n;"
    assert main(["release", str(people_query_spec(tmp_path, {"url": url, "query": query}, "optimal")), "--quiet"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 1; SELECT 2",
        "SELECT 'it''s' AS x; DROP TABLE people",
        "-- it's\nSELECT 'a'; DROP TABLE people; --'",
        "SELECT 1 /* ; */",
        "SELECT 'unterminated; DROP TABLE people",
    ],
)
def test_every_second_statement_is_refused_on_load(query: str) -> None:
    from privacy_plugins.errors import ConfigurationError
    from privacy_plugins.release.spec import SourceSpec

    with pytest.raises(ConfigurationError, match=r"^source.query must be one SELECT statement"):
        SourceSpec(url="sqlite:///x.db", query=query)


@pytest.mark.parametrize("mode", ALGORITHMS)
def test_a_value_the_database_quotes_in_its_message_is_hidden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    url = f"duckdb:///{tmp_path / 'source.duckdb'}"
    _people(url)
    query = "SELECT CAST(sex AS INTEGER) AS sex_code, * FROM people"  # fails on the first 'Female'/'Male' cell
    spec = people_query_spec(tmp_path, {"duckdb": str(tmp_path / "source.duckdb"), "query": query}, ALGORITHMS[mode])
    data = yaml.safe_load(spec.read_text())
    data["insensitive"].append("sex_code")  # every column has a role: the query's own column too
    spec.write_text(yaml.safe_dump(data))
    code = main(["release", str(spec), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "Conversion Error" in err and "'…'" in err and "Male" not in err
    # In memory every cell is read at load; in the database a column no step groups by is only
    # computed when the rows are staged, after the diagnosis (the error is still one line, exit 2).
    assert mode != "in memory" or not (tmp_path / "reports").exists()
