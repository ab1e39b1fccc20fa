"""Compiled phase 1 of two-phase clustering (numba, optional): the merge loop of :mod:`cluster_merge` in one kernel.

Used only when ``numba`` is importable, every QI has a span table (``CostSpace.flat``) and
every model is judged by class size alone (a cluster is valid iff it has ``min_size``
records, so no model callback is needed inside the loop); otherwise the numpy path of
:func:`~privacy_plugins.core.anonymize.cluster_merge.merge_clusters` runs. Why a kernel:
phase 1 takes one cheapest completion per step (~10k sequential steps on Adult), each
pricing the merged cluster against every cluster; in numpy that is ~30 array calls per
step, a floor of several seconds whatever the pruning.

Same algorithm as the numpy path (merge or lend, priced as the change of ``Σ |c| · D(c)``;
after a step the clusters that pointed at the changed ones are re-priced, lazily), on
*weighted units*: a cluster is a list of pieces (distinct QI tuple, count), so equal records
are moved in bulk and a lend takes whole pieces closest to the borrower's box (the last one
split). A full re-pricing of one small cluster stops summing a candidate's QI costs as soon
as its partial price exceeds the best so far (costs are non-negative). Ties go to the lower
seeded priority, so the output is fixed by the seed (not equal to the numpy path's, whose
ties draw from the generator).

No step scans every cluster (issue 28; Adult k = 10, ~10k steps: 3.0 → ~1.7 s CPU, 30k → 1M
rows now grows with exponent ~0.6):

* clusters are bucketed by their spans of two QIs (the one with most codes in use and the
  one separating records most after it, when their span pairs fit :data:`_BUCKETS`);
  a bucket's lower bound on a price is read from its spans, stored when it is first
  listed, and a re-pricing visits the bucket of cheapest bound first, then the others in
  list order, each skipped while its bound is above the best price so far (sorting every
  re-pricing's open buckets cost more than the extra members it spared: ~10 % of phase 1);
* the next small cluster comes from a binary heap keyed by (price, priority) whose stale
  entries (a version per cluster) are dropped when they come up, not from a scan;
* the small clusters to re-price after a step are found through per-partner notes
  ("x points at p"), both partners' notes taken off before any re-pricing;
* such a re-pricing is *lazy* (issue 28, tp28d): x is priced against the changed partner(s)
  only; when that is dearer than x's last full price (its ``floor``: every other cluster
  cost at least that then), x is queued at the floor and priced in full only when it comes
  up — by then it has often been taken by another cluster or gone stale again (Adult
  k = 10: ~20k re-pricings, ~5.7k full; phase 1 0.80 → 0.70 s with the offers below). Not
  the same steps as pricing in full at once: a cluster changed meanwhile is seen when x
  comes up;
* a merged cluster is not offered to the other small clusters (issue 28, tp28d): they see it
  when they are next priced in full (their partner changed, or they come up lazily). Offering
  every merged cluster (bucket by bucket, skipped where it could beat no member) was ~20 % of
  phase 1 and gave no better NCP on Adult (seeds 0–3: within ±1 % either way; with both
  changes phase 1 0.80 → 0.51 s at k = 10, NCP 0.026297 / 0.041582 / 0.061787 → 0.026280 /
  0.041457 / 0.061904 at k = 5 / 10 / 20);
* a merged cluster that is still small is priced among its neighbourhood only (issue 28,
  tp28d): the small clusters that pointed at either part, and its id neighbours; in full only
  when none pointed at them (Adult: ~20 % of the CPU, NCP +0.0–0.2 % at seed 0, up to +1.3 %
  on other seeds). Here only: the numpy path prices it over every cluster (one row there);
* a bucket's members share its spans, so a candidate of a full pricing is priced only when
  ``joined + max(D(x) − own_x, D(p) − own_p)``, the bucket QIs' joined cost plus either
  one's cost on the other QIs, can still win; its sum then starts from ``joined``.

Memory, not arithmetic, bounds a full pricing (issue 28, tp28f): the boxes are int32 codes, a
candidate's liveness and lending are read from its size alone, and the dense bucket tables are int32
(Adult k = 5 kernel 0.182 → 0.151 s, the same steps).

Fewer reads per full pricing (issue 28, tp28h; the same steps, ``merge_units`` at k = 5 / 10 / 20
~0.182 / 0.202 / 0.208 → ~0.170 / 0.189 / 0.195 s at load 3.4, −9 % at load 5–6):

* the listed buckets are chained by the low code of their first-QI span and read outwards from
  x's span; a side stops at the first code whose widened span alone prices above the best so far
  (sound where wider spans never cost less: :func:`_widening`; ~24 % fewer bucket bounds at k = 5);
* a listed bucket keeps its members' hull on every QI (at least their largest low, at most their
  smallest high, updated as members enter, exact again at each compaction): every member's span
  holds it, so ``D(x ∪ p)`` is at least x's span widened to it, and a bucket is skipped on that
  bound before any member is read (59 % of the bucket walks at k = 5);
* the first pricing, where every point costs 0 (a leaf's NCP), prices a run's units from the
  pair's two QIs only (the other QIs add exactly 0.0: the same sums): 0.031 → 0.020 s at k = 5.

A bucket member's bound floors x's cost on the other QIs at x widened to the bucket's hull there (tp28k):
the hull bound already computed for the bucket, at least x's own cost on them; the same steps, ``merge_units``
at k = 5 ~0.147–0.154 → ~0.145–0.148 s for the kernel alone (load 5).

``merge_units(prune=False)`` skips none of these (every bucket, member and candidate priced):
the reference the pruned run is tested equal to.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from privacy_plugins.core.anonymize.cluster_greedy import stable_order, units
from privacy_plugins.core.compiled import AVAILABLE
from privacy_plugins.core.compiled import njit as _njit

__all__ = ["AVAILABLE", "merge_units"]

_EPS = 1e-12
#: How far a lower bound may exceed the best price and still be priced: bounds are sums in another
#: order than the prices (rounding), so a tie must not be skipped on them.
_SLACK = 1e-9
#: The first pricing keys each unit by one int64 (mixed radix) while the QI sizes' product is below this.
_KEY_LIMIT = 2**62
#: Neighbouring ids priced first by a full re-pricing (a tight bound early).
_WINDOW = 4
#: Most buckets (span pairs of the bucket QIs): two QIs key the buckets when their spans fit.
_BUCKETS = 1 << 21
#: First pricing: a small unit is priced against the units differing in at most two QIs, at most
#: this many each side in a run of equal other codes (bounded work where runs are long).
_NEAR = 32


def _inline(function: Any) -> Any:
    """:func:`_njit`, inlined into its callers (no per-call array reference counting on hot paths)."""
    return _njit(function, inline="always")


@_njit
def _box_cost(low: Any, high: Any, c: int, flat: Any, offsets: Any, strides: Any) -> float:  # pragma: no cover
    total = 0.0
    for q in range(low.shape[1]):
        total += flat[offsets[q] + low[c, q] * strides[q] + high[c, q]]
    return total


@_inline
def _unlink(c: int, index: Any) -> None:  # pragma: no cover
    """Take cluster ``c`` out of its bucket."""
    head, nxt, prv, key = index[0], index[1], index[2], index[3]
    if prv[c] >= 0:
        nxt[prv[c]] = nxt[c]
    elif key[c] >= 0:
        head[key[c]] = nxt[c]
    if nxt[c] >= 0:
        prv[nxt[c]] = prv[c]
    nxt[c], prv[c], key[c] = -1, -1, -1


@_inline
def _link(
    c: int, index: Any, low: Any, high: Any, flat: Any, offsets: Any, strides: Any, two: bool, c_size: float
) -> None:  # pragma: no cover
    """Put cluster ``c`` (``c_size`` records) into the bucket of its span of the first QI (and the second when ``two``).

    A bucket seen for the first time is listed among the buckets to visit (``listed[k]``: its
    slot), with its spans and their cost (so visiting it needs no decoding); ``fewest`` keeps at
    most the size of its smallest member.
    """
    head, nxt, prv, key, keys, listed, n_keys, spans, owns, fewest = index[:10]
    k = low[c, 0] * strides[0] + high[c, 0]
    if two:
        k = k * strides[1] * strides[1] + low[c, 1] * strides[1] + high[c, 1]
    nxt[c], prv[c], key[c] = head[k], -1, k
    if head[k] >= 0:
        prv[head[k]] = c
    head[k] = c
    if listed[k] < 0:
        i = n_keys[0]
        listed[k] = i
        keys[i] = k
        own = 0.0
        for q in range(2 if two else 1):
            spans[i, 2 * q], spans[i, 2 * q + 1] = low[c, q], high[c, q]
            own += flat[offsets[q] + low[c, q] * strides[q] + high[c, q]]
        owns[i] = own
        fewest[i] = c_size
        index[11][i] = index[10][low[c, 0]]  # the listed buckets of each low code of the first QI
        index[10][low[c, 0]] = i
        index[13][i, :] = low[c, :]
        index[14][i, :] = high[c, :]
        n_keys[0] += 1
    i = listed[k]
    fewest[i] = min(fewest[i], c_size)
    for q in range(low.shape[1]):  # at least every member's low, at most every member's high (kept while they leave)
        index[13][i, q] = max(index[13][i, q], low[c, q])
        index[14][i, q] = min(index[14][i, q], high[c, q])


@_inline
def _bucket_own(
    low: Any, high: Any, c: int, flat: Any, offsets: Any, strides: Any, two: bool
) -> float:  # pragma: no cover
    """Cluster ``c``'s cost on the bucket QIs (once per scan, not per bucket)."""
    own = 0.0
    for q in range(2 if two else 1):
        own += flat[offsets[q] + low[c, q] * strides[q] + high[c, q]]
    return own


