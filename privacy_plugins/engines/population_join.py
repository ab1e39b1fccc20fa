"""The exact population-table join where the tables live: population risk and k-map from class sizes only.

A sample table and a population table (one row per quasi-identifier combination, its
people in a count column) in the same engine: each is grouped by the quasi-identifiers
(``COUNT(*)`` and ``SUM(count)``) and the groups joined (``IS NOT DISTINCT FROM``: a
missing value meets a missing value, as ``GROUP BY`` groups them), so only the pairs
(f_j, F_j) of class sizes and two totals reach Python — never a quasi-identifier value.
Each engine table offers it as ``population_join`` (:class:`JoinedSizes`); the pandas
engine is the reference the others equal (tests/engines/test_population_join.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.metrics.population import PopulationRisk, population_risk_from_sizes
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD
from privacy_plugins.core.models.base import ModelResult
from privacy_plugins.core.parameters import check_integer
from privacy_plugins.core.results import ClassViolations, size_histogram
from privacy_plugins.errors import ConfigurationError, PopulationColumnError, PopulationMismatchError

__all__ = [
    "JoinedSizes",
    "k_map_in_engine",
    "population_counts_spark",
    "population_counts_sql",
    "population_join_pandas",
    "population_risk_in_engine",
]

SAMPLE, PEOPLE = "pp_sample_size", "pp_population_size"


@dataclass(frozen=True)
class JoinedSizes:
    """Per sample class: its records ``sample`` and its people ``people`` (NaN: not in the population table).

    ``total``: the population table's people; ``uniques``: its combinations counting one person.
    """

    sample: np.ndarray
    people: np.ndarray
    total: int
    uniques: int

    def checked(self) -> JoinedSizes:
        """Refuse a table missing a sample combination or counting fewer people than the sample."""
        absent = int(np.isnan(self.people).sum())
        if absent:
            raise PopulationMismatchError(
                f"population_table lacks {absent} quasi-identifier combination(s) present in the sample"
            )
        short = int((self.people < self.sample).sum())
        if short:
            raise PopulationMismatchError(
                f"population_table counts are smaller than the sample for {short} combination(s)"
            )
        return self


def joined_sizes(frame: pd.DataFrame, total: Any, uniques: Any) -> JoinedSizes:
    """From the engine's (sample, people) rows and totals."""
    people = pd.to_numeric(frame[PEOPLE], errors="coerce").to_numpy(dtype=np.float64)
    return JoinedSizes(frame[SAMPLE].to_numpy(dtype=np.int64), people, int(total or 0), int(uniques or 0))


def population_join_pandas(
    sample: pd.DataFrame, population: pd.DataFrame, quasi_identifiers: Sequence[str], count_column: str
) -> JoinedSizes:
    """The reference: ``groupby`` both, left-merge on the quasi-identifiers (NaN meets NaN, as in pandas)."""
    qis = list(quasi_identifiers)
    people = pd.to_numeric(population[count_column], errors="coerce")
    if not qis:
        return joined_sizes(pd.DataFrame({SAMPLE: [len(sample)], PEOPLE: [people.sum()]}), people.sum(), 0)
    left = sample.groupby(qis, dropna=False, sort=False).size().rename(SAMPLE).reset_index()
    right = population[qis].assign(**{PEOPLE: people}).groupby(qis, dropna=False, sort=False)[PEOPLE].sum()
    merged = left.merge(right.reset_index(), on=qis, how="left", sort=False)
    return joined_sizes(merged, people.sum(), int((right == 1).sum()))


def population_risk_in_engine(
    table: Any,
    population: Any,
    *,
    quasi_identifiers: Sequence[str],
    count_column: str = "count",
    threshold: float = DEFAULT_RISK_THRESHOLD,
) -> PopulationRisk:
    """:class:`PopulationRisk` of ``table`` against the population table ``population`` (same engine), exact.

    Equal to :func:`~privacy_plugins.core.metrics.population.population_risk` with that table in memory.

    Raises:
        ConfigurationError: the tables are in different engines or databases, a column is missing,
            or the population table misses a sample combination or counts fewer people.
    """
    sizes = table.population_join(population, quasi_identifiers, count_column).checked()
    return population_risk_from_sizes(
        sizes.sample,
        population_size=sizes.total,
        population_sizes=sizes.people,
        threshold=threshold,
        population_uniques=sizes.uniques,
    )


def k_map_in_engine(
    table: Any, population: Any, *, quasi_identifiers: Sequence[str], k: int, count_column: str = "count"
) -> ModelResult:
    """Exact k-map (every class maps to at least ``k`` people of the population table), judged in the engine."""
    k = check_integer(k, name="k")
    sizes = table.population_join(population, quasi_identifiers, count_column).checked()
    violating = sizes.people < k
    target = f"{k}-map (population table)"
    return ModelResult(
        model=target,
        passed=not bool(violating.any()),
        observed=float(sizes.people.min()) if sizes.people.shape[0] else float("inf"),
        threshold=float(k),
        violations=ClassViolations(
            target=target,
            classes=int(violating.sum()),
            records=int(sizes.sample[violating].sum()),
            size_histogram=size_histogram(sizes.sample[violating]),
        ),
    )


