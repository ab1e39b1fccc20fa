"""k-map: every class matches at least k people of the population, not just k records of the sample.

References:
    Sweeney L. Computational disclosure control: a primer on data privacy protection. MIT, 2001.
    El Emam K., Dankar F. K. Protecting privacy using k-anonymity. JAMIA 15(5), 2008.
    ARX: ``criteria/KMap`` (exact with a population subset; estimated with a Poisson model).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.population import COUNT_COLUMN, ReleasePopulation, population_class_sizes
from privacy_plugins.core.metrics.population_levels import PopulationLevels
from privacy_plugins.core.models.base import ModelResult, PrivacyModel
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import ClassViolations, size_histogram
from privacy_plugins.errors import ConfigurationError

__all__ = ["KMap"]

ESTIMATORS: tuple[str, ...] = ("poisson", "zero_truncated_poisson")


def _table(path: str) -> pd.DataFrame:
    """The table at ``path``, read again only when the file changed (a lattice search asks per node)."""
    try:
        stat = os.stat(path)
    except OSError:
        stat = None
    return _read(path, None if stat is None else (stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=4)
def _read(path: str, version: tuple[int, int] | None) -> pd.DataFrame:
    from privacy_plugins.core.io import read_table  # (io reads files; imported only when a table is named)

    return read_table(path)


def derived_k(k: int, fraction: float, estimator: str, significance_level: float) -> int:
    """ARX's k': the sample class size at which a class maps to ≥ k people with 1 − significance confidence.

    With λ = f·k, the smallest c with P(X ≤ c) ≥ 1 − α for X ~ Poisson(λ) (plus one), or the
    zero-truncated Poisson; never above k.

    Example:
        >>> derived_k(10, 0.1, "poisson", 0.01), derived_k(10, 1.0, "poisson", 0.01)
        (6, 10)
    """
    lam = fraction * k
    target = 1.0 - significance_level

    def pmf(c: int) -> float:
        return math.exp(c * math.log(lam) - lam - math.lgamma(c + 1)) if lam > 0 else float(c == 0)

    if estimator == "poisson":
        counter, value = 0, 0.0
        while value < target:
            value = sum(pmf(i) for i in range(counter + 1))
            counter += 1
            if counter >= k:
                break
        return min(k, counter + 1)
    counter, value, norm = 1, 0.0, 1.0 - pmf(0)
    while value < target:
        value += pmf(counter) / norm
        counter += 1
        if counter >= k:
            break
    return min(k, counter)


@dataclass(frozen=True)
class KMap(PrivacyModel):
    """Every class's population count ≥ ``k``; ``k``: integer ≥ 1.

    ``population``: a path to a population table (one row per QI combination, its
    count in ``count_column``; in a release also a table of the source database) — exact:
    a class's count is the people of the population table whose combination generalizes
    to the class's (inside a full-domain search: the table grouped by the node's labels,
    :class:`~privacy_plugins.core.metrics.population_levels.PopulationLevels`; a class a
    search groups from raw records without a node: the sum over its members'
    combinations); or a sampling fraction in (0, 1] — estimated as ARX does: the class
    needs ``derived_k`` records (Poisson or zero-truncated Poisson, ``significance_level``).

    Monotone under generalization and suppression in both forms, so the lattice prunes with it.
    Exact form, proof: let F(E) be the people whose raw combination generalizes to class E's
    labels. (1) Generalization: a node N' ≥ N maps each class E of N into one class E' of N'
    (the hierarchy is a tree: a value's label at a higher level is a function of its label at
    a lower one), and every person generalizing to E generalizes to E', so F(E') ≥ F(E) — in
    fact F(E') is the sum of F over the children of E', whether the sample holds them or not.
    So E' violates (F(E') < k) only if every class E of N inside it violates (F(E) ≤ F(E')):
    the records suppressed at N' are a subset of those suppressed at N. (2) Suppression: F(E)
    depends on E's labels and the population alone, so removing other classes never changes
    a class's verdict. Hence if N satisfies within the limit, so does every N' ≥ N. The
    estimated form is a class-size threshold (k-anonymity with k'), monotone for the same reasons.

    Example:
        >>> import pandas as pd
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1] * 6 + [2] * 3}), ["q"])
        >>> model = KMap(10, population=0.1)
        >>> model.minimum_class_size, model.violating_classes(classes).tolist(), str(model)
        (6, [False, True], '10-map (estimated as 6-anonymity, poisson)')
    """

    k: int
    population: float | str | None = None
    estimator: str = "poisson"
    significance_level: float = 0.01
    count_column: str = COUNT_COLUMN
    _frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    _hierarchies: tuple[tuple[Hashable, Hierarchy], ...] = field(default=(), compare=False, repr=False)
    #: Binds the model to its population on first use (a release: the table pulled, hierarchies built).
    _binder: Callable[[KMap], PrivacyModel] | None = field(default=None, compare=False, repr=False)
    #: The population encoded on the last lattice search's snapshot (``id`` → (snapshot, levels));
    #: under key -1, the model :attr:`_binder` bound.
    _lattice: dict[int, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    monotonic_with_suppression: ClassVar[bool] = True
    config_name: ClassVar[str] = "k_map"
    family: ClassVar[str] = "k-map"
    report_key: ClassVar[str] = "k_map"

    def __post_init__(self) -> None:
        check_integer(self.k, name="k")
        check_fraction(self.significance_level, name="significance_level")
        if self.estimator not in ESTIMATORS:
            raise ConfigurationError(f"estimator must be one of {list(ESTIMATORS)}, got {self.estimator!r}")
        if self.population is None or isinstance(self.population, str):
            return  # None: the release's population: block fills it in (with_release_population)
        check_fraction(self.population, name="population", open_low=True)

    def with_release_population(self, population: ReleasePopulation | None) -> KMap:
        """Its own population, else the release's sampling fraction or population table file.

        Raises:
            ConfigurationError: neither gives one this model can use (a size, weights or a
                table of the source database: the estimated form needs f, the exact one a file).
        """
        if self.population is not None:
            return self
        if population is None:
            raise ConfigurationError(
                "k_map needs a population: give it its own (population: 0.1 or a population table file) "
                "or the release a population: block"
            )
        if population.fraction is not None:
            return replace(self, population=population.fraction)
        if population.table is not None:  # a file, or a table of the source database (pulled summed, once)
            return replace(self, population=population.table, count_column=population.count_column)
        raise ConfigurationError(
            f"k_map cannot use {population.given()}: it needs population.fraction or population.table; "
            "give k_map its own population"
        )

    def _fraction(self) -> float:
        """The sampling fraction of the estimated form (refused while the population is missing)."""
        if self.population is None:
            self.with_release_population(None)  # raises, naming what is missing
        return float(self.population)  # type: ignore[arg-type]

    @property
    def exact(self) -> bool:
        """True with a population table."""
        return isinstance(self.population, str)

    @property
    def judged_by_size(self) -> bool:  # type: ignore[override]
        """The estimated form is a class-size threshold."""
        return not self.exact

    @property
    def minimum_class_size(self) -> int:
        """K' (estimated form); 1 with a table (any class may map to k people)."""
        if self.exact:
            return 1
        return derived_k(self.k, self._fraction(), self.estimator, self.significance_level)

    def __str__(self) -> str:
        if self.exact:
            return f"{self.k}-map (population table {self.population})"
        if self.population is None:
            return f"{self.k}-map (the release's population)"
        return f"{self.k}-map (estimated as {self.minimum_class_size}-anonymity, {self.estimator})"

    @property
    def threshold(self) -> float:
        """K."""
        return float(self.k)

    def bound_lazily(self, bind: Callable[[PrivacyModel], PrivacyModel]) -> KMap:
        """The exact form binding itself with ``bind`` when it first reads its population (never before).

        ``bind`` gets this model (unbound) and returns it with its table and hierarchies; QI
        hierarchies bound later (a run's own) are kept over those ``bind`` gives.
        """
        return replace(self, _binder=bind) if self.exact else self

    def _resolved(self) -> KMap:
        """This model, bound by :attr:`_binder` (once) when it has one."""
        if self._binder is None:
            return self
        if -1 not in self._lattice:
            bound = self._binder(replace(self, _binder=None))
            assert isinstance(bound, KMap)
            self._lattice[-1] = replace(bound, _hierarchies=self._hierarchies) if self._hierarchies else bound
        resolved: KMap = self._lattice[-1]
        return resolved

    def population_table(self) -> pd.DataFrame:
        """The population table (exact form), read once per path.

        Raises:
            ConfigurationError: the file cannot be read or has no count column (naming k_map's population).
        """
        if self._binder is not None:
            return self._resolved().population_table()
        try:
            table = self._frame if self._frame is not None else _table(str(self.population))
        except (OSError, ConfigurationError) as exc:
            raise ConfigurationError(f"k_map population {self.population}: {exc}") from None
        if self.count_column not in table.columns:
            raise ConfigurationError(f"k_map population {self.population} has no count column {self.count_column!r}")
        return table

    def validate_against(self, table: pd.DataFrame) -> None:
        """The population table (exact form) must be readable, with its count column."""
        super().validate_against(table)
        if not self.exact:
            self._fraction()
        if self.exact:
            self.population_table()

    def population_sizes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Each class's population count (exact form).

        Classes a lattice search built from a snapshot (:attr:`EquivalenceClasses.lattice_node`)
        carry level codes, not values: their counts are the population table grouped by the
        node's labels (:class:`~privacy_plugins.core.metrics.population_levels.PopulationLevels`,
        encoded once per snapshot), the same counts the published table is later looked up in.

        Raises:
            ConfigurationError: the classes carry neither quasi-identifier values nor a lattice node.
            PopulationMismatchError: the population table does not cover the sample (naming the columns).
        """
        if self._binder is not None:
            return self._resolved().population_sizes(classes)
        if classes.lattice_node is not None and any(q not in classes.frame.columns for q in classes.quasi_identifiers):
            snapshot, node, units = classes.lattice_node
            people = self._levels(snapshot).people(node)
            sizes = np.zeros(classes.n_classes, dtype=np.float64)
            sizes[classes.class_of_row] = people if units is None else people[units]
            return sizes
        if any(q not in classes.frame.columns for q in classes.quasi_identifiers):
            raise ConfigurationError(
                f"{self} looks classes up by their quasi-identifier values, which this search does not keep: "
                "check or measure a table with it, or anonymize with k_map's population as a sampling fraction"
            )
        everyone = self._fully_generalized(classes)  # marked suppressed rows: every QI its hierarchy's top
        if not everyone.any():
            return population_class_sizes(classes, self._generalized_table(classes), count_column=self.count_column)
        table = self.population_table()
        sizes = np.full(classes.n_classes, float(pd.to_numeric(table[self.count_column]).sum()))
        if not everyone.all():
            rest = classes.restricted(~everyone[classes.class_of_row])  # (class order kept)
            sizes[~everyone] = population_class_sizes(
                rest, self._generalized_table(rest), count_column=self.count_column
            )
        return sizes

    def _fully_generalized(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes whose every QI holds its hierarchy's top label (they map to the whole population)."""
        tops = {column: str(h.labels[h.height][0]) for column, h in self._hierarchies}
        if not classes.quasi_identifiers or any(q not in tops for q in classes.quasi_identifiers):
            return np.zeros(classes.n_classes, dtype=bool)
        first = np.zeros(classes.n_classes, dtype=np.int64)
        first[classes.class_of_row[::-1]] = np.arange(classes.n_units - 1, -1, -1)  # a unit of each class
        rows = classes.frame.iloc[first]
        return np.logical_and.reduce([rows[q].astype(str).to_numpy() == tops[q] for q in classes.quasi_identifiers])

    def _levels(self, snapshot: Any) -> PopulationLevels:
        """The population encoded on ``snapshot``'s hierarchies and units, once per snapshot."""
        cached = self._lattice.get(id(snapshot))
        if cached is not None and cached[0] is snapshot:
            return cached[1]
        levels = PopulationLevels.encode(
            self.population_table(),
            count_column=self.count_column,
            quasi_identifiers=snapshot.quasi_identifiers,
            hierarchies=snapshot.hierarchies,
            unit_leaves=snapshot.leaf_codes,
            unit_weights=snapshot.weights,
        )
        self._lattice.clear()  # one search at a time: never keep an old snapshot alive
        self._lattice[id(snapshot)] = (snapshot, levels)
        return levels

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes mapping to fewer than k people."""
        if self.exact:
            return self.population_sizes(classes) < self.k
        return classes.sizes < self.minimum_class_size

    def observed(self, classes: EquivalenceClasses) -> float:
        """The smallest population count: exact, or estimated as (smallest class) / f."""
        if self.exact:
            return float(self.population_sizes(classes).min())
        return float(classes.sizes.min()) / self._fraction()

    def population_table_in_engine(self) -> tuple[str, str] | None:
        """The exact form's population when it names no file: a table beside the data, joined there."""
        if (
            not self.exact
            or self._frame is not None
            or self._binder is not None
            or os.path.isfile(str(self.population))
        ):
            return None
        return str(self.population), self.count_column

    def evaluate_population_sizes(self, sample: np.ndarray, people: np.ndarray) -> ModelResult:
        """Exact k-map from each class's records and people (the join ran in the engine); as :meth:`evaluate`."""
        violating = people < self.k
        return ModelResult(
            model=str(self),
            passed=not bool(violating.any()),
            observed=float(people.min()) if people.shape[0] else float("inf"),
            threshold=self.threshold,
            violations=ClassViolations(
                target=str(self),
                classes=int(violating.sum()),
                records=int(sample[violating].sum()),
                size_histogram=size_histogram(sample[violating]),
            ),
        )

    def with_population_frame(self, frame: pd.DataFrame) -> KMap:
        """The same model reading ``frame`` instead of the file (tests, callers holding the table)."""
        return replace(self, _frame=frame)

    def population_frame(self) -> pd.DataFrame | None:
        """The exact form's population table when it is at hand (a file or a frame; not one left in an engine)."""
        if self._binder is not None:
            return self._resolved().population_frame()
        if not self.exact or self.population_table_in_engine() is not None:
            return None
        return self.population_table()

    def with_hierarchies(self, hierarchies: Mapping[Hashable, Hierarchy]) -> KMap:
        """The model knowing the QIs' hierarchies (a population table of raw combinations then serves published ones).

        A published table is looked up in the population table generalized to the level
        every published label of a QI sits at.
        """
        return replace(self, _hierarchies=tuple(hierarchies.items())) if hierarchies else self

    def _generalized_table(self, classes: EquivalenceClasses) -> pd.DataFrame:
        """The population table with each QI generalized to the one level all published labels sit at."""
        table = self.population_table()
        changed = False
        for column, hierarchy in self._hierarchies:
            if column not in classes.quasi_identifiers or column not in table.columns:
                continue
            published = set(classes.frame[column].astype(str).unique().tolist())
            levels = [
                level for level in range(hierarchy.height + 1) if published <= set(map(str, hierarchy.labels[level]))
            ]
            if levels and levels[0] > 0:
                table = table.assign(**{str(column): hierarchy.generalize(table[column], levels[0])})
                changed = True
        if not changed:
            return table
        keys = list(classes.quasi_identifiers)
        return table.groupby(keys, sort=False, dropna=False)[self.count_column].sum().reset_index()
