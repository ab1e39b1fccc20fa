"""A small demo release spec (as a dict) pointing into a temporary folder."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from privacy_plugins.release.spec import DestinationSpec

REPO = Path(__file__).resolve().parents[2]


def demo_spec_dict(tmp_path: Path, *, rows: int = 1_500, **overrides: Any) -> dict[str, Any]:
    """The demo spec with a smaller table and every output under ``tmp_path``.

    Mapping overrides are merged into the spec's section, except ``source`` and
    ``hierarchies``, which are replaced.
    """
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text())
    data = copy.deepcopy(data)
    data["source"]["rows"] = rows
    data["destination"] = {"duckdb": str(tmp_path / "release.duckdb"), "table": "census_release"}
    data["report"] = {"directory": str(tmp_path / "reports")}
    data["workdir"] = str(tmp_path / "work")
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict) and key not in ("source", "hierarchies"):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    if "insensitive" not in overrides and "generate" in data["source"]:
        data["insensitive"] = unnamed_census_columns(data)
    return data


def kept_by_the_history(name: str) -> bool:
    """A table or file the release history keeps beside a release (``docs/release-history.md``)."""
    return name.startswith("pp_history_") or ".companions" in name


def published_tables(names: Iterable[str]) -> set[str]:
    """The table names without the release history's (which every published release keeps beside it)."""
    return {name for name in names if not kept_by_the_history(name)}


CENSUS_COLUMNS = ("person_id", "age", "sex", "zip", "education", "marital_status", "occupation", "income", "disease")


def unnamed_census_columns(data: dict[str, Any]) -> list[str]:
    """The census columns a spec dict names in no role: every column needs one (issue 27), these are insensitive."""
    requirements = data.get("requirements")
    bound = requirements.get("bound_column") if isinstance(requirements, dict) else None
    named = {
        *data.get("identifiers", []),
        *data.get("quasi_identifiers", []),
        *data.get("sensitive_attributes", []),
        *((data.get("pseudonymize") or {}).get("columns", [])),
        bound,
    }
    return [c for c in CENSUS_COLUMNS if c not in named]


def destination_spec(kind: str, tmp_path: Path, *, table: str, database: str) -> DestinationSpec:
    """A ``kind`` destination under ``tmp_path``: ``"duckdb"``, ``"parquet"``, else a SQLite URL to ``database``."""
    if kind == "duckdb":
        return DestinationSpec(table=table, duckdb=tmp_path / "release.duckdb")
    if kind == "parquet":
        return DestinationSpec(table=table, parquet=tmp_path / "out")
    return DestinationSpec(table=table, url=f"sqlite:///{tmp_path / database}")


def age_files(folder: Path, hours: float) -> None:
    """Set the times of ``folder`` and everything below it ``hours`` into the past (a run left long ago)."""
    then = time.time() - hours * 3600
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (then, then), follow_symlinks=False)


def kill_when_reached(args: list[str], marker: Path, while_paused: Callable[[], None] = lambda: None) -> None:
    """Run ``python -c args…`` and SIGKILL it once it wrote ``marker`` (after ``while_paused()``)."""
    child = subprocess.Popen(
        [sys.executable, "-c", *args], env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 180
        while not marker.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else b""
            assert time.monotonic() < deadline, "the child never reached the pause"
            time.sleep(0.05)
        while_paused()
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL


def people_query_spec(
    tmp_path: Path, source: dict[str, Any], algorithm: str, *, more_insensitive: tuple[str, ...] = ()
) -> Path:
    """A spec file releasing the people table of ``source`` (k=5 over age and sex) to ``out.duckdb``.

    ``more_insensitive`` names the source's columns beyond the census ones (published unchanged).
    """
    data = {
        "name": "query_release",
        "source": source,
        "identifiers": ["person_id"],
        "quasi_identifiers": ["age", "sex"],
        "sensitive_attributes": ["disease"],
        "insensitive": ["zip", "education", "marital_status", "occupation", "income", *more_insensitive],
        "acknowledged_identifiers": ["zip"],  # five-digit ZIP codes published as they are, on purpose
        "hierarchies": {"age": {"interval": {"widths": [10, 20, 40]}}, "sex": {"taxonomy": {"*": ["Female", "Male"]}}},
        "requirements": {"k": 5},
        "algorithm": {"name": algorithm},
        "destination": {"duckdb": str(tmp_path / "out.duckdb"), "table": "people_release"},
        "report": {"directory": str(tmp_path / "reports")},
        "workdir": str(tmp_path / "work"),
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def rerun_crashing_before_the_swap(run: Callable[[], object], source: Path, people: Any, monkeypatch: Any) -> None:
    """Write ``people`` to ``source`` reversed (other bytes, same classes), then ``run`` with a crash injected
    between the history's swap and the release's; the crash is expected."""
    import pytest

    from privacy_plugins.release.destination import base as destination_base

    people.iloc[::-1].to_csv(source, index=False)

    def crash() -> None:
        raise RuntimeError("injected crash between the history and the release")

    monkeypatch.setattr(destination_base, "before_swap", crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        run()
    monkeypatch.undo()
