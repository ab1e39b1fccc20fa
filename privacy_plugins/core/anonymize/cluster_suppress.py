"""Suppression inside the clustering for a model merging cannot repair (issue 26: a leakage bound over the history).

The clustering algorithms repair a cluster that misses a model by merging it into a neighbour.
That works for models merging only helps (k, distinct l, the history model's distinct part); it
does not for a per-record share rule such as the history model with a leakage bound (the most
frequent value of a class, counted over each record's history set H(t), must stay within the
bound): merging moves a share towards the table's, which can be over the bound for H(t), so
failing clusters merge until one holds the whole table. Models declare it
(:attr:`~privacy_plugins.core.models.base.PrivacyModel.repaired_by_merging`); then, when the
suppression limit allows any record:

1. the clusters are built with the strict models where a cluster grows or is cut (k-member's
   greedy growth, up to twice the smallest valid size, after which the relaxed test accepts it;
   two-phase's splitting — Mondrian's strict bisection, or the strict greedy growth when that
   leaves fewer records failing — and record moves), and with the models'
   :meth:`~privacy_plugins.core.models.base.PrivacyModel.monotone_relaxation` where clusters
   merge (two-phase's relaxing, where a cluster breaking the strict models also keeps merging
   until it has twice the smallest valid size, so that the splitting cuts it; the leftovers' repair);
2. :func:`suppress_failing` first clusters each failing published class again with its nearest
   clusters (k-member growth under the strict models), kept when fewer records then fail; then
   it judges the strict models on the *published classes* (clusters with
   equal labels are one class) and, per failing class, leaves out the one record whose removal
   makes it pass (all classes tried at once, one member position per check); a class no single
   removal repairs loses one record of the value over the share of a covered target it is
   blamed for (``towards``: :meth:`~privacy_plugins.core.anonymize.cluster_cover.CoverJudge.over_share`),
   else of its most frequent sensitive value (``values``), and is judged again in the next
   round (at most :data:`ROUNDS`), and is left out whole only in the last round;
3. each record left out is offered to the clusters whose box already contains it (labels
   unchanged: no other class moves) and stays there when its class still passes; the others
   are suppressed. Above the suppression limit the anonymization is infeasible — unless an
   earlier state within the limit had every class pass the models on its own members
   (``members_only``): that state is published, and the release's (c) leaves out the records of
   the values over the covered targets' shares; or unless the **merging retry** finds one: from
   the pooled state again, each failing class is merged whole into one of its nearby clusters
   where their union passes (:func:`_merged`: a class over a share, next to one with room to
   spare, passes as their union at the cost of one wider box, where removals cost NCP 1 per
   record), then the removal rounds run again with a merging pass after each round, and a class
   failing :data:`STUCK` rounds in a row that no removal or share hint repairs (a box breaking
   the domain rule) is dissolved: left out, its records readmitted where every class passes.
   Only when the removals alone exceed the limit: the releases they publish are unchanged;
4. from a state that passes, :func:`split_passing` cuts the clusters of twice the smallest
   valid size or more (Mondrian's strict bisection) and keeps the cuts every class still passes with;
5. from a state that passes, :func:`readmit` places records left out (NCP 1 each) back in the
   cluster they widen least, box growth allowed, where every class still passes, and
   :func:`refine_passing` runs phase 2's local search (moves, dissolutions) again under the
   judge, through a guard whose verdicts leave every state the search holds passing; then
   :func:`readmit` again (the moves narrowed boxes).

``strict`` is what the caller judges with: the clustering passes
:class:`~privacy_plugins.core.anonymize.cluster_cover.CoverJudge`, which also judges every record
a class covers (members of other classes and records left out alike), as the gate's composition
check does — and, with ``history: {protect: domain}``, fails a class whose published box breaks the
domain rule (:func:`~privacy_plugins.core.anonymize.cluster_domain.breaking_boxes`), so no step here
publishes a break it could have avoided; :func:`~privacy_plugins.core.history_release.suppress_at_risk`
handles what still fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationRequest
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, Failing, boxes
from privacy_plugins.core.anonymize.mondrian import PublishedGroups, _labels, _spans, publish_groups, with_left_out
from privacy_plugins.core.anonymize.partition_split import Dimension
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.errors import InfeasibleAnonymizationError

__all__ = [
    "dense",
    "publish_kept",
    "published_classes",
    "readmit",
    "refine_passing",
    "relaxed_models",
    "split_passing",
    "suppress_failing",
    "suppresses_instead_of_merging",
]

#: A coded QI and the text label of each of its codes (as Mondrian's ``_dimension`` returns them).
Coded = tuple[Dimension, np.ndarray]

#: Rounds of single-record removals before failing classes are left out whole.
ROUNDS = 48
#: Covering clusters offered to each record left out.
OFFERS = 4
#: Clusters (cheapest first) each record left out is tried in by :func:`readmit`.
READMIT_TRIES = 8

#: Nearest clusters pooled with a failing class to cluster again, and passes over the failing classes.
NEIGHBOURS = 3
POOLINGS = 8
#: Nearest clusters each failing class may merge into (cheapest first), and passes over the failing classes.
MERGE_TRIES = 20
MERGINGS = 4
#: Rounds a class may fail in a row on the merging retry before it is dissolved (left out, its records readmitted).
STUCK = 4

#: ``classes_of(group) -> (class_of_row, n_classes)``: published classes of the rows with ``group >= 0``.
ClassesOf = Callable[[np.ndarray], tuple[np.ndarray, int]]
#: ``towards(rows, class_of_row, n_classes) -> {class: rows to leave out first}`` (classes no single removal repairs).
Towards = Callable[[np.ndarray, np.ndarray, int], dict[int, np.ndarray]]
#: ``recluster(rows) -> (group per row (local ids), rows in clusters that fail)``: the rows clustered again.
Recluster = Callable[[np.ndarray], tuple[np.ndarray, int]]
#: ``split(rows, owner) -> part per row``: the clusters of ``rows`` (``owner``: dense ids) cut, parts dense.
Split = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: Passes of :func:`split_passing` (each reverts the cuts blamed for a failing class).
SPLIT_PASSES = 6


def suppresses_instead_of_merging(models: Sequence[PrivacyModel], max_suppressed: int) -> bool:
    """A model declares that merging does not repair it, and the limit allows suppressing a record."""
    return max_suppressed > 0 and any(not model.repaired_by_merging for model in models)


def relaxed_models(models: Sequence[PrivacyModel]) -> tuple[PrivacyModel, ...]:
    """The models merging repairs: each other one replaced by its monotone relaxation (dropped without one)."""
    relaxed: list[PrivacyModel] = []
    for model in models:
        if model.repaired_by_merging:
            relaxed.append(model)
            continue
        weaker = model.monotone_relaxation(with_suppression=False)
        if weaker is not None:
            relaxed.append(weaker)
    return tuple(relaxed)


def suppress_failing(
    space: CostSpace,
    strict: Failing,
    group: np.ndarray,
    classes_of: ClassesOf,
    *,
    max_suppressed: int,
    describe: str,
    recluster: Recluster | None = None,
    values: np.ndarray | None = None,
    min_size: int = 1,
    towards: Towards | None = None,
    members_only: Failing | None = None,
    readmit_with: Failing | None = None,
) -> np.ndarray:
    """``group`` (a cluster per row) with -1 for the records left out so that every published class passes ``strict``.

    First each failing class is clustered again with its :data:`NEIGHBOURS` nearest clusters
    (``recluster``; passes while one still helps, at most :data:`POOLINGS`), kept when fewer of
    the pool's records then fail;
    then the removals and offers of the module docstring. A class no single removal repairs
    first loses ``towards``'s record for it (the value over a covered target's share) when there
    is one, else one of its most frequent value (``values``).

    When the limit is reached before every class passes ``strict`` but an earlier state within
    the limit had every class pass ``members_only`` (the models on the class's own members, what
    the anonymizer's output is re-measured with), that state is returned: the records it still
    leaves at risk are covered by classes that pass on their members, and the release's (c)
    (:func:`~privacy_plugins.core.history_share.share_excess`) leaves out exactly the records of
    the value over their share.

    When neither is found, the merging retry of the module docstring runs from the pooled state
    (:func:`_merged`, then the removals with a merging pass per round and stuck classes dissolved).

    Raises:
        InfeasibleAnonymizationError: more than ``max_suppressed`` records would be left out (and no
            state within the limit passes ``members_only``), the merging retry's too.
    """
    group = group.copy()
    if recluster is not None:
        for _ in range(POOLINGS):  # while a pass still lowers the records in failing classes
            group, changed = _pooled(space, strict, group, classes_of, recluster)
            if not changed:
                break
    removals = partial(
        _removals, space, strict, classes_of, max_suppressed=max_suppressed, values=values, min_size=min_size,
        towards=towards, members_only=members_only, readmit_with=readmit_with,
    )  # fmt: skip
    found = removals(group)
    if found is None:  # over the limit: merge failing classes into neighbours first, then the removals again
        merged = group
        for _ in range(MERGINGS):
            merged, changed = _merged(space, strict, merged, classes_of)
            if not changed:
                break
        found = removals(merged, merging=True)
    if found is not None:
        return found
    raise InfeasibleAnonymizationError(
        f"{describe}: the clusters meet it only with more than {max_suppressed} records suppressed "
        "(the suppression limit); raise the limit or relax the requirement"
    )


def _removals(
    space: CostSpace,
    strict: Failing,
    classes_of: ClassesOf,
    group: np.ndarray,
    *,
    max_suppressed: int,
    values: np.ndarray | None,
    min_size: int,
    towards: Towards | None,
    members_only: Failing | None,
    readmit_with: Failing | None,
    merging: bool = False,
) -> np.ndarray | None:
    """:func:`suppress_failing`'s removal rounds and offers from ``group``; ``None`` above the limit."""
    group = group.copy()
    out = np.zeros(group.shape[0], dtype=bool)
    on_members: np.ndarray | None = None  # the last state within the limit whose classes pass ``members_only``
    stuck = np.zeros(group.shape[0], dtype=np.int64)  # rounds each row's class has been failing in a row
    for round_ in range(ROUNDS):
        cls, n_cls = classes_of(np.where(out, -1, group))
        kept = np.flatnonzero(~out)
        bad = strict(kept, cls[kept], n_cls)
        if not bad.any():
            return np.where(out, -1, group)
        if members_only is not None and not members_only(kept, cls[kept], n_cls).any():
            on_members = np.where(out, -1, group)
        failing = _members(cls, np.flatnonzero(bad))
        fixed = _single_removals(strict, out, cls, n_cls, failing)
        hint = towards(kept, cls[kept], n_cls) if towards is not None and len(fixed) < len(failing) else None
        in_failing = np.zeros(group.shape[0], dtype=bool)
        in_failing[kept] = bad[cls[kept]]
        stuck = np.where(in_failing, stuck + 1, 0)
        dissolved = _stuck(failing, fixed, hint, stuck, max_suppressed - int(out.sum())) if merging else None
        for c, rows in failing.items():
            if c in fixed:
                out[fixed[c]] = True
            elif c == dissolved:
                out[rows] = True  # dissolved: the readmission below places its records where every class passes
            elif hint and c in hint and round_ < ROUNDS - 1 and rows.shape[0] > min_size:
                out[hint[c][-1]] = True  # the value over a covered target's share
            elif values is not None and round_ < ROUNDS - 1 and rows.shape[0] > min_size:
                out[_most_frequent(rows, values)] = True  # towards balance; whole only in the last round
            else:
                out[rows] = True
        _offer(space, strict, group, out, classes_of)
        if readmit_with is not None:  # boxes may grow: fewer records out, more of the limit for what still fails
            tries = READMIT_TRIES if dissolved is not None else 2  # a dissolved class's records: more clusters
            state = readmit(space, readmit_with, np.where(out, -1, group), classes_of, tries=tries, failing=True)
            back = out & (state >= 0)
            group[back], out[back] = state[back], False
        if merging:  # what the removals left failing, merged into a neighbour where the union passes
            group = np.where(out, -1, _merged(space, strict, np.where(out, -1, group), classes_of)[0])
        if int(out.sum()) > max_suppressed:
            break
    while int(out.sum()) <= max_suppressed:  # what still fails is left out whole
        cls, n_cls = classes_of(np.where(out, -1, group))
        kept = np.flatnonzero(~out)
        bad = strict(kept, cls[kept], n_cls)
        if not bad.any():
            return np.where(out, -1, group)
        out[kept[bad[cls[kept]]]] = True
    # what only covered records still need is left to the release's suppression (c); None: over the limit
    return on_members


def split_passing(
    strict: Failing, group: np.ndarray, classes_of: ClassesOf, split: Split, *, min_size: int
) -> np.ndarray:
    """``group`` with its big clusters (``2 * min_size`` records or more) cut where every class still passes ``strict``.

    The suppression path leaves the relaxed merging's large clusters (and the pools' growth) as
    they are, and each of their records pays the box of the whole cluster. Once every published
    class passes, the big ones are cut at once (``split``: e.g. Mondrian's strict bisection), the
    table judged once (``strict`` is the cover judge: the halves' smaller boxes change what each
    class covers), and the cuts of clusters in a failing class reverted (all of them when only
    uncut classes fail), while any cut is left. Only from a state that passes: an unchanged
    result otherwise. Rows left out (``-1``) stay out.
    """
    kept = np.flatnonzero(group >= 0)
    if not kept.shape[0]:
        return group
    cls, n_cls = classes_of(group)
    if strict(kept, cls[kept], n_cls).any():
        return group
    n_groups = int(group.max()) + 1
    size = np.bincount(group[kept], minlength=n_groups)
    big = size >= 2 * min_size
    if not big.any():
        return group
    rows = kept[big[group[kept]]]
    owner_ids, owner = np.unique(group[rows], return_inverse=True)
    part = split(rows, owner.reshape(-1))
    owner = owner.reshape(-1)
    first_part = np.full(owner_ids.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_part, owner, part)
    last_part = np.zeros(owner_ids.shape[0], dtype=np.int64)
    np.maximum.at(last_part, owner, part)
    cut = last_part > first_part  # clusters the split did cut
    for _ in range(SPLIT_PASSES):
        if not cut.any():
            return group
        trial = group.copy()
        moved = cut[owner]
        trial[rows[moved]] = n_groups + part[moved]
        trial = dense(trial)[0]
        cls, n_cls = classes_of(trial)
        bad = strict(kept, cls[kept], n_cls)
        if not bad.any():
            return trial
        blamed = np.zeros(owner_ids.shape[0], dtype=bool)
        blamed[owner[moved & bad[cls[rows]]]] = True
        cut &= ~blamed if blamed.any() else np.zeros_like(cut)
    return group


def readmit(
    space: CostSpace,
    strict: Failing,
    group: np.ndarray,
    classes_of: ClassesOf,
    *,
    tries: int = READMIT_TRIES,
    failing: bool = False,
) -> np.ndarray:
    """``group`` with records left out (-1) placed back in the cluster where they cost least, when every class passes.

    A record left out costs NCP 1 on every QI; in a cluster it costs what it widens the box by
    (``(|c| + 1) · D(c ∪ r) − |c| · D(c)``, less than the QI count when it is near). Unlike the
    removals' offers (boxes that already hold the record, labels unchanged) the box may grow, so
    the cover judge (``strict``) judges the whole table: per round each waiting record is tried in
    its next cheapest cluster (at most ``tries``, one record per cluster), the records whose class
    then fails go back out, and a batch whose records tip a class none of them joined (a covered
    neighbour) is halved until each half is judged alone. Only from a state that passes (an
    unchanged result otherwise), and every state returned passes ``strict`` — or, with
    ``failing`` (the removal rounds, where some classes still fail), from any state, and no row
    outside a class failing now is in a failing class afterwards.
    """
    kept = np.flatnonzero(group >= 0)
    waiting = np.flatnonzero(group < 0)
    if not waiting.shape[0] or not kept.shape[0]:
        return group
    cls, n_cls = classes_of(group)
    now = np.asarray(strict(kept, cls[kept], n_cls), dtype=bool)[cls[kept]]
    if now.any() and not failing:
        return group
    allowed = np.zeros(group.shape[0], dtype=bool)
    allowed[kept[now]] = True  # rows already in failing classes
    n_groups = int(group.max()) + 1
    low, high = boxes(space.codes[:, kept], group[kept], n_groups)
    size = np.bincount(group[kept], minlength=n_groups).astype(float)
    live = np.flatnonzero(size > 0)
    low, high, size = low[:, live], high[:, live], size[live]
    added = (size + 1) * _joined_costs(space, low, high, space.codes[:, waiting]) - size * space.box_costs(low, high)
    added[added >= space.n_qis] = np.inf  # no cheaper than leaving the record out
    order = np.argsort(added, axis=1, kind="stable")[:, :tries]
    group = group.copy()
    for t in range(min(tries, order.shape[1])):
        still = np.flatnonzero(group[waiting] < 0)
        candidate = order[still, t]
        cost = added[still, candidate]
        still, candidate = still[np.isfinite(cost)], candidate[np.isfinite(cost)]
        if not still.shape[0]:
            break
        first = np.unique(candidate, return_index=True)[1]  # one record per cluster per round
        group = _admit(strict, group, classes_of, waiting[still[first]], live[candidate[first]], allowed)
    return group


#: ``refine(rows, group, failing) -> group``: a local search over the clusters ``group`` of ``rows`` (dense ids).
Refine = Callable[[np.ndarray, np.ndarray, Failing], np.ndarray]


def refine_passing(strict: Failing, group: np.ndarray, classes_of: ClassesOf, refine: Refine) -> np.ndarray:
    """``group`` improved by ``refine`` (record moves, dissolutions) judged by ``strict`` on the published classes.

    The suppression path's pools and removals widen boxes the phase-2 local search had narrowed;
    running it again under the cover judge recovers some. The search undoes a move whose source
    or target the judge fails, and a dissolution one of whose targets fails (then renumbers the
    clusters densely). Under the cover judge undoing is not enough: a move can tip a covered
    neighbour's class, and undoing one move can tip a class another move kept within the bound.
    So the guard answers for the state the search will hold *after* its undo: it reverts the
    failing changes itself, judges what is left, fails the clusters of the changes kept in a
    class that still fails, and so on; when a class fails that no kept change touches, half the
    kept changes fail, until it passes. Each round's state then passes ``strict``, as does the
    result (judged once more; the last state that passed otherwise). Rows left out (-1) stay
    out; only from a state that passes (an unchanged result otherwise).
    """
    kept = np.flatnonzero(group >= 0)
    if not kept.shape[0] or _failing_rows(strict, group, classes_of).any():
        return group
    local, _ = dense(group[kept])
    guard = _Guard(strict, kept, classes_of, group.shape[0], local)
    refined = refine(kept, local, guard)
    result = np.full(group.shape[0], -1, dtype=np.int64)
    result[kept] = refined
    if _failing_rows(strict, result, classes_of).any():
        result[kept] = guard.last
    return result


class _Guard:
    """A :data:`Failing` for a local search's rounds over ``kept`` rows: its verdicts leave a passing state.

    ``last`` is the search's state after the last round (it passes ``strict``); a round's moves
    are the rows whose cluster differs from it (:func:`refine_passing`).
    """

    def __init__(self, strict: Failing, kept: np.ndarray, classes_of: ClassesOf, n_rows: int, start: np.ndarray):
        self.strict, self.kept, self.classes_of, self.n_rows = strict, kept, classes_of, n_rows
        self.last = start.copy()

    def _judge(self, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        full = np.full(self.n_rows, -1, dtype=np.int64)
        full[self.kept] = group
        cls, n_cls = self.classes_of(full)
        of_row = cls[self.kept]
        return np.asarray(self.strict(self.kept, of_row, n_cls), dtype=bool), of_row

    def __call__(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        group, before = np.asarray(group_of_row, dtype=np.int64), self.last
        moved = np.flatnonzero(group != before)
        source, target = before[moved], group[moved]
        # A cluster left empty was dissolved: the search undoes it whole when any of its targets fails.
        dissolving = (np.bincount(group, minlength=n_groups) == 0)[source]
        bad = np.zeros(n_groups, dtype=bool)
        while True:
            back = ~dissolving & (bad[target] | bad[source])  # a move: its source or target fails
            hit = np.zeros(n_groups, dtype=bool)
            hit[source[dissolving & bad[target]]] = True
            back |= dissolving & hit[source]
            state = group.copy()
            state[moved[back]] = source[back]
            bad_class, of_row = self._judge(state)
            if not bad_class.any():
                self.last = np.unique(state, return_inverse=True)[1].reshape(-1)  # the search's renumbering
                return bad
            live = np.flatnonzero(~back)
            touched = np.zeros(n_groups, dtype=bool)
            touched[target[live]] = True
            touched[source[live[~dissolving[live]]]] = True
            blame = np.zeros(n_groups, dtype=bool)
            blame[state[bad_class[of_row]]] = True
            blame &= touched & ~bad
            if not blame.any():  # a class no kept change touches fails: half the kept ones fail, until it passes
                half = live[live.shape[0] // 2 :]
                bad[target[half]] = True
                bad[source[half[~dissolving[half]]]] = True
                continue
            bad |= blame


def _admit(
    strict: Failing, group: np.ndarray, classes_of: ClassesOf, rows: np.ndarray, to: np.ndarray, allowed: np.ndarray
) -> np.ndarray:
    """``group`` with as many of ``rows`` moved to ``to`` as leave no row outside ``allowed`` failing ``strict``."""
    trial = group.copy()
    trial[rows] = to
    cls, n_cls = classes_of(trial)
    placed = np.flatnonzero(trial >= 0)
    bad = strict(placed, cls[placed], n_cls)
    fails = np.zeros(group.shape[0], dtype=bool)
    fails[placed[bad[cls[placed]]]] = True
    if not (fails & ~allowed).any():
        return trial
    if rows.shape[0] == 1:
        return group
    own = fails[rows]
    other = fails & ~allowed & ~np.isin(cls, cls[rows[own]])
    if own.any() and not other.any():
        return _admit(strict, group, classes_of, rows[~own], to[~own], allowed) if (~own).any() else group
    half = rows.shape[0] // 2  # a neighbour tipped: halve the batch
    group = _admit(strict, group, classes_of, rows[:half], to[:half], allowed)
    return _admit(strict, group, classes_of, rows[half:], to[half:], allowed)


def _failing_rows(strict: Failing, group: np.ndarray, classes_of: ClassesOf) -> np.ndarray:
    """The verdict of ``strict`` on the published classes of ``group`` (rows with ``group >= 0``)."""
    cls, n_cls = classes_of(group)
    placed = np.flatnonzero(group >= 0)
    return np.asarray(strict(placed, cls[placed], n_cls), dtype=bool)


def _joined_costs(space: CostSpace, low: np.ndarray, high: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``D(box ∪ r)`` for every record (``codes``: QI × records) and box (``low``, ``high``: QI × boxes)."""
    total = np.zeros((codes.shape[1], low.shape[1]))
    for q in range(space.n_qis):
        lo = np.minimum(low[q][None, :], codes[q][:, None])
        hi = np.maximum(high[q][None, :], codes[q][:, None])
        total += space.widths(q, lo.ravel(), hi.ravel()).reshape(lo.shape)
    return total


def _stuck(
    failing: dict[int, np.ndarray],
    fixed: dict[int, int],
    hint: dict[int, np.ndarray] | None,
    stuck: np.ndarray,
    room: int,
) -> int | None:
    """The smallest failing class to dissolve (at most ``room`` rows).

    One failing :data:`STUCK` rounds in a row that no single removal repairs and no share gives a
    hint for (e.g. a box breaking the domain rule: one record less rarely changes the box).
    """
    sizes = {
        c: rows.shape[0]
        for c, rows in failing.items()
        if c not in fixed and not (hint and c in hint) and int(stuck[rows].min()) >= STUCK and rows.shape[0] <= room
    }
    return min(sizes, key=sizes.__getitem__) if sizes else None


def _merged(space: CostSpace, strict: Failing, group: np.ndarray, classes_of: ClassesOf) -> tuple[np.ndarray, bool]:
    """One pass: each failing class merged whole into a nearby cluster where their union passes ``strict``.

    Merging does not repair a share bound in general (shares tend to the table's), but a class
    over the bound (or breaking the domain rule) next to a cluster with room to spare can pass as
    their union, at the price of one wider box instead of records left out (NCP 1 each). Per
    rank (the :data:`MERGE_TRIES` clusters whose union with the class adds least loss, cheapest
    first) the failing classes not merged yet are merged at once, each cluster in one merge of the
    pass at most; a merge whose union fails is undone, and a batch that tips a class none of its
    merges made (a covered neighbour) is halved. Rows outside failing classes never end failing.
    """
    cls, n_cls = classes_of(group)
    rows = np.flatnonzero(group >= 0)  # rows left out (-1) stay out
    bad = np.asarray(strict(rows, cls[rows], n_cls), dtype=bool)
    if not bad.any():
        return group, False
    allowed = np.zeros(group.shape[0], dtype=bool)
    allowed[rows] = bad[cls[rows]]
    group, n_groups = dense(group)  # no empty cluster (their boxes have no cost)
    low, high = boxes(space.codes[:, rows], group[rows], n_groups)
    size = np.bincount(group[rows], minlength=n_groups).astype(float)
    own_cost = size * space.box_costs(low, high)
    class_of_cluster = np.full(n_groups, -1, dtype=np.int64)
    class_of_cluster[group[rows]] = cls[rows]
    by_cluster = rows[np.argsort(group[rows], kind="stable")]
    starts = np.searchsorted(group[by_cluster], np.arange(n_groups + 1))
    ranked: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # failing class → (its clusters, partners cheapest first)
    for c in np.flatnonzero(bad).tolist():
        mine = np.flatnonzero(class_of_cluster == c)
        mine_low, mine_high = low[:, mine].min(axis=1), high[:, mine].max(axis=1)
        joined = space.box_costs(np.minimum(low, mine_low[:, None]), np.maximum(high, mine_high[:, None]))
        added = (size + size[mine].sum()) * joined - own_cost - own_cost[mine].sum()
        added[mine] = np.inf
        added[size == 0] = np.inf
        near = np.argsort(added, kind="stable")[:MERGE_TRIES]
        ranked[c] = (mine, near[np.isfinite(added[near])])
    dirty = np.zeros(n_groups, dtype=bool)  # clusters an accepted merge changed this pass
    fixed: set[int] = set()
    changed = False
    for t in range(MERGE_TRIES):
        used = dirty.copy()
        merges: list[tuple[np.ndarray, int]] = []
        owners: list[int] = []
        for c, (mine, near) in ranked.items():
            if c in fixed or near.shape[0] <= t or used[mine].any() or used[near[t]]:
                continue
            used[mine] = used[near[t]] = True
            moved = np.concatenate([by_cluster[starts[g] : starts[g + 1]] for g in mine.tolist()])
            merges.append((moved, int(near[t])))
            owners.append(c)
        if not merges:
            continue
        group, accepted = _merge_batch(strict, group, classes_of, merges, allowed)
        for i in accepted:
            fixed.add(owners[i])
            dirty[ranked[owners[i]][0]] = dirty[merges[i][1]] = True
        changed |= bool(accepted)
    return (dense(group)[0] if changed else group), changed


def _merge_batch(
    strict: Failing, group: np.ndarray, classes_of: ClassesOf, merges: list[tuple[np.ndarray, int]], allowed: np.ndarray
) -> tuple[np.ndarray, list[int]]:
    """``group`` with the merges (rows → cluster) whose union passes and tips no row outside ``allowed``; which ones."""
    trial = group.copy()
    for moved, to in merges:
        trial[moved] = to
    cls, n_cls = classes_of(trial)
    placed = np.flatnonzero(trial >= 0)
    fails = np.zeros(group.shape[0], dtype=bool)
    fails[placed] = np.asarray(strict(placed, cls[placed], n_cls), dtype=bool)[cls[placed]]
    own = [i for i, (moved, _) in enumerate(merges) if fails[moved[0]]]
    other = fails & ~allowed
    if own:
        other &= ~np.isin(cls, cls[[merges[i][0][0] for i in own]])
    if not other.any():
        if not own:
            return trial, list(range(len(merges)))
        rest = [i for i in range(len(merges)) if i not in set(own)]
        if not rest:
            return group, []
        group, accepted = _merge_batch(strict, group, classes_of, [merges[i] for i in rest], allowed)
        return group, [rest[i] for i in accepted]
    if len(merges) == 1:
        return group, []
    half = len(merges) // 2  # a neighbour tipped: halve the batch
    group, first = _merge_batch(strict, group, classes_of, merges[:half], allowed)
    group, second = _merge_batch(strict, group, classes_of, merges[half:], allowed)
    return group, first + [half + i for i in second]


def _pooled(
    space: CostSpace,
    strict: Failing,
    group: np.ndarray,
    classes_of: ClassesOf,
    recluster: Recluster,
) -> tuple[np.ndarray, bool]:
    """One pass: each failing class with its nearest clusters, clustered again when fewer of the pool's records fail.

    Boxes and members are measured once per pass and kept up to date as pools are clustered
    again (new clusters take new ids; the ids are made dense at the end of the pass, which keeps
    their order), so the result is the one of judging and boxing the whole table after each change.
    """
    cls, n_cls = classes_of(group)
    every = np.arange(group.shape[0], dtype=np.int64)
    bad = strict(every, cls, n_cls)
    changed = False
    n_groups = int(group.max()) + 1
    low, high = boxes(space.codes, group, n_groups)
    size = np.bincount(group, minlength=n_groups)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(n_groups + 1))
    members = [order[starts[g] : starts[g + 1]] for g in range(n_groups)]
    first = np.unique(cls, return_index=True)[1]
    for representative in first[bad[cls[first]]].tolist():  # one row per failing class (ids move below)
        mine = np.unique(group[cls == cls[representative]])
        own_low, own_high = low[:, mine].min(axis=1), high[:, mine].max(axis=1)
        joined = space.box_costs(np.minimum(low, own_low[:, None]), np.maximum(high, own_high[:, None]))
        joined[mine] = np.inf
        joined[size == 0] = np.inf
        near = np.argsort(joined, kind="stable")[:NEIGHBOURS]
        near = near[np.isfinite(joined[near])]
        pool = np.sort(np.concatenate([members[g] for g in np.concatenate([mine, near]).tolist()]))
        local, failing = recluster(pool)
        before = int(bad[cls[pool]].sum())
        if failing < before:
            changed = True
            n_new = int(local.max()) + 1
            group[pool] = n_groups + local
            size[np.concatenate([mine, near])] = 0
            new_low, new_high = boxes(space.codes[:, pool], local, n_new)
            low, high = np.concatenate([low, new_low], axis=1), np.concatenate([high, new_high], axis=1)
            size = np.concatenate([size, np.bincount(local, minlength=n_new)])
            by_local = np.argsort(local, kind="stable")
            cut = np.searchsorted(local[by_local], np.arange(n_new + 1))
            members.extend(pool[by_local[cut[g] : cut[g + 1]]] for g in range(n_new))
            n_groups += n_new
            cls, n_cls = classes_of(group)  # labels moved: classes again (ids of later failing ones may shift)
            bad = strict(every, cls, n_cls)
    if changed:
        group = dense(group)[0]
    return group, changed


def _most_frequent(rows: np.ndarray, values: np.ndarray) -> int:
    """The last of ``rows`` holding their most frequent value (``values``: a code per row of the table)."""
    codes = values[rows]
    top = np.bincount(codes).argmax()
    return int(rows[np.flatnonzero(codes == top)[-1]])


def _members(cls: np.ndarray, bad: np.ndarray) -> dict[int, np.ndarray]:
    """The rows of each class in ``bad``."""
    rows = np.flatnonzero(np.isin(cls, bad))
    order = rows[np.argsort(cls[rows], kind="stable")]
    ids, starts = np.unique(cls[order], return_index=True)
    return {int(c): part for c, part in zip(ids.tolist(), np.split(order, starts[1:]), strict=True)}


def _single_removals(
    strict: Failing, out: np.ndarray, cls: np.ndarray, n_cls: int, members: dict[int, np.ndarray]
) -> dict[int, int]:
    """Per failing class, a member whose removal alone makes it pass (every class tried at once per position)."""
    fixed: dict[int, int] = {}
    longest = max((rows.shape[0] for rows in members.values()), default=0)
    for i in range(longest):
        trial = {c: int(rows[i]) for c, rows in members.items() if c not in fixed and rows.shape[0] > i}
        if not trial:
            break
        removed = out.copy()
        removed[list(trial.values())] = True
        kept = np.flatnonzero(~removed)
        bad = strict(kept, cls[kept], n_cls)
        fixed.update({c: r for c, r in trial.items() if not bad[c]})
    return fixed


def _offer(space: CostSpace, strict: Failing, group: np.ndarray, out: np.ndarray, classes_of: ClassesOf) -> None:
    """Each record left out joins a cluster whose box contains it when that cluster's class still passes."""
    placed = np.where(out, -1, group)
    n_groups = int(group.max()) + 1
    low, high = boxes(space.codes, placed, n_groups)
    live = np.bincount(placed[placed >= 0], minlength=n_groups) > 0
    waiting = np.flatnonzero(out)
    if not waiting.shape[0]:
        return
    inside = np.ones((waiting.shape[0], n_groups), dtype=bool)
    for q in range(space.n_qis):
        codes = space.codes[q, waiting][:, None]
        inside &= (low[q][None, :] <= codes) & (codes <= high[q][None, :])
    inside &= live[None, :]
    for _ in range(OFFERS):
        cls, _ = classes_of(np.where(out, -1, group))
        class_of_cluster = np.full(n_groups, -1, dtype=np.int64)
        kept = np.flatnonzero(~out)
        class_of_cluster[group[kept]] = cls[kept]
        trial: dict[int, int] = {}  # class → record: one record per class per check
        for i, r in enumerate(waiting.tolist()):
            if not out[r]:
                continue
            for g in np.flatnonzero(inside[i]).tolist():
                inside[i, g] = False
                if int(class_of_cluster[g]) not in trial:
                    trial[int(class_of_cluster[g])] = r
                    group[r] = g
                    break
        if not trial:
            return
        tried = list(trial.values())
        out[tried] = False
        cls, n_cls = classes_of(np.where(out, -1, group))
        kept = np.flatnonzero(~out)
        bad = strict(kept, cls[kept], n_cls)
        rejected = [r for r in tried if bad[cls[r]]]
        out[rejected] = True


def dense(group: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense cluster ids for the rows with ``group >= 0`` (others stay -1) and their number."""
    result = np.full(group.shape[0], -1, dtype=np.int64)
    placed = group >= 0
    codes, uniques = pd.factorize(group[placed], sort=True)
    result[placed] = codes
    return result, int(uniques.shape[0])


def published_classes(coded: Sequence[Coded]) -> ClassesOf:
    """``classes_of`` for clusters published as Mondrian publishes groups: equal labels, one class."""

    def classes_of(group: np.ndarray) -> tuple[np.ndarray, int]:
        ids, n_groups = dense(group)
        placed = ids >= 0
        labels = []
        for dimension, code_labels in coded:
            low, high = _spans(ids[placed], n_groups, dimension.codes[placed])
            labels.append(pd.Series(_labels(dimension, code_labels, low, high), dtype=object))
        class_of_cluster = (
            pd.DataFrame(dict(enumerate(labels)))
            .groupby(list(range(len(labels))), sort=False, dropna=False)
            .ngroup()
            .to_numpy(dtype=np.int64)
            if labels
            else np.zeros(n_groups, dtype=np.int64)
        )
        cls = np.full(group.shape[0], -1, dtype=np.int64)
        cls[placed] = class_of_cluster[ids[placed]]
        return cls, int(class_of_cluster.max()) + 1 if n_groups else 0

    return classes_of


def publish_kept(
    frame: pd.DataFrame,
    request: AnonymizationRequest,
    coded: Sequence[Coded],
    cluster: np.ndarray,
    n_clusters: int,
) -> tuple[PublishedGroups, int]:
    """Publish the rows with a cluster (``cluster >= 0``); the others are suppressed (left out, NCP 1)."""
    keep = cluster >= 0
    # ``replace`` keeps every field but the codes: a block's numeric ``domain`` (the whole table's range) too.
    sub = [(replace(d, codes=d.codes[keep]), labels) for d, labels in coded]
    published, utility, classes, qi_codes = publish_groups(
        frame.loc[keep].reset_index(drop=True), request, sub, cluster[keep], n_clusters
    )
    n, suppressed = cluster.shape[0], int((~keep).sum())
    utility = with_left_out(utility, classes, suppressed, n, len(coded))
    return PublishedGroups(published, utility, classes, qi_codes), suppressed
