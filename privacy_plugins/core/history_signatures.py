"""Deletions between releases: classes that keep the signatures of the earlier classes they overlap.

A person deleted from the source after release j is no target of later checks (her raw
quasi-identifiers are gone, and the history keeps none), yet the adversary may assume her in
every later release that covers her values. m-invariance (Xiao & Tao, SIGMOD 2007) keeps
what such a person's intersection holds by keeping every record's class *signature* (its set
of sensitive values) from release to release, publishing counterfeit records where the
survivors cannot. This module is its counterfeit-free core, on published classes only:

    every class G of the new release holds every sensitive value of every class E of the
    last release whose box overlaps G's box (some point of the QI domain is covered by both).

**Why it suffices.** Let d be in release j, covered there by classes whose values hold
everything her intersection H keeps (H ⊆ S_j(q_d)). A class G of release j+1 covering q_d
overlaps every class of release j covering q_d, so S(G) ⊇ S_j(q_d) ⊇ H; the same holds from
release to release, so no later release narrows H — which the composition check kept at
≥ l while d was present. A release covering nobody at q_d tells nothing. Only the last
release needs comparing. No raw value is needed: boxes are compared label against label
over the hierarchies' leaves (the QI domain).

**Cost.** A class that lost a value (its last holder deleted, no newcomer bringing it back)
cannot be published without counterfeits: its records are suppressed, within the limit.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from privacy_plugins.core.coverage import covering_matrix, require_hierarchies
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT

__all__ = ["signature_breaks"]


def _domain(hierarchy: Hierarchy) -> pd.Series:
    """The hierarchy's leaves, numeric when every leaf is a number (so ranges cover them)."""
    leaves = pd.Series(list(hierarchy.leaves), dtype=object)
    numbers = pd.to_numeric(leaves, errors="coerce")
    return pd.Series(numbers.to_numpy(dtype=float)) if not numbers.isna().any() else leaves


def signature_breaks(
    previous: pd.DataFrame,
    candidate: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
) -> np.ndarray:
    """Rows of ``candidate`` in a class missing a value of an earlier class it overlaps (see the module).

    Args:
        previous: the last release's class signature (labels, sensitive values, ``__count``).
        candidate: the new release as published rows (or its signature).
        quasi_identifiers: the QIs; each needs a hierarchy (its leaves are the domain boxes are compared on).
        sensitive_attributes: the sensitive columns whose signatures are kept.
        hierarchies: per QI.

    Raises:
        ConfigurationError: a QI has no hierarchy.
    """
    qis = list(quasi_identifiers)
    hierarchies = hierarchies or {}
    require_hierarchies(qis, hierarchies, "keeping class signatures across deletions")
    if not len(previous) or not len(candidate):
        return np.zeros(len(candidate), dtype=bool)
    old_keys = previous[qis].astype(str).drop_duplicates().reset_index(drop=True)
    new_class = candidate.groupby(qis, sort=False, dropna=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    new_keys = candidate.iloc[np.unique(new_class, return_index=True)[1]][qis].astype(str).reset_index(drop=True)
    overlap = np.ones((len(new_keys), len(old_keys)), dtype=bool)
    for qi in qis:
        hierarchy = hierarchies[qi]
        assert hierarchy is not None
        new_labels, new_code = np.unique(as_labels(new_keys[qi]).to_numpy(dtype=str), return_inverse=True)
        old_labels, old_code = np.unique(as_labels(old_keys[qi]).to_numpy(dtype=str), return_inverse=True)
        domain = _domain(hierarchy)
        new_cover = covering_matrix(domain, pd.Index(new_labels, dtype=object), hierarchy)  # leaves × labels
        old_cover = covering_matrix(domain, pd.Index(old_labels, dtype=object), hierarchy)
        shares = (new_cover.T.astype(np.int32) @ old_cover.astype(np.int32)) > 0  # some leaf under both
        overlap &= shares[new_code.reshape(-1)][:, old_code.reshape(-1)]
    old_class = (
        previous[qis].astype(str).merge(old_keys.reset_index(), on=qis, how="left")["index"].to_numpy(dtype=np.int64)
    )
    broken = np.zeros(len(new_keys), dtype=bool)
    for attribute in sensitive_attributes:
        values = pd.Index(
            pd.unique(
                pd.concat([as_labels(previous[attribute]), as_labels(candidate[attribute])]).to_numpy(dtype=object)
            )
        )
        held_old = np.zeros((len(old_keys), len(values)), dtype=bool)
        present = previous[COUNT].to_numpy() > 0 if COUNT in previous else np.ones(len(previous), dtype=bool)
        held_old[old_class[present], values.get_indexer(as_labels(previous[attribute]))[present]] = True
        held_new = np.zeros((len(new_keys), len(values)), dtype=bool)
        held_new[new_class, values.get_indexer(as_labels(candidate[attribute]))] = True
        needed = (overlap.astype(np.int32) @ held_old.astype(np.int32)) > 0
        broken |= (needed & ~held_new).any(axis=1)
    return np.asarray(broken[new_class], dtype=bool)