def population_join_sql(
    connection: Any, sample: Any, population: Any, quasi_identifiers: Sequence[str], count_column: str
) -> JoinedSizes:
    """Both GROUP BYs and the left join in one SQL statement, the totals in another."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import subquery_of

    sample, population = subquery_of(sample), subquery_of(population)
    for name, source, needed in (
        ("table", sample, quasi_identifiers),
        ("population", population, [*quasi_identifiers, count_column]),
    ):
        missing = [c for c in needed if c not in source.c]
        if missing:
            raise ConfigurationError(f"{name} lacks column(s) {missing}")
    keys = list(quasi_identifiers)
    left = sa.select(*[sample.c[q] for q in keys], sa.func.count().label(SAMPLE)).group_by(*[sample.c[q] for q in keys])
    right = sa.select(*[population.c[q] for q in keys], sa.func.sum(population.c[count_column]).label(PEOPLE))
    right = right.group_by(*[population.c[q] for q in keys])
    s, p = left.subquery("pp_sample"), right.subquery("pp_people")
    on = sa.and_(*[s.c[q].is_not_distinct_from(p.c[q]) for q in keys]) if keys else sa.true()
    rows = connection.execute(sa.select(s.c[SAMPLE], p.c[PEOPLE]).select_from(s.outerjoin(p, on))).fetchall()
    ones = sa.func.sum(sa.case((p.c[PEOPLE] == 1, 1), else_=0)) if keys else sa.literal(0)
    total, uniques = connection.execute(sa.select(sa.func.sum(p.c[PEOPLE]), ones)).one()
    return joined_sizes(pd.DataFrame(rows, columns=[SAMPLE, PEOPLE]), total, uniques)


def population_join_spark(
    sample: Any, population: Any, quasi_identifiers: Sequence[str], count_column: str
) -> JoinedSizes:
    """Both ``groupBy`` and a null-safe left join on the cluster; only the size pairs are collected."""
    from pyspark.sql import functions

    keys = list(quasi_identifiers)
    for name, frame, needed in (("table", sample, keys), ("population", population, [*keys, count_column])):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise ConfigurationError(f"{name} lacks column(s) {missing}")
    left = sample.groupBy(*keys).agg(functions.count(functions.lit(1)).alias(SAMPLE))
    right = population.groupBy(*keys).agg(functions.sum(count_column).alias(PEOPLE))
    if keys:  # one job: a full join keeps the population's unsampled combinations for the totals
        renamed = right.select(*[right[q].alias(f"pp_key_{i}") for i, q in enumerate(keys)], right[PEOPLE])
        condition = [left[q].eqNullSafe(renamed[f"pp_key_{i}"]) for i, q in enumerate(keys)]
        joined = left.join(renamed, condition, "full_outer")
    else:
        joined = left.crossJoin(right)
    frame = joined.select(SAMPLE, PEOPLE).toPandas()
    people = pd.to_numeric(frame[PEOPLE], errors="coerce")
    sampled = frame[frame[SAMPLE].notna()]
    return joined_sizes(sampled, people.sum(), int((people == 1).sum()) if keys else 0)


def population_counts_sql(
    connection: Any, name: str, quasi_identifiers: Sequence[str], count_column: str
) -> pd.DataFrame:
    """``SELECT qis, SUM(count) FROM name GROUP BY qis``: the population's people per raw QI combination.

    Aggregated counts, never records: what an exact k-map search over an engine's snapshot
    reads once (``name`` may be ``schema.table``).

    Raises:
        ConfigurationError: no such table (the database's first line), or a column is missing.
    """
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import database_message, frame_from_rows, subquery_of
    from privacy_plugins.engines.table_names import named_table

    try:
        population = subquery_of(named_table(connection, name, setting="population table"))
        missing = [c for c in [*quasi_identifiers, count_column] if c not in population.c]
        if missing:
            raise PopulationColumnError(f"population table {name!r} lacks column(s) {missing}")
        keys = [population.c[q] for q in quasi_identifiers]
        total = sa.func.sum(population.c[count_column]).label(count_column)
        rows = connection.execute(sa.select(*keys, total).group_by(*keys)).fetchall()
    except sa.exc.DBAPIError as exc:
        raise ConfigurationError(f"population table {name!r}: {database_message(exc)}") from None
    return frame_from_rows(rows, [*quasi_identifiers, count_column])


def population_counts_spark(
    session: Any, name: str, quasi_identifiers: Sequence[str], count_column: str
) -> pd.DataFrame:
    """:func:`population_counts_sql` on a table or view of the Spark session (summed on the cluster)."""
    from pyspark.sql import functions

    try:
        population = session.table(name)
    except Exception as exc:  # AnalysisException: say which setting names the table
        raise ConfigurationError(f"population table {name!r} is not a table or view of the Spark session") from exc
    missing = [c for c in [*quasi_identifiers, count_column] if c not in population.columns]
    if missing:
        raise PopulationColumnError(f"population table {name!r} lacks column(s) {missing}")
    summed = population.groupBy(*quasi_identifiers).agg(functions.sum(count_column).alias(count_column))
    return summed.toPandas()