@_inline
def _bucket_join(
    i: int, spans: Any, low: Any, high: Any, c: int, flat: Any, offsets: Any, strides: Any, two: bool
) -> float:  # pragma: no cover
    """On the bucket QIs: the cost of listed bucket ``i``'s spans joined with cluster ``c``'s."""
    joined = 0.0
    for q in range(2 if two else 1):
        width = strides[q]
        lo, hi = min(spans[i, 2 * q], low[c, q]), max(spans[i, 2 * q + 1], high[c, q])
        joined += flat[offsets[q] + lo * width + hi]
    return joined


@_njit
def _best_of(
    x: int,
    cands: Any,
    m: int,
    found: int,
    found_price: float,
    found_lend: bool,
    state: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    min_size: float,
    prio: Any,
    start: int,
    joined: float,
    x_own: float,
    p_own: float,
    slack: float,
) -> tuple[int, float, bool]:  # pragma: no cover
    """The best completion of small ``x`` among ``cands[:m]`` and the best so far.

    The candidates share their spans of the QIs before ``start`` (a bucket's; ``start = 0``:
    none), whose cost joined with ``x``'s is ``joined`` and alone ``x_own`` for ``x``, ``p_own``
    for a candidate: ``D(x ∪ p) ≥ joined + max(D(x) − x_own, D(p) − p_own)`` skips most
    candidates unpriced. A candidate's other QIs are summed only while its partial price can
    still win (costs are non-negative); ties go to the lower priority.
    """
    low, high, size, cost = state[0], state[1], state[2], state[3]
    n_qis = low.shape[1]
    need = min_size - size[x]
    for i in range(m):
        p = cands[i]
        size_p = size[p]
        if p == x or size_p <= 0.0:  # dead: merged whole (its size read, not ``alive``: one array less)
            continue
        lends = size_p - need >= min_size  # not small (``size_p >= min_size``) and it keeps ``min_size``
        taken = need if lends else size_p
        base = -size[x] * cost[x] - taken * cost[p]
        weight = size[x] + taken
        bound = found_price + _EPS
        if weight * (joined + max(cost[x] - x_own, cost[p] - p_own)) + base > bound + slack:
            continue
        union = joined  # summed in QI order, as a sum from the first QI
        for q in range(start, n_qis):
            lo = low[x, q] if low[x, q] < low[p, q] else low[p, q]
            hi = high[x, q] if high[x, q] > high[p, q] else high[p, q]
            union += flat[offsets[q] + lo * strides[q] + hi]
            if weight * union + base > bound:
                break
        value = weight * union + base
        if value > bound:
            continue
        if found < 0 or value < found_price - _EPS or (value <= found_price + _EPS and prio[p] < prio[found]):
            found, found_price, found_lend = p, value, lends
    return found, found_price, found_lend


