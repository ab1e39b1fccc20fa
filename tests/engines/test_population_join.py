"""The exact population-table join pushed into DuckDB, SQLite and Spark equals the pandas path (issue 30).

Only class sizes come back from the engine: the population risk and the exact k-map built on them
equal :func:`population_risk` / :class:`KMap` with both tables in memory, and a population table
missing a combination or counting fewer people is refused with the same line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from privacy_plugins.core.metrics.population import PopulationModel, population_risk
from privacy_plugins.core.models import KMap
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.engines import PandasTable, SqlTable, k_map_in_engine, population_risk_in_engine
from privacy_plugins.errors import ConfigurationError

QIS = ["age", "sex", "zip"]


def tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample with a missing value among its QIs, and a population table of counts covering it."""
    rng = np.random.default_rng(seed)
    sample = pd.DataFrame(
        {
            "age": rng.integers(20, 26, 300).astype(np.int64),
            "sex": rng.choice(["f", "m"], 300),
            "zip": rng.choice(["100", "101", "102"], 300).astype(object),
        }
    )
    sample.loc[::37, "zip"] = None
    grouped = sample.groupby(QIS, dropna=False).size().rename("count").reset_index()
    extra = pd.DataFrame({"age": [99, 98], "sex": ["f", "m"], "zip": ["999", "998"], "count": [1, 7]})
    counts = grouped.assign(count=grouped["count"] * rng.integers(1, 12, len(grouped)))
    population = pd.concat([counts, extra], ignore_index=True)  # two combinations nobody sampled (one unique)
    return sample, population


def reference(sample: pd.DataFrame, population: pd.DataFrame) -> Any:
    classes = EquivalenceClasses.from_frame(sample, QIS)
    return population_risk(classes, PopulationModel(population_table=population))


def sql_pair(url: str, sample: pd.DataFrame, population: pd.DataFrame) -> tuple[SqlTable, SqlTable]:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        sample.to_sql("people", connection, index=False)
        population.to_sql("census", connection, index=False)
    return SqlTable.from_table(engine, "people"), SqlTable.from_table(engine, "census")


@pytest.fixture(params=["pandas", "sqlite", "duckdb"])
def engine_pair(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Callable[[pd.DataFrame, pd.DataFrame], Any]]:
    def make(sample: pd.DataFrame, population: pd.DataFrame) -> Any:
        if request.param == "pandas":
            return PandasTable(sample), PandasTable(population)
        if request.param == "sqlite":
            return sql_pair(f"sqlite:///{tmp_path / 'db.sqlite'}", sample, population)
        pytest.importorskip("duckdb_engine")
        return sql_pair(f"duckdb:///{tmp_path / 'db.duckdb'}", sample, population)

    yield make


def test_population_risk_in_the_engine_equals_the_pandas_path(engine_pair: Any) -> None:
    sample, population = tables()
    table, census = engine_pair(sample, population)
    got = population_risk_in_engine(table, census, quasi_identifiers=QIS)
    expected = reference(sample, population)
    close(got.to_dict(), expected.to_dict())
    assert got.exact_population and got.population_uniques == expected.population_uniques
    for subset in (["age"], ["sex", "zip"]):  # a QI subset: the population table summed over the others
        marginal = population.groupby(subset, dropna=False)["count"].sum().reset_index()
        want = population_risk(
            EquivalenceClasses.from_frame(sample, subset), PopulationModel(population_table=marginal)
        )
        close(population_risk_in_engine(table, census, quasi_identifiers=subset).to_dict(), want.to_dict())
    for k in (1, 3, 20):
        result = k_map_in_engine(table, census, quasi_identifiers=QIS, k=k)
        model = KMap(k, population="census").with_population_frame(population)
        judged = model.evaluate(EquivalenceClasses.from_frame(sample, QIS))
        assert (result.passed, result.observed, result.violations.classes, result.violations.records) == (
            judged.passed,
            judged.observed,
            judged.violations.classes,
            judged.violations.records,
        )


def close(got: dict[str, Any], want: dict[str, Any]) -> bool:
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
        else:
            assert got[key] == value, key
    return True


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: p.iloc[1:], "population_table lacks 1 quasi-identifier combination"),
        (lambda p: p.assign(count=p["count"].where(p.index != 0, 0)), "counts are smaller than the sample for 1"),
    ],
)
def test_a_population_table_that_misses_the_sample_is_refused_alike(
    engine_pair: Any, damage: Any, message: str
) -> None:
    sample, population = tables()
    table, census = engine_pair(sample, damage(population))
    with pytest.raises(ConfigurationError, match=message):
        population_risk_in_engine(table, census, quasi_identifiers=QIS)
    with pytest.raises(ConfigurationError, match=message):
        reference(sample, damage(population))


def test_tables_of_two_databases_are_refused(tmp_path: Any) -> None:
    sample, population = tables()
    table, _ = sql_pair(f"sqlite:///{tmp_path / 'a.sqlite'}", sample, population)
    _, census = sql_pair(f"sqlite:///{tmp_path / 'b.sqlite'}", sample, population)
    with pytest.raises(ConfigurationError, match="same database"):
        population_risk_in_engine(table, census, quasi_identifiers=QIS)


@pytest.mark.parametrize(("kind", "limit"), [("duckdb", 0.0), ("sqlite", 0.05)])
def test_exact_k_map_anonymized_in_the_engine_equals_memory(kind: str, limit: float, tmp_path: Path) -> None:
    """Issue 30: a KMap naming a population table of the engine; its sums are pulled once, the search is exact."""
    from engine_checks import multiset

    from privacy_plugins.core.anonymize import anonymize
    from privacy_plugins.core.hierarchies import Hierarchy
    from privacy_plugins.engines import anonymize_in_engine

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"age": rng.integers(20, 30, 120), "zip": rng.choice(["a1", "a2", "b1", "b2"], 120)})
    hierarchies = {
        "age": Hierarchy.from_rows("age", [[str(a), f"{a // 5 * 5}s", "*"] for a in range(20, 30)]),
        "zip": Hierarchy.from_rows("zip", [[z, z[0] + "*", "*"] for z in ["a1", "a2", "b1", "b2"]]),
    }
    counts = frame.groupby(["age", "zip"], as_index=False).size().rename(columns={"size": "count"})
    counts["count"] = counts["count"] * rng.integers(1, 4, len(counts))
    suffix = "sqlite" if kind == "sqlite" else "duckdb"
    engine = sa.create_engine(f"{kind}:///{tmp_path / f'db.{suffix}'}")
    with engine.begin() as connection:
        frame.to_sql("people", connection, index=False)
        counts.to_sql("census", connection, index=False)
    problem = {"quasi_identifiers": ["age", "zip"], "hierarchies": hierarchies, "suppression_limit": limit}
    counts.to_csv(tmp_path / "census.csv", index=False)
    reference = anonymize(frame, models=[KMap(6, population=str(tmp_path / "census.csv"))], **problem)
    done = anonymize_in_engine(SqlTable.from_table(engine, "people"), models=[KMap(6, population="census")], **problem)  # type: ignore[arg-type]
    assert done.solution.details.levels == reference.details.levels and any(reference.details.levels.values())  # type: ignore[attr-defined]
    assert multiset(done.published.to_pandas()).equals(multiset(reference.table))
    assert [r.passed for r in done.checked] == [True] and done.checked[0].observed == reference.models[0].observed
    with pytest.raises(ConfigurationError, match="population table 'nope'"):
        anonymize_in_engine(SqlTable.from_table(engine, "people"), models=[KMap(6, population="nope")], **problem)  # type: ignore[arg-type]
    engine.dispose()
