"""Compiled SA_Generalization of :mod:`personalized` (numba, optional): every group's steps in one kernel.

Used only when ``numba`` is importable; otherwise ``personalized._sa_generalize`` runs
per group in Python. Why a kernel: the rule re-derives every present value's worst
leakage after each one-level step (a few sets of a dozen labels per step, ~100k steps at
300k rows): Python spends ~80 % of the anonymizer's time there.

Same rule, same order of summation and of ties as the Python function, over labels
numbered globally (``node id = offset[level] + node``), with the ancestor-or-self relation
as a boolean matrix: the published labels are equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "generalize_groups"]


@_njit
def _one_group(
    lab: Any, bounds: Any, level: Any, leaves: Any, parent: Any, anc: Any, root: int, tol: float, scratch: Any
) -> tuple[int, bool]:  # pragma: no cover
    """SA_Generalization of one group in place on ``lab``; steps made and whether every bound holds."""
    b = lab.shape[0]
    counts, seen, present, f, wval, wbest = scratch
    steps = 0
    while True:
        # Present labels: by level, then by first appearance (Python's stable sort of a dict's keys).
        order = 0
        for i in range(b):
            a = lab[i]
            if counts[a] == 0:
                seen[order] = a
                order += 1
            counts[a] += 1
        n_present = 0
        for lv in range(root + 1):
            for j in range(order):
                if level[seen[j]] == lv:
                    present[n_present] = seen[j]
                    n_present += 1
        for j in range(n_present):
            a = present[j]
            total = 0.0
            for jj in range(n_present):
                x = present[jj]
                if anc[x, a]:
                    total += counts[x] / leaves[x]
            f[a] = total
        for j in range(n_present):
            a = present[j]
            best = -1
            for jj in range(n_present):
                x = present[jj]
                if anc[a, x] and (best < 0 or f[x] > f[best]):
                    best = x
            wval[a], wbest[a] = f[best], best
        for j in range(order):
            counts[seen[j]] = 0
        t = -1
        for i in range(b):
            if wval[lab[i]] / b - bounds[i] > tol:
                t = i
                break
        if t < 0:
            return steps, True
        leaf_label = wbest[lab[t]]
        r = -1
        for i in range(b):
            a = lab[i]
            if level[a] >= root or not anc[a, leaf_label]:
                continue
            if r < 0:
                r = i
                continue
            mine = (i == t) or (a == lab[t])
            theirs = (r == t) or (lab[r] == lab[t])
            if leaves[a] != leaves[lab[r]]:
                better = leaves[a] < leaves[lab[r]]
            elif mine != theirs:
                better = not mine
            elif bounds[i] != bounds[r]:
                better = bounds[i] > bounds[r]
            else:
                better = False  # the lower index (r) wins
            if better:
                r = i
        if r < 0:
            return steps, False
        lab[r] = parent[lab[r]]
        steps += 1


@_njit
def _groups(
    lab: Any, bounds: Any, starts: Any, ends: Any, level: Any, leaves: Any, parent: Any, anc: Any, root: int, tol: float
) -> tuple[Any, Any]:  # pragma: no cover
    n_nodes = level.shape[0]
    counts = np.zeros(n_nodes, dtype=np.int64)
    ids = np.zeros(n_nodes, dtype=np.int64)
    scratch = (counts, ids, ids.copy(), np.zeros(n_nodes), np.zeros(n_nodes), ids.copy())
    steps = np.zeros(starts.shape[0], dtype=np.int64)
    good = np.zeros(starts.shape[0], dtype=np.bool_)
    for g in range(starts.shape[0]):
        a, b = starts[g], ends[g]
        steps[g], good[g] = _one_group(lab[a:b], bounds[a:b], level, leaves, parent, anc, root, tol, scratch)
    return steps, good


def generalize_groups(
    labels: np.ndarray, bounds: np.ndarray, starts: np.ndarray, ends: np.ndarray, tables: Any, tolerance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SA_Generalization of the groups ``labels[starts[g]:ends[g]]`` (global node ids): new ids, steps, good.

    ``tables``: ``(level, leaves, parent, anc, root)`` per global node id (``personalized._Sensitive.tables``).
    """
    level, leaves, parent, anc, root = tables
    out = np.array(labels, dtype=np.int64, copy=True)
    steps, good = _groups(
        out, np.ascontiguousarray(bounds, dtype=np.float64), np.asarray(starts, dtype=np.int64),
        np.asarray(ends, dtype=np.int64), level, leaves, parent, anc, int(root), float(tolerance),
    )  # fmt: skip
    return out, np.asarray(steps), np.asarray(good)


@_njit
def _adaptive(
    codes: Any, window_il: Any, k: int, flat: Any, offsets: Any, strides: Any, tol: float
) -> Any:  # pragma: no cover
    """Group starts by the ILeft rule, one tuple at a time (``personalized._adaptive_groups``'s decisions)."""
    n_qis, n = codes.shape
    starts = np.zeros(n // k + 1, dtype=np.int64)
    n_starts = 1
    low = np.empty(n_qis, dtype=np.int64)
    high = np.empty(n_qis, dtype=np.int64)
    for q in range(n_qis):
        low[q], high[q] = codes[q, 0], codes[q, 0]
        for j in range(1, k):
            low[q], high[q] = min(low[q], codes[q, j]), max(high[q], codes[q, j])
    size, current, pos, last = k, window_il[0], k, n - k
    while pos <= last:
        total = 0.0
        for q in range(n_qis):
            lo, hi = min(low[q], codes[q, pos]), max(high[q], codes[q, pos])
            total += flat[offsets[q] + lo * strides[q] + hi]
        joined = total / n_qis
        if (size + 1) * joined - size * current >= window_il[pos] - tol:
            for q in range(n_qis):
                low[q], high[q] = min(low[q], codes[q, pos]), max(high[q], codes[q, pos])
            size, current, pos = size + 1, joined, pos + 1
            continue
        starts[n_starts] = pos
        n_starts += 1
        for q in range(n_qis):
            low[q], high[q] = codes[q, pos], codes[q, pos]
            for j in range(pos + 1, pos + k):
                low[q], high[q] = min(low[q], codes[q, j]), max(high[q], codes[q, j])
        size, current, pos = k, window_il[pos], pos + k
    return starts[:n_starts]


def adaptive_starts(
    codes: np.ndarray,
    window_il: np.ndarray,
    k: int,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray],
    tolerance: float,
) -> list[int]:
    """Group starts of the sorted ``codes`` (QIs × rows); ``tables``: flat ILeft terms per span, offsets, strides."""
    flat, offsets, strides = tables
    starts = _adaptive(
        np.ascontiguousarray(codes, dtype=np.int64), np.ascontiguousarray(window_il, dtype=np.float64), int(k),
        flat, offsets, strides, float(tolerance),
    )  # fmt: skip
    return [int(x) for x in starts]
