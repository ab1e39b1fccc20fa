"""Which units a full-domain node leaves out: violating classes whole, or a few records where a model says so.

A lattice node suppresses the classes that miss a model whole. For a model
:attr:`~privacy_plugins.core.models.base.PrivacyModel.repaired_by_removal` — the history model's
share bound over each record's history set (issue 26) — that costs far more than needed: a large
class fails because, over one person's history set H(t) of two or three values, one value holds
more than its share, and ⌈(N_v − b·ΣN)/(1 − b)⌉ records of it bring it back. On Adult with 20%
deletions before each release, whole classes made every node of release 3 exceed a 2% limit
although the records over a share were a few dozen (``docs/composition.md``).

:func:`left_out` asks such a model for those records (:meth:`PrivacyModel.removals`) on the classes
only it fails, re-checks *every* model on what is left (a removal can take a class below k or tip
another value over another record's share), asks again for the classes still failing only such
models (a few rounds), and suppresses whole whatever still fails, so every published class meets
every model exactly as before. The removals keep each class's value set, so a box rule's verdict
(judged by the caller on the whole classes) still holds. Without such a model nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["LeftOut", "left_out", "repairable"]

#: Rounds of removals before the classes still failing are suppressed whole.
_ROUNDS = 3


class LeftOut(NamedTuple):
    """What :func:`left_out` leaves out of a partition."""

    units: np.ndarray  # per unit: left out (a few records of a repaired class, or its class whole)
    whole: np.ndarray  # per class: suppressed whole (it fails some model with or without removals)


def repairable(models: Sequence[PrivacyModel], masks: Sequence[np.ndarray], whole: np.ndarray) -> np.ndarray:
    """Classes every model they miss may repair by removals (and not to be suppressed ``whole`` anyway)."""
    fixable = ~whole
    failing = np.zeros_like(whole)
    for model, mask in zip(models, masks, strict=True):
        failing |= mask
        if not model.repaired_by_removal:
            fixable &= ~mask
    return failing & fixable


def left_out(
    models: Sequence[PrivacyModel], classes: EquivalenceClasses, masks: Sequence[np.ndarray], whole: np.ndarray
) -> LeftOut:
    """Per unit of ``classes``: left out (its class suppressed whole, or one of the records removals name).

    ``masks``: each model's violating classes; ``whole``: classes to suppress whole besides (a box rule's).
    """
    violating = whole.copy()
    for mask in masks:
        violating |= mask
    fixable = repairable(models, masks, whole)
    keep = ~violating[classes.class_of_row]
    if not fixable.any():
        return LeftOut(~keep, violating)
    keep |= fixable[classes.class_of_row]
    # ``current``: the classes as left so far; ``units``: its units' positions in ``classes``
    current, current_masks, units, mending = classes, list(masks), np.arange(classes.n_units), fixable
    for _ in range(_ROUNDS):
        taken = np.zeros(current.n_units, dtype=bool)
        for model, mask in zip(models, current_masks, strict=True):
            if model.repaired_by_removal and (mask & mending).any():
                taken |= model.removals(current, mask & mending)
        if not taken.any():
            break
        keep[units[taken]] = False
        units = np.flatnonzero(keep)
        current = classes.restricted(keep)
        current_masks = [model.violating_classes(current) for model in models]
        mending = repairable(models, current_masks, np.zeros(current.n_classes, dtype=bool))
    if current is classes:  # nothing was removed: the fixable classes fail as they did
        return LeftOut(~keep | fixable[classes.class_of_row], violating)
    # whatever still fails is suppressed whole (in ``classes``' numbering)
    failing = np.zeros(current.n_classes, dtype=bool)
    for mask in current_masks:
        failing |= mask
    suppressed = violating & ~fixable
    if failing.any():
        original = np.zeros(current.n_classes, dtype=np.int64)
        original[current.class_of_row] = classes.class_of_row[units]
        suppressed[original[failing]] = True
        keep &= ~suppressed[classes.class_of_row]
    return LeftOut(~keep, suppressed)
