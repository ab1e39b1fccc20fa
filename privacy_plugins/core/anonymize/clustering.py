"""Clustering k-anonymization (local recoding): greedy k-member and the thesis's two-phase clustering.

**Greedy k-member** (Byun, Kamra, Bertino, Li; thesis Algorithm 2.2), registered as
``"k-member"``. Start from a seeded random record r; the unassigned record furthest
from r starts a cluster, which takes the record of least information-loss increase
until it is valid; the last record taken becomes r, and so on while enough records
remain; the leftovers (fewer than a valid cluster) each join the cluster of least
increase. Distance and loss are NCP: a cluster's box (per QI the code span of its
records, :mod:`~privacy_plugins.core.anonymize.cluster_greedy`) costs
``D(c) = Σ_q NCP_q(span)`` per record and ``IL(c) = |c| · D(c)``; the increase of adding r
is ordered like ``D(c ∪ r)``, and the distance of two records is ``D({r1, r2})``. When the
models read no column besides the QIs (k-anonymity), the search runs over *units* —
distinct QI tuples with their counts — and the records of a unit join a cluster in bulk
(once one is in, the others add nothing: the least any record can add).

**Two-phase clustering** (Mirakabad thesis §3.2, Figures 3.2–3.5 and 4.16–4.19),
registered as ``"two-phase"``, option ``split`` (``a`` | ``b``; CLI ``--split``). The
chapters are not in our copy of the thesis; what follows is our reading of its
abstract and table of contents ("defects of small clusters", "lower information loss
by relaxing about the cluster size", "defects of big clusters", "lower information
loss by splitting big clusters", "pseudo code of splitting big clusters"):

* *Defect of small clusters.* Greedy k-member closes a cluster at exactly k: equal or
  near records beyond the k-th must enlarge some other box later, and the last clusters,
  built from what is left, are the costliest. **Phase 1 (relaxing)** therefore lets the
  size float: bottom-up, records with equal QIs start as one cluster, and the small
  (invalid) cluster whose cheapest completion costs least — merging whole with another
  cluster, or borrowing the missing records from a valid cluster that can spare them —
  is completed first (:mod:`~privacy_plugins.core.anonymize.cluster_merge`). A cluster
  grows past k exactly when taking a whole neighbour lowers the table's information
  loss more than any other completion. *Our choice:* the thesis's criterion ("adding a
  record lowers the information loss") is read on the whole table's loss ``Σ |c|·D(c)``,
  not on one cluster's ``D`` (which can only grow). The first design — k-member whose
  closed clusters absorb the records inside their box (``D`` unchanged), still available
  as ``greedy_clusters(relax=True)`` — reached NCP 0.0378 on Adult at k=5, no better than
  k-member (0.0377); this one reaches 0.028 before phase 2.
* *Defect of big clusters.* A cluster of 2k or more records publishes one box where two
  or more smaller boxes would do. **Phase 2 (splitting)** splits every cluster with at
  least twice the smallest valid size into the smallest valid clusters (each holding
  every model), two ways — *our design*, the thesis compares two unnamed strategies:

  - **Splitting A (bottom-up)**: greedy k-member run again on the big cluster's
    records alone (clusters of exactly the smallest valid size, leftovers joined).
  - **Splitting B (top-down)**: Mondrian's median bisection run on the big cluster's
    records (:func:`~privacy_plugins.core.anonymize.partition_split.partition_rows`), a cut
    kept only when both halves hold every model, until no cut is allowed; both the strict
    and the relaxed cut are tried and the partition of lower loss is kept (strict keeps
    equal values together, [0,1,2 | 8,9]; relaxed halves a run of equal values, [0,5,5 | 5,5,10]).
    When every model is judged by size, all big clusters are bisected in the same rounds (one
    ``partition_rows`` per mode over all of them, each cluster its own start partition).

  Neither can raise the loss: every sub-box lies inside the big box. With k only, phase 1
  rarely leaves a big cluster that is not a run of equal records (borrowing replaces
  most merges into big clusters), so A and B mostly agree there; they differ beyond k.
  Phase 2 ends with a **local search**
  (:mod:`~privacy_plugins.core.anonymize.cluster_refine`): records move from a cluster
  with spare records to the cluster where they cost least, and costly clusters are
  dissolved into others, while that lowers the table's loss and every cluster keeps
  every model.

**Models.** A cluster is closed only when it satisfies every requested model, checked
with the models themselves (``violating_classes``) on equivalence classes over the whole
table (when every model declares ``judged_by_size``, by counting the records per cluster)
— the candidate cluster(s) plus one class of every other row, so a model that
compares a class with the table (t-closeness) sees the whole table's distribution. While
a cluster has the size but misses a model, records bringing a value of a column some
model reads (e.g. a new sensitive value) are preferred. Leftovers can break a
non-monotone model (entropy l): such clusters are merged into their cheapest neighbour
until all hold. The whole table as one class must satisfy every model, else
:class:`InfeasibleAnonymizationError`.

**Progress.** ``request.progress(done, total)`` is called about every 1 % of the records:
k-member counts the records in closed clusters (``total`` = rows); two-phase counts
phase 1's records in valid clusters, then phase 2's records of finished clusters, then
the local search's rounds (``total`` = 3 × rows), ending at ``done == total``. Each phase is
announced by name (``"two-phase: merging clusters"``, ``"two-phase: splitting big clusters"``,
``"two-phase: refining …"``, ``"k-member: building clusters"``; :func:`~privacy_plugins.core.progress.announce_phase`).

**Ties** between equally good records are broken by ``numpy.random.default_rng(seed)``
(deterministic utility-greedy local recoding is attackable: arXiv 2509.03350); the seed
is in the details. **Suppression:** none — every record ends in a valid cluster when the
table has at least one valid cluster's worth of records; ``suppressed`` is 0 — except for a
model that declares merging does not repair it (the history model with a leakage bound):
then clusters merge with its relaxation and the records of the published classes that still
miss it are suppressed within ``suppression_limit``, then readmitted where a box may grow and
every class still passes, and the local search runs again under the cover judge
(:mod:`~privacy_plugins.core.anonymize.cluster_suppress`). **The release history's domain rule**
(``history: {protect: domain}``): clusters whose published box breaks it are dissolved or merged
after the clustering; one left with every label ``*`` is left out within the limit
(:mod:`~privacy_plugins.core.anonymize.cluster_domain`); on the suppression path every step (pools,
removals, cuts, readmissions, the guarded local search) judges it too, as one more reason a class
fails. **Published values:** as Mondrian (ranges ``"[a-b]"`` for numeric QIs without hierarchy, the
LCA's label otherwise) and the same NCP costs; clusters with equal labels form one published class.

References:
    Byun J.-W., Kamra A., Bertino E., Li N. Efficient k-anonymization using clustering
    techniques. DASFAA 2007.
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data publishing
    (thesis), §3.2 Two-phase clustering k-anonymization.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import (
    AnonymizationDetails,
    AnonymizationRequest,
    AnonymizationResult,
    AnonymizedTable,
)
from privacy_plugins.core.anonymize.cluster_cover import CoverJudge
from privacy_plugins.core.anonymize.cluster_domain import box_rules, breaking_boxes, repair_boxes
from privacy_plugins.core.anonymize.cluster_greedy import (
    CostSpace,
    GreedyStats,
    boxes,
    greedy_clusters,
    size_summary,
    stable_order,
)
from privacy_plugins.core.anonymize.cluster_merge import merge_clusters
from privacy_plugins.core.anonymize.cluster_refine import RefineStats, refine_clusters
from privacy_plugins.core.anonymize.cluster_suppress import (
    dense,
    publish_kept,
    published_classes,
    readmit,
    refine_passing,
    relaxed_models,
    split_passing,
    suppress_failing,
    suppresses_instead_of_merging,
)
from privacy_plugins.core.anonymize.mondrian import _dimension, publish_groups
from privacy_plugins.core.anonymize.partition_split import Dimension, partition_rows
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags, anonymize
from privacy_plugins.core.frame import EncodedColumn
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.progress import announce_phase
from privacy_plugins.errors import InfeasibleAnonymizationError

__all__ = ["SPLIT_STRATEGIES", "ClusterDetails", "KMemberAnonymizer", "TwoPhaseAnonymizer", "anonymize_clustering"]

SPLIT_STRATEGIES = ("a", "b")
#: Most rounds of record moves after splitting (two-phase); the search usually stops earlier.
REFINE_ROUNDS = 100


@dataclass(frozen=True)
class ClusterDetails(AnonymizationDetails):
    """What a clustering anonymizer did: the result's algorithm-specific ``details``.

    Attributes:
        method: ``"k-member"`` or ``"two-phase"``.
        split: ``"a"`` (bottom-up greedy) or ``"b"`` (top-down bisection); ``None`` for k-member.
        seed: the seed of the tie-breaking generator (same seed, same release).
        n_clusters: clusters found (published classes can be fewer: equal labels merge).
        n_classes: equivalence classes of the published table.
        sizes: cluster sizes: ``min``, ``median``, ``mean``, ``max``.
        leftovers: records that joined a closed cluster at the end of a greedy pass.
        absorbed: records taken in by relaxing (phase 1) beyond the valid size.
        clusters_after_phase1: clusters before splitting (two-phase).
        big_clusters_split: clusters with at least twice the smallest valid size (two-phase).
        repairs: clusters merged because leftovers broke a model.
        model_checks: calls of the models on candidate clusters.
        seconds_phase1: seconds of the greedy (relaxing) phase.
        seconds_phase2: seconds of the splitting phase and the record moves (0 for k-member).
        moves: records moved between clusters by the local search (two-phase).
        dissolved: clusters dissolved into others by the local search (two-phase).
        refine_rounds: rounds of that local search (two-phase).
    """

    kind: ClassVar[str] = "clusters"

    method: str
    split: str | None
    seed: int
    n_clusters: int
    n_classes: int
    sizes: Mapping[str, float]
    leftovers: int
    absorbed: int
    clusters_after_phase1: int
    big_clusters_split: int
    repairs: int
    model_checks: int
    seconds_phase1: float
    seconds_phase2: float
    moves: int = 0
    dissolved: int = 0
    refine_rounds: int = 0

    def headline(self) -> str:
        """Clusters and their sizes; for two-phase also what merging, splitting and refining did."""
        sizes = f"sizes {self.sizes['min']:g}-{self.sizes['max']:g}"
        line = f"{self.n_clusters:,} clusters ({self.n_classes:,} published classes, {sizes})"
        if self.split is None:
            return line
        return (
            f"{line}; {self.clusters_after_phase1:,} after merging, {self.big_clusters_split:,} big clusters split "
            f"(split {self.split}), {self.refine_rounds:,} refining rounds moved {self.moves:,} records"
        )


class _Checker:
    """Which groups of rows miss a model, measured on classes over the whole table."""

    def __init__(
        self, request: AnonymizationRequest, frame: pd.DataFrame, models: Sequence[PrivacyModel] | None = None
    ) -> None:
        self.models = tuple(request.models if models is None else models)
        self.qis = request.quasi_identifiers
        self.frame = frame[list(request.model_columns)]
        self.n = len(frame)
        self.encodings: dict[tuple[Hashable, bool], EncodedColumn] = {}
        #: Every model is judged by class size alone (declared by the model): count, build nothing.
        self.by_size = bool(self.models) and all(model.judged_by_size for model in self.models)
        self.min_size = request.minimum_class_size

    def __call__(self, rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        if self.by_size:
            return np.asarray(np.bincount(group_of_row, minlength=n_groups)[:n_groups] < self.min_size, dtype=bool)
        class_of_row = np.full(self.n, n_groups, dtype=np.int64)
        class_of_row[rows] = group_of_row
        n_classes = n_groups + int(rows.shape[0] < self.n)
        classes = EquivalenceClasses.from_class_ids(
            self.frame, self.qis, class_of_row, n_classes, encodings=self.encodings
        )
        bad = np.zeros(n_classes, dtype=bool)
        for model in self.models:
            bad |= model.violating_classes(classes)
        return bad[:n_groups]


def _split_b(
    space: CostSpace, checker: _Checker, rows: np.ndarray, rng: np.random.Generator, start: np.ndarray | None = None
) -> np.ndarray:
    """Splitting B: Mondrian's bisection of big clusters, strict or relaxed, whichever loses less per cluster.

    ``start``: each row's big cluster (dense ids; default: ``rows`` are one cluster). All are
    bisected in the same rounds (one ``partition_rows`` per mode, not one per cluster: Adult
    k = 5 has ~400 big clusters). Returns a part per row, dense, numbered by (cluster, part).
    """
    sub = [Dimension(codes=d.codes[rows], size=d.size, values=d.values, hierarchy=d.hierarchy, nodes=d.nodes)
           for d in space.dimensions]  # fmt: skip
    first = np.zeros(rows.shape[0], dtype=np.int64) if start is None else start
    n_clusters = int(first.max()) + 1 if first.shape[0] else 0

    def allowed(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
        bad = checker(rows, class_of_row, n_classes)
        return np.asarray(~bad[: 2 * n_candidates].reshape(n_candidates, 2).any(axis=1), dtype=bool)

    best, best_loss = np.zeros(rows.shape[0], dtype=np.int64), np.full(n_clusters, np.inf)
    offset = 0
    for mode in ("strict", "relaxed"):
        part = partition_rows(sub, allowed, mode=mode, rng=rng, start=start).partition_of_row
        n_parts = int(part.max()) + 1
        low, high = boxes(space.codes[:, rows], part, n_parts)
        owner = np.zeros(n_parts, dtype=np.int64)
        owner[part] = first
        loss = np.bincount(owner, weights=space.box_costs(low, high) * np.bincount(part), minlength=n_clusters)
        better = loss < best_loss - 1e-12
        best = np.where(better[first], part + offset, best)
        best_loss = np.where(better, loss, best_loss)
        offset += n_parts
    _, dense = np.unique(first * offset + best, return_inverse=True)
    return np.asarray(dense, dtype=np.int64).ravel()


def _split_all_b(
    space: CostSpace, checker: _Checker, cluster: np.ndarray, is_big: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Every big cluster of ``cluster`` split by :func:`_split_b` at once; new dense ids (cluster order), and how many.

    Only for models judged by size: a model reading other classes would see the other clusters' halves.
    """
    parts = np.ones(is_big.shape[0], dtype=np.int64)
    big_id = np.cumsum(is_big) - 1
    rows = np.flatnonzero(is_big[cluster])
    n_big = int(is_big.sum())
    if n_big:
        owner = big_id[cluster[rows]]
        part = _split_b(space, checker, rows, rng, start=owner)  # numbered by (cluster, part): ranges
        first = np.full(n_big, part.shape[0], dtype=np.int64)
        np.minimum.at(first, owner, part)
        last = np.zeros(n_big, dtype=np.int64)
        np.maximum.at(last, owner, part)
        parts[is_big] = last - first + 1
    base = np.concatenate(([0], np.cumsum(parts)[:-1]))
    new = base[cluster]
    if n_big:
        new[rows] += part - first[owner]
    return new, n_big


