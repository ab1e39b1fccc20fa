"""``privacy-plugins release``: exit codes, summaries, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.cli import main


def write_spec(tmp_path: Path, **overrides: object) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(demo_spec_dict(tmp_path, **overrides)))
    return path


def test_published_release_exits_0_with_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["release", str(write_spec(tmp_path)), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "PUBLISHED" in out and "5-anonymity: holds" in out and "diagnosis report" in out
    assert "1,500 in = " in out


def test_impossible_release_exits_1_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "release",
            str(write_spec(tmp_path, requirements={"l": 9}, sensitive_attributes=["disease"])),
            "--format",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert json.loads(out)["passed"] is False
    assert "not published" in err and "distinct-9-diversity" in err
    assert not (tmp_path / "release.duckdb").exists()


def test_bad_spec_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["release", str(write_spec(tmp_path, requirements={"k": 0}))])
    _, err = capsys.readouterr()
    assert code == 2 and "requirements.k must be an integer >= 1" in err
    assert main(["release", str(tmp_path / "missing.yaml")]) == 2


def test_published_re_measures_what_is_published(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path)
    assert main(["published", str(spec)]) == 1  # nothing yet
    assert "nothing published" in capsys.readouterr().out
    assert main(["release", str(spec), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["published", str(spec), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["holds"] is True and report["identifier_columns"] == []
    assert report["requirements"][0]["model"] == "5-anonymity"
    assert all(r["observed"] >= r["threshold"] for r in report["requirements"] if "diversity" in r["model"])
