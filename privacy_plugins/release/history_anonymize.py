"""The release history in the anonymize step, one body for the snapshot and the in-memory path.

Issue 26's three ways to a candidate that passes the gate's composition check, tried in
this order (``docs/release-history.md``):

(a) **re-apply** the last release's full-domain levels (``history.reapply``, on by default)
    when it used the spec's algorithm: consumers then see the same generalization as last
    time. Kept when, after leaving out the classes that miss a model and then (c), it meets
    every model and the composition check within the suppression limit.
(b) **anonymize with the history as models** (``HistoryDiversity``, one per sensitive
    attribute, when the algorithm declares it can take them); when that is infeasible, the
    algorithm runs without them and (c) and the gate judge the candidate.
(c) **suppress the records at risk** (:func:`~privacy_plugins.core.history_release.suppress_at_risk`)
    within the suppression limit. When even that cannot pass, the candidate is staged as the
    algorithm made it and the gate refuses it (exit 1, with the composition check's numbers).

Both paths hand :func:`choose` the run's *units* — distinct raw (QI, model column)
combinations with their record counts (``COUNT``), the snapshot itself or the rows grouped —
and a candidate as *published units* (labels per unit, ``rows`` back to the units): only
distinct combinations are judged, never a Python loop over records. The path then applies
what was chosen where its rows are (the source's engine, or pandas). Nothing here reports a
value: :class:`HistoryOutcome` holds counts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.core.anonymize.base import levels_text
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.history import COUNT, ReleaseHistory
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import domain_break_records, history_models, reapply, suppress_at_risk
from privacy_plugins.core.metrics.information_loss import generalization_costs, ncp
from privacy_plugins.core.models import PrivacyModel, bind_hierarchies
from privacy_plugins.core.models.research_subset import subset_flags
from privacy_plugins.core.parameters import suppression_budget
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import InfeasibleAnonymizationError
from privacy_plugins.release.progress import LOGGER

if TYPE_CHECKING:
    from privacy_plugins.release.spec import ReleaseSpec

__all__ = [
    "UNIT",
    "AnonymizeHistory",
    "Chosen",
    "HistoryOutcome",
    "anonymize_history",
    "choose",
    "full_domain_ncp",
    "spec_history",
    "unit_columns",
]

T = TypeVar("T")

#: Column of a published unit naming the raw unit it came from.
UNIT = "__history_unit"
_PUBLISHED = "__history_published"


@dataclass(frozen=True)
class HistoryOutcome:
    """What the anonymize step did about the history, for the release summary. Counts only.

    Attributes:
        releases: earlier releases the candidate was steered against (0: no history yet, or off).
        way: ``"reapply"`` (a), ``"anonymize"`` (b), ``"first_release"`` (no earlier release).
        history_model: the algorithm's search respected the history models (b).
        suppressed_at_risk: records (c) left out for the history.
        records_at_risk: records the composition check still finds at risk (the gate will refuse).
    """

    releases: int = 0
    way: str = "first_release"
    history_model: bool = False
    suppressed_at_risk: int = 0
    records_at_risk: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "releases": self.releases,
            "way": self.way,
            "history_model": self.history_model,
            "suppressed_at_risk": self.suppressed_at_risk,
            "records_at_risk": self.records_at_risk,
        }

    def with_headline(self, algorithm_headline: str) -> str:
        """The algorithm's one-line summary (or, after (a), the node re-applied) followed by :meth:`headline`."""
        return "; ".join(filter(None, [algorithm_headline, self.headline()]))

    @staticmethod
    def node(levels: Mapping[str, int]) -> str:
        """The summary of (a): the node re-applied."""
        shown: dict[Hashable, int] = {qi: level for qi, level in levels.items()}
        return f"node {levels_text(shown)}"

    def headline(self) -> str:
        """One line for the log and the summary."""
        if not self.releases:
            return ""
        ways = {"reapply": "(a) re-applied the last release's levels", "anonymize": "(b) anonymized anew"}
        parts = [f"{ways.get(self.way, self.way)} against {self.releases} earlier release(s)"]
        if self.way == "anonymize":
            parts.append("with the history as a model" if self.history_model else "without the history model")
        if self.suppressed_at_risk:
            parts.append(f"(c) {self.suppressed_at_risk} record(s) suppressed for the history")
        if self.records_at_risk:
            parts.append(f"{self.records_at_risk} record(s) still at risk")
        return "; ".join(parts)


