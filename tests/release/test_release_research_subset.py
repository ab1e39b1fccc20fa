"""A δ-presence release publishes the research subset alone, without its flag, and accounts for every row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privacy_plugins.release import ReleaseSpec, read_published, run_release


def test_only_the_flagged_rows_are_published_and_the_rest_is_counted(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    rows = 240
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 80, rows),
            "sex": rng.choice(["Female", "Male"], rows),
            "zip": [f"{47900 + i % 40:05d}" for i in range(rows)],
            "disease": rng.choice(["flu", "cold", "asthma", "ulcer"], rows),
            "study": rng.random(rows) < 0.3,  # the research subset; the table is the population
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    spec = ReleaseSpec.from_dict(
        {
            "name": "study_release",
            "source": {"path": str(tmp_path / "people.csv")},
            "quasi_identifiers": ["age", "sex", "zip"],
            "sensitive_attributes": ["disease"],  # study: a model's column, its role by itself
            "hierarchies": {
                "age": {"interval": {"widths": [5, 10, 20, 40]}},
                "sex": {"taxonomy": {"*": ["Female", "Male"]}},
                "zip": {"masking": {}},
            },
            "requirements": {
                "k": 3,
                "models": [{"delta_presence": {"dmin": 0.0, "dmax": 0.6, "subset_column": "study"}}],
                "suppression_limit": 0.05,
            },
            "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "study"},
            "report": {"directory": str(tmp_path / "reports")},
            "workdir": str(tmp_path / "work"),
        }
    )
    result = run_release(spec)
    assert result.passed, result.failure
    published = read_published(spec.destination)
    assert published is not None and "study" not in published.columns
    in_subset = int(frame["study"].sum())
    assert result.check is not None
    accounting = next(c for c in result.check.checks if c.name == "row_accounting")
    assert accounting.passed and f"+ {rows - in_subset} out of scope" in accounting.detail
    candidate = result.candidate
    assert candidate is not None and candidate.out_of_scope == rows - in_subset
    assert len(published) == candidate.rows_out == in_subset - candidate.suppressed
    assert published.groupby(["age", "sex", "zip"]).size().min() >= 3  # k on what is published
    delta = next(c for c in result.check.checks if c.name.startswith("delta_presence"))
    assert delta.passed  # measured on the population by the core's re-check


def test_the_in_database_release_equals_the_in_memory_release(tmp_path: Path, monkeypatch) -> None:
    """A DuckDB source: the snapshot path (GROUP BY, the subset cut by the engine) publishes what the rows path does."""
    import duckdb

    from privacy_plugins.release import steps

    rng = np.random.default_rng(5)
    rows = 300
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 80, rows),
            "sex": rng.choice(["Female", "Male"], rows),
            "zip": [f"{47900 + i % 40:05d}" for i in range(rows)],
            "disease": rng.choice(["flu", "cold", "asthma", "ulcer"], rows),
            "study": rng.random(rows) < 0.3,  # the research subset: delta_presence's column, its role by itself
        }
    )
    with duckdb.connect(str(tmp_path / "source.duckdb")) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE TABLE people AS SELECT * FROM frame")

    def release(name: str) -> tuple[object, pd.DataFrame]:
        spec = ReleaseSpec.from_dict(
            {
                "name": name,
                "source": {"duckdb": str(tmp_path / "source.duckdb"), "table": "people"},
                "quasi_identifiers": ["age", "sex", "zip"],
                "sensitive_attributes": ["disease"],
                "hierarchies": {
                    "age": {"interval": {"widths": [5, 10, 20, 40]}},
                    "sex": {"taxonomy": {"*": ["Female", "Male"]}},
                    "zip": {"masking": {}},
                },
                "requirements": {
                    "k": 3,
                    "models": [{"delta_presence": {"dmin": 0.0, "dmax": 0.6, "subset_column": "study"}}],
                    "suppression_limit": 0.05,
                },
                "destination": {"duckdb": str(tmp_path / f"{name}.duckdb"), "table": "study"},
                "report": {"directory": str(tmp_path / f"reports_{name}")},
                "workdir": str(tmp_path / f"work_{name}"),
            }
        )
        result = run_release(spec)
        assert result.passed, result.failure
        published = read_published(spec.destination)
        assert published is not None
        return result, published

    in_database, published_db = release("in_database")
    assert in_database.loaded is not None and in_database.loaded.kind == "snapshot"  # the rows never left DuckDB
    with monkeypatch.context() as patch:
        patch.setattr(steps, "pushdown_reason", lambda spec: "the rows, for the comparison")
        in_memory, published_mem = release("in_memory")
    assert in_memory.loaded is not None and in_memory.loaded.kind != "snapshot"
    db, mem = in_database.candidate, in_memory.candidate
    assert db is not None and mem is not None
    assert db.levels == mem.levels
    assert (db.rows_in, db.rows_out, db.suppressed, db.out_of_scope) == (
        mem.rows_in,
        mem.rows_out,
        mem.suppressed,
        mem.out_of_scope,
    )
    assert (
        db.out_of_scope == rows - int(frame["study"].sum()) > 0
    )  # suppression: tests/engines/test_pushdown_research_subset.py
    assert "study" not in published_db.columns and list(published_db.columns) == list(published_mem.columns)
    as_text = [p.astype(str).sort_values(list(p.columns)).reset_index(drop=True) for p in (published_db, published_mem)]
    assert as_text[0].equals(as_text[1])
    assert in_database.check is not None
    delta = next(c for c in in_database.check.checks if c.name.startswith("delta_presence"))
    assert delta.passed  # from the core's re-check of the population, in the snapshot path's anonymization.json


def test_a_research_subset_release_keeps_no_history_yet(tmp_path: Path) -> None:
    """(a)/(c) of the history would recode every row: such a spec keeps none, and asking for one is refused."""
    import pytest

    from privacy_plugins.errors import ConfigurationError

    data = {
        "name": "study_release",
        "source": {"generate": "census", "rows": 200},
        "identifiers": ["person_id"],
        "quasi_identifiers": ["age", "sex"],
        "sensitive_attributes": ["disease"],
        "unlisted_columns": "drop",
        "hierarchies": {"age": {"interval": {"widths": [10, 20, 40]}}, "sex": {"taxonomy": {"*": ["Female", "Male"]}}},
        "requirements": {"k": 3, "models": [{"delta_presence": {"dmin": 0.0, "dmax": 0.6, "subset_column": "income"}}]},
        "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "study"},
        "report": {"directory": str(tmp_path / "reports")},
    }
    assert not ReleaseSpec.from_dict(data).history.enabled
    with pytest.raises(ConfigurationError, match=r"history: a model publishing a research subset .*set history: off"):
        ReleaseSpec.from_dict(data | {"history": {"name": "study"}})
