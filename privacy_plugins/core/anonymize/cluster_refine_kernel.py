"""Compiled loops of the local search (numba, optional): the dissolution walk and the move rounds' catch-up.

:func:`catch_up` compares each unit whose kept two cheapest clusters are still exact with the
clusters changed since it was priced (``_Moves._catch_up``'s numpy, one unit at a time, the
same prices and the same tie rule: lower price, then lower cluster id). The walk:

A dissolution sends a cluster's records one by one (cheapest first) to their cheapest other
cluster, updating that cluster's box, size and cost and its column of prices after every
record. In numpy that is ~15 array calls per record, the local search's largest cost
after the move rounds (Adult k = 20: ~1 s over ~7,000 records). Used only when ``numba``
is importable and every QI has a span table (``CostSpace.flat``); the numpy walk makes the
same choices with the same arithmetic (first index among equal prices), tested equal.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "candidates", "catch_up", "dissolve_prices", "price", "walk"]


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
    row_min: Any,
    row_at: Any,
) -> Any:  # pragma: no cover - compiled; covered through walk where numba is installed
    """``row_min``, ``row_at``: each record's cheapest cluster (first among ties), :func:`_row_minima`."""
    m, n_groups = added.shape
    n_qis = low.shape[0]
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


@_njit
def _row_minima(added: Any) -> Any:  # pragma: no cover - compiled; covered through walk where numba is installed
    """Each row's least value and its first column."""
    m, n_groups = added.shape
    row_min = np.empty(m)
    row_at = np.empty(m, dtype=np.int64)
    for i in range(m):
        at = 0
        for t in range(1, n_groups):
            if added[i, t] < added[i, at]:
                at = t
        row_min[i], row_at[i] = added[i, at], at
    return row_min, row_at


