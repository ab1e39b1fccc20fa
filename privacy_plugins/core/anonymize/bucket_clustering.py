"""Bucket clustering frequency l-diversification (Mirakabad thesis §3.3, Algorithms 3.11–3.13), ``"bucket"``.

**Our reading.** The thesis's chapter 3 is not in our copy; its abstract and contents
say: extending greedy k-member clustering to frequency l-diversity "may result in high
information loss or can not terminate" (Algorithms 3.9, 3.10: the optimistic baseline in
:mod:`~privacy_plugins.core.anonymize.optimistic`); *bucket clustering* "exploits some
criteria resulting in less information loss meanwhile assuring termination", with
"finding best tuple meantime loyal to frequency l-diversity for given cluster" (3.12) and
"finding best cluster … for given tuple" (3.13), and it buckets the records by sensitive
value as Anatomy does (Table 3.2). Our design:

* **Buckets and feasibility first.** Records are bucketed by sensitive value; the table
  must be *eligible* (no bucket above ``n / l``,
  :mod:`~privacy_plugins.core.anonymize.feasibility`), else the fewest records are
  suppressed within ``suppression_limit`` or the run stops before any work.
* **Clusters of size s.** ``s ≥ max(k, ⌈l⌉)`` (the largest minimum class size of the
  models), the smallest such size whose cap ``⌊s / l⌋`` is closest to ``s / l`` (for k = 3,
  l = 2: s = 4, two of a value, rather than s = 3, one of each); a cluster may hold at
  most ``cap`` records of one value, which is exactly frequency l-diversity for ``s`` records.
* **Best tuple loyal to l-diversity (3.12).** A cluster starts, like k-member, at the
  record furthest from the last record placed and grows by the record of least
  ``D(c ∪ r)`` (NCP box cost, :mod:`~privacy_plugins.core.anonymize.cluster_greedy`), but
  only among records whose bucket is *loyal*: taking it leaves a way to finish the
  cluster with at most ``cap`` per value **and** leave an eligible remainder. With ``p_v``
  the cluster's count of value v, ``c_v`` the pool's (records not yet placed and not in
  the cluster), ``r`` the slots still open and ``R = ⌊(pool − r) / l⌋`` the most one value
  may keep in the remainder, a completion ``x`` needs
  ``lo_v = max(0, c_v − R) ≤ x_v ≤ hi_v = min(c_v, cap − p_v)`` and ``Σ x_v = r``; it exists
  iff ``lo_v ≤ hi_v`` for every v and ``Σ lo ≤ r ≤ Σ hi`` (integer boxes with one sum
  constraint). The test for every bucket at once is a few numpy operations on the
  bucket counts, then one masked ``argmin`` over the records.
* **The end.** When fewer than ``2s`` records are left, they form the last cluster
  (they are eligible, so it is l-diverse, and it has ``s``..``2s−1`` records). If at a
  cluster's start no bucket is loyal at size s (we have no proof that this cannot
  happen; on small skewed tables it does), the cluster is built to the smallest larger
  size (cap ``⌊size/l⌋``) that has a loyal bucket while leaving at least ``s`` records
  (counted as ``enlarged``); if there is none, the whole pool becomes the last cluster.

**Termination (proof).** Invariant: the pool (records not yet in a closed cluster) is
eligible. It holds at the start (feasibility check). (1) Inside a cluster, if the state
is loyal there is a completion ``x`` with ``Σ x = r``; when ``r ≥ 1`` some ``x_v ≥ 1``, so
``c_v ≥ 1`` records of a loyal bucket exist (``x − e_v`` completes the new state): every
step adds one record, and after at most ``s`` steps the cluster closes. (2) A closed
cluster leaves ``c_v − x_v ≤ R`` of every value in a pool of ``pool − r`` records, i.e. an
eligible pool, and removes ``size ≥ s ≥ 1`` records. (3) Otherwise the loop ends (fewer
than ``2s`` records, or no loyal size) with one last cluster. Trying sizes is bounded by
the pool. So the run takes at most
``n`` steps and ``n / s`` clusters, on every input. **Validity:** every closed cluster has
``size ≥ s`` records and at most ``⌊size/l⌋`` per value; the last one is an eligible pool of at least
``s`` records: every cluster is frequency l-diverse and k-anonymous, hence distinct and
entropy l-diverse too (``max p ≤ 1/l`` ⇒ ``H ≥ ln l``). Other models (recursive (c,l),
t-closeness, leakage bounds) are refused up front: bucket clustering cannot promise them.

**Speed.** Ties go to the record of lowest seeded key. With numba the growth loop runs
compiled (:mod:`~privacy_plugins.core.anonymize.bucket_kernel`, the same clusters), pricing
*units* — distinct QI tuples, whose records cost the same — instead of records (Adult: 11k
units for 30k records; ~0.7 s CPU per l). The work is still about ``units²/s`` (each cluster
prices the pool), so tables above :data:`BLOCK` rows are first cut into eligible
Mondrian-style blocks, each clustered alone (:mod:`~privacy_plugins.core.anonymize.block_path`:
every block is eligible with at least ``2s`` records, so the proof holds per block, and the
blocks can run in a process pool or as an engine's tasks).

**Publishing.** Each cluster's QIs as its range / LCA label
(:func:`~privacy_plugins.core.anonymize.mondrian.publish_groups`), NCP from its box,
exactly as k-member and two-phase publish theirs; suppressed records are removed.

References:
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data publishing
    (thesis), §3.3 Bucket clustering frequency l-diversification.
    Xiao X., Tao Y. Anatomy: simple and effective privacy preservation. VLDB 2006.
    Byun J.-W. et al. Efficient k-anonymization using clustering techniques. DASFAA 2007.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationDetails, AnonymizationRequest, AnonymizedTable
from privacy_plugins.core.anonymize.cluster_domain import box_rules, repair_boxes
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, boxes, size_summary
from privacy_plugins.core.anonymize.feasibility import (
    BUCKETIZING,
    SHOW_VALUES,
    DiversityTarget,
    Feasibility,
    diversity_target,
    eligible_rows,
)
from privacy_plugins.core.anonymize.mondrian import _dimension, publish_groups
from privacy_plugins.core.anonymize.partition_split import Dimension
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import InfeasibleAnonymizationError

#: Rows per block: beyond it the work is about ``n × BLOCK`` instead of ``n²`` (see :mod:`.block_path`),
#: at a cost in NCP (Adult, l = 3: 0.0576 in one block, 0.0607 in two, 0.0752 in blocks of 2,048 rows).
#: Smaller than k-member's: bucket's compiled loop prices records, not units (~4 s for Adult's 30k rows).
BLOCK = 32768

__all__ = ["SHOW_VALUES_OPTION", "BucketClusteringAnonymizer", "BucketDetails", "Prepared", "prepare", "publish"]

#: The opt-in to name over-frequent sensitive values in errors and details (default: counts only).
SHOW_VALUES_OPTION = AnonymizerOption(
    "show_values",
    str,
    "no",
    choices=SHOW_VALUES,
    help="yes: name the over-frequent sensitive values in errors and details (default: counts only)",
)


@dataclass(frozen=True)
class BucketDetails(AnonymizationDetails):
    """What a bucketizing clustering did (``bucket`` or ``optimistic``).

    Attributes:
        method: ``"bucket"`` or ``"optimistic"``.
        seed: the tie-breaking seed.
        l: the frequency target (distinct / entropy l are implied).
        cluster_size: s, the size every cluster but the last is built to.
        n_clusters: clusters found; n_classes: published classes (equal labels merge).
        sizes: cluster sizes: min, median, mean, max.
        feasibility: the eligibility check (counts; values only when opted in).
        suppressed: records suppressed to make the table eligible.
        enlarged: bucket: clusters built larger than s because no bucket was loyal at size s.
        iterations: optimistic: cluster attempts; failed_attempts: attempts that ran out of records.
        seconds_clustering: seconds spent clustering.
    """

    kind: ClassVar[str] = "buckets"

    method: str
    seed: int
    l: float
    cluster_size: int
    n_clusters: int
    n_classes: int
    sizes: Mapping[str, float]
    feasibility: Feasibility
    suppressed: int
    enlarged: int = 0
    merged: int = 0
    iterations: int = 0
    failed_attempts: int = 0
    seconds_clustering: float = 0.0

    def headline(self) -> str:
        """Clusters of size s, and the repeated work (optimistic) or the enlarged clusters (bucket)."""
        line = f"{self.n_clusters:,} clusters of {self.cluster_size:,}+ records ({self.n_classes:,} published classes)"
        if self.iterations or self.failed_attempts:
            return f"{line}; {self.iterations:,} iterations, {self.failed_attempts:,} failed attempts"
        return f"{line}; {self.enlarged:,} enlarged" if self.enlarged else line


@dataclass(frozen=True)
class Prepared:
    """The kept rows, their coded QIs and sensitive codes: what both clusterings work on."""

    frame: pd.DataFrame
    coded: list[tuple[Dimension, np.ndarray]]
    space: CostSpace
    values: np.ndarray
    target: DiversityTarget
    feasibility: Feasibility
    suppressed: int


def prepare(request: AnonymizationRequest, *, algorithm: str, show_values: str) -> Prepared:
    """Check eligibility (suppressing the fewest records allowed), then code the kept rows' QIs."""
    target = diversity_target(request, algorithm=algorithm)
    frame = request.table.reset_index(drop=True)
    codes, keep, report = eligible_rows(request, target, algorithm=algorithm, show_values=show_values)
    kept = frame.loc[keep].reset_index(drop=True)
    coded = [_dimension(kept[q], request.hierarchies.get(q), request.numeric_domains.get(q))
             for q in request.quasi_identifiers]  # fmt: skip
    _, values = np.unique(codes[keep], return_inverse=True)
    return Prepared(
        frame=kept,
        coded=coded,
        space=CostSpace([d for d, _ in coded]),
        values=values.astype(np.int64).ravel(),
        target=target,
        feasibility=report,
        suppressed=int((~keep).sum()),
    )


