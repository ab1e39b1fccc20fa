"""Optimistic clustering: greedy k-member extended to frequency l-diversity (thesis Algorithm 3.9), ``"optimistic"``.

**Our reading.** The thesis (abstract, contents: "intuitive extension of k-member
clustering algorithm for frequency l-diversity", Algorithm 3.9) shows that this
extension "may result in high information loss or can not terminate"; its chapter is
not in our copy, so the algorithm below is our reconstruction of the intuitive extension:

* Greedy k-member (Byun et al.): a cluster starts at the record furthest from the last
  record placed and takes the record of least ``D(c ∪ r)`` until it is *valid*: at least
  ``s`` records (:func:`~privacy_plugins.core.anonymize.feasibility.cluster_size`) and
  frequency l-diverse. While it has the size but not the diversity, it prefers records
  whose value is not its most frequent one (the nearest such record).
* *Optimism:* it never asks whether the records it leaves behind can still be clustered.
  When a cluster has swallowed every remaining record and is still not l-diverse (the
  earlier clusters took the rare values), the attempt fails, its records go back and a
  new attempt starts from the next seed (one not tried since the pool last changed). When
  the remaining records as a whole are not eligible, every attempt can fail, and the plain
  algorithm then loops forever. An attempt is abandoned as soon as it provably cannot
  become diverse (some value's count above ``(|c| + records of other values left) / l``). Likewise a
  leftover (fewer than ``s`` records remain) joins the cluster of least ``IL`` increase
  that stays l-diverse; when none does, it joins the cheapest one, whose records then go
  back to be clustered again.
* **Iteration bound.** Every failed cluster attempt and every dissolved cluster counts
  one iteration (successful clusters need no bound: at most ``n / s`` of them); after
  ``max_iterations`` (option, CLI ``--max-iterations``) the run stops with
  :class:`~privacy_plugins.errors.InfeasibleAnonymizationError` saying it does not
  terminate, how many records were left and whether they were eligible (counts only).

When it does terminate, every cluster is valid (checked as it closes, and after the
leftovers) and the core re-measures the release. Bucket clustering
(:mod:`~privacy_plugins.core.anonymize.bucket_clustering`) is the thesis's fix: it
keeps the remainder eligible at every step.

References:
    Mirakabad M. R. (thesis), Algorithm 3.9 and §4.4 (Figures 4.20, 4.21).
    Byun J.-W. et al. Efficient k-anonymization using clustering techniques. DASFAA 2007.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from privacy_plugins.core.anonymize.base import AnonymizationRequest, AnonymizedTable
from privacy_plugins.core.anonymize.bucket_clustering import SHOW_VALUES_OPTION, Prepared, _pick, prepare, publish
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace, boxes
from privacy_plugins.core.anonymize.feasibility import BUCKETIZING, check_feasibility
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.progress import announce_phase
from privacy_plugins.errors import InfeasibleAnonymizationError

__all__ = ["DEFAULT_MAX_ITERATIONS", "OptimisticClusteringAnonymizer", "optimistic_clusters"]

#: Repeated work (failed cluster attempts and dissolved clusters) before the run is declared non-terminating.
DEFAULT_MAX_ITERATIONS = 20


def _diverse(counts: np.ndarray, size: int, l: float) -> bool:
    return bool(size > 0 and counts.max() * l <= size + TOLERANCE)


def _grow(
    space: CostSpace,
    values: np.ndarray,
    rows: np.ndarray,
    seed: int,
    target: tuple[int, float, int],
    rng: np.random.Generator,
) -> list[int] | None:
    """Greedy growth from ``seed`` over ``rows`` until valid; positions in ``rows``, or None when they run out."""
    s, l, n_values = target
    sub = space.codes[:, rows]
    sub_values = values[rows]
    alive = np.ones(rows.shape[0], dtype=bool)
    counts = np.zeros(n_values, dtype=np.int64)
    pool = np.bincount(sub_values, minlength=n_values)  # records not yet in the cluster, per value
    low, high = sub[:, seed].copy(), sub[:, seed].copy()
    members, at = [seed], seed
    while True:
        alive[at] = False
        counts[sub_values[at]] += 1
        pool[sub_values[at]] -= 1
        np.minimum(low, sub[:, at], out=low)
        np.maximum(high, sub[:, at], out=high)
        if len(members) >= s and _diverse(counts, len(members), l):
            return members
        # A value's count only grows, and the cluster at best gains every record of other
        # values: when even that cannot bring some value to ≤ 1/l, the attempt has failed.
        others = pool.sum() - pool
        if not alive.any() or bool((counts * l > len(members) + others + TOLERANCE).any()):
            return None
        cost = space.join_costs(low, high, sub)
        cost[~alive] = np.inf
        if len(members) >= s:
            helpful = alive & (counts[sub_values] < counts.max())
            if helpful.any():
                cost[~helpful] = np.inf
        at = _pick(cost, rng, largest=False)
        members.append(at)


def optimistic_clusters(
    prepared: Prepared,
    rng: np.random.Generator,
    *,
    max_iterations: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, int, int]:
    """Algorithm 3.9 as read above: a cluster id per kept row, iterations used, failed attempts.

    ``progress(clustered, n)`` is called about every 1 % of the records placed in clusters
    (dissolved clusters give theirs back, so ``clustered`` can go down).

    Raises:
        InfeasibleAnonymizationError: no termination within ``max_iterations``.
    """
    space, values, target = prepared.space, prepared.values, prepared.target
    n, s, l = values.shape[0], target.size, target.l
    n_values = int(values.max()) + 1
    group = np.full(n, -1, dtype=np.int64)
    iterations, failed = 0, 0
    last = int(rng.integers(n))
    step, reported = max(1, n // 100), 0

    def stop(rest: np.ndarray) -> InfeasibleAnonymizationError:
        eligible = check_feasibility(values[rest], l).feasible
        why = (
            "they are not frequency-l eligible as a whole, so attempts keep running out of diverse records"
            if not eligible
            else "its clusters keep being dissolved and rebuilt"
        )
        return InfeasibleAnonymizationError(
            f"optimistic clustering does not terminate (frequency l = {l:g}; {iterations} of max_iterations="
            f"{max_iterations} used, {failed} failed attempts): {rest.shape[0]} records remain unclustered and "
            f"{why}; use algorithm 'bucket', which keeps the remainder eligible"
        )

    while True:
        remaining = np.flatnonzero(group < 0)
        tried = np.zeros(remaining.shape[0], dtype=bool)
        while remaining.shape[0] >= s:
            sub = space.codes[:, remaining]
            far = space.join_costs(space.codes[:, last], space.codes[:, last], sub)
            if tried.all():
                tried[:] = False
            far[tried] = -np.inf
            seed = _pick(far, rng, largest=True)
            members = _grow(space, values, remaining, seed, (s, l, n_values), rng)
            if members is None:  # ran out of records: optimistic retry from the next seed
                failed += 1
                iterations += 1
                if iterations > max_iterations:
                    raise stop(remaining)
                tried[seed] = True
                last = int(remaining[seed])
                continue
            last = int(remaining[members[-1]])
            group[remaining[members]] = int(group.max()) + 1
            keep = np.ones(remaining.shape[0], dtype=bool)
            keep[members] = False
            remaining, tried = remaining[keep], tried[keep] & False
            if progress is not None and abs(n - remaining.shape[0] - reported) >= step:
                reported = n - remaining.shape[0]
                progress(reported, n)
        if remaining.shape[0] == 0:
            break
        placed = group >= 0  # dissolved clusters leave gaps in the ids
        group[placed] = np.unique(group[placed], return_inverse=True)[1].ravel()
        n_groups = int(group.max()) + 1
        if n_groups == 0:
            raise stop(remaining)
        dissolved = _leftovers(space, values, group, n_groups, remaining, l, rng)
        if dissolved < 0:
            break
        iterations += 1
        if iterations > max_iterations:
            raise stop(np.flatnonzero((group < 0) | (group == dissolved)))
        group[group == dissolved] = -1
    if progress is not None:
        progress(n, n)
    _, dense = np.unique(group, return_inverse=True)
    return dense.astype(np.int64).ravel(), iterations, failed


def _leftovers(
    space: CostSpace,
    values: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    left: np.ndarray,
    l: float,
    rng: np.random.Generator,
) -> int:
    """Each leftover joins the cluster of least IL increase that stays l-diverse, else the cheapest one.

    Returns the id of a cluster the leftovers broke (to be dissolved), or -1 when all hold.
    """
    codes = space.codes
    low, high = boxes(codes, group, n_groups)
    sizes = np.bincount(group[group >= 0], minlength=n_groups).astype(np.int64)
    n_values = int(values.max()) + 1
    counts = np.zeros((n_groups, n_values), dtype=np.int64)
    placed = group >= 0
    np.add.at(counts, (group[placed], values[placed]), 1)
    for r in rng.permutation(left).tolist():
        new_low, new_high = np.minimum(low, codes[:, r : r + 1]), np.maximum(high, codes[:, r : r + 1])
        increase = (sizes + 1) * space.box_costs(new_low, new_high) - sizes * space.box_costs(low, high)
        v = int(values[r])
        stays = np.maximum(counts.max(axis=1), counts[:, v] + 1) * l <= sizes + 1 + TOLERANCE
        g = int(np.argmin(np.where(stays, increase, np.inf))) if stays.any() else int(np.argmin(increase))
        group[r] = g
        low[:, g], high[:, g] = new_low[:, g], new_high[:, g]
        sizes[g] += 1
        counts[g, v] += 1
    # Every cluster a leftover broke and no later one mended, not just the last one broken: a cluster broken
    # early and left so would reach the re-check (found by hypothesis: l = 2.5, two clusters broken in one pass).
    deficit = counts.max(axis=1) * l - sizes
    broken = np.flatnonzero(deficit > TOLERANCE)
    return int(broken[np.argmax(deficit[broken])]) if broken.size else -1


@dataclass(frozen=True)
class OptimisticClusteringAnonymizer:
    """Optimistic clustering (thesis Algorithm 3.9), registered as ``"optimistic"``; option ``max_iterations``."""

    #: Bucketizes one sensitive attribute (feasibility.BUCKETIZING; the release spec reads this).
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(supported_models=BUCKETIZING)
    name: str = "optimistic"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption(
            "max_iterations",
            int,
            DEFAULT_MAX_ITERATIONS,
            help="failed cluster attempts and dissolved clusters before optimistic clustering is reported as "
            "non-terminating",
        ),
        SHOW_VALUES_OPTION,
    )

    def run(
        self, request: AnonymizationRequest, *, max_iterations: int = DEFAULT_MAX_ITERATIONS, show_values: str = "no"
    ) -> AnonymizedTable:
        """Feasibility first, then greedy clusters grown until frequency l-diverse, with the iteration bound."""
        prepared = prepare(request, algorithm=self.name, show_values=show_values)
        started = time.perf_counter()
        announce_phase(request.progress, f"{self.name}: growing clusters")
        cluster, iterations, failed = optimistic_clusters(
            prepared, np.random.default_rng(request.seed), max_iterations=max_iterations, progress=request.progress
        )
        seconds = round(time.perf_counter() - started, 4)
        return publish(
            request,
            prepared,
            cluster,
            {"method": self.name, "iterations": iterations, "failed_attempts": failed, "seconds_clustering": seconds},
        )
