"""The vectorized engine of greedy clustering (k-member and two-phase): costs of boxes, greedy growth, repair.

A cluster is summarized by its *box*: per quasi-identifier the smallest and largest
code of its records (:class:`~privacy_plugins.core.anonymize.partition_split.Dimension`
codes: numeric values in sorted order, hierarchy leaves with siblings adjacent, so a
code span ``[lo, hi]`` publishes as a range or as the lowest common ancestor (LCA) of
the leaves ``lo..hi``). The box's per-record loss is ``D(c) = Σ_q width_q(lo_q, hi_q)``,
the widths being exactly the NCP costs Mondrian uses, and the cluster's information
loss is Byun et al.'s ``IL(c) = |c| · D(c)``.

The quadratic inner step of k-member (the cost of adding *every* unassigned record
to the growing cluster) is one numpy expression per QI: the cost of the span
``[min(lo, v), max(hi, v)]`` is first computed for every code ``v`` of the QI (a row
of a precomputed ``size × size`` table of span costs when the domain has at most
:data:`TABLE_LIMIT` codes, else the widths of ``size`` spans), then gathered by the
records' codes. A step thus costs one gather and one add per QI over the
unassigned records, whatever the hierarchy's height. Without diversity columns the pass
runs over *units* (distinct QI tuples with counts; Adult: 11,089 for 30,162 rows), takes
a unit's records in bulk, and re-prices only the QIs whose span the last unit widened.

References:
    Byun J.-W., Kamra A., Bertino E., Li N. Efficient k-anonymization using clustering
    techniques. DASFAA 2007 (greedy k-member clustering).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from privacy_plugins.core.anonymize.partition_split import Dimension

__all__ = [
    "TABLE_LIMIT",
    "Clustering",
    "CostSpace",
    "GreedyStats",
    "boxes",
    "columns",
    "greedy_clusters",
    "size_summary",
    "stable_order",
    "units",
]

#: Domains with at most this many codes get a precomputed table of all span costs.
TABLE_LIMIT = 1024
_EPS = 1e-12
#: With a strict test (models merging does not repair), a cluster grows up to this many times the smallest size.
STRICT_GROWTH = 2

#: ``failing(rows, group_of_row, n_groups) -> bool[n_groups]``: which groups of ``rows`` miss a model.
Failing = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


class CostSpace:
    """The coded quasi-identifiers and the NCP cost of any box over them."""

    def __init__(self, dimensions: Sequence[Dimension]) -> None:
        n = int(dimensions[0].codes.shape[0]) if dimensions else 0
        self.codes = np.stack([d.codes for d in dimensions]) if dimensions else np.zeros((0, n), dtype=np.int64)
        # The dimensions read their codes from the stacked array (one copy of the codes, not two).
        self.dimensions = tuple(replace(d, codes=self.codes[q]) for q, d in enumerate(dimensions))
        self.tables: list[np.ndarray | None] = []
        self._all_codes = [np.arange(d.size, dtype=np.int64) for d in dimensions]
        for d in dimensions:
            if d.size <= TABLE_LIMIT:
                low, high = np.triu_indices(d.size)
                table = np.zeros((d.size, d.size))
                table[low, high] = d.widths(low.astype(np.int64), high.astype(np.int64))
                self.tables.append(table)
            else:
                self.tables.append(None)
        # Every table in one flat array (when every QI has one): a box against a few records,
        # all QIs at once, is one gather and one sum (:meth:`join_one`).
        self.flat: np.ndarray | None = None
        if self.tables and all(table is not None for table in self.tables):
            self.flat = np.concatenate([table.ravel() for table in self.tables if table is not None])
            sizes = np.array([d.size for d in dimensions], dtype=np.int64)
            self.strides = sizes[:, None]
            self.offsets = np.concatenate(([0], np.cumsum(sizes * sizes)[:-1]))[:, None]

    @property
    def n_qis(self) -> int:
        """Number of quasi-identifiers."""
        return len(self.dimensions)

    def widths(self, q: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """NCP cost of the spans ``low..high`` (``low <= high``) of QI ``q``."""
        table = self.tables[q]
        return table[low, high] if table is not None else self.dimensions[q].widths(low, high)

    def box_costs(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """``D`` of boxes given as ``(n_qis, m)`` arrays of lowest / highest codes."""
        total = np.zeros(low.shape[1])
        for q in range(self.n_qis):
            total += self.widths(q, low[q], high[q])
        return total

    def join_term(self, q: int, low: np.ndarray, high: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """QI ``q``'s share of :meth:`join_costs`: the box's span of ``q`` joined with each record's code."""
        every = self._all_codes[q]
        per_code = self.widths(q, np.minimum(low[q], every), np.maximum(high[q], every))
        return np.asarray(per_code[codes[q]], dtype=float)

    def join_one(self, low: np.ndarray, high: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """:meth:`join_costs` for a few records: the flat tables gathered directly (no per-code row)."""
        if self.flat is None:
            return self.join_costs(low, high, codes)
        at = self.offsets + np.minimum(low[:, None], codes) * self.strides + np.maximum(high[:, None], codes)
        return np.asarray(self.flat[at].sum(axis=0), dtype=float)

    def join_costs(self, low: np.ndarray, high: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """``D(box ∪ r)`` for one box (``low``, ``high``: per QI) and records given by their ``(n_qis, m)`` codes."""
        total = np.zeros(codes.shape[1])
        for q in range(self.n_qis):
            every = self._all_codes[q]
            per_code = self.widths(q, np.minimum(low[q], every), np.maximum(high[q], every))
            total += per_code[codes[q]]
        return total


@dataclass(frozen=True)
class Clustering:
    """The records being clustered: the cost space, the model test, the ``rows`` and their ``space.codes[:, rows]``."""

    space: CostSpace
    failing: Failing
    rows: np.ndarray
    codes: np.ndarray

    def priced_boxes(self, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per group: its box (``low``, ``high``), its size (float) and its box cost ``D``."""
        low, high = boxes(self.codes, group, n_groups)
        size = np.bincount(group, minlength=n_groups).astype(float)
        return low, high, size, self.space.box_costs(low, high)


@dataclass
class GreedyStats:
    """Counters of one greedy run (summed over the calls that share it)."""

    clusters: int = 0
    leftovers: int = 0
    absorbed: int = 0
    repairs: int = 0
    model_checks: int = 0
    steps: int = field(default=0)


def _pick(values: np.ndarray, rng: np.random.Generator, *, largest: bool) -> int:
    """Index of the smallest (largest) finite value, a seeded random one among exact ties."""
    best = values.max() if largest else values.min()
    ties = np.flatnonzero(np.abs(values - best) <= _EPS) if np.isfinite(best) else np.flatnonzero(values == best)
    return int(ties[0] if ties.shape[0] == 1 else ties[rng.integers(ties.shape[0])])


def _numba() -> bool:
    """Whether numba is installed (the kernel module imports it, ~0.5 s: loaded only when it runs)."""
    return importlib.util.find_spec("numba") is not None


def _pick_key(values: np.ndarray, keys: np.ndarray, *, largest: bool) -> int:
    """Index of the smallest (largest) finite value, the lowest seeded key among ties."""
    best = values.max() if largest else values.min()
    ties = np.flatnonzero(np.abs(values - best) <= _EPS) if np.isfinite(best) else np.flatnonzero(values == best)
    return int(ties[0] if ties.shape[0] == 1 else ties[np.argmin(keys[ties])])


def greedy_clusters(
    space: CostSpace,
    failing: Failing,
    rows: np.ndarray,
    rng: np.random.Generator,
    *,
    min_size: int,
    relax: bool,
    diversity: Sequence[np.ndarray] = (),
    stats: GreedyStats | None = None,
    progress: Callable[[int], None] | None = None,
    by_size: bool = False,
    strict: Failing | None = None,
) -> np.ndarray:
    """Cluster ``rows`` greedily (Byun et al.), every cluster satisfying the models; return a group per row.

    A cluster starts at the unassigned record furthest from the last record placed,
    grows by the record of least ``D(c ∪ r)`` (random among ties) until it has at least
    ``min_size`` records and ``failing`` accepts it; while it is too small for the
    models but big enough in size, records bringing a value of a ``diversity`` column
    not yet in the cluster are preferred. With ``relax`` (the first two-phase phase 1, kept for comparison) a
    closed cluster then absorbs every unassigned record inside its box (``D`` unchanged).
    Records left over join the group of least ``IL`` increase; groups that still miss a
    model (possible for non-monotone models) are merged into their cheapest neighbour.
    ``rows`` as one group must satisfy the models (the caller checks). ``progress(done)``
    gets the number of records in closed clusters, about every 1 % of them, and ``n`` at the end.
    ``by_size``: every model holds iff a cluster has ``min_size`` records; then, without ``relax``
    and ``diversity``, the compiled pass (:mod:`~privacy_plugins.core.anonymize.cluster_greedy_kernel`)
    runs where numba is installed (the same clusters).
    ``strict`` (models merging does not repair, :mod:`~privacy_plugins.core.anonymize.cluster_suppress`):
    a cluster grows until ``strict`` accepts it, up to :data:`STRICT_GROWTH` × ``min_size`` records;
    then ``failing`` (their relaxation) decides.
    """
    stats = stats if stats is not None else GreedyStats()
    n = rows.shape[0]
    codes = space.codes[:, rows]
    div = [column[rows] for column in diversity]
    if div:
        group, n_groups = _greedy_records(space, failing, rows, codes, div, rng, min_size=min_size, relax=relax,
                                          stats=stats, progress=progress, strict=strict)  # fmt: skip
    else:
        group, n_groups = _greedy_units(space, failing, rows, codes, rng, min_size=min_size, relax=relax,
                                        stats=stats, progress=progress, by_size=by_size)  # fmt: skip
    stats.clusters += n_groups
    if n_groups == 0:
        group[:] = 0
        if progress is not None:
            progress(n)
        return group
    left = np.flatnonzero(group < 0)
    stats.leftovers += int(left.shape[0])
    _assign_leftovers(space, codes, group, n_groups, rng.permutation(left))
    group = _repair(Clustering(space, failing, rows, codes), group, n_groups, stats)
    if progress is not None:
        progress(n)
    return group


def _greedy_records(
    space: CostSpace,
    failing: Failing,
    rows: np.ndarray,
    codes: np.ndarray,
    div: Sequence[np.ndarray],
    rng: np.random.Generator,
    *,
    min_size: int,
    relax: bool,
    stats: GreedyStats,
    progress: Callable[[int], None] | None,
    strict: Failing | None = None,
) -> tuple[np.ndarray, int]:
    """The greedy pass one record at a time (models read columns besides the QIs); groups (-1: left over)."""
    n = rows.shape[0]
    group = np.full(n, -1, dtype=np.int64)
    n_groups = 0
    remaining = np.arange(n, dtype=np.int64)
    last = int(rng.integers(n))
    step, reported = max(1, n // 100), 0
    while remaining.shape[0] >= min_size:
        sub = codes[:, remaining]
        far = space.join_costs(codes[:, last], codes[:, last], sub)
        seed = int(remaining[_pick(far, rng, largest=True)])
        alive = np.ones(remaining.shape[0], dtype=bool)
        alive[remaining == seed] = False
        members = [seed]
        low, high = codes[:, seed].copy(), codes[:, seed].copy()
        present = [np.zeros(int(c.max()) + 1, dtype=bool) for c in div]
        for p, c in zip(present, div, strict=True):
            p[c[seed]] = True
        valid = False
        while True:
            if len(members) >= min_size:
                stats.model_checks += 1
                test = strict if strict is not None and len(members) < STRICT_GROWTH * min_size else failing
                if not test(rows[members], np.zeros(len(members), dtype=np.int64), 1)[0]:
                    valid = True
                    break
            if not alive.any():
                if strict is not None and len(members) >= min_size:  # too few left to reach 2 · min_size
                    valid = not failing(rows[members], np.zeros(len(members), dtype=np.int64), 1)[0]
                break
            cost = space.join_costs(low, high, sub)
            cost[~alive] = np.inf
            if len(members) >= min_size and div:
                new = np.zeros(remaining.shape[0], dtype=bool)
                for p, c in zip(present, div, strict=True):
                    new |= ~p[c[remaining]]
                new &= alive
                if new.any():
                    cost[~new] = np.inf
            at = _pick(cost, rng, largest=False)
            alive[at] = False
            last = int(remaining[at])
            members.append(last)
            np.minimum(low, codes[:, last], out=low)
            np.maximum(high, codes[:, last], out=high)
            for p, c in zip(present, div, strict=True):
                p[c[last]] = True
            stats.steps += 1
        if not valid:  # the rest cannot form a valid cluster: its records are leftovers
            break
        if relax and alive.any():
            box = float(space.box_costs(low[:, None], high[:, None])[0])
            inside = alive & (space.join_costs(low, high, sub) <= box + _EPS)
            members.extend(remaining[inside].tolist())
            stats.absorbed += int(inside.sum())
            alive &= ~inside
        group[members] = n_groups
        n_groups += 1
        remaining = remaining[alive]
        if progress is not None and n - remaining.shape[0] - reported >= step:
            reported = n - remaining.shape[0]
            progress(reported)
    return group, n_groups


def _greedy_units(
    space: CostSpace,
    failing: Failing,
    rows: np.ndarray,
    codes: np.ndarray,
    rng: np.random.Generator,
    *,
    min_size: int,
    relax: bool,
    stats: GreedyStats,
    progress: Callable[[int], None] | None,
    by_size: bool = False,
) -> tuple[np.ndarray, int]:
    """The greedy pass over *units* (distinct QI tuples with counts); groups per record (-1: left over).

    Records of one unit cost the same anywhere, and once one of them is in a cluster the
    others join it at no cost (the least any record can add), so they are taken in bulk:
    as many as the cluster still needs (all of them when relaxing). Prices are computed
    over the units left, not the records: one gather per QI over at most that many units.
    """
    n = rows.shape[0]
    group = np.full(n, -1, dtype=np.int64)
    tuples, inverse, counts = np.unique(codes.T, axis=0, return_inverse=True, return_counts=True)
    unit_codes = np.ascontiguousarray(tuples.T)
    inverse = np.asarray(inverse).ravel()
    # Each unit's records in a seeded random order; a unit gives its first ``used`` records.
    shuffled = rng.permutation(n)
    by_unit = shuffled[np.argsort(inverse[shuffled], kind="stable")]
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    used = np.zeros(counts.shape[0], dtype=np.int64)
    left_units = np.arange(counts.shape[0], dtype=np.int64)  # units with records left
    left_records = n
    n_groups = 0
    start = int(inverse[int(rng.integers(n))])
    last = unit_codes[:, start]
    keys = np.asarray(rng.random(counts.shape[0]), dtype=float)  # ties go to the lowest key
    step, reported = max(1, n // 100), 0
    if by_size and not relax and space.flat is not None and _numba():
        from privacy_plugins.core.anonymize import cluster_greedy_kernel  # imports numba: only when it runs

        units, taken, cluster, n_groups = cluster_greedy_kernel.greedy_takes(
            unit_codes, counts, keys, min_size, start, space, progress
        )
        # Each take's records: the unit's next ``taken`` records in its seeded order.
        order = np.argsort(units, kind="stable")
        ends = np.cumsum(taken[order])
        earlier = np.zeros(units.shape[0], dtype=np.int64)  # records of the unit taken before this take
        unit_start = np.searchsorted(units[order], units[order], side="left")
        earlier[order] = ends - taken[order] - np.concatenate(([0], ends))[unit_start]
        placed = int(taken.sum())
        within = np.arange(placed) - np.repeat(np.cumsum(taken) - taken, taken)
        group[by_unit[np.repeat(first[units] + earlier, taken) + within]] = np.repeat(cluster, taken)
        stats.steps += int(units.shape[0]) - n_groups
        stats.model_checks += n_groups
        if progress is not None:
            progress(placed)
        return group, n_groups

    def take(unit: int, count: int, cluster: list[int]) -> None:
        start = int(first[unit] + used[unit])
        cluster.extend(by_unit[start : start + count].tolist())
        used[unit] += count

    while left_records >= min_size:
        sub = unit_codes[:, left_units]
        seed = int(left_units[_pick_key(space.join_costs(last, last, sub), keys[left_units], largest=True)])
        members: list[int] = []
        take(seed, min(int(counts[seed] - used[seed]), min_size), members)
        low, high = unit_codes[:, seed].copy(), unit_codes[:, seed].copy()
        last = unit_codes[:, seed]
        # D(c ∪ u) = Σ_q term_q(u); only the QIs whose span grows are recomputed.
        terms = [space.join_term(q, low, high, sub) for q in range(space.n_qis)]
        total = np.sum(terms, axis=0) if terms else np.zeros(sub.shape[1])
        valid = False
        while True:
            if len(members) >= min_size:
                stats.model_checks += 1
                if not failing(rows[members], np.zeros(len(members), dtype=np.int64), 1)[0]:
                    valid = True
                    break
            exhausted = used[left_units] >= counts[left_units]
            if exhausted.all():
                break
            cost = total.copy()
            cost[exhausted] = np.inf
            at = int(left_units[_pick_key(cost, keys[left_units], largest=False)])
            take(at, min(int(counts[at] - used[at]), max(1, min_size - len(members))), members)
            last = unit_codes[:, at]
            changed = np.flatnonzero((last < low) | (last > high)).tolist()
            np.minimum(low, last, out=low)
            np.maximum(high, last, out=high)
            for q in changed:
                fresh = space.join_term(q, low, high, sub)
                total += fresh - terms[q]
                terms[q] = fresh
            stats.steps += 1
        if not valid:  # the rest cannot form a valid cluster: its records are leftovers
            break
        left_units = left_units[used[left_units] < counts[left_units]]
        if relax and left_units.shape[0]:
            box = float(space.box_costs(low[:, None], high[:, None])[0])
            inside = left_units[space.join_costs(low, high, unit_codes[:, left_units]) <= box + _EPS]
            before = len(members)
            for unit in inside.tolist():
                take(unit, int(counts[unit] - used[unit]), members)
            stats.absorbed += len(members) - before
            left_units = left_units[used[left_units] < counts[left_units]]
        group[members] = n_groups
        n_groups += 1
        left_records -= len(members)
        if progress is not None and n - left_records - reported >= step:
            reported = n - left_records
            progress(reported)
    return group, n_groups


def columns(codes: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``codes[:, rows]``, without a copy when ``rows`` is every column in order (the whole table)."""
    if rows.shape[0] == codes.shape[1] and (rows.shape[0] == 0 or (rows[0] == 0 and (np.diff(rows) == 1).all())):
        return codes
    return codes[:, rows]


def units(
    codes: np.ndarray, sizes: Sequence[int], order: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct columns of ``codes[order]`` (QI ``q`` below ``sizes[q]``): ``(n_qis, units)``, inverse, counts.

    As ``np.unique(codes[order].T, axis=0, ...)`` (units in lexicographic order), through one
    int64 key per record when the codes fit one (mixed radix): no ``n × n_qis`` copies, which
    matters for memory at a million rows. ``sizes`` are in ``order`` too.
    """
    rows = list(range(codes.shape[0])) if order is None else [int(q) for q in order]
    n = codes.shape[1]
    radix = [int(size) for size in sizes]
    if not rows or n == 0 or math.prod(max(r, 1) for r in radix) >= 2**62:
        tuples, inverse, counts = np.unique(codes[rows].T, axis=0, return_inverse=True, return_counts=True)
        return np.ascontiguousarray(tuples.T), np.asarray(inverse).ravel(), counts
    key = np.zeros(n, dtype=np.int64)
    for q, r in zip(rows, radix, strict=True):
        key *= r
        key += codes[q]
    # ``np.unique(key, return_index=True, ...)`` sorts stably (a merge sort); any record of a unit
    # gives its codes, so an unstable sort (numpy's vectorized one, ~5× at 30k) gives the same result.
    by_key = np.argsort(key)
    sorted_key = key[by_key]
    steps = sorted_key[1:] != sorted_key[:-1]
    starts = np.flatnonzero(np.concatenate(([True], steps)))
    inverse = np.empty(n, dtype=np.int64)
    inverse[by_key] = np.concatenate(([0], np.cumsum(steps, dtype=np.int64)))
    counts = np.asarray(np.diff(np.concatenate((starts, [n]))), dtype=np.int64)
    return np.ascontiguousarray(codes[:, by_key[starts]][rows]), inverse, counts


def stable_order(ids: np.ndarray, n_ids: int | None = None) -> np.ndarray:
    """``np.argsort(ids, kind="stable")`` for non-negative integer ids below ``n_ids`` (default: their max + 1), faster.

    As 16-bit keys when they fit (numpy's radix sort, ~8×); else as the unique keys ``id · n + position``
    when they fit int64, sorted by numpy's vectorized sort (~5× a merge sort at 30k): the same order.
    """
    n = ids.shape[0]
    if n_ids is None:
        n_ids = int(ids.max()) + 1 if n else 0
    if n_ids <= 1 << 16:
        return np.argsort(ids.astype(np.uint16), kind="stable")
    if n_ids * max(n, 1) < 2**62:
        return np.argsort(ids.astype(np.int64) * n + np.arange(n, dtype=np.int64))
    return np.argsort(ids, kind="stable")


def size_summary(cluster: np.ndarray) -> dict[str, float]:
    """The cluster sizes of a cluster-id per record array: ``min``, ``median``, ``mean``, ``max``.

    >>> size_summary(np.array([0, 0, 1, 1, 1]))
    {'min': 2, 'median': 2.5, 'mean': 2.5, 'max': 3}
    """
    sizes = np.bincount(cluster)
    return {
        "min": int(sizes.min()),
        "median": float(np.median(sizes)),
        "mean": float(sizes.mean()),
        "max": int(sizes.max()),
    }


def boxes(codes: np.ndarray, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per QI and group, the lowest and highest code of its rows (rows with group < 0 are ignored)."""
    low = np.full((codes.shape[0], n_groups), np.iinfo(np.int64).max, dtype=np.int64)
    high = np.full((codes.shape[0], n_groups), -1, dtype=np.int64)
    placed = group >= 0
    for q in range(codes.shape[0]):
        np.minimum.at(low[q], group[placed], codes[q, placed])
        np.maximum.at(high[q], group[placed], codes[q, placed])
    return low, high


def _assign_leftovers(space: CostSpace, codes: np.ndarray, group: np.ndarray, n_groups: int, left: np.ndarray) -> None:
    """Each leftover record joins the group of least ``IL`` increase (boxes updated as they grow)."""
    if left.shape[0] == 0:
        return
    low, high = boxes(codes, group, n_groups)
    sizes = np.bincount(group[group >= 0], minlength=n_groups).astype(float)
    for r in left.tolist():
        before = space.box_costs(low, high)
        new_low, new_high = np.minimum(low, codes[:, r : r + 1]), np.maximum(high, codes[:, r : r + 1])
        increase = (sizes + 1) * space.box_costs(new_low, new_high) - sizes * before
        g = int(np.argmin(increase))
        group[r] = g
        low[:, g], high[:, g] = new_low[:, g], new_high[:, g]
        sizes[g] += 1


def _repair(records: Clustering, group: np.ndarray, n_groups: int, stats: GreedyStats) -> np.ndarray:
    """Merge every group that misses a model into the group of least merged ``IL`` increase; dense ids."""
    while True:
        stats.model_checks += 1
        bad = np.flatnonzero(records.failing(records.rows, group, n_groups))
        if bad.shape[0] == 0 or n_groups == 1:
            break
        low, high, sizes, box_cost = records.priced_boxes(group, n_groups)
        cost = box_cost * sizes
        g = int(bad[0])
        merged = records.space.box_costs(np.minimum(low, low[:, g : g + 1]), np.maximum(high, high[:, g : g + 1]))
        increase = merged * (sizes + sizes[g]) - cost - cost[g]
        increase[g] = np.inf
        target = int(np.argmin(increase))
        group[group == g] = target
        stats.repairs += 1
        _, group = np.unique(group, return_inverse=True)
        group = group.astype(np.int64).ravel()
        n_groups -= 1
    return group
