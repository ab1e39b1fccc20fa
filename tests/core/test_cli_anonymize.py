"""``privacy-plugins anonymize``: the report contract, atomic output, nothing written on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.cli import main


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    frame = pd.DataFrame(
        {
            "name": [f"p{i}" for i in range(12)],
            "age": [21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36],
            "zip": ["47906", "47907", "47906", "47907", "47906", "47907"] * 2,
            "disease": ["flu", "hiv", "cancer", "flu", "hiv", "cancer"] * 2,
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    hierarchies = tmp_path / "hierarchies"
    hierarchies.mkdir()
    (hierarchies / "age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in frame["age"]))
    (hierarchies / "people_hierarchy_zip.csv").write_text("47906;4790*;*\n47907;4790*;*\n")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_contract_and_output(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "out" / "released.csv"
    code, stdout, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--qi", "age,zip", "--sensitive", "disease",
        "--identifiers", "name", "--hierarchies", str(workspace / "hierarchies"), "--k", "3", "--l", "2",
        "--out", str(out), "--report", str(workspace / "report.json"), "--format", "json",
    )  # fmt: skip
    assert code == 0
    report = json.loads(stdout)
    for key in ("algorithm", "suppressed", "rows_in", "rows_out", "ncp", "discernibility", "seconds", "k", "l"):
        assert key in report, key
    for key in ("levels", "nodes_checked", "lattice_size"):
        assert key in report["details"], key
    assert report == json.loads((workspace / "report.json").read_text()) | {"seconds": report["seconds"]}
    assert report["rows_in"] == report["rows_out"] + report["suppressed"] == 12
    assert report["details"]["heights"] == {"age": 2, "zip": 2}
    released = pp.read_table(out)
    assert "name" not in released.columns
    assert pp.k_anonymity(released, quasi_identifiers=["age", "zip"]) == report["k"] >= 3
    assert pp.l_diversity(released, quasi_identifiers=["age", "zip"], sensitive_attribute="disease") >= 2
    assert [p.name for p in out.parent.iterdir()] == ["released.csv"]  # no temporary file left


def test_parquet_output(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "released.parquet"
    code, _, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--qi", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(out), "--algorithm", "samarati",
    )  # fmt: skip
    assert code == 0
    assert len(pd.read_parquet(out)) == 12


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--k", "13"], 2, "larger than the table"),
        (["--k", "2", "--suppression", "1.5"], 2, "suppression_limit"),
        (["--l", "2"], 2, "need --sensitive"),
        ([], 2, "at least one requirement"),
        (["--sensitive", "disease", "--l", "4"], 1, "cannot be met"),
        (["--sensitive", "disease", "--l", "2", "--l-variant", "recursive"], 2, "needs --c"),
    ],
)
def test_failures_write_nothing(
    workspace: Path, capsys: pytest.CaptureFixture[str], extra: list[str], code: int, message: str
) -> None:
    out = workspace / "released.csv"
    result, stdout, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--qi", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--out", str(out), *extra,
    )  # fmt: skip
    assert result == code
    assert message in stderr and stdout == ""
    assert not out.exists()


def test_missing_hierarchy_is_named(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "hierarchies" / "age.csv").unlink()
    code, _, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--qi", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(workspace / "x.csv"),
    )  # fmt: skip
    assert code == 2 and "no hierarchy for ['age']" in stderr
