"""Clusters whose published box breaks a model's box rule, repaired by merging (``history: {protect: domain}``).

The clustering algorithms (k-member, two-phase) and bucket judge a candidate cluster with the
models on its *records*. The domain rule of the release history
(:meth:`~privacy_plugins.core.models.base.PrivacyModel.box_rule`,
:mod:`~privacy_plugins.core.history_boxes`) is asked of a class's *box*: every cell of it that a
kept release covers must keep min(l, |H(c)|) of the class's values — the points of people not in
the source (deleted, or not yet joined) included. A cluster's box is the box its labels publish
(per QI the LCA of its code span, or its range), so the rule is judged on exactly what will be
published.

:func:`repair_boxes` runs after the clustering: each cluster whose box breaks a rule is merged
with one of its :data:`NEIGHBOURS` nearest clusters (least increase of ``IL``), the cheapest
whose *merged* box and values meet every rule — all candidate merges of a pass judged in one
batch (a box's cells are computed once and remembered, so later passes cost little). When none
does, it merges with the nearest one (the union holds more values; the next pass tries again
from there), except in the last pass. Merges whose cluster then misses one of the models
(``failing``) are undone. Clusters that still break a rule after :data:`PASSES` passes are
published as they are; the release's (c) leaves them out within the suppression limit, and the
gate judges the result. With equal labels clusters publish as one class, whose values are the
union of theirs: judging each cluster alone is conservative.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, Failing, boxes
from privacy_plugins.core.anonymize.mondrian import _labels
from privacy_plugins.core.anonymize.partition_split import Dimension
from privacy_plugins.core.coverage import STAR
from privacy_plugins.core.history_boxes import BoxRule, box_rules
from privacy_plugins.core.history_domain import concatenated_ranges

__all__ = ["BoxRepair", "box_rules", "breaking_boxes", "repair_boxes"]

#: Nearest clusters judged as merge partners of each cluster whose box breaks a rule.
NEIGHBOURS = 48
#: Most passes of merges.
PASSES = 6
#: Partners first judged per breaking cluster (then twice as many, while none of them is free and meets the rules).
FIRST_PARTNERS = 6
#: (breaking cluster, cluster) pairs priced at once (memory: a few arrays of this many numbers per QI).
CELLS = 1 << 21


@dataclass
class BoxRepair:
    """What the repair did: clusters breaking a rule before and after, merges made and undone, passes."""

    breaking: int = 0
    left: int = 0
    merges: int = 0
    dissolved: int = 0
    undone: int = 0
    passes: int = 0
    left_out: int = 0


def repair_boxes(
    space: CostSpace,
    coded: Sequence[tuple[Dimension, np.ndarray]],
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    group: np.ndarray,
    rules: Sequence[BoxRule],
    *,
    failing: Failing | None = None,
    passes: int = PASSES,
    neighbours: int = NEIGHBOURS,
    leave_out: int = 0,
) -> tuple[np.ndarray, BoxRepair]:
    """``group`` (a cluster per row of ``frame``; -1: left out) with clusters merged until their boxes meet ``rules``.

    The clusters come back numbered densely from 0 (-1 stays -1). A cluster still breaking a rule whose
    labels are all ``*`` is left out (-1) when at most ``leave_out`` records are: its box is the whole
    domain, which no merge shrinks, so only leaving it out repairs it (what the release's (c) would do;
    the gate judges such a class like any other, :mod:`~privacy_plugins.core.coverage`).

    ``coded`` are the QIs as the algorithm publishes them (``space``'s dimensions and their code labels).
    """
    stats = BoxRepair()
    group = group.astype(np.int64, copy=True)
    rows = np.flatnonzero(group >= 0)
    if not rules or not rows.shape[0]:
        return group, stats
    qis = list(quasi_identifiers)
    values = {id(rule): frame[rule.attribute].to_numpy() for rule in rules}
    codes = space.codes[:, rows]
    for step in range(passes):
        ids, n = _dense(group[rows])
        low, high = boxes(codes, ids, n)
        held = [rule.held(values[id(rule)][rows], ids, n) for rule in rules]
        bad = _breaks(rules, _box_labels(coded, qis, low, high), held)
        if step == 0:
            stats.breaking = int(bad.sum())
        stats.left = int(bad.sum())
        if not bad.any() or n < 2:
            break
        stats.passes += 1
        # moving single records can break a model merging keeps (frequency l): only with the models' check
        moved = _dissolve(space, codes, low, high, ids, n, bad) if failing is not None else None
        if moved is not None and failing is not None:
            moved_ids, n_moved = _dense(moved)
            if failing(rows, moved_ids, n_moved).any():
                moved = None
        if moved is not None:
            stats.dissolved += len(np.unique(ids[moved != ids]))
            group[rows] = moved
            continue
        target = _partners(space, coded, qis, rules, low, high, held, ids, n, np.flatnonzero(bad), neighbours)
        merged = target != np.arange(n)
        if not merged.any():
            break
        stats.merges += int(merged.sum())
        new = target[ids]
        if failing is not None:
            new_ids, n_new = _dense(new)
            missed = failing(rows, new_ids, n_new)
            undo = missed[new_ids]  # only a merged cluster can newly miss a model; its parts go back
            if undo.any():
                stats.undone += len(np.unique(new_ids[undo]))
                new[undo] = ids[undo]
        if np.array_equal(new, ids):
            break
        group[rows] = new
    group[rows] = _dense(group[rows])[0]
    if stats.left and leave_out > 0:  # an all-* box breaking the rule: no merge repairs it
        ids, n = _dense(group[rows])
        low, high = boxes(codes, ids, n)
        starred = (_box_labels(coded, qis, low, high).astype(str) == STAR).all(axis=1).to_numpy()
        out = starred[ids]
        if out.any() and int(out.sum()) <= leave_out:
            group[rows[out]] = -1
            stats.left_out = int(out.sum())
            group[rows[~out]] = _dense(group[rows[~out]])[0]
    return group, stats


def _dissolve(
    space: CostSpace, codes: np.ndarray, low: np.ndarray, high: np.ndarray, ids: np.ndarray, n: int, bad: np.ndarray
) -> np.ndarray | None:
    """Clusters ``ids`` with the breaking clusters dissolved whose records all fit in other clusters' spans.

    Each record goes to the narrowest cluster that does not break a rule and whose code span holds it
    (its labels do not change, its values only grow); ``None`` when no breaking cluster can be dissolved.
    """
    members = np.flatnonzero(bad[ids])
    inside = np.ones((members.shape[0], n), dtype=bool)
    for q in range(codes.shape[0]):
        code = codes[q, members][:, None]
        inside &= (low[q][None, :] <= code) & (code <= high[q][None, :])
    inside[:, bad] = False
    width = space.box_costs(low, high)
    home = np.where(inside, width[None, :], np.inf).argmin(axis=1)
    homeless = ~inside.any(axis=1)
    stuck = np.zeros(n, dtype=bool)
    stuck[ids[members[homeless]]] = True
    go = ~stuck[ids[members]]
    if not go.any():
        return None
    moved = ids.copy()
    moved[members[go]] = home[go]
    return moved


def _dense(group: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(group, sort=True)
    return codes.astype(np.int64), int(uniques.shape[0])


def _box_labels(
    coded: Sequence[tuple[Dimension, np.ndarray]], qis: list[Hashable], low: np.ndarray, high: np.ndarray
) -> pd.DataFrame:
    """The published labels of boxes given as ``(n_qis, m)`` code spans."""
    return pd.DataFrame(
        {
            qi: _labels(dimension, code_labels, low[q], high[q])
            for q, (qi, (dimension, code_labels)) in enumerate(zip(qis, coded, strict=True))
        }
    )


def breaking_boxes(
    failing: Failing | None,
    space: CostSpace,
    coded: Sequence[tuple[Dimension, np.ndarray]],
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    rules: Sequence[BoxRule],
) -> Failing:
    """``failing`` (``None``: no group), and the groups whose published box breaks one of ``rules``.

    ``failing`` itself without rules. For the steps after :func:`repair_boxes` that grow, pool, cut
    or move boxes (the suppression path's pools, removals, readmissions and local search): what
    they change must keep the boxes meeting the rules. A verdict of the rules depends only on a
    group's box (its code span per QI, which gives its labels) and its value set per rule, so it is
    remembered under those: the suppression path judges the whole table after each change, and
    most groups come back unchanged.
    """
    if not rules and failing is not None:
        return failing
    qis = list(quasi_identifiers)
    n_rows = len(frame)
    # per rule, each row's column in the rule's value sets (one-hot rows of ``held`` over the whole table)
    columns = []
    for rule in rules:
        one_hot = rule.held(frame[rule.attribute].to_numpy(), np.arange(n_rows, dtype=np.int64), n_rows)
        columns.append((one_hot.argmax(axis=1), one_hot.shape[1]))
    seen: dict[bytes, bool] = {}

    def judged(rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        if failing is None:
            bad = np.zeros(n_groups, dtype=bool)
        else:
            bad = np.asarray(failing(rows, group_of_row, n_groups), dtype=bool).copy()
        if not rules or not rows.shape[0]:
            return bad
        live = np.flatnonzero(np.bincount(group_of_row, minlength=n_groups)[:n_groups] > 0)
        ids = np.searchsorted(live, group_of_row)
        low, high = boxes(space.codes[:, rows], ids, live.shape[0])
        held = []
        for column, width in columns:
            found = np.zeros((live.shape[0], width), dtype=bool)
            found[ids, column[rows]] = True
            held.append(found)
        key = np.ascontiguousarray(
            np.concatenate([low.T, high.T, *(np.packbits(h, axis=1).astype(np.int64) for h in held)], axis=1)
        )
        keys = [row.tobytes() for row in key]
        fresh = np.array([k not in seen for k in keys], dtype=bool)
        if fresh.any():
            new = np.flatnonzero(fresh)
            labels = _box_labels(coded, qis, low[:, new], high[:, new])
            verdict = _breaks(rules, labels, [h[new] for h in held])
            seen.update(zip((keys[i] for i in new.tolist()), verdict.tolist(), strict=True))
        bad[live] |= np.array([seen[k] for k in keys], dtype=bool)
        return bad

    return judged


def _breaks(rules: Sequence[BoxRule], labels: pd.DataFrame, held: Sequence[np.ndarray]) -> np.ndarray:
    bad = np.zeros(len(labels), dtype=bool)
    for rule, values in zip(rules, held, strict=True):
        bad |= rule.breaks(labels, values)
    return bad


def _partners(
    space: CostSpace,
    coded: Sequence[tuple[Dimension, np.ndarray]],
    qis: list[Hashable],
    rules: Sequence[BoxRule],
    low: np.ndarray,
    high: np.ndarray,
    held: Sequence[np.ndarray],
    ids: np.ndarray,
    n: int,
    bad: np.ndarray,
    neighbours: int,
) -> np.ndarray:
    """Per cluster, the cluster it merges into this pass (itself when none)."""
    sizes = np.bincount(ids, minlength=n).astype(float)
    cost = space.box_costs(low, high) * sizes
    n_qis = low.shape[0]
    m = min(neighbours, n - 1)
    near = np.empty((len(bad), m), dtype=np.int64)
    price = np.empty((len(bad), m))
    chunk = max(1, CELLS // max(n, 1))  # breaking clusters priced at once against every cluster
    for start in range(0, len(bad), chunk):
        part = bad[start : start + chunk]
        joined_low = np.minimum(low[:, part, None], low[:, None, :]).reshape(n_qis, -1)
        joined_high = np.maximum(high[:, part, None], high[:, None, :]).reshape(n_qis, -1)
        increase = (
            space.box_costs(joined_low, joined_high).reshape(len(part), n) * (sizes[part, None] + sizes[None, :])
            - cost[part, None]
            - cost[None, :]
        )
        increase[np.arange(len(part)), part] = np.inf
        near[start : start + chunk] = np.argpartition(increase, m - 1, axis=1)[:, :m]
        price[start : start + chunk] = np.take_along_axis(increase, near[start : start + chunk], axis=1)
    order = np.argsort(price, axis=1, kind="stable")
    near, price = np.take_along_axis(near, order, axis=1), np.take_along_axis(price, order, axis=1)
    # The merged boxes are judged lazily, cheapest partners first: a cluster takes the first free partner
    # whose merge meets the rules, so the dearer ones are judged only when every cheaper one fails or is taken.
    meets = np.zeros((len(bad), m), dtype=bool)
    judged = np.zeros(len(bad), dtype=np.int64)  # per breaking cluster: its first partners judged so far

    def judge(rows: np.ndarray, upto: int) -> None:
        rows = rows[judged[rows] < upto]
        if not rows.shape[0]:
            return
        low_col = judged[rows]
        count = upto - low_col
        row = np.repeat(rows, count)
        col = concatenated_ranges(low_col, count)
        first, second = bad[row], near[row, col]
        labels = _box_labels(
            coded, qis, np.minimum(low[:, first], low[:, second]), np.maximum(high[:, first], high[:, second])
        )
        meets[row, col] = ~_breaks(rules, labels, [h[first] | h[second] for h in held])
        judged[rows] = upto

    order = np.argsort(price[:, 0], kind="stable")
    judge(order, min(m, FIRST_PARTNERS))
    target = np.arange(n)
    taken = np.zeros(n, dtype=bool)
    for position, i in enumerate(order.tolist()):  # cheapest repairs first; one merge per cluster
        g = int(bad[i])
        if taken[g]:
            continue
        free = ~taken[near[i]]
        while True:
            choice = np.flatnonzero(meets[i, : judged[i]] & free[: judged[i]])
            if choice.shape[0] or judged[i] >= m:
                break
            rest = order[position:]  # the clusters still to choose, judged a step further together
            judge(rest[~taken[bad[rest]]], min(m, 2 * int(judged[i])))
        if not choice.shape[0]:
            continue
        partner = int(near[i, choice[0]])
        target[g] = partner
        taken[g] = taken[partner] = True
    return target
