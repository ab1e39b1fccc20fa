"""A population table's counts on a full-domain lattice: the people of every sample unit's class, per node.

Exact k-map inside a lattice search (issue 30). The population table (one row per raw
quasi-identifier combination, its people in a count column) is encoded once on the
search's hierarchies: per QI, every combination's leaf code, turned into level codes by
the hierarchy's own ``codes[level]`` — the integer codes the snapshot's units use. At a
node, one id per generalized combination is formed over the population's rows and the
sample's units together (:func:`~privacy_plugins.core.partition.combine_codes`), the
counts are summed per id (one ``bincount``) and read back per unit: the ``GROUP BY`` of
the population table by the node's labels, with no label compared as text and no Python
loop over rows. A class's people are then its units' (every unit of a class holds the
class's generalized combination).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.partition import combine_codes
from privacy_plugins.errors import HierarchyError, PopulationColumnError, PopulationMismatchError

__all__ = ["PopulationLevels"]


@dataclass(frozen=True, eq=False)
class PopulationLevels:
    """A population table encoded on the hierarchies of a lattice search, with the sample's units beside it.

    Attributes:
        hierarchies: one per QI, in lattice order.
        leaves: per QI, the leaf code of every population combination, then of every sample unit.
        counts: the people of every population combination.
    """

    hierarchies: tuple[Hierarchy, ...]
    leaves: tuple[np.ndarray, ...]
    counts: np.ndarray
    _codes: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)

    @classmethod
    def encode(
        cls,
        table: pd.DataFrame,
        *,
        count_column: str,
        quasi_identifiers: Sequence[Hashable],
        hierarchies: Sequence[Hierarchy],
        unit_leaves: Sequence[np.ndarray],
        unit_weights: np.ndarray,
    ) -> PopulationLevels:
        """Encode ``table`` once and check that it covers the sample's units (leaf codes and records).

        Raises:
            PopulationColumnError: the table lacks a quasi-identifier or its count column.
            PopulationMismatchError: a count is not a number ≥ 0, a value of a QI column is not a
                leaf of its hierarchy, or a sample combination is absent or counts fewer people
                than sample records (the message names the columns, never a value).
        """
        missing = [q for q in [*quasi_identifiers, count_column] if q not in table.columns]
        if missing:
            raise PopulationColumnError(f"population_table lacks column(s) {missing!r}")
        counts = pd.to_numeric(table[count_column], errors="coerce").to_numpy(dtype=np.float64)
        if np.isnan(counts).any() or (counts < 0).any():
            raise PopulationMismatchError(f"population_table column {count_column!r} must hold counts >= 0")
        leaves = []
        for q, hierarchy, units in zip(quasi_identifiers, hierarchies, unit_leaves, strict=True):
            try:
                codes = hierarchy.leaf_codes(table[q].reset_index(drop=True))
            except HierarchyError:
                raise PopulationMismatchError(
                    f"population_table column {q!r} holds values that are not leaves of its hierarchy "
                    "(or missing values): the hierarchy must cover the population's values"
                ) from None
            leaves.append(np.concatenate([codes, np.asarray(units, dtype=np.int64)]))
        levels = cls(tuple(hierarchies), tuple(leaves), counts)
        levels._check_covers(quasi_identifiers, np.asarray(unit_weights, dtype=np.float64))
        return levels

    @property
    def n_population(self) -> int:
        """Rows of the population table."""
        return int(self.counts.shape[0])

    @property
    def n_units(self) -> int:
        """Units of the sample's snapshot."""
        return int(self.leaves[0].shape[0]) - self.n_population if self.leaves else 0

    def _level_codes(self, qi: int, level: int) -> np.ndarray:
        """Codes at ``level`` of QI number ``qi`` of the population's rows, then the units (cached)."""
        key = (qi, level)
        codes = self._codes.get(key)
        if codes is None:
            codes = self._codes[key] = self.hierarchies[qi].codes[level][self.leaves[qi]]
        return codes

    def _ids(self, node: Sequence[int]) -> tuple[np.ndarray, int]:
        parts = [
            (self._level_codes(qi, level), len(self.hierarchies[qi].labels[level])) for qi, level in enumerate(node)
        ]
        return combine_codes(parts, self.n_population + self.n_units)

    def people(self, node: Sequence[int]) -> np.ndarray:
        """The people of every sample unit's generalized combination at ``node`` (float, one per unit)."""
        ids, n_ids = self._ids(node)
        totals = np.bincount(ids[: self.n_population], weights=self.counts, minlength=n_ids)
        return totals[ids[self.n_population :]]

    def _check_covers(self, quasi_identifiers: Sequence[Hashable], unit_weights: np.ndarray) -> None:
        """Every raw combination of the sample is in the table, with at least as many people as records.

        Checked once at the bottom of the lattice: a node's counts are sums of the bottom's,
        on both sides, so a table covering the bottom covers every node.
        """
        bottom = (0,) * len(self.hierarchies)
        ids, n_ids = self._ids(bottom)
        population, units = ids[: self.n_population], ids[self.n_population :]
        listed = np.bincount(population, minlength=n_ids) > 0
        absent = ~listed[units]
        if absent.any():
            unlisted = [
                str(q)
                for q, leaves in zip(quasi_identifiers, self.leaves, strict=True)
                if not np.isin(leaves[self.n_population :][absent], leaves[: self.n_population]).all()
            ]
            combinations = int(np.unique(units[absent]).shape[0])
            where = (
                f"column(s) {unlisted} hold sample values the table does not list"
                if unlisted
                else f"of columns {[str(q) for q in quasi_identifiers]}"
            )
            raise PopulationMismatchError(
                f"population_table lacks {combinations} quasi-identifier combination(s) present in the sample ({where})"
            )
        records = np.bincount(units, weights=unit_weights, minlength=n_ids)
        people = np.bincount(population, weights=self.counts, minlength=n_ids)
        short = int((people[listed] < records[listed]).sum())
        if short:
            raise PopulationMismatchError(
                f"population_table counts are smaller than the sample for {short} combination(s) "
                f"of columns {[str(q) for q in quasi_identifiers]}"
            )
