"""Random small tables with random hierarchies, shared by the anonymizer tests."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from hypothesis import strategies as st

from privacy_plugins.core.hierarchies import Hierarchy


@dataclass
class Problem:
    frame: pd.DataFrame
    quasi_identifiers: list[str]
    hierarchies: dict[str, Hierarchy]


def grouping_rows(n_values: int, bases: list[int]) -> list[list[str]]:
    """Leaves 0..n-1; level j groups leaves by value // base**j; the top is '*'."""
    rows = []
    for value in range(n_values):
        row = [str(value)]
        divisor = 1
        for level, base in enumerate(bases, start=1):
            divisor *= base
            row.append(f"L{level}:{value // divisor}")
        row.append("*")
        rows.append(row)
    return rows


@st.composite
def problems(draw: st.DrawFn, max_rows: int = 40) -> Problem:
    n_qis = draw(st.integers(1, 3))
    n_rows = draw(st.integers(2, max_rows))
    columns: dict[str, list[object]] = {}
    hierarchies = {}
    for i in range(n_qis):
        n_values = draw(st.integers(1, 6))
        bases = draw(st.lists(st.integers(2, 3), min_size=0, max_size=2))
        name = f"q{i}"
        columns[name] = draw(st.lists(st.integers(0, n_values - 1), min_size=n_rows, max_size=n_rows))
        hierarchies[name] = Hierarchy.from_rows(name, grouping_rows(n_values, bases))
    columns["s"] = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=n_rows, max_size=n_rows))
    columns["x"] = draw(st.lists(st.integers(0, 4), min_size=n_rows, max_size=n_rows))
    columns["bound"] = draw(st.lists(st.sampled_from([0.34, 0.5, 0.75, 1.0]), min_size=n_rows, max_size=n_rows))
    columns["pid"] = [f"id{i}" for i in range(n_rows)]
    return Problem(pd.DataFrame(columns), [f"q{i}" for i in range(n_qis)], hierarchies)
