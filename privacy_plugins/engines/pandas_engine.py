"""The pandas engine: the same operations on a DataFrame in memory (the reference the others must equal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.engines.aggregates import COUNT_COLUMN, check_columns
from privacy_plugins.engines.base import ApplyMethod, EngineTable
from privacy_plugins.errors import ConfigurationError

__all__ = ["PandasTable", "classes_from_pandas"]


def classes_from_pandas(
    frame: pd.DataFrame, *, columns: Sequence[str], quasi_identifiers: Sequence[str]
) -> EquivalenceClasses:
    """Group the records themselves: on pandas the core is faster than a group-by first."""
    check_columns(columns, [str(c) for c in frame.columns])
    return EquivalenceClasses.from_frame(validate_frame(frame), list(quasi_identifiers))


@dataclass(frozen=True)
class PandasTable(EngineTable):
    """A DataFrame as an :class:`~privacy_plugins.engines.base.EngineTable`."""

    frame: pd.DataFrame
    engine_name: str = "pandas"

    def columns(self) -> list[str]:
        """Column names."""
        return [str(c) for c in self.frame.columns]

    def count(self) -> int:
        """Rows."""
        return len(self.frame)

    def group_counts(self, columns: Sequence[str]) -> pd.DataFrame:
        """``groupby(columns, dropna=False).size()``."""
        check_columns(columns, self.columns())
        grouped = self.frame.groupby(list(columns), dropna=False, sort=False, observed=True).size()
        return grouped.rename(COUNT_COLUMN).reset_index()

    def _without(self, removed: pd.DataFrame) -> EngineTable:
        """The rows not matching a row of ``removed`` (a merge matches missing values to missing values)."""
        marker = "__privacy_plugins_removed__"
        keys = list(removed.columns)
        joined = self.frame[keys].merge(removed.drop_duplicates().assign(**{marker: True}), how="left", on=keys)
        return PandasTable(self.frame.loc[joined[marker].isna().to_numpy()].reset_index(drop=True))

    def _generalize(
        self, keep: Sequence[str], mappings: Mapping[str, pd.DataFrame], suppressed: pd.DataFrame, method: ApplyMethod
    ) -> EngineTable:
        """Map each QI through its value → label table (``method`` makes no difference in memory)."""
        out = self.frame[list(keep)].copy()
        for column, mapping in mappings.items():
            lookup = pd.Series(mapping["label"].to_numpy(), index=pd.Index(mapping["value"]))
            out[column] = pd.Series(lookup.reindex(out[column]).to_numpy(), index=out.index, dtype=object)
        if len(suppressed):
            marker = "__privacy_plugins_suppressed__"
            flags = suppressed.assign(**{marker: True})
            joined = out.merge(flags, how="left", on=list(suppressed.columns), sort=False)
            out = out.loc[joined[marker].isna().to_numpy()]
        return PandasTable(out.reset_index(drop=True))

    def population_join(self, population: EngineTable, quasi_identifiers: Sequence[str], count_column: str) -> Any:
        """Class sizes joined with a population table's counts (:mod:`~privacy_plugins.engines.population_join`)."""
        from privacy_plugins.engines.population_join import population_join_pandas

        return population_join_pandas(self.frame, population.to_pandas(), quasi_identifiers, count_column)

    def population_counts(self, name: str, quasi_identifiers: Sequence[str], count_column: str) -> pd.DataFrame:
        """Refused: a pandas table has no engine to hold a table named ``name``."""
        raise ConfigurationError(f"population table {name!r}: a pandas table has no database; give the table's file")

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
        """Each block in turn, in block order (the engines' reference; the core's own path runs a process pool)."""
        columns = [c for c in keys.columns if c != block_column]
        check_columns([*columns, *keep], self.columns())
        joined = self.frame[list(dict.fromkeys([*keep, *columns]))].merge(keys, how="inner", on=columns, sort=False)
        groups = joined.groupby(block_column, sort=True)
        parts = []
        for _, group in groups:
            parts.append(function(group[[*keep, block_column]]))
            if progress is not None:
                progress(len(parts), groups.ngroups)
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*keep, *numbers])
        for column in text:
            out[column] = out[column].astype(object)
        return PandasTable(out[[*keep, *numbers]])

    def batches(self, size: int) -> Iterator[pd.DataFrame]:
        """Slices of the frame."""
        for start in range(0, len(self.frame), size):
            yield self.frame.iloc[start : start + size]

    def to_pandas(self) -> pd.DataFrame:
        """The frame."""
        return self.frame
