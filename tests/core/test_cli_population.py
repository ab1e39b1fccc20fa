"""``measure --population-fraction/--population-size/--population-table`` (issue 30, item 4)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.cli import main

CONTRACT = ("sample_uniques", "prosecutor", "journalist", "marketer", "highest", "average",
            "pitman", "zayatz", "snb", "dankar")  # fmt: skip


def _table(tmp_path: Path) -> Path:
    frame = pd.DataFrame({"zip": ["a"] * 6 + ["b"] * 3 + ["c", "d"], "sex": ["f"] * 11})
    path = tmp_path / "sample.csv"
    frame.to_csv(path, index=False)
    return path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["measure", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_carries_population_risk_with_the_contract_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", "--population-fraction", "0.1")
    risk = data["population_risk"]
    for key in CONTRACT:
        assert key in risk
        assert risk[key] is None or 0.0 <= risk[key] <= 1.0
    assert risk["population_size"] == 110 and risk["sample_uniques"] == pytest.approx(2 / 11)
    assert risk["highest"] == 1.0 and risk["journalist"] == pytest.approx(0.1)
    assert risk["zayatz"] is not None and risk["dankar_model"] in ("pitman", "zayatz")
    assert "population_risk" not in _json(capsys, str(_table(tmp_path)), "--quasi-identifiers", "zip,sex")


def test_a_population_table_gives_exact_journalist_and_marketer_risk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    census = tmp_path / "census.csv"
    pd.DataFrame({"zip": ["a", "b", "c", "d", "e"], "sex": ["f"] * 5, "count": [60, 3, 1, 20, 1]}).to_csv(
        census, index=False
    )
    data = _json(capsys, str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", "--population-table", str(census))
    risk = data["population_risk"]
    assert risk["exact_population"] and risk["population_size"] == 85
    assert risk["journalist"] == 1.0  # zip c: one person in the population, in the sample
    assert risk["marketer"] == pytest.approx((6 / 60 + 3 / 3 + 1 / 1 + 1 / 20) / 11)
    assert risk["population_uniques"] == pytest.approx(2 / 85)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--population-fraction", "0"], "sampling_fraction must be in (0, 1], got 0.0"),
        (["--population-fraction", "1.5"], "sampling_fraction must be in (0, 1], got 1.5"),
        (["--population-size", "5"], "population_size 5 is smaller than the sample (11 records)"),
    ],
)
def test_bad_population_settings_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(["measure", str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and message in captured.err


def test_a_population_table_missing_or_short_combinations_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    census = tmp_path / "census.csv"
    pd.DataFrame({"zip": ["a", "b", "c"], "sex": ["f"] * 3, "count": [60, 2, 1]}).to_csv(census, index=False)
    assert (
        main(["measure", str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", "--population-table", str(census)])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.endswith("population_table lacks 1 quasi-identifier combination(s) present in the sample")
    pd.DataFrame({"zip": ["a", "b", "c", "d"], "sex": ["f"] * 4, "count": [60, 2, 1, 1]}).to_csv(census, index=False)
    assert (
        main(["measure", str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", "--population-table", str(census)])
        == 2
    )
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("population_table counts are smaller than the sample for 1 combination(s)")
    )


def test_the_table_output_shows_the_three_attackers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["measure", str(_table(tmp_path)), "--quasi-identifiers", "zip,sex", "--population-fraction", "0.5"]) == 0
    )
    out = capsys.readouterr().out
    assert "population risk" in out and "journalist highest / average" in out and "via " in out


def test_diagnose_shows_population_risk_beside_the_sample_risk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _table(tmp_path)
    assert (
        main(
            [
                "diagnose",
                str(path),
                "--quasi-identifiers",
                "zip,sex",
                "--population-fraction",
                "0.1",
                "--format",
                "json",
            ]
        )
        == 0
    )
    risk = json.loads(capsys.readouterr().out)["population_risk"]
    assert all(key in risk for key in CONTRACT) and risk["population_size"] == 110
    assert main(["diagnose", str(path), "--quasi-identifiers", "zip,sex", "--population-size", "200"]) == 0
    assert "population risk, all candidates" in capsys.readouterr().out


def test_population_weights_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "survey.csv"
    pd.DataFrame({"zip": ["a", "a", "b"], "w": [10, 30, 4]}).to_csv(path, index=False)
    risk = _json(capsys, str(path), "--quasi-identifiers", "zip", "--population-weights", "w")["population_risk"]
    assert risk["population_size"] == 44 and risk["journalist"] == pytest.approx(1 / 4)  # b: 1 record, 4 people
    assert risk["individual_risk"] == pytest.approx(0.25 / 0.75 * math.log(4))  # the unique: f = 1, F = 4
    assert main(["measure", str(path), "--quasi-identifiers", "zip", "--population-weights", "nope"]) == 2
    assert "population weight_column 'nope' is not in the table" in capsys.readouterr().err
