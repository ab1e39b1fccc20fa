"""Re-identification risk beyond the sample: prosecutor, journalist and marketer, and population uniqueness.

The released table is a sample of n records from a population of N people.
Every measure here is read off the sample's class sizes f_j (and, when the
user supplies one, the population's class sizes F_j for the same quasi-identifier
combinations), vectorized over classes — never a loop over records.

* **Prosecutor** (the attacker knows the target is in the table): record risk
  1/f_j; ``highest`` = 1/min f_j, ``average`` = J/n (J classes).
* **Journalist** (the attacker does not know whether the target is in it, and
  matches against the population): record risk 1/F_j; F_j is exact from a
  population table, otherwise the Horvitz–Thompson estimate F̂_j = f_j/f (at
  least f_j, at most N); ``journalist`` = 1/min F_j, ``journalist_average`` =
  (1/n) Σ_j f_j/F_j.
* **Marketer** (re-identifies as many records as possible, matching every
  record): the expected share re-identified, (1/n) Σ_j f_j/F_j against a
  population table; without one, ARX's sample-based estimate J/n (the
  identification database is taken to hold the sample's people: an upper bound).
* **Sample uniques**: the share of records in classes of size 1.
* **Population uniqueness**: the share of the population unique on the QIs,
  estimated by Pitman, Zayatz, SNB and Dankar's rule
  (:mod:`~privacy_plugins.core.metrics.uniqueness`), and exact from a population
  table.

The definitions, formulas and how they relate to ARX are in docs/population-risk.md.

References:
    El Emam K., Dankar F. K. Protecting privacy using k-anonymity. JAMIA 15(5):627–637, 2008.
    Dankar F. K., El Emam K. Practicing differential privacy in health care: a review. TDP 6(1), 2013.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.metrics.individual_risk import individual_risk
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.metrics.uniqueness import ClassSizeHistogram, estimate_all
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import (
    ConfigurationError,
    PopulationColumnError,
    PopulationMismatchError,
    UnknownColumnError,
)

__all__ = [
    "ATTACKERS",
    "RISK_INTERVAL_ENDS",
    "PopulationModel",
    "PopulationRisk",
    "ReleasePopulation",
    "attacker_risk_distributions",
    "population_class_sizes",
    "population_risk",
    "population_risk_from_sizes",
    "weights_of",
]

#: The column of a population table holding each combination's number of people.
COUNT_COLUMN = "count"


@dataclass(frozen=True)
class PopulationModel:
    """What is known about the population the table was sampled from: give exactly one.

    Attributes:
        sampling_fraction: n/N, in (0, 1]; N = n / f rounded half up, as in ARX.
        population_size: N, an integer ≥ n.
        population_table: one row per QI combination with its population count in
            ``count_column`` (census counts); N = the sum of the counts.
        count_column: the count column of ``population_table``.
        weight_column: a column of the sample holding each record's sampling weight (the people it
            stands for, as survey weights do): F_j = the class's weight sum, N = the total weight.

    Example:
        >>> PopulationModel(sampling_fraction=0.1).size_for(30)
        300
    """

    sampling_fraction: float | None = None
    population_size: int | None = None
    population_table: pd.DataFrame | None = field(default=None, compare=False, hash=False)
    count_column: str = COUNT_COLUMN
    weight_column: Hashable | None = None

    def __post_init__(self) -> None:
        options = (self.sampling_fraction, self.population_size, self.population_table, self.weight_column)
        if sum(x is not None for x in options) != 1:
            raise ConfigurationError(
                "population: give exactly one of sampling_fraction, population_size, population_table or weight_column"
            )
        if self.sampling_fraction is not None:
            check_fraction(self.sampling_fraction, name="population sampling_fraction", open_low=True)
        if self.population_size is not None:
            check_integer(self.population_size, name="population_size")
        if self.population_table is not None and self.count_column not in self.population_table.columns:
            raise PopulationColumnError(
                f"population_table has no count column {self.count_column!r}; "
                f"columns: {list(self.population_table.columns)!r}"
            )

    def size_for(self, sample_records: int) -> int:
        """N for a sample of ``sample_records`` records (checked to be at least the sample)."""
        if self.sampling_fraction is not None:
            size = math.floor(sample_records / self.sampling_fraction + 0.5)  # Java's Math.round, as ARX
        elif self.population_size is not None:
            size = self.population_size
        elif self.population_table is not None:
            size = int(self.population_table[self.count_column].sum())
        else:
            raise ConfigurationError("population: the size of a weighted sample is its total weight (see weights_of)")
        if size < sample_records:
            raise PopulationMismatchError(
                f"population_size {size} is smaller than the sample ({sample_records} records)"
            )
        return size


@dataclass(frozen=True)
class ReleasePopulation:
    """A release's population model as settings, before any data is read (the spec's ``population:`` block).

    Exactly one of ``fraction`` (in (0, 1]), ``size`` (N), ``table`` (a population table: a
    file path, or a table name in the source's database; its counts in ``count_column``) or
    ``weights`` (a column of sampling weights). :meth:`PrivacyModel.with_release_population`
    reads it; ``table_is_file`` says whether ``table`` names a file.
    """

    fraction: float | None = None
    size: int | None = None
    table: str | None = None
    count_column: str = COUNT_COLUMN
    weights: str | None = None
    table_is_file: bool = True

    def given(self) -> str:
        """The setting given, as ``population.<key>`` (for messages)."""
        for key in ("fraction", "size", "table", "weights"):
            if getattr(self, key) is not None:
                return f"population.{key}"
        return "population"


@dataclass(frozen=True)
class PopulationRisk:
    """Sample and population risk of one table over one QI set (fractions in [0, 1]; ``None`` = not available).

    ``unavailable`` maps an estimator without an estimate to the reason;
    ``dankar_model`` names the estimator Dankar's rule chose.
    """

    records: int
    population_size: int
    sampling_fraction: float
    threshold: float
    sample_uniques: float
    prosecutor: float
    journalist: float
    marketer: float
    highest: float
    average: float
    journalist_average: float
    prosecutor_at_risk: float
    journalist_at_risk: float
    pitman: float | None
    zayatz: float | None
    snb: float | None
    dankar: float | None
    dankar_model: str | None
    individual_risk: float = 0.0
    individual_risk_average: float = 0.0
    population_uniques: float | None = None
    exact_population: bool = False
    unavailable: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return to_jsonable(self)


def _numeric(values: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


def _join_keys(population: pd.DataFrame, sample: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """QI values as join keys: numbers as floats where both sides hold numbers (1 meets 1.0), else text."""
    left: dict[Hashable, pd.Series] = {}
    right: dict[Hashable, pd.Series] = {}
    for column in population.columns:
        both_numeric = _numeric(population[column]) and _numeric(sample[column])
        for out, values in ((left, population[column]), (right, sample[column])):
            out[column] = values.astype(np.float64) if both_numeric else values.astype(str)
    return pd.DataFrame(left), pd.DataFrame(right)


def population_class_sizes(
    classes: EquivalenceClasses, table: pd.DataFrame, *, count_column: str = COUNT_COLUMN
) -> np.ndarray:
    """F_j for every class: the population count of the QI combinations its records hold (a join, no row loop).

    A class of published (or raw) records holds one combination, and F_j is its
    count. A class formed by a search over raw records (its members' combinations
    generalized together) gets the sum over the distinct combinations among its
    members — the people known to share the class's published values, a lower
    bound of its population when the table lists raw combinations only.

    Raises:
        UnknownColumnError: the population table lacks a quasi-identifier column.
        ConfigurationError: a sample combination is missing from the table, a count is not a
            number >= 0, or a class's count is smaller than the sample class. The counts of a
            combination listed more than once (say, per region) are summed.
    """
    qis = list(classes.quasi_identifiers)
    missing = [q for q in qis if q not in table.columns]
    if missing:
        raise PopulationColumnError(f"population_table lacks quasi-identifier column(s) {missing!r}")
    counts = pd.to_numeric(table[count_column], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(counts).any() or (counts < 0).any():
        raise PopulationMismatchError(f"population_table column {count_column!r} must hold counts >= 0")
    if not qis:  # no quasi-identifier: one class, the whole population
        sizes = np.full(classes.n_classes, float(counts.sum()))
        if (sizes < classes.sizes).any():
            raise PopulationMismatchError("population_table counts are smaller than the sample for 1 combination(s)")
        return sizes
    sample = classes.frame[qis].reset_index(drop=True)
    keys, rows = _join_keys(table[qis].reset_index(drop=True), sample)
    if keys.duplicated().any():  # a combination listed per region, say: its counts add up
        summed = keys.assign(_count=counts).groupby(qis, sort=False, dropna=False)["_count"].sum().reset_index()
        keys, counts = summed[qis], summed["_count"].to_numpy(dtype=np.float64)
    positions = keys.assign(_row=np.arange(len(keys)))
    row_of_unit = rows.merge(positions, on=qis, how="left", sort=False)["_row"].to_numpy(dtype=np.float64)
    absent = np.isnan(row_of_unit)
    if absent.any():
        combinations = int(rows[absent].drop_duplicates().shape[0])
        raise PopulationMismatchError(
            f"population_table lacks {combinations} quasi-identifier combination(s) present in the sample"
        )
    pairs = np.unique(classes.class_of_row.astype(np.int64) * len(keys) + row_of_unit.astype(np.int64))
    sizes = np.bincount(pairs // len(keys), weights=counts[pairs % len(keys)], minlength=classes.n_classes)
    short = int((sizes < classes.sizes).sum())
    if short:
        raise PopulationMismatchError(f"population_table counts are smaller than the sample for {short} combination(s)")
    return sizes


def _people_per_class(f_j: np.ndarray, population_size: int, population_sizes: np.ndarray | None) -> np.ndarray:
    """F_j: the given population class sizes (at least f_j), else the Horvitz–Thompson f_j/f in [f_j, N]."""
    if population_sizes is None:
        fraction = float(f_j.sum()) / population_size
        return np.minimum(np.maximum(f_j / fraction, f_j), float(population_size))
    # (weights below 1 can sum below the sample: a class holds at least its own records)
    return np.maximum(np.asarray(population_sizes, dtype=np.float64), f_j)


def population_risk_from_sizes(
    sizes: np.ndarray,
    *,
    population_size: int,
    population_sizes: np.ndarray | None = None,
    threshold: float = DEFAULT_RISK_THRESHOLD,
    population_uniques: int | None = None,
    exact: bool | None = None,
) -> PopulationRisk:
    """Every measure of :class:`PopulationRisk` from the sample class sizes (and F_j if known).

    ``exact`` (default: whether ``population_sizes`` is given) says the F_j are counts, not
    estimates (sampling weights): the marketer is then measured against them.
    """
    threshold = check_fraction(threshold, name="risk_threshold")
    f_j = np.asarray(sizes, dtype=np.float64)
    n = float(f_j.sum())
    fraction = n / population_size
    exact = population_sizes is not None if exact is None else exact
    big_f = _people_per_class(f_j, population_size, population_sizes)
    matched = float((f_j / big_f).sum()) / n
    individual = individual_risk(f_j, big_f)
    estimates = estimate_all(ClassSizeHistogram.from_sizes(sizes, population_size=population_size))
    return PopulationRisk(
        records=int(n),
        population_size=int(population_size),
        sampling_fraction=fraction,
        threshold=threshold,
        sample_uniques=float((f_j == 1).sum()) / n,
        prosecutor=1.0 / float(f_j.min()),
        journalist=1.0 / float(big_f.min()),
        marketer=matched if exact else len(f_j) / n,
        highest=1.0 / float(f_j.min()),
        average=len(f_j) / n,
        journalist_average=matched,
        prosecutor_at_risk=float(f_j[1.0 / f_j > threshold].sum()) / n,
        journalist_at_risk=float(f_j[1.0 / big_f > threshold].sum()) / n,
        pitman=estimates["pitman"].fraction,
        zayatz=estimates["zayatz"].fraction,
        snb=estimates["snb"].fraction,
        dankar=estimates["dankar"].fraction,
        dankar_model=estimates["dankar"].model,
        individual_risk=float(individual.max()),
        individual_risk_average=float((f_j * individual).sum()) / n,
        population_uniques=None if population_uniques is None else population_uniques / population_size,
        exact_population=exact,
        unavailable={k: v.reason for k, v in estimates.items() if v.fraction is None and v.reason},
    )


def weights_of(classes: EquivalenceClasses, column: Hashable) -> np.ndarray:
    """The sampling weight of every record (finite, > 0), in the rows' order (per unit × its records in a snapshot).

    Raises:
        UnknownColumnError: the weight column is not in the table.
        ConfigurationError: a weight is missing, not a number, or not positive.
    """
    if column not in classes.frame.columns:
        raise UnknownColumnError(f"population weight_column {column!r} is not in the table")
    weights = pd.to_numeric(classes.frame[column], errors="coerce").to_numpy(dtype=np.float64)
    bad = int((~np.isfinite(weights) | (weights <= 0)).sum())
    if bad:
        raise ConfigurationError(f"population weight_column {column!r} has {bad} weight(s) that are not numbers > 0")
    # a unit of a weighted snapshot (the weight column among its grouped columns) stands for its count of records
    return weights if classes.weights is None else weights * classes.unit_weights


def _class_population(
    classes: EquivalenceClasses, population: PopulationModel
) -> tuple[int, np.ndarray | None, bool, int | None]:
    """N, F_j per class (``None``: estimated from f), whether they are counts, and the table's population uniques."""
    if population.weight_column is not None:
        weights = weights_of(classes, population.weight_column)
        sizes = np.bincount(classes.class_of_row, weights=weights, minlength=classes.n_classes)
        return max(classes.n_rows, math.floor(float(weights.sum()) + 0.5)), sizes, False, None
    size = population.size_for(classes.n_rows)
    if population.population_table is None:
        return size, None, False, None
    table = population.population_table
    population_sizes = population_class_sizes(classes, table, count_column=population.count_column)
    per_combination = table.groupby(list(classes.quasi_identifiers), sort=False, dropna=False)[
        population.count_column
    ].sum()
    return size, population_sizes, True, int((pd.to_numeric(per_combination) == 1).sum())


def population_risk(
    classes: EquivalenceClasses, population: PopulationModel, *, threshold: float = DEFAULT_RISK_THRESHOLD
) -> PopulationRisk:
    """:class:`PopulationRisk` of grouped records under ``population``.

    Example:
        >>> frame = pd.DataFrame({"zip": ["a", "a", "b", "c"]})
        >>> classes = EquivalenceClasses.from_frame(frame, ["zip"])
        >>> risk = population_risk(classes, PopulationModel(sampling_fraction=0.5))
        >>> risk.sample_uniques, risk.highest, risk.journalist, risk.average
        (0.5, 1.0, 0.5, 0.75)
    """
    size, population_sizes, exact, uniques = _class_population(classes, population)
    return population_risk_from_sizes(
        classes.sizes,
        population_size=size,
        population_sizes=population_sizes,
        threshold=threshold,
        population_uniques=uniques,
        exact=exact,
    )


#: The upper ends of the record-risk intervals of :func:`attacker_risk_distributions` (ARX's risk
#: distribution: 1/k boundaries down to 1e-6); the first interval is [0, 1e-6], the others (a, b].
RISK_INTERVAL_ENDS: tuple[float, ...] = (
    1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1,
    0.125, 1 / 7, 1 / 6, 0.2, 0.25, 1 / 3, 0.5, 1.0,
)  # fmt: skip
ATTACKERS: tuple[str, ...] = ("prosecutor", "journalist", "marketer")


def _interval_labels() -> list[str]:
    ends = [f"{end:.3g}" for end in RISK_INTERVAL_ENDS]
    return [f"[0, {ends[0]}]", *(f"({low}, {high}]" for low, high in itertools.pairwise(ends))]


def attacker_risk_distributions(classes: EquivalenceClasses, population: PopulationModel) -> dict[str, dict[str, int]]:
    """Records per record-risk interval for each attacker (counts only, never a value).

    A record's risk: prosecutor 1/f_j; journalist 1/F_j; marketer 1/F_j against population
    counts (a table), else 1/f_j — so each attacker's average is the mean of its record risks
    (``average``, ``journalist_average``, ``marketer`` of :class:`PopulationRisk`).

    Example:
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"zip": ["a", "a", "b"]}), ["zip"])
        >>> got = attacker_risk_distributions(classes, PopulationModel(sampling_fraction=0.5))
        >>> got["prosecutor"]["(0.333, 0.5]"], got["prosecutor"]["(0.5, 1]"], got["journalist"]["(0.333, 0.5]"]
        (2, 1, 1)
    """
    size, population_sizes, exact, _ = _class_population(classes, population)
    f_j = classes.sizes.astype(np.float64)
    big_f = _people_per_class(f_j, size, population_sizes)
    risks = {"prosecutor": 1.0 / f_j, "journalist": 1.0 / big_f, "marketer": 1.0 / (big_f if exact else f_j)}
    ends = np.asarray(RISK_INTERVAL_ENDS)
    labels = _interval_labels()
    out: dict[str, dict[str, int]] = {}
    for attacker in ATTACKERS:
        bins = np.minimum(np.searchsorted(ends, risks[attacker] - 1e-12, side="left"), len(ends) - 1)
        counts = np.bincount(bins, weights=f_j, minlength=len(ends))
        out[attacker] = {label: round(float(c)) for label, c in zip(labels, counts, strict=True)}
    return out
