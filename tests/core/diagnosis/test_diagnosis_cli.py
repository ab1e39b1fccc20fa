"""``privacy-plugins diagnose``: the JSON contract, the HTML file, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.cli import EXIT_BAD_INPUT, main
from privacy_plugins.core.diagnosis import diagnose


@pytest.fixture
def census_csv(tmp_path: Path) -> Path:
    path = tmp_path / "census.csv"
    pp.generate_census(300, seed=5).to_csv(path, sep=";", index=False)
    return path


def test_json_contract(census_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_html = tmp_path / "d.json", tmp_path / "d.html"
    code = main(
        ["diagnose", str(census_csv), "--quasi-identifiers", "age,sex,zip", "--sensitive-attributes",
        "disease,occupation",
         "--k", "3", "--l", "2", "--l-variant", "entropy", "--suppression-limit", "0.1",
         "--json", str(out_json), "--html", str(out_html)]
    )  # fmt: skip
    assert code == 0
    data = json.loads(out_json.read_text())
    for key in ("subsets_evaluated", "subsets_total", "positive_border", "negative_border", "k_by_subset"):
        assert key in data, key
    assert data["subsets_total"] == 8
    assert len(data["k_by_subset"]) == 7
    assert {"attributes", "k", "suppression_needed"} <= set(data["k_by_subset"][0])
    assert all(isinstance(m, list) for m in data["positive_border"] + data["negative_border"])
    # one border per sensitive attribute
    assert [b["sensitive_attribute"] for b in data["model_borders"]] == ["disease", "occupation"]
    assert {b["model"] for b in data["model_borders"]} == {"entropy l-diversity"}
    expected = diagnose(
        pp.read_table(census_csv), quasi_identifiers=["age", "sex", "zip"], sensitive_attributes=["disease",
        "occupation"],
        k=3, l=2, l_variant="entropy", suppression_limit=0.1, direct_identifiers=True,
    ).to_dict()  # fmt: skip
    assert data == json.loads(json.dumps(expected))
    assert out_html.read_text().startswith("<!DOCTYPE html>")
    printed = capsys.readouterr().out
    assert "3-anonymity" in printed and "Bd+" in printed
    assert "entropy-2-diversity for 'occupation'" in printed and "entropy-2-diversity for 'disease'" in printed


def test_levelwise_json_on_stdout(census_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["diagnose", str(census_csv), "--quasi-identifiers", "age,sex,zip", "--max-exhaustive", "2", "--format", "json"]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "levelwise"
    assert data["k_by_subset"] is None
    assert data["subsets_evaluated"] <= data["subsets_total"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--quasi-identifiers", "age,nope"],
        ["--quasi-identifiers", "age", "--k", "0"],
        ["--quasi-identifiers", "age", "--l", "2"],
        ["--quasi-identifiers", "age", "--c", "2"],
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    census_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    out_json = tmp_path / "never.json"
    assert main(["diagnose", str(census_csv), *extra, "--json", str(out_json)]) == EXIT_BAD_INPUT
    assert "privacy-plugins: error:" in capsys.readouterr().err
    assert not out_json.exists()


def test_missing_file_exits_2(tmp_path: Path) -> None:
    assert main(["diagnose", str(tmp_path / "absent.csv"), "--quasi-identifiers", "a"]) == EXIT_BAD_INPUT


def test_tiny_table_uses_its_size_as_default_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 2, 3]}).to_csv(path, index=False)
    assert main(["diagnose", str(path), "--quasi-identifiers", "a,b", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["target_k"] == 3
