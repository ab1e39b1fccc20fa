"""The domain rule judged on candidate boxes inside a search (``history: {protect: domain}``).

:mod:`~privacy_plugins.core.history_domain` judges a finished candidate: every cell of the
overlay of a class's box with the earlier releases must keep |H(c) ∩ S(E)| ≥ min(l, |H(c)|).
A search (the clustering algorithms, bucket) proposes many candidate classes — a cluster, two
clusters merged — and needs a verdict per candidate, with the candidate's own values. What a
box asks does not depend on the values: the distinct non-empty H(c) of the cells it covers.
:class:`BoxRule` computes them once per box (one :func:`~privacy_plugins.core.history_domain.domain_overlay`
over every box not seen yet, batched) and keeps them; a candidate is then judged by a few
boolean operations on its value set. Where no kept release covers a cell (H = every value) the
class must hold l values of any kind.

The all-``*`` box is judged like any other (its box is the whole domain): the gate and the
intersection attack read a class whose labels are all ``*`` and whose values are published as
covering everyone (:mod:`~privacy_plugins.core.coverage`, marked suppressed rows aside).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privacy_plugins.core.coverage import marked_suppressed, require_hierarchies
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT
from privacy_plugins.core.history_domain import DomainOverlay, EarlierReleases, domain_breaks

if TYPE_CHECKING:
    from privacy_plugins.core.models.base import PrivacyModel

__all__ = ["BoxRule", "DomainGuard", "box_rules"]

#: The sensitive label given to probed boxes: in H(c) exactly where no kept release covers the cell.
_PROBE = "\x00no release covers this cell\x00"


def box_rules(models: Sequence[PrivacyModel]) -> list[BoxRule]:
    """The box rules ``models`` ask (:meth:`PrivacyModel.box_rule`; none without ``history: {protect: domain}``)."""
    return [rule for rule in (model.box_rule() for model in models) if rule is not None]


class BoxRule:
    """Which candidate classes (a box as QI labels, a value set) break the domain rule against a history.

    Args:
        earlier: the kept releases' class signatures (``__count`` per row) or published tables, oldest first.
        quasi_identifiers: the QIs; each needs a hierarchy.
        attribute: the sensitive attribute.
        l: the distinct values every point must keep (or all it has).
        hierarchies: per QI.
    """

    def __init__(
        self,
        earlier: Sequence[pd.DataFrame],
        quasi_identifiers: Sequence[Hashable],
        attribute: Hashable,
        l: int,
        hierarchies: Mapping[Hashable, Hierarchy] | None,
    ) -> None:
        self.attribute = attribute
        self.l = int(l)
        self._earlier = list(earlier)
        self._qis = list(quasi_identifiers)
        self._hierarchies = hierarchies
        published = [
            as_labels(t.loc[(t[COUNT].to_numpy() > 0 if COUNT in t.columns else True) & readable, attribute])
            for t, readable in ((t, ~marked_suppressed(t, self._qis, attribute)) for t in self._earlier)
        ]
        found = pd.unique(pd.concat(published, ignore_index=True).to_numpy(dtype=object)) if published else []
        #: The sensitive labels the history published: the columns of every value set.
        self.values = pd.Index(sorted(map(str, found)), dtype=object)
        self._asks: dict[tuple[str, ...], tuple[np.ndarray, bool]] = {}
        self._everywhere: dict[tuple[str, ...], np.ndarray] = {}  # per box: the values kept at its every point
        self._prepared: EarlierReleases | None = None  # the earlier releases, prepared at the first box learnt

    def judges(
        self,
        earlier: Sequence[pd.DataFrame],
        attribute: Hashable,
        l: int,
        hierarchies: Mapping[Hashable, Hierarchy] | None,
    ) -> bool:
        """This rule is the domain rule of ``attribute`` at ``l`` against these very release tables."""
        same = len(earlier) == len(self._earlier) and all(a is b for a, b in zip(earlier, self._earlier, strict=False))
        alike = dict(hierarchies or {}) == dict(self._hierarchies or {})
        return same and alike and attribute == self.attribute and int(l) == self.l

    def held(self, values: np.ndarray | pd.Series, group: np.ndarray, n_groups: int) -> np.ndarray:
        """Per group, its sensitive values (``values[i]`` is row i's, ``group[i]`` its group).

        Columns: :attr:`values` first, then the values the history never published (they count only
        where no release covers a cell).
        """
        raw = np.asarray(values, dtype=object)
        code, distinct = pd.factorize(raw)  # each distinct value's text once (a missing one: every row's)
        if len(raw) and int(code.min()) < 0:
            code, distinct = np.arange(len(raw)), raw
        text = as_labels(pd.Series(distinct, dtype=object)).astype(str)
        known = pd.Index(text, dtype=object).unique().difference(self.values)
        everything = self.values.append(known)
        position = everything.get_indexer(text)[code]
        held = np.zeros((n_groups, len(everything)), dtype=bool)
        placed = group >= 0
        held[group[placed], position[placed]] = True
        return held

    def breaks(self, labels: pd.DataFrame, held: np.ndarray) -> np.ndarray:
        """Per candidate (a row of ``labels``: its QI labels; of ``held``: its values): does a cell break the rule."""
        broken = np.zeros(len(labels), dtype=bool)
        # A class holding every value the history published (and l at least) keeps every H(c) whole: no
        # overlay needed (on Adult most large boxes, whose overlays are the costly ones).
        judged = np.flatnonzero(~(held[:, : len(self.values)].all(axis=1) & (held.sum(axis=1) >= self.l)))
        if not judged.shape[0]:
            return broken
        keys = self._keys(labels.iloc[judged])
        if self._earlier:
            # Nor one holding l values that every point of its box keeps (the releases' classes containing
            # the whole box hold them): no cell can narrow it (on Mondrian's halves most boxes).
            sure = self._kept_everywhere(keys)
            need = np.flatnonzero((sure & held[judged, : len(self.values)]).sum(axis=1) < self.l)
            judged, keys = judged[need], [keys[i] for i in need.tolist()]
            if not judged.shape[0]:
                return broken
        self._learn(keys)
        held = held[judged]
        asks = [self._asks[key][0] for key in keys]
        # a cell no release covers leaves every value: the class must hold l of any
        found = np.array([self._asks[key][1] for key in keys], dtype=bool) & (held.sum(axis=1) < self.l)
        sizes = np.array([len(a) for a in asks], dtype=np.int64)
        if sizes.sum():
            rows = np.concatenate([a for a in asks if len(a)])
            owner = np.repeat(np.arange(len(keys)), sizes)
            kept = (rows & held[owner, : len(self.values)]).sum(axis=1)
            found[owner[kept < np.minimum(self.l, rows.sum(axis=1))]] = True
        broken[judged] = found
        return broken

    def _keys(self, labels: pd.DataFrame) -> list[tuple[str, ...]]:
        """One key per candidate class (its labels as text), not per record."""
        text = [
            # text without a missing label is its own label (as_labels changes nothing else in it)
            column.to_numpy(dtype=str)
            if pd.api.types.is_string_dtype(column.dtype) and not column.isna().any()
            else as_labels(column).to_numpy(dtype=str)
            for column in (labels[q] for q in self._qis)
        ]
        return list(zip(*(t.tolist() for t in text), strict=True))

    def _learn(self, keys: list[tuple[str, ...]]) -> None:
        """What every box not seen yet asks.

        The distinct H(c) of its cells some release covers, and whether some cell of it no release covers.
        """
        fresh = list(dict.fromkeys(key for key in keys if key not in self._asks))
        if not fresh:
            return
        nothing = np.zeros((0, len(self.values)), dtype=bool)
        if not self._earlier:
            self._asks.update({key: (nothing, True) for key in fresh})
            return
        overlay = self._overlay(fresh)
        column = overlay.values.get_indexer(self.values)  # noqa: PD011 (a pd.Index)
        history = np.zeros((len(overlay.history), len(self.values)), dtype=bool)
        history[:, column >= 0] = overlay.history[:, column[column >= 0]]
        universal = overlay.history[:, overlay.values.get_loc(_PROBE)]  # noqa: PD011 (a pd.Index)
        open_box = np.zeros(len(overlay.class_values), dtype=bool)
        open_box[overlay.cell_class[universal]] = True
        # per box, the distinct H(c) of its covered cells: one sort of (box, H as bytes) for every box
        kept = np.flatnonzero(~universal & history.any(axis=1))
        owner, packed = overlay.cell_class[kept], np.packbits(history[kept], axis=1)
        order = np.lexsort([*packed.T[::-1], owner])  # by box, then by H
        owner, packed = owner[order], packed[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (owner[1:] != owner[:-1]) | (packed[1:] != packed[:-1]).any(axis=1)
        owner, cells = owner[new], history[kept[order[new]]]
        starts = np.searchsorted(owner, np.arange(len(overlay.class_values) + 1))
        for position, key in enumerate(fresh):  # the probe's row i is box i
            cls = int(overlay.class_of_row[position])
            self._asks[key] = (cells[starts[cls] : starts[cls + 1]], bool(open_box[cls]))

    def _kept_everywhere(self, keys: list[tuple[str, ...]]) -> np.ndarray:
        """Per box (its labels): the values of :attr:`values` H keeps at every point of it (remembered per box)."""
        fresh = list(dict.fromkeys(key for key in keys if key not in self._everywhere))
        if fresh:
            prepared = self._earlier_releases()
            kept = prepared.kept_everywhere(np.array(fresh, dtype=str).reshape(len(fresh), len(self._qis)))
            column = prepared.values.get_indexer(self.values)  # noqa: PD011 (a pd.Index)
            known = np.zeros((len(fresh), len(self.values)), dtype=bool)
            known[:, column >= 0] = kept[:, column[column >= 0]]
            self._everywhere.update(zip(fresh, known, strict=True))
        if not keys:
            return np.zeros((0, len(self.values)), dtype=bool)
        return np.stack([self._everywhere[key] for key in keys])

    def _earlier_releases(self) -> EarlierReleases:
        if self._prepared is None:
            self._prepared = EarlierReleases(self._earlier, self._qis, self.attribute, self._hierarchies)
        return self._prepared

    def _overlay(self, fresh: list[tuple[str, ...]]) -> DomainOverlay:
        """The overlay of the ``fresh`` boxes, each holding the probe value only (box i is row i)."""
        prepared = self._earlier_releases()
        keys = np.array(fresh, dtype=str).reshape(len(fresh), len(self._qis))
        values = prepared.values.append(pd.Index([_PROBE], dtype=object))  # noqa: PD011 (a pd.Index)
        held = np.zeros((len(fresh), len(values)), dtype=bool)
        held[:, -1] = True
        return prepared.boxes(keys, held, values, np.arange(len(fresh), dtype=np.int64))


class DomainGuard:
    """:func:`~privacy_plugins.core.history_domain.domain_breaks` of finished candidates, through box rules.

    A class's verdict depends only on its box and its sensitive values, and what a box asks is
    remembered by its :class:`BoxRule`: a suppression loop that re-checks ever smaller candidates
    computes the overlay only for boxes not seen yet, a class holding every value the history
    published needs none, and ``rules`` — the search's own (the history model's
    :meth:`~privacy_plugins.core.models.base.PrivacyModel.box_rule`, against the same release tables)
    — bring every box the search already judged (Mondrian's halves: every published class).
    """

    def __init__(
        self,
        earlier: Sequence[pd.DataFrame],
        quasi_identifiers: Sequence[Hashable],
        needs: Mapping[Hashable, int],
        hierarchies: Mapping[Hashable, Hierarchy] | None,
        rules: Sequence[BoxRule] = (),
    ) -> None:
        self._earlier = list(earlier)
        self._qis = list(quasi_identifiers)
        self._needs = {attribute: int(l) for attribute, l in needs.items()}
        self._hierarchies = hierarchies
        self._rules = {
            attribute: next((rule for rule in rules if rule.judges(self._earlier, attribute, l, hierarchies)), None)
            or BoxRule(self._earlier, self._qis, attribute, l, hierarchies)
            for attribute, l in self._needs.items()
        }

    def breaks(self, candidate: pd.DataFrame) -> np.ndarray:
        """Rows of ``candidate`` in a class that narrows a point of its box (as ``domain_breaks``)."""
        broken = np.zeros(len(candidate), dtype=bool)
        if not self._needs or not self._earlier or not len(candidate):
            return broken
        require_hierarchies(self._qis, self._hierarchies, "protecting points of the QI domain")
        text = pd.DataFrame({q: as_labels(candidate[q]).to_numpy(dtype=str) for q in self._qis})
        grouped = text.groupby(self._qis, sort=False)
        class_of = grouped.ngroup().to_numpy(dtype=np.int64)
        n_classes = int(class_of.max()) + 1
        first = np.unique(class_of, return_index=True)[1]
        labels = text.iloc[first].reset_index(drop=True)
        counted = candidate[COUNT].to_numpy() > 0 if COUNT in candidate.columns else np.ones(len(candidate), bool)
        every_marked = np.ones(len(candidate), dtype=bool)
        for attribute, l in self._needs.items():
            rule = self._rules[attribute]
            marked = marked_suppressed(candidate, self._qis, attribute)
            every_marked &= marked
            readable = counted & ~marked  # the rows that publish a value of this class
            values = candidate[attribute].to_numpy(dtype=object)
            held = rule.held(values, np.where(readable, class_of, -1), n_classes)
            judged = np.zeros(n_classes, dtype=bool)
            judged[class_of[readable]] = True  # a class of rows standing for no record, or hidden, is not judged
            if held.shape[1] < l:  # fewer values than l in all: "every value" (min(l, |H|)) is these few
                broken |= domain_breaks(self._earlier, candidate, self._qis, {attribute: l}, self._hierarchies)
                continue
            verdict = np.zeros(n_classes, dtype=bool)
            verdict[judged] = rule.breaks(labels.loc[judged], held[judged])
            broken |= verdict[class_of] & ~marked
        return broken & ~every_marked
