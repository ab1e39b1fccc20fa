"""Full-domain generalization on a snapshot alone: the part of a release that needs no records.

An engine (DuckDB, a SQL database, Spark) sends the weighted snapshot — counts
per distinct (QI values, model columns) — and gets back the chosen node, which
units are suppressed and the utility of the result. It then applies the node and
the suppression where the table lives. The numbers equal those of
:class:`~privacy_plugins.core.anonymize.full_domain.FullDomainAnonymizer` on the
records (``suppressed_rows="remove"``), because both search the same snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import LatticeDetails
from privacy_plugins.core.anonymize.full_domain import (
    FULL_DOMAIN_ALGORITHMS,
    _suppressed_units,
    _utility,
    search_lattice,
)
from privacy_plugins.core.anonymize.generalization_lattice import Node
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.parameters import check_fraction, suppression_budget
from privacy_plugins.errors import ConfigurationError

__all__ = ["SnapshotSolution", "solve_snapshot"]


@dataclass(frozen=True)
class SnapshotSolution:
    """The chosen node and what it does to each unit of the snapshot.

    Attributes:
        node: the hierarchy level of each QI (lattice order).
        suppressed_units: mask over the snapshot's units (their classes violate a model).
        suppressed: records suppressed.
        utility: the utility metrics of the published table.
        details: the levels and search statistics, as the in-memory path reports them.
    """

    node: Node
    suppressed_units: np.ndarray
    suppressed: int
    utility: UtilityMetrics
    details: LatticeDetails

    def suppressed_classes(self, snapshot: Snapshot) -> pd.DataFrame:
        """The generalized QI labels of every suppressed class (one row each), to filter them in an engine."""
        columns = {
            str(q): h.labels[level][snapshot.codes(qi, level)[self.suppressed_units]]
            for qi, (q, h, level) in enumerate(
                zip(snapshot.quasi_identifiers, snapshot.hierarchies, self.node, strict=True)
            )
        }
        return pd.DataFrame(columns).drop_duplicates().reset_index(drop=True)

    def labels(self, snapshot: Snapshot, qi: int) -> np.ndarray:
        """The published label of every unit for QI number ``qi``."""
        level = self.node[qi]
        return np.asarray(snapshot.hierarchies[qi].labels[level][snapshot.codes(qi, level)], dtype=object)


def solve_snapshot(
    snapshot: Snapshot,
    models: Sequence[PrivacyModel],
    *,
    suppression_limit: float = 0.0,
    algorithm: str = "optimal",
    metric: str = "ncp",
    n_sensitive: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> SnapshotSolution:
    """Search the lattice of ``snapshot`` and suppress the violating classes of the best node.

    Raises:
        ConfigurationError: unknown algorithm, no model, or a bad suppression limit.
        InfeasibleAnonymizationError: no node satisfies the models within the limit.
    """
    if algorithm not in FULL_DOMAIN_ALGORITHMS:
        raise ConfigurationError(f"algorithm must be one of {sorted(FULL_DOMAIN_ALGORITHMS)}, got {algorithm!r}")
    if not models:
        raise ConfigurationError("at least one privacy model is needed")
    check_fraction(suppression_limit, name="suppression_limit")
    budget = suppression_budget(suppression_limit, snapshot.n_rows)
    node, found = search_lattice(snapshot, models, budget, metric, algorithm, progress)
    suppressed = _suppressed_units(snapshot, node, models)
    k = max(model.minimum_class_size for model in models)
    qis = list(snapshot.quasi_identifiers)
    return SnapshotSolution(
        node=node,
        suppressed_units=suppressed,
        suppressed=int(snapshot.weights[suppressed].sum()),
        utility=_utility(snapshot, node, suppressed, k=k, n_sensitive=n_sensitive),
        details=LatticeDetails(
            levels=dict(zip(qis, node, strict=True)),
            heights=dict(zip(qis, snapshot.heights, strict=True)),
            nodes_checked=found.nodes_checked,
            lattice_size=found.lattice_size,
        ),
    )
