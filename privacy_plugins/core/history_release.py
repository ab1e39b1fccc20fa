"""Releases that keep the history private: re-apply, history-aware anonymization, suppression.

Issue 26's three ways to a candidate that passes the gate's composition check
(:func:`~privacy_plugins.core.history_check.composition_check`), tried in this order by
:func:`release_with_history`:

(a) **re-apply** the last release's transformation to the grown table (:func:`reapply`):
    full-domain releases recode every record at the stored levels; local recoding
    (Mondrian, clustering) recodes each record to the labels of a published class that covers
    it (the largest; the all-``*`` class of marked suppressed rows is not a recoding). Records no
    class covers are suppressed within the limit. With insertions only, a class keeps every
    value it had, so what earlier releases left of its records is kept too.
(b) **anonymize with the history as a model**
    (:class:`~privacy_plugins.core.models.HistoryDiversity`, one per sensitive attribute, with
    the largest l any model of that attribute needs as distinct values: see :func:`history_models`).
(c) **suppress** the records still at risk (:func:`suppress_at_risk`), within the suppression
    limit, re-measuring the remaining classes; classes that then miss a model are suppressed too.

The candidate of (a) or (b) goes through (c) when the composition check still finds records
at risk (frequency / entropy / recursive / leakage rules over counts, or suppressed records
another class covers). Nothing here prints or reports a value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize import anonymize, get_anonymizer, tags_of
from privacy_plugins.core.anonymize.registry import DEFAULT_ALGORITHM, account_for_columns, with_derived_columns
from privacy_plugins.core.composition import STAR, covering_sets
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory, linked_signature
from privacy_plugins.core.history_boxes import BoxRule, DomainGuard, box_rules
from privacy_plugins.core.history_check import CompositionResult, composition_check
from privacy_plugins.core.history_share import share_excess
from privacy_plugins.core.history_signatures import signature_breaks
from privacy_plugins.core.models import HistoryDiversity, PrivacyModel, bind_hierarchies
from privacy_plugins.core.parameters import suppression_budget
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

__all__ = [
    "HistoryRelease",
    "Reapplied",
    "domain_needs",
    "history_models",
    "reapply",
    "release_with_history",
    "suppress_at_risk",
]

#: The private row-id column carried through an anonymizer to map published rows back to records.
_ROW = "__history_row"


@dataclass(frozen=True, eq=False)
class Reapplied:
    """A table recoded by an earlier release's transformation.

    Attributes:
        table: the input's rows with their QIs replaced by published labels (uncovered rows removed).
        rows: for each row of ``table``, its position in the input.
        uncovered: input rows no class covers (they need anonymizing or suppression).
    """

    table: pd.DataFrame
    rows: np.ndarray
    uncovered: int


def reapply(
    table: pd.DataFrame,
    release: PublishedRelease,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
) -> Reapplied:
    """Recode ``table`` as ``release`` did: its full-domain levels, or the labels of a covering class.

    ``release.transformation["levels"]`` (QI → level, as a full-domain result's
    ``details.recoding_levels()`` gives it) recodes every QI along its hierarchy; a value the
    hierarchy lacks leaves the record uncovered. Without levels, each record takes the labels of
    the largest class of ``release.classes`` whose labels cover its raw values (coverage rules of
    ``docs/composition.md``); the all-``*`` class (marked suppressed rows) is not used.
    """
    qis = list(quasi_identifiers)
    hierarchies = hierarchies or {}
    levels = release.transformation.get("levels") if release.transformation else None
    if levels:
        return _reapply_levels(table, qis, {str(k): int(v) for k, v in levels.items()}, hierarchies)
    signature = release.classes
    grouped = signature.groupby(qis, sort=False, dropna=False)
    sizes = (grouped[COUNT].sum() if COUNT in signature.columns else grouped.size()).reset_index(name="__n")
    classes = sizes[qis].reset_index(drop=True)
    weight = sizes["__n"].to_numpy(dtype=float)
    starred = (classes.astype(str) == STAR).all(axis=1).to_numpy()
    combo_of_row = table.groupby(qis, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    first = np.unique(combo_of_row, return_index=True)[1]
    combos = table.iloc[first][qis].reset_index(drop=True)
    probe = classes.assign(__value="")
    found = covering_sets(combos, [probe], qis, "__value", hierarchies)
    assert found.matches is not None
    combo, cls, class_of_probe = found.matches[0]
    # class ids of covering_sets are per probe row; probe rows are the distinct classes in order
    row_of_class = np.zeros(int(class_of_probe.max()) + 1 if len(class_of_probe) else 0, dtype=np.int64)
    row_of_class[class_of_probe] = np.arange(len(class_of_probe))
    chosen_class = row_of_class[cls] if len(cls) else cls
    keep = ~starred[chosen_class]
    # The most specific covering class: the one covering the fewest of the table's combinations
    # (a proxy of its generalization), then the largest.
    reach = np.bincount(chosen_class, minlength=len(classes)).astype(float)
    pairs = pd.DataFrame(
        {
            "combo": combo[keep],
            "cls": chosen_class[keep],
            "reach": reach[chosen_class[keep]],
            "w": -weight[chosen_class[keep]],
        }
    )
    best = pairs.sort_values(["combo", "reach", "w", "cls"]).drop_duplicates("combo")
    class_of_combo = np.full(len(combos), -1, dtype=np.int64)
    class_of_combo[best["combo"].to_numpy()] = best["cls"].to_numpy()
    class_of = class_of_combo[combo_of_row]
    rows = np.flatnonzero(class_of >= 0)
    recoded = table.iloc[rows].reset_index(drop=True)
    for qi in qis:
        recoded[qi] = classes[qi].to_numpy(dtype=object)[class_of[rows]]
    return Reapplied(recoded, rows, int((class_of < 0).sum()))


def _reapply_levels(
    table: pd.DataFrame, qis: Sequence[Hashable], levels: Mapping[str, int], hierarchies: Mapping[Hashable, Hierarchy]
) -> Reapplied:
    """Full-domain recoding at ``levels``; records with a value outside a hierarchy are uncovered."""
    known = np.ones(len(table), dtype=bool)
    for qi in qis:
        hierarchy = hierarchies.get(qi)
        if hierarchy is None:
            raise HierarchyError(f"re-applying a full-domain release needs a hierarchy for {qi!r}")
        leaves = pd.Index(hierarchy.leaves)
        known &= leaves.get_indexer(as_labels(table[qi]).to_numpy(dtype=object)) >= 0
    rows = np.flatnonzero(known)
    recoded = table.iloc[rows].reset_index(drop=True)
    for qi in qis:
        assert hierarchies.get(qi) is not None
        recoded[qi] = hierarchies[qi].generalize(recoded[qi], levels.get(str(qi), 0))
    return Reapplied(recoded, rows, int((~known).sum()))


def history_models(
    models: Sequence[PrivacyModel],
    history: ReleaseHistory,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    *,
    domain: bool = False,
) -> list[HistoryDiversity]:
    """One history model per sensitive attribute judged over intersections, with l = the largest class need.

    A model judged over an intersection (:meth:`PrivacyModel.intersection_at_risk` is defined)
    needs at least :attr:`~PrivacyModel.minimum_class_size` distinct values left (⌈l⌉ for every
    l-diversity variant, ⌈1/bound⌉ for one leakage bound), so the history model asks that many.
    A model whose rule caps the most frequent value's share with one bound
    (:attr:`~PrivacyModel.intersection_share_bound`: one leakage bound) also has the history model
    judge that share on each record's class restricted to her history set (the smallest such bound);
    the other count-based rules are checked by the gate and (c). ``domain`` (``history: {protect: domain}``):
    the models also ask the domain rule of each class's box (:meth:`HistoryDiversity.box_rule`).
    """
    needs: dict[Hashable, int] = {}
    shares: dict[Hashable, float] = {}
    probe = np.ones((1, 1))
    for model in models:
        attribute = model.sensitive_attribute
        if attribute is None or attribute not in history.sensitive_attributes:
            continue
        if model.intersection_at_risk(probe, np.ones(1)) is None:
            continue
        needs[attribute] = max(needs.get(attribute, 1), model.minimum_class_size, 1)
        share = model.intersection_share_bound
        if share is not None:
            shares[attribute] = min(shares.get(attribute, 1.0), share)
    return [
        HistoryDiversity(attribute, float(l), history, hierarchies, bound=shares.get(attribute), domain=domain)
        for attribute, l in needs.items()
    ]


def domain_needs(
    models: Sequence[PrivacyModel], history: ReleaseHistory, hierarchies: Mapping[Hashable, Hierarchy] | None = None
) -> dict[Hashable, int]:
    """Per sensitive attribute, the distinct values every point of the QI domain keeps: the history model's l."""
    if not len(history):
        return {}
    return {m.sensitive_attribute: m.minimum_class_size for m in history_models(models, history, hierarchies)}


