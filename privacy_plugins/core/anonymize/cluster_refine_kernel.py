"""Compiled dissolution walk of the local search (numba, optional): :func:`cluster_refine._dissolve_round`'s inner loop.

A dissolution sends a cluster's records one by one (cheapest first) to their cheapest other
cluster, updating that cluster's box, size and cost and its column of prices after every
record. In numpy that is ~15 array calls per record, the local search's largest cost
after the move rounds (Adult k = 20: ~1 s over ~7,000 records). Used only when ``numba``
is importable and every QI has a span table (``CostSpace.flat``); the numpy walk makes the
same choices with the same arithmetic (first index among equal prices), tested equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "walk"]


@_njit
def _walk(
    added: Any,
    low: Any,
    high: Any,
    size: Any,
    cost: Any,
    member_codes: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    limit: float,
) -> Any:  # pragma: no cover - compiled; covered through walk where numba is installed
    m, n_groups = added.shape
    n_qis = low.shape[0]
    row_min = np.empty(m)
    row_at = np.empty(m, dtype=np.int64)
    for i in range(m):
        at = 0
        for t in range(1, n_groups):
            if added[i, t] < added[i, at]:
                at = t
        row_min[i], row_at[i] = added[i, at], at
    targets = np.empty(m, dtype=np.int64)
    left = np.ones(m, dtype=np.bool_)
    n_left = m
    # Clusters changed, in order of first change, and their state before it (restored on failure).
    changed = np.empty(m, dtype=np.int64)
    was = np.full(n_groups, -1, dtype=np.int64)
    saved_low = np.empty((n_qis, m), dtype=np.int64)
    saved_high = np.empty((n_qis, m), dtype=np.int64)
    saved_size = np.empty(m)
    saved_cost = np.empty(m)
    n_changed = 0
    total = 0.0
    while n_left > 0 and total < limit:
        i = 0
        value = row_min[0] if left[0] else np.inf
        for j in range(1, m):
            v = row_min[j] if left[j] else np.inf
            if v < value:
                i, value = j, v
        if not left[i] or not np.isfinite(row_min[i]):
            total = np.inf  # a record fits nowhere: no dissolution
            break
        to = row_at[i]
        total += added[i, to]
        targets[i], left[i] = to, False
        n_left -= 1
        if was[to] < 0:
            was[to] = n_changed
            changed[n_changed] = to
            for q in range(n_qis):
                saved_low[q, n_changed], saved_high[q, n_changed] = low[q, to], high[q, to]
            saved_size[n_changed], saved_cost[n_changed] = size[to], cost[to]
            n_changed += 1
        for q in range(n_qis):
            low[q, to] = min(low[q, to], member_codes[q, i])
            high[q, to] = max(high[q, to], member_codes[q, i])
        size[to] += 1
        c = 0.0
        for q in range(n_qis):
            c += flat[offsets[q] + low[q, to] * strides[q] + high[q, to]]
        cost[to] = c
        for j in range(m):
            column = 0.0
            for q in range(n_qis):
                lo = min(low[q, to], member_codes[q, j])
                hi = max(high[q, to], member_codes[q, j])
                column += flat[offsets[q] + lo * strides[q] + hi]
            added[j, to] = (size[to] + 1) * column - size[to] * cost[to]
        for j in range(m):
            if not left[j]:
                continue
            fresh = added[j, to]
            if row_at[j] == to:  # its cheapest cluster changed: look again
                at = 0
                for t in range(1, n_groups):
                    if added[j, t] < added[j, at]:
                        at = t
                row_min[j], row_at[j] = added[j, at], at
            elif fresh < row_min[j] or (fresh == row_min[j] and to < row_at[j]):
                row_min[j], row_at[j] = fresh, to
    ok = n_left == 0 and total < limit
    if not ok:
        for k in range(n_changed):
            back = changed[k]
            for q in range(n_qis):
                low[q, back], high[q, back] = saved_low[q, k], saved_high[q, k]
            size[back], cost[back] = saved_size[k], saved_cost[k]
    return ok, targets, changed[:n_changed].copy()


def walk(
    added: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    member_codes: np.ndarray,
    space: Any,
    limit: float,
) -> tuple[bool, np.ndarray, list[int]]:
    """Whether the records (``member_codes``, prices ``added``) all find a place for a total below ``limit``.

    Returns that, each record's target and the clusters changed (boxes, sizes and costs
    updated in place when it succeeds, restored when not).
    """
    ok, targets, changed = _walk(
        added, low, high, size, cost, np.ascontiguousarray(member_codes), space.flat,
        space.offsets.ravel(), space.strides.ravel(), float(limit),
    )  # fmt: skip
    return bool(ok), targets, changed.tolist()
