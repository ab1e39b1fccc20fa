"""The ``privacy-plugins measure`` contract that other tools rely on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.cli import main


@pytest.fixture
def census_csv(tmp_path: Path) -> Path:
    path = tmp_path / "census.csv"
    pp.generate_census(400, seed=3).to_csv(path, sep=";", index=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract_keys(census_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "measure", str(census_csv), "--quasi-identifiers", "age,sex,zip", "--sensitive-attributes", "disease",
        "--identifiers", "person_id", "--k", "3", "--l", "2", "--t", "0.3", "--bound", "0.5", "--format", "json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    for key in ("rows", "classes", "k", "sample_uniques", "distinct_l", "frequency_l", "entropy_l",
                "t_closeness", "recursive_c", "suppression_needed", "max_leakage", "leakage_violations"):  # fmt: skip
        assert key in data, key
    frame = pp.read_table(census_csv)
    expected = pp.measure(
        frame, quasi_identifiers=["age", "sex", "zip"], sensitive_attributes=["disease"], k=3, l=2, t=0.3, bound=0.5
    ).to_dict()
    assert data["rows"] == 400
    for key in ("k", "classes", "sample_uniques", "suppression_needed", "distinct_l", "entropy_l", "max_leakage"):
        assert data[key] == expected[key]
    assert isinstance(data["suppression_needed"], int)


def test_frequency_and_entropy_l_are_not_floored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"q": ["a"] * 3, "s": ["x", "x", "y"]}).to_csv(path, index=False)
    code, out, _ = run(
        capsys, "measure", str(path), "--quasi-identifiers", "q", "--sensitive-attributes", "s", "--format", "json"
    )
    data = json.loads(out)
    assert code == 0
    assert data["frequency_l"] == pytest.approx(1.5)
    assert 1.0 < data["entropy_l"] < 2.0


def test_table_format_is_readable(census_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "measure",
        str(census_csv),
        "--quasi-identifiers",
        "age,sex",
        "--sensitive-attributes",
        "disease",
        "--k",
        "2",
    )
    assert code == 0
    assert "equivalence classes" in out and "distinct l" in out and "suppression for k=2" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["measure", "{missing}", "--quasi-identifiers", "age"], "not found"),
        (
            ["measure", "{csv}", "--quasi-identifiers", "age,zipp"],
            "quasi_identifiers not found in table: ['zipp'] (did you mean 'zip'?)",
        ),
        (
            ["diagnose", "{csv}", "--quasi-identifiers", "age,zipp"],
            "quasi_identifiers not found in table: ['zipp'] (did you mean 'zip'?)",
        ),
        (["measure", "{empty}", "--quasi-identifiers", "age"], "empty"),
        (["measure", "{csv}", "--quasi-identifiers", "age", "--k", "0"], "k must be"),
        (
            ["measure", "{csv}", "--quasi-identifiers", "age", "--sensitive-attributes", "disease", "--bound", "2"],
            "bound",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, census_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("age,zip\n")
    paths = {"missing": str(tmp_path / "nope.csv"), "csv": str(census_csv), "empty": str(empty)}
    code, out, err = run(capsys, *[a.format(**paths) for a in args])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err


def test_leading_zeros_survive_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "zips.csv"
    path.write_text("zip,age\n01234,30\n1234,30\n01234,31\n")
    code, out, _ = run(capsys, "measure", str(path), "--quasi-identifiers", "zip", "--format", "json")
    assert code == 0
    assert json.loads(out)["classes"] == 2  # '01234' and '1234' are different codes
    frame = pp.read_table(path)
    assert frame["zip"].tolist() == ["01234", "1234", "01234"]
    assert pd.api.types.is_numeric_dtype(frame["age"])


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiter_is_detected(sep: str, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"a b": ["x", "y"], "c": [1, 2]}).to_csv(path, sep=sep, index=False)
    assert list(pp.read_table(path).columns) == ["a b", "c"]


def test_parquet_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "census.parquet"
    pp.generate_census(200, seed=1).to_parquet(path)
    code, out, _ = run(capsys, "measure", str(path), "--quasi-identifiers", "sex,education", "--format", "json")
    assert code == 0
    assert json.loads(out)["rows"] == 200


@pytest.mark.parametrize("output_format", ["json", "table"])
def test_include_values_is_opt_in(output_format: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"zip": ["11111", "22222", "22222"], "s": ["x", "y", "z"]}).to_csv(path, index=False)
    argv = ["measure", str(path), "--quasi-identifiers", "zip", "--k", "2", "--format", output_format]
    code, out, err = run(capsys, *argv)
    assert code == 0 and "11111" not in out and err == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw Python warning line (file path, source line)
        code, out, err = run(capsys, *argv, "--include-values")
    assert code == 0 and "11111" in out
    assert err == "privacy-plugins: warning: --include-values prints the quasi-identifier values of violating classes\n"


def test_include_values_in_table_format_shows_every_kind_of_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.csv"
    frame = pd.DataFrame({"zip": ["11111", "22222", "22222", "33333", "33333"], "s": ["x", "y", "y", "y", "z"]})
    frame.to_csv(path, index=False)
    code, out, _ = run(capsys, "measure", str(path), "--quasi-identifiers", "zip", "--sensitive-attributes",
    "s", "--k", "2", "--l", "2",
                       "--t", "0.1", "--bound", "0.6", "--include-values")  # fmt: skip
    assert code == 0
    assert "e.g. zip=11111" in out  # k
    assert out.count("e.g. zip=22222") >= 2  # l (and t, leakage)


def test_console_script_runs(census_csv: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", "measure", str(census_csv), "--quasi-identifiers", "sex",
            "--format", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == 400


def test_demo_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo", "--rows", "300", "--out", str(tmp_path), "--format", "json")
    assert code == 0
    assert json.loads(out)["rows"] == 300
    assert (tmp_path / "census.csv").exists()


def test_spaces_after_delimiters_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "adult_like.csv"
    path.write_text("age, workclass, zip\n39, State-gov, 02139\n50, Self-emp, 02139\n")
    frame = pp.read_table(path)
    assert list(frame.columns) == ["age", "workclass", "zip"]
    assert frame["workclass"].tolist() == ["State-gov", "Self-emp"]
    assert frame["zip"].tolist() == ["02139", "02139"]
    assert pd.api.types.is_numeric_dtype(frame["age"])


@pytest.mark.parametrize("command", ["release", "published"])
def test_yaml_syntax_error_says_where(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: demo\nquasi_identifiers: [age, sex\n")
    code, out, err = run(capsys, command, str(spec))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "spec.yaml" in err
    assert "line 3, column 1: expected ',' or ']'" in err and "started at line 2, column 20" in err


def value_columns(out: str, labels: list[str]) -> set[int]:
    """The column where the value starts on each labelled line (one column when aligned)."""
    columns = set()
    for label in labels:
        (line,) = [line for line in out.splitlines() if line.startswith(f"  {label}")]
        rest = line[len(f"  {label}") :]
        columns.add(len(line) - len(rest.lstrip()))
    return columns


def test_measure_table_aligns_labels_and_rounds(census_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "measure", str(census_csv), "--quasi-identifiers", "age,sex",
    "--sensitive-attributes", "disease", "--k", "5",
                       "--suppression-limit", "0.05", "--l", "2", "--c", "3", "--t", "0.3", "--bound",
                       "0.5")  # fmt: skip
    assert code == 0
    main_labels = ["rows", "quasi-identifiers", "equivalence classes", "sample uniques", "max / mean risk",
                   "records at risk", "suppression for k=5", "k after suppressing ≤ 0.05"]  # fmt: skip
    assert len(value_columns(out, main_labels)) == 1
    sensitive_labels = ["distinct l", "frequency l", "entropy l", "t-closeness", "recursive c* (l=2)", "max leakage"]
    assert len(value_columns(out, sensitive_labels)) == 1


def test_diagnose_table_shows_small_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"q": ["a"] * 4_999 + ["b"], "s": ["x", "y"] * 2_500}).to_csv(path, index=False)
    code, out, _ = run(
        capsys, "diagnose", str(path), "--quasi-identifiers", "q", "--sensitive-attributes", "s", "--k", "2"
    )
    assert code == 0
    assert "<0.1% of records at risk" in out and "1 rows (<0.1%)" in out
    assert not re.search(r"(?<![\d.])0\.0%", out)  # no share shown as 0.0% (100.0% is a share too)
    assert len(value_columns(out, ["rows", "candidates (d=1)", "mode", "k, all candidates", "suppress for k=2"])) == 1