@_njit
def _scan(
    x: int,
    hint: int,
    state: Any,
    index: Any,
    cands: Any,
    bounds: Any,
    joins: Any,
    open_keys: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    min_size: float,
    prio: Any,
    two: bool,
    slack: float,
) -> None:  # pragma: no cover
    """Best completion of small cluster ``x`` over the live clusters.

    Likely cheap candidates come first (``hint``, and the clusters of neighbouring ids:
    units are numbered in lexicographic order of their codes and a cluster keeps the id of
    one of its units), so the bound is tight early. Then the clusters bucketed by their span
    of the first QI: a price ``|x| · (D(x ∪ p) − D(x)) + taken · (D(x ∪ p) − D(p))`` from a bucket is
    at least ``|x| · (T0(x ∪ span) − T0(x)) + T0(x ∪ span) − T0(span)`` (the union's other QIs
    cost at least x's and p's, and ``taken ≥ 1``), so a bucket above the
    best so far is skipped whole. The result does not depend on the order.
    """
    low, high, size, best, price, lend = state[0], state[1], state[2], state[6], state[7], state[8]
    n = low.shape[0]
    m = 0
    for j in range(2 * _WINDOW + 2):  # the hint, then ids x − W … x + W
        p = hint if j == 0 else x + j - 1 - _WINDOW
        if 0 <= p < n:
            cands[m] = p
            m += 1
    found, found_price, found_lend = _best_of(
        x, cands, m, -1, np.inf, False, state, flat, offsets, strides, min_size, prio, 0, 0.0, 0.0, 0.0, slack
    )
    head, nxt, keys, spans, owns = index[0], index[1], index[4], index[7], index[8]
    fewest, need = index[9], min_size - size[x]
    # Each bucket's lower bound; the cheapest bucket is then visited first, so the best price
    # so far tightens early and most buckets are skipped whole. The buckets are read by the low
    # code l of their first QI's span, outwards from x's span (tp28h): every bucket of a code
    # l outside it costs at least |x| · (T0(x ∪ l) − T0(x)), which grows outwards (a wider span
    # costs no less), so the first code above the best so far ends that side unread.
    n_open, cheapest = 0, 0
    own = _bucket_own(low, high, x, flat, offsets, strides, two)
    by_low, next_listed, outwards = index[10], index[11], index[12][0]
    x_low, x_high, width, base = low[x, 0], high[x, 0], strides[0], offsets[0]
    own_first, limit = flat[base + x_low * width + x_high], found_price + slack
    code, side = x_low, 0  # side 0: the codes of x's span; 1: below it, downwards; 2: above it, upwards
    while True:
        if side == 0 and code > x_high:
            code, side = x_low - 1, 1
        if side == 1 and (
            code < 0 or (outwards and size[x] * (flat[base + code * width + x_high] - own_first) > limit)
        ):
            code, side = x_high + 1, 2
        if side == 2 and (
            code >= width or (outwards and size[x] * (flat[base + x_low * width + code] - own_first) > limit)
        ):
            break
        i = by_low[code]
        code += -1 if side == 1 else 1
        while i >= 0:
            joined = _bucket_join(i, spans, low, high, x, flat, offsets, strides, two)
            # |x| · (D(x ∪ p) − D(x)) + taken · (D(x ∪ p) − D(p)), bounded on the bucket QIs; p gives x what
            # it needs (lending) or all of itself: taken ≥ min(need, the bucket's smallest member).
            bound = size[x] * (joined - own) + min(need, fewest[i]) * (joined - owns[i])
            if bound <= limit and head[keys[i]] >= 0:  # the dense bound first: few bucket heads read
                bounds[n_open], joins[n_open], open_keys[n_open] = bound, joined, i
                if bound < bounds[cheapest]:
                    cheapest = n_open
                n_open += 1
            i = next_listed[i]
    x_own = own
    lows, highs, start, n_qis = index[13], index[14], 2 if two else 1, low.shape[1]
    # The cheapest bucket first (a tight best early), then the others in list order, each
    # skipped while its bound is above the best so far: sorting them costs more than it saves.
    for i in range(-1 if n_open > 0 else 0, n_open):
        j = cheapest if i < 0 else i
        if (i >= 0 and j == cheapest) or bounds[j] > found_price + slack:
            continue
        listed = open_keys[j]
        # The members' hull on the other QIs: every member's span holds [its largest low, its smallest
        # high], so x ∪ p holds x's span widened to them; read before any member is (tp28h).
        union = joins[j]
        for q in range(start, n_qis):
            lo, hi = min(low[x, q], lows[listed, q]), max(high[x, q], highs[listed, q])
            union += flat[offsets[q] + lo * strides[q] + hi]
        if (
            size[x] * (union - state[3][x]) + min(need, fewest[listed]) * (joins[j] - owns[listed])
            > found_price + slack
        ):
            continue
        m = 0
        p = head[keys[listed]]
        while p >= 0:
            cands[m] = p
            m += 1
            p = nxt[p]
        # Every member's other QIs cost at least x's widened to the hull there (tp28k): a sharper floor
        # than x's own cost on them, passed as the own cost that leaves it.
        floor = max(state[3][x] - x_own, union - joins[j])
        found, found_price, found_lend = _best_of(
            x, cands, m, found, found_price, found_lend, state, flat, offsets, strides, min_size, prio,
            2 if two else 1, joins[j], state[3][x] - floor, owns[listed], slack,
        )  # fmt: skip
    best[x], price[x], lend[x] = found, found_price, found_lend


