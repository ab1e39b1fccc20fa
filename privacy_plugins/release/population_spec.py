"""The release spec's ``population:`` block: one population model for the whole release (issue 30).

::

    population:
      fraction: 0.1            # or
      size: 320000             # or
      table: census.csv        # a file (relative to the spec), or a table of the source database
      count_column: count      #   (its people per quasi-identifier combination; default "count")
      # or
      weights: sampling_weight # a source column: the people each record stands for

Exactly one of ``fraction``, ``size``, ``table`` or ``weights``. The population models of
the requirements that give no population of their own (``k_map``, ``population_uniqueness``)
take it, and the diagnosis reports risk beyond the sample (journalist, marketer, population
uniqueness, per QI subset, and the record-risk plots) with it.

Roles (every source column has one): a ``weights`` column gets the ``insensitive`` role
automatically — it is published unchanged, as survey microdata carry their weights so that
analysts can weight their estimates; naming it under another role (a quasi-identifier,
``identifiers:`` …) is refused, since the release must read it. A population table of the
source database is not a source column and needs no role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_plugins.core.metrics.population import COUNT_COLUMN, PopulationModel, ReleasePopulation
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PopulationSpec", "population_table"]

_FILE_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".xlsx")


def _looks_like_file(value: str) -> bool:
    return "/" in value or "\\" in value or value.lower().endswith(_FILE_SUFFIXES)


@dataclass(frozen=True)
class PopulationSpec:
    """The validated ``population:`` block (see the module docstring)."""

    fraction: float | None = None
    size: int | None = None
    table: Path | str | None = None  # a Path: a file; a str: a table of the source database
    count_column: str = COUNT_COLUMN
    weights: str | None = None

    KEYS = ("fraction", "size", "table", "count_column", "weights")

    def __post_init__(self) -> None:
        given = [key for key in ("fraction", "size", "table", "weights") if getattr(self, key) is not None]
        if len(given) != 1:
            raise ConfigurationError(
                f"population needs exactly one of fraction, size, table or weights; got {given or 'none'}"
            )
        if self.fraction is not None:
            check_fraction(self.fraction, name="population.fraction", open_low=True)
        if self.size is not None:
            check_integer(self.size, name="population.size")
        if not isinstance(self.count_column, str) or not self.count_column:
            raise ConfigurationError(f"population.count_column must be a column name, got {self.count_column!r}")
        if self.weights is not None and (not isinstance(self.weights, str) or not self.weights):
            raise ConfigurationError(f"population.weights must be a column name, got {self.weights!r}")
        if isinstance(self.table, Path) and not self.table.is_file():
            raise ConfigurationError(f"population.table: file not found: {str(self.table)!r}")
        if self.table is not None and not isinstance(self.table, (Path, str)):
            raise ConfigurationError(f"population.table must be a file or a table name, got {self.table!r}")

    @classmethod
    def from_value(cls, value: object, *, base: Path) -> PopulationSpec | None:
        """From the YAML block (``None`` when absent); a ``table`` that looks like a file is relative to ``base``."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"population must be a mapping (fraction, size, table or weights), got {value!r}")
        unknown = [key for key in value if key not in cls.KEYS]
        if unknown:
            raise ConfigurationError(f"unknown key {unknown[0]!r} in population. Allowed: {list(cls.KEYS)}")
        values: dict[str, Any] = dict(value)
        table = values.get("table")
        if isinstance(table, str) and (_looks_like_file(table) or (base / table).is_file()):
            values["table"] = (base / table).resolve()
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigurationError(f"population: {exc}") from None

    def setting(self) -> ReleasePopulation:
        """The block as the core's :class:`ReleasePopulation` (what the models read)."""
        return ReleasePopulation(
            fraction=self.fraction,
            size=self.size,
            table=None if self.table is None else str(self.table),
            count_column=self.count_column,
            weights=self.weights,
            table_is_file=isinstance(self.table, Path),
        )

    def check_source(self, *, database: bool) -> None:
        """A table name needs a database (or Spark) source to live in."""
        if isinstance(self.table, str) and not database:
            raise ConfigurationError(
                f"population.table {self.table!r} is not a file (no such path) and the source is not a database "
                "to hold a table of that name: give the population table's file path"
            )

    def model(self, read_named_table: Any = None) -> PopulationModel:
        """The core :class:`PopulationModel` (reads the population table: a file, or ``read_named_table(name)``).

        Raises:
            ConfigurationError: the table cannot be read or lacks its count column (naming population.table).
        """
        if self.fraction is not None:
            return PopulationModel(sampling_fraction=self.fraction)
        if self.size is not None:
            return PopulationModel(population_size=self.size)
        if self.weights is not None:
            return PopulationModel(weight_column=self.weights)
        frame = self._read(read_named_table)
        if self.count_column not in frame.columns:
            raise ConfigurationError(
                f"population.table {str(self.table)!r} has no count column {self.count_column!r} "
                "(set population.count_column)"
            )
        return PopulationModel(population_table=frame, count_column=self.count_column)

    def _read(self, read_named_table: Any) -> pd.DataFrame:
        from privacy_plugins.core.io import read_table

        try:
            if isinstance(self.table, Path):
                return read_table(self.table)
            return read_named_table(str(self.table))
        except (OSError, ConfigurationError) as exc:
            raise ConfigurationError(f"population.table {str(self.table)!r}: {str(exc).splitlines()[0]}") from None


def population_table(spec: Any, name: str) -> pd.DataFrame:
    """A population table of the source database, summed per quasi-identifier combination in the database.

    ``SELECT qis, SUM(count) … GROUP BY qis``: one row per combination comes back (census counts,
    not people's rows).

    Raises:
        ConfigurationError: no such table, or it lacks a quasi-identifier or the count column.
    """
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import SqlTable, database_message, frame_from_rows
    from privacy_plugins.engines.table_names import named_table
    from privacy_plugins.release.destination.sql import transactional_engine
    from privacy_plugins.release.sources import source_url

    engine = transactional_engine(source_url(spec.source))
    try:
        with engine.connect() as connection:  # ``table`` or ``schema.table``, each part quoted
            table = SqlTable(engine, named_table(connection, name, setting="population.table"))
        population = spec.population
        columns = [*spec.quasi_identifiers, population.count_column]
        missing = [c for c in columns if c not in table.columns()]
        if missing:
            raise ConfigurationError(f"lacks column(s) {missing}")
        keys: list[Any] = [sa.column(q) for q in spec.quasi_identifiers]
        total: Any = sa.func.sum(sa.column(population.count_column)).label(population.count_column)
        query = sa.select(*keys, total).select_from(table.selectable).group_by(*keys)
        with table.transaction() as connection:
            rows = connection.execute(query).fetchall()
        return frame_from_rows(rows, columns)
    except sa.exc.DBAPIError as exc:
        raise ConfigurationError(database_message(exc)) from None
    finally:
        engine.dispose()
