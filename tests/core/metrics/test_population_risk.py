"""Population risk (issue 30): prosecutor / journalist / marketer against a record-by-record reference.

The reference below walks the records one by one with dicts and Fractions — no
NumPy, nothing from the package — straight from the definitions in
docs/population-risk.md.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.metrics.population import PopulationModel, population_risk
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

QIS = ["a", "b"]


def naive(rows: list[tuple[int, int]], population: dict[tuple[int, int], int] | None, fraction: Fraction | None,
          threshold: Fraction) -> dict[str, Fraction]:  # fmt: skip
    """Every risk, record by record: f = the record's sample class size, F = its population class size."""
    sample = Counter(rows)
    n = len(rows)
    size = sum(population.values()) if population is not None else round(Fraction(n) / fraction)  # type: ignore[operator]
    f_n = Fraction(n, size)
    prosecutor, journalist = [], []
    for row in rows:
        f = sample[row]
        big = (
            Fraction(population[row])
            if population is not None
            else min(max(Fraction(f) / f_n, Fraction(f)), Fraction(size))
        )
        prosecutor.append(Fraction(1, f))
        journalist.append(1 / big)
    return {
        "sample_uniques": Fraction(sum(1 for row in rows if sample[row] == 1), n),
        "highest": max(prosecutor),
        "average": sum(prosecutor) / n,
        "prosecutor_at_risk": Fraction(sum(1 for r in prosecutor if r > threshold), n),
        "journalist": max(journalist),
        "journalist_average": sum(journalist) / n,
        "journalist_at_risk": Fraction(sum(1 for r in journalist if r > threshold), n),
        "marketer": sum(journalist) / n if population is not None else Fraction(len(sample), n),
    }


def ours(rows: list[tuple[int, int]], model: PopulationModel, threshold: float) -> dict[str, object]:
    frame = pd.DataFrame(rows, columns=QIS)
    return population_risk(EquivalenceClasses.from_frame(frame, QIS), model, threshold=threshold).to_dict()


ROWS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=40)


@settings(max_examples=60)
@given(
    rows=ROWS, extra=st.lists(st.integers(0, 5), min_size=12, max_size=12), threshold=st.sampled_from([0.1, 0.2, 0.5])
)
def test_population_table_risks_match_the_record_by_record_reference(rows, extra, threshold) -> None:
    sample = Counter(rows)
    population = {(a, b): sample.get((a, b), 0) + extra[a * 3 + b] for a in range(4) for b in range(3)}
    population = {key: count for key, count in population.items() if count > 0}
    table = pd.DataFrame([(a, b, c) for (a, b), c in population.items()], columns=[*QIS, "count"])
    got = ours(rows, PopulationModel(population_table=table), threshold)
    want = naive(rows, population, None, Fraction(threshold))
    for key, value in want.items():
        assert got[key] == pytest.approx(float(value), abs=1e-12), key
    assert got["exact_population"] is True
    assert got["population_uniques"] == pytest.approx(
        sum(1 for c in population.values() if c == 1) / sum(population.values())
    )


@settings(max_examples=60)
@given(rows=ROWS, fraction=st.sampled_from([0.01, 0.1, 0.25, 0.5, 1.0]))
def test_fraction_risks_match_the_reference_and_keep_their_bounds(rows, fraction) -> None:
    got = ours(rows, PopulationModel(sampling_fraction=fraction), 0.2)
    want = naive(rows, None, Fraction(fraction).limit_denominator(1000), Fraction(1, 5))
    for key, value in want.items():
        assert got[key] == pytest.approx(float(value), abs=1e-12), key
    for key in (
        "sample_uniques",
        "prosecutor",
        "journalist",
        "marketer",
        "highest",
        "average",
        "pitman",
        "zayatz",
        "snb",
        "dankar",
    ):
        assert got[key] is None or 0.0 <= got[key] <= 1.0, key
    assert got["marketer"] <= got["highest"]
    assert got["journalist"] <= got["prosecutor"] == got["highest"]
    assert got["journalist_average"] <= got["average"]
    assert got["sample_uniques"] <= got["average"]
    assert got["journalist_at_risk"] <= got["prosecutor_at_risk"]


def test_worked_example_sampling_half() -> None:
    # classes {a, a}, {b}, {c}; N = 8: F̂ = 4, 2, 2 → journalist 1/2, journalist average (2/4 + 1/2 + 1/2)/4
    got = ours([(0, 0), (0, 0), (1, 0), (2, 0)], PopulationModel(sampling_fraction=0.5), 0.2)
    assert (got["sample_uniques"], got["highest"], got["average"], got["journalist"]) == (0.5, 1.0, 0.75, 0.5)
    assert got["journalist_average"] == 0.375
    assert got["population_size"] == 8