def domain_break_records(
    signature: pd.DataFrame,
    history: ReleaseHistory,
    models: Sequence[PrivacyModel],
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
) -> int:
    """Records (``COUNT`` of ``signature``'s classes, else its rows) in classes breaking the domain rule.

    What ``protect: domain`` adds to a composition verdict, counted the same way by the gate and by the
    anonymize step's report (a record the record rule finds at risk may be counted by both).
    """
    if not len(history):
        return 0
    needs = domain_needs(models, history, hierarchies)
    # through box rules (same verdicts as domain_breaks): a class that keeps every value the history published,
    # or l values every point of its box keeps, needs no overlay (on Mondrian's classes most)
    broken = DomainGuard(history.signatures(), quasi_identifiers, needs, hierarchies).breaks(signature)
    return int(signature.loc[broken, COUNT].sum()) if COUNT in signature else int(broken.sum())


@dataclass(frozen=True, eq=False)
class HistoryRelease:
    """The candidate that passed (or the last one tried) and how it was produced. Counts only in ``to_dict``.

    Attributes:
        table: the candidate as published (no helper column).
        method: ``"reapply"``, ``"anonymize"``, with ``"+suppress"`` when (c) was needed; or ``"failed"``.
        check: the composition check of ``table``.
        suppressed: records not published.
        tried: what each step gave, e.g. ``["reapply: 12 records at risk", …]`` (counts only).
        transformation: what to store in the history entry (``{"levels": …}`` for full-domain; empty otherwise).
        linked: a two-table release's sensitive table (Anatomy's ST; ``table`` is its QIT), judged with it as
            published (:func:`~privacy_plugins.core.history.linked_signature`); ``None`` for one table.
    """

    table: pd.DataFrame
    method: str
    check: CompositionResult
    suppressed: int
    tried: tuple[str, ...]
    transformation: Mapping[str, Any]
    linked: pd.DataFrame | None = None

    @property
    def passed(self) -> bool:
        """The candidate passed the composition check and every model."""
        return self.method != "failed"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON; counts only."""
        return {
            "method": self.method,
            "suppressed": self.suppressed,
            "tried": list(self.tried),
            "check": self.check.to_dict(),
        }


def suppress_at_risk(
    targets: pd.DataFrame,
    published: pd.DataFrame,
    rows: np.ndarray,
    history: ReleaseHistory,
    models: Sequence[PrivacyModel],
    *,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    max_suppressed: int,
    weighted: bool = False,
    keep_signatures: bool = False,
    protect_domain: bool = False,
    rules: Sequence[BoxRule] = (),
) -> tuple[pd.DataFrame, np.ndarray, CompositionResult, bool]:
    """Remove at-risk records (then the classes that miss a model) until the check passes or the limit is hit.

    Args:
        targets: the raw table (every record is a target).
        published: the candidate, one row per published record; ``rows[i]`` is row i's record in ``targets``.
        rows: see ``published``.
        history: the kept earlier releases.
        models: the release's models (bound to the hierarchies).
        quasi_identifiers: the QIs.
        hierarchies: the QIs' hierarchies (coverage and the history model).
        max_suppressed: the most records that may be left out in all (already left out included).
        weighted: ``targets`` and ``published`` are weighted rows, their record counts in ``COUNT``
            (distinct combinations, as the release's snapshot path holds them; several published rows
            may come from one target row); a row is kept or removed with all its records.
        keep_signatures: also remove the classes that drop a value of a class of the last release they
            overlap (:func:`~privacy_plugins.core.history_signatures.signature_breaks`: deletions).
        protect_domain: also remove the classes that leave some point of their box (a person not in the
            source: pinned before joining, or deleted) fewer values than the history model's l
            (:func:`~privacy_plugins.core.history_domain.domain_breaks`).
        rules: the search's box rules (:func:`~privacy_plugins.core.history_boxes.box_rules`): what they
            learnt of each box is reused by the domain check (same verdicts).

    Returns:
        ``(published, rows, check, passed)`` after the removals.
    """
    qis = list(quasi_identifiers)
    bound = bind_hierarchies([*models, *history_models(models, history, hierarchies)], hierarchies)
    memo: dict[Hashable, Any] = {}
    count = COUNT if weighted else None
    derived = with_derived_columns(targets, bound)  # the history sets of every record, once
    total = _records(targets, weighted)
    check = composition_check(
        targets, published, history, models, hierarchies=hierarchies, memo=memo, count_column=count
    )
    previous = history.releases[-1].classes if keep_signatures and len(history) else None
    guard = (
        DomainGuard(history.signatures(), qis, domain_needs(models, history, hierarchies), hierarchies, rules)
        if protect_domain
        else None
    )

    def breaks(candidate: pd.DataFrame) -> np.ndarray:
        broken = np.zeros(len(candidate), dtype=bool)
        if previous is not None:
            broken |= signature_breaks(previous, candidate, qis, history.sensitive_attributes, hierarchies)
        if guard is not None:
            broken |= guard.breaks(candidate)
        return broken

    while True:
        within = total - _records(published, weighted) <= max_suppressed
        broken = breaks(published)
        if check.passed and within and not broken.any() and _holds(published, rows, derived, qis, bound, weighted):
            return published, rows, check, True
        drop = broken.copy()
        absent = check.at_risk.copy()
        absent[rows] = False
        excess = share_excess(targets, derived, published, rows, check.at_risk, qis, hierarchies, bound, weighted)
        if excess.any():  # the fewest records of the value over its share among what is left of each target
            drop |= excess
        else:
            drop |= check.at_risk[rows]
            if absent.any():  # at risk but not published: another class covers them; leave those classes out
                drop |= _covering_rows(targets.loc[absent], published, qis, hierarchies)
        if not drop.any():
            drop = _violating_rows(published, rows, derived, qis, bound, weighted)
        left_out = total - _records(published, weighted) + _records(published.loc[drop], weighted)
        if not drop.any() or left_out > max_suppressed:
            return published, rows, check, False
        published = published.loc[~drop].reset_index(drop=True)
        rows = rows[~drop]
        check = composition_check(
            targets, published, history, models, hierarchies=hierarchies, memo=memo, count_column=count
        )


def _records(table: pd.DataFrame, weighted: bool) -> int:
    """Records a table of rows, or of weighted rows (``COUNT``), stands for."""
    return int(table[COUNT].sum()) if weighted else len(table)


def _covering_rows(
    targets: pd.DataFrame,
    published: pd.DataFrame,
    qis: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
) -> np.ndarray:
    """Rows of ``published`` in a class that covers one of ``targets``."""
    combos = targets[qis].drop_duplicates().reset_index(drop=True)
    probe = published[qis].assign(__value="")
    found = covering_sets(combos, [probe], qis, "__value", hierarchies)
    assert found.matches is not None
    _, cls, class_of_row = found.matches[0]
    return np.isin(class_of_row, cls)


def _classes(
    published: pd.DataFrame,
    rows: np.ndarray,
    targets: pd.DataFrame,
    qis: list[Hashable],
    models: Sequence[PrivacyModel],
    weighted: bool = False,
) -> EquivalenceClasses:
    """The published classes with the models' derived columns (``targets`` holds them, computed on the raw records)."""
    frame = published.copy(deep=False)
    for column in targets.columns.difference(published.columns):
        frame[column] = targets[column].to_numpy()[rows]
    if not weighted:
        return EquivalenceClasses.from_frame(frame.reset_index(drop=True), qis)
    weights = frame.pop(COUNT).to_numpy(dtype=np.int64)
    return EquivalenceClasses.from_frame(frame.reset_index(drop=True), qis, weights=weights)


