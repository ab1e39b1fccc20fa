"""What every engine table offers: columns, counts, one GROUP BY, a generalized view, its rows in batches.

A table handle is lazy: ``generalized`` returns another handle (a SQL subquery,
a Spark plan, a pandas frame), nothing runs until it is counted, grouped,
stored or read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol

import pandas as pd

from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.engines.aggregates import check_columns
from privacy_plugins.errors import ConfigurationError

__all__ = ["APPLY_METHODS", "LABEL_MAPPING_COLUMNS", "ApplyMethod", "EngineTable"]

#: How a node's hierarchy levels are applied: small mapping tables joined, or CASE expressions.
ApplyMethod = Literal["case", "join"]
APPLY_METHODS: tuple[str, ...] = ("case", "join")
#: Columns of a mapping table: the raw value and its published label.
LABEL_MAPPING_COLUMNS = ("value", "label")


class EngineTable(Protocol):
    """A table where it lives (pandas, a SQL database, Spark).

    The engines subclass it explicitly to inherit :meth:`generalized`, which
    checks the columns once and hands the work to their ``_generalize``.
    """

    @property
    def engine_name(self) -> str:
        """``"pandas"``, the SQL dialect name (``"duckdb"``, ``"sqlite"``, …) or ``"spark"``."""
        ...

    def columns(self) -> list[str]:
        """Column names, in table order."""
        ...

    def count(self) -> int:
        """Records in the table."""
        ...

    def group_counts(self, columns: Sequence[str]) -> pd.DataFrame:
        """``columns`` + ``COUNT_COLUMN``: one row per distinct combination (one GROUP BY in the engine)."""
        ...

    def population_join(self, population: EngineTable, quasi_identifiers: Sequence[str], count_column: str) -> Any:
        """Per class of ``quasi_identifiers``: its records and the people of ``population`` with its values.

        ``population`` is a table of counts in the same engine; the GROUP BYs and the join run in
        the engine and only a :class:`~privacy_plugins.engines.population_join.JoinedSizes` returns.
        """
        ...

    def population_counts(self, name: str, quasi_identifiers: Sequence[str], count_column: str) -> pd.DataFrame:
        """The population table ``name`` of this engine summed per QI combination there (counts, never records)."""
        ...

    def generalized(
        self,
        *,
        keep: Sequence[str],
        mappings: Mapping[str, pd.DataFrame],
        suppressed: pd.DataFrame,
        method: ApplyMethod,
        removed: pd.DataFrame | None = None,
    ) -> EngineTable:
        """``keep`` columns; each column of ``mappings`` replaced by its label; rows of ``suppressed`` classes removed.

        ``mappings[c]`` has ``LABEL_MAPPING_COLUMNS``; ``suppressed`` holds the
        published labels of the classes to remove (one column per mapped column). ``removed``
        holds raw values of some of the table's columns: rows equal to one of its rows on those
        columns (missing values equal) are removed before mapping — records suppressed one by one
        (those a release history puts at risk), where ``suppressed`` removes whole classes.
        """
        check_columns([*keep, *mappings, *(removed.columns if removed is not None else ())], self.columns())
        source = self._without(removed) if removed is not None and len(removed) else self
        return source._generalize(keep, mappings, suppressed, method)

    def _without(self, removed: pd.DataFrame) -> EngineTable:
        """This table without the rows equal to a row of ``removed`` on its columns (columns already checked)."""
        ...

    def _generalize(
        self, keep: Sequence[str], mappings: Mapping[str, pd.DataFrame], suppressed: pd.DataFrame, method: ApplyMethod
    ) -> EngineTable:
        """:meth:`generalized` in this engine, its columns already checked."""
        ...

    def blocks_applied(
        self,
        keys: pd.DataFrame,
        block_column: str,
        function: Callable[[pd.DataFrame], pd.DataFrame],
        *,
        keep: Sequence[str],
        text: Sequence[str],
        numbers: Sequence[str],
        progress: ProgressCallback | None = None,
    ) -> EngineTable:
        """Every block of records handed to ``function`` as one pandas frame, each block a task of the engine.

        ``keys`` maps value combinations of some columns (missing values equal) to ``block_column``;
        each record joins its row. ``function`` gets one block's ``keep`` columns and ``block_column``
        and returns rows with the ``keep`` columns (``text`` ones as strings) and ``numbers`` (floats).
        Every block is run once, here: the table returned is computed (reading it again runs no
        block), and ``progress(blocks done, blocks)`` is told as blocks finish (as often as the engine
        lets it know). Engines that cannot run Python per group refuse (the default).
        """
        raise ConfigurationError(f"the {self.engine_name} engine cannot anonymize blocks of records where they live")

    def uncache(self) -> None:
        """Free what the engine keeps computed for this table (Spark: the persisted blocks); nothing by default."""
        return None

    def batches(self, size: int) -> Iterator[pd.DataFrame]:
        """The rows, ``size`` at a time (to stream them to a destination outside the engine)."""
        ...

    def to_pandas(self) -> pd.DataFrame:
        """All rows (small tables and tests only)."""
        ...
