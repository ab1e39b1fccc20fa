"""Linkability and inference: the attacker looks up a target's known columns among the release's nearest rows.

The release's rows are grouped by their codes on the attack columns (a generalized
release has one group per class): distances are computed once per (target, group), in
chunks of targets, as sums of per-column distance tables gathered by integer codes.

Several rows can be equally near (an equivalence class, duplicates). The attacker cannot
tell them apart, so she picks one of them at random; we count the *expected* success of
that choice, which is what the random pick averages to over many runs (Anonymeter takes
whichever row its sort puts first). For inference she guesses the secret value most
frequent among the nearest rows (the class's values, not one row's), picking at random
among equally frequent ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from privacy_plugins.core.attacks.encoding import EncodedRelease, EncodedTable

__all__ = ["Groups", "inference_successes", "linkability_successes", "nearest_masks"]

#: Distances closer than this are ties (they are float32 sums of at most a few dozen terms in [0, 1]).
_TIE = 2e-6
#: Entries of a (targets × groups) block computed at once.
_BLOCK = 4_000_000


class Groups:
    """The release's distinct rows on the attack columns, their sizes and codes per column."""

    def __init__(self, release: EncodedRelease, positions: Sequence[int]) -> None:
        keys = [release.columns[p].codes for p in positions]
        frame = pd.DataFrame({i: key for i, key in enumerate(keys)})
        group_of_row = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(dtype=np.int64)
        first = np.unique(group_of_row, return_index=True)[1]
        self.of_row = group_of_row
        self.size = np.bincount(group_of_row).astype(float)
        self.codes = {p: release.columns[p].codes[first] for p in positions}
        self.n = len(first)


def chunk_size(*groups: Groups) -> int:
    """Targets per block so that a (targets × groups) block stays under ``_BLOCK`` entries."""
    return max(1, _BLOCK // max(1, *(g.n for g in groups)))


def nearest_masks(
    release: EncodedRelease,
    groups: Groups,
    table: EncodedTable,
    rows: np.ndarray,
    positions: Sequence[int],
    chunk: int | None = None,
) -> Iterator[tuple[slice, np.ndarray]]:
    """Per chunk of ``rows`` (targets of ``table``): the boolean mask of the groups at the least distance.

    Per column, a table of distances from the targets' distinct values to each group's entry;
    a target's distances to all groups are the sum of one row of each (row gathers, no loop
    over targets).
    """
    blocks, which = [], []
    for p in positions:
        codes, distinct = np.unique(table.codes[p][rows], return_inverse=True)[0:2]
        blocks.append(np.ascontiguousarray(release.distance(table, p, codes)[:, groups.codes[p]], dtype=np.float32))
        which.append(distinct)
    chunk = chunk or chunk_size(groups)
    for start in range(0, len(rows), chunk):
        stop = min(len(rows), start + chunk)
        total = blocks[0][which[0][start:stop]]
        for block, distinct in zip(blocks[1:], which[1:], strict=True):
            total += block[distinct[start:stop]]
        least = total.min(axis=1, keepdims=True)
        yield slice(start, stop), total <= least + _TIE


def linkability_successes(
    release: EncodedRelease, table: EncodedTable, rows: np.ndarray, first: Sequence[int], second: Sequence[int]
) -> float:
    """Expected number of targets whose two halves the attacker links through one release row.

    With ``A`` and ``B`` the rows nearest to each half, one pick from each is the same row
    with probability ``|A ∩ B| / (|A| · |B|)``. Rows are grouped per half; ``|A ∩ B|``
    comes from the joint counts of the two halves' groups.
    """
    one, two = Groups(release, first), Groups(release, second)
    if one.n * two.n > _BLOCK:  # too many pairs of groups: group on both halves at once
        both = Groups(release, [*first, *second])
        one = two = both
        joint = None
    else:
        joint = np.bincount(one.of_row * two.n + two.of_row, minlength=one.n * two.n)
        joint = joint.reshape(one.n, two.n).astype(np.float32)
    total = 0.0
    chunk = chunk_size(one, two)  # both halves in the same blocks of targets
    halves = zip(
        nearest_masks(release, one, table, rows, first, chunk),
        nearest_masks(release, two, table, rows, second, chunk),
        strict=True,
    )
    for (_, a), (_, b) in halves:
        fa, fb = a.astype(np.float32), b.astype(np.float32)
        shared = ((fa @ joint) * fb).sum(axis=1) if joint is not None else (fa * fb) @ one.size
        total += float((shared.astype(float) / ((fa @ one.size) * (fb @ two.size))).sum())
    return total


def inference_successes(
    release: EncodedRelease,
    table: EncodedTable,
    rows: np.ndarray,
    known: Sequence[int],
    secret_codes: np.ndarray,
    right: np.ndarray,
    truth: np.ndarray,
) -> float:
    """Expected number of targets whose secret the attacker guesses right.

    Args:
        release: the release read against the original.
        table: the encoded targets.
        rows: which rows of ``table`` are attacked.
        known: positions of the columns the attacker knows.
        secret_codes: per release row, the code of its secret label.
        right: boolean (distinct true secrets × secret labels): the guess counts as right.
        truth: per target of ``rows``, the code of its true secret (row of ``right``).
    """
    groups = Groups(release, known)
    n_labels = right.shape[1]
    counts = np.zeros((groups.n, n_labels))
    np.add.at(counts, (groups.of_row, secret_codes), 1.0)
    total = 0.0
    for part, mask in nearest_masks(release, groups, table, rows, known):
        votes = mask.astype(float) @ counts
        best = votes >= votes.max(axis=1, keepdims=True) - _TIE
        hits = (best & right[truth[part]]).sum(axis=1)
        total += float((hits / best.sum(axis=1)).sum())
    return total