def _holds(
    published: pd.DataFrame,
    rows: np.ndarray,
    targets: pd.DataFrame,
    qis: list[Hashable],
    models: Sequence[PrivacyModel],
    weighted: bool = False,
) -> bool:
    if not len(published):
        return True
    classes = _classes(published, rows, targets, qis, models, weighted)
    return all(model.holds(classes) for model in models)


def lost_to_the_models(
    targets: pd.DataFrame,
    published: pd.DataFrame,
    rows: np.ndarray,
    models: Sequence[PrivacyModel],
    quasi_identifiers: Sequence[Hashable],
    weighted: bool = False,
) -> int:
    """Records of ``published`` that (c) must leave out whatever else it does.

    Their class misses a model that no removal repairs (:attr:`~PrivacyModel.fails_on_every_subset`:
    k-anonymity, distinct l-diversity). (c) removes rows, never relabels them, so such a class passes
    only once it is gone: when these records and those already left out exceed the limit,
    :func:`suppress_at_risk` cannot pass, and its checks (the composition check, the domain rule's
    overlays) need not run to say so.
    """
    lasting = [model for model in models if model.fails_on_every_subset]
    if not lasting or not len(published):
        return 0
    lost = _violating_rows(published, rows, targets, list(quasi_identifiers), lasting, weighted)
    return _records(published.loc[lost], weighted)


