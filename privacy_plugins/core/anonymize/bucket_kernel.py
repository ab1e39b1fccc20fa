"""Compiled bucket clustering of one block (numba, optional): :func:`bucket_clustering.cluster_block` in one kernel.

Used only when ``numba`` is importable and every QI has a span table (``CostSpace.flat``);
otherwise the numpy loop of :mod:`~privacy_plugins.core.anonymize.bucket_clustering` runs.
Why a kernel: the greedy growth places one record per step (30k sequential steps on
Adult), each re-pricing the QIs whose span grew over the block's pool and testing the
buckets' loyalty; in numpy that is ~20 array calls per step, a floor of seconds.

Same algorithm, same tie rule (lowest seeded key among costs within ``1e-12`` of the
best), so it returns the numpy loop's clusters: the pool is kept compact by swap-removal,
which changes no choice because ties are decided by key, not by position.

**Units** (:func:`_cluster_units`, issue 28). Records with equal QIs cost the same against
any box, so the pool holds distinct QI tuples: a unit is priced once for all its records,
is allowed when one of its live records has a loyal value (its live values are one bit
mask), offers its live loyal record of lowest key (its records sorted by key), and leaves the
pool with its last record. Among units within ``1e-12`` of the best, the lowest such key wins:
exactly the record the record-level loop picks (Adult: 11k units for 30k records, ~4× less CPU).
Above 62 sensitive values the record kernel runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "cluster_block"]

_EPS = 1e-12


@_njit
def _loyal(
    in_cluster: Any, in_pool: Any, open_slots: int, pool: int, l: float, cap: int, tol: float, out: Any
) -> bool:  # pragma: no cover
    """``bucket_clustering.loyal_values`` into ``out``; whether any bucket is loyal."""
    n_values = in_pool.shape[0]
    remainder = int(np.floor((pool - open_slots) / l + tol))
    sum_lo, sum_hi, n_bad = 0, 0, 0
    for v in range(n_values):
        lo = max(0, in_pool[v] - remainder)
        hi = min(in_pool[v], cap - in_cluster[v])
        sum_lo += lo
        sum_hi += hi
        if lo > hi:
            n_bad += 1
    found = False
    for v in range(n_values):
        lo = max(0, in_pool[v] - remainder)
        hi = min(in_pool[v], cap - in_cluster[v])
        lo_v = max(0, in_pool[v] - 1 - remainder)
        hi_v = min(in_pool[v] - 1, cap - in_cluster[v] - 1)
        others_bad = n_bad - (1 if lo > hi else 0)
        s_lo = sum_lo - lo + lo_v
        s_hi = sum_hi - hi + hi_v
        ok = in_pool[v] >= 1 and lo_v <= hi_v and others_bad == 0 and s_lo <= open_slots - 1 <= s_hi
        out[v] = ok
        found = found or ok
    return found


@_njit
def _choose(total: Any, n_pool: int, allowed: Any, pvals: Any, pkeys: Any, largest: bool) -> int:  # pragma: no cover
    """Position in the pool of the best allowed cost (lowest key among ties within ``_EPS``); -1 if none."""
    best = 0.0
    found = False
    for i in range(n_pool):
        if not allowed[pvals[i]]:
            continue
        c = total[i]
        if not found or (c > best if largest else c < best):
            best, found = c, True
    if not found:
        return -1
    at = -1
    for i in range(n_pool):
        if allowed[pvals[i]] and abs(total[i] - best) <= _EPS and (at < 0 or pkeys[i] < pkeys[at]):
            at = i
    return at


@_njit
def _remove(
    i: int, n_pool: int, pool: Any, total: Any, terms: Any, pcodes: Any, pvals: Any, pkeys: Any
) -> None:  # pragma: no cover
    """Swap-remove position ``i`` of the pool (with its prices and its compact copies of codes, values, keys)."""
    j = n_pool - 1
    pool[i], pvals[i], pkeys[i], total[i] = pool[j], pvals[j], pkeys[j], total[j]
    for q in range(terms.shape[0]):
        terms[q, i] = terms[q, j]
        pcodes[q, i] = pcodes[q, j]


@_njit
def _row(lo: int, hi: int, base: int, stride: int, flat: Any, row: Any) -> None:  # pragma: no cover
    """The cost of the span ``lo..hi`` joined with every code of the QI (its first ``stride`` entries)."""
    for c in range(stride):
        row[c] = flat[base + min(lo, c) * stride + max(hi, c)]


@_njit
def _widen(codes: Any, r: int, low: Any, high: Any, changed: Any) -> None:  # pragma: no cover
    """The cluster's span per QI grown by column ``r`` of ``codes``; ``changed[q]``: whether QI q's grew."""
    for q in range(low.shape[0]):
        c = codes[q, r]
        changed[q] = c < low[q] or c > high[q]
        low[q] = min(low[q], c)
        high[q] = max(high[q], c)


@_njit
def _reprice(
    first: bool,
    changed: Any,
    low: Any,
    high: Any,
    offsets: Any,
    strides: Any,
    flat: Any,
    row: Any,
    pcodes: Any,
    n_pool: int,
    total: Any,
    terms: Any,
) -> None:  # pragma: no cover
    """Each pool entry's price of joining the cluster, D(c ∪ r) = Σ_q term_q(r), for the QIs whose span grew."""
    for q in range(low.shape[0]):
        if not (first or changed[q]):
            continue
        _row(low[q], high[q], offsets[q], strides[q], flat, row)
        for i in range(n_pool):
            fresh = row[pcodes[q, i]]
            if first:
                total[i] = fresh if q == 0 else total[i] + fresh
            else:
                total[i] += fresh - terms[q, i]
            terms[q, i] = fresh


