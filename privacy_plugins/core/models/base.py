"""The privacy-model protocol: a thresholded criterion evaluated per equivalence class.

Models answer "is it acceptable at X?" on top of the measures in
:mod:`privacy_plugins.core.metrics`. Each declares, as ARX's criteria do,
whether it is monotone under generalization and under suppression, which is
what lets the lattice search prune whole sub-lattices without checking them.

A model also declares what it needs and how it reports, in the manner of ARX's
``PrivacyCriterion.getRequirements()``: the columns it reads besides the
quasi-identifiers (:attr:`PrivacyModel.columns`), the key of its observed value
in reports (:attr:`PrivacyModel.report_key`), the smallest class it can accept
(:attr:`PrivacyModel.minimum_class_size`), a monotone relaxation the lattice can
prune with, and checks against a concrete table
(:meth:`PrivacyModel.validate_against`). Anonymizers, the diagnosis and the
release flow read these instead of testing a model's type, so a new model is
one new file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import ClassViolations, to_jsonable, violations_from_mask
from privacy_plugins.errors import UnknownColumnError

if TYPE_CHECKING:
    import pandas as pd

    from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
    from privacy_plugins.core.history_boxes import BoxRule
    from privacy_plugins.core.metrics.population import ReleasePopulation

__all__ = ["MeasuredResult", "ModelResult", "PrivacyModel", "bind_hierarchies", "validate_on_units"]


@dataclass(frozen=True)
class ModelResult:
    """The verdict of one model on one table.

    Attributes:
        model: the model as text, e.g. ``"5-anonymity"``.
        passed: true when every class satisfies the model.
        observed: the measured value (k, l, c*, t or max leakage).
        threshold: the model's parameter the observed value is compared with.
        violations: the classes that miss it (sizes and counts, no raw values).
    """

    model: str
    passed: bool
    observed: float
    threshold: float
    violations: ClassViolations

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return to_jsonable(self)


@dataclass(frozen=True)
class MeasuredResult(ModelResult):
    """A verdict with the measures behind it, by name: counts, rates and intervals, never a value.

    A model judged on tables returns it so the gate's checks (release.json, XCom, Dagster check
    metadata) carry each attack's risk, interval and rates beside the verdict.
    """

    measures: dict[str, Any] = field(default_factory=dict)


class PrivacyModel(ABC):
    """A privacy criterion. Subclasses are frozen dataclasses validated in ``__post_init__``."""

    #: Generalizing a satisfying table keeps it satisfying (without suppression).
    monotonic_with_generalization: ClassVar[bool] = True
    #: The same holds when violating classes are suppressed under a limit.
    monotonic_with_suppression: ClassVar[bool] = False
    #: The model reads a sensitive attribute.
    requires_sensitive: ClassVar[bool] = False
    #: The model compares classes with the whole published table (t-closeness), so
    #: suppressing records changes the reference and the survivors must be re-checked.
    depends_on_table_distribution: ClassVar[bool] = False
    #: A class that violates the model still violates it once any of its records (not all) are left
    #: out — its failure depends on too few records or values, which removal never adds (k-anonymity,
    #: distinct l-diversity). A suppression loop may then count such classes as already lost.
    fails_on_every_subset: ClassVar[bool] = False
    #: :meth:`suppression_bound` can be positive (the lattice may prune with it).
    bounds_suppression: ClassVar[bool] = False
    #: The model is exactly "every class holds at least :attr:`minimum_class_size`
    #: records" (:meth:`violating_classes` is ``classes.sizes < minimum_class_size``):
    #: a lattice check may count the records per class and build nothing else.
    judged_by_size: ClassVar[bool] = False
    #: The model is judged on whole tables — the original and the candidate — by
    #: :meth:`evaluate_tables`, not on classes (attack risks): on classes it flags none, so
    #: the anonymizers never act on it, and a release must call :meth:`evaluate_tables`.
    judged_on_tables: ClassVar[bool] = False
    #: A spec's ``requirements`` can state the model (``False``: the release layer binds it from
    #: data no spec holds, e.g. the release history; it is still in the registry for programs).
    stated_in_specs: ClassVar[bool] = True
    #: The name :func:`~privacy_plugins.core.models.from_config` knows the model by.
    config_name: ClassVar[str] = ""
    #: The family as reports name it, e.g. ``"k-anonymity"``, ``"distinct l-diversity"``.
    family: ClassVar[str] = ""
    #: The key of the observed value in reports: ``"k"``, ``"l"``, ``"c"``, ``"t"``, ``"max_leakage"``.
    report_key: ClassVar[str] = "value"
    #: True when a larger observed value is better (k, l); False when a smaller one is (c*, t, leakage).
    higher_is_better: ClassVar[bool] = True

    #: The sensitive attribute the model protects, if any. A model with one
    #: declares it as its dataclass field ``sensitive_attribute`` (so that
    #: ``from_config(name, sensitive_attribute=...)`` and every surface use the
    #: same word); a model without one reads as ``None``.
    sensitive_attribute: Hashable | None

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # Only reached when normal lookup fails: a model without a sensitive
            # attribute field (a class attribute here would become the dataclass
            # default of every subclass's field).
            if name == "sensitive_attribute":
                return None
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """Table columns the model reads besides the quasi-identifiers (sensitive attribute, bound column)."""
        return () if self.sensitive_attribute is None else (self.sensitive_attribute,)

    @property
    def minimum_class_size(self) -> int:
        """The smallest equivalence class that can satisfy the model (k for k-anonymity; 1 when any can)."""
        return 1

    @property
    def research_subset_column(self) -> Hashable | None:
        """The column flagging the research subset when the model publishes only it (δ-presence); else ``None``.

        An anonymizer tagged ``research_subset`` then judges every other model on the subset's
        rows and publishes only them (issue 30); the others refuse such a model.
        """
        return None

    @property
    def holds_as_the_subset_shrinks(self) -> bool:
        """For a research-subset model: whether it still holds when published subset records are left out.

        They stay in the population (the adversary's census still counts them). A release history's
        suppression (c) leaves records out after the search and judges only the published rows; a
        model for which this is false keeps (c) from leaving any out. Irrelevant for other models.
        """
        return True

    def population_table_in_engine(self) -> tuple[str, str] | None:
        """(table name, count column) of a population table the model joins where the data lives; else ``None``.

        A SQL or Spark batch then groups and joins there and hands the model only each
        class's records and people (:meth:`evaluate_population_sizes`), never a value.
        """
        return None

    def population_frame(self) -> pd.DataFrame | None:
        """The population table (raw QI values, counts) the model looks published labels up in; else ``None``.

        A release builds the quasi-identifiers' hierarchies from its values (the builders label
        a value the same whatever the other values) so the published table can be re-measured
        after the run, when the raw records are gone.
        """
        return None

    def bound_lazily(self, bind: Callable[[PrivacyModel], PrivacyModel]) -> PrivacyModel:
        """The model calling ``bind`` on itself when it first reads its population; itself by default.

        A release binds exact population models this way (the population table pulled, the QIs'
        hierarchies built from it) so that naming the checks or loading definitions reads no data.
        """
        return self

    def with_population_frame(self, frame: pd.DataFrame) -> PrivacyModel:
        """The model reading ``frame`` as its population table (one pulled from the engine); itself by default."""
        return self

    def evaluate_population_sizes(self, sample: np.ndarray, people: np.ndarray) -> ModelResult:
        """The verdict from each class's records ``sample`` and people ``people`` (a table in the engine)."""
        raise NotImplementedError(f"{self} is judged on its classes, not on population sizes")

    def validate_against(self, table: pd.DataFrame) -> None:
        """Fail before any work when the model cannot apply to ``table`` (missing column, k above the rows …).

        Raises:
            UnknownColumnError: a column the model reads is not in the table.
            ConfigurationError: the model's parameters do not fit the table.
        """
        missing = [column for column in self.columns if column not in table.columns]
        if missing:
            raise UnknownColumnError(
                f"{self} reads column(s) not in the table: {missing!r}; available columns: {list(table.columns)!r}"
            )

    def with_hierarchies(self, hierarchies: Mapping[Hashable, Hierarchy]) -> PrivacyModel:
        """The model bound to the request's hierarchies (itself unless it measures along one).

        :class:`~privacy_plugins.core.models.PersonalizedLeakage` takes its sensitive
        attribute's hierarchy from here, so a generalized sensitive column is re-measured
        with DCorrelate.
        """
        return self

    def with_release_population(self, population: ReleasePopulation | None) -> PrivacyModel:
        """The model with the release's population (``population:`` block) where it needs one and gives none.

        Unchanged by default. A population model (k-map, population uniqueness) without its own
        population takes the release's, or raises ``ConfigurationError`` naming what it needs.
        """
        return self

    def leakage_bounds(self, table: pd.DataFrame) -> np.ndarray | None:
        """One leakage bound per row of ``table`` when the model sets per-record bounds; ``None`` otherwise."""
        return None

    def derived_columns(self, table: pd.DataFrame) -> dict[Hashable, np.ndarray]:
        """Columns the model computes from the *raw* table before anonymizing; none by default.

        A model whose per-record data depend on the raw quasi-identifiers (the release
        history's intersection sets) cannot read them from a generalized table, so
        :func:`~privacy_plugins.core.anonymize.anonymize` adds these columns to the input
        (every algorithm carries non-QI columns through, so the re-check reads them on the
        published rows) and drops them from the published table after the re-check.
        """
        return {}

    def intersection_at_risk(self, counts: np.ndarray, bounds: np.ndarray | None) -> np.ndarray | None:
        """Per row of ``counts``, whether the model fails on an intersection of releases; ``None``: not judged.

        ``counts`` holds, per target (row) and sensitive value (column), the rows of the new
        release's covering classes with that value, zeroed outside the values every release
        leaves the adversary (``docs/composition.md``); ``bounds`` the targets' leakage bounds
        (:meth:`leakage_bounds`) when the model sets them. Models that judge class sizes or
        the whole table (k-anonymity, t-closeness) are not defined on an intersection.
        """
        return None

    def box_rule(self) -> BoxRule | None:
        """A rule the model also asks of each class's published *box* (its QI labels), not only its records.

        ``None`` by default. The history model with ``domain`` returns the domain rule
        (:class:`~privacy_plugins.core.history_boxes.BoxRule`): a search that publishes boxes
        (clustering, bucket) judges its candidates with it (``docs/composition.md``).
        """
        return None

    def intersection_history(self, table: pd.DataFrame) -> tuple[pd.Index, np.ndarray, np.ndarray] | None:
        """What the release history leaves each row of ``table``: the history's values, H(t), "no release covers".

        ``None`` (the default) for a model that holds no history; the history model returns its
        sorted published values, H(t) as booleans over them per row, and per row whether no kept
        release covers it (``docs/composition.md``). ``table`` carries :meth:`derived_columns`.
        """
        return None

    @property
    def repaired_by_merging(self) -> bool:
        """Whether merging classes that miss the model is a way to meet it (the clustering algorithms repair so).

        ``False`` for a per-record rule merging breaks as easily as it mends (the history model with a
        share bound): a clustering then merges with :meth:`monotone_relaxation` and suppresses
        records of the classes that still miss the model, within the suppression limit.
        """
        return True

    @property
    def repaired_by_removal(self) -> bool:
        """Whether leaving out a few records of a failing class (:meth:`removals`) can meet the model.

        ``False`` by default: only suppressing a failing class whole repairs it. ``True`` for the
        history model with a share bound (a value over its share of someone's history set is brought
        within it by leaving out some of its records), so a full-domain search counts those instead
        of the whole class (:mod:`~privacy_plugins.core.anonymize.lattice_repair`).
        """
        return False

    def removals(self, classes: EquivalenceClasses, failing: np.ndarray) -> np.ndarray:
        """Units (rows of ``classes.frame``) to leave out so the ``failing`` classes may meet the model.

        Only asked of a model :attr:`repaired_by_removal`; the caller re-checks every model on what is
        left and suppresses whole the classes that still fail. The units named never take every record
        of a value a class holds, so its value set (and a box rule's verdict on it) is unchanged.
        """
        return np.zeros(classes.n_units, dtype=bool)

    @property
    def intersection_share_bound(self) -> float | None:
        """The one bound its intersection rule holds the most frequent value's share to (max N / ΣN ≤ bound).

        ``None`` (the default) when the rule is not that, or the bound differs per record. The
        history model judges it per class on each record's history set (``docs/composition.md``).
        """
        return None

    def measuring_hierarchy(self) -> Hierarchy | None:
        """The sensitive attribute's hierarchy the model measures generalized values with, if any."""
        return None

    def describe_gap(self, observed: float) -> str:
        """The shortfall in words, e.g. ``"observed l = 1, needs ≥ 2 (short by 1)"``."""
        if self.higher_is_better:
            gap = self.threshold - observed
            return f"observed {self.report_key} = {observed:.4g}, needs ≥ {self.threshold:.4g} (short by {gap:.4g})"
        gap = observed - self.threshold
        return f"observed {self.report_key} = {observed:.4g}, needs ≤ {self.threshold:.4g} (over by {gap:.4g})"

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """A monotone model that fails whenever this one fails (the lattice tags failing sub-lattices with it).

        The model itself when it is monotone under the suppression setting;
        ``None`` when there is no useful relaxation.
        """
        return self if self.is_monotonic(with_suppression=with_suppression) else None

    def suppression_bound(self, classes: EquivalenceClasses) -> float:
        """A lower bound on the records this model suppresses in *every* specialization of ``classes``.

        A lattice node whose bound exceeds the suppression limit fails together with
        every node below it, whether or not the model is monotone. 0 (nothing known)
        unless a model proves a bound (see :attr:`bounds_suppression`).
        """
        return 0.0

    def holds(self, classes: EquivalenceClasses) -> bool:
        """True when every class satisfies the model (used by the diagnosis on each subset)."""
        return not bool(self.violating_classes(classes).any())

    @abstractmethod
    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Boolean mask over classes: true where the class misses the model."""

    @abstractmethod
    def observed(self, classes: EquivalenceClasses) -> float:
        """The table-level measured value (k, l, c*, t or max leakage)."""

    @property
    @abstractmethod
    def threshold(self) -> float:
        """The model's parameter (k, l, c, t or the bound)."""

    def evaluate_tables(
        self,
        original: pd.DataFrame,
        release: pd.DataFrame,
        *,
        quasi_identifiers: Sequence[Hashable],
        control: pd.DataFrame | None = None,
        hierarchies: Mapping[Hashable, Hierarchy] | None = None,
        original_counts: np.ndarray | None = None,
        release_counts: np.ndarray | None = None,
    ) -> ModelResult | None:
        """The verdict of a model judged on tables (:attr:`judged_on_tables`); ``None`` for the others.

        ``original``: the records the candidate was made from; ``release``: the candidate as
        it would be published; ``control``: records of the population held out of it, if any;
        ``original_counts`` / ``release_counts``: the records each row stands for, when the
        tables are distinct rows with their counts (an engine's ``GROUP BY``).
        """
        return None

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Whether the lattice search may prune with this model."""
        if with_suppression:
            return self.monotonic_with_generalization and self.monotonic_with_suppression
        return self.monotonic_with_generalization

    def evaluate(self, classes: EquivalenceClasses, *, include_values: bool = False) -> ModelResult:
        """Check the model on every class and summarise the violations."""
        mask = self.violating_classes(classes)
        return ModelResult(
            model=str(self),
            passed=not bool(mask.any()),
            observed=self.observed(classes),
            threshold=self.threshold,
            violations=violations_from_mask(classes, mask, target=str(self), include_values=include_values),
        )


def bind_hierarchies(
    models: Iterable[PrivacyModel], hierarchies: Mapping[Hashable, Hierarchy] | None
) -> list[PrivacyModel]:
    """Every model bound to ``hierarchies`` (:meth:`PrivacyModel.with_hierarchies`): the one way to do it.

    Anonymizing, checking, publishing and re-measuring a release all measure with the
    models this returns, so a generalized sensitive column is counted the same
    everywhere (DCorrelate over its hierarchy), never as unrelated values.
    """
    given = hierarchies or {}
    return [model.with_hierarchies(given) for model in models]


def validate_on_units(units: pd.DataFrame, records: int, models: Iterable[PrivacyModel]) -> None:
    """Run every model's :meth:`~PrivacyModel.validate_against` on a weighted snapshot instead of the records.

    The checks read the columns and their set of values (the snapshot's distinct
    rows hold exactly those) and compare sizes such as ``k`` with the row count.
    The frame checked repeats the first unit so that its length is ``records``,
    or more than any model's minimum class size — the same verdicts as on the
    records, without building them.
    """
    every = list(models)
    if not every:
        return
    largest = max(model.minimum_class_size for model in every)
    target = min(records, len(units) + largest)
    padded = units
    if target > len(units):  # (one row per record: nothing to pad, nothing copied)
        padding = np.zeros(target - len(units), dtype=np.int64)
        padded = units.iloc[np.r_[np.arange(len(units)), padding]]
    for model in every:
        model.validate_against(padded)