@_njit
def _push(heap: Any, x: int, value: float, key: float) -> None:  # pragma: no cover
    """Queue small cluster ``x`` at price ``value`` (ties: lower ``key``); its older entries go stale."""
    h_price, h_key, h_x, h_ver, count, ver = heap
    ver[x] += 1
    i = count[0]
    if i == h_price.shape[0]:  # full: keep only the live entries (each cluster's newest)
        m = 0
        for j in range(i):
            if h_ver[j] == ver[h_x[j]]:
                h_price[m], h_key[m], h_x[m], h_ver[m] = h_price[j], h_key[j], h_x[j], h_ver[j]
                m += 1
        count[0] = 0
        for j in range(m):  # re-heapify by pushing them back
            _sift_in(heap, h_price[j], h_key[j], h_x[j], h_ver[j])
        i = count[0]
    _sift_in(heap, value, key, x, ver[x])


@_inline
def _watch(watch: Any, x: int, state: Any) -> None:  # pragma: no cover
    """Note that small cluster ``x`` now points at ``best[x]`` (stale notes are skipped when read)."""
    w_head, w_x, w_next, count = watch
    p = state[6][x]
    if p >= 0:
        w_x[count[0]], w_next[count[0]] = x, w_head[p]
        w_head[p] = count[0]
        count[0] += 1


@_njit
def _rewatch(watch: Any, state: Any) -> None:  # pragma: no cover
    """Drop every note, then one per small cluster (a step adds at most ``2n + 1``: room is kept for it)."""
    watch[0][:] = -1
    watch[3][0] = 0
    alive, small = state[4], state[5]
    for x in range(alive.shape[0]):
        if alive[x] and small[x]:
            _watch(watch, x, state)


@_inline
def _queue(heap: Any, x: int, value: float, key: float) -> None:  # pragma: no cover
    """:func:`_push` a new price of ``x``, or only retire its entries when it has no finite price."""
    if np.isfinite(value):
        _push(heap, x, value, key)
    else:
        heap[5][x] += 1


@_njit
def _sift_in(heap: Any, value: float, key: float, x: int, version: int) -> None:  # pragma: no cover
    """Binary-heap insertion, ordered by (price, key)."""
    h_price, h_key, h_x, h_ver, count = heap[0], heap[1], heap[2], heap[3], heap[4]
    i = count[0]
    count[0] += 1
    while i > 0:
        parent = (i - 1) // 2
        if h_price[parent] < value or (h_price[parent] == value and h_key[parent] <= key):
            break
        h_price[i], h_key[i], h_x[i], h_ver[i] = h_price[parent], h_key[parent], h_x[parent], h_ver[parent]
        i = parent
    h_price[i], h_key[i], h_x[i], h_ver[i] = value, key, x, version


@_njit
def _pop(heap: Any) -> None:  # pragma: no cover
    """Drop the heap's first entry."""
    h_price, h_key, h_x, h_ver, count = heap[0], heap[1], heap[2], heap[3], heap[4]
    count[0] -= 1
    last = count[0]
    value, key, x, version = h_price[last], h_key[last], h_x[last], h_ver[last]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= last:
            break
        if child + 1 < last and (
            h_price[child + 1] < h_price[child]
            or (h_price[child + 1] == h_price[child] and h_key[child + 1] < h_key[child])
        ):
            child += 1
        if value < h_price[child] or (value == h_price[child] and key <= h_key[child]):
            break
        h_price[i], h_key[i], h_x[i], h_ver[i] = h_price[child], h_key[child], h_x[child], h_ver[child]
        i = child
    if last > 0:
        h_price[i], h_key[i], h_x[i], h_ver[i] = value, key, x, version