@_njit
def _cluster_block(
    codes: Any,
    values: Any,
    keys: Any,
    n_values: int,
    s: int,
    l: float,
    tol: float,
    start: int,
    flat: Any,
    offsets: Any,
    strides: Any,
) -> tuple[Any, int]:  # pragma: no cover
    """Cluster ids (0…) for the block's records and the number of enlarged clusters."""
    n_qis, m = codes.shape
    counts = np.zeros(n_values, dtype=np.int64)
    for r in range(m):
        counts[values[r]] += 1
    group = np.full(m, -1, dtype=np.int64)
    pool = np.arange(m)
    pcodes = codes.copy()
    pvals = values.copy()
    pkeys = keys.copy()
    total = np.zeros(m)
    terms = np.zeros((n_qis, m))
    in_cluster = np.zeros(n_values, dtype=np.int64)
    empty = np.zeros(n_values, dtype=np.int64)
    loyal = np.zeros(n_values, dtype=np.bool_)
    low = np.zeros(n_qis, dtype=np.int64)
    high = np.zeros(n_qis, dtype=np.int64)
    changed = np.zeros(n_qis, dtype=np.bool_)
    row = np.zeros(strides.max() if n_qis else 0)
    n_pool, n_groups, enlarged, last = m, 0, 0, start
    while n_pool >= 2 * s:
        size = 0
        for trial in range(s, n_pool - s + 1):
            cap = int(np.floor(trial / l + tol))
            if _loyal(empty, counts, trial, n_pool, l, cap, tol, loyal):
                size = trial
                break
        if size == 0:
            break
        if size > s:
            enlarged += 1
        cap = int(np.floor(size / l + tol))
        # The start: the loyal record furthest from the last record placed.
        for i in range(n_pool):
            total[i] = 0.0
        for q in range(n_qis):
            _row(codes[q, last], codes[q, last], offsets[q], strides[q], flat, row)
            for i in range(n_pool):
                total[i] += row[pcodes[q, i]]
        at = _choose(total, n_pool, loyal, pvals, pkeys, True)
        in_cluster[:] = 0
        r = pool[at]
        for q in range(n_qis):
            low[q], high[q] = codes[q, r], codes[q, r]
        first = True
        for taken in range(1, size + 1):
            r = pool[at]
            group[r] = n_groups
            last = r
            v = values[r]
            in_cluster[v] += 1
            counts[v] -= 1
            _remove(at, n_pool, pool, total, terms, pcodes, pvals, pkeys)
            n_pool -= 1
            _widen(codes, r, low, high, changed)
            if taken == size:
                break
            # D(c ∪ r) = Σ_q term_q(r): only the QIs whose span just grew are recomputed.
            _reprice(first, changed, low, high, offsets, strides, flat, row, pcodes, n_pool, total, terms)
            first = False
            _loyal(in_cluster, counts, size - taken, n_pool, l, cap, tol, loyal)
            at = _choose(total, n_pool, loyal, pvals, pkeys, False)
        n_groups += 1
    for i in range(n_pool):
        group[pool[i]] = n_groups
    return group, enlarged