def _violating_rows(
    published: pd.DataFrame,
    rows: np.ndarray,
    targets: pd.DataFrame,
    qis: list[Hashable],
    models: Sequence[PrivacyModel],
    weighted: bool = False,
) -> np.ndarray:
    if not len(published):
        return np.zeros(0, dtype=bool)
    classes = _classes(published, rows, targets, qis, models, weighted)
    failing = np.zeros(classes.n_classes, dtype=bool)
    for model in models:
        failing |= model.violating_classes(classes)
    return failing[classes.class_of_row]


def release_with_history(
    table: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    history: ReleaseHistory,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    algorithm: str = DEFAULT_ALGORITHM,
    suppression_limit: float = 0.0,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    insensitive: Sequence[Hashable] = (),
    unlisted_columns: str = "refuse",
    seed: int = 0,
    reuse: bool = True,
    keep_signatures: bool = False,
    protect_domain: bool = False,
    **options: Any,
) -> HistoryRelease:
    """A release of ``table`` that passes the composition check against ``history``: (a) → (b) → (c).

    Args:
        table: the raw table of this release (QIs, sensitive columns, other columns).
        quasi_identifiers: the QIs (the history's).
        models: the release's models; a history model per sensitive attribute is added in (b).
        history: the kept earlier releases (empty: a plain anonymization, then the check).
        hierarchies: the QIs' hierarchies.
        algorithm: a registered anonymizer (the spec's).
        suppression_limit: fraction of records that may be left out in all, in [0, 1).
        sensitive_attributes: sensitive columns besides those the models name.
        identifiers: direct identifiers, never published (dropped before (a), passed to the anonymizer in (b)).
        insensitive: columns published unchanged (every column has a role, as in ``anonymize``).
        unlisted_columns: ``"refuse"`` or ``"drop"`` a column with no role, as in ``anonymize``.
        seed: for randomized algorithms.
        **options: the algorithm's own options, as for :func:`~privacy_plugins.core.anonymize.anonymize`.
        reuse: try (a), re-applying the last release's transformation, first.
        keep_signatures: rows were deleted since the last release: every class must keep the values of
            the last release's classes it overlaps, else its records are suppressed in (c)
            (:mod:`~privacy_plugins.core.history_signatures`, m-invariance without counterfeits).
        protect_domain: judge points of the QI domain, not only present records: every class keeps each
            point of its box at the history model's l values (or all it had), else its records are
            suppressed in (c) (:mod:`~privacy_plugins.core.history_domain`: newcomers, deleted people).

    Returns:
        A :class:`HistoryRelease`; ``method`` says which way produced it, ``"failed"`` when none
        did within the suppression limit (the check then says how many records are at risk).
        The published table never holds the helper columns (row ids, history sets).

    Raises:
        ConfigurationError: the QIs are not the history's (and whatever
            :func:`~privacy_plugins.core.anonymize.anonymize` raises for a bad spec).
    """
    qis = list(quasi_identifiers)
    if len(history) and set(qis) != set(history.quasi_identifiers):
        raise ConfigurationError(
            f"quasi_identifiers {qis!r} differ from those of the release history {history.name!r} "
            f"({list(history.quasi_identifiers)!r}); a history is kept per set of quasi-identifiers"
        )
    bound = bind_hierarchies(models, hierarchies)
    named = [m.sensitive_attribute for m in bound if m.sensitive_attribute is not None]
    roles = AttributeRoles(
        quasi_identifiers=qis,
        sensitive_attributes=list(dict.fromkeys([*(sensitive_attributes or ()), *named])),
        identifiers=identifiers,
        insensitive=insensitive,
    )  # every column has a role before (a), which publishes the rows' other columns as they are
    raw = account_for_columns(table.reset_index(drop=True), roles, bound, unlisted_columns)
    budget = suppression_budget(suppression_limit, len(raw))
    tried: list[str] = []
    last: tuple[pd.DataFrame, CompositionResult, int, Mapping[str, Any]] | None = None
    fallback: Callable[[], tuple[pd.DataFrame, np.ndarray, CompositionResult, bool]] | None = None
    two_tables = tags_of(get_anonymizer(algorithm)).linked_tables
    if two_tables and reuse and len(history):
        tried.append("reapply: not defined for a two-table release (its groups are its transformation)")
    aware = history_models(bound, history, hierarchies, domain=protect_domain)
    rules = box_rules(aware)  # one memo of what each box asks for (a), (b) and (c)
    if reuse and len(history) and not two_tables:
        previous = history.releases[-1]
        reapplied = reapply(raw.drop(columns=[c for c in identifiers if c in raw.columns]), previous, qis, hierarchies)
        # (c) on the re-applied classes; not run when the models alone leave out too many (it would fail)
        reapplied_suppressed = partial(
            suppress_at_risk, raw, reapplied.table, reapplied.rows, history, bound,
            quasi_identifiers=qis, hierarchies=hierarchies, max_suppressed=budget, keep_signatures=keep_signatures,
            protect_domain=protect_domain, rules=rules,
        )  # fmt: skip
        covered = reapplied.uncovered <= budget
        lost = lost_to_the_models(raw, reapplied.table, reapplied.rows, bound, qis) if covered else 0
        if covered and reapplied.uncovered + lost > budget:
            tried.append(
                f"reapply: {reapplied.uncovered} uncovered, {lost} in classes below a model, "
                f"above the suppression limit ({budget})"
            )
            fallback = reapplied_suppressed  # what (a) leaves, only wanted when (b) finds nothing
        elif covered:
            published, rows, check, passed = reapplied_suppressed()
            suppressed = len(raw) - len(published)
            tried.append(f"reapply: {reapplied.uncovered} uncovered, {check.records_at_risk} at risk after suppression")
            if passed:
                method = "reapply" if suppressed == reapplied.uncovered else "reapply+suppress"
                return HistoryRelease(published, method, check, suppressed, tuple(tried), previous.transformation)
            last = (published, check, suppressed, previous.transformation)
        else:
            tried.append(f"reapply: {reapplied.uncovered} uncovered, above the suppression limit ({budget})")
    extra: list[PrivacyModel] = list(aware)
    refusal = tags_of(get_anonymizer(algorithm)).supported_models.refusal([*models, *extra])
    if extra and refusal is not None:  # an algorithm that cannot take the model: (c) does the rest
        tried.append(f"anonymize: {algorithm} {refusal}; anonymized without the history model")
        extra = []
    try:
        result = anonymize(
            raw.assign(**{_ROW: np.arange(len(raw))}),
            algorithm=algorithm,
            quasi_identifiers=qis,
            models=[*models, *extra],
            suppression_limit=suppression_limit,
            hierarchies=hierarchies,
            sensitive_attributes=sensitive_attributes,
            identifiers=identifiers,
            insensitive=[*insensitive, _ROW],  # the row ids ride along and are dropped below
            unlisted_columns=unlisted_columns,
            seed=seed,
            **options,
        )
    except InfeasibleAnonymizationError as exc:
        tried.append(f"anonymize: infeasible ({str(exc).splitlines()[0]})")
    else:
        if result.linked is not None:  # judged as published (the pair's signature); (c) does not apply
            return _linked_release(raw, result, history, bound, qis, hierarchies, tried)
        levels = result.details.recoding_levels()
        transformation: dict[str, Any] = {"levels": levels} if levels else {}
        rows = result.table[_ROW].to_numpy(dtype=np.int64)
        candidate = result.table.drop(columns=[_ROW])
        released = np.ones(len(candidate), dtype=bool)
        marked = (candidate[qis].astype(str) == STAR).all(axis=1).to_numpy() & (result.suppressed > 0)
        released &= ~marked
        published, rows, check, passed = suppress_at_risk(
            raw, candidate.loc[released].reset_index(drop=True), rows[released], history, bound,
            quasi_identifiers=qis, hierarchies=hierarchies, max_suppressed=budget, keep_signatures=keep_signatures,
            protect_domain=protect_domain, rules=rules,
        )  # fmt: skip
        suppressed = len(raw) - len(published)
        tried.append(f"anonymize: {check.records_at_risk} at risk after suppression")
        if passed:
            method = "anonymize" if suppressed == result.suppressed else "anonymize+suppress"
            return HistoryRelease(published, method, check, suppressed, tuple(tried), transformation)
        last = (published, check, suppressed, transformation)
    if last is None and fallback is not None:  # (b) found nothing: report what (a) left, as if it had run
        published, _, check, _ = fallback()
        last = (published, check, len(raw) - len(published), history.releases[-1].transformation)
    if last is None:
        empty = raw.iloc[:0]
        check = composition_check(raw, empty, history, bound, hierarchies=hierarchies)
        return HistoryRelease(empty, "failed", check, len(raw), tuple(tried), {})
    published, check, suppressed, kept = last
    return HistoryRelease(published, "failed", check, suppressed, tuple(tried), kept)


def _linked_release(
    raw: pd.DataFrame,
    result: Any,
    history: ReleaseHistory,
    models: Sequence[PrivacyModel],
    quasi_identifiers: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    tried: list[str],
) -> HistoryRelease:
    """A two-table output (Anatomy) checked on its pair's signature; nothing is left out.

    (c) does not apply: a record's classes are every group holding her exact QI tuple, and leaving
    her out takes a value from her group (see ``docs/release-history.md``); the algorithm keeps
    the history model itself (Anatomy merges groups).
    """
    qit = result.table.drop(columns=[_ROW])
    st = result.linked.table
    sensitive = [c for c in st.columns if c not in (result.linked.group_column, "count")]
    signature = linked_signature(qit, st, result.linked.group_column, quasi_identifiers, sensitive)
    check = composition_check(raw, signature, history, models, hierarchies=hierarchies)
    tried.append(f"anonymize: {check.records_at_risk} at risk (two tables: nothing suppressed by the history)")
    method = "anonymize" if check.passed else "failed"
    return HistoryRelease(qit, method, check, result.suppressed, tuple(tried), {}, linked=st)
