"""Fetched SQL rows become the same frame whatever the columns are called — ``dtype`` included.

pandas 3.1 asks each non-tuple row for a ``dtype`` attribute; a SQLAlchemy ``Row`` answers with
its column of that name, so a ``dtype`` column holding one value broke every frame built from rows
(the aggregates of a release in the database, the rows of a SQL source read into memory).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest
import sqlalchemy as sa
from engine_checks import engine_table, multiset

from privacy_plugins.cli import main
from privacy_plugins.core.demo import generate_census
from privacy_plugins.engines import COUNT_COLUMN
from tests.release.release_fixtures import people_query_spec

KINDS = ["sqlite", "duckdb", "postgresql"]


def _people(rows: int = 200) -> pd.DataFrame:
    return generate_census(rows, seed=2).assign(dtype="int64")  # one value: every row "has" dtype 'int64'


@pytest.mark.parametrize("kind", KINDS)
def test_group_counts_and_rows_with_a_column_named_dtype(kind: str, tmp_path: Path, request) -> None:
    frame = _people()
    table = engine_table(kind, frame, tmp_path, request)
    counts = table.group_counts(["dtype", "sex"])
    expected = frame.groupby(["dtype", "sex"]).size().reset_index(name=COUNT_COLUMN)
    assert multiset(counts).equals(multiset(expected))
    assert counts[COUNT_COLUMN].dtype == "int64"
    assert multiset(table.to_pandas()).equals(multiset(frame))
    assert sum(len(batch) for batch in table.batches(64)) == len(frame)


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])  # in the database / the rows read into memory
def test_a_release_from_a_sql_table_with_a_column_named_dtype(
    algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.duckdb"
    engine = sa.create_engine(f"duckdb:///{source}")
    _people().to_sql("people", engine, index=False)
    engine.dispose()
    path = people_query_spec(
        tmp_path, {"duckdb": str(source), "query": "SELECT * FROM people"}, algorithm, more_insensitive=("dtype",)
    )
    assert main(["release", str(path), "--quiet"]) == 0, capsys.readouterr().err
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as connection:
        assert connection.execute("SELECT DISTINCT dtype FROM people_release").fetchall() == [("int64",)]
