"""Mondrian multidimensional partitioning (local recoding), strict and relaxed, for any models.

The table is split top-down (:mod:`privacy_plugins.core.anonymize.partition_split`):
each partition is cut at the median of its widest quasi-identifier, and a cut is
kept only when *both halves satisfy every requested model*; a partition with no
allowed cut on any QI is published as one group.

* **Widths.** A numeric QI without a hierarchy has width (max − min)/(max − min of the
  table); a QI with a hierarchy has width (leaves under the lowest common ancestor
  (LCA) of its leaves − 1)/(|D| − 1). Both are exactly the NCP cost the partition
  would publish, so the greedy choice always attacks the largest loss. Ties between
  equally wide QIs are broken by ``numpy.random.default_rng(seed)``: a deterministic
  utility-greedy choice is attackable (arXiv 2509.03350), a seeded one is repeatable.
* **Codes.** Numeric values are coded by their sorted distinct values; hierarchical
  ones by their leaf's position in the hierarchy's leaf order, regrouped so that
  siblings are adjacent, hence every node covers a contiguous run of codes. A QI with
  a hierarchy uses it even when numeric (it is published as LCA labels); a categorical
  QI without one is an error.
* **Strict / relaxed.** Strict sends every record whose code is ≤ the (lower) median
  left, so equal values never straddle the cut ([1,2,3,3,4,5] → [1,2,3,3] [4,5]);
  relaxed puts exactly ⌊m/2⌋ records left and divides the records holding the boundary
  value at random ([1,2,3] [3,4,5]). Relaxed divides values only on numeric (range)
  QIs; on a hierarchical QI its cut is strict, because a leaf on both sides raises both
  halves' LCA (on Adult, k = 10, dividing leaves too gave NCP 0.283 against 0.074).
* **Models.** Every round builds one :class:`EquivalenceClasses` over the *whole* table:
  one class per candidate half, plus one class for every row not being split. Each
  model's ``violating_classes`` gives the verdict; the extra class is ignored. Because
  all rows are present, a model that compares a class with the table (t-closeness)
  compares it with the whole table's distribution, as in the published release.
* **Published values.** Ranges ``"[a-b]"`` (``"a"`` when a = b) for numeric QIs and the
  LCA's label for hierarchical ones. Two partitions may publish the same labels (two
  halves of a sibling group share their parent); the release then has one class for
  both, which every model monotone under generalization accepts, and the re-check says so.
* **Suppression.** Mondrian suppresses nothing for a model whose failures only a whole
  class's suppression repairs: every partition satisfies the models when the whole table
  does, and when the whole table does not, nothing can be released by partitioning and
  :class:`InfeasibleAnonymizationError` is raised. A model a few records' removal repairs
  (:attr:`~privacy_plugins.core.models.base.PrivacyModel.repaired_by_removal`: the history
  model's share bound, issue 26) is judged on each half *with* its removals
  (:mod:`~privacy_plugins.core.anonymize.lattice_repair`): a cut is kept when its halves pass
  every model once those records are out (or its partition fails even so: cutting may mend
  it) and the removals the cuts add stay within ``suppression_limit``; the published classes
  (partitions with equal labels are one) are judged again and those records left out, each
  class keeping the labels its cut was judged on. Without such a model ``suppressed`` is 0.

References:
    LeFevre K., DeWitt D., Ramakrishnan R. Mondrian Multidimensional K-Anonymity. ICDE 2006.
    Xu J., Wang W., Pei J. et al. Utility-based anonymization using local recoding. KDD 2006 (NCP).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal, NamedTuple, cast

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import (
    AnonymizationDetails,
    AnonymizationRequest,
    AnonymizationResult,
    AnonymizedTable,
)
from privacy_plugins.core.anonymize.lattice_repair import left_out
from privacy_plugins.core.anonymize.partition_split import Dimension, partition_rows
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags, anonymize
from privacy_plugins.core.frame import EncodedColumn
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy, as_labels
from privacy_plugins.core.history_boxes import BoxRule, box_rules
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

__all__ = ["MONDRIAN_MODES", "MondrianAnonymizer", "PartitionDetails", "anonymize_mondrian", "distinct_as_keys"]

MONDRIAN_MODES = ("strict", "relaxed")


@dataclass(frozen=True)
class PartitionDetails(AnonymizationDetails):
    """What Mondrian did: the result's algorithm-specific ``details``.

    Attributes:
        mode: ``"strict"`` or ``"relaxed"``.
        seed: the seed of the tie-breaking generator (same seed, same release).
        n_partitions: partitions found (published classes can be fewer: equal labels merge).
        n_classes: equivalence classes of the published table.
        splits: per QI, how many cuts were made on it.
        encodings: per QI, ``"range"`` (numeric) or ``"hierarchy"`` (LCA labels).
        rounds: breadth-first rounds of the partitioner.
        candidates_checked: candidate cuts whose halves were checked against the models.
    """

    kind: ClassVar[str] = "partition"

    mode: str
    seed: int
    n_partitions: int
    n_classes: int
    splits: Mapping[Hashable, int]
    encodings: Mapping[Hashable, str]
    rounds: int
    candidates_checked: int

    def headline(self) -> str:
        """Partitions and the classes they publish."""
        return (
            f"{self.n_partitions:,} partitions ({self.n_classes:,} published classes), {self.mode} cuts "
            f"in {self.rounds:,} rounds"
        )

    def summary_rows(self, seconds: float) -> list[tuple[str, str]]:
        """Partitions and classes, the mode and seed, and the cuts made on each QI."""
        rows = [
            ("partitions / classes", f"{self.n_partitions:,} / {self.n_classes:,} in {seconds:.2f} s"),
            ("mode / seed", f"{self.mode} / {self.seed}"),
        ]
        splits = ", ".join(f"{name}={count}" for name, count in self.splits.items())
        return rows + ([("cuts per quasi-identifier", splits)] if splits else [])


def _dimension(
    series: pd.Series, hierarchy: Hierarchy | None, domain: tuple[float, float] | None = None
) -> tuple[Dimension, np.ndarray]:
    """Code one QI; also return the text label of every code (numeric: the value as text).

    ``domain``: a numeric QI's (min, max) over the whole table when ``series`` is one block of it.
    """
    column = series.name
    if hierarchy is not None:
        if not isinstance(hierarchy, Hierarchy):
            raise TypeError(f"hierarchies[{column!r}] must be a Hierarchy, got {type(hierarchy).__name__}")
        # Look up each distinct value once (the hierarchy's own lookup formats every row).
        row_codes, uniques = pd.factorize(series, use_na_sentinel=True)
        if (row_codes < 0).any():
            hierarchy.leaf_codes(series)  # raises, naming the missing values
        leaf = hierarchy.leaf_codes(pd.Series(uniques, dtype=series.dtype, name=column))[row_codes]
        # Siblings adjacent: order leaves by their path from the top, then by leaf order.
        order = np.lexsort((np.arange(hierarchy.n_leaves), *hierarchy.codes[1:]))
        position = np.empty_like(order)
        position[order] = np.arange(order.shape[0])
        nodes = hierarchy.codes[:, order]
        dimension = Dimension(codes=position[leaf], size=hierarchy.n_leaves, hierarchy=hierarchy, nodes=nodes)
        return dimension, hierarchy.leaves[order]
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise HierarchyError(
            f"quasi-identifier {column!r} is not numeric and has no hierarchy; Mondrian publishes numeric "
            f"quasi-identifiers as ranges and generalizes the others along a hierarchy: give hierarchies[{column!r}]"
        )
    numbers = series.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(numbers).any():
        raise ConfigurationError(
            f"quasi-identifier {column!r} has {int(np.isnan(numbers).sum())} missing values, which cannot be "
            "published as a range; fill them or give a hierarchy with a leaf for them"
        )
    values, codes = np.unique(series.to_numpy(), return_inverse=True)
    labels = as_labels(pd.Series(values)).to_numpy(dtype=object)
    dimension = Dimension(codes=codes.astype(np.int64).ravel(), size=values.shape[0], values=values, domain=domain)
    return dimension, labels


def _spans(partition_of_row: np.ndarray, n_partitions: int, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest code of every partition."""
    low = np.full(n_partitions, np.iinfo(np.int64).max, dtype=np.int64)
    high = np.full(n_partitions, -1, dtype=np.int64)
    np.minimum.at(low, partition_of_row, codes)
    np.maximum.at(high, partition_of_row, codes)
    return low, high


