"""Hypothesis strategies shared by the diagnosis tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Table = dict[str, list[Any]]


@st.composite
def tables(draw: st.DrawFn, max_qis: int = 4, max_rows: int = 20) -> tuple[Table, list[str]]:
    """Small tables over tiny alphabets (so classes repeat), with missing values, and a sensitive 's'."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_qis))
    table: Table = {}
    for i in range(d):
        size = draw(st.integers(1, 4))
        pool: list[Any] = list(range(size)) if draw(st.booleans()) else [f"v{j}" for j in range(size)]
        if draw(st.booleans()):
            pool.append(None)
        table[f"q{i}"] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    values = ["flu", "hiv", "cancer", None][: draw(st.integers(1, 4))]
    table["s"] = draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
    return table, [f"q{i}" for i in range(d)]
