"""A k-member or bucket release from a database source runs block by block in the engine (issue 28).

The load step stores one ``GROUP BY``, the rows are never read into pandas as a table and
``source.max_rows_in_memory`` does not cap the release; the published multiset, the accounting
and the re-measured checks equal the in-memory release of the same rows (the same blocks: the
block limit is lowered so the table is cut). Spark ``local[2]`` runs the same route in
``tests/engines/test_blocks_spark.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from pushdown_census import multiset
from pushdown_census import rows_of as published_rows
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.core.anonymize import bucket_clustering, clustering
from privacy_plugins.engines import sql as sql_engine
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release import sources
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step

ROWS = 300
#: Per algorithm: requirements it can meet on the census rows (bucket bucketizes frequency l-diversity).
REQUIREMENTS = {
    "k-member": {"k": 4, "l": 2, "l_variant": "distinct"},
    "bucket": {"k": 2, "l": 2, "l_variant": "frequency"},
}


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of at most 100 records: the 300 rows are cut (as a table above the real limit would be)."""
    monkeypatch.setattr(clustering, "BLOCK", 100)
    monkeypatch.setattr(bucket_clustering, "BLOCK", 100)


def census_db(path: Path) -> Path:
    connection = duckdb.connect(str(path))
    connection.register("frame", pp.generate_census(ROWS, seed=0))
    connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    connection.close()
    return path


def spec_dict(folder: Path, algorithm: str, **source: Any) -> dict[str, Any]:
    data = demo_spec_dict(folder, rows=ROWS, history=False, **({"source": source} if source else {}))
    data["algorithm"] = {"name": algorithm}
    data["requirements"] = {**REQUIREMENTS[algorithm], "suppression_limit": 0.05}
    if algorithm == "bucket":  # it protects one sensitive attribute
        data["sensitive_attributes"], data["insensitive"] = ["disease"], [*data["insensitive"], "income"]
    return data


def released(data: dict[str, Any], on_progress: Any = None) -> tuple[Any, Any, Any]:
    """The release steps but the diagnosis (its plots cost seconds): loaded, candidate, check."""
    spec = ReleaseSpec.from_dict(data)
    loaded = load_step(spec)
    candidate = anonymize_step(spec, loaded, on_progress=on_progress)
    check = check_step(spec, candidate)
    assert check.passed, check.summary()
    publish_step(spec, candidate, check)
    return loaded, candidate, check


def no_rows_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the source was read into pandas")

    monkeypatch.setattr(sources, "read_source", refuse)
    monkeypatch.setattr(pd, "read_sql_table", refuse)


@pytest.mark.parametrize("algorithm", sorted(REQUIREMENTS))
def test_a_duckdb_source_is_anonymized_block_by_block_as_in_memory(
    algorithm: str, small_blocks: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, memory, memory_check = released(spec_dict(tmp_path / "memory", algorithm))
    db = census_db(tmp_path / "source.duckdb")
    # Far below the table: the block route does not read the rows, so the limit does not apply.
    data = spec_dict(tmp_path / "engine", algorithm, duckdb=str(db), table="census", max_rows_in_memory=50)
    no_rows_read(monkeypatch)
    blocks: list[int] = []
    applied = sql_engine.SqlTable.blocks_applied

    def counted(self: Any, keys: pd.DataFrame, block_column: str, *args: Any, **kwargs: Any) -> Any:
        blocks.append(int(keys[block_column].nunique()))
        return applied(self, keys, block_column, *args, **kwargs)

    monkeypatch.setattr(sql_engine.SqlTable, "blocks_applied", counted)
    progress: list[tuple[str, int, int | None]] = []
    loaded, candidate, check = released(data, on_progress=lambda *call: progress.append(call))
    assert loaded.kind == "blocks" and loaded.source == "duckdb:census"
    assert len(blocks) == 1 and blocks[0] > 2  # one pass of the engine, the table cut into blocks
    # The database runs the blocks here, one at a time: the anonymize step reports each.
    assert progress == [("anonymize", done, blocks[0]) for done in range(1, blocks[0] + 1)]
    assert candidate.rows_in == ROWS == candidate.rows_out + candidate.suppressed
    assert candidate.suppressed == memory.suppressed
    assert candidate.ncp == pytest.approx(memory.ncp)
    rows = published_rows(tmp_path / "engine" / "release.duckdb", "census_release")
    assert "person_id" not in rows.columns
    assert multiset(rows).equals(multiset(published_rows(tmp_path / "memory" / "release.duckdb", "census_release")))
    assert {c.name: (c.passed, c.observed) for c in check.checks} == {
        c.name: (c.passed, c.observed) for c in memory_check.checks
    }
    tables = {r[0] for r in duckdb.connect(str(db), read_only=True).execute("SHOW TABLES").fetchall()}
    assert tables == {"census"}  # the keys and the output were temporary tables of the session


def test_a_model_that_needs_the_whole_table_reads_the_rows_and_says_why(tmp_path: Path) -> None:
    db = census_db(tmp_path / "source.duckdb")
    data = spec_dict(tmp_path / "t", "k-member", duckdb=str(db), table="census", max_rows_in_memory=50)
    data["requirements"] |= {"t": 0.4}
    with pytest.raises(ConfigurationError, match=r"300 rows, more than .*block by block.*compares classes"):
        run_release(ReleaseSpec.from_dict(data))
    data["source"]["max_rows_in_memory"] = 10_000  # within the limit: the rows path, as before
    assert load_step(ReleaseSpec.from_dict(data)).kind == "rows"


def test_a_block_that_cannot_meet_the_requirements_stages_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = census_db(tmp_path / "source.duckdb")
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path / "t", "k-member", duckdb=str(db), table="census"))

    def infeasible(self: Any, request: Any) -> Any:
        raise InfeasibleAnonymizationError("k-member: 3 records cannot form a class of 4")

    loaded = load_step(spec)
    assert loaded.kind == "blocks"
    monkeypatch.setattr(clustering.KMemberAnonymizer, "run", infeasible)
    with pytest.raises(InfeasibleAnonymizationError, match="^k-member: 3 records cannot form a class of 4$"):
        anonymize_step(spec, loaded)  # the flow reports it as "requirements cannot be met" (exit 1)
    assert not list((tmp_path / "t" / "work").rglob("candidate*"))  # nothing staged (the spec keeps its workdir)
    assert not (tmp_path / "t" / "release.duckdb").exists()


def test_a_history_s_first_release_takes_the_block_route_and_the_next_reads_the_rows(
    small_blocks: None, tmp_path: Path
) -> None:
    """The gate's composition check judges the block route's candidate; steering against a release needs the rows."""
    db = census_db(tmp_path / "source.duckdb")
    data = spec_dict(tmp_path / "h", "k-member", duckdb=str(db), table="census") | {"history": True}
    loaded, candidate, check = released(data)
    assert loaded.kind == "blocks" and candidate.rows_in == ROWS == candidate.rows_out + candidate.suppressed
    assert [c.passed for c in check.checks if c.name == "composition"] == [True]
    assert load_step(ReleaseSpec.from_dict(data)).kind == "rows"  # the history now holds a release