def _strict_below(
    relaxed: _Checker, strict: _Checker, size: int
) -> Callable[[np.ndarray, np.ndarray, int], np.ndarray]:
    """Phase 1's test with suppression: a cluster misses the relaxation, or the strict models below ``size`` records.

    A cluster of the relaxation that breaks the strict models (a share over its bound) keeps
    merging until it has ``size`` records; phase 2 then cuts it under the strict models. So
    fewer of the published classes break a share that only removals repair.
    """

    def failing(rows: np.ndarray, group_of_row: np.ndarray, n_groups: int) -> np.ndarray:
        bad = np.asarray(relaxed(rows, group_of_row, n_groups), dtype=bool).copy()
        below = np.bincount(group_of_row, minlength=n_groups)[:n_groups] < size
        if (below & ~bad).any():
            bad |= below & np.asarray(strict(rows, group_of_row, n_groups), dtype=bool)
        return bad

    return failing


def _fewer_failing(strict: _Checker, rows: np.ndarray, part: np.ndarray, other: Callable[[], np.ndarray]) -> np.ndarray:
    """``part``, or ``other()`` (clusters of ``rows`` too) when that leaves fewer rows failing ``strict``."""
    failing = strict(rows, part, int(part.max()) + 1)[part].sum()
    if not failing:
        return part
    second = other()
    return second if strict(rows, second, int(second.max()) + 1)[second].sum() < failing else part