@dataclass(frozen=True, eq=False)
class AnonymizeHistory:
    """The history as the anonymize step uses it.

    Attributes:
        history: the kept earlier releases (at least one).
        quasi_identifiers: the spec's QIs.
        hierarchies: the QIs' hierarchies (built from this run's data).
        models: the spec's models, bound to the hierarchies.
        extra: the history models (b) adds (empty when the algorithm refuses them).
        levels: the last release's full-domain levels when (a) may re-apply them, else ``None``.
        suppression_limit: the spec's.
        keep_signatures: (c) also leaves out classes that drop a value of an earlier class they overlap.
        protect_domain: (c) also leaves out classes that narrow a point of their box below l (``history.protect``).
        repairs: (c) applies to the algorithm's output: its published units are its classes. Not for an algorithm
            that publishes two linked tables (Anatomy): a record's classes there are every group holding her exact
            QI tuple, and leaving one record out takes a value from its group (which holds each value once), so the
            group itself would fail l; the gate's composition check judges the pair as published.
    """

    history: ReleaseHistory
    quasi_identifiers: tuple[Hashable, ...]
    hierarchies: Mapping[Hashable, Hierarchy]
    models: tuple[PrivacyModel, ...]
    extra: tuple[PrivacyModel, ...]
    levels: Mapping[str, int] | None
    suppression_limit: float
    keep_signatures: bool = False
    protect_domain: bool = False
    repairs: bool = True


def anonymize_history(
    history: ReleaseHistory,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    hierarchies: Mapping[Hashable, Hierarchy],
    algorithm: str,
    suppression_limit: float,
    reapply_levels: bool,
    keep_signatures: bool = False,
    protect_domain: bool = False,
) -> AnonymizeHistory | None:
    """The history for the anonymize step; ``None`` before a first release.

    (a) re-applies only levels the spec's own algorithm chose (another algorithm's transformation
    is not what consumers saw from this spec), and only when ``reapply_levels``.
    """
    if not len(history):
        return None
    bound = tuple(bind_hierarchies(models, hierarchies))
    extra: list[PrivacyModel] = list(history_models(bound, history, hierarchies, domain=protect_domain))
    tags = tags_of(get_anonymizer(algorithm))
    refusal = tags.supported_models.refusal([*bound, *extra])
    if extra and refusal is not None:
        LOGGER.info("anonymize: %s %s; (c) and the composition check guard the history", algorithm, refusal)
        extra = []
    last = history.releases[-1].transformation
    stored = last.get("levels") if reapply_levels and last.get("algorithm") == algorithm else None
    levels: dict[str, int] | None = None
    if isinstance(stored, Mapping) and set(map(str, stored)) == set(map(str, quasi_identifiers)):
        levels = {str(q): int(stored[str(q)]) for q in quasi_identifiers}
        # a node of other hierarchies (the spec's changed since) cannot be re-applied: search anew
        if any(q not in hierarchies or not 0 <= levels[str(q)] <= hierarchies[q].height for q in quasi_identifiers):
            levels = None
    return AnonymizeHistory(
        history=history,
        quasi_identifiers=tuple(quasi_identifiers),
        hierarchies=hierarchies,
        models=bound,
        extra=tuple(extra),
        levels=levels,
        suppression_limit=suppression_limit,
        keep_signatures=keep_signatures,
        protect_domain=protect_domain,
        repairs=not tags.linked_tables,
    )


@dataclass(frozen=True, eq=False)
class Chosen(Generic[T]):
    """What :func:`choose` decided.

    Attributes:
        solution: (b)'s algorithm output; ``None`` when (a) re-applied ``levels``.
        levels: (a)'s levels, else ``None``.
        published: the candidate's published units (``UNIT``, the QIs' labels, ``COUNT``), when some are
            left out (``None``: publish the algorithm's candidate as it is).
        kept: with ``published``, which of its rows are published.
        outcome: the counts for the summary.
    """

    solution: T | None
    levels: Mapping[str, int] | None
    published: pd.DataFrame | None
    kept: np.ndarray | None
    outcome: HistoryOutcome

    def kept_units(self) -> np.ndarray:
        """The raw units (positions) with records published (every part, for a unit split by local recoding)."""
        assert self.published is not None and self.kept is not None
        return np.unique(self.published.loc[self.kept, UNIT].to_numpy(dtype=np.int64))

    @property
    def records_out(self) -> int:
        """Records the chosen candidate publishes (when ``published`` is set)."""
        assert self.published is not None and self.kept is not None
        return int(self.published.loc[self.kept, COUNT].sum())


