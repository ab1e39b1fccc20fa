"""One party's side of DPP2GA: its vertical part, its full-domain node and its partition.

A party holds a record id column and some quasi-identifiers with their
hierarchies. It starts at the least-loss full-domain node that makes its own
part k-anonymous (the core's ``optimal`` lattice search, no suppression), and
each :meth:`LocalParty.step` generalizes one quasi-identifier one level more:
the one whose next level adds the least NCP to its part. Generalizing along a
hierarchy only merges classes, so every later partition coarsens the first one.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.parameters import check_integer
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError, UnknownColumnError

__all__ = ["LocalParty", "canonical_labels"]


def canonical_labels(values: np.ndarray) -> np.ndarray:
    """Relabel ``values`` 0, 1, 2 … in order of first appearance (a partition's canonical form).

    Example:
        >>> canonical_labels(np.array([7, 3, 7, 9, 3])).tolist()
        [0, 1, 0, 2, 1]
    """
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return np.asarray(rank[inverse.reshape(-1)], dtype=np.int64)


@dataclass(eq=False)
class LocalParty:
    """A party's vertical part and the full-domain node it is generalized to.

    Build it with :meth:`start`. ``node`` holds one level per quasi-identifier.
    """

    record_ids: list[str]
    quasi_identifiers: tuple[Hashable, ...]
    k: int
    snapshot: Snapshot
    node: list[int]
    steps: list[Hashable] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        frame: pd.DataFrame,
        *,
        id_column: Hashable,
        quasi_identifiers: Sequence[Hashable],
        hierarchies: Mapping[Hashable, Hierarchy],
        k: int,
    ) -> LocalParty:
        """Validate the part and generalize it to local k-anonymity (least NCP, no suppression).

        Raises:
            ConfigurationError: unknown columns, missing or duplicate record ids, k out of range.
            HierarchyError: a quasi-identifier without a hierarchy covering its values.
            InfeasibleAnonymizationError: fewer than k records.
        """
        from privacy_plugins.core.anonymize.registry import anonymize
        from privacy_plugins.core.models import KAnonymity

        k = check_integer(k, name="k", minimum=1)
        qis = list(quasi_identifiers)
        if not qis:
            raise ConfigurationError("a party needs at least one quasi-identifier")
        missing = [c for c in [id_column, *qis] if c not in frame.columns]
        if missing:
            raise UnknownColumnError(f"columns not found in the party's table: {missing!r}")
        if id_column in qis:
            raise ConfigurationError(f"the id column {id_column!r} cannot also be a quasi-identifier")
        ids = frame[id_column]
        if ids.isna().any():
            raise ConfigurationError(f"id column {id_column!r} has {int(ids.isna().sum())} missing ids")
        text = ids.astype(str)
        if text.duplicated().any():
            raise ConfigurationError(
                f"id column {id_column!r} has {int(text.duplicated().sum())} duplicate ids; each record needs one id"
            )
        if len(frame) < k:
            raise InfeasibleAnonymizationError(f"{len(frame)} records cannot be {k}-anonymous")
        part = frame[qis].reset_index(drop=True)
        local = anonymize(part, quasi_identifiers=qis, models=[KAnonymity(k)], hierarchies=hierarchies)
        levels = local.details.levels  # type: ignore[attr-defined]
        snapshot = Snapshot.build(part, quasi_identifiers=qis, hierarchies=hierarchies)
        return cls(
            record_ids=text.tolist(),
            quasi_identifiers=tuple(qis),
            k=k,
            snapshot=snapshot,
            node=[int(levels[q]) for q in qis],
        )

    @property
    def n_records(self) -> int:
        """Records in the part."""
        return len(self.record_ids)

    @property
    def levels(self) -> dict[Hashable, int]:
        """The current level of each quasi-identifier."""
        return dict(zip(self.quasi_identifiers, self.node, strict=True))

    def record_classes(self) -> np.ndarray:
        """The equivalence class of every record at the current node (canonical numbering)."""
        classes = self.snapshot.classes(self.node)
        return canonical_labels(classes.class_of_row[self.snapshot.unit_of_row])

    def _mean_cost(self, qi: int, level: int) -> float:
        weights = self.snapshot.weights
        return float((self.snapshot.costs(qi, level) * weights).sum() / weights.sum())

    def step(self) -> Hashable | None:
        """Generalize the quasi-identifier whose next level adds the least NCP; ``None`` at the top."""
        best: tuple[float, int] | None = None
        for qi, level in enumerate(self.node):
            if level < self.snapshot.heights[qi]:
                delta = self._mean_cost(qi, level + 1) - self._mean_cost(qi, level)
                if best is None or delta < best[0] - 1e-12:
                    best = (delta, qi)
        if best is None:
            return None
        self.node[best[1]] += 1
        self.steps.append(self.quasi_identifiers[best[1]])
        return self.quasi_identifiers[best[1]]

    def generalized(self) -> pd.DataFrame:
        """The part's quasi-identifiers generalized to the current node, one row per record (input order)."""
        columns = {}
        for qi, (column, level) in enumerate(zip(self.quasi_identifiers, self.node, strict=True)):
            codes = self.snapshot.codes(qi, level)[self.snapshot.unit_of_row]
            columns[column] = self.snapshot.hierarchies[qi].labels[level][codes]
        return pd.DataFrame(columns)
