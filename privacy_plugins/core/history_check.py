"""The gate's composition check: a candidate release measured against the release history.

Under the threat model of ``docs/composition.md`` (the adversary keeps every release of the
history, knows a target's raw quasi-identifiers and may assume the target is in every
release whose classes cover them), each target's sensitive values are intersected over the
classes covering it in every kept release *and* in the candidate, and every sensitive model
of the release is judged on what is left (:meth:`PrivacyModel.intersection_at_risk`):

* distinct l-diversity: at least l distinct values left;
* frequency / entropy / recursive (c,l)-diversity: the variant's rule on the candidate's
  counts (summed over the candidate classes covering the target) restricted to the values
  left — the adversary's best estimate of the target's value from the new release, confined
  to what the history allows;
* personalized leakage (one bound, or a bound column in the targets): the most frequent
  value left holds at most the record's bound of those counts (whatever the record's own value);
* k-anonymity, t-closeness, δ-presence, k-map and the risk models are not judged here: they
  hold per release (published classes are not linkable record by record); they are listed as
  unchecked in the result.

Only targets the candidate covers are judged: a candidate that covers nobody's values tells
nothing new about them. Work is done per distinct raw QI combination (what a SQL ``GROUP BY``
returns, passed with ``count_column``), never per record in Python.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.composition import covering_sets
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.history import COUNT, ReleaseHistory, class_signature
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["CompositionResult", "ModelComposition", "composition_check"]


@dataclass(frozen=True)
class ModelComposition:
    """One sensitive model judged over the intersections. Counts only.

    Attributes:
        model: the model as text.
        records_at_risk: targets covered by the candidate whose intersection misses the model.
        smallest: the fewest distinct values left to any judged target (``None``: none judged).
        already_at_risk: judged targets the history alone already leaves fewer than the model's
            minimum of distinct values (:attr:`PrivacyModel.minimum_class_size`); they are at risk
            only when the candidate narrows their values further.
    """

    model: str
    records_at_risk: int
    smallest: int | None
    already_at_risk: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "model": self.model,
            "records_at_risk": self.records_at_risk,
            "smallest": self.smallest,
            "already_at_risk": self.already_at_risk,
        }


@dataclass(frozen=True, eq=False)
class CompositionResult:
    """The candidate against the history: per model, the records at risk. Counts only.

    Attributes:
        passed: no judged target is at risk under any model.
        records: targets (records of the source, counted with their multiplicity).
        judged: targets the candidate covers (the others learn nothing new from it).
        records_at_risk: targets at risk under at least one model.
        models: one entry per judged model.
        unchecked: the models not defined over an intersection (they hold per release).
        releases_compared: the history's releases compared with the candidate.
        at_risk: boolean mask over the targets' rows (a record, or a combination with a count).
    """

    passed: bool
    records: int
    judged: int
    records_at_risk: int
    models: tuple[ModelComposition, ...]
    unchecked: tuple[str, ...]
    releases_compared: int
    at_risk: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready counts; never a value."""
        return {
            "passed": self.passed,
            "records": self.records,
            "judged": self.judged,
            "records_at_risk": self.records_at_risk,
            "releases_compared": self.releases_compared,
            "models": [model.to_dict() for model in self.models],
            "unchecked": list(self.unchecked),
        }

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        worst = ", ".join(f"{m.model}: {m.records_at_risk} at risk (smallest {m.smallest})" for m in self.models)
        return (
            f"composition check against {self.releases_compared} earlier releases {verdict}: "
            f"{self.records_at_risk} of {self.records} records at risk; {worst or 'no sensitive model judged'}"
        )


