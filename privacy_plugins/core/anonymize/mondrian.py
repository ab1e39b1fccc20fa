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
* **Suppression.** Mondrian never suppresses: every partition satisfies the models
  when the whole table does, and when the whole table does not, nothing can be released
  by partitioning and :class:`InfeasibleAnonymizationError` is raised. ``suppression_limit``
  is accepted for the common signature and validated; ``suppressed`` is always 0.

References:
    LeFevre K., DeWitt D., Ramakrishnan R. Mondrian Multidimensional K-Anonymity. ICDE 2006.
    Xu J., Wang W., Pei J. et al. Utility-based anonymization using local recoding. KDD 2006 (NCP).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationResult, VerificationError, summary_measures

# Private helpers of the full-domain anonymizer, shared on purpose: the same
# validation of roles/models/limits and the same list of columns the models read.
from privacy_plugins.core.anonymize.full_domain import _model_columns, _validate
from privacy_plugins.core.anonymize.partition_split import Dimension, partition_rows
from privacy_plugins.core.frame import EncodedColumn
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy, as_labels
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility, ncp
from privacy_plugins.core.models import KAnonymity, PrivacyModel
from privacy_plugins.core.parameters import check_integer
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

__all__ = ["MONDRIAN_MODES", "MondrianResult", "PartitionDetails", "anonymize_mondrian"]

MONDRIAN_MODES = ("strict", "relaxed")


