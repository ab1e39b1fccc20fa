"""Local search over a clustering: move single records between clusters while the table's loss drops.

Moving record r from cluster A (more than the smallest valid size) to cluster B changes the
table's information loss ``Σ |c| · D(c)`` by

    gain(r, B) = [|A| · D(A) − (|A| − 1) · D(A ∖ r)] − [(|B| + 1) · D(B ∪ r) − |B| · D(B)].

A record is *settled* when its unit was priced since its own cluster and its two cheapest
clusters last changed and no move of it gained then (issue 28, tp28d): a round leaves it out of
its candidates, so the budget goes to records that may gain (a cluster changed elsewhere may
have made it a better target: an approximation; Adult k = 10 / 20: refine ~15 % less CPU, NCP
within ±0.3 %).

One *round* prices every removable record at once: ``D(A ∖ r)`` needs, per QI and cluster,
the lowest and highest code, how many records hold them and the next codes inside
(``np.minimum.at`` / ``np.maximum.at`` over the records), so the removal side is one vector
over all records. The ``limit`` records of largest removal saving are then priced against
every cluster: per QI a ``codes × clusters`` table of joined span costs is built once per
round, and a block of records is priced by one row gather and one add per QI. Moves of positive gain are
taken best first, each cluster touching at most one move per round so that every gain is
exact; the moved-to and moved-from clusters are checked with the models (``failing``) in
one call and a move whose cluster misses a model is undone.

Rounds share their prices (:class:`_Moves`, issue 28): a round changes only the few clusters
its kept moves touched (Adult: ~15 moves per round), so only their boxes, their records'
savings (QI by QI: no ``n × QIs`` arrays) and their span columns are recomputed. Prices
are kept per *unit* (distinct QI codes) as its two cheapest clusters with the round they
were made; a unit whose two are unchanged is compared only with the clusters changed
since, the others are priced afresh — the same moves as pricing every round afresh
(``reuse=False``, tested equal), each unit priced about once instead of every record
every round (Adult k = 20, 100 rounds: ~2.0 → ~0.9 s CPU for the move rounds). Where numba
is installed the catch-up runs compiled one unit at a time (no ``units × clusters`` temporaries,
one call per round instead of one per round the units were priced in; the same prices), and a
round's candidates are picked by grouped maxima, not by sorting every movable record.

A unit's two are kept only among the clusters adding at most its *ceiling*, the largest saving
of its records when priced (issue 28, tp28i): a move gains only on a cluster adding less than
the record saves, so the others never make one; the compiled pricing then prices in full only
the clusters whose bound — ``D(c)`` plus ``(|c| + 1)`` times the growth of two QIs' spans — is
within it (Adult k = 5: ~3 % of them; the unit pricing ~0.07 → ~0.04 s). A record saving more
than its unit's ceiling is not settled and has its unit priced afresh. Which cluster is the
second beyond the ceiling is not known, so a change of the true second no longer unsettles a
record: the candidates differ a little (Adult NCP within ±0.3 % at seed 0, ±0.8 % on seeds 1–3).

Clusters of exactly the smallest valid size can give no record, so when no move gains, a
round tries to *dissolve* the costliest clusters: the records of cluster A go one by one
to the other cluster where they add least (its box updated as it grows), kept when they
together add less than A's ``|A| · D(A)``; each cluster takes part in one dissolution per round, the
models are checked in one call, and a dissolution with a target missing a model is
undone. Rounds repeat until neither gains or ``rounds`` is reached, dissolve rounds only while the
last one dissolved at least :data:`_LAST_DISSOLVING` clusters and at least half as many as the
one before it (:func:`_dissolved_few`); the loss never rises.
The walk of a dissolution runs compiled where numba is installed
(:mod:`~privacy_plugins.core.anonymize.cluster_refine_kernel`, the same choices; Adult k = 20:
~1.1 → ~0.4 s CPU for the dissolve rounds).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator

import numpy as np

from privacy_plugins.core.anonymize.cluster_greedy import Clustering, CostSpace, Failing, boxes, columns, units

__all__ = ["RefineStats", "refine_clusters"]

_EPS = 1e-9
_BLOCK = 256
#: Most record × cluster prices held at once (a block of records is cut to fit: bounded memory on big tables).
_CELLS = 1 << 20
_BUDGET = 2_000_000
_DISSOLVE_BUDGET = 10_000_000
#: Largest span table of one QI (codes × clusters, ~32 MB); a larger QI is priced directly.
_SPAN_ROWS_LIMIT = 4_000_000
#: A dissolve round that dissolves fewer clusters than this is the last one (issue 28, tp28d): the
#: later rounds dissolve one cluster or none for a full round's pricing each (Adult k = 10: four of
#: six rounds, ~0.13 s, 0.4 % of the loss).
_LAST_DISSOLVING = 5
#: ... or fewer than this share of the round before it (issue 28, tp28e).
_DISSOLVING_SHARE = 0.5
#: Leaders per cluster beyond ``per_cluster`` whose slots settled records leave to the next ones.
_SPARE = 2


def _dissolved_few(counts: list[int]) -> bool:
    """Whether the last dissolve round (``counts``: clusters each dissolved) is the last one.

    It is when it dissolved fewer than :data:`_LAST_DISSOLVING` clusters, or fewer than
    :data:`_DISSOLVING_SHARE` of the round before it (tp28e: the counts fall fast, Adult k = 10:
    25, 7, 2; the third round costs a full round's pricing, ~35 ms, for ~0.2 % of the loss).
    """
    if not counts:
        return False
    if counts[-1] < _LAST_DISSOLVING:
        return True
    return len(counts) > 1 and counts[-1] < _DISSOLVING_SHARE * counts[-2]


#: A clustering's boxes (low, high), sizes, costs and span rows (:func:`_span_rows`), kept in step.
_Tables = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray | None]]


class RefineStats:
    """Counters of one local search."""

    def __init__(self) -> None:
        self.rounds = 0
        self.moves = 0
        self.dissolved = 0
        self.undone = 0


def _without(code: np.ndarray, group: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For one QI: per record (``code``), the low and high code of its cluster without the record."""
    n_groups = low.shape[0]
    lo, hi = low[group], high[group]
    at_low, at_high = code == lo, code == hi
    n_low = np.bincount(group, weights=at_low, minlength=n_groups)
    n_high = np.bincount(group, weights=at_high, minlength=n_groups)
    next_low = high.copy()  # the smallest code above the lowest (the highest if none)
    next_high = low.copy()
    np.minimum.at(next_low, group[~at_low], code[~at_low])
    np.maximum.at(next_high, group[~at_high], code[~at_high])
    new_low = np.where(at_low & (n_low[group] == 1), next_low[group], lo)
    new_high = np.where(at_high & (n_high[group] == 1), next_high[group], hi)
    return new_low, new_high


def _members(group: np.ndarray, clusters: np.ndarray, n_groups: int) -> np.ndarray:
    """The records of ``clusters``, ascending (``np.isin`` through a mask over the groups: no sort)."""
    mask = np.zeros(n_groups, dtype=bool)
    mask[clusters] = True
    return np.flatnonzero(mask[group])


def _leaders(items: np.ndarray, saving: np.ndarray, group: np.ndarray, n_groups: int, per_group: int) -> np.ndarray:
    """``items`` by saving, largest first (ties: in the given order), at most ``per_group`` per group.

    What a stable sort by ``-saving`` and then ranking within each group selects, without
    sorting every item: each group's leaders are found by grouped maxima (one pass per leader),
    and only they are sorted (Adult k = 20: ~20k movable records, ~3k leaders per round).
    """
    position = np.arange(items.shape[0], dtype=np.int64)
    left = np.ones(items.shape[0], dtype=bool)
    chosen: list[np.ndarray] = []
    for _ in range(per_group):
        top = np.full(n_groups, -np.inf)
        np.maximum.at(top, group[left], saving[left])
        at_top = np.flatnonzero(left & (saving == top[group]))
        first = np.full(n_groups, items.shape[0], dtype=np.int64)
        np.minimum.at(first, group[at_top], position[at_top])
        lead = first[first < items.shape[0]]
        if lead.shape[0] == 0:
            break
        chosen.append(lead)
        left[lead] = False
    picked = np.sort(np.concatenate(chosen)) if chosen else position[:0]
    return items[picked[np.argsort(-saving[picked], kind="stable")]]


def _first_per_group(items: np.ndarray, group: np.ndarray, per_group: int) -> np.ndarray:
    """``items`` in their order, keeping the first ``per_group`` of each group (``group[item]``)."""
    if items.shape[0] == 0:
        return items
    owner = group[items]
    order = np.argsort(owner, kind="stable")
    sorted_owner = owner[order]
    starts = np.flatnonzero(np.r_[True, sorted_owner[1:] != sorted_owner[:-1]])
    rank = np.arange(items.shape[0]) - np.repeat(starts, np.diff(np.r_[starts, items.shape[0]]))
    keep = np.zeros(items.shape[0], dtype=bool)
    keep[order[rank < per_group]] = True
    return items[keep]


def _span_rows(space: CostSpace, low: np.ndarray, high: np.ndarray) -> list[np.ndarray | None]:
    """Per QI with a span table, ``rows[q][v, c]`` = cost of cluster ``c``'s span of QI ``q`` joined with code ``v``.

    Built once per round (``size_q × clusters``), so pricing records against every cluster is
    one row gather and one add per QI (:func:`_joined`).
    """
    rows: list[np.ndarray | None] = []
    for q, table in enumerate(space.tables):
        if table is None or table.shape[0] * low.shape[1] > _SPAN_ROWS_LIMIT:
            rows.append(None)  # priced directly instead (bounded memory)
            continue
        every = np.arange(table.shape[0], dtype=np.int64)[:, None]
        rows.append(table[np.minimum(low[q][None, :], every), np.maximum(high[q][None, :], every)])
    return rows


def _fresh_tables(records: Clustering, group: np.ndarray, n_groups: int, compiled: bool) -> _Tables:
    """The clusters' boxes, sizes, costs and span rows (:data:`_Tables`) made from ``group``.

    ``compiled`` (tp28i): in one compiled pass over the records (``regrow`` over every cluster: the
    same values; numpy's ``minimum.at`` per QI and the span rows' fancy indexing cost ~10 ms at Adult).
    """
    space = records.space
    fits = all(t is not None and t.shape[0] * n_groups <= _SPAN_ROWS_LIMIT for t in space.tables)
    if not (compiled and fits and space.flat is not None):
        low, high, size, cost = records.priced_boxes(group, n_groups)
        return low, high, size, cost, _span_rows(space, low, high)
    from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

    n_qis = records.codes.shape[0]
    low, high = np.empty((n_qis, n_groups), dtype=np.int64), np.empty((n_qis, n_groups), dtype=np.int64)
    size, cost = np.empty(n_groups), np.empty(n_groups)
    rows = [np.empty((d.size, n_groups)) for d in space.dimensions]
    every = np.arange(n_groups, dtype=np.int64)
    cluster_refine_kernel.regrow(records.codes, np.arange(group.shape[0], dtype=np.int64), group, every, low, high,
                                 size, cost, tuple(rows), space)  # fmt: skip
    span_rows: list[np.ndarray | None] = list(rows)
    return low, high, size, cost, span_rows


def _joined(
    space: CostSpace,
    codes: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    block: np.ndarray,
    span_rows: list[np.ndarray | None] | None = None,
) -> np.ndarray:
    """``D(c ∪ r)`` for the records ``block`` (rows) and every cluster box ``c`` (columns)."""
    span_rows = span_rows if span_rows is not None else _span_rows(space, low, high)
    union = np.zeros((block.shape[0], low.shape[1]))
    for q, rows in enumerate(span_rows):
        if rows is not None:
            union += rows[codes[q, block]]
            continue
        lo = np.minimum(low[q][None, :], codes[q, block][:, None])
        hi = np.maximum(high[q][None, :], codes[q, block][:, None])
        union += space.widths(q, lo.ravel(), hi.ravel()).reshape(lo.shape)
    return union


def _stable_order(ids: np.ndarray, n_ids: int) -> np.ndarray:
    """``np.argsort(ids, kind="stable")`` for ids below ``n_ids``: as 16-bit keys when they fit (a radix sort, ~8×)."""
    if n_ids <= 1 << 16:
        return np.argsort(ids.astype(np.uint16), kind="stable")
    return np.argsort(ids, kind="stable")


def _by_unit(unit: np.ndarray, n_units: int) -> tuple[np.ndarray, np.ndarray]:
    """The records grouped by unit (ascending within each) and where each unit's start (one more: the end)."""
    return _stable_order(unit, n_units), np.concatenate(([0], np.cumsum(np.bincount(unit, minlength=n_units))))


def _bound_pair(
    sample: np.ndarray,
    rows: tuple[np.ndarray, ...],
    low: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    ceiling: np.ndarray,
) -> np.ndarray:
    """The two QIs whose span growth alone leaves out most clusters from the first units' pricing (tp28i).

    Per QI ``q`` and unit ``u`` of up to 8 of the units (``sample``, their ceilings): the clusters
    with ``D(c) + (|c| + 1) · (growth of c's span of q) > ceiling``; the two QIs leaving out most
    (Adult k = 5: age, education or marital status, ~75 % each, ~97 % together). Only the compiled
    pricing's speed depends on it, never a price.
    """
    if len(rows) < 2:
        return np.zeros(2, dtype=np.int64)
    few = min(8, sample.shape[1])
    columns = np.arange(size.shape[0])
    out = []
    for q, table in enumerate(rows):
        growth = table[sample[q, :few]] - table[low[q], columns][None, :]
        out.append(float((cost + (size + 1) * growth > ceiling[:few, None]).mean()))
    order = np.argsort(-np.array(out), kind="stable")
    return np.asarray(order[:2], dtype=np.int64)


class _Moves:
    """Rounds of single-record moves over one numbering of the clusters, re-pricing only what changed.

    Between rounds only the clusters a kept move touched change, so their boxes, their
    records' removal savings and their columns of the span tables are recomputed. Prices
    are kept per *unit* (distinct QI codes: equal records cost the same in any cluster) as
    its two cheapest clusters, first index among equal prices — a record's target is the
    first of them that is not its own cluster, as ``np.argmin`` over its row with its own
    cluster left out. A unit priced in round ``stamp`` keeps them unless one of the two
    changed since; else it is compared only with the clusters changed since. The moves are
    the ones a round priced from scratch would take (``reuse=False`` does that, for tests).
    """

    def __init__(
        self,
        records: Clustering,
        group: np.ndarray,
        n_groups: int,
        unit: np.ndarray,
        *,
        reuse: bool = True,
        compiled: bool = False,
        adopted: tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray] | None = None,
        tables: _Tables | None = None,
        by_unit: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """``adopted``: :meth:`adopt`'s arguments (after a dissolve round; savings made for the grown clusters only).

        ``tables``: the clusters' boxes, sizes, costs and span rows when known (the dissolve round's), else made here.
        ``by_unit``: :func:`_by_unit` of ``unit`` when known (it does not change between movers), else made here.
        """
        self.records, self.group, self.n_groups, self.reuse = records, group, n_groups, reuse
        #: Catch-ups run in :mod:`~privacy_plugins.core.anonymize.cluster_refine_kernel` (the same prices).
        self.compiled = compiled
        if tables is None:
            tables = _fresh_tables(records, group, n_groups, compiled)
        self.low, self.high, self.size, self.cost, self.span_rows = tables
        if adopted is None:
            self.saving = np.empty(group.shape[0])
            self._savings(np.arange(group.shape[0], dtype=np.int64), np.arange(n_groups, dtype=np.int64))
        else:  # a record's saving needs only its own cluster: the clusters that took no record keep theirs
            kept, renumber, grown = adopted
            self.saving = kept[-1].copy()
            now = renumber[grown]
            self._savings(_members(group, now, n_groups), now)
        self.clock = 0  # rounds so far
        # Last round whose moves changed the cluster (one more entry: "no second cluster", never changed).
        self.changed_at = np.full(n_groups + 1, -1, dtype=np.int64)
        self.unit = unit
        n_units = int(unit.max()) + 1 if unit.shape[0] else 0
        self.sample = np.zeros(n_units, dtype=np.int64)  # one record of each unit
        self.sample[unit] = np.arange(unit.shape[0])
        self.by_unit, self.unit_start = by_unit if by_unit is not None else _by_unit(unit, n_units)
        self.stamp = np.full(n_units, -1, dtype=np.int64)  # round of the unit's last pricing
        self.first = np.zeros(n_units, dtype=np.int64)
        self.second = np.full(n_units, n_groups, dtype=np.int64)
        self.first_added = np.full(n_units, np.inf)
        self.second_added = np.full(n_units, np.inf)
        # The saving up to which the unit's two are exact (tp28i): they are its two cheapest among the
        # clusters adding at most this; a record saving more has its unit priced afresh.
        self.ceiling = np.full(n_units, -np.inf)
        self.pair = np.zeros(0, dtype=np.int64)  # the compiled pricing's bound QIs (chosen at its first call)
        self.target = np.zeros(group.shape[0], dtype=np.int64)
        self.added = np.full(group.shape[0], np.inf)
        if adopted is not None:
            self.adopt(*adopted)

    def tables(self) -> _Tables:
        """The clusters' boxes, sizes, costs and span rows, up to date (a dissolve round takes them over)."""
        return self.low, self.high, self.size, self.cost, self.span_rows

    def kept(self) -> tuple[np.ndarray, ...]:
        """What :meth:`adopt` needs of these prices (the unit arrays and each cluster's last change; no tables)."""
        clock = np.array([self.clock], dtype=np.int64)
        kept = (self.changed_at, self.stamp, self.first, self.second, self.first_added, self.second_added)
        return (clock, *kept, self.ceiling, self.pair, self.saving)

    def adopt(self, kept: tuple[np.ndarray, ...], renumber: np.ndarray, grown: np.ndarray) -> None:
        """Take the prices of the mover before a dissolve round (``kept``) instead of pricing every unit afresh.

        ``renumber``: each old cluster's id now (-1: dissolved); ``grown``: the old ids of the
        clusters that took records. They count as changed in the last round, so a unit pointing
        at one is priced afresh and the others compare with them (catch-up); a unit pointing at a
        dissolved cluster is priced afresh. The numbering keeps the clusters' order, so the
        prices and their ties are those of a fresh pricing.
        """
        clock, changed_at, stamp, first, second, first_added, second_added, self.ceiling, self.pair, _ = kept
        self.clock = int(clock[0])
        old = renumber.shape[0]
        alive = renumber >= 0
        self.changed_at[renumber[alive]] = changed_at[:old][alive]
        self.changed_at[renumber[grown]] = self.clock
        to = np.append(renumber, self.n_groups)  # "no second cluster" stays the sentinel
        new_first, new_second = to[first], to[second]
        self.stamp = np.where((new_first < 0) | (new_second < 0), -1, stamp)
        self.first, self.second = np.maximum(new_first, 0), np.maximum(new_second, 0)
        self.first_added, self.second_added = first_added, second_added

    def _savings(self, members: np.ndarray, clusters: np.ndarray) -> None:
        """``|A| · D(A) − (|A| − 1) · D(A ∖ r)`` for ``members``, the records of ``clusters``."""
        local = np.full(self.n_groups, -1, dtype=np.int64)
        local[clusters] = np.arange(clusters.shape[0])
        own = self.group[members]
        local_own = local[own]
        space = self.records.space
        if self.compiled and space.flat is not None:  # tp28i: one compiled pass, the same sums
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            self.saving[members] = cluster_refine_kernel.savings(
                self.records.codes, members, local_own, clusters, self.low, self.high, self.size, self.cost, space
            )
            return
        box = np.zeros(members.shape[0])  # D(A ∖ r), QI by QI (as ``box_costs``): no n × QIs arrays
        for q in range(self.low.shape[0]):
            new_low, new_high = _without(
                self.records.codes[q, members], local_own, self.low[q, clusters], self.high[q, clusters]
            )
            box += self.records.space.widths(q, new_low, new_high)
        size, cost = self.size[own], self.cost[own]
        self.saving[members] = size * cost - (size - 1) * box

    def _changed(self, clusters: np.ndarray) -> None:
        """Boxes, savings and span columns after moves between ``clusters`` (sorted, unique)."""
        space, codes, group = self.records.space, self.records.codes, self.group
        members = _members(group, clusters, self.n_groups)
        local = np.searchsorted(clusters, group[members])
        if self.compiled and space.flat is not None and all(rows is not None for rows in self.span_rows):
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            # tp28i: boxes, sizes, costs and span columns in one compiled call (the same values as below).
            every_row = tuple(rows for rows in self.span_rows if rows is not None)
            cluster_refine_kernel.regrow(codes, members, local, clusters, self.low, self.high, self.size, self.cost,
                                         every_row, space)  # fmt: skip
            self._savings(members, clusters)
            self.changed_at[clusters] = self.clock
            return
        low, high = boxes(codes[:, members], local, clusters.shape[0])
        self.low[:, clusters], self.high[:, clusters] = low, high
        self.size[clusters] = np.bincount(local, minlength=clusters.shape[0])
        self.cost[clusters] = space.box_costs(low, high)
        self._savings(members, clusters)
        fresh = _span_rows(space, low, high)
        for rows, kept in zip(self.span_rows, fresh, strict=True):
            if rows is not None and kept is not None:
                rows[:, clusters] = kept
        self.changed_at[clusters] = self.clock

    def _added(self, units: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
        """What moving a record of each of ``units`` to each of ``clusters`` (``None``: all) adds."""
        space, codes = self.records.space, self.records.codes
        if clusters is None:
            added = (self.size + 1) * _joined(space, codes, self.low, self.high, self.sample[units], self.span_rows)
            added -= self.size * self.cost
            return added
        sub_rows = [rows[:, clusters] if rows is not None else None for rows in self.span_rows]
        union = _joined(space, codes, self.low[:, clusters], self.high[:, clusters], self.sample[units], sub_rows)
        return np.asarray((self.size[clusters] + 1) * union - self.size[clusters] * self.cost[clusters])

    @staticmethod
    def _two_cheapest(added: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per row the two cheapest ``columns`` (first index among equal prices) and their prices."""
        at = np.arange(added.shape[0])
        first = np.argmin(added, axis=1)
        first_added = added[at, first].copy()
        added[at, first] = np.inf
        second = np.argmin(added, axis=1)
        second_added = added[at, second]
        return columns[first], first_added, columns[second], second_added

    def _price(self, units: np.ndarray, ceiling: np.ndarray) -> None:
        """Each of ``units``' two cheapest clusters among those adding at most its ``ceiling`` (sentinel: none).

        A move of a record saving ``s ≤ ceiling`` gains only on a cluster adding less than ``s``,
        so the clusters above the ceiling never make a move: the moves are those of pricing every
        cluster (tp28i; the compiled pricing prices in full only the clusters a bound leaves in).
        """
        if self.compiled and units.shape[0] and all(rows is not None for rows in self.span_rows):
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            every_row = tuple(rows for rows in self.span_rows if rows is not None)
            sample = self.records.codes[:, self.sample[units]]
            if self.pair.shape[0] == 0:
                self.pair = _bound_pair(sample, every_row, self.low, self.size, self.cost, ceiling)
            cheapest = (np.empty(units.shape[0], dtype=np.int64), np.empty(units.shape[0]),
                        np.empty(units.shape[0], dtype=np.int64), np.empty(units.shape[0]))  # fmt: skip
            cluster_refine_kernel.price(sample, every_row, self.size, self.cost, cheapest, ceiling, self.low,
                                        (int(self.pair[0]), int(self.pair[1])))  # fmt: skip
            self.first[units], self.first_added[units], self.second[units], self.second_added[units] = cheapest
            return
        step = max(8, min(_BLOCK, _CELLS // max(self.n_groups, 1)))
        columns = np.arange(self.n_groups, dtype=np.int64)
        for start in range(0, units.shape[0], step):
            part = units[start : start + step]
            added = self._added(part, None)
            added[added > ceiling[start : start + step, None]] = np.inf
            first, first_added, second, second_added = self._two_cheapest(added, columns)
            first[~(first_added < np.inf)] = self.n_groups  # the sentinel: no cluster within the ceiling
            second[~(second_added < np.inf)] = self.n_groups
            self.first[part], self.first_added[part] = first, first_added
            self.second[part], self.second_added[part] = second, second_added

    def _catch_up(self, units: np.ndarray, since: int) -> None:
        """``units``, exact at round ``since``, compared with the clusters changed from then on."""
        clusters = np.flatnonzero(self.changed_at[: self.n_groups] >= since)
        if clusters.shape[0] == 0:
            return
        step = max(8, min(_BLOCK, _CELLS // max(clusters.shape[0], 1)))
        for start in range(0, units.shape[0], step):
            part = units[start : start + step]
            first, first_added, second, second_added = self._two_cheapest(self._added(part, clusters), clusters)
            if clusters.shape[0] == 1:
                second, second_added = np.full_like(second, self.n_groups), np.full_like(second_added, np.inf)
            # The two cheapest of four distinct clusters: the kept two (unchanged) and the changed ones' two.
            values = np.stack([self.first_added[part], self.second_added[part], first_added, second_added], axis=1)
            ids = np.stack([self.first[part], self.second[part], first, second], axis=1)
            order = np.lexsort((ids, values), axis=1)[:, :2]
            at = np.arange(part.shape[0])[:, None]
            self.first[part], self.second[part] = ids[at, order].T
            self.first_added[part], self.second_added[part] = values[at, order].T

    def _largest_saving(self, units: np.ndarray) -> np.ndarray:
        """Per unit of ``units`` the largest saving of its records (from the records grouped by unit)."""
        if units.shape[0] == 0:
            return np.zeros(0)
        starts, stops = self.unit_start[units], self.unit_start[units + 1]
        lengths = stops - starts
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        at = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(offsets - starts, lengths)
        return np.asarray(np.maximum.reduceat(self.saving[self.by_unit[at]], offsets))

    def _prices(self, movable: np.ndarray) -> None:
        """Bring the cheapest targets of ``movable`` up to date: kept, caught up or priced afresh."""
        units, at = np.unique(self.unit[movable], return_inverse=True)
        need = np.full(units.shape[0], -np.inf)  # the largest saving of each unit's candidates
        np.maximum.at(need, at, self.saving[movable])
        stamp = self.stamp[units]
        exact = (stamp >= 0) & (self.changed_at[self.first[units]] < stamp)
        exact &= (self.changed_at[self.second[units]] < stamp) & (need <= self.ceiling[units])
        if not self.reuse:
            exact[:] = False
        fresh = units[~exact]
        # The ceiling: the largest saving of any record of the unit, so that every record of it
        # whose cluster is unchanged since is judged exactly (settled or not) by these prices.
        self.ceiling[fresh] = self._largest_saving(fresh)
        self._price(fresh, self.ceiling[fresh])
        behind = exact & (stamp < self.clock)
        if self.compiled and behind.any() and all(rows is not None for rows in self.span_rows):
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            late = units[behind]
            cheapest = (self.first[late], self.first_added[late], self.second[late], self.second_added[late])
            cluster_refine_kernel.catch_up(
                self.records.codes[:, self.sample[late]], stamp[behind], self.changed_at,
                tuple(rows for rows in self.span_rows if rows is not None), self.size, self.cost, cheapest,
            )  # fmt: skip
            self.first[late], self.first_added[late], self.second[late], self.second_added[late] = cheapest
        else:
            for since in np.unique(stamp[behind]).tolist():
                self._catch_up(units[behind & (stamp == since)], since)
        self.stamp[units] = self.clock
        unit = self.unit[movable]
        own = self.first[unit] == self.group[movable]
        self.target[movable] = np.where(own, self.second[unit], self.first[unit])
        self.added[movable] = np.where(own, self.second_added[unit], self.first_added[unit])

    def _settled(self, records: np.ndarray) -> np.ndarray:
        """Records priced since their own cluster and their two cheapest last changed, with no gain then."""
        unit = self.unit[records]
        stamp = self.stamp[unit]
        changed = self.changed_at
        settled = (stamp >= 0) & (changed[self.group[records]] < stamp)
        settled &= (changed[self.first[unit]] < stamp) & (changed[self.second[unit]] < stamp)
        own = self.first[unit] == self.group[records]
        added = np.where(own, self.second_added[unit], self.first_added[unit])
        saving = self.saving[records]
        return settled & (saving - added <= _EPS) & (saving <= self.ceiling[unit])

    def round(
        self, rng: np.random.Generator, *, min_size: int, limit: int, per_cluster: int, stats: RefineStats
    ) -> int:
        """One round of moves (``group`` changed in place); the number of moves kept."""
        self.clock += 1
        group, size, saving = self.group, self.size, self.saving
        movable = np.flatnonzero(size[group] > min_size)
        if movable.shape[0] == 0:
            return 0
        # Largest savings first; a random order among equal savings (seeded). At most ``per_cluster``
        # candidates per cluster (its largest savings): a cluster takes part in one move per round,
        # so more would only crowd the others out.
        movable = movable[rng.permutation(movable.shape[0])]
        # The leaders with _SPARE more per cluster, settled ones left out (their slots go to the next),
        # then at most ``per_cluster`` per cluster: the filter reads the leaders only, not every record.
        if self.compiled:  # the same picks in one compiled pass
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            prices = (self.stamp, self.changed_at, self.first, self.second, self.first_added, self.second_added,
                      self.ceiling)  # fmt: skip
            movable = movable[cluster_refine_kernel.candidates(
                saving[movable], group[movable], self.unit[movable], self.n_groups, per_cluster + _SPARE, per_cluster,
                limit, _EPS, prices,
            )]  # fmt: skip
        else:
            movable = _leaders(movable, saving[movable], group[movable], self.n_groups, per_cluster + _SPARE)
            movable = _first_per_group(movable[~self._settled(movable)], group, per_cluster)[:limit]
        self._prices(movable)
        target, gain = self.target[movable], saving[movable] - self.added[movable]
        touched = np.zeros(self.n_groups, dtype=bool)
        moves: list[tuple[int, int, int]] = []
        for i in np.argsort(-gain, kind="stable").tolist():
            if gain[i] <= _EPS:
                break
            r, source, to = int(movable[i]), int(group[movable[i]]), int(target[i])
            if touched[source] or touched[to]:
                continue
            touched[source] = touched[to] = True
            moves.append((r, source, to))
        if not moves:
            return 0
        for r, _, to in moves:
            group[r] = to
        bad = self.records.failing(self.records.rows, group, self.n_groups)
        kept: list[int] = []
        for r, source, to in moves:
            if bad[source] or bad[to]:
                group[r] = source
                stats.undone += 1
            else:
                kept.extend((source, to))
        stats.moves += len(kept) // 2
        if kept:
            self._changed(np.unique(np.array(kept, dtype=np.int64)))
        return len(kept) // 2


def _walk(
    space: CostSpace,
    member_codes: np.ndarray,
    added: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    size: np.ndarray,
    cost: np.ndarray,
    limit: float,
) -> tuple[bool, np.ndarray, list[int]]:
    """Send the records (``member_codes``, prices ``added``) one by one, cheapest first, to their cheapest cluster.

    Whether all found a place for a total below ``limit``; each record's target; the clusters
    changed (boxes, sizes, costs and ``added`` updated in place; the boxes restored on failure).
    """
    saved: dict[int, tuple[np.ndarray, np.ndarray, float, float]] = {}
    targets = np.empty(member_codes.shape[1], dtype=np.int64)
    left = np.ones(member_codes.shape[1], dtype=bool)
    total = 0.0
    # Each record's cheapest cluster (first among ties), kept up to date as one column changes.
    row_min, row_at = added.min(axis=1), np.argmin(added, axis=1)
    while left.any() and total < limit:
        i = int(np.argmin(np.where(left, row_min, np.inf)))
        if not left[i] or not np.isfinite(row_min[i]):
            total = np.inf  # a record fits nowhere: no dissolution
            break
        to = int(row_at[i])
        total += float(added[i, to])
        targets[i], left[i] = to, False
        if to not in saved:
            saved[to] = (low[:, to].copy(), high[:, to].copy(), size[to], cost[to])
        low[:, to] = np.minimum(low[:, to], member_codes[:, i])
        high[:, to] = np.maximum(high[:, to], member_codes[:, i])
        size[to] += 1
        cost[to] = float(space.box_costs(low[:, to : to + 1], high[:, to : to + 1])[0])
        column = space.join_one(low[:, to], high[:, to], member_codes)
        added[:, to] = fresh = (size[to] + 1) * column - size[to] * cost[to]
        stale = left & (row_at == to)  # their cheapest cluster changed: look again
        if stale.any():
            again = np.flatnonzero(stale)
            row_min[again], row_at[again] = added[again].min(axis=1), np.argmin(added[again], axis=1)
        better = left & ~stale & ((fresh < row_min) | ((fresh == row_min) & (to < row_at)))
        row_min[better], row_at[better] = fresh[better], to
    ok = not left.any() and total < limit
    if not ok:
        for back, (lo, hi, n_to, c_to) in saved.items():
            low[:, back], high[:, back], size[back], cost[back] = lo, hi, n_to, c_to
    return ok, targets, list(saved)


def _dissolutions(
    records: Clustering,
    order: np.ndarray,
    by_group: np.ndarray,
    starts: np.ndarray,
    touched: np.ndarray,
    loss: np.ndarray,
    tables: _Tables,
    every_row: tuple[np.ndarray, ...],
    compiled: bool,
) -> Iterator[tuple[int, np.ndarray, np.ndarray, list[int]]]:
    """The candidates of ``order`` whose walk succeeds, in order: cluster, members, targets, clusters grown.

    Each is yielded after its walk changed the boxes (in place); the caller marks it and its targets
    ``touched`` and brings the span rows up to date before the next is tried. ``every_row`` (compiled):
    the candidates are priced, bounded and walked in :func:`cluster_refine_kernel.dissolve_scan` until one
    succeeds (tp28i: ~600 Python iterations a round less; the skip bounds' sums are numpy's, see there);
    else the walk runs compiled when ``compiled`` (numpy's prices: a QI has no span rows).
    """
    space, codes = records.space, records.codes
    low, high, size, cost, span_rows = tables
    if every_row:
        from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

        at = 0
        while at < order.shape[0]:
            at, found, targets, changed = cluster_refine_kernel.dissolve_scan(
                codes, by_group, starts, order, at, touched, loss, every_row, low, high, size, cost, space, _EPS
            )
            if found < 0:
                return
            yield found, by_group[starts[found] : starts[found + 1]], targets, changed
        return
    for a in order.tolist():
        if touched[a] or loss[a] <= _EPS:
            continue
        members = by_group[starts[a] : starts[a + 1]]
        closed = touched.copy()
        closed[a] = True
        # Whatever the order, each record ends in a box holding it and its target's: the
        # dissolution adds at least Σ_r min_t D(t ∪ r). No saving possible: skip the walk.
        union = _joined(space, codes, low, high, members, span_rows)
        union[:, closed] = np.inf
        if float(union.min(axis=1).sum()) >= loss[a] - _EPS:
            continue
        added = (size + 1) * union - size * cost
        added[:, closed] = np.inf
        # Records go one by one (cheapest first) to their cheapest cluster, whose box, size
        # and cost are updated at once, so later records see the exact price.
        if compiled:
            from privacy_plugins.core.anonymize import cluster_refine_kernel  # imports numba: only when it runs

            ok, targets, changed = cluster_refine_kernel.walk(
                added, low, high, size, cost, codes[:, members], space, loss[a] - _EPS
            )
        else:
            ok, targets, changed = _walk(space, codes[:, members], added, low, high, size, cost, loss[a] - _EPS)
        if ok:
            yield a, members, targets, changed


def _dissolve_round(
    records: Clustering,
    group: np.ndarray,
    n_groups: int,
    *,
    candidates: int,
    stats: RefineStats,
    compiled: bool = False,
    tables: _Tables | None = None,
) -> tuple[np.ndarray, int, int, np.ndarray, np.ndarray, _Tables | None]:
    """Dissolve the costliest clusters whose records each fit elsewhere for less.

    Returns the new groups, their count, the number dissolved, each old cluster's new id (-1:
    dissolved), the old ids of the clusters that took records and the new clusters' tables
    (``None`` when a dissolution was undone). ``tables``: the clusters' (:class:`_Moves`'s, up to
    date; changed in place), so neither boxes nor span rows are made afresh on either side of the round.

    A cluster is dissolved when sending its records one by one to the cheapest other cluster
    (boxes updated as they grow) adds less than the cluster's ``|A| · D(A)``; every cluster
    takes part in at most one dissolution per round, so the prices are exact. ``compiled``:
    the walk runs in :mod:`~privacy_plugins.core.anonymize.cluster_refine_kernel` (same choices).
    """
    unchanged = np.arange(n_groups, dtype=np.int64)
    if n_groups < 2:
        return group, n_groups, 0, unchanged, unchanged[:0], tables
    space = records.space
    if tables is None:
        tables = _fresh_tables(records, group, n_groups, compiled)
    low, high, size, cost, span_rows = tables
    loss = size * cost
    touched = np.zeros(n_groups, dtype=bool)
    # Each cluster's members in ascending order (as ``np.flatnonzero(group == a)``), from one sort.
    by_group = _stable_order(group, n_groups)
    starts = np.concatenate(([0], np.cumsum(np.bincount(group, minlength=n_groups))))
    plans: list[tuple[int, np.ndarray, np.ndarray]] = []
    every_row: tuple[np.ndarray, ...] = ()  # compiled pricing: the span rows of every QI (none missing)
    if compiled and all(rows is not None for rows in span_rows):
        every_row = tuple(rows for rows in span_rows if rows is not None)
    order = np.argsort(-loss, kind="stable")[:candidates]
    for a, members, targets, changed in _dissolutions(
        records, order, by_group, starts, touched, loss, (low, high, size, cost, span_rows), every_row, compiled
    ):
        plans.append((a, members, targets))
        touched[a] = True
        touched[changed] = True
        if changed:  # the span rows follow the boxes kept (a failed walk restores them exactly)
            fresh = _span_rows(space, low[:, changed], high[:, changed])
            for rows, kept in zip(span_rows, fresh, strict=True):
                if rows is not None and kept is not None:
                    rows[:, changed] = kept
    if not plans:
        return group, n_groups, 0, unchanged, unchanged[:0], tables
    for _, members, targets in plans:
        group[members] = targets
    bad = records.failing(records.rows, group, n_groups)
    dissolved, grown = 0, []
    for a, members, targets in plans:
        if bad[targets].any():
            group[members] = a
            stats.undone += 1
            tables = None  # its targets' boxes grew: made afresh by the next mover
        else:
            dissolved += 1
            grown.append(targets)
    stats.dissolved += dissolved
    # The clusters left, renumbered in order (as ``np.unique(group, return_inverse=True)``, without its sort).
    survivors = np.flatnonzero(np.bincount(group, minlength=n_groups))
    renumber = np.full(n_groups, -1, dtype=np.int64)
    renumber[survivors] = np.arange(survivors.shape[0])
    group = renumber[group]
    grown_ids = np.unique(np.concatenate(grown)) if grown else unchanged[:0]
    if tables is not None:  # the survivors' columns, in their order (the boxes grew with the walks)
        # ``np.take`` along the columns: C order, as made afresh, in one copy (``a[:, ids]`` comes out in
        # Fortran order and needed a second).
        tables = (np.take(low, survivors, axis=1), np.take(high, survivors, axis=1), size[survivors], cost[survivors],
                  [np.take(rows, survivors, axis=1) if rows is not None else None for rows in span_rows])  # fmt: skip
    return group, int(group.max()) + 1, dissolved, renumber, grown_ids, tables


def refine_clusters(
    space: CostSpace,
    failing: Failing,
    rows: np.ndarray,
    group: np.ndarray,
    rng: np.random.Generator,
    *,
    min_size: int,
    rounds: int = 20,
    limit: int | None = None,
    per_cluster: int = 2,
    dissolve: int | None = None,
    stats: RefineStats | None = None,
    progress: Callable[[int], None] | None = None,
    reuse: bool = True,
    compile_walk: bool = True,
) -> np.ndarray:
    """Improve the clustering ``group`` (dense ids over ``rows``) by moves; return the new groups (dense).

    Every cluster of ``group`` must satisfy the models; so does every cluster returned.
    ``progress(round)`` is called after each round. ``limit`` (candidates priced per round)
    defaults to about two million prices per round over the clusters; when no move gains,
    up to ``dissolve`` of the costliest clusters are tried for dissolution (0: never; default:
    about forty million record × cluster prices per dissolution round). ``reuse=False`` prices
    every candidate afresh each round (the reference the kept prices are tested against);
    ``compile_walk=False`` keeps the dissolution walk in numpy where numba is installed (tests).
    """
    stats = stats if stats is not None else RefineStats()
    group = group.copy()
    records = Clustering(space, failing, rows, columns(space.codes, rows))
    n_groups = int(group.max()) + 1
    unit = units(records.codes, [d.size for d in space.dimensions])[1]
    compiled = compile_walk and space.flat is not None and importlib.util.find_spec("numba") is not None
    by_unit = _by_unit(unit, int(unit.max()) + 1 if unit.shape[0] else 0)
    mover = _Moves(records, group, n_groups, unit, reuse=reuse, compiled=compiled, by_unit=by_unit)
    dissolved_per_round: list[int] = []  # clusters each dissolve round dissolved
    tables: _Tables | None = None  # the mover's tables handed to a dissolve round and back (None: made afresh)
    for round_ in range(rounds):
        stats.rounds += 1
        budget = limit if limit is not None else max(256, _BUDGET // max(n_groups, 1))
        moved = mover.round(rng, min_size=min_size, limit=budget, per_cluster=per_cluster, stats=stats)
        if moved == 0:
            tries = dissolve if dissolve is not None else max(64, _DISSOLVE_BUDGET // max(group.shape[0], 1))
            if tries <= 0 or _dissolved_few(dissolved_per_round):
                break
            kept, tables = mover.kept(), mover.tables()  # its unit prices, renumbered after the round
            del mover
            group, n_groups, dissolved, renumber, grown, tables = _dissolve_round(
                records, group, n_groups, candidates=tries, stats=stats, compiled=compiled, tables=tables
            )
            dissolved_per_round.append(dissolved)
            if dissolved == 0:
                break
            # Both paths carry the stamps across the round (which records are settled); ``reuse=False``
            # still prices every candidate's unit afresh, so it stays the reference for the kept prices.
            adopted = (kept, renumber, grown)
            mover = _Moves(records, group, n_groups, unit, reuse=reuse, compiled=compiled, adopted=adopted,
                           tables=tables, by_unit=by_unit)  # fmt: skip
        if progress is not None:
            progress(round_ + 1)
    return group
