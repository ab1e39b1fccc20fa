"""What a two-table (QIT + ST) release tells about one person: the groups covering her exact QI tuple.

The QIT publishes exact QI values, so an adversary who knows a target's QIs finds every group
holding a row with exactly her tuple; her candidate values are the union of those groups'
values, with counts summed over them (each group once), as the release history's signature of
a pair states it (:func:`privacy_plugins.core.history.linked_signature`). A model that reads a
per-record column of the QIT (a column derived from the raw QIs, such as the release history's
set H(t)) is judged on these *covering classes*: one class per QI tuple, holding the ST rows of
every group that covers it, weighted by their counts, and the tuple's record columns. The
models of the groups themselves (k, l of a group) are judged on the groups
(:func:`~privacy_plugins.core.anonymize.base.linked_classes`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import VerificationError

__all__ = ["covering_classes", "record_models", "tuple_ids"]


def tuple_ids(qit: pd.DataFrame, quasi_identifiers: Sequence[Hashable]) -> np.ndarray:
    """A dense id per QIT row: its exact QI tuple (in order of first appearance)."""
    return qit.groupby(list(quasi_identifiers), dropna=False, sort=False, observed=True).ngroup().to_numpy(np.int64)


def record_models(models: Sequence[PrivacyModel], qit_columns: Sequence[Hashable]) -> list[PrivacyModel]:
    """The models reading a per-record column the QIT holds: judged on the covering classes, not on the groups."""
    held = set(qit_columns)
    return [m for m in models if any(c in held and c != m.sensitive_attribute for c in m.columns)]


def covering_classes(
    qit: pd.DataFrame,
    st: pd.DataFrame,
    group_column: str,
    quasi_identifiers: Sequence[Hashable],
    record_columns: Sequence[Hashable],
    tuples: np.ndarray | None = None,
) -> EquivalenceClasses:
    """One class per exact QI tuple: the ST rows of every group holding it (weights: counts), its record columns.

    Class ``i`` is the tuple of :func:`tuple_ids` ``i`` (``tuples``: those ids, when the caller has
    them). A record column must be one value per tuple (it is derived from the raw QIs), else the
    pair is refused.

    Raises:
        VerificationError: an ST group no QIT row holds, a QIT group absent from the ST, or a
            record column that differs within a tuple.
    """
    qis = list(quasi_identifiers)
    tuple_of_row = tuple_ids(qit, qis) if tuples is None else tuples
    n_tuples = int(tuple_of_row.max()) + 1 if len(qit) else 0
    first = np.unique(tuple_of_row, return_index=True)[1]
    record = {}
    for column in record_columns:
        values = qit[column].to_numpy(dtype=object)
        per_tuple = values[first]
        if not (pd.Series(per_tuple[tuple_of_row]) == pd.Series(values)).all():
            raise VerificationError(f"column {column!r} differs within one QI tuple; nothing may be published")
        record[column] = per_tuple
    group_of_row, groups = pd.factorize(qit[group_column], use_na_sentinel=False)
    n_groups = len(groups)
    st_group = pd.Index(groups).get_indexer(st[group_column])
    if (st_group < 0).any() or np.setdiff1d(np.arange(n_groups), st_group).shape[0]:
        raise VerificationError("the QIT and ST hold different groups; nothing may be published")
    pairs = np.unique(tuple_of_row * max(n_groups, 1) + group_of_row.astype(np.int64))
    pair_tuple, pair_group = pairs // max(n_groups, 1), pairs % max(n_groups, 1)
    order = np.argsort(st_group, kind="stable")
    per_group = np.bincount(st_group, minlength=n_groups)
    start = np.cumsum(per_group) - per_group
    lengths = per_group[pair_group]
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = order[np.repeat(start[pair_group], lengths) + offsets]
    cls = np.repeat(pair_tuple, lengths)
    sensitive = [c for c in st.columns if c not in (group_column, "count")]
    frame = pd.DataFrame({c: st[c].to_numpy()[rows] for c in sensitive})
    for column, per_tuple in record.items():
        frame[column] = per_tuple[cls]
    for q in qis:
        if q not in frame.columns:
            frame[q] = cls
    weights = st["count"].to_numpy(dtype=np.int64)[rows]
    return EquivalenceClasses.from_class_ids(frame, tuple(qis), cls, n_tuples, weights=weights)
