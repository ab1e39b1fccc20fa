"""Hierarchical-distance t-closeness from the shell: ``measure`` and ``diagnose`` with ``--hierarchies``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.cli import EXIT_BAD_INPUT, main

ROWS = [
    ("4767*", "gastric ulcer"), ("4760*", "gastritis"), ("4767*", "stomach cancer"), ("4790*", "gastritis"),
    ("4790*", "flu"), ("4790*", "bronchitis"), ("4760*", "bronchitis"), ("4767*", "pneumonia"),
    ("4760*", "stomach cancer"),
]  # fmt: skip
HIERARCHY = """flu;respiratory infection;respiratory;*
pneumonia;respiratory infection;respiratory;*
bronchitis;respiratory infection;respiratory;*
gastric ulcer;stomach diseases;digestive;*
gastritis;stomach diseases;digestive;*
stomach cancer;stomach diseases;digestive;*
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "patients.csv"
    frame = pd.DataFrame(ROWS, columns=["zip", "disease"]).assign(age=[29, 22, 27, 43, 52, 47, 30, 36, 32])
    frame.to_csv(data, index=False)
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    (folder / "disease.csv").write_text(HIERARCHY)
    return data, folder


def test_measure_reports_the_hierarchical_t(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    data, folder = files
    argv = ["measure", str(data), "--quasi-identifiers", "zip", "--sensitive-attributes", "disease",
            "--t", "0.3", "--t-distance", "hierarchical", "--hierarchies", str(folder), "--format", "json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    detail = report["sensitive_attributes"]["disease"]
    assert detail["t_distance"] == "hierarchical"
    assert detail["t_closeness"] == pytest.approx(8 / 27)  # the paper's Table 5 (see test_t_closeness_hierarchical)
    assert report["models"]["t_closeness_disease"]["passed"] is True


def test_measure_without_the_hierarchy_exits_2_with_one_line(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = files
    argv = ["measure", str(data), "--quasi-identifiers", "zip", "--sensitive-attributes", "disease",
            "--t", "0.3", "--t-distance", "hierarchical"]  # fmt: skip
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a hierarchy of the sensitive attribute 'disease'" in err


def test_diagnose_borders_of_a_listed_hierarchical_t(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, folder = files
    listed = tmp_path / "requirements.yaml"
    listed.write_text("- t_closeness: {sensitive_attribute: disease, t: 0.3, t_distance: hierarchical}\n")
    argv = ["diagnose", str(data), "--quasi-identifiers", "zip,age", "--sensitive-attributes", "disease",
            "--requirements-file", str(listed), "--hierarchies", str(folder), "--k", "1",
            "--format", "json"]  # fmt: skip
    assert main(argv) == 0
    (borders,) = json.loads(capsys.readouterr().out)["model_borders"]
    # zip alone is 8/27-close (passes 0.3); age singles everybody out (a class of 1 is far from the table)
    assert borders["positive_border"] == [["zip"]] and borders["negative_border"] == [["age"]]