def choose(
    history: AnonymizeHistory | None,
    units: pd.DataFrame,
    solve: Callable[[Sequence[PrivacyModel]], T],
    published_units: Callable[[T], pd.DataFrame],
    signature: Callable[[T], pd.DataFrame] | None = None,
) -> Chosen[T]:
    """(a) → (b) → (c) on the run's units.

    Args:
        history: see :func:`anonymize_history` (``None``: no earlier release, the algorithm alone).
        units: the raw units: QIs, the columns the models read and ``COUNT``.
        solve: runs the algorithm with the spec's models plus the given ones (raises
            ``InfeasibleAnonymizationError``).
        published_units: a solution's published records as units: the QIs' labels, ``UNIT`` (the raw unit)
            and ``COUNT`` (a raw unit may be split over classes by local recoding); suppressed records left out.
        signature: a solution's class signature, for an output (c) does not repair (``history.repairs`` false):
            its records at risk are counted on it and reported; the gate refuses it.
    """
    if history is None:
        return Chosen(solve(()), None, None, None, HistoryOutcome())
    total = int(units[COUNT].sum())
    budget = suppression_budget(history.suppression_limit, total)
    if history.levels is not None:
        reapplied = _reapplied(history, units, budget)
        if reapplied is not None:
            return reapplied
    extra = history.extra
    try:
        solution = solve(extra)
    except InfeasibleAnonymizationError:
        if not extra:
            raise
        LOGGER.info("anonymize: no candidate meets the history model; anonymizing without it, then (c)")
        extra = ()
        solution = solve(extra)
    if not history.repairs:  # a two-table output: judged as published (its signature), nothing left out
        at_risk = 0
        if signature is not None:
            published_classes = signature(solution)
            check = composition_check(
                units, published_classes, history.history, history.models,
                hierarchies=history.hierarchies, count_column=COUNT,
            )  # fmt: skip
            at_risk = check.records_at_risk
            if history.protect_domain:  # counted as the gate counts it
                at_risk += domain_break_records(
                    published_classes, history.history, history.models, history.quasi_identifiers,
                    history.hierarchies,
                )  # fmt: skip
        outcome = HistoryOutcome(len(history.history), "anonymize", bool(extra), 0, at_risk)
        return Chosen(solution, None, None, None, outcome)
    published = published_units(solution)
    kept, at_risk, passed = _suppressed(history, units, published, budget)
    left_out = int(published[COUNT].sum()) - int(published.loc[kept, COUNT].sum())
    changed = passed and left_out > 0
    outcome = HistoryOutcome(
        releases=len(history.history),
        way="anonymize",
        history_model=bool(extra),
        suppressed_at_risk=left_out if passed else 0,
        records_at_risk=0 if passed else at_risk,
    )
    return Chosen(solution, None, published if changed else None, kept if changed else None, outcome)


def _reapplied(history: AnonymizeHistory, units: pd.DataFrame, budget: int) -> Chosen[Any] | None:
    """(a): the last release's levels, their violating classes left out, then (c); ``None`` when that fails."""
    assert history.levels is not None
    qis = list(history.quasi_identifiers)
    previous = history.history.releases[-1]
    recoded = reapply(units, previous, qis, history.hierarchies)
    published = recoded.table.assign(**{UNIT: recoded.rows})
    classes = EquivalenceClasses.from_frame(
        published.drop(columns=[COUNT]), qis, weights=published[COUNT].to_numpy(dtype=np.int64)
    )
    failing = np.zeros(classes.n_classes, dtype=bool)
    for model in history.models:
        failing |= model.violating_classes(classes)
    own = failing[classes.class_of_row]  # the transformation's own suppression: classes that miss a model
    published = published.loc[~own].reset_index(drop=True)
    transformed_out = int(units[COUNT].sum()) - int(published[COUNT].sum())
    if transformed_out > budget:
        LOGGER.info("anonymize: (a) re-applying the last release's levels leaves out more than the limit")
        return None
    kept, _, passed = _suppressed(history, units, published, budget)
    if not passed:
        LOGGER.info("anonymize: (a) the last release's levels do not pass the history; anonymizing anew")
        return None
    outcome = HistoryOutcome(
        releases=len(history.history),
        way="reapply",
        suppressed_at_risk=int(published[COUNT].sum()) - int(published.loc[kept, COUNT].sum()),
    )
    return Chosen(None, dict(history.levels), published, kept, outcome)