def _labels(dimension: Dimension, code_labels: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Published text of every partition: ``"[a-b]"`` / ``"a"`` ranges or the LCA's label."""
    if dimension.hierarchy is not None:
        assert dimension.nodes is not None
        level = dimension.lowest_common_level(low, high)
        node = dimension.nodes[level, low]
        out = np.empty(low.shape[0], dtype=object)
        for lv in np.unique(level):
            here = level == lv
            out[here] = dimension.hierarchy.labels[lv][node[here]]
        return out
    pairs, inverse = np.unique(np.stack([low, high], axis=1), axis=0, return_inverse=True)
    text = np.array(
        [code_labels[a] if a == b else f"[{code_labels[a]}-{code_labels[b]}]" for a, b in pairs.tolist()],
        dtype=object,
    )
    return text[inverse.ravel()]


def _halves_breaking(
    rules: Sequence[BoxRule],
    coded: Sequence[tuple[Dimension, np.ndarray]],
    quasi_identifiers: Sequence[Hashable],
    frame: pd.DataFrame,
    class_of_row: np.ndarray,
    judged: np.ndarray,
) -> np.ndarray:
    """Per candidate cut: a half's box (its labels as they would be published) and values break one of ``rules``.

    Only the ``judged`` candidates are looked at (the others are refused anyway). A refused cut
    leaves the partition whole, as when a half misses a model; like the clustering algorithms'
    refused merges, what still breaks a rule is left to the release's suppression (c).
    """
    rows = np.flatnonzero(class_of_row < 2 * judged.shape[0])
    rows = rows[judged[class_of_row[rows] // 2]]
    ids, halves = pd.factorize(class_of_row[rows], sort=True)
    n = len(halves)
    labels = pd.DataFrame(
        {
            qi: _labels(dimension, text, *_spans(ids, n, dimension.codes[rows]))
            for qi, (dimension, text) in zip(quasi_identifiers, coded, strict=True)
        }
    )
    bad = np.zeros(n, dtype=bool)
    for rule in rules:
        bad |= rule.breaks(labels, rule.held(frame[rule.attribute].to_numpy()[rows], ids, n))
    broken = np.zeros(judged.shape[0], dtype=bool)
    broken[np.asarray(halves)[bad] // 2] = True
    return broken


class PublishedGroups(NamedTuple):
    """What :func:`publish_groups` gives: the table, its utility and classes, and its QIs' codes."""

    table: pd.DataFrame
    utility: UtilityMetrics
    classes: EquivalenceClasses
    #: per QI, ``(codes, labels)`` with ``labels[codes]`` the published column (``AnonymizedTable.qi_codes``);
    #: ``None`` when a published label is missing or labels fold (:func:`distinct_as_keys`): object columns then
    qi_codes: dict[Hashable, tuple[np.ndarray, np.ndarray]] | None


def small_codes(codes: np.ndarray, n_values: int) -> np.ndarray:
    """``codes`` (in ``0..n_values-1``) in the narrowest signed integer type that holds them.

    A Categorical keeps its codes in that type anyway (the same thresholds as pandas, so it keeps
    these very codes, no copy); taking per-row codes from a small per-group array of it makes the
    per-row array small from the start (1 byte a row, not 8).
    """
    for dtype in (np.int8, np.int16, np.int32):
        if n_values < np.iinfo(dtype).max:
            return codes.astype(dtype, copy=False)
    return codes.astype(np.int64, copy=False)


def distinct_as_keys(labels: np.ndarray, n_distinct: int) -> bool:
    """Whether ``labels`` hold ``n_distinct`` values when ``1``, ``1.0`` and ``True`` count as different.

    Factorizing (and a Categorical's categories) folds labels that compare equal as Python keys into
    one, so a hand-built hierarchy with both ``1`` and ``True`` at one level would publish one for the
    other; its column is then spelled from the labels themselves (object). Text labels (every label
    a loaded or built hierarchy has, and every range) never fold: only other labels are looked at.
    """
    if pd.api.types.infer_dtype(labels, skipna=True) == "string":
        return True
    return len({(type(value), value) for value in labels.tolist()}) == n_distinct


def narrow(dimension: Dimension) -> Dimension:
    """``dimension`` with its codes in the narrowest integer type that holds them (:func:`small_codes`)."""
    return replace(dimension, codes=small_codes(dimension.codes, dimension.size))


def publish_groups(
    frame: pd.DataFrame,
    request: AnonymizationRequest,
    coded: Sequence[tuple[Dimension, np.ndarray]],
    group_of_row: np.ndarray,
    n_groups: int,
) -> PublishedGroups:
    """Publish local recoding: each group's QIs as its range / LCA label; the utility and the published classes.

    Shared by every algorithm that assigns rows to groups (Mondrian's partitions, clusters):
    identifiers dropped, QIs as text, NCP from each group's span.

    Memory (1M rows): each QI is labelled per *group*, its distinct labels factorized, and the
    column published as a Categorical over those codes (1–4 bytes a row; :func:`~.base.verify`
    checks the codes spell the column, groups by them and hands users the object labels). Each
    QI's per-row cost is summed as soon as it is made, so one cost array is alive at a time.
    """
    qis = request.quasi_identifiers
    identifiers = set(request.roles.identifiers)
    columns: dict[Hashable, pd.Series] = {}
    qi_codes: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}
    parts: list[tuple[np.ndarray, int]] = []
    totals: list[float] = []
    missing = False
    folding: dict[Hashable, np.ndarray] = {}  # QIs whose labels fold (see distinct_as_keys): each group's own label
    for q, (dimension, code_labels) in zip(qis, coded, strict=True):
        low, high = _spans(group_of_row, n_groups, dimension.codes)
        group_labels = _labels(dimension, code_labels, low, high)
        per_group, labels = pd.factorize(group_labels, use_na_sentinel=False)
        labels = np.asarray(labels, dtype=object)
        if not distinct_as_keys(group_labels, labels.shape[0]):
            folding[q] = group_labels
        del group_labels
        row_codes = small_codes(per_group, labels.shape[0])[group_of_row]
        missing = missing or bool(pd.isna(labels).any()) or bool(folding)
        qi_codes[q] = (row_codes, labels)
        parts.append((row_codes, labels.shape[0]))
        # As ``ncp`` sums it (every row's cost, in row order): the same float, one QI's costs alive at a time.
        totals.append(float(dimension.widths(low, high)[group_of_row].sum()))
    for q, (row_codes, labels) in qi_codes.items():
        if q in folding:
            columns[q] = pd.Series(folding[q][group_of_row], index=frame.index, name=q, dtype=object, copy=False)
        elif missing:  # a missing label (a hierarchy may have one) cannot be a category: object labels, as before
            columns[q] = pd.Series(labels[row_codes], index=frame.index, name=q, dtype=object, copy=False)
        else:
            values = pd.Categorical.from_codes(row_codes, categories=pd.Index(labels, dtype=object), validate=False)
            columns[q] = pd.Series(values, index=frame.index, name=q, copy=False)
    # One constructor over Series (copy=False: no consolidation, no copy of the other columns).
    published = pd.DataFrame(
        {c: columns[c] if c in columns else frame[c] for c in frame.columns if c not in identifiers},
        index=frame.index,
        copy=False,
    )
    published.columns = frame.columns.drop(list(identifiers)) if identifiers else frame.columns
    classes = EquivalenceClasses.from_codes(published, tuple(qis), parts)
    table_ncp = sum(totals) / (float(len(frame)) * len(qis))
    utility = UtilityMetrics(
        ncp=table_ncp,
        lm=table_ncp * len(qis),
        discernibility=discernibility(classes.sizes, 0, len(frame)),
        c_avg=average_class_size(classes.sizes, request.minimum_class_size),
    )
    return PublishedGroups(published, utility, classes, None if missing else qi_codes)


@dataclass(frozen=True)
class MondrianAnonymizer:
    """Mondrian multidimensional partitioning, registered as ``"mondrian"``; option ``mode`` strict|relaxed."""

    #: Checks every model on each candidate, so it can promise any of them (the release spec reads this);
    #: infeasible models raise; it suppresses only the records a model repaired by removal names.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags()
    name: str = "mondrian"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption(
            "mode",
            str,
            "strict",
            choices=MONDRIAN_MODES,
            help="strict: equal values never straddle a cut; relaxed: halves as balanced as possible",
            flag="mondrian-mode",
        ),
    )

    def run(self, request: AnonymizationRequest, *, mode: str = "strict") -> AnonymizedTable:
        """Partition until no cut keeps every model in both halves; publish ranges / LCA labels."""
        frame, models = request.table.reset_index(drop=True), request.models
        qis = request.quasi_identifiers
        # One copy of each QI's codes, 1–4 bytes a row (the partitioner and publishing only index with them).
        coded = [(narrow(d), labels) for d, labels in (_dimension(frame[q], request.hierarchies.get(q)) for q in qis)]
        dimensions = [d for d, _ in coded]

        # The models read the sensitive (and bound) columns of the whole table; each column
        # is encoded once and shared by every round's equivalence classes.
        model_frame = frame[list(request.model_columns)]
        encodings: dict[tuple[Hashable, bool], EncodedColumn] = {}

        rules = box_rules(models)
        # A model a few records' removal repairs (the history model's share bound): a half it fails may still be
        # published without them (lattice_repair.py); ``spent`` is what the partitions so far leave out in all.
        removing = any(model.repaired_by_removal for model in models)
        spent = [0]

        def judged(class_of_row: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """Per class: it fails a model no removal repairs; it fails even with removals; the records left out."""
            classes = EquivalenceClasses.from_class_ids(model_frame, qis, class_of_row, n_classes, encodings=encodings)
            masks = [model.violating_classes(classes) for model in models]
            hard = np.zeros(n_classes, dtype=bool)
            for model, mask in zip(models, masks, strict=True):
                if not (removing and model.repaired_by_removal):
                    hard |= mask
            if not removing:
                return hard, hard, np.zeros(n_classes, dtype=np.int64)
            out = left_out(models, classes, masks, np.zeros(n_classes, dtype=bool))
            taken = np.bincount(classes.class_of_row[out.units], minlength=n_classes).astype(np.int64)
            return hard, out.whole, taken

        def allowed(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
            hard, soft, taken = judged(class_of_row, n_classes)
            pairs = slice(0, 2 * n_candidates)
            verdict = np.asarray(~hard[pairs].reshape(n_candidates, 2).any(axis=1), dtype=bool)
            if removing and verdict.any():
                # a half failing even with removals is refused unless its partition fails so too (cutting may mend it)
                parent = np.minimum(class_of_row // 2, n_candidates)
                _, parent_soft, before = judged(parent, n_candidates + int(n_classes > 2 * n_candidates))
                verdict &= ~soft[pairs].reshape(n_candidates, 2).any(axis=1) | parent_soft[:n_candidates]
            if rules and verdict.any():
                verdict &= ~_halves_breaking(rules, coded, qis, model_frame, class_of_row, verdict)
            if removing and verdict.any():
                # the halves' removals replace their partition's: a cut adding some must stay within the limit
                delta = taken[pairs].reshape(n_candidates, 2).sum(axis=1) - before[:n_candidates]
                delta = np.where(verdict, delta, 0)
                gain = int(delta[delta < 0].sum())
                rising = np.cumsum(np.where(delta > 0, delta, 0))
                verdict &= (delta <= 0) | (spent[0] + gain + rising <= request.max_suppressed)
                spent[0] += int(delta[verdict].sum())
            return verdict

        hard, _, whole_taken = judged(np.zeros(len(frame), dtype=np.int64), 1)
        if hard[0]:
            whole = EquivalenceClasses.from_class_ids(model_frame, qis, np.zeros(len(frame), dtype=np.int64), 1)
            for model in models:
                if model.violating_classes(whole).any():
                    raise InfeasibleAnonymizationError(
                        f"{model} does not hold even for the whole table as one class (observed "
                        f"{model.observed(whole):.4g}); no partitioning can satisfy it; relax the requirement"
                    )
        spent[0] = int(whole_taken[0])

        run = partition_rows(
            dimensions, allowed, mode=cast(Literal["strict", "relaxed"], mode), rng=np.random.default_rng(request.seed)
        )
        published, utility, classes, qi_codes = publish_groups(
            frame, request, coded, run.partition_of_row, run.n_partitions
        )
        suppressed = 0
        if removing:  # judged on the published classes (partitions with equal labels are one class)
            masks = [model.violating_classes(classes) for model in models]
            out = left_out(models, classes, masks, np.zeros(classes.n_classes, dtype=bool))
        if removing and out.units.any():
            published, utility, classes, qi_codes, suppressed = _without(published, utility, qi_codes, out.units, qis)
            if suppressed > request.max_suppressed:
                raise InfeasibleAnonymizationError(
                    f"Mondrian's partitions meet {', '.join(map(str, models))} only leaving out {suppressed} "
                    f"records, more than the limit allows ({request.max_suppressed})"
                )
        return AnonymizedTable(
            table=published,
            released=np.ones(len(published), dtype=bool),
            suppressed=suppressed,
            utility=utility,
            qi_codes=qi_codes,
            details=PartitionDetails(
                mode=mode,
                seed=request.seed,
                n_partitions=run.n_partitions,
                n_classes=classes.n_classes,
                splits=dict(zip(qis, run.splits, strict=True)),
                encodings={
                    q: "range" if d.hierarchy is None else "hierarchy" for q, d in zip(qis, dimensions, strict=True)
                },
                rounds=run.rounds,
                candidates_checked=run.candidates_checked,
            ),
        )


def _without(
    published: pd.DataFrame,
    utility: UtilityMetrics,
    qi_codes: dict[Hashable, tuple[np.ndarray, np.ndarray]] | None,
    left: np.ndarray,
    qis: Sequence[Hashable],
) -> tuple[pd.DataFrame, UtilityMetrics, EquivalenceClasses, dict[Hashable, tuple[np.ndarray, np.ndarray]] | None, int]:
    """The published rows but ``left`` ones; each class keeps its labels (the boxes the cuts were judged on).

    A removed record costs NCP 1; the others keep the table's mean (their classes' labels do not change).
    """
    keep = ~left
    table = published.loc[keep].reset_index(drop=True)
    codes = None if qi_codes is None else {q: (c[keep], labels) for q, (c, labels) in qi_codes.items()}
    classes = EquivalenceClasses.from_frame(table, list(qis))
    suppressed = int(left.sum())
    return table, with_left_out(utility, classes, suppressed, len(published), len(qis)), classes, codes, suppressed


def with_left_out(
    utility: UtilityMetrics, classes: EquivalenceClasses, suppressed: int, n: int, n_qis: int
) -> UtilityMetrics:
    """``utility`` of the published rows as a table of ``n`` records, ``suppressed`` of them left out at NCP 1."""
    table_ncp = (utility.ncp * (n - suppressed) + suppressed) / max(n, 1)
    return replace(
        utility,
        ncp=table_ncp,
        lm=table_ncp * n_qis,
        discernibility=discernibility(classes.sizes, suppressed, n),
    )


def anonymize_mondrian(
    table: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    suppression_limit: float = 0.0,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    insensitive: Sequence[Hashable] | None = None,
    seed: int = 0,
    mode: Literal["strict", "relaxed"] = "strict",
) -> AnonymizationResult:
    """Partition the table (Mondrian) until no cut keeps every model in both halves; publish ranges / LCAs.

    A shorthand for ``anonymize(..., algorithm="mondrian", mode=mode)``.

    Args:
        table: the raw table.
        quasi_identifiers: the columns to generalize: numeric ones without a hierarchy are
            published as ranges, the others need a hierarchy (published as LCA labels).
        models: the privacy models every published class must satisfy (any mix of k, the
            l-diversity variants, t-closeness against the whole table, personalized bounds).
        suppression_limit: in [0, 1); only the records a model repaired by removal names (the
            history model's share bound) are left out, within it; otherwise ``suppressed`` is 0.
        hierarchies: column → :class:`Hierarchy` (optional for numeric QIs).
        sensitive_attributes: sensitive columns besides those the models name.
        identifiers: direct identifiers, dropped from the output.
        insensitive: columns published unchanged (every column needs a role).
        seed: integer ≥ 0 seeding the tie-breaking generator.
        mode: ``"strict"`` (equal values never straddle a cut) or ``"relaxed"`` (halves as
            balanced as possible; records with the median value may be divided).

    Returns:
        An :class:`AnonymizationResult` with :class:`PartitionDetails`, re-measured on the
        output; rows in input order, QIs as text.

    Raises:
        ConfigurationError: bad parameters or roles; a numeric QI with missing values.
        HierarchyError: a non-numeric QI without a hierarchy, or a value not a leaf of its hierarchy.
        InfeasibleAnonymizationError: the whole table, as one class, already fails a model.
        VerificationError: the output failed the independent re-measurement (a bug;
            nothing must be published).

    Example:
        >>> import pandas as pd
        >>> from privacy_plugins.core.models import KAnonymity
        >>> df = pd.DataFrame({"age": [1, 2, 3, 3, 4, 5]})
        >>> anonymize_mondrian(df, quasi_identifiers=["age"], models=[KAnonymity(2)]).table["age"].tolist()
        ['[1-2]', '[1-2]', '3', '3', '[4-5]', '[4-5]']
        >>> relaxed = anonymize_mondrian(df, quasi_identifiers=["age"], models=[KAnonymity(2)], mode="relaxed")
        >>> sorted(relaxed.table["age"].tolist())
        ['[1-3]', '[1-3]', '[1-3]', '[3-5]', '[3-5]', '[3-5]']
    """
    return anonymize(
        table,
        algorithm="mondrian",
        quasi_identifiers=quasi_identifiers,
        models=models,
        suppression_limit=suppression_limit,
        hierarchies=hierarchies,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
        insensitive=insensitive,
        seed=seed,
        mode=mode,
    )
