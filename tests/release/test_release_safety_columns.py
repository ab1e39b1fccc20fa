"""Issue 11.1: a repeated column name is an error, never a renamed column that escapes its role."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.cli import main
from privacy_plugins.core.io import read_table
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, load_step

QIS = ["age", "sex", "zip", "education", "marital_status"]


def census_with_ssn(rows: int = 600) -> pd.DataFrame:
    frame = pp.generate_census(rows, seed=0).drop(columns=["person_id"])
    frame.insert(0, "ssn", [f"{100_000_000 + i}" for i in range(rows)])
    return frame


def write_repeated_ssn_csv(path: Path, *, second: str = "ssn") -> Path:
    frame = census_with_ssn()
    frame[second] = frame["ssn"]  # the raw SSN again, under the same (or a padded) name
    text = frame.to_csv(sep=";", index=False)
    header, rest = text.split("\n", 1)
    names = header.split(";")
    names[-1] = second
    path.write_text(";".join(names) + "\n" + rest)
    return path


def spec_file(tmp_path: Path, source: dict[str, object]) -> Path:
    data = demo_spec_dict(tmp_path, source=source, identifiers=["ssn"])
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("second", ["ssn", " ssn "])
def test_release_refuses_a_csv_whose_identifier_column_repeats(
    tmp_path: Path, second: str, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_repeated_ssn_csv(tmp_path / "people.csv", second=second)
    code = main(["release", str(spec_file(tmp_path, {"path": str(csv)})), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "repeated column name" in err and "'ssn'" in err
    assert not (tmp_path / "release.duckdb").exists()
    assert not (tmp_path / "reports").exists()  # nothing written on bad input


def test_anonymize_cli_refuses_a_csv_whose_identifier_column_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_repeated_ssn_csv(tmp_path / "people.csv")
    hierarchies = tmp_path / "h"
    hierarchies.mkdir()
    frame = census_with_ssn()
    (hierarchies / "sex.csv").write_text("".join(f"{v};*\n" for v in sorted(frame["sex"].unique())))
    out = tmp_path / "out.csv"
    code = main(
        ["anonymize", str(csv), "--quasi-identifiers", "sex", "--identifiers", "ssn", "--hierarchies", str(hierarchies),
         "--k", "2", "--out", str(out), "--quiet"]
    )  # fmt: skip
    assert code == 2 and "'ssn'" in capsys.readouterr().err
    assert not out.exists()


def test_csv_rows_longer_than_the_header_are_an_error_not_an_index(tmp_path: Path) -> None:
    path = tmp_path / "shifted.csv"
    path.write_text("age,sex\n123456789,30,F\n987654321,40,M\n")
    with pytest.raises(ConfigurationError, match="cannot parse CSV"):
        read_table(path)


def test_sql_query_with_repeated_result_names_is_refused(tmp_path: Path) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'src.sqlite'}")
    census_with_ssn().to_sql("people", engine, index=False)
    engine.dispose()
    query = "SELECT ssn, age, sex, zip, education, marital_status, disease, income, ssn FROM people"
    spec = ReleaseSpec.from_dict(
        demo_spec_dict(tmp_path, source={"url": f"sqlite:///{tmp_path / 'src.sqlite'}", "query": query},
                       identifiers=["ssn"])
    )  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"repeated column name.*'ssn'"):
        load_step(spec)


def test_parquet_with_repeated_field_names_is_refused(tmp_path: Path) -> None:
    frame = census_with_ssn(50)
    arrays = [pa.array(frame[c].tolist()) for c in frame.columns] + [pa.array(frame["ssn"].tolist())]
    pq.write_table(pa.table(arrays, names=[*frame.columns, "ssn"]), tmp_path / "dup.parquet")
    with pytest.raises(ConfigurationError, match=r"repeated column name.*'ssn'"):
        read_table(tmp_path / "dup.parquet")


def test_parquet_index_columns_neither_vanish_nor_appear(tmp_path: Path) -> None:
    frame = census_with_ssn(50)
    frame.set_index("ssn").to_parquet(tmp_path / "named.parquet")  # a named index is data: it stays a column
    named = read_table(tmp_path / "named.parquet")
    assert "ssn" in named.columns and named["ssn"].tolist() == frame["ssn"].tolist()
    assert list(named.index) == list(range(50))
    spec = ReleaseSpec.from_dict(
        demo_spec_dict(tmp_path, source={"path": str(tmp_path / "named.parquet")}, identifiers=["ssn"])
    )
    loaded = load_step(spec)
    assert loaded.dropped_identifiers == ["ssn"] and "ssn" not in loaded.columns
    frame.set_index(pd.Index([f"r{i}" for i in range(50)])).to_parquet(tmp_path / "unnamed.parquet")
    with pytest.raises(ConfigurationError, match="__index_level_0__"):
        read_table(tmp_path / "unnamed.parquet")
    frame.to_parquet(tmp_path / "plain.parquet")  # a default RangeIndex stores no column
    assert list(read_table(tmp_path / "plain.parquet").columns) == list(frame.columns)
