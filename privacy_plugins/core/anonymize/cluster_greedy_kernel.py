"""Compiled greedy pass over units (numba, optional): ``cluster_greedy._greedy_units`` in one kernel.

Used only when ``numba`` is importable, every QI has a span table (``CostSpace.flat``) and
every model is judged by class size alone (a cluster is valid iff it has ``min_size``
records: no model callback inside the loop). Why a kernel: k-member takes one unit per
step (~15k sequential steps on Adult), each re-pricing the QIs whose span grew over the
units left; in numpy that is ~15 array calls per step, ~90 % of k-member's time.

Same algorithm and tie rule (lowest seeded unit key among costs within ``1e-12``) as the
numpy pass, so it returns the same takes: units left are kept compact by swap-removal,
which changes no choice because ties are decided by key, not by position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "greedy_takes"]

_EPS = 1e-12


@_njit
def _choose(total: Any, n_pool: int, pkeys: Any, largest: bool) -> int:  # pragma: no cover
    """Position of the best cost in the pool, the lowest key among ties within ``_EPS``."""
    best = total[0]
    for i in range(1, n_pool):
        if total[i] > best if largest else total[i] < best:
            best = total[i]
    at = -1
    for i in range(n_pool):
        if abs(total[i] - best) <= _EPS and (at < 0 or pkeys[i] < pkeys[at]):
            at = i
    return at


@_njit
def _takes(
    codes: Any,
    left: Any,
    state: Any,
    pool: Any,
    pkeys: Any,
    pcodes: Any,
    takes: Any,
    min_size: int,
    stop: int,
    flat: Any,
    offsets: Any,
    strides: Any,
) -> bool:  # pragma: no cover
    """Resume the pass until at least ``stop`` records are placed (or it ends); whether it ended.

    ``state``: n_takes, n_pool, last unit, clusters, records left; ``left``: records left per
    unit; ``pool`` / ``pkeys`` / ``pcodes``: the units left (compact); ``takes``: per take its
    unit, records taken and cluster.
    """
    n_qis, n_units = codes.shape
    take_unit, take_count, take_cluster = takes[0], takes[1], takes[2]
    n_takes, n_pool, last, n_groups, left_records = state[0], state[1], state[2], state[3], state[4]
    placed = 0
    for t in range(n_takes):
        placed += take_count[t]
    total = np.zeros(n_units)
    terms = np.zeros((n_qis, n_units))
    row = np.zeros(strides.max() if n_qis else 0)
    low = np.empty(n_qis, dtype=np.int64)
    high = np.empty(n_qis, dtype=np.int64)
    ended = True
    while left_records >= min_size and n_pool > 0:
        if placed >= stop:
            ended = False
            break
        for i in range(n_pool):
            total[i] = 0.0
        for q in range(n_qis):
            a = codes[q, last]
            for c in range(strides[q]):
                row[c] = flat[offsets[q] + min(a, c) * strides[q] + max(a, c)]
            for i in range(n_pool):
                total[i] += row[pcodes[q, i]]
        at = _choose(total, n_pool, pkeys, True)
        for q in range(n_qis):
            low[q], high[q] = pcodes[q, at], pcodes[q, at]
        first = n_takes
        members = 0
        need = min_size
        valid = False
        priced = False
        while True:
            unit = pool[at]
            count = min(left[unit], need)
            take_unit[n_takes], take_count[n_takes], take_cluster[n_takes] = unit, count, n_groups
            n_takes += 1
            members += count
            left[unit] -= count
            last = unit
            grown_any = not priced
            for q in range(n_qis):
                c = codes[q, unit]
                if c < low[q] or c > high[q]:
                    low[q], high[q] = min(low[q], c), max(high[q], c)
                    if priced:
                        # D(c ∪ u) = Σ_q term_q(u): only the QIs whose span just grew are recomputed.
                        for x in range(strides[q]):
                            row[x] = flat[offsets[q] + min(low[q], x) * strides[q] + max(high[q], x)]
                        for i in range(n_pool):
                            fresh = row[pcodes[q, i]]
                            total[i] += fresh - terms[q, i]
                            terms[q, i] = fresh
            if left[unit] == 0:  # exhausted: swap-removed from the pool
                j = n_pool - 1
                pool[at], pkeys[at], total[at] = pool[j], pkeys[j], total[j]
                for q in range(n_qis):
                    pcodes[q, at], terms[q, at] = pcodes[q, j], terms[q, j]
                n_pool -= 1
            if grown_any and not priced:
                for q in range(n_qis):
                    for x in range(strides[q]):
                        row[x] = flat[offsets[q] + min(low[q], x) * strides[q] + max(high[q], x)]
                    for i in range(n_pool):
                        fresh = row[pcodes[q, i]]
                        terms[q, i] = fresh
                        total[i] = fresh if q == 0 else total[i] + fresh
                priced = True
            if members >= min_size:
                valid = True
                break
            if n_pool == 0:
                break
            need = max(1, min_size - members)
            at = _choose(total, n_pool, pkeys, False)
        if not valid:  # the rest cannot form a valid cluster: its records are leftovers
            n_takes = first
            break
        n_groups += 1
        left_records -= members
        placed += members
    state[0], state[1], state[2], state[3], state[4] = n_takes, n_pool, last, n_groups, left_records
    return ended


def greedy_takes(
    unit_codes: np.ndarray,
    counts: np.ndarray,
    keys: np.ndarray,
    min_size: int,
    start: int,
    space: Any,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The compiled greedy pass: per take its unit, count and cluster (in order), and the number of clusters.

    Runs in about 20 slices so that ``progress(records placed)`` is called as the pass goes.
    """
    codes = np.ascontiguousarray(unit_codes, dtype=np.int64)
    left = np.array(counts, dtype=np.int64)
    n_units, n = left.shape[0], int(left.sum())
    state = np.array([0, n_units, start, 0, n], dtype=np.int64)
    pool, pkeys, pcodes = np.arange(n_units, dtype=np.int64), np.array(keys, dtype=np.float64), codes.copy()
    takes = np.zeros((3, n), dtype=np.int64)
    offsets = np.ascontiguousarray(space.offsets.ravel(), dtype=np.int64)
    strides = np.ascontiguousarray(space.strides.ravel(), dtype=np.int64)
    step = max(min_size, n // 20)
    stop = step
    while not _takes(codes, left, state, pool, pkeys, pcodes, takes, int(min_size), stop, space.flat, offsets, strides):
        if progress is not None:
            progress(int(takes[1, : state[0]].sum()))
        stop += step
    n_takes = int(state[0])
    return takes[0, :n_takes].copy(), takes[1, :n_takes].copy(), takes[2, :n_takes].copy(), int(state[3])
