"""δ-presence in the engine (issue 30): the snapshot search honours the research subset, the engine cuts it.

The in-database release equals the in-memory one: the same node, the same published multiset
(the subset's rows only, no flag column) and the same accounting (in = out + suppressed + out of scope).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_checks import engine_table, multiset

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import DeltaPresence, KAnonymity
from privacy_plugins.engines import EngineTable, anonymize_in_engine

AGES = list(range(20, 36))
ZIPS = ["4790", "4791", "4760", "4761"]
HIERARCHIES = {
    "age": Hierarchy.from_rows("age", [[a, f"{a // 4 * 4}-{a // 4 * 4 + 3}", f"{a // 8 * 8}+", "*"] for a in AGES]),
    "zip": Hierarchy.from_rows("zip", [[z, z[:3] + "*", "*"] for z in ZIPS]),
}


def population(seed: int, rows: int = 240) -> pd.DataFrame:
    """age, zip: quasi-identifiers; study: the research subset flag (the model's); note: insensitive."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.choice(AGES, rows),
            "zip": rng.choice(ZIPS, rows),
            "study": rng.random(rows) < 0.3,
            "note": rng.choice(["a", "b", "c"], rows),
        }
    )


def assert_same_subset_release(table: EngineTable, frame: pd.DataFrame, *, limit: float, method: str) -> None:
    """``anonymize_in_engine`` on ``table`` publishes what ``anonymize`` publishes from ``frame``, counts alike."""
    models = [KAnonymity(3), DeltaPresence(0.0, 0.5, "study")]
    problem = {"quasi_identifiers": ["age", "zip"], "hierarchies": HIERARCHIES, "models": models}
    reference = anonymize(frame, insensitive=["note"], suppression_limit=limit, **problem)  # study: the model's
    done = anonymize_in_engine(table, method=method, suppression_limit=limit, **problem)  # type: ignore[arg-type]
    assert done.solution.details.levels == reference.details.levels
    published = done.published.to_pandas()
    assert list(published.columns) == list(reference.table.columns) == ["age", "zip", "note"]
    assert multiset(published).equals(multiset(reference.table))
    assert (done.rows_in, done.rows_out, done.suppressed, done.out_of_scope) == (
        reference.rows_in,
        reference.rows_out,
        reference.suppressed,
        reference.out_of_scope,
    )
    assert done.rows_in == done.rows_out + done.suppressed + done.out_of_scope == len(frame)
    assert done.out_of_scope == int((~frame["study"]).sum()) > 0
    assert len(published) == done.rows_out
    # δ-presence's verdict from the core's re-check of the whole generalized table, as in memory
    assert [r.model for r in done.checked] == [r.model for r in reference.models]
    assert [r.passed for r in done.checked] == [r.passed for r in reference.models]


@pytest.mark.parametrize(
    ("kind", "seed", "limit", "method"),
    [("pandas", 1, 0.0, "case"), ("sqlite", 2, 0.05, "case"), ("duckdb", 3, 0.1, "join"), ("duckdb", 4, 0.0, "case")],
)
def test_the_in_engine_release_of_a_research_subset_equals_the_in_memory_one(
    kind: str, seed: int, limit: float, method: str, tmp_path: Path
) -> None:
    frame = population(seed)  # seeds 2 and 3 suppress subset rows
    assert_same_subset_release(engine_table(kind, frame, tmp_path), frame, limit=limit, method=method)
