"""Big releases: an infeasible lattice is refused before the diagnosis; long steps report progress."""

from __future__ import annotations

import logging
import math
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.cli import main
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, diagnosis_reports, run_release
from privacy_plugins.release import flow as release_flow
from privacy_plugins.release import progress as release_progress
from privacy_plugins.release.progress import StepProgress

TWELVE = [f"q{i}" for i in range(12)]


def twelve_qi_spec(tmp_path: Path) -> dict[str, object]:
    """12 numeric QIs, each with a 6-level interval hierarchy: 7^12 ≈ 1.4·10^10 lattice nodes."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.integers(0, 64, 2_000) for name in TWELVE})
    frame["disease"] = rng.choice(["flu", "hiv", "cold"], 2_000)
    frame.to_csv(tmp_path / "wide.csv", index=False)
    data = demo_spec_dict(tmp_path)
    data |= {
        "source": {"path": str(tmp_path / "wide.csv")},
        "identifiers": [],
        "quasi_identifiers": TWELVE,
        "sensitive_attributes": ["disease"],
        "insensitive": [],
        "hierarchies": {name: {"interval": {"widths": [2, 4, 8, 16, 32]}} for name in TWELVE},
    }
    return data


@pytest.fixture
def no_diagnosis(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    called: list[str] = []

    def spy(*args: object, **kwargs: object) -> None:
        called.append("diagnose")
        raise AssertionError("the diagnosis must not run for a lattice the anonymizer refuses")

    monkeypatch.setattr(release_flow, "diagnose_step", spy)
    monkeypatch.setattr(diagnosis_reports, "diagnose", spy)
    return called


def test_an_infeasible_lattice_with_12_qis_is_refused_before_the_diagnosis(
    tmp_path: Path, no_diagnosis: list[str]
) -> None:
    spec = ReleaseSpec.from_dict(twelve_qi_spec(tmp_path), base_dir=tmp_path)
    started = time.perf_counter()
    with pytest.raises(ConfigurationError, match=r"generalization lattice has [\d,]{14} nodes \(more than 1,000,000\)"):
        run_release(spec)
    assert time.perf_counter() - started < 20  # seconds, not the minutes of a diagnosis of 4096 subsets
    assert no_diagnosis == []
    assert not spec.report.diagnosis_json.exists() and not (tmp_path / "release.duckdb").exists()


def test_the_cli_exits_2_on_an_infeasible_lattice_like_the_anonymizer(
    tmp_path: Path, no_diagnosis: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(twelve_qi_spec(tmp_path)))
    assert main(["release", str(path), "--quiet"]) == 2
    assert re.search(r"error: the generalization lattice has [\d,]{14} nodes", capsys.readouterr().err)
    assert no_diagnosis == []


def test_long_steps_report_progress_and_log_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(release_progress, "LOG_INTERVAL", 0.0)
    calls: list[tuple[str, int, int | None]] = []
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path, rows=500), base_dir=tmp_path)
    with caplog.at_level(logging.INFO, logger="privacy_plugins.release"):
        result = run_release(spec, on_progress=lambda step, done, total: calls.append((step, done, total)))
    assert result.passed
    diagnosed = [c for c in calls if c[0] == "diagnose"]
    assert diagnosed[-1] == ("diagnose", 32, 32)  # 5 QIs: every subset measured
    anonymized = [c for c in calls if c[0] == "anonymize"]
    frame = pd.read_parquet(result.loaded.path)
    size = math.prod(h.height + 1 for h in spec.build_hierarchies(frame).values())
    assert anonymized and all(total == size for _, _, total in anonymized)
    assert [done for _, done, _ in anonymized] == list(range(1, len(anonymized) + 1))
    messages = [r.getMessage() for r in caplog.records if r.name == "privacy_plugins.release"]
    assert "diagnose: subsets measured 100% (32 of 32)" in " ".join(messages)
    assert any(m.startswith("anonymize: optimal: checking lattice nodes ") and "%" in m for m in messages)


def test_progress_log_lines_are_throttled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(release_progress.PROGRESS_INTERVAL_ENV, raising=False)
    now = [0.0]
    seen: list[tuple[str, int, int | None]] = []
    logged: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    handler = Handler(logging.INFO)
    release_progress.LOGGER.addHandler(handler)
    old_level = release_progress.LOGGER.level
    release_progress.LOGGER.setLevel(logging.INFO)
    try:
        progress = StepProgress("diagnose", "subsets measured", lambda *a: seen.append(a), clock=lambda: now[0])
        for done in range(1, 101):
            now[0] = done * 0.25  # 25 s in all, one line every 10 s at most
            progress(done, 100)
    finally:
        release_progress.LOGGER.removeHandler(handler)
        release_progress.LOGGER.setLevel(old_level)
    assert len(seen) == 100
    assert logged == [f"diagnose: subsets measured {d}% ({d} of 100), {d // 4} s" for d in (40, 80)]
