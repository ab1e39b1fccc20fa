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
not a fixed size. Each small cluster keeps its eight cheapest partners and a floor below
which no other partner lies (:class:`_Candidates`); after a step only the changed clusters
are priced — each against every small cluster, in one numpy expression over
integer-coded boxes, the same row of joined costs re-pricing the changed cluster itself
when it is still small — and a small cluster is re-priced against every cluster only when
its list can no longer tell its best partner (all listed ones above the floor or gone).
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
_BLOCK = 32
#: Partners kept per small cluster (:class:`_Candidates`).
_LIST = 8


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

    def refresh(self, g: int) -> None:
        """Recompute cluster ``g``'s box, key, size and cost from its members."""
        sub = self.codes[:, self.members[g]]
        self.low[:, g], self.high[:, g] = sub.min(axis=1), sub.max(axis=1)
        self.key[:, g] = self.low[:, g] * np.array(self.sizes, dtype=np.int64) + self.high[:, g]
        self.size[g] = sub.shape[1]
        self.cost[g] = float(self.space.box_costs(self.low[:, g : g + 1], self.high[:, g : g + 1])[0])

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
        self.best = np.where(self.best[keep] >= 0, new_id[np.maximum(self.best[keep], 0)], -1)


class _Candidates:
    """Per small cluster its ``M`` cheapest partners at their current prices, and a floor for all others.

    Invariant: every live cluster not in ``x``'s list costs ``x`` at least ``floor[x]``. A
    price changes only when one of the two clusters changes, and every changed cluster is
    offered to every small one (:meth:`offer`: updated where listed, inserted where below
    the floor, the evicted entry lowering the floor), so the cheapest listed entry is ``x``'s
    best partner whenever it is at most ``floor[x]``; otherwise ``x`` is rescanned.
    """

    def __init__(self, n: int) -> None:
        self.ids = np.full((n, _LIST), -1, dtype=np.int64)
        self.price = np.full((n, _LIST), np.inf)
        self.lend = np.zeros((n, _LIST), dtype=bool)
        self.floor = np.full(n, np.inf)

    def fill(self, block: np.ndarray, priced: np.ndarray, lends: np.ndarray) -> None:
        """Lists of ``block`` from full rows of prices (dead and self already infinite)."""
        width = priced.shape[1]
        if width > _LIST:
            part = np.argpartition(priced, _LIST, axis=1)
            ids, rest = part[:, :_LIST], part[:, _LIST]
            self.floor[block] = priced[np.arange(block.shape[0]), rest]
        else:
            ids = np.tile(np.arange(width, dtype=np.int64), (block.shape[0], 1))
            self.floor[block] = np.inf
        at = np.arange(block.shape[0])[:, None]
        self.ids[block] = -1
        self.price[block] = np.inf
        self.lend[block] = False
        self.ids[block, : ids.shape[1]] = ids
        self.price[block, : ids.shape[1]] = priced[at, ids]
        self.lend[block, : ids.shape[1]] = lends[at, ids]

    def best(
        self, targets: np.ndarray, alive: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per target: best listed live partner (random among ties), its price, lending, and whether to rescan."""
        ids = self.ids[targets]
        price = np.where(alive[np.maximum(ids, 0)] & (ids >= 0), self.price[targets], np.inf)
        low = price.min(axis=1)
        ties = price <= (low + _EPS)[:, None]
        pick = np.argmax(np.where(ties, rng.random(price.shape), -1.0), axis=1)
        at = np.arange(targets.shape[0])
        exhausted = ~np.isfinite(low) | (low > self.floor[targets] + _EPS)
        return self.ids[targets, pick], price[at, pick], self.lend[targets, pick], exhausted

    def offer(
        self, others: np.ndarray, y: int, priced: np.ndarray, lends: np.ndarray, alive: np.ndarray
    ) -> np.ndarray:
        """New prices of cluster ``y`` for ``others``; the ones whose list changed (dead entries go first)."""
        listed = self.ids[others] == y
        has = listed.any(axis=1)
        r, c = np.nonzero(listed)
        self.price[others[r], c], self.lend[others[r], c] = priced[r], lends[r]
        insert = ~has & (priced < self.floor[others])
        if insert.any():
            x = others[insert]
            ids = self.ids[x]
            live = np.where(alive[np.maximum(ids, 0)] & (ids >= 0), self.price[x], np.inf)
            worst = np.argmax(live, axis=1)
            self.floor[x] = np.minimum(self.floor[x], live[np.arange(x.shape[0]), worst])
            self.ids[x, worst], self.price[x, worst], self.lend[x, worst] = y, priced[insert], lends[insert]
        return others[has | insert]

    def compact(self, alive: np.ndarray) -> None:
        """Follow :meth:`_Boxes.compact`: ids renumbered, entries of dead clusters emptied."""
        keep = np.flatnonzero(alive)
        new_id = np.cumsum(alive) - 1
        ids = self.ids[keep]
        live = (ids >= 0) & alive[np.maximum(ids, 0)]
        self.ids = np.where(live, new_id[np.maximum(ids, 0)], -1)
        self.price = np.where(live, self.price[keep], np.inf)
        self.lend, self.floor = self.lend[keep], self.floor[keep]


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
    lists = _Candidates(box.size.shape[0])

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

    def rescan(targets: np.ndarray, union: np.ndarray | None = None) -> None:
        """Price small clusters against every cluster (``union``: their rows, when known): lists and best."""
        every = np.arange(box.size.shape[0])
        for start in range(0, targets.shape[0], _BLOCK):
            block = targets[start : start + _BLOCK]
            joined = box.union(block) if union is None else union
            priced, lends = prices(box.size[block, None], box.cost[block, None], joined, every[None, :])
            priced[:, ~box.alive] = np.inf
            priced[np.arange(block.shape[0]), block] = np.inf
            lists.fill(block, priced, lends)
        choose(targets)

    def choose(targets: np.ndarray) -> None:
        """Best partner of each target from its list (random among ties); a rescan when the list cannot tell."""
        if targets.shape[0] == 0:
            return
        best, price, lend, exhausted = lists.best(targets, box.alive, rng)
        box.best[targets], box.price[targets], box.lend_from[targets] = best, price, lend
        if exhausted.any():
            rescan(targets[exhausted])

    def offer(y: int) -> np.ndarray:
        """Price the changed cluster ``y`` for every other small cluster; the clusters whose list changed.

        When ``y`` is small itself, its own row of joined costs (symmetric) also rescans ``y``.
        """
        others = np.flatnonzero(box.small & box.alive)
        others = others[others != y]
        union = box.union(np.array([y]))
        if box.small[y]:
            rescan(np.array([y]), union)
        if others.shape[0] == 0:
            return others
        priced, lends = prices(box.size[others], box.cost[others], union[0, others], np.full(others.shape[0], y))
        return lists.offer(others, y, priced, lends, box.alive)

    box.small[:] = [misses(g) for g in range(box.size.shape[0])]
    rescan(np.flatnonzero(box.small))
    step, reported = max(1, n // 100), 0
    while True:
        open_price = np.where(box.small & box.alive, box.price, np.inf)
        a = _argmin(open_price, rng)
        if not np.isfinite(open_price[a]):
            break
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
        orphans = np.flatnonzero(box.small & box.alive & (box.best == b))
        affected = [orphans] if not box.alive[b] else [orphans, offer(b)]
        affected.append(offer(a))
        touched = np.unique(np.concatenate(affected))
        choose(touched[box.small[touched] & box.alive[touched] & (touched != a)])
        if 2 * int(box.alive.sum()) < box.alive.shape[0] and box.alive.shape[0] > 256:
            lists.compact(box.alive)
            box.compact()
    live = np.flatnonzero(box.alive)
    stats.clusters += int(live.shape[0])
    group = np.empty(n, dtype=np.int64)
    for new_id, g in enumerate(live.tolist()):
        group[box.members[g]] = new_id
    if progress is not None:
        progress(n)
    return group