#: Records per k-member block: greedy k-member is quadratic, so larger tables are cut first and each block is
#: clustered alone (:mod:`.block_path`), at a cost in NCP (Adult k = 10: 0.0654 in one block, 0.0715 in two,
#: 0.0857 in four; ×4: 0.0267 / 0.0363 in 4).
BLOCK = 131072


def _cluster(request: AnonymizationRequest, *, method: str, split: str | None) -> AnonymizedTable:
    frame = request.table.reset_index(drop=True)
    qis, n = request.quasi_identifiers, len(request.table)
    coded = [_dimension(frame[q], request.hierarchies.get(q), request.numeric_domains.get(q)) for q in qis]
    dimensions = [d for d, _ in coded]
    strict = _Checker(request, frame)
    # Models merging does not repair: merge with their relaxation, then suppress (cluster_suppress).
    suppressing = suppresses_instead_of_merging(request.models, request.max_suppressed)
    checker = _Checker(request, frame, relaxed_models(request.models)) if suppressing else strict
    every = np.arange(n, dtype=np.int64)
    if checker(every, np.zeros(n, dtype=np.int64), 1)[0]:
        whole = EquivalenceClasses.from_class_ids(checker.frame, qis, np.zeros(n, dtype=np.int64), 1)
        failed = [f"{m} (observed {m.observed(whole):.4g})" for m in checker.models if m.violating_classes(whole)[0]]
        raise InfeasibleAnonymizationError(
            f"{', '.join(failed)} does not hold even for the whole table as one cluster; "
            "no clustering can satisfy it; relax the requirement"
        )
    space = CostSpace(dimensions)
    # Published from the space's dimensions: their codes are rows of ``space.codes`` (one copy at 1M rows).
    coded = [(d, labels) for d, (_, labels) in zip(space.dimensions, coded, strict=True)]
    del dimensions
    rng = np.random.default_rng(request.seed)
    min_size = request.minimum_class_size
    # With suppression the growth seeks new values of what the models read, not of derived columns (history sets).
    derived = {c for m in request.models for c in m.derived_columns(frame.iloc[:0])} if suppressing else set()
    diversity = [
        pd.factorize(frame[c], use_na_sentinel=False)[0].astype(np.int64)
        for c in request.model_columns
        if c not in derived
    ]
    stats = GreedyStats()
    started = time.perf_counter()
    report = request.progress
    total = n if method == "k-member" else 3 * n

    def phase1_progress(done: int) -> None:
        if report is not None:
            report(done, total)

    announce_phase(report, f"{method}: building clusters" if method == "k-member" else f"{method}: merging clusters")
    if method == "k-member":
        cluster = greedy_clusters(space, checker, every, rng, min_size=min_size, relax=False, diversity=diversity,
                                  stats=stats, progress=phase1_progress, by_size=checker.by_size,
                                  strict=strict if suppressing else None)  # fmt: skip
    else:
        merging = _strict_below(checker, strict, 2 * min_size) if suppressing else checker
        cluster = merge_clusters(space, merging, every, rng, min_size=min_size, stats=stats, progress=phase1_progress,
                                 by_size=checker.by_size)  # fmt: skip
    after_phase1 = int(cluster.max()) + 1
    phase1_sizes = np.bincount(cluster)
    absorbed = int((phase1_sizes - np.minimum(phase1_sizes, min_size)).sum()) if method == "two-phase" else 0
    phase1_leftovers = stats.leftovers
    seconds1 = time.perf_counter() - started
    big = 0
    refine = RefineStats()
    if method == "two-phase":
        announce_phase(report, f"{method}: splitting big clusters")
        bounds = np.concatenate(([0], np.cumsum(phase1_sizes)))
        new = np.empty(n, dtype=np.int64)
        next_id = 0
        step, reported = max(1, n // 100), 0
        batched = split == "b" and strict.by_size
        if batched:  # every big cluster bisected in the same rounds
            new, big = _split_all_b(space, strict, cluster, phase1_sizes >= 2 * min_size, rng)
            if report is not None:
                report(2 * n, total)
        order = stable_order(cluster, after_phase1) if not batched else cluster[:0]
        for g in range(after_phase1 if not batched else 0):
            rows = order[bounds[g] : bounds[g + 1]]
            if phase1_sizes[g] >= 2 * min_size:
                big += 1
                if split == "a":
                    part = greedy_clusters(space, checker, rows, rng, min_size=min_size, relax=False,
                                           diversity=diversity, stats=stats,
                                           strict=strict if suppressing else None)  # fmt: skip
                else:  # a cut is kept when both halves pass every model, strictly
                    part = _split_b(space, strict, rows, rng)
                    if suppressing:  # halves still breaking a share: the strict greedy growth when it leaves fewer
                        greedy = partial(greedy_clusters, space, checker, rows, rng, min_size=min_size, relax=False,
                                         diversity=diversity, stats=stats, strict=strict)  # fmt: skip
                        part = _fewer_failing(strict, rows, part, greedy)
            else:
                part = np.zeros(rows.shape[0], dtype=np.int64)
            new[rows] = part + next_id
            next_id += int(part.max()) + 1
            if report is not None and bounds[g + 1] - reported >= step:
                reported = int(bounds[g + 1])
                report(n + reported, total)
        after_split = new

        announce_phase(report, f"{method}: refining (moving records between clusters)")

        def refine_progress(round_: int) -> None:
            if report is not None:
                report(2 * n + (n * round_) // REFINE_ROUNDS, total)

        cluster = refine_clusters(space, strict, every, after_split, rng, min_size=min_size, rounds=REFINE_ROUNDS,
                                  stats=refine, progress=refine_progress)  # fmt: skip
        if report is not None:
            report(total, total)
    seconds2 = time.perf_counter() - started - seconds1
    # The domain rule (history: {protect: domain}) is asked of each cluster's published box: merge those breaking it.
    cluster, _ = repair_boxes(space, coded, frame, qis, cluster, box_rules(request.models), failing=strict,
                              leave_out=0 if suppressing else request.max_suppressed)  # fmt: skip
    suppressed = 0
    if suppressing:
        rules = box_rules(request.models)
        on_boxes = breaking_boxes(None, space, coded, frame, qis, rules) if rules else None

        def recluster(pool: np.ndarray) -> tuple[np.ndarray, int]:
            """The pool clustered by k-member growing under the strict models; and its rows in failing clusters."""
            local = frame.iloc[pool].reset_index(drop=True)
            local_strict = _Checker(request, local)
            local_space = CostSpace([Dimension(codes=d.codes[pool], size=d.size, values=d.values, hierarchy=d.hierarchy,
                                               nodes=d.nodes) for d in space.dimensions])  # fmt: skip
            rows = np.arange(pool.shape[0], dtype=np.int64)
            part = greedy_clusters(local_space, _Checker(request, local, checker.models), rows, rng, min_size=min_size,
                                   relax=False, diversity=[c[pool] for c in diversity],
                                   strict=local_strict)  # fmt: skip
            failing = local_strict(rows, part, int(part.max()) + 1)
            if on_boxes is not None:  # a pool's new boxes are judged by the domain rule too (protect: domain)
                failing = failing | on_boxes(pool, part, int(part.max()) + 1)
            return part, int(failing[part].sum())

        try:
            judge = CoverJudge(strict, space.dimensions, frame, request.models)  # covered records too, as the gate
            # What grows, cuts or moves boxes after repair_boxes keeps them meeting the domain rule (protect: domain).
            boxed = breaking_boxes(judge, space, coded, frame, qis, rules)
            # Classes no single removal repairs first lose their most frequent value of this attribute.
            shared = [m.sensitive_attribute for m in request.models if not m.repaired_by_merging]
            values = None
            if shared and shared[0] is not None:
                values = pd.factorize(frame[shared[0]], use_na_sentinel=False)[0]
            cluster = suppress_failing(space, boxed, cluster, published_classes(coded),
                                       max_suppressed=request.max_suppressed,
                                       describe=", ".join(map(str, request.models)), recluster=recluster,
                                       values=values, min_size=min_size, towards=judge.over_share,
                                       members_only=strict, readmit_with=boxed)  # fmt: skip
            # Big clusters the relaxed merging and the pools left, cut where every class still passes the judge.
            cluster = split_passing(boxed, cluster, published_classes(coded),
                                    lambda rows, owner: _split_b(space, strict, rows, rng, start=owner),
                                    min_size=min_size)  # fmt: skip

            def grown(rows: np.ndarray, owner: np.ndarray) -> np.ndarray:
                """Each cluster of ``rows`` cut by the strict greedy growth (phase 2's other split)."""
                part = np.empty(rows.shape[0], dtype=np.int64)
                next_id = 0
                for o in range(int(owner.max()) + 1):
                    mine = np.flatnonzero(owner == o)
                    local = greedy_clusters(space, checker, rows[mine], rng, min_size=min_size, relax=False,
                                            diversity=diversity, strict=strict)  # fmt: skip
                    part[mine] = local + next_id
                    next_id += int(local.max()) + 1
                return part

            if method == "two-phase":  # phase 2's other split (k-member: 1.26x with it, 1.24x without)
                # The big clusters whose Mondrian cuts were reverted (or not made): the greedy growth's cut.
                cluster = split_passing(boxed, cluster, published_classes(coded), grown, min_size=min_size)
            # Records left out cost NCP 1 each: back in the cluster they widen least, where every class still passes.
            cluster = readmit(space, boxed, cluster, published_classes(coded))

            def moves(rows: np.ndarray, group: np.ndarray, failing: Callable[..., np.ndarray]) -> np.ndarray:
                """Phase 2's local search: record moves and dissolutions."""
                return refine_clusters(space, failing, rows, group, rng, min_size=min_size, rounds=REFINE_ROUNDS)

            # The local search again, under the judge: the pools and removals widened boxes it had narrowed.
            cluster = refine_passing(boxed, cluster, published_classes(coded), moves)
            cluster = readmit(space, boxed, cluster, published_classes(coded))  # the moves narrowed some boxes
        except InfeasibleAnonymizationError as over_limit:  # above the limit: the merging repair (no suppression)
            try:
                return _cluster(replace(request, max_suppressed=0), method=method, split=split)
            except InfeasibleAnonymizationError as merging:  # say both: the limit is usually what to change
                raise InfeasibleAnonymizationError(f"{over_limit}; without suppression: {merging}") from over_limit
        cluster, n_clusters = dense(cluster)
        (published, utility, classes, qi_codes), suppressed = publish_kept(frame, request, coded, cluster, n_clusters)
    elif (cluster < 0).any():  # an all-* class breaking the domain rule, left out (cluster_domain)
        n_clusters = int(cluster.max()) + 1
        (published, utility, classes, qi_codes), suppressed = publish_kept(frame, request, coded, cluster, n_clusters)
    else:
        n_clusters = int(cluster.max()) + 1
        published, utility, classes, qi_codes = publish_groups(frame, request, coded, cluster, n_clusters)
    return AnonymizedTable(
        table=published,
        released=np.ones(len(published), dtype=bool),
        suppressed=suppressed,
        utility=utility,
        qi_codes=qi_codes,
        details=ClusterDetails(
            method=method,
            split=split,
            seed=request.seed,
            n_clusters=n_clusters,
            n_classes=classes.n_classes,
            sizes=size_summary(cluster[cluster >= 0]),
            leftovers=phase1_leftovers,
            absorbed=absorbed,
            clusters_after_phase1=after_phase1,
            big_clusters_split=big,
            repairs=stats.repairs,
            model_checks=stats.model_checks,
            seconds_phase1=round(seconds1, 4),
            seconds_phase2=round(seconds2, 4),
            moves=refine.moves,
            dissolved=refine.dissolved,
            refine_rounds=refine.rounds,
        ),
    )


@dataclass(frozen=True)
class KMemberAnonymizer:
    """Greedy k-member clustering (Byun et al.), registered as ``"k-member"``; no options."""

    #: Checks every model on each candidate, so it can promise any of them (the release spec reads this);
    #: every record ends in a cluster, except for a model merging does not repair (:mod:`.cluster_suppress`).
    #: Quadratic: tables above :data:`BLOCK` records are clustered block by block (:mod:`.block_path`), each
    #: block valid as one cluster.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(works_per_block=True)
    name: str = "k-member"
    options: tuple[AnonymizerOption, ...] = ()

    def run(self, request: AnonymizationRequest) -> AnonymizedTable:
        """Cluster greedily until every record is in a cluster that satisfies every model."""
        return _cluster(request, method="k-member", split=None)

    def block_limit(self) -> int:
        """:data:`BLOCK` records (read when called, so tests and benchmarks may lower it)."""
        return BLOCK

    def block_admissible(self, units: AnonymizationRequest, weights: np.ndarray) -> Callable[[np.ndarray], bool]:
        """A block needs the smallest valid size and every model as one class (then k-member can close it)."""
        models, qis, min_size = units.models, units.quasi_identifiers, units.minimum_class_size
        frame = units.table[list(units.model_columns)]
        by_size = all(model.judged_by_size for model in models)

        def admissible(members: np.ndarray) -> bool:
            if int(weights[members].sum()) < min_size:
                return False
            if by_size:
                return True
            one = np.zeros(members.shape[0], dtype=np.int64)
            part = frame.iloc[members].reset_index(drop=True)
            classes = EquivalenceClasses.from_class_ids(part, qis, one, 1, weights=weights[members])
            return not any(bool(model.violating_classes(classes)[0]) for model in models)

        return admissible


@dataclass(frozen=True)
class TwoPhaseAnonymizer:
    """Two-phase clustering (thesis §3.2), registered as ``"two-phase"``; option ``split`` a|b."""

    #: Checks every model on each candidate, so it can promise any of them (the release spec reads this);
    #: every record ends in a cluster, except for a model merging does not repair (:mod:`.cluster_suppress`).
    tags: ClassVar[AnonymizerTags] = AnonymizerTags()
    name: str = "two-phase"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption(
            "split",
            str,
            "b",
            choices=SPLIT_STRATEGIES,
            help="how phase 2 splits big clusters: a = greedy k-member inside, b = median bisection inside",
            flag="split",
        ),
    )

    def run(self, request: AnonymizationRequest, *, split: str = "b") -> AnonymizedTable:
        """Relax (clusters absorb the records inside their box), then split every big cluster."""
        return _cluster(request, method="two-phase", split=split)


def anonymize_clustering(
    table: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    method: Literal["k-member", "two-phase"] = "two-phase",
    split: Literal["a", "b"] = "b",
    suppression_limit: float = 0.0,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    insensitive: Sequence[Hashable] | None = None,
    seed: int = 0,
) -> AnonymizationResult:
    """Anonymize by clustering: ``anonymize(..., algorithm=method)`` (``split`` for two-phase only).

    Args:
        table: the raw table.
        quasi_identifiers: numeric ones without a hierarchy are published as ranges, the
            others need a hierarchy (published as LCA labels).
        models: every cluster must satisfy all of them (k, l-diversity, t-closeness …).
        method: ``"k-member"`` (greedy, Byun et al.) or ``"two-phase"`` (relax, then split).
        split: two-phase only: ``"a"`` (greedy inside big clusters) or ``"b"`` (bisection).
        suppression_limit: in [0, 1); clustering suppresses only for a model merging does not repair.
        hierarchies: column → :class:`Hierarchy` (optional for numeric QIs).
        sensitive_attributes: sensitive columns besides those the models name.
        identifiers: direct identifiers, dropped from the output.
        insensitive: columns published unchanged (every column needs a role).
        seed: integer ≥ 0 seeding the tie-breaking generator.

    Raises:
        ConfigurationError: bad parameters; HierarchyError: a non-numeric QI without hierarchy;
        InfeasibleAnonymizationError: the whole table as one class fails a model.

    Example:
        >>> import pandas as pd
        >>> from privacy_plugins.core.models import KAnonymity
        >>> df = pd.DataFrame({"age": [1, 2, 3, 10, 11, 12]})
        >>> anonymize_clustering(df, quasi_identifiers=["age"], models=[KAnonymity(3)]).table["age"].tolist()
        ['[1-3]', '[1-3]', '[1-3]', '[10-12]', '[10-12]', '[10-12]']
    """
    options: dict[str, Any] = {"split": split} if method == "two-phase" else {}
    return anonymize(
        table,
        algorithm=method,
        quasi_identifiers=quasi_identifiers,
        models=models,
        suppression_limit=suppression_limit,
        hierarchies=hierarchies,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
        insensitive=insensitive,
        seed=seed,
        **options,
    )