def composition_check(
    targets: pd.DataFrame,
    candidate: pd.DataFrame,
    history: ReleaseHistory,
    models: Sequence[PrivacyModel],
    *,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    count_column: Hashable | None = None,
    memo: dict[Hashable, Any] | None = None,
) -> CompositionResult:
    """Judge every sensitive model of a release on each target's intersection over history + candidate.

    Args:
        targets: the raw source: the history's QI columns (and a bound column when a model reads
            one); one row per record, or per distinct combination with ``count_column``.
        candidate: the new release as published rows, or its class signature (with ``__count``).
        history: the kept earlier releases (may be empty: then the candidate alone is judged).
        models: the release's models; those not defined over an intersection are listed as unchecked.
        hierarchies: per QI, the hierarchy the releases generalize along (coverage rule 3).
        count_column: records per row of ``targets`` (``None``: one each).
        memo: an empty dict to pass again with the *same* targets, history and hierarchies (and
            other candidates): the history's part is then computed once.

    Raises:
        UnknownColumnError: a QI or a column a model reads is missing (targets or candidate).
        ConfigurationError: a model's sensitive attribute is not kept in the history, or bad counts.

    Example:
        >>> from privacy_plugins.core.history import PublishedRelease
        >>> from privacy_plugins.core.models import DistinctLDiversity
        >>> source = pd.DataFrame({"age": [21, 22, 23, 24], "disease": ["flu", "hiv", "flu", "cold"]})
        >>> first = pd.DataFrame({"age": ["[21-22]"] * 2 + ["[23-24]"] * 2, "disease": source["disease"]})
        >>> history = ReleaseHistory("h", ("age",), ("disease",)).appended(
        ...     PublishedRelease("r1", "2026-01-01T00:00:00Z", "f", {}, class_signature(first, ["age"], ["disease"]))
        ... )
        >>> second = pd.DataFrame({"age": ["[21-23]"] * 3 + ["24"], "disease": source["disease"]})
        >>> result = composition_check(source, second, history, [DistinctLDiversity("disease", 2)])
        >>> result.passed, result.records_at_risk, result.at_risk.tolist()
        (False, 2, [False, False, True, True])
    """
    qis = list(history.quasi_identifiers)
    _require(targets, qis, "the targets")
    _require(candidate, qis, "the candidate")
    weights = np.ones(len(targets), dtype=np.int64)
    if count_column is not None:
        _require(targets, [count_column], "the targets")
        weights = pd.to_numeric(targets[count_column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if np.isnan(weights).any() or (weights < 0).any():
            raise ConfigurationError(f"count_column {count_column!r} must hold record counts >= 0")
        weights = weights.astype(np.int64)
    judged_models = [m for m in models if m.sensitive_attribute is not None]
    unchecked = [str(m) for m in models if m.sensitive_attribute is None]
    extra = [
        column
        for model in judged_models
        for column in model.columns
        if column != model.sensitive_attribute
        and column not in qis
        and column not in model.derived_columns(targets.iloc[:0])  # computed from the QIs, not read
    ]
    _require(targets, extra, "the targets")
    keys = list(dict.fromkeys([*qis, *extra]))
    group_of_row = targets.groupby(keys, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    n_groups = int(group_of_row.max()) + 1 if len(group_of_row) else 0
    first_row = np.full(n_groups, len(targets), dtype=np.int64)
    np.minimum.at(first_row, group_of_row, np.arange(len(targets), dtype=np.int64))
    groups = targets.iloc[first_row].reset_index(drop=True)
    group_weight = np.bincount(group_of_row, weights=weights, minlength=n_groups).astype(np.int64)
    combo_of_group = groups.groupby(qis, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    combos = groups.iloc[np.unique(combo_of_group, return_index=True)[1]].reset_index(drop=True)
    per_attribute: dict[Hashable, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    at_risk_group = np.zeros(n_groups, dtype=bool)
    judged_group = np.zeros(n_groups, dtype=bool)
    results: list[ModelComposition] = []
    for model in judged_models:
        attribute = model.sensitive_attribute
        if attribute not in history.sensitive_attributes and len(history):
            raise ConfigurationError(
                f"{model} reads {attribute!r}, which the release history {history.name!r} does not keep"
            )
        _require(candidate, [attribute], "the candidate")
        if attribute not in per_attribute:
            per_attribute[attribute] = _intersections(combos, candidate, history, qis, attribute, hierarchies, memo)
        left, new_counts, new_covered, earlier = per_attribute[attribute]
        counts = np.where(left, new_counts, 0.0)[combo_of_group]
        covered = new_covered[combo_of_group]
        bounds = model.leakage_bounds(groups)
        verdict = model.intersection_at_risk(counts, bounds)
        if verdict is None:
            unchecked.append(str(model))
            continue
        judged_group |= covered
        distinct = left.sum(axis=1)[combo_of_group]
        before = earlier[combo_of_group]
        # The history alone already leaves fewer values than the model needs (e.g. a newcomer covered
        # by earlier classes she was never in): no release can repair that; one that narrows it further
        # is still refused.
        already = covered & (before < model.minimum_class_size)
        risky = covered & np.where(already, distinct < before, np.asarray(verdict, dtype=bool))
        at_risk_group |= risky
        results.append(
            ModelComposition(
                model=str(model),
                records_at_risk=int(group_weight[risky].sum()),
                smallest=int(distinct[covered].min()) if covered.any() else None,
                already_at_risk=int(group_weight[already].sum()),
            )
        )
    at_risk = at_risk_group[group_of_row] if len(group_of_row) else np.zeros(0, dtype=bool)
    return CompositionResult(
        passed=not bool(at_risk_group.any()),
        records=int(weights.sum()),
        judged=int(group_weight[judged_group].sum()),
        records_at_risk=int(group_weight[at_risk_group].sum()),
        models=tuple(results),
        unchecked=tuple(unchecked),
        releases_compared=len(history),
        at_risk=at_risk,
    )


def _intersections(
    combos: pd.DataFrame,
    candidate: pd.DataFrame,
    history: ReleaseHistory,
    qis: Sequence[Hashable],
    attribute: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    memo: dict[Hashable, tuple[pd.Index, np.ndarray, np.ndarray]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per combination: what every release leaves, the candidate's counts, coverage, the history's count.

    The last is how many values the history alone leaves (int max when no kept release covers it).
    The history's part depends only on the targets and the history: ``memo`` keeps it across calls
    (a suppression loop re-checks ever smaller candidates against the same targets).
    """
    past = None if memo is None else memo.get(attribute)
    if past is None:
        releases = [_project(signature, qis, attribute) for signature in history.signatures()]
        if releases:
            sets = covering_sets(combos, releases, qis, attribute, hierarchies)
            past = (sets.labels, np.logical_and.reduce(sets.held), np.logical_or.reduce(sets.covered))
        else:
            past = (pd.Index([], dtype=object), np.ones((len(combos), 0), dtype=bool), np.zeros(len(combos), bool))
        if memo is not None:
            memo[attribute] = past
    values, earlier, any_cover = past
    new = covering_sets(
        combos, [_project(candidate, qis, attribute)], qis, attribute, hierarchies, with_counts=True, count_column=COUNT
    )
    assert new.counts is not None
    union = values.append(new.labels[~new.labels.isin(values)])
    position = union.get_indexer(new.labels)
    held = np.zeros((len(combos), len(union)), dtype=bool)
    held[:, : len(values)] = earlier
    held[:, len(values) :] = ~any_cover[:, None]  # values no kept release covering her published
    covered = new.covered[0]
    candidate_held = np.ones((len(combos), len(union)), dtype=bool)
    candidate_held[covered] = False
    candidate_held[:, position] = new.held[0]
    counts = np.zeros((len(combos), len(union)))
    counts[:, position] = new.counts[0]
    before = np.where(any_cover, earlier.sum(axis=1), np.iinfo(np.int64).max)
    return held & candidate_held, counts, covered, before


def _require(frame: pd.DataFrame, columns: Sequence[Hashable], what: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise UnknownColumnError(f"{what} lack(s) column(s) {missing!r}")


def _project(table: pd.DataFrame, qis: Sequence[Hashable], attribute: Hashable) -> pd.DataFrame:
    """A release's signature on one sensitive attribute (rows summed per class and value)."""
    if COUNT not in table.columns:
        return class_signature(table, qis, [attribute])
    keys = [*qis, attribute]
    return table.groupby(keys, dropna=False, sort=False, as_index=False)[COUNT].sum()