def publish(
    request: AnonymizationRequest, prepared: Prepared, cluster: np.ndarray, details: dict[str, Any]
) -> AnonymizedTable:
    """Publish each cluster's QIs as its range / LCA label (suppressed records removed)."""
    n_clusters = int(cluster.max()) + 1
    published, utility, classes, qi_codes = publish_groups(prepared.frame, request, prepared.coded, cluster, n_clusters)
    return AnonymizedTable(
        table=published,
        released=np.ones(len(published), dtype=bool),
        suppressed=prepared.suppressed,
        utility=utility,
        qi_codes=qi_codes,
        details=BucketDetails(
            seed=request.seed,
            l=prepared.target.l,
            cluster_size=prepared.target.size,
            n_clusters=n_clusters,
            n_classes=classes.n_classes,
            sizes=size_summary(cluster),
            feasibility=prepared.feasibility,
            suppressed=prepared.suppressed,
            **details,
        ),
    )


def loyal_values(
    in_cluster: np.ndarray, in_pool: np.ndarray, open_slots: int, pool: int, l: float, cap: int
) -> np.ndarray:
    """Which buckets the next record of the cluster may come from (Algorithm 3.12's loyalty test).

    ``in_cluster`` / ``in_pool``: per value, records in the growing cluster / in the pool
    outside it; ``open_slots`` ≥ 1 slots remain; ``pool`` records are outside the cluster.
    True for v when taking one record of v leaves a completion (see the module docstring).
    """
    remainder = int(np.floor((pool - open_slots) / l + TOLERANCE))
    lo = np.maximum(0, in_pool - remainder)
    hi = np.minimum(in_pool, cap - in_cluster)
    bad = lo > hi
    # After taking v: c_v − 1 in the pool, p_v + 1 in the cluster, one slot fewer.
    lo_v = np.maximum(0, in_pool - 1 - remainder)
    hi_v = np.minimum(in_pool - 1, cap - in_cluster - 1)
    sum_lo = lo.sum() - lo + lo_v
    sum_hi = hi.sum() - hi + hi_v
    others_bad = bad.sum() - bad
    ok = (in_pool >= 1) & (lo_v <= hi_v) & (others_bad == 0)
    ok &= (sum_lo <= open_slots - 1) & (open_slots - 1 <= sum_hi)
    return np.asarray(ok, dtype=bool)


