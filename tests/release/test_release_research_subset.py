"""A δ-presence release publishes the research subset alone, without its flag, and accounts for every row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

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


def _study(seed: int, rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 80, rows),
            "sex": rng.choice(["Female", "Male"], rows),
            "zip": [f"{47900 + i % 10:05d}" for i in range(rows)],
            "disease": rng.choice(["flu", "cold", "asthma", "ulcer", "hiv"], rows, p=[0.4, 0.3, 0.15, 0.1, 0.05]),
            "study": rng.random(rows) < 0.5,  # the research subset; the table is the population
        }
    )


def _study_spec(tmp_path: Path, source: dict[str, str], dmin: float = 0.0) -> ReleaseSpec:
    return ReleaseSpec.from_dict(
        {
            "name": "study_release",
            "source": source,
            "quasi_identifiers": ["age", "sex", "zip"],
            "sensitive_attributes": ["disease"],  # study: a model's column, its role by itself
            "acknowledged_identifiers": ["zip"],
            "hierarchies": {
                "age": {"interval": {"widths": [5, 10, 20, 40]}},
                "sex": {"taxonomy": {"*": ["Female", "Male"]}},
                "zip": {"masking": {}},
            },
            "requirements": {
                "k": 2,
                "l": 2,
                "models": [{"delta_presence": {"dmin": dmin, "dmax": 0.8, "subset_column": "study"}}],
                "suppression_limit": 0.1,
            },
            "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "study"},
            "report": {"directory": str(tmp_path / "reports")},
            "workdir": str(tmp_path / "work"),
        }
    )


class _Rows:
    def __init__(self, rows: list[list[str]]) -> None:
        self.rows = rows

    def to_rows(self) -> list[list[str]]:
        return self.rows


@pytest.mark.parametrize("kind", ["memory", "duckdb"])
def test_research_subset_releases_keep_a_history_and_together_disclose_nobody(tmp_path: Path, kind: str) -> None:
    """Two growing releases of a δ-presence subset: the second checked against the first, (c) exercised.

    Targets are everyone in the source (in the subset or not: the adversary does not know who is);
    the naive oracle intersects the published subsets' classes for every one of them.
    """
    from tests.core.test_composition import _covers

    frame = _study(6).iloc[:250]
    published: list[pd.DataFrame] = []
    suppressed_at_risk = []
    for rows in (200, 250):
        batch = frame.iloc[:rows]
        batch.to_csv(tmp_path / "people.csv", index=False)
        source = {"path": str(tmp_path / "people.csv")}
        if kind == "duckdb":
            import duckdb

            with duckdb.connect(str(tmp_path / "source.duckdb")) as con:
                con.register("batch", batch)
                con.execute("CREATE OR REPLACE TABLE people AS SELECT * FROM batch")
            source = {"duckdb": str(tmp_path / "source.duckdb"), "table": "people"}
        spec = _study_spec(tmp_path, source)
        assert spec.history.enabled
        result = run_release(spec)
        assert result.passed, result.failure
        candidate = result.candidate
        assert candidate is not None and result.check is not None
        table = read_published(spec.destination)
        assert table is not None and "study" not in table.columns
        in_subset = int(batch["study"].sum())
        assert candidate.out_of_scope == rows - in_subset
        assert len(table) == candidate.rows_out == in_subset - candidate.suppressed
        composition = next(c for c in result.check.checks if c.name.startswith("composition"))
        assert composition.passed and f"of {rows} records" in composition.detail
        published.append(table)
        suppressed_at_risk.append(candidate.history.get("suppressed_at_risk", 0))
    assert suppressed_at_risk[1] > 0  # the second release went through (c): subset records left out
    hierarchies = _study_spec(tmp_path, {"path": str(tmp_path / "people.csv")}).build_hierarchies(frame)
    rows_of = {q: _Rows(h.to_rows()) for q, h in hierarchies.items()}  # the oracle reads only the rows: once
    qis = ["age", "sex", "zip"]
    classes = [table.groupby(qis)["disease"].agg(set) for table in published]  # naive: label by label
    left = []
    for _, person in frame.iterrows():
        sets = []
        for release in classes:
            covering = [
                values
                for labels, values in release.items()
                if all(_covers(label, person[q], rows_of[q]) for label, q in zip(labels, qis, strict=True))
            ]
            if covering:
                sets.append(set().union(*covering))
        left.append(len(set.intersection(*sets)) if sets else 5)
    assert min(left) >= 2, sorted(left)[:5]  # nobody below 2 values over both releases, in the subset or not


def test_a_positive_dmin_keeps_the_history_from_leaving_subset_records_out(tmp_path: Path) -> None:
    """Leaving subset records out lowers δ: with δmin > 0, (c) may not, and the gate refuses what stays at risk."""
    from privacy_plugins.core.models import DeltaPresence

    assert DeltaPresence(dmin=0.0, dmax=0.5, subset_column="study").holds_as_the_subset_shrinks
    assert not DeltaPresence(dmin=0.1, dmax=0.5, subset_column="study").holds_as_the_subset_shrinks
    frame = _study(6)
    for rows in (200, 250):
        frame.iloc[:rows].to_csv(tmp_path / "people.csv", index=False)
        result = run_release(_study_spec(tmp_path, {"path": str(tmp_path / "people.csv")}, dmin=0.01))
    assert result.candidate is not None
    assert result.candidate.history.get("suppressed_at_risk", 0) == 0
    assert not result.passed and "composition" in str(result.failure)