@dataclass(frozen=True)
class PartitionDetails:
    """What Mondrian did (to become the result's algorithm-specific ``details``).

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

    mode: str
    seed: int
    n_partitions: int
    n_classes: int
    splits: Mapping[Hashable, int]
    encodings: Mapping[Hashable, str]
    rounds: int
    candidates_checked: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return to_jsonable(self)


@dataclass(frozen=True)
class MondrianResult(AnonymizationResult):
    """An :class:`AnonymizationResult` with Mondrian's :class:`PartitionDetails` (``levels`` is ``None``)."""

    details: PartitionDetails | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report, with the partition details."""
        report = super().to_dict()
        report["details"] = self.details.to_dict() if self.details is not None else None
        return report


def _dimension(series: pd.Series, hierarchy: Hierarchy | None) -> tuple[Dimension, np.ndarray]:
    """Code one QI; also return the text label of every code (numeric: the value as text)."""
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
            "quasi-identifiers as ranges and generalizes the others along a hierarchy: give hierarchies[{column!r}]"
        )
    numbers = series.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(numbers).any():
        raise ConfigurationError(
            f"quasi-identifier {column!r} has {int(np.isnan(numbers).sum())} missing values, which cannot be "
            "published as a range; fill them or give a hierarchy with a leaf for them"
        )
    values, codes = np.unique(series.to_numpy(), return_inverse=True)
    labels = as_labels(pd.Series(values)).to_numpy(dtype=object)
    return Dimension(codes=codes.astype(np.int64).ravel(), size=values.shape[0], values=values), labels


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


def anonymize_mondrian(
    table: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    suppression_limit: float = 0.0,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    seed: int = 0,
    mode: Literal["strict", "relaxed"] = "strict",
) -> MondrianResult:
    """Partition the table (Mondrian) until no cut keeps every model in both halves; publish ranges / LCAs.

    Args:
        table: the raw table.
        quasi_identifiers: the columns to generalize: numeric ones without a hierarchy are
            published as ranges, the others need a hierarchy (published as LCA labels).
        models: the privacy models every published class must satisfy (any mix of k, the
            l-diversity variants, t-closeness against the whole table, personalized bounds).
        suppression_limit: in [0, 1); accepted for the common anonymizer signature, but
            Mondrian never suppresses (``suppressed`` is 0).
        hierarchies: column → :class:`Hierarchy` (optional for numeric QIs).
        sensitive_attributes: sensitive columns besides those the models name.
        identifiers: direct identifiers, dropped from the output.
        seed: integer ≥ 0 seeding the tie-breaking generator.
        mode: ``"strict"`` (equal values never straddle a cut) or ``"relaxed"`` (halves as
            balanced as possible; records with the median value may be divided).

    Returns:
        A :class:`MondrianResult` (an :class:`AnonymizationResult` with ``levels=None`` and
        :class:`PartitionDetails`) whose models were re-measured on the output; rows in
        input order, QIs as text.

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
    started = time.perf_counter()
    if mode not in MONDRIAN_MODES:
        raise ConfigurationError(f"mode must be one of {list(MONDRIAN_MODES)}, got {mode!r}")
    seed = check_integer(seed, name="seed", minimum=0)
    frame, roles, _ = _validate(
        table,
        quasi_identifiers=quasi_identifiers,
        models=models,
        identifiers=identifiers,
        sensitive_attributes=() if sensitive_attributes is None else sensitive_attributes,
        suppression_limit=suppression_limit,
        algorithm="optimal",  # _validate checks a full-domain algorithm name; unused here
        suppressed_rows="remove",
    )
    hierarchies = {} if hierarchies is None else hierarchies
    models = tuple(models)
    qis = tuple(roles.quasi_identifiers)
    coded = [_dimension(frame[q], hierarchies.get(q)) for q in qis]
    dimensions = [d for d, _ in coded]

    # The models read the sensitive (and bound) columns of the whole table; each column
    # is encoded once and shared by every round's equivalence classes.
    model_frame = frame[_model_columns(models)].reset_index(drop=True)
    encodings: dict[tuple[Hashable, bool], EncodedColumn] = {}

    def violating(class_of_row: np.ndarray, n_classes: int) -> np.ndarray:
        classes = EquivalenceClasses.from_class_ids(model_frame, qis, class_of_row, n_classes, encodings=encodings)
        bad = np.zeros(n_classes, dtype=bool)
        for model in models:
            bad |= model.violating_classes(classes)
        return bad

    def allowed(class_of_row: np.ndarray, n_classes: int, n_candidates: int) -> np.ndarray:
        bad = violating(class_of_row, n_classes)[: 2 * n_candidates]
        return np.asarray(~bad.reshape(n_candidates, 2).any(axis=1), dtype=bool)

    whole = EquivalenceClasses.from_class_ids(model_frame, qis, np.zeros(len(frame), dtype=np.int64), 1)
    for model in models:
        if model.violating_classes(whole).any():
            raise InfeasibleAnonymizationError(
                f"{model} does not hold even for the whole table as one class (observed "
                f"{model.observed(whole):.4g}); no partitioning can satisfy it; relax the requirement"
            )

    run = partition_rows(dimensions, allowed, mode=mode, rng=np.random.default_rng(seed))
    published = frame.drop(columns=list(roles.identifiers)).reset_index(drop=True)
    costs = []
    for q, (dimension, code_labels) in zip(qis, coded, strict=True):
        low, high = _spans(run.partition_of_row, run.n_partitions, dimension.codes)
        text = _labels(dimension, code_labels, low, high)
        published[q] = pd.Series(text[run.partition_of_row], index=published.index, dtype=object)
        costs.append(dimension.widths(low, high)[run.partition_of_row])

    # Independent re-check: group the published labels afresh and measure every model.
    recheck = EquivalenceClasses.from_frame(published, qis)
    checked = tuple(model.evaluate(recheck) for model in models)
    k_target = max((m.k for m in models if isinstance(m, KAnonymity)), default=1)
    table_ncp = ncp(costs, np.zeros(len(frame), dtype=bool))
    result = MondrianResult(
        algorithm=f"mondrian-{mode}",
        table=published,
        quasi_identifiers=qis,
        levels=None,
        rows_in=len(frame),
        rows_out=len(published),
        suppressed=0,
        dropped_identifiers=tuple(roles.identifiers),
        utility=UtilityMetrics(
            ncp=table_ncp,
            lm=table_ncp * len(qis),
            discernibility=discernibility(recheck.sizes, 0, len(frame)),
            c_avg=average_class_size(recheck.sizes, k_target),
        ),
        models=checked,
        measures={"k": float(recheck.sizes.min()), **summary_measures(tuple(models), checked)},
        seconds=time.perf_counter() - started,
        details=PartitionDetails(
            mode=mode,
            seed=seed,
            n_partitions=run.n_partitions,
            n_classes=recheck.n_classes,
            splits=dict(zip(qis, run.splits, strict=True)),
            encodings={
                q: "range" if d.hierarchy is None else "hierarchy" for q, d in zip(qis, dimensions, strict=True)
            },
            rounds=run.rounds,
            candidates_checked=run.candidates_checked,
        ),
    )
    if not result.passed:
        failed = [r.model for r in checked if not r.passed]
        raise VerificationError(f"the anonymized table failed the re-check of {failed}; nothing may be published")
    return result
