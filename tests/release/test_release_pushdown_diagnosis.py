"""A release inside the database writes the same diagnosis (JSON, HTML, summary, progress) as in memory.

The diagnose step inside the database reads only the stored weighted snapshot
(``snapshot.parquet``); every subset's measures are sums of its counts, so the
reports equal those of the in-memory step on the rows.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.release import diagnosis_reports, sources, steps
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec
from tests.json_trees import assert_same_json

ROWS = 2_000
REQUIREMENTS = {
    "k_and_l": None,  # the demo's: 5-anonymous, distinct 2-diverse in disease and income
    "k_only": {"k": 5, "suppression_limit": 0.05},  # no model reads the sensitive columns: the snapshot must
    "recursive": {"k": 3, "l": 2, "l_variant": "recursive", "c": 3, "suppression_limit": 0.1},
}


def html_structure(html: str) -> list[str]:
    """The report's tags and headings, without numbers or embedded images."""
    without_images = re.sub(r'src="data:[^"]*"|<svg.*?</svg>', "", html, flags=re.S)
    return re.findall(r"<[a-z0-9]+|<h[1-6][^>]*>[^<]*", without_images)


def spec_data(folder: Path, requirements: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    """The source given (a snapshot release), or the generated table with marked suppressed rows (a rows release)."""
    rows = {"algorithm": {"suppressed_rows": "mark"}} if source is None else {"source": source}
    data = demo_spec_dict(folder, rows=ROWS, **rows)
    if REQUIREMENTS[requirements] is not None:
        data["requirements"] = REQUIREMENTS[requirements]
    return data


def census_db(path: Path) -> Path:
    connection = duckdb.connect(str(path))
    connection.register("frame", pp.generate_census(ROWS, seed=0))
    connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    connection.close()
    return path


def release(data: dict[str, Any]) -> tuple[Any, list[tuple[str, int, int | None]]]:
    calls: list[tuple[str, int, int | None]] = []
    result = run_release(
        ReleaseSpec.from_dict(data), on_progress=lambda step, done, total: calls.append((step, done, total))
    )
    return result, [call for call in calls if call[0] == "diagnose"]


def refuse_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "read_source", lambda *a, **k: pytest.fail("the source was read into pandas"))
    monkeypatch.setattr(sources, "read_table", lambda *a, **k: pytest.fail("the source was read into pandas"))


@pytest.mark.parametrize(
    ("where", "requirements"), [*(("duckdb", name) for name in REQUIREMENTS), ("large_parquet", "k_and_l")]
)
def test_inside_the_database_the_diagnosis_is_the_in_memory_one(
    requirements: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, memory_progress = release(spec_data(tmp_path / "memory", requirements))
    assert memory.loaded.kind == "rows"
    if where == "duckdb":
        source: dict[str, Any] = {"duckdb": str(census_db(tmp_path / "source.duckdb")), "table": "census"}
    else:
        path = tmp_path / "census.parquet"
        pp.generate_census(ROWS, seed=0).to_parquet(path, index=False)
        source = {"path": str(path), "out_of_core_bytes": 1_000}
    refuse_rows(monkeypatch)
    inside, inside_progress = release(spec_data(tmp_path / "inside", requirements, source))
    assert inside.loaded.kind == "snapshot"

    memory_json = json.loads(Path(memory.diagnosis.json_path).read_text(encoding="utf-8"))
    inside_json = json.loads(Path(inside.diagnosis.json_path).read_text(encoding="utf-8"))
    assert inside_json["rows"] == ROWS and inside_json["mode"] == "exhaustive"
    assert inside_json["sensitive_attributes"] == ["disease", "income"]
    assert inside_json["all_quasi_identifiers"]["distinct_l"] >= 1  # the sensitive columns were in the snapshot
    assert_same_json(memory_json, inside_json)
    memory_html = Path(memory.diagnosis.html_path).read_text(encoding="utf-8")
    inside_html = Path(inside.diagnosis.html_path).read_text(encoding="utf-8")
    assert html_structure(inside_html) == html_structure(memory_html)
    assert inside_html == memory_html  # the same numbers too (floats are rounded for display)
    assert "<svg" in inside_html or "data:image" in inside_html  # the plots, not a hand-written table
    for field in ("k", "sample_uniques", "suppression_needed"):
        assert getattr(inside.diagnosis, field) == getattr(memory.diagnosis, field)
    assert inside.diagnosis.share_at_risk == pytest.approx(memory.diagnosis.share_at_risk, rel=1e-12)
    assert inside_progress == memory_progress and inside_progress[-1] == ("diagnose", 32, 32)


def test_level_wise_inside_the_database_as_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the diagnosis goes level-wise (here: max_exhaustive=2), both modes say so the same way."""
    monkeypatch.setattr(diagnosis_reports, "diagnose", functools.partial(diagnosis_reports.diagnose, max_exhaustive=2))
    memory, memory_progress = release(spec_data(tmp_path / "memory", "k_and_l"))
    assert memory.loaded.kind == "rows"
    source = {"duckdb": str(census_db(tmp_path / "source.duckdb")), "table": "census"}
    inside, inside_progress = release(spec_data(tmp_path / "inside", "k_and_l", source))
    assert inside.loaded.kind == "snapshot"
    memory_json = json.loads(Path(memory.diagnosis.json_path).read_text(encoding="utf-8"))
    inside_json = json.loads(Path(inside.diagnosis.json_path).read_text(encoding="utf-8"))
    assert inside_json["mode"] == "levelwise"
    assert inside_json["mode_reason"] == "5 candidate quasi-identifiers exceed max_exhaustive=2 (2^5 subsets)"
    assert_same_json(memory_json, inside_json)
    assert inside_progress == memory_progress and all(total is None for _, _, total in inside_progress)


def test_the_diagnose_step_reads_only_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step by step: the diagnose step gets the stored snapshot (weighted), never the rows."""
    source = {"duckdb": str(census_db(tmp_path / "source.duckdb")), "table": "census"}
    spec = ReleaseSpec.from_dict(spec_data(tmp_path / "inside", "k_and_l", source))
    loaded = steps.load_step(spec, run_id="r1")
    seen: list[tuple[pd.DataFrame, str | None]] = []
    real = diagnosis_reports.diagnose

    def spy(frame: pd.DataFrame, **options: Any) -> Any:
        seen.append((frame, options["weights"]))
        return real(frame, **options)

    monkeypatch.setattr(diagnosis_reports, "diagnose", spy)
    refuse_rows(monkeypatch)
    summary = steps.diagnose_step(spec, loaded, run_id="r1")
    [(frame, weights)] = seen
    assert weights == COUNT_COLUMN and int(frame[weights].sum()) == ROWS
    assert sorted(frame.columns) == sorted([*spec.quasi_identifiers, "disease", "income", COUNT_COLUMN])
    assert json.loads(Path(summary.json_path).read_text(encoding="utf-8"))["rows"] == ROWS
