"""Population risk per QI subset inside the core diagnosis object (issue 30), against naive record-by-record risks."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.metrics.population import RISK_INTERVAL_ENDS, PopulationModel

SAMPLE = pd.DataFrame(
    {
        "age": [30, 30, 30, 40, 40, 50, 50, 50, 60],
        "sex": ["f", "f", "m", "m", "m", "f", "f", "m", "f"],
        "zip": ["1", "1", "2", "2", "2", "3", "1", "3", "3"],
    }
)
QIS = ["age", "sex", "zip"]
# A census: every combination of the sample's values with 1..7 people (at least the sample's count).
CENSUS = pd.DataFrame(
    [
        {"age": a, "sex": s, "zip": z, "count": 1 + (a // 10 + len(s) + int(z)) % 7}
        for a, s, z in itertools.product([30, 40, 50, 60], ["f", "m"], ["1", "2", "3"])
    ]
)
CENSUS["count"] = np.maximum(CENSUS["count"], 3)


def naive_risks(subset: tuple[str, ...], census: pd.DataFrame | None, fraction: float) -> dict[str, list[float]]:
    """Per record: 1/f_j, 1/F_j and the marketer's 1/F_j (table) or 1/f_j, counted record by record."""
    rows = [tuple(r) for r in SAMPLE[list(subset)].itertuples(index=False, name=None)]
    out: dict[str, list[float]] = {"prosecutor": [], "journalist": [], "marketer": []}
    for row in rows:
        f = sum(other == row for other in rows)
        if census is None:
            big_f = min(max(f / fraction, f), round(len(rows) / fraction))
        else:
            big_f = sum(int(c["count"]) for _, c in census.iterrows() if tuple(c[q] for q in subset) == row)
        out["prosecutor"].append(1 / f)
        out["journalist"].append(1 / big_f)
        out["marketer"].append(1 / (big_f if census is not None else f))
    return out


@pytest.mark.parametrize(
    ("population", "census"),
    [(PopulationModel(sampling_fraction=0.25), None), (PopulationModel(population_table=CENSUS), CENSUS)],
    ids=["fraction", "table"],
)
def test_every_subset_carries_the_naive_attacker_risks(
    population: PopulationModel, census: pd.DataFrame | None
) -> None:
    diagnosis = diagnose(SAMPLE, quasi_identifiers=QIS, k=2, population=population)
    assert diagnosis.population is not None
    subsets = [names for names, _ in diagnosis.population.by_subset]
    assert sorted(map(sorted, subsets)) == sorted(
        sorted(c) for size in (1, 2, 3) for c in itertools.combinations(QIS, size)
    )  # exhaustive: all 2^d − 1
    for names in subsets:
        risk = diagnosis.population.for_subset(names)
        naive = naive_risks(tuple(map(str, names)), census, 0.25)
        assert risk.highest == pytest.approx(max(naive["prosecutor"]))
        assert risk.average == pytest.approx(np.mean(naive["prosecutor"]))
        assert risk.journalist == pytest.approx(max(naive["journalist"]))
        assert risk.journalist_average == pytest.approx(np.mean(naive["journalist"]))
        assert risk.marketer == pytest.approx(np.mean(naive["marketer"]))
        assert risk.exact_population == (census is not None)
    assert diagnosis.population.candidates == diagnosis.population.for_subset(QIS)
    # each attacker's record-risk distribution holds every record, in the interval of its naive risk
    naive = naive_risks(tuple(QIS), census, 0.25)
    labels = list(diagnosis.population.risk_distributions["prosecutor"])
    for attacker, histogram in diagnosis.population.risk_distributions.items():
        expected = [0] * len(RISK_INTERVAL_ENDS)
        for value in naive[attacker]:
            expected[next(i for i, end in enumerate(RISK_INTERVAL_ENDS) if value <= end + 1e-12)] += 1
        assert list(histogram.values()) == expected and list(histogram) == labels
    data = json.loads(json.dumps(diagnosis.to_dict()))
    assert data["population"]["candidates"]["journalist"] == pytest.approx(diagnosis.population.candidates.journalist)
    assert {tuple(x["quasi_identifiers"]) for x in data["population"]["by_subset"]} == {
        tuple(map(str, names)) for names in subsets
    }


def test_a_weighted_snapshot_has_the_tables_population_risk() -> None:
    snapshot = SAMPLE.groupby(QIS, as_index=False).size().rename(columns={"size": "n"})
    population = PopulationModel(sampling_fraction=0.1)
    whole = diagnose(SAMPLE, quasi_identifiers=QIS, k=2, population=population).population
    weighted = diagnose(snapshot, quasi_identifiers=QIS, k=2, weights="n", population=population).population
    assert whole is not None and weighted is not None
    assert whole.to_dict() == weighted.to_dict()


def test_without_a_population_model_there_is_no_section() -> None:
    diagnosis = diagnose(SAMPLE, quasi_identifiers=QIS, k=2)
    assert diagnosis.population is None and diagnosis.to_dict()["population"] is None


def test_the_subset_bound_keeps_the_smallest_subsets_and_the_candidates_and_says_how_many_were_left() -> None:
    from privacy_plugins.core.diagnosis.population_section import diagnose_population
    from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice

    lattice = SubsetLattice(SAMPLE, QIS, k=2)
    found = diagnose_population(
        SAMPLE, lattice, range(1, 8), PopulationModel(sampling_fraction=0.5), counts=None, threshold=0.2, max_subsets=3
    )
    assert [names for names, _ in found.by_subset] == [("age",), ("sex",), tuple(QIS)]
    assert found.subsets_left_out == 4 and found.to_dict()["subsets_left_out"] == 4
