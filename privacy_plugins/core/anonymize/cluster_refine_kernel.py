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

from privacy_plugins.core.anonymize.cluster_greedy import stable_order
from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

#: Relative margin around a skip bound's threshold inside which :func:`dissolve_scan` leaves the test to numpy's
#: sums (a sum in order and numpy's pairwise sum differ by a few ulps: the same skips either way).
_SUM_MARGIN = 1e-9
#: Relative slack of the pricing bound against a ceiling (rounding of the two sums): never prunes a listed price.
_SLACK = 1e-9

__all__ = [
    "AVAILABLE",
    "candidates",
    "catch_up",
    "dissolve_prices",
    "dissolve_scan",
    "price",
    "regrow",
    "savings",
    "walk",
]


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
def _price(
    codes: Any, rows: Any, size: Any, cost: Any, low: Any, pair: Any, ceiling: Any, cheapest: Any
) -> None:  # pragma: no cover - compiled; covered through price where numba is installed
    first, first_added, second, second_added = cheapest
    n_groups = size.shape[0]
    n_qis = codes.shape[0]
    qa, qb = pair[0], pair[1]
    w = 0.0 if qa == qb else 1.0  # one QI's growth when the pair is one QI
    grown, held = size + 1.0, size * cost  # the same products as per cluster below, made once
    # bound[c] = D(c) + (|c| + 1) · (growth of c's spans of QIs qa and qb): at most what r adds to c.
    base = np.empty(n_groups)
    for c in range(n_groups):
        base[c] = cost[c] - grown[c] * (rows[qa][low[qa, c], c] + w * rows[qb][low[qb, c], c])
    # Whether each cluster's bound is within the ceiling, as bytes read eight at a time: at Adult's ~3 %
    # most words are zero and skipped (tp28i: the listing ~25 % faster than a branch-free pass per cluster).
    n_words = (n_groups + 7) // 8
    within = np.zeros(8 * n_words, dtype=np.uint8)  # the padding stays 0
    words = within.view(np.uint64)
    listed = np.empty(8 * n_words, dtype=np.int64)
    union = np.empty(n_groups)
    for u in range(codes.shape[1]):
        top = ceiling[u]
        slack = top + _SLACK * (1.0 + abs(top))  # rounding: never leave out a cluster adding at most ``top``
        row_a, row_b = rows[qa][codes[qa, u]], rows[qb][codes[qb, u]]
        for c in range(n_groups):
            within[c] = base[c] + grown[c] * (row_a[c] + w * row_b[c]) <= slack
        m = 0
        for word in range(n_words):
            if words[word] == 0:
                continue
            for c in range(8 * word, 8 * word + 8):
                listed[m] = c
                m += within[c]
        # The listed clusters' D(c ∪ r), QI by QI in order (the same sums as a full row).
        row = rows[0][codes[0, u]]
        for i in range(m):
            union[i] = row[listed[i]]
        for q in range(1, n_qis):
            row = rows[q][codes[q, u]]
            for i in range(m):
                union[i] += row[listed[i]]
        f, fa, s, sa = n_groups, np.inf, n_groups, np.inf
        for i in range(m):
            c = listed[i]
            value = grown[c] * union[i] - held[c]
            if value > top:
                continue
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
    ceiling: np.ndarray | None = None,
    low: np.ndarray | None = None,
    pair: tuple[int, int] = (0, 0),
) -> None:
    """Units (sample ``codes``) priced against every cluster: ``cheapest`` set to their two cheapest.

    What :meth:`cluster_refine._Moves._price` computes (the same arithmetic, the two least by
    (price, cluster id) among the clusters adding at most the unit's ``ceiling``; ``n_groups`` and
    ``inf`` where there is none), one unit at a time over one row of joined costs: no
    ``units × clusters`` temporaries (numpy's blocks of 256 units gather megabytes per QI; Adult
    k = 10, 11k units × 2k clusters: ~0.3 → ~0.05 s). ``ceiling``: per unit (default: none).

    tp28i: with a ceiling, only the clusters whose bound ``D(c) + (|c| + 1) · (growth of c's spans
    of the QIs in `pair`)`` — at most what the unit adds to ``c``, spans only growing — is within it
    are priced in full (``low``: the clusters' low codes, for their own spans); Adult k = 5, ceilings
    at the records' savings: ~3 % of the clusters, the pricing ~0.07 → ~0.04 s.
    """
    if low is None:
        if ceiling is not None:
            raise ValueError("a ceiling needs the clusters' low codes (their own spans bound the prices)")
        low = np.zeros((codes.shape[0], size.shape[0]), dtype=np.int64)  # no ceiling: the bound is not read
    if ceiling is None:
        ceiling = np.full(codes.shape[1], np.inf)
    _price(np.ascontiguousarray(codes), rows, size, cost, np.ascontiguousarray(low, dtype=np.int64),
           np.array(pair, dtype=np.int64), np.ascontiguousarray(ceiling, dtype=np.float64), cheapest)  # fmt: skip


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
    stamps = changed_at[:n_groups]
    clusters = stable_order(int(stamps.max(initial=0)) - stamps) if n_groups else np.zeros(0, dtype=np.int64)
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
    stamp, changed_at, first, second, first_added, second_added, ceiling = prices
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
            if settled and saving[i] - added <= eps and saving[i] <= ceiling[u]:
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
    settled ones left out (``prices``: the unit stamps, the clusters' last changes, the units' two
    cheapest with their prices and their ceilings, as ``_Moves._settled``), the first ``per_group``
    left per group, all by saving, largest first (ties: the earlier position), the first ``limit`` — one
    compiled pass keeping a short sorted list per group and one sort of the kept (numpy: a pass of grouped
    maxima per leader, then sorts of every leader; Adult k = 5: ~0.05 s of the move rounds' ~0.15).
    """
    return _candidates(np.ascontiguousarray(saving, dtype=np.float64), np.ascontiguousarray(group, dtype=np.int64),
                       np.ascontiguousarray(unit, dtype=np.int64), int(n_groups), int(lead), int(per_group),
                       int(limit), float(eps), prices)  # fmt: skip


def _ids(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays as contiguous int64 (the kernels' index arrays)."""
    return tuple(np.ascontiguousarray(a, dtype=np.int64) for a in arrays)


def _flat(space: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cost space's tables as the kernels read them: the flat tables, each QI's offset and stride."""
    return space.flat, space.offsets.ravel(), space.strides.ravel()


@_njit
def _savings(
    codes: Any,
    members: Any,
    local: Any,
    clusters: Any,
    low: Any,
    high: Any,
    size: Any,
    cost: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
) -> Any:  # pragma: no cover - compiled; covered through savings where numba is installed
    n_qis, m, n_local = codes.shape[0], members.shape[0], clusters.shape[0]
    box = np.zeros(m)
    n_low = np.empty(n_local, dtype=np.int64)
    n_high = np.empty(n_local, dtype=np.int64)
    next_low = np.empty(n_local, dtype=np.int64)
    next_high = np.empty(n_local, dtype=np.int64)
    for q in range(n_qis):
        for j in range(n_local):
            n_low[j], n_high[j] = 0, 0
            next_low[j], next_high[j] = high[q, clusters[j]], low[q, clusters[j]]
        for i in range(m):  # per cluster: how many hold its lowest / highest code, the next codes inside
            j = local[i]
            c, lo, hi = codes[q, members[i]], low[q, clusters[j]], high[q, clusters[j]]
            if c == lo:
                n_low[j] += 1
            elif c < next_low[j]:
                next_low[j] = c
            if c == hi:
                n_high[j] += 1
            elif c > next_high[j]:
                next_high[j] = c
        for i in range(m):
            j = local[i]
            c, lo, hi = codes[q, members[i]], low[q, clusters[j]], high[q, clusters[j]]
            new_low = next_low[j] if c == lo and n_low[j] == 1 else lo
            new_high = next_high[j] if c == hi and n_high[j] == 1 else hi
            box[i] += flat[offsets[q] + new_low * strides[q] + new_high]
    out = np.empty(m)
    for i in range(m):
        g = clusters[local[i]]
        out[i] = size[g] * cost[g] - (size[g] - 1) * box[i]
    return out


def savings(
    codes: np.ndarray,
    members: np.ndarray,
    local: np.ndarray,
    clusters: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    space: Any,
) -> np.ndarray:
    """``|A| · D(A) − (|A| − 1) · D(A ∖ r)`` for the records ``members`` (columns of ``codes``) of ``clusters``.

    ``local``: each member's cluster as an index into ``clusters``; ``low`` / ``high`` / ``size`` /
    ``cost``: every cluster's. What ``_Moves._savings``'s numpy computes QI by QI (``_without``: the
    box without the record, its cost summed from 0 in QI order, the same floats), in one pass per QI
    without temporaries (tp28i: numpy's ~10 array calls per QI cost more than the work for the few
    clusters a round changes, and its ``minimum.at`` over every record makes the first savings).
    """
    return np.asarray(_savings(codes, *_ids(members, local, clusters), low, high, size, cost, *_flat(space)))


@_njit
def _regrow(
    codes: Any,
    members: Any,
    local: Any,
    clusters: Any,
    low: Any,
    high: Any,
    size: Any,
    cost: Any,
    rows: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
) -> None:  # pragma: no cover - compiled; covered through regrow where numba is installed
    n_qis, n_local = codes.shape[0], clusters.shape[0]
    for j in range(n_local):
        size[clusters[j]] = 0.0
    for i in range(members.shape[0]):
        size[clusters[local[i]]] += 1.0
    for q in range(n_qis):
        for j in range(n_local):
            low[q, clusters[j]], high[q, clusters[j]] = np.iinfo(np.int64).max, -1
        for i in range(members.shape[0]):
            g, c = clusters[local[i]], codes[q, members[i]]
            low[q, g] = min(low[q, g], c)
            high[q, g] = max(high[q, g], c)
    for j in range(n_local):
        g = clusters[j]
        total = 0.0
        for q in range(n_qis):
            total += flat[offsets[q] + low[q, g] * strides[q] + high[q, g]]
        cost[g] = total
    for q in range(n_qis):
        row = rows[q]
        for v in range(row.shape[0]):  # row by row: contiguous when the clusters are (every cluster)
            for j in range(n_local):
                g = clusters[j]
                row[v, g] = flat[offsets[q] + min(low[q, g], v) * strides[q] + max(high[q, g], v)]


def regrow(
    codes: np.ndarray,
    members: np.ndarray,
    local: np.ndarray,
    clusters: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    rows: tuple[np.ndarray, ...],
    space: Any,
) -> None:
    """``clusters``' boxes, sizes, costs and span columns made afresh from their records ``members``, in place.

    ``local``: each member's cluster as an index into ``clusters`` (every cluster has a member).
    What ``_Moves._changed``'s numpy makes (``boxes``, ``bincount``, ``box_costs`` summed from 0 in
    QI order, ``_span_rows``' columns from the same tables: the same values) in one call instead of
    ~30 small array calls per round (tp28i).
    """
    _regrow(codes, *_ids(members, local, clusters), low, high, size, cost, rows, *_flat(space))


@_njit
def _dissolve_scan(
    codes: Any,
    by_group: Any,
    starts: Any,
    order: Any,
    at: int,
    touched: Any,
    loss: Any,
    rows: Any,
    low: Any,
    high: Any,
    size: Any,
    cost: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    eps: float,
    margin: float,
) -> Any:  # pragma: no cover - compiled; covered through dissolve_scan where numba is installed
    n_qis, n_groups = codes.shape[0], size.shape[0]
    closed = np.empty(n_groups, dtype=np.bool_)
    for i in range(at, order.shape[0]):
        a = order[i]
        if touched[a] or loss[a] <= eps:
            continue
        m = starts[a + 1] - starts[a]
        member_codes = np.empty((n_qis, m), dtype=codes.dtype)
        for j in range(m):
            for q in range(n_qis):
                member_codes[q, j] = codes[q, by_group[starts[a] + j]]
        closed[:] = touched
        closed[a] = True
        nearest, added = np.empty((2, m)), np.empty((m, n_groups))
        row_min, row_at = np.empty(m), np.empty(m, dtype=np.int64)
        _dissolve_prices(member_codes, rows, size, cost, closed, nearest, added, row_min, row_at)
        limit = loss[a] - eps
        tighter = limit + eps * (1.0 + loss[a])
        first, second = 0.0, 0.0
        for j in range(m):
            first += nearest[0, j]
            second += nearest[1, j]
        near = margin * (1.0 + abs(limit))
        if first >= limit + near or second >= tighter + near:
            continue  # skipped whatever the summation order
        if first >= limit - near or second >= tighter - near:
            return i, nearest, added, row_min, row_at, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), 1
        ok, targets, changed = _walk(added, low, high, size, cost, member_codes, flat, offsets, strides, limit,
                                     row_min.copy(), row_at.copy())  # fmt: skip
        if ok:
            return i, nearest, added, row_min, row_at, targets, changed, 2
    none = np.empty(0, dtype=np.int64)
    return order.shape[0], np.empty((0, 0)), np.empty((0, 0)), np.empty(0), none, none, none, 0


def dissolve_scan(
    codes: np.ndarray,
    by_group: np.ndarray,
    starts: np.ndarray,
    order: np.ndarray,
    at: int,
    touched: np.ndarray,
    loss: np.ndarray,
    rows: tuple[np.ndarray, ...],
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    space: Any,
    eps: float,
) -> tuple[int, int, np.ndarray, list[int]]:
    """From ``order[at]`` on, the first candidate cluster whose dissolution succeeds: next position, it, targets, grown.

    What ``_dissolve_round``'s loop does per candidate (tp28i), in one call until a walk succeeds:
    skip a touched or lossless cluster, price its records (``by_group[starts[a]:starts[a + 1]]``, the
    others ``closed`` as ``touched``) with :func:`dissolve_prices`, skip it when either bound rules the
    walk out, else :func:`walk` it (a failed walk restores the boxes: nothing changed, the next is tried).
    A bound's sum within a relative :data:`_SUM_MARGIN` of its threshold is judged by numpy's sum here
    (as the Python loop did; summed in order the ulps may differ), and the walk then runs from here.
    Returns ``(len(order), -1, …)`` when none succeeds; boxes, sizes and costs change in place.
    """
    args = (codes, by_group, starts, order, at, touched, loss, rows, low, high, size, cost, *_flat(space), float(eps))
    while True:
        i, nearest, added, row_min, row_at, targets, changed, status = _dissolve_scan(*args, _SUM_MARGIN)
        if status == 0:
            return int(i), -1, targets, []
        a = int(order[i])
        if status == 2:
            return int(i) + 1, a, targets, changed.tolist()
        limit = float(loss[a]) - eps  # close to a threshold: numpy's sums decide, as the Python loop's
        if float(nearest[0].sum()) >= limit or float(nearest[1].sum()) >= limit + eps * (1.0 + float(loss[a])):
            args = (*args[:4], int(i) + 1, *args[5:])
            continue
        ok, targets, grown = walk(added, low, high, size, cost, codes[:, by_group[starts[a] : starts[a + 1]]], space,
                                  limit, (row_min, row_at))  # fmt: skip
        if ok:
            return int(i) + 1, a, targets, grown
        args = (*args[:4], int(i) + 1, *args[5:])