@pytest.mark.parametrize("fraction", [0, 0.0, -0.1, 1.5])
def test_fraction_outside_the_unit_interval_is_refused_by_name(fraction) -> None:
    with pytest.raises(ConfigurationError, match=r"sampling_fraction must be in \(0, 1\]"):
        PopulationModel(sampling_fraction=fraction)


def test_population_table_errors_name_the_setting() -> None:
    rows = [(0, 0), (0, 0), (1, 1)]
    missing = pd.DataFrame({"a": [0], "b": [0], "count": [5]})
    with pytest.raises(ConfigurationError, match=r"^population_table lacks 1 quasi-identifier combination"):
        ours(rows, PopulationModel(population_table=missing), 0.2)
    small = pd.DataFrame({"a": [0, 1], "b": [0, 1], "count": [1, 4]})
    with pytest.raises(ConfigurationError, match=r"^population_table counts are smaller than the sample for 1"):
        ours(rows, PopulationModel(population_table=small), 0.2)
    with pytest.raises(UnknownColumnError, match=r"population_table has no count column 'count'"):
        PopulationModel(population_table=pd.DataFrame({"a": [0], "b": [0]}))
    with pytest.raises(UnknownColumnError, match=r"population_table lacks quasi-identifier column\(s\) \['b'\]"):
        ours(rows, PopulationModel(population_table=pd.DataFrame({"a": [0, 1], "count": [9, 9]})), 0.2)
    with pytest.raises(ConfigurationError, match=r"population_size 2 is smaller than the sample \(3 records\)"):
        ours(rows, PopulationModel(population_size=2), 0.2)
    with pytest.raises(ConfigurationError, match="exactly one of"):
        PopulationModel(sampling_fraction=0.1, population_size=10)


def benedetti_franconi(f: int, big_f: float) -> float:
    """sdcMicro's individual risk of a record in a class of f sample records and F people (p = f/F)."""
    p = f / big_f
    if p >= 1:
        return 1 / f
    if f == 1:
        return p / (1 - p) * math.log(1 / p)
    if f == 2:
        return p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
    return p / (f - (1 - p))


@settings(max_examples=40)
@given(rows=ROWS, data=st.data())
def test_sampling_weights_give_the_weighted_population_and_benedetti_franconi_risk(rows, data) -> None:
    weights = data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.5, 10.0, 40.0]), min_size=len(rows), max_size=len(rows)))
    frame = pd.DataFrame(rows, columns=QIS).assign(w=weights)
    got = population_risk(EquivalenceClasses.from_frame(frame, QIS), PopulationModel(weight_column="w")).to_dict()
    sample = Counter(rows)
    population: dict[tuple[int, int], float] = {}
    for row, weight in zip(rows, weights, strict=True):
        population[row] = population.get(row, 0.0) + weight
    risks = [benedetti_franconi(sample[row], max(population[row], sample[row])) for row in rows]
    assert got["individual_risk"] == pytest.approx(max(risks), rel=1e-12)
    assert got["individual_risk_average"] == pytest.approx(sum(risks) / len(rows), rel=1e-12)
    assert got["journalist"] == pytest.approx(max(1 / max(population[r], sample[r]) for r in rows), rel=1e-12)
    assert got["population_size"] == max(len(rows), math.floor(sum(weights) + 0.5))
    assert 0 <= got["individual_risk_average"] <= got["individual_risk"] <= 1
    assert 0 < got["journalist"] <= got["prosecutor"] <= 1 and got["journalist_average"] <= got["average"]


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_bad_sampling_weights_are_refused_by_name(bad) -> None:
    frame = pd.DataFrame({"a": [1, 1, 2], "b": [0, 0, 1], "w": [5.0, bad, 3.0]})
    with pytest.raises(
        ConfigurationError, match=r"^population weight_column 'w' has 1 weight\(s\) that are not numbers > 0"
    ):
        population_risk(EquivalenceClasses.from_frame(frame, QIS), PopulationModel(weight_column="w"))
    with pytest.raises(UnknownColumnError, match="population weight_column 'v' is not in the table"):
        population_risk(EquivalenceClasses.from_frame(frame, QIS), PopulationModel(weight_column="v"))


def test_a_combination_listed_per_region_is_summed() -> None:
    table = pd.DataFrame(
        {"a": [0, 0, 1, 2, 2], "b": [0, 0, 1, 2, 2], "region": ["n", "s", "n", "n", "s"], "count": [3, 4, 2, 1, 1]}
    )
    got = ours([(0, 0), (0, 0), (1, 1)], PopulationModel(population_table=table), 0.2)
    assert got["population_size"] == 11 and got["journalist"] == 0.5 and got["marketer"] == (2 / 7 + 1 / 2) / 3
    assert got["population_uniques"] == 0.0  # (2, 2): one person per region, two in all