def _suppressed(
    history: AnonymizeHistory, units: pd.DataFrame, published: pd.DataFrame, budget: int
) -> tuple[np.ndarray, int, bool]:
    """(c) on published units: which are kept, the records still at risk, whether the candidate then passes."""
    qis = list(history.quasi_identifiers)
    # A research-subset model (δ-presence) is judged on the population by the search, not on the published
    # rows: (c) leaves subset records out only where that keeps it (they stay in the population).
    on_population = [m for m in history.models if m.research_subset_column is not None]
    judged = [m for m in history.models if m.research_subset_column is None]
    if not all(m.holds_as_the_subset_shrinks for m in on_population):
        budget = 0
    # records outside the subset are never published, and are not suppressed: (c)'s limit counts them as given
    outside = sum(
        int(units.loc[subset_flags(units, column) != 1.0, COUNT].sum())
        for column in dict.fromkeys(m.research_subset_column for m in on_population)
    )
    candidate = published.assign(**{_PUBLISHED: np.arange(len(published))})
    for column in units.columns.difference(candidate.columns):  # the columns the models read, per raw unit
        candidate[column] = units[column].to_numpy()[candidate[UNIT].to_numpy()]
    kept, _, check, passed = suppress_at_risk(
        units,
        candidate.drop(columns=[UNIT]),
        candidate[UNIT].to_numpy(dtype=np.int64),
        history.history,
        judged,
        quasi_identifiers=qis,
        hierarchies=history.hierarchies,
        max_suppressed=budget + outside,
        weighted=True,
        keep_signatures=history.keep_signatures,
        protect_domain=history.protect_domain,
    )
    mask = np.zeros(len(published), dtype=bool)
    mask[kept[_PUBLISHED].to_numpy(dtype=np.int64)] = True
    return mask, check.records_at_risk, passed


def full_domain_ncp(
    units: pd.DataFrame,
    hierarchies: Mapping[Hashable, Hierarchy],
    levels: Mapping[str, int],
    suppressed: np.ndarray,
) -> float:
    """NCP of full-domain recoding at ``levels`` over the weighted units (``suppressed`` units cost 1)."""
    costs = [
        generalization_costs(hierarchy, hierarchy.leaf_codes(units[qi]), int(levels[str(qi)]))
        for qi, hierarchy in hierarchies.items()
        if str(qi) in levels
    ]
    return ncp(costs, np.asarray(suppressed, dtype=bool), weights=units[COUNT].to_numpy(dtype=float))


def spec_history(spec: ReleaseSpec, hierarchies: Mapping[Hashable, Hierarchy]) -> AnonymizeHistory | None:
    """The spec's history for its anonymize step (``None``: history off, or no release yet)."""
    from privacy_plugins.release.composition_gate import read_history
    from privacy_plugins.release.destination import open_destination

    if not spec.history.enabled:
        return None
    return anonymize_history(
        read_history(spec, open_destination(spec.destination)),
        quasi_identifiers=list(spec.quasi_identifiers),
        models=spec.models(),
        hierarchies=hierarchies,
        algorithm=spec.algorithm.name,
        suppression_limit=spec.requirements.suppression_limit,
        # (a) recodes every row: a δ-presence research subset is published only through the search
        reapply_levels=spec.history.reapply and all(m.research_subset_column is None for m in spec.models()),
        keep_signatures=spec.history.keep_signatures,
        protect_domain=spec.history.protect_domain,
    )


def unit_columns(spec: ReleaseSpec, columns: Sequence[Hashable]) -> list[Hashable]:
    """The columns a unit is distinct on: the QIs and every other column of ``columns`` the models read."""
    read = [*spec.quasi_identifiers, *spec.sensitive_attributes, *(c for m in spec.models() for c in m.columns)]
    return [c for c in dict.fromkeys(read) if c in set(columns)]