@_njit
def _merge_kernel(
    codes: Any,
    counts: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    min_size: float,
    prio: Any,
    unit_key: Any,
    two: bool,
    slack: float,
    first: Any,
    outwards: bool,
) -> Any:  # pragma: no cover - compiled; covered through merge_units where numba is installed
    n, n_qis = codes.shape
    low, high = codes.copy(), codes.copy()
    size = counts.astype(np.float64)
    cost = np.zeros(n)
    alive = np.ones(n, dtype=np.bool_)
    small = size < min_size
    best = np.full(n, -1, dtype=np.int64)
    price = np.full(n, np.inf)
    lend = np.zeros(n, dtype=np.bool_)
    state = (low, high, size, cost, alive, small, best, price, lend)
    capacity = 2 * n + 1
    p_unit = np.empty(capacity, dtype=np.int64)
    p_count = np.empty(capacity, dtype=np.int64)
    nxt = np.full(capacity, -1, dtype=np.int64)
    head = np.arange(n)
    tail = np.arange(n)
    for u in range(n):
        p_unit[u], p_count[u] = u, counts[u]
    n_pieces = n
    scratch = np.empty(capacity, dtype=np.int64)
    live = np.arange(n)
    n_live, n_alive = n, n
    # Buckets of clusters by their span of the first QI (doubly linked lists), and the
    # buckets ever used (:func:`_scan` visits them).
    n_spans = strides[0] * strides[0] * (strides[1] * strides[1] if two else 1)
    listable = min(n_spans, 5 * n + 2)  # n units, then at most 2n steps (merges kill, lends validate) of two each
    index = (
        np.full(n_spans, -1, dtype=np.int32),  # per bucket its first member (int32: a dense table kept small)
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.empty(listable, dtype=np.int64),
        np.full(n_spans, -1, dtype=np.int32),  # per bucket its slot in the list (-1: not listed)
        np.zeros(1, dtype=np.int64),
        np.empty((listable, 4), dtype=np.int64),  # per listed bucket: its spans of the bucket QIs
        np.empty(listable),  # and their cost
        np.empty(listable),  # and at most its smallest member's size
        np.full(strides[0], -1, dtype=np.int64),  # per low code of the first QI: its first listed bucket
        np.full(listable, -1, dtype=np.int64),  # per listed bucket: the next one of its low code
        np.array([outwards]),  # whether wider spans of the first QI cost no less (:func:`_scan` stops early)
        np.empty((listable, n_qis), dtype=codes.dtype),  # per listed bucket: at least its members' largest low
        np.empty((listable, n_qis), dtype=codes.dtype),  # and at most their smallest high, per QI
    )
    cands = np.empty(n + 2 * _WINDOW + 2, dtype=np.int64)
    bounds = np.empty(listable)  # scratch of :func:`_scan`: per open bucket its bound and key
    joins = np.empty(listable)  # and the cost of its spans joined with the scanned cluster's
    open_keys = np.empty(listable, dtype=np.int64)
    for c in range(n):
        _link(c, index, low, high, flat, offsets, strides, two, size[c])
    for x in range(n):
        if small[x] and first[0][x] >= 0:  # priced among the units that differ from it in at most two QIs
            best[x], price[x], lend[x] = first[0][x], first[1][x], first[2][x]
        elif small[x]:
            _scan(
                x,
                -1,
                state,
                index,
                cands,
                bounds,
                joins,
                open_keys,
                flat,
                offsets,
                strides,
                min_size,
                prio,
                two,
                slack,
            )
    # The small clusters by price (ties: lower priority), a binary heap with stale entries
    # skipped when they come up: an entry is current while its version is the cluster's.
    heap = (
        np.empty(4 * n + 1), np.empty(4 * n + 1), np.empty(4 * n + 1, dtype=np.int64),
        np.empty(4 * n + 1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(n, dtype=np.int64),
    )  # fmt: skip
    for x in range(n):
        if small[x] and np.isfinite(price[x]):
            _push(heap, x, price[x], prio[x])
    # Per cluster p, notes of the small clusters whose best partner is p (they are re-priced
    # when p changes); a note is stale once its cluster points elsewhere.
    watch = (np.full(n, -1, dtype=np.int64), np.empty(4 * n + 1, dtype=np.int64),
             np.empty(4 * n + 1, dtype=np.int64), np.zeros(1, dtype=np.int64))  # fmt: skip
    _rewatch(watch, state)
    seen = np.full(n, -1, dtype=np.int64)
    # A small cluster whose partner changed is priced against the changed partner(s) only: while that
    # is dearer than its last full price (``floor``, which every other cluster costs at least), it is
    # queued at the floor and scanned in full only when it comes up (``lazy``).
    lazy = np.zeros(n, dtype=np.bool_)
    floor = np.zeros(n)
    steps = 0
    while True:
        if watch[3][0] > 2 * n - 1:
            _rewatch(watch, state)
        if 5 * n_alive < 4 * n_live:  # drop dead clusters from the live list
            m = 0
            for i in range(n_live):
                if alive[live[i]]:
                    live[m] = live[i]
                    m += 1
            n_live = m
            m = 0  # drop empty buckets from the list (listed again when a cluster enters them)
            for i in range(index[6][0]):
                k = index[4][i]
                if index[0][k] >= 0:
                    index[4][m], index[8][m], index[9][m], index[5][k] = k, index[8][i], index[9][i], m
                    index[7][m, :] = index[7][i, :]
                    index[13][m, :] = low[index[0][k], :]  # exact again: from the members it has now
                    index[14][m, :] = high[index[0][k], :]
                    c = index[1][index[0][k]]
                    while c >= 0:
                        for q in range(n_qis):
                            index[13][m, q] = max(index[13][m, q], low[c, q])
                            index[14][m, q] = min(index[14][m, q], high[c, q])
                        c = index[1][c]
                    m += 1
                else:
                    index[5][k] = -1
            index[6][0] = m
            index[10][:] = -1
            for i in range(m):
                index[11][i] = index[10][index[7][i, 0]]
                index[10][index[7][i, 0]] = i
        a = -1
        while heap[4][0] > 0:
            x = heap[2][0]
            if heap[3][0] == heap[5][x] and alive[x] and small[x]:
                if not lazy[x]:
                    a = x
                    break
                _pop(heap)
                lazy[x] = False
                _scan(x, best[x], state, index, cands, bounds, joins, open_keys, flat, offsets, strides,
                      min_size, prio, two, slack)  # fmt: skip
                _queue(heap, x, price[x], prio[x])
                _watch(watch, x, state)
                continue
            _pop(heap)
        if a < 0:
            break
        b = best[a]
        if lend[a]:  # b gives a its ``need`` records closest to a's box (whole pieces, the last one split)
            need = int(min_size - size[a])
            k = 0
            piece = head[b]
            while piece >= 0:
                scratch[k] = piece
                k += 1
                piece = nxt[piece]
            pieces = scratch[:k].copy()
            join = np.empty(k)
            tie = np.empty(k)
            for i in range(k):
                u = p_unit[pieces[i]]
                total = 0.0
                for q in range(n_qis):
                    lo = low[a, q] if low[a, q] < codes[u, q] else codes[u, q]
                    hi = high[a, q] if high[a, q] > codes[u, q] else codes[u, q]
                    total += flat[offsets[q] + lo * strides[q] + hi]
                join[i], tie[i] = total, unit_key[u]
            order = pieces[np.argsort(tie, kind="mergesort")]
            join = join[np.argsort(tie, kind="mergesort")]
            order = order[np.argsort(join, kind="mergesort")]
            left = need
            head[b], tail[b] = -1, -1
            for i in range(k):
                piece = order[i]
                nxt[piece] = -1
                if left > 0 and p_count[piece] > left:  # split: a takes ``left`` of this piece
                    p_unit[n_pieces], p_count[n_pieces], nxt[n_pieces] = p_unit[piece], left, -1
                    p_count[piece] -= left
                    give, keep = n_pieces, piece
                    n_pieces += 1
                    left = 0
                elif left > 0:
                    give, keep = piece, -1
                    left -= p_count[piece]
                else:
                    give, keep = -1, piece
                if give >= 0:
                    nxt[tail[a]] = give
                    tail[a] = give
                    u = p_unit[give]
                    for q in range(n_qis):
                        low[a, q] = min(low[a, q], codes[u, q])
                        high[a, q] = max(high[a, q], codes[u, q])
                if keep >= 0:
                    if head[b] < 0:
                        head[b] = keep
                    else:
                        nxt[tail[b]] = keep
                    tail[b] = keep
            size[a] += need
            size[b] -= need
            first = True
            piece = head[b]
            while piece >= 0:  # b's box from its remaining pieces
                u = p_unit[piece]
                for q in range(n_qis):
                    if first or codes[u, q] < low[b, q]:
                        low[b, q] = codes[u, q]
                    if first or codes[u, q] > high[b, q]:
                        high[b, q] = codes[u, q]
                first = False
                piece = nxt[piece]
            cost[b] = _box_cost(low, high, b, flat, offsets, strides)
        else:  # a takes b whole
            nxt[tail[a]] = head[b]
            tail[a] = tail[b]
            head[b], tail[b] = -1, -1
            for q in range(n_qis):
                low[a, q] = min(low[a, q], low[b, q])
                high[a, q] = max(high[a, q], high[b, q])
            size[a] += size[b]
            size[b] = 0.0
            alive[b], small[b] = False, False
            n_alive -= 1
        cost[a] = _box_cost(low, high, a, flat, offsets, strides)
        small[a] = size[a] < min_size
        for c in (a, b):
            _unlink(c, index)
            if alive[c]:
                _link(c, index, low, high, flat, offsets, strides, two, size[c])
        steps += 1
        # No offer of a to the other small clusters (issue 28, tp28d): they see it when they are next
        # priced in full. Offering every merged cluster cost ~20 % of phase 1 for no better NCP on Adult.
        if small[a]:
            # Priced among its neighbourhood: the small clusters that pointed at a or b and a's id
            # neighbours; over every cluster only when none pointed at them.
            m = 0
            for note in (watch[0][a], watch[0][b]):
                while note >= 0 and m < n:
                    x = watch[1][note]
                    note = watch[2][note]
                    if x != a and alive[x] and small[x] and (best[x] == a or best[x] == b):
                        cands[m] = x
                        m += 1
            found = -1
            if m > 0:
                for j in range(2 * _WINDOW + 1):
                    cands[m] = a + j - _WINDOW
                    m += 1 if 0 <= cands[m] < n and cands[m] != a else 0
                found, found_price, found_lend = _best_of(
                    a, cands, m, -1, np.inf, False, state, flat, offsets, strides, min_size, prio, 0, 0.0, 0.0, 0.0,
                    slack,
                )  # fmt: skip
            if found >= 0 and np.isfinite(found_price):
                best[a], price[a], lend[a] = found, found_price, found_lend
            else:
                _scan(a, -1, state, index, cands, bounds, joins, open_keys, flat, offsets, strides, min_size, prio,
                      two, slack)  # fmt: skip
            _queue(heap, a, price[a], prio[a])
            _watch(watch, a, state)
        # The small clusters that pointed at a or b: re-priced. Both lists are taken off first:
        # a re-priced cluster may point at a or b again (a new note, kept for the next change).
        seen[a] = steps
        notes = (watch[0][a], watch[0][b])
        watch[0][a], watch[0][b] = -1, -1
        for note in notes:
            while note >= 0:
                x = watch[1][note]
                note = watch[2][note]
                if seen[x] != steps and alive[x] and small[x] and (best[x] == a or best[x] == b):
                    seen[x] = steps
                    below = floor[x] if lazy[x] else price[x]  # every other cluster costs at least this
                    cands[0], cands[1] = a, b
                    found, found_price, found_lend = _best_of(
                        x, cands, 2, -1, np.inf, False, state, flat, offsets, strides, min_size, prio, 0, 0.0,
                        0.0, 0.0, slack,
                    )  # fmt: skip
                    if found < 0 or not np.isfinite(found_price):
                        lazy[x] = False
                        _scan(x, a, state, index, cands, bounds, joins, open_keys, flat, offsets, strides,
                              min_size, prio, two, slack)  # fmt: skip
                        _queue(heap, x, price[x], prio[x])
                    else:
                        best[x], price[x], lend[x] = found, found_price, found_lend
                        lazy[x] = found_price > below + _EPS
                        floor[x] = below
                        _push(heap, x, below if lazy[x] else found_price, prio[x])
                    _watch(watch, x, state)
    # Pieces of the live clusters, in list order: (unit, count, dense cluster id).
    out_unit = np.empty(n_pieces, dtype=np.int64)
    out_count = np.empty(n_pieces, dtype=np.int64)
    out_cluster = np.empty(n_pieces, dtype=np.int64)
    m, dense = 0, 0
    for c in range(n):
        if not alive[c]:
            continue
        piece = head[c]
        while piece >= 0:
            out_unit[m], out_count[m], out_cluster[m] = p_unit[piece], p_count[piece], dense
            m += 1
            piece = nxt[piece]
        dense += 1
    return out_unit[:m], out_count[:m], out_cluster[:m], steps, dense


@_njit
def _near(
    order: Any,
    group: Any,
    window: int,
    state: Any,
    flat: Any,
    offsets: Any,
    strides: Any,
    min_size: float,
    prio: Any,
    slack: float,
    cands: Any,
    qi: int,
    qj: int,
    points: bool,
    outwards: bool,
) -> None:  # pragma: no cover - compiled; covered through merge_units where numba is installed
    """Each small unit priced against its run of units (``group`` equal, in ``order``), ``window`` each side at most.

    A run's units share every code but QIs ``qi < qj``. ``points`` (every point costs 0, tp28h): a
    price is then ``(|x| + taken) · (T_qi(x ∪ p) + T_qj(x ∪ p))`` — the other QIs add exactly 0.0,
    so this is :func:`_best_of`'s sum to the bit, read from two QIs instead of all. Then each side is
    read outwards from x and stops at the first unit whose qi span alone prices above the best so far
    (``outwards``: qi's wider spans never cost less; tp28k).
    """
    n = order.shape[0]
    codes, size, best, price, lend, small = state[0], state[2], state[6], state[7], state[8], state[5]
    base_i, width_i, base_j, width_j = offsets[qi], strides[qi], offsets[qj], strides[qj]
    start = 0
    for i in range(n):
        if i > 0 and group[i] != group[i - 1]:
            start = i
        x = order[i]
        if not small[x]:
            continue
        found, found_price, found_lend = best[x], price[x], lend[x]
        size_x, need = size[x], min_size - size[x]
        x_i, x_j = codes[x, qi], codes[x, qj]
        if points:  # outwards from x each side (tp28k): a run is sorted by qi then qj, so qi's span only widens
            for step in (1, -1):
                j = i + step
                while start <= j < n and abs(j - i) <= window and group[j] == group[i]:
                    p = order[j]
                    j += step
                    p_i, p_j = codes[p, qi], codes[p, qj]
                    union = flat[base_i + min(x_i, p_i) * width_i + max(x_i, p_i)]
                    if outwards and (size_x + 1.0) * union > found_price + _EPS:
                        break  # every unit further out costs at least this (taken ≥ 1, qi's span wider)
                    lends = size[p] - need >= min_size
                    taken = need if lends else size[p]
                    union += flat[base_j + min(x_j, p_j) * width_j + max(x_j, p_j)]
                    value = (size_x + taken) * union
                    if value > found_price + _EPS:
                        continue
                    if found < 0 or value < found_price - _EPS or prio[p] < prio[found]:
                        found, found_price, found_lend = p, value, lends
            best[x], price[x], lend[x] = found, found_price, found_lend
            continue
        m = 0  # not points: the run's window priced on every QI
        j = max(start, i - window)
        while j < n and j <= i + window and group[j] == group[i]:
            if order[j] != x:
                cands[m] = order[j]
                m += 1
            j += 1
        found, found_price, found_lend = _best_of(
            x, cands, m, found, found_price, found_lend, state, flat, offsets, strides, min_size, prio, 0, 0.0,
            0.0, 0.0, slack,
        )  # fmt: skip
        best[x], price[x], lend[x] = found, found_price, found_lend


def _near_prices(
    codes: np.ndarray,
    counts: np.ndarray,
    flat: np.ndarray,
    offsets: np.ndarray,
    strides: np.ndarray,
    min_size: float,
    prio: np.ndarray,
    slack: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First prices of the small units (``codes``: ``(units, QIs)``) among the units differing in at most two QIs.

    Per pair of QIs the units are sorted by their codes of the other QIs, then of the pair; a
    small unit is priced against its run of equal other codes (:data:`_NEAR` units each side at
    most). Best partner, price and lend per unit; best ``-1`` where none was found (priced in
    full by the kernel) and for every unit when there are at most two QIs.
    """
    n, n_qis = codes.shape
    size = counts.astype(np.float64)
    small = size < min_size
    state = (codes, codes, size, np.zeros(n), np.ones(n, dtype=np.bool_), small,
             np.full(n, -1, dtype=np.int64), np.full(n, np.inf), np.zeros(n, dtype=np.bool_))  # fmt: skip
    if n_qis <= 2 or not small.any():
        return state[6], state[7], state[8]
    cands = np.empty(2 * _NEAR + 1, dtype=np.int64)
    sizes = [int(size_q) for size_q in strides]
    # One mixed-radix key per unit (the other QIs, then the pair) where the codes fit: one sort per
    # pair, the runs read off the key (units are distinct: no ties); else dense ranks of the other QIs.
    fits = math.prod(max(size_q, 1) for size_q in sizes) < _KEY_LIMIT
    # Every point (a unit: low = high) costs exactly 0: a run's price reads the pair's two QIs only.
    points = (
        all(not flat[offsets[q] + np.arange(sizes[q]) * (strides[q] + 1)].any() for q in range(n_qis))
        and slack < np.inf
    )
    for pair in itertools.combinations(range(n_qis), 2):
        other = [q for q in range(n_qis) if q not in pair]
        if fits:
            key = np.zeros(n, dtype=np.int64)
            for q in [*other, *pair]:
                key *= sizes[q]
                key += codes[:, q]
            order = np.argsort(key)  # distinct keys (distinct units): any sort is stable
            run = key[order] // (sizes[pair[0]] * sizes[pair[1]])
        else:
            inverse = units(codes.T, [sizes[q] for q in other], other)[1]
            key = (inverse * sizes[pair[0]] + codes[:, pair[0]]) * sizes[pair[1]] + codes[:, pair[1]]
            order = np.argsort(key)  # distinct keys (distinct units): any sort is stable
            run = inverse[order]
        outwards = _widening(flat, int(offsets[pair[0]]), sizes[pair[0]]) and slack < np.inf
        _near(order, run, _NEAR, state, flat, offsets, strides, min_size, prio, slack, cands, pair[0], pair[1], points,
              outwards)  # fmt: skip
    return state[6], state[7], state[8]


def _widening(flat: np.ndarray, offset: int, size: int) -> bool:
    """Whether a QI's span cost never falls as its span widens (``T[l, h] ≤ T[l − 1, h]``, ``≤ T[l, h + 1]``)."""
    table = flat[offset : offset + size * size].reshape(size, size)
    upper = np.triu(np.ones((size, size), dtype=bool))
    down = (table[1:, :] <= table[:-1, :]) | ~upper[1:, :]  # row l vs row l − 1, where l <= h
    up = (table[:, :-1] <= table[:, 1:]) | ~upper[:, :-1]  # column h vs h + 1
    return bool(down.all() and up.all())


def merge_units(
    flat: np.ndarray,
    offsets: np.ndarray,
    strides: np.ndarray,
    codes: np.ndarray,
    rng: np.random.Generator,
    *,
    min_size: int,
    prune: bool = True,
) -> tuple[np.ndarray, int, int]:
    """Phase 1 over records with QI ``codes`` (``(n_qis, n)``), valid iff ``min_size`` records.

    Returns a group per record (dense ids), the steps taken and the number of clusters.

    ``flat``, ``offsets``, ``strides``: :attr:`CostSpace.flat` and its index arrays. The
    records of a unit go to its pieces in a seeded random order. ``prune=False`` prices every
    bucket and candidate whatever its lower bound (the reference the pruned run is tested against).
    """
    n = codes.shape[1]
    # QIs that separate records most first (the expected span cost of two random records):
    # pruned prices stop after fewer QIs.
    expected, used = [], []
    for q in range(codes.shape[0]):
        size_q = int(strides.ravel()[q])
        table = flat[int(offsets.ravel()[q]) : int(offsets.ravel()[q]) + size_q * size_q].reshape(size_q, size_q)
        freq = np.bincount(codes[q], minlength=size_q).astype(float)
        expected.append(float(freq @ np.maximum(table, table.T) @ freq))
        used.append(int(np.count_nonzero(freq)))  # codes in use (as a unique over the row, without its sort)
    # The first QI buckets the clusters (:func:`_scan`): the one with the most codes in use; the
    # QI that separates records most after it refines the buckets when both fit :data:`_BUCKETS`.
    bucket_qi = int(np.argmax(used))
    rest = [q for q in np.argsort(-np.array(expected), kind="stable").tolist() if q != bucket_qi]
    sizes = strides.ravel()
    fits = [q for q in rest if int(sizes[bucket_qi]) ** 2 * int(sizes[q]) ** 2 <= _BUCKETS]
    two = bool(fits) and bucket_qi != -1
    if two:
        rest = [fits[0], *[q for q in rest if q != fits[0]]]
    qi_order = np.array([bucket_qi, *rest], dtype=np.int64)
    offsets, strides = offsets.ravel()[qi_order], strides.ravel()[qi_order]
    tuples, inverse, counts = units(codes, strides.tolist(), qi_order.tolist())
    n_units = counts.shape[0]
    unit_codes = np.ascontiguousarray(tuples.T.astype(np.int64))  # (units, QIs): one cache line per unit
    prio, unit_key = rng.random(n_units), rng.random(n_units)
    offsets, strides = offsets.ravel().astype(np.int64), strides.ravel().astype(np.int64)
    slack = _SLACK if prune else np.inf
    first = _near_prices(unit_codes, counts, flat, offsets, strides, float(min_size), np.asarray(prio), slack)
    narrow = unit_codes.astype(np.int32) if int(strides.max()) < 2**31 else unit_codes
    unit, count, cluster, steps, n_clusters = _merge_kernel(
        narrow, counts.astype(np.int64), flat, offsets, strides, float(min_size), prio, unit_key, two, slack,
        first, _widening(flat, int(offsets[0]), int(strides[0])),
    )  # fmt: skip
    # Each unit's records in a seeded random order, dealt to its pieces in piece order.
    shuffled = rng.permutation(n)
    by_unit = shuffled[stable_order(inverse[shuffled], n_units)]
    order = stable_order(unit, n_units)
    group = np.empty(n, dtype=np.int64)
    group[by_unit] = np.repeat(cluster[order], count[order])
    return group, int(steps), int(n_clusters)