def walk(
    added: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    member_codes: np.ndarray,
    space: Any,
    limit: float,
    minima: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[bool, np.ndarray, list[int]]:
    """Whether the records (``member_codes``, prices ``added``) all find a place for a total below ``limit``.

    Returns that, each record's target and the clusters changed (boxes, sizes and costs
    updated in place when it succeeds, restored when not). ``minima``: each row's least price and
    its first cluster when known (:func:`dissolve_prices`), else found here.
    """
    row_min, row_at = minima if minima is not None else _row_minima(added)
    ok, targets, changed = _walk(
        added, low, high, size, cost, np.ascontiguousarray(member_codes), space.flat,
        space.offsets.ravel(), space.strides.ravel(), float(limit), row_min.copy(), row_at.copy(),
    )  # fmt: skip
    return bool(ok), targets, changed.tolist()


@_njit
def _catch_up(
    codes: Any,
    stamp: Any,
    clusters: Any,
    changed_at: Any,
    rows: Any,
    size: Any,
    cost: Any,
    first: Any,
    first_added: Any,
    second: Any,
    second_added: Any,
) -> None:  # pragma: no cover - compiled; covered through catch_up where numba is installed
    n_qis, n_units = codes.shape
    for u in range(n_units):
        f, fa, s, sa = first[u], first_added[u], second[u], second_added[u]
        for i in range(clusters.shape[0]):
            c = clusters[i]
            if changed_at[c] < stamp[u]:
                break  # sorted: the rest changed before the unit was priced
            union = 0.0
            for q in range(n_qis):
                union += rows[q][codes[q, u], c]
                # Costs are non-negative and rounding is monotone: a partial sum above the second
                # cheapest stays above it (skipped unpriced; the same two kept).
                if (size[c] + 1) * union - size[c] * cost[c] > sa:
                    break
            value = (size[c] + 1) * union - size[c] * cost[c]
            if value > sa:
                continue
            if value < fa or (value == fa and c < f):
                f, fa, s, sa = c, value, f, fa
            elif value < sa or (value == sa and c < s):
                s, sa = c, value
        first[u], first_added[u], second[u], second_added[u] = f, fa, s, sa


@partial(_njit, inline="always")
def _joined_row(codes: Any, i: int, rows: Any, union: Any, n_qis: int) -> None:  # pragma: no cover - compiled
    """``union[c]`` = the first ``n_qis`` QIs' share of ``D(c ∪ r)`` for record ``i`` of ``codes``, every cluster ``c``.

    Summed QI by QI over contiguous span rows, in numpy's ``_joined`` order (the same sums; the
    first QI's row copied, as ``0 + x == x``). The callers add the last QI in their own pass over
    the clusters (one pass over ``union`` less per record).
    """
    if n_qis == 0:
        union[:] = 0.0
        return
    row = rows[0][codes[0, i]]
    for c in range(union.shape[0]):
        union[c] = row[c]
    for q in range(1, n_qis):
        row = rows[q][codes[q, i]]
        for c in range(union.shape[0]):
            union[c] += row[c]


@_njit
def _price(codes: Any, rows: Any, size: Any, cost: Any, cheapest: Any) -> None:  # pragma: no cover - compiled
    first, first_added, second, second_added = cheapest
    n_groups = size.shape[0]
    last = codes.shape[0] - 1
    union = np.empty(n_groups)
    grown, held = size + 1.0, size * cost  # the same products as per cluster below, made once
    for u in range(codes.shape[1]):
        _joined_row(codes, u, rows, union, last)
        row = rows[last][codes[last, u]]  # the last QI added in the pricing pass (one pass less)
        f, fa, s, sa = n_groups, np.inf, n_groups, np.inf
        for c in range(n_groups):
            value = grown[c] * (union[c] + row[c]) - held[c]
            if value < fa:
                f, fa, s, sa = c, value, f, fa
            elif value < sa:
                s, sa = c, value
        first[u], first_added[u], second[u], second_added[u] = f, fa, s, sa


@_njit
def _dissolve_prices(
    codes: Any, rows: Any, size: Any, cost: Any, closed: Any, nearest: Any, added: Any, row_min: Any, row_at: Any
) -> None:  # pragma: no cover - compiled; covered through dissolve_prices where numba is installed
    n_groups = size.shape[0]
    m = codes.shape[1]
    n_qis = codes.shape[0]
    union = np.empty(n_groups)
    for i in range(m):
        _joined_row(codes, i, rows, union, n_qis)
        low, share, least, at = np.inf, np.inf, np.inf, 0
        for c in range(n_groups):
            if closed[c]:
                added[i, c] = np.inf
                continue
            low = min(low, union[c])
            share = min(share, union[c] + size[c] * (union[c] - cost[c]) / m)
            value = (size[c] + 1) * union[c] - size[c] * cost[c]
            added[i, c] = value
            if value < least:  # as :func:`_row_minima`: the first column of the least (column 0 if none)
                least, at = value, c
        nearest[0, i], nearest[1, i], row_min[i], row_at[i] = low, share, least, at


def dissolve_prices(
    codes: np.ndarray, rows: tuple[np.ndarray, ...], size: np.ndarray, cost: np.ndarray, closed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """A dissolution's records (``codes``, ``(QIs, m)``) against every cluster, as ``_dissolve_round``'s numpy.

    Per record (``m`` of them), over the open clusters ``t``: its least ``D(t ∪ r)`` and least
    ``D(t ∪ r) + |t| · (D(t ∪ r) − D(t)) / m`` (rows of ``nearest``), what it adds to each cluster
    (``inf`` where ``closed``), and its least addition with the first cluster giving it (for
    :func:`walk`), one row at a time over contiguous span rows (no temporaries).

    Why the second: a dissolution grows each target ``t`` to ``t'`` and adds
    ``Σ_t (|t| + n_t) · D(t') − |t| · D(t)``; each of the ``n_t ≤ m`` records sent to ``t`` takes
    ``D(t ∪ r)`` and a ``1 / n_t`` share of ``|t| · (D(t') − D(t))``, so the sum over the records of
    the second row bounds the walk's total from below — tighter than the first.
    """
    m = codes.shape[1]
    nearest, row_min, row_at = np.empty((2, m)), np.empty(m), np.empty(m, dtype=np.int64)
    added = np.empty((m, size.shape[0]))
    _dissolve_prices(np.ascontiguousarray(codes), rows, size, cost, closed, nearest, added, row_min, row_at)
    return nearest, added, (row_min, row_at)


def price(
    codes: np.ndarray,
    rows: tuple[np.ndarray, ...],
    size: np.ndarray,
    cost: np.ndarray,
    cheapest: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Units (sample ``codes``) priced against every cluster: ``cheapest`` set to their two cheapest.

    What :meth:`cluster_refine._Moves._price` computes (the same arithmetic, the two least by
    (price, cluster id); ``n_groups`` and ``inf`` where there is no second), one unit at a time
    over one row of joined costs: no ``units × clusters`` temporaries (numpy's blocks of 256 units
    gather megabytes per QI; Adult k = 10, 11k units × 2k clusters: ~0.3 → ~0.05 s).
    """
    _price(np.ascontiguousarray(codes), rows, size, cost, cheapest)


def catch_up(
    codes: np.ndarray,
    stamp: np.ndarray,
    changed_at: np.ndarray,
    rows: tuple[np.ndarray, ...],
    size: np.ndarray,
    cost: np.ndarray,
    cheapest: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Units (sample ``codes``, ``(QIs, units)``), exact at round ``stamp``, compared with the clusters changed since.

    ``cheapest`` (first, its price, second, its price per unit) is updated in place to the two
    cheapest by (price, cluster id) of the kept two and every cluster with ``changed_at ≥ stamp``
    — what :meth:`cluster_refine._Moves._catch_up` keeps, one unit at a time without temporaries.
    ``rows``: the span tables of every QI (``rows[q][code, cluster]``).
    """
    n_groups = size.shape[0]
    clusters = np.argsort(-changed_at[:n_groups], kind="stable")
    first, first_added, second, second_added = cheapest
    _catch_up(
        np.ascontiguousarray(codes), stamp, clusters, changed_at, rows, size, cost, first, first_added, second,
        second_added,
    )  # fmt: skip


@_njit
def _slots(saving: Any, group: Any, n_groups: int, per_group: int) -> Any:  # pragma: no cover - compiled
    """Per group the positions of its ``per_group`` largest savings, largest first (ties: the earlier position)."""
    slots = np.full((n_groups, per_group), -1, dtype=np.int64)
    count = np.zeros(n_groups, dtype=np.int64)
    for i in range(saving.shape[0]):
        g, s = group[i], saving[i]
        c = count[g]
        if c == per_group:
            if not s > saving[slots[g, c - 1]]:
                continue  # not above the group's last leader (an equal saving came earlier: it stays)
            c -= 1
        else:
            count[g] = c + 1
        j = c
        while j > 0 and saving[slots[g, j - 1]] < s:
            slots[g, j] = slots[g, j - 1]
            j -= 1
        slots[g, j] = i
    return slots, count


@_njit
def _candidates(
    saving: Any, group: Any, unit: Any, n_groups: int, lead: int, per_group: int, limit: int, eps: float, prices: Any
) -> Any:  # pragma: no cover - compiled
    stamp, changed_at, first, second, first_added, second_added = prices
    slots, count = _slots(saving, group, n_groups, lead)
    keep = np.zeros(saving.shape[0], dtype=np.bool_)
    for g in range(n_groups):
        taken = 0
        for j in range(count[g]):
            if taken == per_group:
                break
            i = slots[g, j]
            u = unit[i]
            t = stamp[u]
            added = second_added[u] if first[u] == g else first_added[u]
            settled = t >= 0 and changed_at[g] < t and changed_at[first[u]] < t and changed_at[second[u]] < t
            if settled and saving[i] - added <= eps:
                continue
            keep[i] = True
            taken += 1
    picked = np.flatnonzero(keep)
    order = np.argsort(-saving[picked], kind="mergesort")
    return picked[order[:limit]]


def candidates(
    saving: np.ndarray,
    group: np.ndarray,
    unit: np.ndarray,
    n_groups: int,
    lead: int,
    per_group: int,
    limit: int,
    eps: float,
    prices: tuple[np.ndarray, ...],
) -> np.ndarray:
    """Positions of a move round's candidates among items (``saving``, ``group``, ``unit`` per item), in order.

    What ``_Moves.round``'s numpy picks: each group's ``lead`` largest savings (:func:`leaders`), the
    settled ones left out (``prices``: the unit stamps, the clusters' last changes and the units' two
    cheapest with their prices, as ``_Moves._settled``), the first ``per_group`` left per group, all by
    saving, largest first (ties: the earlier position), the first ``limit`` — one compiled pass keeping a
    short sorted list per group and one sort of the kept (numpy: a pass of grouped maxima per leader, then
    sorts of every leader; Adult k = 5: ~0.05 s of the move rounds' ~0.15).
    """
    return _candidates(np.ascontiguousarray(saving, dtype=np.float64), np.ascontiguousarray(group, dtype=np.int64),
                       np.ascontiguousarray(unit, dtype=np.int64), int(n_groups), int(lead), int(per_group),
                       int(limit), float(eps), prices)  # fmt: skip
