"""Issue 31: ``privacy-plugins attack`` — the JSON shape, no values, bad input exits 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.cli import main


def _write(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)

    def draw(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 90, n),
                "zip": rng.choice([f"z{i:03d}" for i in range(80)], n),
                "sex": rng.choice(["female", "male"], n),
                "disease": rng.choice(["influenza", "asthma", "ulcer"], n),
            }
        )

    paths = {}
    original = draw(120)
    for name, frame in (("original", original), ("control", draw(120)), ("release", original)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _args(paths: dict[str, Path], *extra: str) -> list[str]:
    return [
        "attack",
        str(paths["release"]),
        "--original",
        str(paths["original"]),
        "--control",
        str(paths["control"]),
        "--quasi-identifiers",
        "age,zip,sex",
        "--secret",
        "disease",
        "--n-attacks",
        "60",
        *extra,
    ]


def test_json_shape_and_no_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _write(tmp_path)
    assert main(_args(paths, "--format", "json")) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    for key in ("singling_out", "linkability", "inference"):
        result = report[key]
        assert {"risk", "ci", "attack_rate", "baseline_rate", "control_rate"} <= set(result)
        assert result["ci"][0] <= result["risk"] <= result["ci"][1]
    assert report["settings"]["linkability_columns"] == [["age", "zip"], ["sex"]]
    assert report["singling_out"]["risk"] > 0.5  # the release is the original
    for value in ("influenza", "asthma", "female", "z00"):
        assert value not in out
    assert main(_args(paths, "--attacks", "inference", "--format", "table")) == 0
    assert "inference" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--secret", "zip"], "--secret: 'zip' is a quasi-identifier"),
        (["--n-attacks", "500"], "--n-attacks: 500 attacks need at least as many original records"),
        (["--quasi-identifiers", "age,postcode"], "lacks column(s) ['postcode']"),
        (["--attacks", "guessing"], "--attacks: unknown ['guessing']"),
        (["--linkability-split", "age"], "--linkability-split must be two column lists"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    paths = _write(tmp_path)
    assert main(_args(paths, *extra)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
