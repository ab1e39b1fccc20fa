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

#: Distances closer than this are ties.
_TIE = 1e-9
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


def nearest_masks(
    release: EncodedRelease, groups: Groups, table: EncodedTable, rows: np.ndarray, positions: Sequence[int]
) -> Iterator[tuple[slice, np.ndarray]]:
    """Per chunk of ``rows`` (targets of ``table``): the boolean mask of the groups at the least distance."""
    tables = [release.distance(table, p) for p in positions]
    chunk = max(1, _BLOCK // max(groups.n, 1))
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        total = np.zeros((len(part), groups.n))
        for p, distance in zip(positions, tables, strict=True):
            total += distance[table.codes[p][part]][:, groups.codes[p]]
        least = total.min(axis=1, keepdims=True)
        yield slice(start, start + len(part)), total <= least + _TIE


def linkability_successes(
    release: EncodedRelease, table: EncodedTable, rows: np.ndarray, first: Sequence[int], second: Sequence[int]
) -> float:
    """Expected number of targets whose two halves the attacker links through one release row.

    With ``A`` and ``B`` the rows nearest to each half, one pick from each is the same row
    with probability ``|A ∩ B| / (|A| · |B|)``.
    """
    groups = Groups(release, [*first, *second])
    total = 0.0
    halves = zip(
        nearest_masks(release, groups, table, rows, first),
        nearest_masks(release, groups, table, rows, second),
        strict=True,
    )
    for (_, a), (_, b) in halves:
        both = (a & b) @ groups.size
        total += float((both / ((a @ groups.size) * (b @ groups.size))).sum())
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