def _pick(values: np.ndarray, rng: np.random.Generator, *, largest: bool) -> int:
    """Index of the best finite value, seeded random among exact ties."""
    best = values.max() if largest else values.min()
    ties = np.flatnonzero(np.abs(values - best) <= 1e-12)
    return int(ties[0] if ties.shape[0] == 1 else ties[rng.integers(ties.shape[0])])


def _pick_key(values: np.ndarray, keys: np.ndarray, *, largest: bool) -> int:
    """Index of the best finite value, the lowest seeded key among ties (within 1e-12)."""
    best = values.max() if largest else values.min()
    ties = np.flatnonzero(np.abs(values - best) <= 1e-12)
    return int(ties[0] if ties.shape[0] == 1 else ties[np.argmin(keys[ties])])


def _start(counts: np.ndarray, pool: int, s: int, l: float) -> tuple[int, np.ndarray]:
    """The smallest cluster size from ``s`` with a loyal first record, and the loyal buckets.

    Larger clusters are looser (the cap grows with the size); a size leaving fewer than
    ``s`` records behind is not tried. ``(0, …)`` when none works.
    """
    empty = np.zeros_like(counts)
    for size in range(s, pool - s + 1):
        cap = int(np.floor(size / l + TOLERANCE))
        loyal = loyal_values(empty, counts, size, pool, l, cap)
        if loyal.any():
            return size, loyal
    return 0, np.zeros(counts.shape[0], dtype=bool)


