"""Mondrian's top-down partitioning, one breadth-first round at a time over all open partitions.

Every quasi-identifier is integer-coded once (:class:`Dimension`): numeric values
by their sorted distinct values, hierarchical values by their leaf's position in
the hierarchy's leaf order with siblings adjacent. The work queue is the frontier
of open partitions, stored as one permutation of their rows (each partition a
contiguous slice of it) plus the slice boundaries. A round then

1. measures every open partition's normalized width on every dimension
   (``reduceat`` of the codes over the slices),
2. picks each partition's widest dimension it has not yet tried, breaking ties
   between equally wide dimensions with the seeded generator,
3. sorts the rows of each partition by that dimension's code (one ``argsort`` of
   ``partition · codes + code`` for all of them) and cuts at the median,
4. asks ``allowed`` about all candidate splits at once (the caller checks its
   privacy models on one set of equivalence classes holding every candidate half),
5. replaces each allowed partition by its two halves, marks the dimension as tried
   on the others, and closes the partitions that have nothing left to try.

So a round costs a handful of numpy calls over the open rows, whatever the number
of partitions, and nothing recurses.

References:
    LeFevre K., DeWitt D., Ramakrishnan R. Mondrian Multidimensional K-Anonymity. ICDE 2006.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.information_loss import local_generalization_costs, range_costs

__all__ = ["Dimension", "PartitionRun", "partition_rows"]

#: ``allowed(class_of_row, n_classes, n_candidates) -> bool[n_candidates]``: classes ``2c`` and
#: ``2c + 1`` are the halves of candidate ``c``; a class ``2 · n_candidates`` (when present) holds
#: every row that is not in a candidate, so that every row of the table is in some class.
AllowedSplits = Callable[[np.ndarray, int, int], np.ndarray]


@dataclass(frozen=True, eq=False)
class Dimension:
    """One quasi-identifier as integer codes ``0..size-1`` whose order is the split order.

    Attributes:
        codes: the code of every row.
        size: number of codes (numeric: distinct values; hierarchical: leaves of the hierarchy).
        values: numeric dimensions: the value of each code, ascending; ``None`` for hierarchical ones.
        hierarchy: hierarchical dimensions: the hierarchy; ``None`` for numeric ones.
        nodes: hierarchical dimensions: ``nodes[level, code]`` is the hierarchy's code of the
            node above leaf ``code`` at ``level``; the leaves are ordered so that every
            node's leaves are contiguous codes.
    """

    codes: np.ndarray
    size: int
    values: np.ndarray | None = None
    hierarchy: Hierarchy | None = None
    nodes: np.ndarray | None = None
    #: numeric dimensions of one block of a larger table: that table's (min, max), so the NCP is
    #: normalized as for the whole table (``None``: the dimension's own values span the domain).
    domain: tuple[float, float] | None = None

    def lowest_common_level(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Hierarchical: the lowest level at which leaves ``low..high`` share one node."""
        assert self.nodes is not None
        level = np.full(low.shape[0], self.nodes.shape[0] - 1, dtype=np.int64)
        for candidate in range(self.nodes.shape[0] - 2, -1, -1):
            same = self.nodes[candidate][low] == self.nodes[candidate][high]
            level = np.where(same, candidate, level)
        return level

    def widths(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Normalized width of partitions whose codes span ``low..high``: their NCP cost.

        Numeric: (max − min) / (max − min of the table). Hierarchical: (leaves under the
        lowest common ancestor − 1) / (|D| − 1).
        """
        if self.values is not None:
            low_end, high_end = self.domain if self.domain is not None else (self.values[0], self.values[-1])
            return range_costs(self.values[low], self.values[high], domain_min=low_end, domain_max=high_end)
        assert self.hierarchy is not None and self.nodes is not None
        level = self.lowest_common_level(low, high)
        return local_generalization_costs(self.hierarchy, level, self.nodes[level, low])


@dataclass(frozen=True, eq=False)
class PartitionRun:
    """The final partitions: ``partition_of_row`` (dense ids), and how they were found."""

    partition_of_row: np.ndarray
    n_partitions: int
    splits: tuple[int, ...]
    rounds: int
    candidates_checked: int


def _segment_ids(sizes: np.ndarray, dtype: type[np.signedinteger]) -> np.ndarray:
    return np.repeat(np.arange(sizes.shape[0], dtype=dtype), sizes)


def _choose(widths: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per partition: whether any dimension can be split, and the widest (random among ties)."""
    open_ = widths > 0
    best = widths.max(axis=1, initial=0.0)
    ties = open_ & np.isclose(widths, best[:, None], rtol=1e-12, atol=0.0)
    priority = rng.random(widths.shape)
    priority[~ties] = -1.0
    return np.asarray(open_.any(axis=1), dtype=bool), np.argmax(priority, axis=1)


def _sort_keys(
    dimensions: Sequence[Dimension], perm: np.ndarray, part_of_pos: np.ndarray, choice: np.ndarray, radix: int
) -> np.ndarray:
    """``partition · radix + code`` of every open row on its partition's chosen dimension.

    Gathered dimension by dimension from each one's own codes (no stacked copy of them), in
    int32 when the keys fit (half the memory and a faster sort than int64).
    """
    n_parts = int(choice.shape[0])
    dtype = np.int32 if n_parts * radix < np.iinfo(np.int32).max else np.int64
    key: np.ndarray = part_of_pos.astype(dtype)
    np.multiply(key, radix, out=key)
    chosen = choice.astype(np.int16)[part_of_pos]
    for j, dimension in enumerate(dimensions):
        here = chosen == j
        if here.any():
            key[here] += dimension.codes[perm[here]]
    return key


def _verdict(
    perm: np.ndarray,
    part_of_pos: np.ndarray,
    sizes: np.ndarray,
    n_left: np.ndarray,
    allowed: AllowedSplits,
    *,
    n_rows: int,
) -> np.ndarray:
    """Ask ``allowed`` about cutting every open partition after its first ``n_left`` rows."""
    n_candidates = int(sizes.shape[0])
    # Each partition's first n_left rows go left (False), the rest right (True): 1 byte a row.
    halves = np.stack((n_left, sizes - n_left), axis=1).ravel()
    side = np.repeat(np.tile(np.array([False, True]), n_candidates), halves)
    class_of_row = np.full(n_rows, 2 * n_candidates, dtype=np.int64)
    class_of_row[perm] = 2 * part_of_pos + side
    del side
    rest = perm.shape[0] < n_rows
    return np.asarray(allowed(class_of_row, 2 * n_candidates + int(rest), n_candidates), dtype=bool)


def partition_rows(
    dimensions: Sequence[Dimension],
    allowed: AllowedSplits,
    *,
    mode: Literal["strict", "relaxed"],
    rng: np.random.Generator,
    start: np.ndarray | None = None,
) -> PartitionRun:
    """Split the rows top-down until no partition has an allowed split (see the module docstring).

    Args:
        dimensions: the coded quasi-identifiers (all with the same number of rows).
        allowed: the verdict on a round's candidate splits (see :data:`AllowedSplits`).
        mode: ``"strict"``: all rows with the (lower) median code go left (equal values never
            straddle; if that leaves the right side empty, they go right); ``"relaxed"``: on
            numeric (range) dimensions the left half takes exactly ⌊m/2⌋ rows, the rows with
            the boundary value divided at random; on hierarchical dimensions a cut is strict.
        rng: breaks ties between equally wide dimensions, and chooses the straddling rows.
        start: the first partition of every row (dense ids; default: one partition of every row),
            each split on its own — many parts split in the same rounds, not one call each.
    """
    n_rows = int(dimensions[0].codes.shape[0]) if dimensions else 0
    n_dims = len(dimensions)
    # Row positions and partition ids in int32 below 2^30 rows (``2 · partition + side`` still fits).
    index = np.int32 if n_rows < 2**30 else np.int64
    radix = max((d.size for d in dimensions), default=1)
    # Relaxed cuts divide the records of one value only on ranges: dividing a leaf would put
    # it under both halves' lowest common ancestors (often the root) and cost more than it saves.
    divisible = np.array([d.values is not None for d in dimensions], dtype=bool)

    partition_of_row = np.empty(n_rows, dtype=np.int64)
    n_final = 0
    splits = np.zeros(n_dims, dtype=np.int64)
    rounds = candidates_checked = 0

    if start is None:
        perm = np.arange(n_rows, dtype=index)  # open rows, grouped by partition
        sizes = np.array([n_rows], dtype=np.int64)  # open partitions, in order
    else:
        perm = np.argsort(start, kind="stable").astype(index, copy=False)
        sizes = np.bincount(start).astype(np.int64)
    tried = np.zeros((sizes.shape[0], n_dims), dtype=bool)
    while sizes.shape[0]:
        rounds += 1
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        widths = np.zeros((sizes.shape[0], n_dims))
        for j, dimension in enumerate(dimensions):
            column = dimension.codes[perm]
            low = np.minimum.reduceat(column, starts).astype(np.intp)
            high = np.maximum.reduceat(column, starts).astype(np.intp)
            del column
            widths[:, j] = dimension.widths(low, high)
        widths[tried] = 0.0
        splittable, choice = _choose(widths, rng)

        # Close the partitions with nothing left to try.
        if not splittable.all():
            part_of_pos = _segment_ids(sizes, index)
            closing = ~splittable[part_of_pos]
            closed = np.flatnonzero(~splittable)
            rank = np.full(sizes.shape[0], -1, dtype=np.int64)
            rank[closed] = np.arange(n_final, n_final + closed.shape[0])
            partition_of_row[perm[closing]] = rank[part_of_pos[closing]]
            n_final += int(closed.shape[0])
            del part_of_pos
            perm = perm[~closing]
            del closing
        keep = np.flatnonzero(splittable)
        if keep.shape[0] == 0:
            break
        sizes, tried, choice = sizes[keep], tried[keep], choice[keep]
        part_of_pos = _segment_ids(sizes, index)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))

        # Sort each partition's rows by the chosen dimension's code (randomly among equal
        # codes in relaxed mode) and cut at the median.
        key = _sort_keys(dimensions, perm, part_of_pos, choice, radix)
        if mode == "relaxed":
            shuffled = rng.permutation(perm.shape[0])
            perm, key = perm[shuffled], key[shuffled]
            del shuffled
        order = np.argsort(key, kind="stable")
        perm = perm[order]
        key = key[order]
        del order
        median = key[starts + (sizes - 1) // 2]
        n_left = np.searchsorted(key, median, side="right") - starts
        all_left = n_left == sizes
        n_left[all_left] = np.searchsorted(key, median[all_left], side="left") - starts[all_left]
        del key
        if mode == "relaxed":
            n_left = np.where(divisible[choice], sizes // 2, n_left)
        verdict = _verdict(perm, part_of_pos, sizes, n_left, allowed, n_rows=n_rows)
        del part_of_pos
        candidates_checked += int(sizes.shape[0])
        splits += np.bincount(choice[verdict], minlength=n_dims)

        # Allowed partitions become their two halves (nothing tried yet); the others keep
        # their rows and remember the dimension that failed.
        tried[np.flatnonzero(~verdict), choice[~verdict]] = True
        tried[verdict] = False
        child_start = np.concatenate((starts, (starts + n_left)[verdict]))
        child_tried = np.concatenate((tried, np.zeros((int(verdict.sum()), n_dims), dtype=bool)))
        order = np.argsort(child_start, kind="stable")
        child_start, tried = child_start[order], child_tried[order]
        sizes = np.diff(np.append(child_start, perm.shape[0]))
    return PartitionRun(
        partition_of_row=partition_of_row,
        n_partitions=n_final,
        splits=tuple(int(s) for s in splits),
        rounds=rounds,
        candidates_checked=candidates_checked,
    )
