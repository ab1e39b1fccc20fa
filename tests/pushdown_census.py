"""A DuckDB file holding the demo census, and a release spec from it into the same file (for the orchestrator tests)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import yaml

import privacy_plugins as pp

REPO = Path(__file__).resolve().parents[1]
ROWS = 1_500


def census_duckdb(path: Path, *, rows: int = ROWS) -> Path:
    """``path`` with table ``census``: the demo census (identifiers included)."""
    frame = pp.generate_census(rows, seed=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(path))
    connection.register("frame", frame)
    connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    connection.close()
    return path


def same_duckdb_spec(directory: Path, db: Path) -> dict[str, Any]:
    """The demo spec reading ``census`` from ``db`` and publishing ``census_release`` into the same file."""
    data = copy.deepcopy(yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8")))
    data["source"] = {"duckdb": str(db), "table": "census"}
    data["destination"] = {"duckdb": str(db), "table": "census_release"}
    data["report"] = {"directory": str(directory / "reports")}
    data["workdir"] = str(directory / "work")
    return data


def rows_of(db: Path, table: str) -> pd.DataFrame:
    connection = duckdb.connect(str(db), read_only=True)
    try:
        return connection.execute(f'SELECT * FROM "{table}"').df()
    finally:
        connection.close()


def table_names(db: Path) -> set[str]:
    connection = duckdb.connect(str(db), read_only=True)
    try:
        return {row[0] for row in connection.execute("SHOW TABLES").fetchall()}
    finally:
        connection.close()


def multiset(frame: pd.DataFrame) -> pd.DataFrame:
    text = frame.astype(str)
    return text.sort_values(list(text.columns)).reset_index(drop=True)


def cli_reference(directory: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """The CLI's release of the same data (its own DuckDB file): published multiset and levels."""
    import json

    from privacy_plugins.cli import main

    directory.mkdir(parents=True, exist_ok=True)
    db = census_duckdb(directory / "cli.duckdb")
    spec = directory / "spec.yaml"
    spec.write_text(yaml.safe_dump(same_duckdb_spec(directory, db)), encoding="utf-8")
    assert main(["release", str(spec), "--quiet"]) == 0
    result = json.loads((directory / "reports" / "release.json").read_text(encoding="utf-8"))
    assert result["loaded"]["kind"] == "snapshot"
    return multiset(rows_of(db, "census_release")), result["candidate"]["levels"]
