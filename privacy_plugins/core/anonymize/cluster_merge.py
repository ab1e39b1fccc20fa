"""Bottom-up relaxing for two-phase clustering: merge the cheapest pair until every cluster is valid.

Records with equal quasi-identifier codes start as one cluster (their box costs nothing).
While some cluster misses a model ("small"), the small cluster with the cheapest
*completion* takes it, ties broken by the seeded generator. A small cluster ``a`` can be
completed by any other live cluster ``b`` in one of two ways, priced as the change of
the table's information loss ``Σ |c| · D(c)``:

* *merge*: ``a ∪ b`` (both whole): ``(|a|+|b|) · D(a ∪ b) − |a| · D(a) − |b| · D(b)``;
* *lend*: when ``a`` misses only size (``|a| < min_size``) and ``b`` is valid with at least
  ``min_size`` records to spare, ``b`` gives ``a`` the ``d = min_size − |a|`` records closest to
  ``a``'s box; priced with ``b``'s whole box, an upper bound of the actual
  ``(|a|+d) · D(a ∪ b) − |a| · D(a) − d · D(b)`` (``b`` keeps its box, ``d`` fewer records pay it).

So clusters grow past ``min_size`` exactly when taking a whole neighbour is cheaper than any
other completion — the information loss *per record* of the table is what decides, not a
fixed size. Every pair's price is kept as the small cluster's best partner; after a merge
only the clusters that pointed at the merged ones are re-priced, lazily: against the merged
ones only, and in full when they come up if that is dearer than their last full price (issue
28: the merged cluster is not offered to every small one either; they see it when next
priced in full — the same NCP on Adult for ~35 % less phase-1 CPU; and a small unit's first
price looks only at the units differing from it in at most two QIs). A cluster that is still
one unit (a point: every small cluster at the start) is priced from per-QI tables of the
cost of each code joined with each cluster's span, kept up to date as boxes change: one row
gather and one add per QI instead of a gather through a ``size × size`` table per cluster.
A lend whose donor then misses a model (possible beyond k) is undone and ``a`` merges
whole with the donor instead. Models are checked with ``failing`` only on clusters of at
least ``min_size`` records.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import numpy as np

from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, Failing, GreedyStats, columns

__all__ = ["merge_clusters"]

_EPS = 1e-12
_BLOCK = 32
#: Largest table of point-to-cluster costs (codes summed over QIs × clusters, ~128 MB); beyond it
#: every cluster is priced by :meth:`_Boxes.union`.
_POINT_ROWS_LIMIT = 16_000_000


class _Boxes:
    """Clusters as boxes (``low``, ``high``: per QI and cluster), sizes, costs ``D``, members, state.

    ``key[q, c] = low · size_q + high`` indexes cluster c's span of QI ``q`` in a flattened
    ``size_q × size_q`` matrix, so the cost of joining one box to every cluster is one gather
    per QI (:meth:`union`). Dead clusters are dropped from the arrays now and then (:meth:`compact`).
    """

    def __init__(self, space: CostSpace, codes: np.ndarray) -> None:
        self.space = space
        self.codes = codes
        self.sizes = [d.size for d in space.dimensions]
        self.code_range = [np.arange(size, dtype=np.int64) for size in self.sizes]
        tuples, inverse, counts = np.unique(codes.T, axis=0, return_inverse=True, return_counts=True)
        order = np.argsort(np.asarray(inverse).ravel(), kind="stable")
        bounds = np.concatenate(([0], np.cumsum(counts)))
        self.low = np.ascontiguousarray(tuples.T.astype(np.int64))
        self.high = self.low.copy()
        self.key = self.low * np.array(self.sizes, dtype=np.int64)[:, None] + self.high
        self.size = counts.astype(float)
        self.cost = np.zeros(counts.shape[0])
        self.alive = np.ones(counts.shape[0], dtype=bool)
        self.members = [order[bounds[g] : bounds[g + 1]] for g in range(counts.shape[0])]
        self.small = np.zeros(counts.shape[0], dtype=bool)
        self.best = np.full(counts.shape[0], -1, dtype=np.int64)
        self.price = np.full(counts.shape[0], np.inf)
        self.lend_from = np.zeros(counts.shape[0], dtype=bool)
        #: Priced against a changed partner only (``price`` an upper bound, ``floor`` a lower one).
        self.lazy = np.zeros(counts.shape[0], dtype=bool)
        self.floor = np.zeros(counts.shape[0])
        #: :meth:`point_rows`, kept up to date: clusters that are still one unit are priced from it.
        self.rows: list[np.ndarray] | None = None
        self.rows = self.point_rows()

    def union(self, block: np.ndarray) -> np.ndarray:
        """``D(c ∪ x)`` for every cluster ``c`` of ``block`` (rows) and every cluster ``x`` (columns)."""
        total = np.zeros((block.shape[0], self.size.shape[0]))
        for q, table in enumerate(self.space.tables):
            low, high = self.low[q, block], self.high[q, block]
            if table is None:
                lo = np.minimum(low[:, None], self.low[q][None, :])
                hi = np.maximum(high[:, None], self.high[q][None, :])
                total += self.space.widths(q, lo.ravel(), hi.ravel()).reshape(lo.shape)
                continue
            every = self.code_range[q]
            # joined[c, l, h]: cost of c's span joined with the span l..h (l <= h where it matters).
            joined = table[np.minimum(low[:, None], every)[:, :, None], np.maximum(high[:, None], every)[:, None, :]]
            if block.shape[0] == 1:
                total[0] += np.take(joined.ravel(), self.key[q])
            else:
                offset = np.arange(block.shape[0], dtype=np.int64)[:, None] * (self.sizes[q] ** 2)
                total += np.take(joined.ravel(), offset + self.key[q][None, :])
        return total

    def point_rows(self) -> list[np.ndarray] | None:
        """Per QI, ``rows[q][v, x]``: the cost of code ``v`` joined with cluster ``x``'s span (``None``: too big).

        A cluster that is one unit (a point) is priced against every cluster by one row
        gather and one add per QI — how the first pass prices every small unit.
        """
        n_cells = sum(self.sizes) * self.size.shape[0]
        if n_cells > _POINT_ROWS_LIMIT or any(table is None for table in self.space.tables):
            return None
        rows = []
        for q, table in enumerate(self.space.tables):
            assert table is not None
            every = self.code_range[q][:, None]
            rows.append(table[np.minimum(every, self.low[q][None, :]), np.maximum(every, self.high[q][None, :])])
        return rows

    def point_union(self, rows: list[np.ndarray], block: np.ndarray) -> np.ndarray:
        """:meth:`union` for clusters of ``block`` that are points, from :meth:`point_rows`."""
        total = np.zeros((block.shape[0], self.size.shape[0]))
        for q, table_rows in enumerate(rows):
            total += table_rows[self.low[q, block]]
        return total

    def refresh(self, g: int) -> None:
        """Recompute cluster ``g``'s box, key, size and cost from its members."""
        sub = self.codes[:, self.members[g]]
        self.low[:, g], self.high[:, g] = sub.min(axis=1), sub.max(axis=1)
        self.key[:, g] = self.low[:, g] * np.array(self.sizes, dtype=np.int64) + self.high[:, g]
        self.size[g] = sub.shape[1]
        self.cost[g] = float(self.space.box_costs(self.low[:, g : g + 1], self.high[:, g : g + 1])[0])
        if self.rows is not None:  # the point tables follow the box
            for q, table_rows in enumerate(self.rows):
                table = self.space.tables[q]
                assert table is not None
                every = self.code_range[q]
                table_rows[:, g] = table[np.minimum(every, self.low[q, g]), np.maximum(every, self.high[q, g])]

    def absorb(self, a: int, b: int) -> None:
        """Cluster ``a`` takes every member of ``b``; ``b`` dies."""
        self.members[a] = np.concatenate((self.members[a], self.members[b]))
        self.members[b] = self.members[b][:0]
        self.size[b] = 0
        self.alive[b] = False
        self.small[b] = False
        self.refresh(a)

    def lend(self, a: int, b: int, need: int, rng: np.random.Generator) -> None:
        """``b`` gives ``a`` its ``need`` members closest to ``a``'s box (random among ties)."""
        donor = rng.permutation(self.members[b])
        cost = self.space.join_costs(self.low[:, a], self.high[:, a], self.codes[:, donor])
        order = np.argsort(cost, kind="stable")
        self.members[a] = np.concatenate((self.members[a], donor[order[:need]]))
        self.members[b] = donor[order[need:]]
        self.refresh(a)
        self.refresh(b)

    def compact(self) -> None:
        """Drop dead clusters (ids change; ``best`` of live small clusters never points at a dead one)."""
        keep = np.flatnonzero(self.alive)
        new_id = np.cumsum(self.alive) - 1
        self.low, self.high, self.key = self.low[:, keep], self.high[:, keep], self.key[:, keep]
        self.size, self.cost, self.alive = self.size[keep], self.cost[keep], self.alive[keep]
        self.members = [self.members[g] for g in keep.tolist()]
        self.small, self.price, self.lend_from = self.small[keep], self.price[keep], self.lend_from[keep]
        self.lazy, self.floor = self.lazy[keep], self.floor[keep]
        self.best = np.where(self.best[keep] >= 0, new_id[np.maximum(self.best[keep], 0)], -1)
        if self.rows is not None:
            self.rows = [np.ascontiguousarray(table_rows[:, keep]) for table_rows in self.rows]