@_njit
def _choose_units(
    total: Any,
    n_pool: int,
    loyal_mask: int,
    pmask: Any,
    pool: Any,
    head: Any,
    stop: Any,
    rec_values: Any,
    rec_keys: Any,
    alive: Any,
    largest: bool,
    near: Any,
) -> tuple[int, int]:  # pragma: no cover
    """The pool position and the record of the best allowed unit: ``_choose`` over units.

    A unit stands for its records (equal QIs, so equal costs): allowed when one of its live records
    has a loyal value; among units within ``_EPS`` of the best, the live loyal record of lowest key —
    the record ``_choose`` picks among the records themselves. One pass keeps every unit within
    ``_EPS`` of the best so far in ``near`` (a superset of the final ties), the ties are read there.
    """
    best = 0.0
    found = False
    n_near = 0
    for i in range(n_pool):
        if pmask[i] & loyal_mask == 0:
            continue
        c = total[i]
        if not found or (c > best if largest else c < best):
            best, found = c, True
        if abs(c - best) <= _EPS:
            near[n_near] = i
            n_near += 1
    if not found:
        return -1, -1
    at, record = -1, -1
    for k in range(n_near):
        i = near[k]
        if abs(total[i] - best) > _EPS:
            continue
        u = pool[i]
        for j in range(head[u], stop[u]):  # records by key: the first live loyal one is the unit's best
            if alive[j] and (loyal_mask >> rec_values[j]) & 1:
                if record < 0 or rec_keys[j] < rec_keys[record]:
                    at, record = i, j
                break
    return at, record


@_njit
def _mask(loyal: Any) -> int:  # pragma: no cover
    out = 0
    for v in range(loyal.shape[0]):
        if loyal[v]:
            out |= 1 << v
    return out


@_njit
def _cluster_units(
    ucodes: Any,
    start_of: Any,
    rec_rows: Any,
    rec_values: Any,
    rec_keys: Any,
    umask: Any,
    m: int,
    n_values: int,
    s: int,
    l: float,
    tol: float,
    start: int,
    flat: Any,
    offsets: Any,
    strides: Any,
) -> tuple[Any, int]:  # pragma: no cover
    """``_cluster_block`` over units (distinct QI tuples; records sorted by unit, then key): the same clusters.

    Pricing and choosing run over the units (Adult: 11k for 30k records); a unit leaves the pool
    when its last record is placed. ``start`` is the position (in ``rec_*``) of the first "last" record.
    """
    n_qis, n_units = ucodes.shape
    counts = np.zeros(n_values, dtype=np.int64)
    for j in range(m):
        counts[rec_values[j]] += 1
    group = np.full(m, -1, dtype=np.int64)
    alive = np.ones(m, dtype=np.bool_)
    head = start_of[:-1].copy()
    stop = start_of[1:].copy()
    left = stop - head
    unit_of = np.empty(m, dtype=np.int64)
    for u in range(n_units):
        for j in range(head[u], stop[u]):
            unit_of[j] = u
    pool = np.arange(n_units)
    near = np.zeros(n_units, dtype=np.int64)
    pcodes = ucodes.copy()
    pmask = umask.copy()
    total = np.zeros(n_units)
    terms = np.zeros((n_qis, n_units))
    in_cluster = np.zeros(n_values, dtype=np.int64)
    empty = np.zeros(n_values, dtype=np.int64)
    loyal = np.zeros(n_values, dtype=np.bool_)
    low = np.zeros(n_qis, dtype=np.int64)
    high = np.zeros(n_qis, dtype=np.int64)
    changed = np.zeros(n_qis, dtype=np.bool_)
    row = np.zeros(strides.max() if n_qis else 0)
    n_pool, n_records, n_groups, enlarged, last = n_units, m, 0, 0, start
    while n_records >= 2 * s:
        size = 0
        for trial in range(s, n_records - s + 1):
            cap = int(np.floor(trial / l + tol))
            if _loyal(empty, counts, trial, n_records, l, cap, tol, loyal):
                size = trial
                break
        if size == 0:
            break
        if size > s:
            enlarged += 1
        cap = int(np.floor(size / l + tol))
        lu = unit_of[last]
        for i in range(n_pool):
            total[i] = 0.0
        for q in range(n_qis):
            _row(ucodes[q, lu], ucodes[q, lu], offsets[q], strides[q], flat, row)
            for i in range(n_pool):
                total[i] += row[pcodes[q, i]]
        at, j = _choose_units(total, n_pool, _mask(loyal), pmask, pool, head, stop, rec_values, rec_keys, alive, True,
                              near)  # fmt: skip
        in_cluster[:] = 0
        u = pool[at]
        for q in range(n_qis):
            low[q], high[q] = ucodes[q, u], ucodes[q, u]
        first = True
        for taken in range(1, size + 1):
            u = pool[at]
            group[rec_rows[j]] = n_groups
            last = j
            v = rec_values[j]
            in_cluster[v] += 1
            counts[v] -= 1
            n_records -= 1
            alive[j] = False
            while head[u] < stop[u] and not alive[head[u]]:
                head[u] += 1
            left[u] -= 1
            still = False
            for k in range(head[u], stop[u]):
                if alive[k] and rec_values[k] == v:
                    still = True
                    break
            if not still:
                pmask[at] &= ~(1 << v)
            if left[u] == 0:  # swap-remove the unit from the pool
                e = n_pool - 1
                pool[at], pmask[at], total[at] = pool[e], pmask[e], total[e]
                for q in range(n_qis):
                    terms[q, at] = terms[q, e]
                    pcodes[q, at] = pcodes[q, e]
                n_pool -= 1
            _widen(ucodes, u, low, high, changed)
            if taken == size:
                break
            _reprice(first, changed, low, high, offsets, strides, flat, row, pcodes, n_pool, total, terms)
            first = False
            _loyal(in_cluster, counts, size - taken, n_records, l, cap, tol, loyal)
            at, j = _choose_units(total, n_pool, _mask(loyal), pmask, pool, head, stop, rec_values, rec_keys, alive,
                                  False, near)  # fmt: skip
        n_groups += 1
    for j in range(m):
        if alive[j]:
            group[rec_rows[j]] = n_groups
    return group, enlarged


