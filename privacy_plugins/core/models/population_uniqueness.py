"""Population uniqueness: the estimated share of the population unique on the QIs stays at or below a bound.

References:
    Dankar F. K., El Emam K., Neisa A., Roffey T. Estimating the re-identification risk of
    clinical data sets. BMC Med Inform Decis Mak 12:66, 2012. ARX: ``criteria/PopulationUniqueness``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from privacy_plugins.core.metrics.population import ReleasePopulation
from privacy_plugins.core.metrics.uniqueness import ESTIMATORS, ClassSizeHistogram, Estimate, estimate_all
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE, check_fraction, check_real
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

__all__ = ["PopulationUniqueness"]


@dataclass(frozen=True)
class PopulationUniqueness(PrivacyModel):
    """Estimated population uniques / N ≤ ``max``.

    ``max`` in [0, 1]; ``estimator``: ``"pitman"``, ``"zayatz"``, ``"snb"`` or
    ``"dankar"`` (default); ``population``: the sampling fraction (a number in
    (0, 1]) or the population size (an integer above 1). An estimator without an
    estimate fails the model (its reason is in the report's gap). When the bound is
    missed the sample uniques are the violating classes: without them every
    estimator gives 0.

    Not monotone (declared, so the lattice never prunes with it): the estimators are
    fitted to the class-size histogram, and merging classes can raise them — Zayatz's
    rises when two classes of 2 become one of 4 while the uniques stay
    (tests/core/models/test_population_models.py). ARX declares Zayatz monotone.

    Example:
        >>> import pandas as pd
        >>> classes = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1, 2, 2, 3, 3, 3]}), ["q"])
        >>> model = PopulationUniqueness(0.01, population=0.5, estimator="zayatz")
        >>> round(model.observed(classes), 4), model.violating_classes(classes).tolist()
        (0.0573, [True, False, False])
    """

    max: float
    population: float | None = None
    estimator: str = "dankar"

    monotonic_with_generalization: ClassVar[bool] = False
    depends_on_table_distribution: ClassVar[bool] = True
    config_name: ClassVar[str] = "population_uniqueness"
    family: ClassVar[str] = "population uniqueness"
    report_key: ClassVar[str] = "population_uniqueness"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_fraction(self.max, name="max")
        if self.estimator not in ESTIMATORS:
            raise ConfigurationError(f"estimator must be one of {list(ESTIMATORS)}, got {self.estimator!r}")
        if self.population is None:
            return  # the release's population: block fills it in (with_release_population)
        value = check_real(self.population, name="population")
        if value <= 0 or (value > 1 and not float(value).is_integer()):
            raise ConfigurationError(
                f"population must be a sampling fraction in (0, 1] or a population size (an integer > 1), got {value:g}"
            )

    def with_release_population(self, population: ReleasePopulation | None) -> PopulationUniqueness:
        """Its own population, else the release's sampling fraction or population size.

        Raises:
            ConfigurationError: neither gives one (a population table or weights: give it its own).
        """
        if self.population is not None:
            return self
        if population is not None and population.fraction is not None:
            return replace(self, population=population.fraction)
        if population is not None and population.size is not None and population.size > 1:
            return replace(self, population=float(population.size))
        given = "no population" if population is None else population.given()
        raise ConfigurationError(
            f"population_uniqueness needs a sampling fraction or a population size, got {given}: "
            "give it its own population or the release population.fraction or population.size"
        )

    def __str__(self) -> str:
        return f"population uniqueness ({self.estimator}) <= {self.max:g}"

    @property
    def minimum_class_size(self) -> int:
        """2: a table without sample uniques has every estimate 0, whatever the bound."""
        return 2

    @property
    def threshold(self) -> float:
        """The bound on the unique share."""
        return float(self.max)

    def estimate(self, classes: EquivalenceClasses) -> Estimate:
        """The chosen estimator on the classes' histogram."""
        if self.population is None:
            self.with_release_population(None)  # raises, naming what is missing
        assert self.population is not None
        n = classes.n_rows
        size = math.floor(n / self.population + 0.5) if self.population <= 1 else int(self.population)
        if size < n:
            raise ConfigurationError(f"population size {size} is smaller than the sample ({n} records)")
        return estimate_all(ClassSizeHistogram.from_sizes(classes.sizes, population_size=size))[self.estimator]

    def observed(self, classes: EquivalenceClasses) -> float:
        """The estimated unique share (``inf`` when the estimator has none)."""
        fraction = self.estimate(classes).fraction
        return math.inf if fraction is None else fraction

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """The sample uniques when the estimate exceeds ``max`` (or there is none); else none."""
        if self.observed(classes) <= self.max + TOLERANCE:
            return np.zeros(classes.n_classes, dtype=bool)
        return classes.sizes == 1
