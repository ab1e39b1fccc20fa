"""Anonymization on a snapshot alone: the part of a release that needs no records.

An engine (DuckDB, a SQL database, Spark) sends the weighted snapshot — counts
per distinct (QI values, model columns) — and gets back the chosen node, which
units are suppressed and the utility of the result. It then applies the node and
the suppression where the table lives. Any anonymizer tagged ``works_on_snapshot``
solves it (:class:`~privacy_plugins.core.anonymize.registry.SnapshotAnonymizer`);
the full-domain searches give the numbers they give on the records
(``suppressed_rows="remove"``), because both search the same snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationDetails
from privacy_plugins.core.anonymize.generalization_lattice import Node
from privacy_plugins.core.anonymize.registry import DEFAULT_ALGORITHM, _options, snapshot_anonymizer
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import PrivacyModel
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
    details: AnonymizationDetails

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
    algorithm: str = DEFAULT_ALGORITHM,
    n_sensitive: int = 0,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> SnapshotSolution:
    """Solve ``snapshot`` with the registered ``algorithm`` when it works on a snapshot (its tags say so).

    ``options`` are the algorithm's own (e.g. ``metric="lm"``), checked against its schema.

    Raises:
        ConfigurationError: unknown algorithm or option, one that needs the rows, no model, or a bad
            suppression limit.
        InfeasibleAnonymizationError: the models cannot be met within the limit.
    """
    solver = snapshot_anonymizer(algorithm)
    if solver is None:
        raise ConfigurationError(f"algorithm {algorithm!r} does not work on a snapshot: it needs the rows")
    if not models:
        raise ConfigurationError("at least one privacy model is needed")
    chosen = _options(solver, options)
    refusal = solver.snapshot_refusal(chosen)
    if refusal is not None:
        raise ConfigurationError(f"algorithm {algorithm!r} cannot solve a snapshot: {refusal}")
    return solver.solve_snapshot(
        snapshot, models, suppression_limit=suppression_limit, n_sensitive=n_sensitive, progress=progress, **chosen
    )
