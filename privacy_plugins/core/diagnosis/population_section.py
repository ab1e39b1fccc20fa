"""Risk beyond the sample inside the diagnosis: population risk of the candidates and of every subset measured.

The diagnosis measures sample risk (prosecutor) per QI subset; given a population
model (docs/population-risk.md) it also carries, for the same subsets, the journalist
and marketer risks and the population-uniqueness estimates, and for all candidates the
distribution of record risk for each attacker (records per risk interval: the HTML
report plots it). Counts and fractions only, never a value of the table.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice, lattice_order
from privacy_plugins.core.metrics.population import (
    PopulationModel,
    PopulationRisk,
    attacker_risk_distributions,
    population_risk,
)
from privacy_plugins.core.metrics.population_subsets import marginal_model
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable

__all__ = ["DEFAULT_POPULATION_MAX_SUBSETS", "PopulationDiagnosis", "diagnose_population"]

#: At most this many subsets get their population risk (each fits the estimators; ~10 ms apiece on Adult):
#: the smallest first, all candidates always; the others are counted in ``subsets_left_out``.
DEFAULT_POPULATION_MAX_SUBSETS = 2_000


@dataclass(frozen=True)
class PopulationDiagnosis:
    """Population risk of the candidates (``candidates``) and of each subset measured (``by_subset``).

    Attributes:
        candidates: :class:`PopulationRisk` over every candidate quasi-identifier.
        by_subset: (attributes, risk) for every non-empty subset the diagnosis measured, in
            lattice order (all 2^d − 1 when the diagnosis was exhaustive).
        risk_distributions: attacker (prosecutor, journalist, marketer) → record-risk interval →
            records, over every candidate.
        subsets_left_out: measured subsets beyond ``max_subsets`` (the largest), without population risk.
    """

    candidates: PopulationRisk
    by_subset: tuple[tuple[tuple[Hashable, ...], PopulationRisk], ...]
    risk_distributions: Mapping[str, Mapping[str, int]]
    subsets_left_out: int = 0

    def for_subset(self, attributes: Sequence[Hashable]) -> PopulationRisk:
        """The risk of one subset (any order); ``KeyError`` when the diagnosis did not measure it."""
        wanted = set(attributes)
        for names, risk in self.by_subset:
            if set(names) == wanted:
                return risk
        raise KeyError(f"subset {sorted(map(str, wanted))} was not measured by this diagnosis")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: ``candidates``, ``by_subset`` (each with its ``quasi_identifiers``), ``risk_distributions``."""
        return to_jsonable(
            {
                "candidates": self.candidates.to_dict(),
                "by_subset": [
                    {"quasi_identifiers": [str(a) for a in names], **risk.to_dict()} for names, risk in self.by_subset
                ],
                "risk_distributions": self.risk_distributions,
                "subsets_left_out": self.subsets_left_out,
            }
        )


def diagnose_population(
    table: pd.DataFrame,
    lattice: SubsetLattice,
    masks: Iterable[int],
    population: PopulationModel,
    *,
    counts: np.ndarray | None,
    threshold: float,
    max_subsets: int = DEFAULT_POPULATION_MAX_SUBSETS,
) -> PopulationDiagnosis:
    """The population section for the subsets ``masks`` (and all candidates) of the diagnosis's lattice.

    Each subset reuses the lattice's partition of its units, mapped back to the table's rows
    (no regrouping); a population table is summed to the subset's columns, so its marginals
    stay exact.
    """

    def classes(mask: int) -> EquivalenceClasses:
        class_of_unit, n_classes = lattice.partition(mask)
        class_of_row = class_of_unit[lattice.unit_of_row]
        return EquivalenceClasses.from_class_ids(table, lattice.names(mask), class_of_row, n_classes, weights=counts)

    full = lattice.full_mask
    everything = classes(full)
    by_subset = []
    ordered = sorted({m for m in masks if m and m != full}, key=lattice_order)
    chosen = [*ordered[: max(max_subsets - 1, 0)], full]
    for mask in chosen:
        subset = everything if mask == full else classes(mask)
        names = lattice.names(mask)
        by_subset.append((names, population_risk(subset, marginal_model(population, list(names)), threshold=threshold)))
    return PopulationDiagnosis(
        candidates=by_subset[[names for names, _ in by_subset].index(lattice.names(full))][1],
        by_subset=tuple(by_subset),
        risk_distributions=attacker_risk_distributions(everything, population),
        subsets_left_out=len(ordered) + 1 - len(chosen),
    )
