"""(c) for a share bound: the fewest published records to leave out so no value is over its share (issue 26).

The gate's leakage rule over the history (``docs/composition.md``) counts, for a target t, the
values of her history set H(t) in every candidate class covering her: N(t). When the most
frequent value v holds more than the bound b of ΣN, leaving out the whole classes that cover
her (what (c) does for other rules) costs far more than needed: ⌈(N_v − b·ΣN) / (1 − b)⌉
records holding v bring v within b. :func:`share_excess` picks them from the covering classes
other than t's own first, largest first, never taking a class below its smallest valid size or
out of any model, and never a record that would then be over the bound itself (a record left
out stays a target the next check judges). Only history models with a share bound
(:attr:`~privacy_plugins.core.models.HistoryDiversity.bound`) are served; nothing here reports a value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privacy_plugins.core.composition import covering_sets
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT
from privacy_plugins.core.models import HistoryDiversity, PrivacyModel
from privacy_plugins.core.parameters import TOLERANCE
from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["share_excess"]


@dataclass
class _Coverage:
    """Which published classes cover which targets, and what the published rows hold (weights, classes)."""

    rows: np.ndarray  # the target of each published row
    weight: np.ndarray
    position: np.ndarray  # target → its position among the involved targets (-1: not involved)
    combo_of: np.ndarray  # involved target → its distinct QI combination
    combo: np.ndarray  # covering pairs: combination …
    cls: np.ndarray  # … and class
    class_of_row: np.ndarray
    spare: np.ndarray  # records each class can lose and keep its smallest valid size

    def __post_init__(self) -> None:
        # Rows per class and classes per combination, sorted once: a target's covering rows are a gather.
        self._class_rows = np.argsort(self.class_of_row, kind="stable")
        n_classes = int(self.class_of_row.max()) + 1 if self.class_of_row.shape[0] else 0
        self._class_start = np.searchsorted(self.class_of_row[self._class_rows], np.arange(n_classes + 1))
        by_combo = np.argsort(self.combo, kind="stable")
        self._combo_classes = self.cls[by_combo]
        n_combos = int(self.combo_of.max()) + 1 if self.combo_of.shape[0] else 0
        self._combo_start = np.searchsorted(self.combo[by_combo], np.arange(n_combos + 1))

    def covering(self, target: int) -> np.ndarray:
        """Published rows of the classes covering ``target`` (indices, ascending)."""
        combo = self.combo_of[self.position[target]]
        classes = self._combo_classes[self._combo_start[combo] : self._combo_start[combo + 1]]
        parts = [self._class_rows[self._class_start[c] : self._class_start[c + 1]] for c in classes.tolist()]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def members(self, c: int) -> np.ndarray:
        """Published rows of class ``c`` (ascending)."""
        return self._class_rows[self._class_start[c] : self._class_start[c + 1]]


def share_excess(
    targets: pd.DataFrame,
    derived: pd.DataFrame,
    published: pd.DataFrame,
    rows: np.ndarray,
    at_risk: np.ndarray,
    qis: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    models: Sequence[PrivacyModel],
    weighted: bool,
) -> np.ndarray:
    """Published rows to leave out so that each at-risk target's most frequent value is back within the share bound.

    Args:
        targets: the raw records (or weighted units).
        derived: ``targets`` with the models' derived columns (the history sets).
        published: the candidate's rows (``COUNT`` when ``weighted``).
        rows: ``rows[i]`` is published row i's target.
        at_risk: the composition check's mask over ``targets``.
        qis: the QIs.
        hierarchies: the QIs' hierarchies (coverage).
        models: the bound models, history models included.
        weighted: rows stand for ``COUNT`` records each.
    """
    drop = np.zeros(len(published), dtype=bool)
    chosen = [m for m in models if isinstance(m, HistoryDiversity) and m.bound is not None]
    risky = np.flatnonzero(at_risk)
    if not chosen or not risky.shape[0] or not len(published):
        return drop
    coverage = _coverage(targets, published, rows, risky, qis, hierarchies, models, weighted)
    involved = np.flatnonzero(coverage.position >= 0)
    frame = published.drop(columns=[COUNT], errors="ignore").reset_index(drop=True)
    for column in derived.columns.difference(frame.columns):  # what the models read, from the raw records
        frame[column] = derived[column].to_numpy()[rows]

    judged: dict[tuple[int, bytes], bool] = {}  # (class, its rows left out) → verdict: targets share candidates

    def class_holds(c: int, drop: np.ndarray) -> bool:
        """Class ``c`` without the rows in ``drop`` still meets every model."""
        every = coverage.members(c)
        key = (c, every[drop[every]].tobytes())
        if key not in judged:
            judged[key] = _holds(every[~drop[every]])
        return judged[key]

    def _holds(here: np.ndarray) -> bool:
        weights = coverage.weight[here].astype(np.int64) if weighted else None
        members = frame.iloc[here].reset_index(drop=True)
        single = np.zeros(here.shape[0], dtype=np.int64)
        one = EquivalenceClasses.from_class_ids(members, tuple(qis), single, 1, weights=weights)
        return not any(model.violating_classes(one)[0] for model in models)

    for model in chosen:
        _ShareRule(model, coverage, derived.iloc[involved], published, class_holds).remove(risky, drop)
    return drop


def _coverage(
    targets: pd.DataFrame,
    published: pd.DataFrame,
    rows: np.ndarray,
    risky: np.ndarray,
    qis: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    models: Sequence[PrivacyModel],
    weighted: bool,
) -> _Coverage:
    weight = published[COUNT].to_numpy(dtype=float) if weighted else np.ones(len(published))
    involved = np.union1d(risky, rows)  # the at-risk targets and the published ones (candidates to remove)
    combo_of = targets.iloc[involved].groupby(qis, dropna=False, sort=False, observed=True).ngroup().to_numpy()
    first = np.unique(combo_of, return_index=True)[1]
    probe = published[qis].assign(__value="")
    combos = targets.iloc[involved[first]][qis].reset_index(drop=True)
    found = covering_sets(combos, [probe], qis, "__value", hierarchies)
    assert found.matches is not None
    combo, cls, class_of_row = found.matches[0]
    position = np.full(len(targets), -1, dtype=np.int64)
    position[involved] = np.arange(involved.shape[0])
    size = np.bincount(class_of_row, weights=weight)
    spare = size - max((m.minimum_class_size for m in models), default=1)
    return _Coverage(rows, weight, position, combo_of, combo, cls, class_of_row, spare)


class _ShareRule:
    """One history model's share rule over the coverage: N(t), and the records to leave out."""

    def __init__(
        self,
        model: HistoryDiversity,
        coverage: _Coverage,
        derived: pd.DataFrame,
        published: pd.DataFrame,
        class_holds: Callable[[int, np.ndarray], bool],
    ) -> None:
        assert model.bound is not None
        self.class_holds = class_holds
        self.model, self.bound, self.coverage = model, float(model.bound), coverage
        self.sets, self.universal = model.history_sets(derived)
        labels = as_labels(published[model.sensitive_attribute]).to_numpy(dtype=object)
        self.value = model.values.get_indexer(labels)  # noqa: PD011 (the history's published labels)

    def counted(self, target: int, drop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The published rows still counted for ``target`` (covering, value in H(t): indices) and N(t)."""
        at = self.coverage.position[target]
        value, weight = self.value, self.coverage.weight
        rows = self.coverage.covering(target)
        here = value[rows]
        left = rows[(here >= 0) & self.sets[at][np.maximum(here, 0)] & ~drop[rows]]
        return left, np.bincount(value[left], weights=weight[left], minlength=len(self.model.values))

    def within(self, target: int, drop: np.ndarray) -> bool:
        """``target`` passes the rule (or is not judged by it: no release covers her, or H(t) is already short)."""
        at = self.coverage.position[target]
        if self.universal[at] or self.sets[at].sum() < self.model.l - TOLERANCE:
            return True
        counts = self.counted(target, drop)[1]
        total = counts.sum()
        enough = (counts > 0).sum() >= self.model.l - TOLERANCE
        return bool(total > 0 and enough and counts.max() <= self.bound * total + TOLERANCE)

    def remove(self, risky: np.ndarray, drop: np.ndarray) -> None:
        """Mark in ``drop`` the fewest records holding each at-risk target's over-share value."""
        coverage = self.coverage
        for target in risky.tolist():  # the at-risk targets: few, each a handful of covering rows
            if self.universal[coverage.position[target]]:
                continue
            left, counts = self.counted(target, drop)
            top, total = int(np.argmax(counts)), counts.sum()
            if total <= 0 or counts[top] <= self.bound * total + TOLERANCE:
                continue
            need = np.ceil((counts[top] - self.bound * total) / (1.0 - self.bound) - TOLERANCE)
            candidates = left[(self.value[left] == top) & (coverage.rows[left] != target)]
            own = np.isin(coverage.class_of_row[candidates], coverage.class_of_row[coverage.rows == target])
            size = coverage.spare[coverage.class_of_row[candidates]]
            for row in candidates[np.lexsort((-size, own))].tolist():
                if need <= 0:
                    break
                c, weight = coverage.class_of_row[row], coverage.weight[row]
                if coverage.spare[c] < weight:  # the class keeps its smallest valid size
                    continue
                drop[row] = True  # tentatively: the record left out stays a target and must stay within,
                if not self.within(int(coverage.rows[row]), drop) or not self.class_holds(c, drop):  # its class too
                    drop[row] = False
                    continue
                coverage.spare[c], need = coverage.spare[c] - weight, need - weight
