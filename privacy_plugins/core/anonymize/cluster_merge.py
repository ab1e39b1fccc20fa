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

So clusters grow past ``min_size`` exactly when taking a whole neighbour is cheaper than
any other completion — the information loss *per record* of the table is what decides,
not a fixed size. Every pair's price is kept as the small cluster's best partner; after a
merge only the clusters that pointed at the merged ones are re-priced, and the new
cluster is offered to every small one in one numpy expression over integer-coded boxes.
A lend whose donor then misses a model (possible beyond k) is undone and ``a`` merges
whole with the donor instead. Models are checked with ``failing`` only on clusters of at
least ``min_size`` records.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, Failing, GreedyStats

__all__ = ["merge_clusters"]

_EPS = 1e-12
_BLOCK = 128


class _Boxes:
    """Live clusters as boxes (``low``, ``high``: per QI and cluster), sizes, costs ``D`` and members."""

    def __init__(self, space: CostSpace, codes: np.ndarray) -> None:
        self.space = space
        self.codes = codes
        self.flat = [(t.ravel(), t.shape[0]) if t is not None else None for t in space.tables]
        tuples, inverse, counts = np.unique(codes.T, axis=0, return_inverse=True, return_counts=True)
        order = np.argsort(np.asarray(inverse).ravel(), kind="stable")
        bounds = np.concatenate(([0], np.cumsum(counts)))
        self.low = np.ascontiguousarray(tuples.T.astype(np.int64))
        self.high = self.low.copy()
        self.size = counts.astype(float)
        self.cost = np.zeros(counts.shape[0])
        self.alive = np.ones(counts.shape[0], dtype=bool)
        self.members = [order[bounds[g] : bounds[g + 1]] for g in range(counts.shape[0])]

    def union(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """``D(box ∪ c)`` for every cluster c; ``low``/``high`` of shape ``(n_qis,)`` or ``(n_qis, m, 1)``."""
        total = np.zeros(np.broadcast_shapes(low.shape[1:], self.low.shape[1:]))
        for q, flat in enumerate(self.flat):
            lo = np.minimum(self.low[q], low[q])
            hi = np.maximum(self.high[q], high[q])
            if flat is not None:
                total += np.take(flat[0], lo * flat[1] + hi)
            else:
                total += self.space.widths(q, lo.ravel(), hi.ravel()).reshape(lo.shape)
        return total

    def refresh(self, g: int) -> None:
        """Recompute cluster ``g``'s box, size and cost from its members."""
        sub = self.codes[:, self.members[g]]
        self.low[:, g], self.high[:, g] = sub.min(axis=1), sub.max(axis=1)
        self.size[g] = sub.shape[1]
        self.cost[g] = float(self.space.box_costs(self.low[:, g : g + 1], self.high[:, g : g + 1])[0])

    def absorb(self, a: int, b: int) -> None:
        """Cluster ``a`` takes every member of ``b``; ``b`` dies."""
        self.members[a] = np.concatenate((self.members[a], self.members[b]))
        self.members[b] = self.members[b][:0]
        self.size[b] = 0
        self.alive[b] = False
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
) -> np.ndarray:
    """Cluster ``rows`` bottom-up (see the module docstring); return a group per row (dense ids).

    ``rows`` as one group must satisfy the models (the caller checks). ``progress(done)``
    is called with the number of records in valid clusters, about every 1 % of them.
    """
    stats = stats if stats is not None else GreedyStats()
    n = int(rows.shape[0])
    box = _Boxes(space, space.codes[:, rows])
    n_boxes = box.size.shape[0]

    def misses(g: int) -> bool:
        if box.size[g] < min_size:
            return True
        stats.model_checks += 1
        members = box.members[g]
        return bool(failing(rows[members], np.zeros(members.shape[0], dtype=np.int64), 1)[0])

    small = np.array([misses(g) for g in range(n_boxes)], dtype=bool)
    best = np.full(n_boxes, -1, dtype=np.int64)
    price = np.full(n_boxes, np.inf)
    lend = np.zeros(n_boxes, dtype=bool)

    def prices(size: np.ndarray, cost: np.ndarray, union: np.ndarray, partner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Price of completing small clusters (``size``, ``cost``) with ``partner`` clusters; whether by lending."""
        p_size, p_cost = box.size[partner], box.cost[partner]
        need = min_size - size
        lends = (need > 0) & ~small[partner] & (p_size - need >= min_size)
        taken = np.where(lends, need, p_size)
        return (size + taken) * union - size * cost - taken * p_cost, lends

    def reprice(targets: np.ndarray) -> None:
        every = np.arange(n_boxes)
        for start in range(0, targets.shape[0], _BLOCK):
            block = targets[start : start + _BLOCK]
            union = box.union(box.low[:, block, None], box.high[:, block, None])
            priced, lends = prices(box.size[block, None], box.cost[block, None], union, every[None, :])
            priced[:, ~box.alive] = np.inf
            priced[np.arange(block.shape[0]), block] = np.inf
            for i, a in enumerate(block.tolist()):
                b = _argmin(priced[i], rng)
                best[a], price[a], lend[a] = b, priced[i, b], lends[i, b]

    def offer(a: int) -> None:
        """Offer cluster ``a`` to every other small cluster (keep it where it is cheaper)."""
        others = np.flatnonzero(small & box.alive)
        others = others[others != a]
        if others.shape[0] == 0:
            return
        union = box.union(box.low[:, a], box.high[:, a])[others]
        priced, lends = prices(box.size[others], box.cost[others], union, np.full(others.shape[0], a))
        better = priced < price[others] - _EPS
        best[others[better]], price[others[better]], lend[others[better]] = a, priced[better], lends[better]

    reprice(np.flatnonzero(small))
    step, reported = max(1, n // 100), 0
    while True:
        open_price = np.where(small & box.alive, price, np.inf)
        a = _argmin(open_price, rng)
        if not np.isfinite(open_price[a]):
            break
        b = int(best[a])
        if lend[a]:
            box.lend(a, b, int(min_size - box.size[a]), rng)
            if misses(b):  # the donor broke a model (beyond k): take it whole instead
                box.absorb(a, b)
        else:
            box.absorb(a, b)
        stats.steps += 1
        small[a] = misses(a)
        small[b] = bool(box.alive[b]) and small[b]
        if progress is not None:
            done = int(box.size[box.alive & ~small].sum())
            if done - reported >= step:
                progress(done)
                reported = done
        stale = np.flatnonzero(small & box.alive & ((best == a) | (best == b)))
        if small[a]:
            stale = np.union1d(stale, [a])
        offer(a)
        if stale.shape[0]:
            reprice(stale.astype(np.int64))
    live = np.flatnonzero(box.alive)
    stats.clusters += int(live.shape[0])
    group = np.empty(n, dtype=np.int64)
    for new_id, g in enumerate(live.tolist()):
        group[box.members[g]] = new_id
    if progress is not None:
        progress(n)
    return group
