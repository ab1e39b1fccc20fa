"""Population models without a population of their own take the release's (``with_release_population``)."""

from __future__ import annotations

import pandas as pd
import pytest

from privacy_plugins.core.metrics.population import ReleasePopulation
from privacy_plugins.core.models import KAnonymity, KMap, PopulationUniqueness
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError

CLASSES = EquivalenceClasses.from_frame(pd.DataFrame({"q": [1] * 6 + [2] * 3}), ["q"])


def test_the_release_population_fills_only_what_is_missing() -> None:
    fraction = ReleasePopulation(fraction=0.1)
    assert KMap(10).with_release_population(fraction) == KMap(10, population=0.1)
    assert KMap(10, population=0.5).with_release_population(fraction).population == 0.5
    assert KMap(10).with_release_population(ReleasePopulation(table="c.csv", count_column="n")).population == "c.csv"
    assert PopulationUniqueness(0.1).with_release_population(ReleasePopulation(size=900)).population == 900
    # a table of the source database: exact k-map names it for the engine (the release pulls its sums)
    in_engine = KMap(10).with_release_population(ReleasePopulation(table="census", table_is_file=False))
    assert in_engine.population_table_in_engine() == ("census", "count") and in_engine.population_frame() is None
    assert KAnonymity(2).with_release_population(None) == KAnonymity(2)


@pytest.mark.parametrize(
    ("model", "population", "message"),
    [
        (KMap(10), None, "k_map needs a population"),
        (KMap(10), ReleasePopulation(weights="w"), "k_map cannot use population.weights"),
        (PopulationUniqueness(0.1), ReleasePopulation(table="c.csv"), "got population.table"),
    ],
)
def test_what_cannot_be_filled_is_named(model: object, population: ReleasePopulation | None, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        model.with_release_population(population)  # type: ignore[attr-defined]


def test_a_model_left_without_a_population_says_so_when_measured() -> None:
    for model in (KMap(10), PopulationUniqueness(0.1)):
        with pytest.raises(ConfigurationError, match="needs a"):
            model.evaluate(CLASSES)
