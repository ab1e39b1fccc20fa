"""The models' box rules judged on a full-domain node's classes (``history: {protect: domain}``).

A model may ask a rule of each class's published *box* (:meth:`~privacy_plugins.core.models.base.PrivacyModel.box_rule`:
the history model's domain rule, :mod:`~privacy_plugins.core.history_boxes`). At a lattice node a
class's box is the product of its labels' leaves at the node's levels, and its values are those of
its units; the lattice search adds the classes that break a rule to the node's violating classes
(suppressed whole within the limit, like any other).

**Not monotone under generalization**, so the search never prunes with it (the model declares
itself non-monotone and offers its record part as the relaxation): a coarser node's class is the
union of finer classes, but its box is the product of the coarser labels, which also holds the
points of finer classes no record falls in. Such a point can sit where a deleted person was
(H(p) = her old class's values) and the coarser class, holding other values, narrows it although
every finer class passed (``tests/core/test_history_domain_lattice.py``). On the points the finer
boxes do cover, merging only adds values, so the rule can fail higher only through empty cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privacy_plugins.core.history_boxes import BoxRule
from privacy_plugins.core.partition import EquivalenceClasses

if TYPE_CHECKING:
    from privacy_plugins.core.anonymize.snapshot import Snapshot

__all__ = ["breaking_classes"]


def breaking_classes(
    rules: Sequence[BoxRule], snapshot: Snapshot, node: Sequence[int], classes: EquivalenceClasses
) -> np.ndarray:
    """Per class of ``snapshot.classes(node)`` (``classes``): its box and values break one of ``rules``."""
    bad = np.zeros(classes.n_classes, dtype=bool)
    if not rules or not classes.n_classes:
        return bad
    first = np.zeros(classes.n_classes, dtype=np.int64)
    first[classes.class_of_row[::-1]] = np.arange(classes.n_units - 1, -1, -1)  # a unit of each class
    labels = pd.DataFrame(
        {
            qi: hierarchy.labels[level][snapshot.codes(q, level)[first]]
            for q, (qi, hierarchy, level) in enumerate(
                zip(snapshot.quasi_identifiers, snapshot.hierarchies, node, strict=True)
            )
        }
    )
    for rule in rules:
        held = rule.held(classes.frame[rule.attribute].to_numpy(), classes.class_of_row, classes.n_classes)
        bad |= rule.breaks(labels, held)
    return bad
