"""The in-memory path's side of the history in the anonymize step: rows as units, the choice applied in pandas.

:func:`~privacy_plugins.release.history_anonymize.choose` decides on units (distinct raw QI and
model-column combinations with their counts) for both paths; here the rows are grouped into
them, the algorithm's output is read back as published units (a private row-number column is
carried through the algorithm as an insensitive column and dropped before staging), and the
choice is applied to the rows.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize import AnonymizationResult
from privacy_plugins.core.composition import STAR
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.history import COUNT
from privacy_plugins.engines.pandas_engine import PandasTable
from privacy_plugins.release.artifacts import Solved
from privacy_plugins.release.destination import TABLE
from privacy_plugins.release.destination.base import LINKED_PARTS
from privacy_plugins.release.history_anonymize import (
    UNIT,
    Chosen,
    HistoryOutcome,
    full_domain_ncp,
    spec_history,
    unit_columns,
)
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["MemoryRows"]

#: The private row number carried through the algorithm (never staged).
_ROW = "__history_row"


class MemoryRows:
    """The loaded rows, their units and the history (``None``: no earlier release — the algorithm alone)."""

    def __init__(self, spec: ReleaseSpec, frame: pd.DataFrame, hierarchies: Mapping[Hashable, Hierarchy]) -> None:
        self.spec = spec
        self.frame = frame
        self.hierarchies = hierarchies
        self.history = spec_history(spec, hierarchies)
        self.qis = list(spec.quasi_identifiers)
        if self.history is None:
            self.table, self.helper_columns = frame, []
            self.units = pd.DataFrame()
            self.unit_of_row = np.zeros(0, dtype=np.int64)
            return
        keys = unit_columns(spec, list(frame.columns))
        unit_of_row = frame.groupby(keys, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
        first = np.unique(unit_of_row, return_index=True)[1]
        self.unit_of_row = unit_of_row
        self.units = frame.iloc[first][keys].reset_index(drop=True)
        self.units[COUNT] = np.bincount(unit_of_row, minlength=len(first)).astype(np.int64)
        self.table = frame.assign(**{_ROW: np.arange(len(frame), dtype=np.int64)})
        self.helper_columns = [_ROW]

    def signature(self, result: AnonymizationResult) -> pd.DataFrame:
        """The class signature of the algorithm's output as published (a two-table output: its QI tuples)."""
        from privacy_plugins.core.history import class_signature, linked_signature

        qis, sensitive = self.qis, list(self.spec.sensitive_attributes)
        if result.linked is None:
            return class_signature(result.table, qis, sensitive)
        return linked_signature(result.table, result.linked.table, result.linked.group_column, qis, sensitive)

    def published_units(self, result: AnonymizationResult) -> pd.DataFrame:
        """The algorithm's released records as units (a raw unit split over classes is one unit per class)."""
        return self._published(result)[0]

    def _published(self, result: AnonymizationResult) -> tuple[pd.DataFrame, np.ndarray]:
        """The published units and each output row's (-1: a marked suppressed row, not released)."""
        table = result.table
        released = np.ones(len(table), dtype=bool)
        if len(table) != result.rows_out:  # suppressed rows marked: every QI "*"
            released = ~(table[self.qis].astype(str) == STAR).all(axis=1).to_numpy()
        unit = self.unit_of_row[table[_ROW].to_numpy(dtype=np.int64)]
        keyed = table.loc[released, self.qis].assign(**{UNIT: unit[released]})
        number = keyed.groupby([UNIT, *self.qis], dropna=False, sort=False, observed=True).ngroup()
        number = number.to_numpy(dtype=np.int64)
        first = np.unique(number, return_index=True)[1]
        units = keyed.iloc[first].reset_index(drop=True)
        units[COUNT] = np.bincount(number, minlength=len(first)).astype(np.int64)
        of_row = np.full(len(table), -1, dtype=np.int64)
        of_row[released] = number
        return units, of_row

    def solved(self, chosen: Chosen[AnonymizationResult]) -> Solved:
        """The chosen candidate as the anonymize step stages it."""
        result, history = chosen.solution, chosen.outcome.to_dict()
        if result is None:  # (a): the last release's levels on the rows
            return self._reapplied(chosen)
        table = result.table.drop(columns=self.helper_columns)
        report: dict[str, Any] = result.to_dict()
        rows_out, ncp = result.rows_out, result.utility.ncp
        levels = result.details.recoding_levels()
        if chosen.published is not None:  # (c) left out records at risk
            assert chosen.kept is not None
            _, of_row = self._published(result)
            keep = (of_row < 0) | chosen.kept[np.maximum(of_row, 0)]
            table = table.loc[keep].reset_index(drop=True)
            left_out = rows_out - chosen.records_out
            rows_out = chosen.records_out
            if levels:
                kept = np.zeros(len(self.units), dtype=bool)
                kept[chosen.kept_units()] = True
                ncp = full_domain_ncp(self.units, self.hierarchies, levels, ~kept)
            else:  # local recoding: each record left out costs at most 1 more (an upper bound)
                ncp = min(1.0, ncp + left_out / max(result.rows_in, 1))
            report |= {"rows_out": rows_out, "suppressed": result.rows_in - rows_out, "ncp": ncp}
        tables = [table] if result.linked is None else [table, result.linked.table]
        parts = dict(zip(LINKED_PARTS if result.linked is not None else [TABLE], map(PandasTable, tables), strict=True))
        headline = chosen.outcome.with_headline(result.details.headline())
        return Solved(
            parts=parts,
            algorithm=result.algorithm,
            levels=levels,
            rows_in=result.rows_in,
            rows_out=rows_out,
            suppressed=result.rows_in - rows_out - result.out_of_scope,
            ncp=ncp,
            headline=headline,
            report=report | ({"history": history} if chosen.outcome.releases else {}),
            engine="pandas",
            group_column=result.linked.group_column if result.linked is not None else "",
            history=history if chosen.outcome.releases else {},
            out_of_scope=result.out_of_scope,
        )

    def _reapplied(self, chosen: Chosen[AnonymizationResult]) -> Solved:
        """(a) on the rows: every QI recoded at the last release's levels, the records left out removed."""
        assert chosen.levels is not None
        levels = dict(chosen.levels)
        kept = np.zeros(len(self.units), dtype=bool)
        kept[chosen.kept_units()] = True
        table = self.frame.loc[kept[self.unit_of_row]].reset_index(drop=True)
        for qi in self.qis:
            table[qi] = self.hierarchies[qi].generalize(table[qi], levels[str(qi)])
        rows_in = len(self.frame)
        rows_out = len(table)
        ncp = full_domain_ncp(self.units, self.hierarchies, levels, ~kept)
        history = chosen.outcome.to_dict()
        return Solved(
            parts={TABLE: PandasTable(table)},
            algorithm=self.spec.algorithm.name,
            levels=levels,
            rows_in=rows_in,
            rows_out=rows_out,
            suppressed=rows_in - rows_out,
            ncp=ncp,
            headline=chosen.outcome.with_headline(HistoryOutcome.node(levels)),
            report={
                "algorithm": self.spec.algorithm.name,
                "levels": levels,
                "rows_in": rows_in,
                "rows_out": rows_out,
                "suppressed": rows_in - rows_out,
                "ncp": ncp,
                "history": history,
            },
            engine="pandas",
            history=history,
        )