def cluster_block(
    codes: np.ndarray,
    values: np.ndarray,
    keys: np.ndarray,
    n_values: int,
    size: int,
    l: float,
    tolerance: float,
    start: int,
    space: Any,
) -> tuple[np.ndarray, int]:
    """The compiled block clustering: a cluster id per record of the block (0…), and the enlarged clusters.

    Over units (distinct QI tuples) when there are at most :data:`UNIT_VALUES` sensitive values
    (a unit's values are a bit mask), else record by record: the same clusters either way.
    """
    if 0 < n_values <= UNIT_VALUES and codes.shape[1]:
        return _by_units(codes, values, keys, n_values, size, l, tolerance, start, space)
    group, enlarged = _cluster_block(
        np.ascontiguousarray(codes, dtype=np.int64),
        np.ascontiguousarray(values, dtype=np.int64),
        np.ascontiguousarray(keys, dtype=np.float64),
        int(n_values),
        int(size),
        float(l),
        float(tolerance),
        int(start),
        space.flat,
        np.ascontiguousarray(space.offsets.ravel(), dtype=np.int64),
        np.ascontiguousarray(space.strides.ravel(), dtype=np.int64),
    )
    return np.asarray(group, dtype=np.int64), int(enlarged)


#: Most sensitive values for the unit kernel (a unit's live values are one int64 bit mask).
UNIT_VALUES = 62


def _by_units(
    codes: np.ndarray,
    values: np.ndarray,
    keys: np.ndarray,
    n_values: int,
    size: int,
    l: float,
    tolerance: float,
    start: int,
    space: Any,
) -> tuple[np.ndarray, int]:
    """:func:`_cluster_units`: records grouped by QI tuple, sorted by key within a unit."""
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    ucodes, unit = np.unique(codes, axis=1, return_inverse=True)
    unit = unit.ravel().astype(np.int64)
    order = np.lexsort((keys, unit))
    start_of = np.searchsorted(unit[order], np.arange(ucodes.shape[1] + 1)).astype(np.int64)
    rec_values = np.ascontiguousarray(values[order], dtype=np.int64)
    umask = np.zeros(ucodes.shape[1], dtype=np.int64)
    np.bitwise_or.at(umask, unit, np.left_shift(np.int64(1), values.astype(np.int64)))
    position = np.empty(order.shape[0], dtype=np.int64)
    position[order] = np.arange(order.shape[0])
    group, enlarged = _cluster_units(
        np.ascontiguousarray(ucodes, dtype=np.int64),
        start_of,
        np.ascontiguousarray(order, dtype=np.int64),
        rec_values,
        np.ascontiguousarray(keys[order], dtype=np.float64),
        umask,
        int(order.shape[0]),
        int(n_values),
        int(size),
        float(l),
        float(tolerance),
        int(position[start]),
        space.flat,
        np.ascontiguousarray(space.offsets.ravel(), dtype=np.int64),
        np.ascontiguousarray(space.strides.ravel(), dtype=np.int64),
    )
    return np.asarray(group, dtype=np.int64), int(enlarged)
