"""Partition, then cluster: Mondrian-style blocks for the quadratic greedy clusterings (bucket, k-member).

A greedy clustering prices every record left against the growing cluster, so its cost
is the pool size times the records placed: quadratic in the table. Cutting the table
first into blocks and clustering every block on its own bounds the work by
``n × block``. The cut is Mondrian's: the QI whose span costs most (NCP width of the
block's code span; codes keep a hierarchy's siblings adjacent) is cut at its median code,
trying the next QIs when a half would not be ``admissible`` (too small, or failing the
models as one cluster); a block that no cut splits admissibly is kept whole. Blocks are
independent, so each can be a task of its own.

**Measured cost.** Blocks are not free: a greedy pass over a larger pool finds closer
records, and NCP rises with the number of blocks (Adult, k-member k = 10: 0.0654 in one
block, 0.0715 in two, 0.0857 in four; bucket l = 3: 0.0576 / 0.0607 / 0.0752 in 1 / 2 / 15).
The callers therefore cut only tables above a large limit (their ``BLOCK``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privacy_plugins.core.anonymize.cluster_greedy import CostSpace

__all__ = ["split_blocks"]


def _halves(column: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
    """The units at or below the weighted median code (below it if that is the maximum); ``None``: a side is empty.

    With unit weights this is the median of the records the units stand for, so cutting units
    gives the blocks cutting their records would.
    """
    order = np.argsort(column, kind="stable")
    middle = (int(weights.sum()) - 1) // 2
    cut = column[order[int(np.searchsorted(np.cumsum(weights[order]), middle, side="right"))]]
    left = column <= cut
    if left.all():
        left = column < cut
    return left if left.any() and not left.all() else None


def split_blocks(
    space: CostSpace,
    rows: np.ndarray,
    admissible: Callable[[np.ndarray], bool],
    *,
    limit: int,
    weights: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Cut ``rows`` (indices into ``space.codes``) into blocks of at most ``limit`` records where a cut is admissible.

    ``weights``: records per index (units: distinct QI tuples with their counts); ``None``: one each.
    Every block is admissible if ``rows`` is (each cut keeps both halves admissible). Indices with
    equal QI codes always share a block. The blocks come in a fixed order (depth first, lower half
    first) and keep ``rows``' order.
    """
    every = np.ones(space.codes.shape[1], dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    out: list[np.ndarray] = []
    stack = [rows]
    while stack:
        block = stack.pop()
        if int(every[block].sum()) <= limit:
            out.append(block)
            continue
        sub = space.codes[:, block]
        low, high = sub.min(axis=1), sub.max(axis=1)
        widths = np.array([float(space.widths(q, low[q : q + 1], high[q : q + 1])[0]) for q in range(space.n_qis)])
        for q in np.argsort(-widths, kind="stable").tolist():
            left = _halves(sub[q], every[block]) if widths[q] > 0 else None
            if left is not None and admissible(block[left]) and admissible(block[~left]):
                stack.extend((block[~left], block[left]))
                break
        else:
            out.append(block)
    return out
