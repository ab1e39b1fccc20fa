"""Anatomy (Xiao & Tao 2006; thesis Algorithm 2.1): a QIT and a sensitive table linked by group id, ``"anatomy"``.

Anatomy does not generalize: it publishes the quasi-identifiers **exactly** in a
quasi-identifier table (QIT: every non-sensitive column plus ``group_id``) and the
sensitive values in a sensitive table (ST: ``group_id``, the sensitive value, ``count``).
An attacker who finds a person's QIT row learns only the group's multiset of values.

**Groups.** Xiao & Tao draw one record from each of the l largest buckets (records
bucketed by sensitive value) until fewer than l buckets are non-empty, then place each
residual record in a group without its value; every group then has l distinct values.
We build groups with the same guarantee in one vectorized step: sort the records by
bucket (largest bucket first, records shuffled inside a bucket with the seed) and deal
them round-robin into ``G = ⌊n / L⌋`` groups (``L = ⌈l⌉``). A bucket is a contiguous run of
at most ``⌊n / L⌋ = G`` records (eligibility), so its records land in distinct groups: each
group has at least ``L`` records, all with different values — frequency (hence distinct
and entropy) L-diverse. For k > L, ``⌈k / L⌉`` consecutive groups are merged (a value
still appears once per merged group, so its frequency stays ≤ 1/L); a last short batch
joins the one before. Feasibility and the fewest suppressions come first, as for
bucket clustering (:mod:`~privacy_plugins.core.anonymize.feasibility`, with L).

**Releases of a growing table** (issue 26). Anatomy declares the release history's model
(``history_l_diversity``, :data:`~privacy_plugins.core.anonymize.bucket_clustering.BUCKETIZING_BY_MERGING`)
and keeps it by merging groups after the dealing (:func:`merge_until_covered`): a record t is
judged on every group holding her exact QI tuple (what the QIT tells), which must keep
min(l, |H(t)|) of her history set H(t) — the model's own ``violating_classes`` on the covering
classes (:mod:`~privacy_plugins.core.anonymize.linked_cover`). A group covering a failing tuple
merges with the group adding the most of the tuple's missing history values, the smaller first.
Merging keeps what Anatomy promises: the union of two groups each holding a value at most
``size / L`` times holds it at most ``(s₁ + s₂) / L`` times (frequency, hence distinct and
entropy L-diversity; the paper's l-diverse partition, Xiao & Tao Definition 3), and k only grows.

**What is re-measured.** :func:`~privacy_plugins.core.anonymize.base.verify` checks that
every QIT row joins exactly one ST group (per group, QIT rows = Σ ST counts), then
measures the models on the groups: k is the group size, l the group's values; a model reading
a per-record QIT column (the history's set H(t)) on the groups covering each QI tuple. The QIT's
QIs are unique per person as in the input: Anatomy gives l-diversity, not k-anonymity of
the QIT, and it does not hide membership (the paper's setting).

**Utility.** Anatomy's QIs are exact, so NCP is 0; the thesis compares bucket clustering,
optimistic clustering and Anatomy by information loss (Figure 4.20), and for Anatomy the
loss is in the link, not in the QIs. We report ``ncp = 0`` (``lm`` = 0) as the QI loss and,
in the details, ``reconstruction_error``: Xiao & Tao's measure, the mean over records of
the squared L2 distance between the record's true sensitive distribution (a point mass)
and its group's published one; over a group this averages to ``1 − Σ_v p_v²``
(``p_v`` the group's shares): 0 for a homogeneous group, ``1 − 1/L`` for L distinct values.
The benchmark prints it beside
the clusterings' NCP on a second axis; the two are not the same scale.

**Publishing two tables.** ``anonymize`` returns the QIT as ``result.table`` and the ST
as ``result.linked.table``; the CLI writes the ST beside ``--out`` (``<name>.st.<ext>``).
The release flow carries both: the candidate
holds the ST beside the QIT (each file's SHA-256 checked), the check step re-measures
the pair per group (and the join, in its row accounting), and the publish step writes
both atomically as ``<table>_qit`` and ``<table>_st``
(:func:`privacy_plugins.release.linked.publish_linked`: DuckDB / SQL in one transaction,
Parquet as a versioned folder behind one atomically renamed link). GX suites run by
Airflow and Dagster see the groups (:func:`privacy_plugins.release.staged_candidate.measured_frame`).

References:
    Xiao X., Tao Y. Anatomy: simple and effective privacy preservation. VLDB 2006.
    Mirakabad M. R. (thesis), Algorithm 2.1 and §4.4.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import (
    AnonymizationDetails,
    AnonymizationRequest,
    AnonymizedTable,
    LinkedTable,
)
from privacy_plugins.core.anonymize.bucket_clustering import (
    BUCKETIZING_BY_MERGING,
    SHOW_VALUES_OPTION,
    kept_by_merging,
)
from privacy_plugins.core.anonymize.feasibility import Feasibility, diversity_target, eligible_rows
from privacy_plugins.core.anonymize.linked_cover import covering_classes, tuple_ids
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags
from privacy_plugins.core.hierarchies import as_labels
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

__all__ = ["GROUP_COLUMN", "AnatomyAnonymizer", "AnatomyDetails", "anatomy_groups", "merge_until_covered"]

#: The column linking the QIT and the ST.
GROUP_COLUMN = "group_id"


@dataclass(frozen=True)
class AnatomyDetails(AnonymizationDetails):
    """What Anatomy did.

    Attributes:
        seed: the seed of the shuffles.
        l: the target l; groups hold ⌈l⌉ distinct values at least.
        n_groups: groups published; sizes: min, median, mean, max group size.
        reconstruction_error: Xiao & Tao's mean squared error of the published sensitive
            distributions (0 = exact).
        feasibility: the eligibility check (counts only unless opted in).
        suppressed: records suppressed to make the table eligible.
        group_column: the linking column.
        merged: group merges made to keep the release history's model (0 without a history).
    """

    kind: ClassVar[str] = "anatomy"

    seed: int
    l: float
    n_groups: int
    sizes: Mapping[str, float]
    reconstruction_error: float
    feasibility: Feasibility
    suppressed: int
    group_column: str
    merged: int = 0

    def headline(self) -> str:
        """Groups published in two linked tables, and how well they keep the sensitive distributions."""
        return (
            f"{self.n_groups:,} groups linked by {self.group_column!r}; "
            f"reconstruction error {self.reconstruction_error:.3g}"
        )


def anatomy_groups(values: np.ndarray, distinct: int, per_group: int, rng: np.random.Generator) -> np.ndarray:
    """A group per record: ``distinct`` values per dealt group, merged to at least ``per_group`` records.

    ``values``: dense sensitive codes of an eligible table (no value above n / distinct).
    """
    n = values.shape[0]
    counts = np.bincount(values)
    shuffle = rng.permutation(n)
    # Largest bucket first, records of a bucket together (shuffled by the permutation).
    order = shuffle[np.lexsort((values[shuffle], -counts[values[shuffle]]))]
    dealt = max(1, n // distinct)
    group = np.empty(n, dtype=np.int64)
    group[order] = np.arange(n) % dealt
    batch = max(1, math.ceil(per_group / distinct))
    merged = np.minimum(group // batch, max(0, dealt // batch - 1))
    relabel = rng.permutation(int(merged.max()) + 1)
    return relabel[merged]


def merge_until_covered(
    qit: pd.DataFrame,
    sensitive: pd.Series,
    group: np.ndarray,
    models: list[PrivacyModel],
    quasi_identifiers: tuple[Hashable, ...],
) -> tuple[np.ndarray, int]:
    """Merge groups until every model holds on the groups covering each QI tuple; dense ids, merges made.

    ``qit``: the published rows (QIs and the models' record columns), ``sensitive`` their values.
    ``models`` (the release history's) are monotone under merging: a tuple's covering values only grow.
    Each round, the failing tuples in turn merge the group of their first row with the group that
    adds the most of their missing history values (ties: the one holding fewer values), each group in one merge per
    round (as bucket's :func:`~privacy_plugins.core.anonymize.bucket_clustering.merge_until_held`).

    Raises:
        InfeasibleAnonymizationError: even the whole table as one group misses a model.
    """
    columns = sorted({c for m in models for c in m.columns if c in qit.columns and c != m.sensitive_attribute}, key=str)
    attribute = sensitive.name
    tuple_of_row = tuple_ids(qit, quasi_identifiers)
    first = np.unique(tuple_of_row, return_index=True)[1]
    value_of_row, labels = pd.factorize(sensitive, use_na_sentinel=False)
    value_of_row = value_of_row.astype(np.int64)
    n_values = max(len(labels), 1)
    wanted = _history_values(models, qit.iloc[first], labels)  # per tuple: its history values (record columns)
    group = np.unique(group, return_inverse=True)[1].astype(np.int64).ravel()
    frame = qit[list(dict.fromkeys([*quasi_identifiers, *columns]))].copy()
    merges = 0
    while True:
        n_groups = int(group.max()) + 1 if group.shape[0] else 0
        keys, counts = np.unique(group * n_values + value_of_row, return_counts=True)
        st = pd.DataFrame({GROUP_COLUMN: keys // n_values, attribute: labels.take(keys % n_values), "count": counts})
        frame[GROUP_COLUMN] = group
        classes = covering_classes(frame, st, GROUP_COLUMN, quasi_identifiers, columns, tuples=tuple_of_row)
        bad = np.zeros(classes.n_classes, dtype=bool)
        for model in models:
            bad |= model.violating_classes(classes)
        failing = np.flatnonzero(bad)
        if failing.shape[0] == 0:
            return group, merges
        if n_groups <= 1:
            raise InfeasibleAnonymizationError(
                f"{', '.join(map(str, models))} does not hold even for the whole table as one group"
            )
        has = np.zeros((n_groups, n_values), dtype=bool)
        has[keys // n_values, keys % n_values] = True
        missing = wanted[failing] & ~_covered(failing, tuple_of_row, group, has)
        target, merged = _partners(group[first[failing]], missing, has)
        merges += merged
        group = np.unique(target[group], return_inverse=True)[1].astype(np.int64).ravel()


def _covered(failing: np.ndarray, tuple_of_row: np.ndarray, group: np.ndarray, has: np.ndarray) -> np.ndarray:
    """Per failing tuple (sorted ids): the values of the groups holding it."""
    n_groups, n_values = has.shape
    pairs = np.unique(tuple_of_row * n_groups + group)
    held, by = pairs // n_groups, pairs % n_groups
    chosen = np.isin(held, failing)
    at = np.searchsorted(failing, held[chosen])
    pair, value = np.nonzero(has[by[chosen]])
    hit = np.bincount(at[pair] * n_values + value, minlength=failing.shape[0] * n_values)
    return hit.reshape(failing.shape[0], n_values) > 0


def _partners(own: np.ndarray, missing: np.ndarray, has: np.ndarray) -> tuple[np.ndarray, int]:
    """Group → group it merges into: each failing tuple's group with the untaken group adding most of ``missing``.

    A loop over failing tuples (not records), each a vector over groups; a group merges once per round.
    """
    n_groups = has.shape[0]
    sizes = has.sum(axis=1).astype(float)  # values held: the smaller partner changes fewer published distributions
    values = has.astype(np.float32)
    taken = np.zeros(n_groups, dtype=bool)
    target = np.arange(n_groups)
    merged = 0
    for g, lacking in zip(own.tolist(), missing.astype(np.float32), strict=True):
        if taken[g]:
            continue
        ranked = (values @ lacking) * (n_groups + 1.0) - sizes
        ranked[taken] = -np.inf
        ranked[g] = -np.inf
        partner = int(np.argmax(ranked))
        if not np.isfinite(ranked[partner]):
            continue
        target[partner] = g
        taken[g] = taken[partner] = True
        merged += 1
    return target, merged


def _history_values(models: list[PrivacyModel], rows: pd.DataFrame, labels: pd.Index) -> np.ndarray:
    """Per row (one per QI tuple): the values the models' history sets hold, over ``labels`` (all: universal)."""
    wanted = np.zeros((len(rows), max(len(labels), 1)), dtype=bool)
    for model in models:
        found = model.intersection_history(rows)
        if found is None:
            continue
        known, held, universal = found
        position = pd.Index(known).get_indexer(as_labels(pd.Series(labels, dtype=object)))
        mapped = np.zeros((len(rows), len(labels)), dtype=bool)
        if held.shape[1]:
            mapped = np.where(position >= 0, held[:, np.maximum(position, 0)], False)
        wanted[:, : len(labels)] |= mapped | universal[:, None]
    return wanted


@dataclass(frozen=True)
class AnatomyAnonymizer:
    """Anatomy (Xiao & Tao 2006), registered as ``"anatomy"``: publishes a QIT and an ST."""

    #: Bucketizes one sensitive attribute (feasibility.BUCKETIZING; the release spec reads this) and
    #: publishes two linked tables (QIT + ST), which the release flow publishes both atomically.
    #: It keeps the release history's model by merging groups (:func:`merge_until_covered`), as bucket does.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(supported_models=BUCKETIZING_BY_MERGING, linked_tables=True)
    name: str = "anatomy"
    options: tuple[AnonymizerOption, ...] = (SHOW_VALUES_OPTION,)

    def run(self, request: AnonymizationRequest, *, show_values: str = "no") -> AnonymizedTable:
        """Feasibility first, then groups of ⌈l⌉ distinct values; publish exact QIs and the group's values."""
        bucketing, merged_models = kept_by_merging(request.models)
        request = replace(request, models=bucketing)
        target = diversity_target(request, algorithm=self.name)
        distinct = math.ceil(target.l - TOLERANCE)
        target = replace(target, l=float(distinct), size=max(request.minimum_class_size, distinct))
        extra = [c for c in request.roles.sensitive_attributes if c != target.attribute]
        if extra or GROUP_COLUMN in request.table.columns:
            raise ConfigurationError(
                f"anatomy publishes one sensitive attribute ({target.attribute!r}) in its sensitive table and "
                f"links it by a {GROUP_COLUMN!r} column; other sensitive attributes {extra} (or an existing "
                f"{GROUP_COLUMN!r} column) cannot be published"
            )
        frame = request.table.reset_index(drop=True)
        codes, keep, report = eligible_rows(request, target, algorithm=self.name, show_values=show_values)
        kept = frame.loc[keep].reset_index(drop=True)
        _, values = np.unique(codes[keep], return_inverse=True)
        values = values.astype(np.int64).ravel()
        group = anatomy_groups(values, distinct, target.size, np.random.default_rng(request.seed))
        merges = 0
        if merged_models:
            qis = tuple(request.quasi_identifiers)
            group, merges = merge_until_covered(kept, kept[target.attribute], group, merged_models, qis)
        qit = kept.drop(columns=[*request.roles.identifiers, target.attribute])
        qit[GROUP_COLUMN] = group
        st = (
            pd.DataFrame({GROUP_COLUMN: group, target.attribute: kept[target.attribute]})
            .groupby([GROUP_COLUMN, target.attribute], sort=True, dropna=False)
            .size()
            .rename("count")
            .reset_index()
        )
        sizes = np.bincount(group)
        n_values = int(values.max()) + 1
        pair = np.bincount(group * n_values + values, minlength=sizes.shape[0] * n_values).astype(float)
        squares = (pair.reshape(-1, n_values) ** 2).sum(axis=1) / sizes**2
        error = float(((1.0 - squares) * sizes).sum() / sizes.sum())
        utility = UtilityMetrics(
            ncp=0.0,
            lm=0.0,
            discernibility=discernibility(sizes, 0, len(kept)),
            c_avg=average_class_size(sizes, request.minimum_class_size),
        )
        return AnonymizedTable(
            table=qit,
            released=np.ones(len(qit), dtype=bool),
            suppressed=int((~keep).sum()),
            utility=utility,
            details=AnatomyDetails(
                seed=request.seed,
                l=target.l,
                n_groups=int(sizes.shape[0]),
                sizes={
                    "min": int(sizes.min()),
                    "median": float(np.median(sizes)),
                    "mean": float(sizes.mean()),
                    "max": int(sizes.max()),
                },
                reconstruction_error=round(error, 6),
                feasibility=report,
                suppressed=int((~keep).sum()),
                group_column=GROUP_COLUMN,
                merged=merges,
            ),
            linked=LinkedTable(table=st, group_column=GROUP_COLUMN),
        )