def _compiled() -> bool:
    """Whether numba is installed (the kernel module imports it, ~0.5 s: loaded only when it runs)."""
    return importlib.util.find_spec("numba") is not None


def _argmin(values: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the smallest value, a seeded random one among ties."""
    low = values.min()
    if not np.isfinite(low):
        return int(np.argmin(values))
    ties = np.flatnonzero(values <= low + _EPS)
    return int(ties[0] if ties.shape[0] == 1 else ties[rng.integers(ties.shape[0])])


def merge_clusters(
    space: CostSpace,
    failing: Failing,
    rows: np.ndarray,
    rng: np.random.Generator,
    *,
    min_size: int,
    stats: GreedyStats | None = None,
    progress: Callable[[int], None] | None = None,
    by_size: bool = False,
) -> np.ndarray:
    """Cluster ``rows`` bottom-up (see the module docstring); return a group per row (dense ids).

    ``rows`` as one group must satisfy the models (the caller checks). ``progress(done)``
    is called with the number of records in valid clusters, about every 1 % of them.
    ``by_size``: every model holds iff a cluster has ``min_size`` records; then the compiled
    kernel (:mod:`~privacy_plugins.core.anonymize.cluster_merge_kernel`) runs where numba is
    installed (progress only at the end).
    """
    stats = stats if stats is not None else GreedyStats()
    n = int(rows.shape[0])
    if by_size and space.flat is not None and _compiled():
        from privacy_plugins.core.anonymize import cluster_merge_kernel  # imports numba: only when it runs

        group, steps, n_clusters = cluster_merge_kernel.merge_units(
            space.flat, space.offsets, space.strides, columns(space.codes, rows), rng, min_size=min_size
        )
        stats.steps += steps
        stats.clusters += n_clusters
        if progress is not None:
            progress(n)
        return group
    box = _Boxes(space, space.codes[:, rows])

    def misses(g: int) -> bool:
        if box.size[g] < min_size:
            return True
        stats.model_checks += 1
        members = box.members[g]
        return bool(failing(rows[members], np.zeros(members.shape[0], dtype=np.int64), 1)[0])

    def prices(
        size: np.ndarray, cost: np.ndarray, union: np.ndarray, partner: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Price of completing small clusters (``size``, ``cost``) with ``partner`` clusters; whether by lending."""
        p_size, p_cost = box.size[partner], box.cost[partner]
        need = min_size - size
        lends = (need > 0) & ~box.small[partner] & (p_size - need >= min_size)
        taken = np.where(lends, need, p_size)
        return (size + taken) * union - size * cost - taken * p_cost, lends

    def reprice(targets: np.ndarray, union: np.ndarray | None = None, *, near: bool = False) -> None:
        """Best partner of small clusters over every cluster (``union``: their joined costs, when known).

        Clusters that are still one unit (a point) are priced from the point tables (row
        gathers), the others by :meth:`_Boxes.union`. ``near`` (the first pricing, every
        cluster a point): only the clusters whose box differs from the target's in at most two
        QIs, as the compiled kernel's first pricing; every cluster where none does.
        """
        if union is None and box.rows is not None:
            point = (box.low[:, targets] == box.high[:, targets]).all(axis=0)
            targets = np.concatenate((targets[point], targets[~point]))
            n_points = int(point.sum())
        else:
            n_points = 0
        every = np.arange(box.size.shape[0])
        for start in [*range(0, n_points, _BLOCK), *range(n_points, targets.shape[0], _BLOCK)]:
            block = targets[start : min(start + _BLOCK, n_points if start < n_points else targets.shape[0])]
            if union is not None:
                joined = union
            elif start < n_points and box.rows is not None:
                joined = box.point_union(box.rows, block)
            else:
                joined = box.union(block)
            priced, lends = prices(box.size[block, None], box.cost[block, None], joined, every[None, :])
            priced[:, ~box.alive] = np.inf
            priced[np.arange(block.shape[0]), block] = np.inf
            if near and box.low.shape[0] > 2:
                differ = np.zeros(priced.shape, dtype=np.int64)
                for q in range(box.low.shape[0]):
                    differ += (box.low[q][None, :] != box.low[q, block][:, None]) | (
                        box.high[q][None, :] != box.high[q, block][:, None]
                    )
                far = differ > 2
                far[np.isinf(np.where(far, np.inf, priced)).all(axis=1)] = False  # none near: every cluster
                priced[far] = np.inf
            for i, a in enumerate(block.tolist()):
                b = _argmin(priced[i], rng)
                box.best[a], box.price[a], box.lend_from[a] = b, priced[i, b], lends[i, b]

    box.small[:] = [misses(g) for g in range(box.size.shape[0])]
    # Every cluster is one unit (a point): priced from the point tables, among the units near it.
    reprice(np.flatnonzero(box.small), near=True)
    step, reported = max(1, n // 100), 0
    while True:
        # A lazy cluster waits at its floor (its last full price) and is priced in full when it comes up.
        open_price = np.where(box.small & box.alive, np.where(box.lazy, box.floor, box.price), np.inf)
        a = _argmin(open_price, rng)
        if not np.isfinite(open_price[a]):
            break
        if box.lazy[a]:
            box.lazy[a] = False
            reprice(np.array([a]))
            continue
        b = int(box.best[a])
        if box.lend_from[a]:
            box.lend(a, b, int(min_size - box.size[a]), rng)
            if misses(b):  # the donor broke a model (beyond k): take it whole instead
                box.absorb(a, b)
        else:
            box.absorb(a, b)
        stats.steps += 1
        box.small[a] = misses(a)
        if progress is not None:
            done = int(box.size[box.alive & ~box.small].sum())
            if done - reported >= step:
                progress(done)
                reported = done
        stale = np.flatnonzero(box.small & box.alive & ((box.best == a) | (box.best == b)))
        stale = stale[stale != a]
        # One row of joined costs serves a's pricing and the stale clusters' (D is symmetric). a is
        # not offered to the other small clusters: they see it when next priced in full.
        union = box.union(np.array([a]))
        if box.small[a]:  # over every cluster: one row here (the kernel prices its neighbourhood only)
            reprice(np.array([a]), union)
        if stale.shape[0]:  # priced against a and b only; lazy while dearer than their last full price
            below = np.where(box.lazy[stale], box.floor[stale], box.price[stale])
            pair, joined = np.array([a]), union[0, stale, None]
            if box.alive[b]:  # a lender: its row too
                pair, joined = np.array([a, b]), np.stack((union[0, stale], box.union(np.array([b]))[0, stale]), axis=1)
            priced, lends = prices(box.size[stale, None], box.cost[stale, None], joined, pair[None, :])
            pick = np.argmin(priced, axis=1)
            at = np.arange(stale.shape[0])
            box.best[stale], box.price[stale], box.lend_from[stale] = pair[pick], priced[at, pick], lends[at, pick]
            box.lazy[stale] = box.price[stale] > below + _EPS
            box.floor[stale] = below
        if 5 * int(box.alive.sum()) < 4 * box.alive.shape[0] and box.alive.shape[0] > 256:
            box.compact()
    live = np.flatnonzero(box.alive)
    stats.clusters += int(live.shape[0])
    group = np.empty(n, dtype=np.int64)
    for new_id, g in enumerate(live.tolist()):
        group[box.members[g]] = new_id
    if progress is not None:
        progress(n)
    return group
