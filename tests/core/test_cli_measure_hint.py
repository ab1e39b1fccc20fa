"""``measure`` says when a sensitive column looks generalized and no hierarchy was given (issue 24, item 15)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.cli import main
from privacy_plugins.core.hierarchies import Hierarchy, write_hierarchy

DISEASE = Hierarchy.from_rows(
    "disease",
    [["flu", "resp", "*"], ["cold", "resp", "*"], ["hiv", "hiv*", "*"], ["cancer", "can*", "*"]],
)


def _published(tmp_path: Path) -> Path:
    """A personalized-style output: some sensitive values generalized to masked labels."""
    table = pd.DataFrame(
        {
            "age": [30] * 4 + [40] * 4,
            "disease": ["flu", "cold", "*", "*", "hiv", "hiv*", "cancer", "can*"],
        }
    )
    path = tmp_path / "published.csv"
    table.to_csv(path, index=False)
    return path


def _measure(path: Path, *extra: str) -> int:
    return main(["measure", str(path), "--quasi-identifiers", "age", "--sensitive-attributes", "disease", *extra])


def test_generalized_values_without_a_hierarchy_get_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _measure(_published(tmp_path), "--bound", "0.5") == 0
    err = capsys.readouterr().err
    (note,) = [line for line in err.splitlines() if "look generalized" in line]
    assert "'disease'" in note and "3 distinct values (4 records)" in note and "--hierarchies" in note
    assert "hiv" not in note and "can" not in note  # counts only, no values


def test_no_note_with_the_hierarchy_or_without_generalized_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    write_hierarchy(DISEASE, folder / "disease.csv")
    assert _measure(_published(tmp_path), "--bound", "0.5", "--hierarchies", str(folder)) == 0
    assert "look generalized" not in capsys.readouterr().err
    plain = tmp_path / "plain.csv"
    pd.DataFrame({"age": [30, 30, 40, 40], "disease": ["flu", "cold", "hiv", "flu"]}).to_csv(plain, index=False)
    assert _measure(plain, "--bound", "0.5") == 0
    assert "look generalized" not in capsys.readouterr().err


@pytest.mark.parametrize("label", ["[20-30)", "(1, 5]", "{flu, cold}", "12***"])
def test_ranges_sets_and_masks_look_generalized(label: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"age": [1, 1, 1], "disease": ["a", label, label]}).to_csv(path, index=False)
    assert _measure(path, "--bound", "0.9") == 0
    assert "1 distinct values (2 records) that look generalized" in capsys.readouterr().err