def _span_terms(space: CostSpace, q: int, low: np.ndarray, high: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """QI ``q``'s share of ``D(box ∪ r)`` for every record of ``sub``: one span cost per code, gathered."""
    every = np.arange(space.dimensions[q].size, dtype=np.int64)
    per_code = space.widths(q, np.minimum(low[q], every), np.maximum(high[q], every))
    return np.asarray(per_code[sub[q]], dtype=float)


def cluster_block(
    space: CostSpace, rows: np.ndarray, values: np.ndarray, keys: np.ndarray, n_values: int, s: int, l: float
) -> tuple[np.ndarray, int]:
    """Algorithm 3.11 as designed above on one eligible block: a cluster id (0…) per row of ``rows``, and the enlarged.

    ``values`` / ``keys``: the rows' sensitive codes and seeded tie-breaking keys. A cluster
    is built to size s unless no bucket is loyal at that size; then to the smallest larger
    size that has one (counted), else the rest is the last cluster. The first cluster
    starts furthest from the row of lowest key, each next one furthest from the last row placed.
    """
    codes = space.codes[:, rows]
    n = rows.shape[0]
    counts = np.bincount(values, minlength=n_values).astype(np.int64)
    group = np.full(n, -1, dtype=np.int64)
    remaining = np.arange(n, dtype=np.int64)
    n_groups, enlarged = 0, 0
    last = int(np.argmin(keys))
    while remaining.shape[0] >= 2 * s:
        pool = remaining.shape[0]
        size, loyal = _start(counts, pool, s, l)
        if size == 0:
            break
        enlarged += int(size > s)
        cap = int(np.floor(size / l + TOLERANCE))
        sub = codes[:, remaining]
        sub_values, sub_keys = values[remaining], keys[remaining]
        alive = np.ones(pool, dtype=bool)
        in_cluster = np.zeros(n_values, dtype=np.int64)
        far = space.join_costs(codes[:, last], codes[:, last], sub)
        far[~loyal[sub_values]] = -np.inf
        at = _pick_key(far, sub_keys, largest=True)
        low, high = sub[:, at].copy(), sub[:, at].copy()
        members = [at]
        terms: list[np.ndarray] = []
        total = np.zeros(0)
        for taken in range(1, size + 1):
            alive[at] = False
            v = int(sub_values[at])
            in_cluster[v] += 1
            counts[v] -= 1
            pool -= 1
            changed = (sub[:, at] < low) | (sub[:, at] > high)
            np.minimum(low, sub[:, at], out=low)
            np.maximum(high, sub[:, at], out=high)
            if taken == size:
                break
            # D(c ∪ r) = Σ_q term_q(r): only the QIs whose span just grew are recomputed.
            if not terms:
                terms = [_span_terms(space, q, low, high, sub) for q in range(space.n_qis)]
                total = np.sum(terms, axis=0)
            else:
                for q in np.flatnonzero(changed).tolist():
                    fresh = _span_terms(space, q, low, high, sub)
                    total += fresh - terms[q]
                    terms[q] = fresh
            loyal = loyal_values(in_cluster, counts, size - taken, pool, l, cap)
            cost = total.copy()
            cost[~alive] = np.inf
            if not loyal.all():
                cost[~loyal[sub_values]] = np.inf
            at = _pick_key(cost, sub_keys, largest=False)
            members.append(at)
        last = int(remaining[members[-1]])
        group[remaining[members]] = n_groups
        n_groups += 1
        remaining = remaining[alive]
    group[remaining] = n_groups
    return group, enlarged


def _compiled(space: CostSpace) -> bool:
    """Whether the compiled block kernel can run (numba installed, every QI with a span table)."""
    return space.flat is not None and importlib.util.find_spec("numba") is not None


def bucket_clusters(prepared: Prepared, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A cluster id per kept row, and the number of enlarged clusters: Algorithm 3.11 on the kept rows.

    The kept rows are eligible (one block: larger tables are cut before, :mod:`.block_path`);
    :func:`cluster_block`, compiled where numba is installed (the same clusters).
    """
    space, values, target = prepared.space, prepared.values, prepared.target  # noqa: PD011 - a dataclass field
    n, s, l = values.shape[0], target.size, target.l
    n_values = int(values.max()) + 1 if n else 0
    keys = np.asarray(rng.random(n), dtype=float)
    rows = np.arange(n, dtype=np.int64)
    if _compiled(space):
        from privacy_plugins.core.anonymize import bucket_kernel  # imports numba: only when it runs

        return bucket_kernel.cluster_block(space.codes, values, keys, n_values, s, l, TOLERANCE,
                                           int(np.argmin(keys)), space)  # fmt: skip
    return cluster_block(space, rows, values, keys, n_values, s, l)


#: What bucket promises: the bucketizing models, and the release history's model kept by merging clusters
#: (merging two clusters keeps k, frequency l — max count ≤ (s₁ + s₂)/l — and only grows a class's values).
BUCKETIZING_BY_MERGING = replace(BUCKETIZING, promises=BUCKETIZING.promises | {"history_l_diversity"})


def kept_by_merging(models: Sequence[PrivacyModel]) -> tuple[tuple[PrivacyModel, ...], list[PrivacyModel]]:
    """``models`` split into those the bucketizing builds for and those kept by merging afterwards (the history's)."""
    merging = BUCKETIZING_BY_MERGING.promises - BUCKETIZING.promises
    merged = [m for m in models if m.config_name in merging]
    return tuple(m for m in models if all(m is not x for x in merged)), merged


def merge_until_held(
    prepared: Prepared, cluster: np.ndarray, models: list[PrivacyModel], quasi_identifiers: tuple[Hashable, ...]
) -> tuple[np.ndarray, int]:
    """Merge every cluster missing one of ``models`` into the cluster of least merged box cost; dense ids.

    ``models`` are those the buckets do not build for (the release history's model): monotone
    under merging (a merged class's values are the union of its parts'), so merging ends, at
    worst with one cluster. Returns the clusters and the number of merges.

    Raises:
        InfeasibleAnonymizationError: even the whole table as one cluster misses a model.
    """
    frame = prepared.frame[list(dict.fromkeys(c for m in models for c in m.columns))]
    codes = prepared.space.codes
    group = cluster.astype(np.int64)
    n_groups = int(group.max()) + 1 if group.shape[0] else 0
    merges = 0
    encodings: dict[Any, Any] = {}
    while n_groups:
        classes = EquivalenceClasses.from_class_ids(frame, quasi_identifiers, group, n_groups, encodings=encodings)
        bad = np.zeros(n_groups, dtype=bool)
        for model in models:
            bad |= model.violating_classes(classes)
        failing = np.flatnonzero(bad)
        if failing.shape[0] == 0:
            break
        if n_groups == 1:
            failed = ", ".join(str(model) for model in models if model.violating_classes(classes)[0])
            raise InfeasibleAnonymizationError(
                f"{failed} does not hold even for the whole table as one cluster; no clustering can satisfy it"
            )
        low, high = boxes(codes, group, n_groups)
        sizes = np.bincount(group, minlength=n_groups).astype(float)
        cost = prepared.space.box_costs(low, high) * sizes
        taken = np.zeros(n_groups, dtype=bool)
        target = np.arange(n_groups)
        for g in failing.tolist():  # one merge per failing cluster and round; partners not reused in the round
            if taken[g]:
                continue
            merged = prepared.space.box_costs(np.minimum(low, low[:, g : g + 1]), np.maximum(high, high[:, g : g + 1]))
            increase = merged * (sizes + sizes[g]) - cost - cost[g]
            increase[taken] = np.inf
            increase[g] = np.inf
            if not np.isfinite(increase).any():
                continue
            partner = int(np.argmin(increase))
            target[g] = partner
            taken[g] = taken[partner] = True
            merges += 1
        _, group = np.unique(target[group], return_inverse=True)
        group = group.astype(np.int64).ravel()
        n_groups = int(group.max()) + 1
    return group, merges


@dataclass(frozen=True)
class BucketClusteringAnonymizer:
    """Bucket clustering frequency l-diversification (thesis §3.3), registered as ``"bucket"``."""

    #: Bucketizes one sensitive attribute (feasibility.BUCKETIZING; the release spec reads this), and keeps
    #: the models that merging cannot break (the release history's) by merging clusters: see :func:`merge_until_held`.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(supported_models=BUCKETIZING_BY_MERGING, works_per_block=True)
    name: str = "bucket"
    options: tuple[AnonymizerOption, ...] = (SHOW_VALUES_OPTION,)

    def block_limit(self) -> int:
        """:data:`BLOCK` records (read when called, so tests and benchmarks may lower it)."""
        return BLOCK

    def block_admissible(self, units: AnonymizationRequest, weights: np.ndarray) -> Callable[[np.ndarray], bool]:
        """A block must be eligible (no value above ``records / l``) with at least two clusters' records."""
        target = diversity_target(replace(units, models=kept_by_merging(units.models)[0]), algorithm=self.name)
        values = pd.factorize(units.table[target.attribute], use_na_sentinel=False)[0].astype(np.int64)

        def admissible(members: np.ndarray) -> bool:
            size = int(weights[members].sum())
            most = int(np.bincount(values[members], weights=weights[members]).max())
            return size >= 2 * target.size and most <= int(np.floor(size / target.l + TOLERANCE))

        return admissible

    def run(self, request: AnonymizationRequest, *, show_values: str = "no") -> AnonymizedTable:
        """Feasibility first, then clusters drawn from the buckets, each frequency l-diverse; publish."""
        bucketing, merged_models = kept_by_merging(request.models)
        bucketed = replace(request, models=bucketing)
        prepared = prepare(bucketed, algorithm=self.name, show_values=show_values)
        started = time.perf_counter()
        cluster, enlarged = bucket_clusters(prepared, np.random.default_rng(request.seed))
        merges = 0
        if merged_models:
            cluster, merges = merge_until_held(prepared, cluster, merged_models, request.quasi_identifiers)
            # merging keeps frequency l: the clusters whose published box breaks a box rule merge too
            cluster, repair = repair_boxes(prepared.space, prepared.coded, prepared.frame,
                                           request.quasi_identifiers, cluster, box_rules(merged_models),
                                           leave_out=request.max_suppressed - prepared.suppressed)  # fmt: skip
            merges += repair.merges
            if repair.left_out:  # records of an all-* class breaking the rule: suppressed
                kept = cluster >= 0
                coded = [(replace(d, codes=d.codes[kept]), labels) for d, labels in prepared.coded]
                prepared = replace(prepared, frame=prepared.frame.loc[kept].reset_index(drop=True), coded=coded,
                                   suppressed=prepared.suppressed + repair.left_out)  # fmt: skip
                cluster = cluster[kept]
        seconds = round(time.perf_counter() - started, 4)
        return publish(
            request,
            prepared,
            cluster,
            {"method": self.name, "enlarged": enlarged, "merged": merges, "seconds_clustering": seconds},
        )
