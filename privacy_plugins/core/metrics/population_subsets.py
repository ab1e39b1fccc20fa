"""Population risk of every quasi-identifier subset: each column encoded once, classes combined from codes.

See :mod:`privacy_plugins.core.metrics.population` for the measures and docs/population-risk.md.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

import pandas as pd

from privacy_plugins.core.frame import encode_column
from privacy_plugins.core.metrics.population import PopulationModel, PopulationRisk, population_risk
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import PopulationColumnError

__all__ = ["marginal_model", "population_risk_by_subset"]


def marginal_model(population: PopulationModel, columns: list[Hashable]) -> PopulationModel:
    """The population model restricted to ``columns`` (a table's counts summed over the other columns)."""
    table = population.population_table
    if table is None:
        return population
    missing = [q for q in columns if q not in table.columns]
    if missing:
        raise PopulationColumnError(f"population_table lacks quasi-identifier column(s) {missing!r}")
    summed = table.groupby(columns, dropna=False, sort=False)[population.count_column].sum().reset_index()
    return PopulationModel(population_table=summed, count_column=population.count_column)


def population_risk_by_subset(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    population: PopulationModel,
    threshold: float = DEFAULT_RISK_THRESHOLD,
    max_size: int | None = None,
) -> dict[tuple[Hashable, ...], PopulationRisk]:
    """:class:`PopulationRisk` of every non-empty QI subset (up to ``max_size`` attributes).

    Each column is encoded once and a subset's classes are its columns' codes
    combined (no regrouping of the frame); a population table is summed to the
    subset's columns, so its marginals stay exact.

    Example:
        >>> frame = pd.DataFrame({"zip": ["a", "a", "b"], "sex": ["f", "m", "f"]})
        >>> risks = population_risk_by_subset(frame, quasi_identifiers=["zip", "sex"],
        ...                                   population=PopulationModel(sampling_fraction=0.5))
        >>> [(subset, r.sample_uniques) for subset, r in risks.items()]
        [(('zip',), 0.3333333333333333), (('sex',), 0.3333333333333333), (('zip', 'sex'), 1.0)]
    """
    names = list(quasi_identifiers)
    encoded = {name: encode_column(frame, name) for name in names}
    out: dict[tuple[Hashable, ...], PopulationRisk] = {}
    for size in range(1, (max_size or len(names)) + 1):
        for subset in itertools.combinations(names, size):
            codes = [(encoded[q].codes, encoded[q].cardinality) for q in subset]
            classes = EquivalenceClasses.from_codes(frame, subset, codes)
            out[subset] = population_risk(classes, marginal_model(population, list(subset)), threshold=threshold)
    return out
