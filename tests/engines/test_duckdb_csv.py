"""A CSV read by DuckDB (out of core) equals ``read_table``: same columns, types, missing values and rows.

Then the same release: same node, NCP, suppressed count and published multiset on
the Adult sample read both ways.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from engine_checks import ADULT, assert_same_release, multiset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.io import read_table
from privacy_plugins.engines.duckdb_csv import open_csv_in_duckdb
from privacy_plugins.errors import ConfigurationError

CELLS = st.one_of(
    st.sampled_from(
        ["", "NA", "null", "None", "n/a", "007", "0", "-3", "2.50", "1e3", "x y", "a,b", "a;b", "NULL ", "\tt"]
    ),
    st.integers(-1000, 10**12).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.3f}"),
    st.text(alphabet="abcXYZ-_.é ", min_size=1, max_size=6).filter(lambda v: not v.startswith(" ")),
)


def same_frames(duck: pd.DataFrame, pandas: pd.DataFrame) -> None:
    assert list(duck.columns) == list(pandas.columns)
    for column in pandas.columns:
        numeric = pd.api.types.is_numeric_dtype(pandas[column])
        assert pd.api.types.is_numeric_dtype(duck[column]) == numeric, column
        if numeric:
            assert duck[column].dtype == pandas[column].dtype, column
    assert multiset(duck).equals(multiset(pandas))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.lists(CELLS, min_size=3, max_size=3), min_size=1, max_size=25),
    spaces=st.booleans(),
    sep=st.sampled_from([",", ";", "\t"]),
)
def test_random_csv_reads_as_read_table_reads_it_or_is_refused(rows, spaces: bool, sep: str, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("csv") / "table.csv"
    quoted_space = False
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=sep)
        writer.writerow(["age", " zip", "disease"])
        for row in rows:
            cells = [(" " + cell) if spaces and cell else cell for cell in row]
            quoted_space |= any(c.startswith(" ") and (sep in c or '"' in c) for c in cells)  # csv.writer quotes it
            writer.writerow(cells)
    if quoted_space:  # pandas keeps the space inside the quotes; DuckDB would not: refused, not read differently
        with pytest.raises(ConfigurationError, match="quoted values that start with a space"):
            open_csv_in_duckdb(path, sep=sep)
        return
    same_frames(open_csv_in_duckdb(path, sep=sep).to_pandas(), read_table(path, sep=sep))


def test_adult_csv_through_duckdb_is_the_same_release(adult_sample) -> None:
    frame, problem = adult_sample
    path = ADULT / "adult_subset.csv"
    table = open_csv_in_duckdb(path)
    same_frames(table.to_pandas(), read_table(path))
    assert_same_release(table, frame, method="join", **problem)


def test_short_rows_are_padded_and_long_rows_and_repeated_names_are_errors(tmp_path: Path) -> None:
    short = tmp_path / "short.csv"
    short.write_text("a,b\n1\n2,x\n")
    same_frames(open_csv_in_duckdb(short).to_pandas(), read_table(short))
    long = tmp_path / "long.csv"
    long.write_text("a,b\n1,2,3\n")
    with pytest.raises(ConfigurationError, match=r"cannot parse CSV table .*long\.csv"):
        open_csv_in_duckdb(long)
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("ssn,age, ssn\n1,2,3\n")
    with pytest.raises(ConfigurationError, match=r"repeated column name\(s\) \['ssn'\]"):
        open_csv_in_duckdb(repeated)


def test_integers_beyond_int64_are_refused_with_the_way_out(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("id,age\n1234567890123456789012,30\n")
    with pytest.raises(ConfigurationError, match=r"column 'id' .*source\.out_of_core_bytes"):
        open_csv_in_duckdb(path)


def test_a_quoted_value_starting_with_a_space_is_refused_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('a,b\n" a,b",1\n')
    assert read_table(path)["a"].tolist() == [" a,b"]
    with pytest.raises(ConfigurationError, match=r"quoted\.csv.*quoted values that start with a space"):
        open_csv_in_duckdb(path)
