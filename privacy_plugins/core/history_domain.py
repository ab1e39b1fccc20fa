"""Points of the QI domain, not only present records: newcomers pinned before they joined, deleted people.

The gate's record check (:mod:`~privacy_plugins.core.history_check`) judges the records of the
current source. Two kinds of people escape it (``docs/composition.md``): a newcomer whose QI
point earlier releases (made from other people, before she joined) already narrowed below l,
and a deleted person the adversary wrongly assumes still present. Both sit at a *point* p of
the QI domain (the product of the hierarchies' leaves) that some release covers; what the
adversary believes of anyone at p is

    H(p) = ∩ over the kept releases r of C_r(p),   C_r(p) = ∪ S(G) over the classes G of r covering p

(every value when no class of r covers p: the release tells nothing there). This module
requires of a candidate, for every class E and every point p of E's box:

    |H(p) ∩ S(E)| ≥ min(l, |H(p)|).

If every release since the first (an l-diverse one) does so, no point — a present, future or
deleted person — is ever left below l values: the new C(p) holds S(E), so the new intersection
keeps min(l, |H(p)|) ≥ … ≥ l values. Nothing raw is kept and no row is counterfeited: the
points come from the published boxes only.

**Cells.** H is constant where the same classes of every release cover a point, so the points of
a box are grouped into *cells* by refinement, one QI after another: per QI the leaves are grouped
into atoms (leaves every published label of that QI either covers or not together); a region of
E's box is split by which still-overlapping earlier classes cover each of its atoms. Labels meet
over the leaves (:func:`~privacy_plugins.core.coverage.covering_matrix`), so hierarchy nodes
(full-domain: nested or disjoint, an equi-join at the coarser level) and the ranges and per-class
levels of local recoding (Mondrian, clustering: a box-overlap join) are handled by one rule.
A set of covering classes is identified by a sum of random 64-bit keys (collisions: ~n²/2⁶⁴).

**Marked suppressed rows** (every QI ``*``, the sensitive value hidden:
:func:`~privacy_plugins.core.coverage.marked_suppressed`) publish no value: they are left out
of every release and of the candidate, as the intersection attack leaves them out. A class whose
labels are all ``*`` but whose values are published is a class like any other: its box is the
whole domain (it narrows every point nobody else covers to its values), and a candidate's is
judged.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from privacy_plugins.core.coverage import covering_matrix, marked_suppressed, require_hierarchies
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT, class_signature

__all__ = ["DomainOverlay", "EarlierReleases", "domain_breaks", "domain_overlay"]


@dataclass(frozen=True, eq=False)
class DomainOverlay:
    """The cells of a candidate's boxes over the history, and what each leaves. Counts and codes only.

    Attributes:
        cell_class: per cell, the candidate class (row of ``class_values``) whose box holds it.
        history: per cell, H(c) as a boolean row over ``values`` (every value where no release covers it).
        class_values: per candidate class, S(E) over ``values``.
        class_of_row: per candidate row, its class (-1: a marked suppressed row, not judged).
        values: the sensitive labels (columns of the matrices).
        open: per cell, no kept release covers it (H is every value of the attribute, not only ``values``).
    """

    cell_class: np.ndarray
    history: np.ndarray
    class_values: np.ndarray
    class_of_row: np.ndarray
    values: pd.Index
    open: np.ndarray

    def narrowed(self, l: int) -> np.ndarray:
        """Per cell: the candidate leaves it fewer than min(l, |H(c)|) values (l where no release covers it)."""
        kept = (self.history & self.class_values[self.cell_class]).sum(axis=1)
        need = np.where(self.open, l, np.minimum(l, self.history.sum(axis=1)))
        return np.asarray(kept < need, dtype=bool)


def domain_breaks(
    earlier: Sequence[pd.DataFrame],
    candidate: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    needs: Mapping[Hashable, int],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
) -> np.ndarray:
    """Rows of ``candidate`` in a class that narrows some point of its box below ``needs[attribute]``.

    Args:
        earlier: the kept releases' class signatures (or published tables), oldest first.
        candidate: the new release as published rows or its class signature.
        quasi_identifiers: the QIs; each needs a hierarchy (its leaves are the domain).
        needs: per sensitive attribute, l (distinct values a point must keep, or all it has).
        hierarchies: per QI.
    """
    broken = np.zeros(len(candidate), dtype=bool)
    if not earlier or not len(candidate):
        return broken
    for attribute, l in needs.items():
        overlay = domain_overlay(earlier, candidate, quasi_identifiers, attribute, hierarchies)
        failing = np.zeros(len(overlay.class_values), dtype=bool)
        failing[overlay.cell_class[overlay.narrowed(int(l))]] = True
        inside = overlay.class_of_row >= 0
        broken[inside] |= failing[overlay.class_of_row[inside]]
    return broken


def domain_overlay(
    earlier: Sequence[pd.DataFrame],
    candidate: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    attribute: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    memo: dict[int, tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray, np.ndarray]]] | None = None,
) -> DomainOverlay:
    """Every cell of every candidate box over the kept releases (see the module), with H(c) and S(E).

    ``memo``: the earlier releases' classes, kept across calls against the same releases (keyed by
    each release table's identity, which it keeps alive). A search asking about many boxes keeps one
    :class:`EarlierReleases` instead (everything about the earlier releases prepared once).
    """
    return EarlierReleases(earlier, quasi_identifiers, attribute, hierarchies, memo).overlay(candidate)


class EarlierReleases:
    """The kept releases prepared once for any number of overlays (``history: {protect: domain}``).

    What an overlay needs of the earlier releases does not depend on the candidate: their classes,
    value sets and keys, and per QI their labels, the *atoms* those labels make of the leaves (leaves
    every earlier label covers or not together: one atom, the leaves no earlier label covers, included)
    and which atoms each label covers. A candidate label is then read as the atoms it *meets*: a cell
    is a region with one set of covering earlier classes, and every point of an atom the candidate
    meets has the same covering classes as the atom, so the cells (and their H) are those of the atoms
    the candidate's own labels would add — without adding them (fewer slots to refine). Candidate
    labels' atoms are remembered per label.

    Args:
        earlier: the kept releases' class signatures (or published tables), oldest first.
        quasi_identifiers: the QIs; each needs a hierarchy.
        attribute: the sensitive attribute.
        hierarchies: per QI.
        memo: see :func:`domain_overlay`.
    """

    def __init__(
        self,
        earlier: Sequence[pd.DataFrame],
        quasi_identifiers: Sequence[Hashable],
        attribute: Hashable,
        hierarchies: Mapping[Hashable, Hierarchy] | None,
        memo: dict[int, tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray, np.ndarray]]] | None = None,
    ) -> None:
        qis = list(quasi_identifiers)
        hierarchies = hierarchies or {}
        require_hierarchies(qis, hierarchies, "protecting points of the QI domain")
        self.qis, self.attribute, self._hierarchies = qis, attribute, hierarchies
        tables = [_remembered(memo, table, qis, attribute) for table in earlier]
        found = [t[1] for t in tables]
        #: The sensitive labels the earlier releases published, in order of appearance (columns of ``held``).
        self.values = pd.Index(pd.unique(np.concatenate(found).astype(object)) if found else [], dtype=object)
        self._held = []  # per release: classes × values
        for keys, labels, class_of in tables:
            held = np.zeros((len(keys), len(self.values)), dtype=bool)
            held[class_of, self.values.get_indexer(pd.Index(labels, dtype=object))] = True
            self._held.append(held)
        # every earlier class's values as bits of 64-bit words (value j: bit j % 64 of word j // 64)
        every = np.concatenate(self._held) if self._held else np.zeros((0, len(self.values)), dtype=bool)
        n_words = max(1, -(-len(self.values) // 64))
        padded = np.zeros((len(every), 64 * n_words), dtype=bool)
        padded[:, : len(self.values)] = every
        self._words = np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)
        self._words = self._words.reshape(len(every), n_words)
        self._offsets = np.cumsum([0, *(len(keys) for keys, _, _ in tables)])
        self._release_of = np.repeat(np.arange(len(tables)), np.diff(self._offsets))
        rng = np.random.default_rng(26)
        self._key = rng.integers(1, np.iinfo(np.int64).max, size=int(self._offsets[-1]), dtype=np.int64).astype(
            np.uint64
        )
        self._domains: list[pd.Series] = []
        self._leaf_atom: list[np.ndarray] = []  # per QI: each leaf's atom
        self._atoms: list[np.ndarray] = []  # per QI: atoms × earlier labels, true where the label covers the atom
        self._codes: list[np.ndarray] = []  # per QI: each earlier class's label (column of _atoms), all releases
        self._met: list[dict[str, np.ndarray]] = []  # per QI: a candidate label → the atoms it meets
        for q, qi in enumerate(qis):
            hierarchy = hierarchies[qi]
            assert hierarchy is not None
            domain = _domain(hierarchy)
            text = [keys[:, q] for keys, _, _ in tables]
            labels, inverse = np.unique(
                np.concatenate(text).astype(str) if text else np.zeros(0, str), return_inverse=True
            )
            cover = covering_matrix(domain, pd.Index(labels, dtype=object), hierarchy)
            atoms, leaf_atom = np.unique(cover, axis=0, return_inverse=True)
            self._domains.append(domain)
            self._atoms.append(atoms)
            self._leaf_atom.append(leaf_atom.reshape(-1))
            self._codes.append(inverse.reshape(-1).astype(np.int64))
            self._met.append({})
        # QIs with few atoms first: the regions split late, so fewer (region, class) pairs are carried
        self._order = np.argsort([len(atoms) for atoms in self._atoms], kind="stable")

    def overlay(self, candidate: pd.DataFrame) -> DomainOverlay:
        """Every cell of every class box of ``candidate`` (published rows or a class signature)."""
        new_keys, labels, class_of = _classes(candidate, self.qis, self.attribute)
        text = pd.Index(labels, dtype=object)
        values = self.values.append(text.unique().difference(self.values, sort=False))
        new_held = np.zeros((len(new_keys), len(values)), dtype=bool)
        new_held[class_of, values.get_indexer(text)] = True
        class_of_row = _row_classes(candidate, self.qis, new_keys)
        class_of_row[marked_suppressed(candidate, self.qis, self.attribute)] = -1  # (they may share an all-* class)
        return self.boxes(new_keys, new_held, values, class_of_row)

    def boxes(
        self, new_keys: np.ndarray, new_held: np.ndarray, values: pd.Index, class_of_row: np.ndarray
    ) -> DomainOverlay:
        """The overlay of candidate classes given as label text (``new_keys``: classes × QIs) and value sets.

        ``values`` are :attr:`values` followed by the candidate's other values (the columns of ``new_held``).
        """
        n_new, n_values = len(new_keys), len(values)
        atoms, codes = self._labelled(new_keys)
        region_class = np.arange(n_new, dtype=np.int64)
        pair_region, pair_class = self._overlapping(atoms, codes, n_new)
        *early, last = self._order.tolist() or [None]
        for q in early:
            split = _split(
                atoms[q], codes[q][region_class], self._codes[q], region_class, pair_region, pair_class, self._key
            )
            region_class, (pair_region, pair_class) = split.new_class, split.pairs()
        n_releases = len(self._held)
        if last is None:  # no QI: every candidate class is one cell
            words, covered = self._or_words(pair_region, pair_class, n_new)
        else:  # the last QI's pairs go straight into the value words: no (cell, class) list is made
            split = _split(
                atoms[last],
                codes[last][region_class],
                self._codes[last],
                region_class,
                pair_region,
                pair_class,
                self._key,
            )
            region_class = split.new_class
            words, covered = self._or_words(
                split.cell[split.slot], np.repeat(split.part_class, split.times), split.n_cells
            )
            whole, whole_covered = self._or_words(split.whole_region, split.whole_class, len(split.width))
            words |= whole.reshape(len(split.width), n_releases, self._words.shape[1])[split.cell_region].reshape(
                words.shape
            )
            covered |= whole_covered[split.cell_region]
        n_cells, n_earlier = len(region_class), len(self.values)
        # H(c): the AND over the releases covering the cell (a release covering none of it tells nothing there)
        words[~covered.reshape(-1)] = np.iinfo(np.uint64).max
        left = np.bitwise_and.reduce(words.reshape(n_cells, n_releases, self._words.shape[1]), axis=1)
        held = np.zeros((n_cells, n_values), dtype=bool)
        held[:, :n_earlier] = np.unpackbits(
            left.astype("<u8").view(np.uint8).reshape(n_cells, 8 * left.shape[1]),
            axis=1,
            count=n_earlier,
            bitorder="little",
        ).astype(bool)
        open_cells = np.asarray(~covered.any(axis=1), dtype=bool)
        held[open_cells] = True  # no release covers it: every value, the candidate's too
        return DomainOverlay(region_class, held, new_held, class_of_row, values, open_cells)

    def kept_everywhere(self, new_keys: np.ndarray) -> np.ndarray:
        """Per candidate box (label text, classes × QIs): values H(p) holds at *every* point p of the box.

        A class of release r whose box contains the candidate's whole box covers each of its points, so
        C_r(p) holds its values there (and C_r(p) is every value where r covers nothing): H(p) holds the
        AND over the releases of the OR of those classes' values — without any overlay. Columns:
        :attr:`values`. Empty for a box some release covers only in part.
        """
        n_new = len(new_keys)
        if not n_new or not len(self._held):
            return np.ones((n_new, len(self.values)), dtype=bool)
        fits, local = [], []  # per QI: distinct candidate labels × earlier labels covering every atom they meet
        for q in range(len(self.qis)):
            met, code = self._meets(q, new_keys[:, q])
            fits.append(met.T.astype(np.float32) @ (~self._atoms[q]).astype(np.float32) == 0)
            local.append(code)
        # the (box, containing class) pairs by a join (not a boxes × classes matrix per release); per (box,
        # release) the OR of their values, empty where no class of the release contains the box; ANDed
        region, found = self._joined(fits, local, n_new)
        words, _ = self._or_words(region, found, n_new)
        left = np.bitwise_and.reduce(words.reshape(n_new, len(self._held), self._words.shape[1]), axis=1)
        return np.unpackbits(
            left.astype("<u8").view(np.uint8).reshape(n_new, 8 * left.shape[1]),
            axis=1,
            count=len(self.values),
            bitorder="little",
        ).astype(bool)

    def _or_words(self, cell: np.ndarray, cls: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
        """Per (cell, release): the OR of the value words of the classes paired with the cell, and whether any is."""
        n_releases = len(self._held)
        slot = cell * n_releases + self._release_of[cls]
        words = np.empty((n_cells * n_releases, self._words.shape[1]), dtype=np.uint64)
        for w in range(self._words.shape[1]):
            column = np.zeros(n_cells * n_releases, dtype=np.uint64)
            np.bitwise_or.at(column, slot, self._words[cls, w])
            words[:, w] = column
        # every earlier class publishes a value (a signature row has one), so a (cell, release) is covered
        # exactly where its OR is not empty
        return words, words.any(axis=1).reshape(n_cells, n_releases)

    def _meets(self, q: int, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(atoms × distinct candidate labels: the label covers a leaf of the atom, each label's column)."""
        distinct, code = np.unique(labels.astype(str), return_inverse=True)
        remembered = self._met[q]
        fresh = [label for label in distinct.tolist() if label not in remembered]
        if fresh:
            hierarchy = self._hierarchies[self.qis[q]]
            cover = covering_matrix(self._domains[q], pd.Index(fresh, dtype=object), hierarchy)
            met = np.zeros((len(self._atoms[q]), len(fresh)), dtype=bool)
            leaf, label = np.nonzero(cover)
            met[self._leaf_atom[q][leaf], label] = True
            remembered.update(zip(fresh, met.T, strict=True))
        columns = [remembered[label] for label in distinct.tolist()]
        met = np.stack(columns, axis=1) if columns else np.zeros((len(self._atoms[q]), 0), dtype=bool)
        return met, code.reshape(-1).astype(np.int64)

    def _labelled(self, new_keys: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per QI: atoms × (earlier labels, candidate labels) covering them; each candidate class's label column."""
        atoms, codes = [], []
        for q in range(len(self.qis)):
            met, code = self._meets(q, new_keys[:, q] if len(new_keys) else np.zeros(0, dtype=str))
            atoms.append(np.concatenate([self._atoms[q], met], axis=1))
            codes.append(code + self._atoms[q].shape[1])
        return atoms, codes

    def _overlapping(
        self, atoms: list[np.ndarray], codes: list[np.ndarray], n_new: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every (candidate class, earlier class) whose boxes share a point (some atom on every QI).

        A join, not a candidates × earlier classes matrix (whose cost grows with every release kept): the
        pairs meeting on the most selective QI are listed through its labels, then kept where every other
        QI's labels meet too. Ordered by release, candidate class, earlier class.
        """
        shares, local = [], []  # per QI: candidate labels × earlier labels meeting an atom together; each class's row
        for q, grouped in enumerate(atoms):
            n_earlier = self._atoms[q].shape[1]
            meet = grouped[:, n_earlier:].T.astype(np.float32) @ grouped[:, :n_earlier].astype(np.float32)
            shares.append(meet > 0)
            local.append(codes[q] - n_earlier)
        return self._joined(shares, local, n_new)

    def _joined(
        self, relations: list[np.ndarray], local: list[np.ndarray], n_new: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every (candidate class i, earlier class j) with ``relations[q][local[q][i], self._codes[q][j]]`` on every QI.

        The pairs related on the two most selective QIs are listed through their label pairs, then kept where
        every other QI relates them too (the cost follows the pairs found, not candidates × every kept release's
        classes). Ordered by release, candidate class, earlier class.
        """
        n_classes = int(self._offsets[-1])
        if not relations:  # no QI: every box is the whole domain
            region, found = np.divmod(np.arange(n_new * n_classes, dtype=np.int64), max(n_classes, 1))
            order = np.lexsort((found, region, self._release_of[found]))
            return region[order], found[order]
        # per QI, how many earlier classes each candidate class relates to there: the pivots list the fewest pairs
        per_class = [
            (relation.astype(np.float64) @ np.bincount(self._codes[q], minlength=relation.shape[1]))[local[q]]
            for q, relation in enumerate(relations)
        ]
        ranked = sorted(range(len(relations)), key=lambda q: float(per_class[q].sum()))
        pivots, rest = ranked[:2], ranked[2:]
        # the earlier classes grouped by their pivot labels (one code per distinct pair of labels)
        width = [relations[q].shape for q in pivots]
        theirs_code = self._codes[pivots[0]] * (width[1][1] if len(pivots) > 1 else 1)
        if len(pivots) > 1:
            theirs_code = theirs_code + self._codes[pivots[1]]
        their_labels, their_code = np.unique(theirs_code, return_inverse=True)
        their_code = their_code.reshape(-1)
        their_parts = np.divmod(their_labels, width[1][1]) if len(pivots) > 1 else (their_labels,)
        by_label = np.argsort(their_code, kind="stable")
        label_count = np.bincount(their_code, minlength=len(their_labels))
        label_start = np.cumsum(label_count) - label_count
        mine_code = local[pivots[0]] * (width[1][0] if len(pivots) > 1 else 1)
        if len(pivots) > 1:
            mine_code = mine_code + local[pivots[1]]
        expected = np.rint(per_class[pivots[0]]).astype(np.int64)  # at least the pairs listed (per candidate)
        bounds = np.searchsorted(np.cumsum(expected), np.arange(1 << 22, int(expected.sum()), 1 << 22), side="right")
        step = max(1, (1 << 24) // max(1, len(their_labels)))  # candidates × earlier label pairs a chunk relates
        edges = sorted({0, n_new, *bounds.tolist(), *range(step, n_new, step)})
        regions, classes = [], []
        for low, high in itertools.pairwise(edges):
            mine_labels, mine = np.unique(mine_code[low:high], return_inverse=True)
            mine_parts = np.divmod(mine_labels, width[1][0]) if len(pivots) > 1 else (mine_labels,)
            related = np.ones((len(mine_labels), len(their_labels)), dtype=bool)
            for q, a, b in zip(pivots, mine_parts, their_parts, strict=True):
                related &= relations[q][a][:, b]
            label, other = np.nonzero(related)  # (candidate label pair, earlier label pair), by candidate's
            per_label = np.bincount(label, minlength=len(mine_labels))
            mine = mine.reshape(-1)
            count, start = per_label[mine], (np.cumsum(per_label) - per_label)[mine]
            # (candidate class, earlier label pair) related on the pivots, then every earlier class with that pair
            region = np.repeat(np.arange(low, high, dtype=np.int64), count)
            other = other[concatenated_ranges(start, count)]
            region = np.repeat(region, label_count[other])
            found = by_label[concatenated_ranges(label_start[other], label_count[other])]
            for q in rest:
                keep = relations[q][local[q][region], self._codes[q][found]]
                region, found = region[keep], found[keep]
            regions.append(region)
            classes.append(found.astype(np.int64))
        if not regions:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        region, found = np.concatenate(regions), np.concatenate(classes)
        order = np.lexsort((found, region, self._release_of[found]))
        return region[order], found[order]


def _remembered(
    memo: dict[int, tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray, np.ndarray]]] | None,
    table: pd.DataFrame,
    qis: list[Hashable],
    attribute: Hashable,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_classes` of an earlier release, from ``memo`` when it was computed before."""
    if memo is None:
        return _classes(table, qis, attribute)
    found = memo.get(id(table))
    if found is None or found[0] is not table:
        found = memo[id(table)] = (table, _classes(table, qis, attribute))
    return found[1]


def _classes(
    table: pd.DataFrame, qis: list[Hashable], attribute: Hashable
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct label tuples as text, the sensitive label of each signature row, its class)."""
    signature = table if COUNT in table.columns else class_signature(table, qis, [attribute])
    if COUNT in signature.columns:
        signature = signature.loc[signature[COUNT].to_numpy() > 0]
    signature = signature.loc[~marked_suppressed(signature, qis, attribute)]
    text = pd.DataFrame({qi: as_labels(signature[qi]).to_numpy(dtype=str) for qi in qis})
    class_of = text.groupby(qis, sort=False).ngroup().to_numpy(dtype=np.int64)
    keys = text.iloc[np.unique(class_of, return_index=True)[1]].to_numpy(dtype=str).reshape(-1, len(qis))
    return keys, as_labels(signature[attribute]).to_numpy(dtype=object), class_of


def _row_classes(candidate: pd.DataFrame, qis: list[Hashable], keys: np.ndarray) -> np.ndarray:
    """Each candidate row's class among ``keys``; -1 for a marked suppressed row (not judged)."""
    text = pd.MultiIndex.from_arrays([as_labels(candidate[qi]).to_numpy(dtype=str) for qi in qis])
    known = pd.MultiIndex.from_arrays([keys[:, q] for q in range(len(qis))]) if len(keys) else None
    if known is None:
        return np.full(len(candidate), -1, dtype=np.int64)
    return np.asarray(known.get_indexer(text), dtype=np.int64)


class _Split(NamedTuple):
    """One QI's refinement of the regions (:func:`_split`)."""

    new_class: np.ndarray  # per cell (a new region), its candidate class
    cell: np.ndarray  # per slot, its cell
    cell_region: np.ndarray  # per cell, the region it splits
    n_cells: int
    width: np.ndarray  # per region, its slots
    slot: np.ndarray  # per (partial pair, shared atom): its slot
    times: np.ndarray  # per partial pair, its shared atoms
    part_class: np.ndarray  # per partial pair, its earlier class
    whole_region: np.ndarray  # per pair covering its whole region: the region
    whole_class: np.ndarray  # … and its earlier class

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (cell, earlier class) that share a point, once."""
        n_classes = int(max(self.part_class.max(initial=0), self.whole_class.max(initial=0))) + 1
        # the partial pairs' cells, deduplicated (runs of one pair in one cell first: they are adjacent)
        found = self.cell[self.slot] * n_classes + np.repeat(self.part_class, self.times)
        if len(found):
            found = pd.unique(found[np.r_[True, found[1:] != found[:-1]]])
        # the whole pairs: every cell of their region (cells are numbered region by region)
        cell_start = np.zeros(len(self.width) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.cell_region, minlength=len(self.width)), out=cell_start[1:])
        spread = cell_start[self.whole_region + 1] - cell_start[self.whole_region]
        whole_cell = concatenated_ranges(cell_start[self.whole_region], spread)
        found_cell = np.concatenate([found // n_classes, whole_cell]).astype(np.int64)
        found_class = np.concatenate([found % n_classes, np.repeat(self.whole_class, spread)]).astype(np.int64)
        return found_cell, found_class


def _split(
    grouped: np.ndarray,
    region_label: np.ndarray,
    class_label: np.ndarray,
    region_class: np.ndarray,
    pair_region: np.ndarray,
    pair_class: np.ndarray,
    key: np.ndarray,
) -> _Split:
    """Split every region along one QI by which of its earlier classes cover each of its atoms.

    Integer codes throughout: a slot is one (region, atom of the region's label); a pair (region,
    earlier class) lands on the slots of the atoms both labels cover; a slot's covering set is the
    sum of its classes' keys; a new region (a cell) is one (region, covering set). A pair covering
    every atom of its region's label adds the same key to all its slots, which splits nothing: it is
    left out of the sums and belongs to every cell of its region (on Mondrian's boxes most pairs are such).
    """
    n_labels = grouped.shape[1]
    per_label = grouped.sum(axis=0).astype(np.int64)
    rank = np.cumsum(grouped, axis=0, dtype=np.int64) - 1  # atoms × labels: an atom's place among its label's
    width = per_label[region_label]
    region_start = np.zeros(len(region_label) + 1, dtype=np.int64)
    np.cumsum(width, out=region_start[1:])
    # the atoms both labels of each distinct (region label, class label) cover
    pair_key = region_label[pair_region] * n_labels + class_label[pair_class]
    pair_of, distinct = pd.factorize(pair_key)  # (a hash: no sort of the pairs)
    both = grouped[:, distinct // n_labels] & grouped[:, distinct % n_labels]  # atoms × distinct pairs
    pair_of = pair_of.reshape(-1)
    whole = (both.sum(axis=0) == per_label[distinct // n_labels])[pair_of]  # the pair covers its whole region
    part_of, part_region, part_class = pair_of[~whole], pair_region[~whole], pair_class[~whole]
    shared_pair, shared_atom = np.nonzero(both.T)
    starts = np.zeros(len(distinct) + 1, dtype=np.int64)
    np.cumsum(np.bincount(shared_pair, minlength=len(distinct)), out=starts[1:])
    # per (partial pair, shared atom): its slot; gathered per distinct pair first, then repeated along the pairs
    shared_rank = rank[shared_atom, distinct[shared_pair] // n_labels]
    times = starts[part_of + 1] - starts[part_of]
    slot = np.repeat(region_start[part_region], times) + shared_rank[concatenated_ranges(starts[part_of], times)]
    n_slots = int(region_start[-1])
    signature = _key_sums(slot, np.repeat(key[part_class], times), n_slots)
    slot_region = np.repeat(np.arange(len(region_label), dtype=np.int64), width)
    by = np.lexsort((signature, slot_region))
    change = np.ones(n_slots, dtype=bool)
    change[1:] = (slot_region[by][1:] != slot_region[by][:-1]) | (signature[by][1:] != signature[by][:-1])
    cell = np.empty(n_slots, dtype=np.int64)
    cell[by] = np.cumsum(change) - 1
    cell_region = slot_region[by][change]
    return _Split(
        region_class[cell_region], cell, cell_region, len(cell_region), width, slot, times, part_class,
        pair_region[whole], pair_class[whole],
    )  # fmt: skip


def concatenated_ranges(first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """first[0], first[0]+1, …, first[0]+length[0]-1, first[1], …: a vectorized loop over ranges."""
    before = np.cumsum(length) - length
    return np.repeat(first - before, length) + np.arange(int(length.sum()), dtype=np.int64)


def _key_sums(slot: np.ndarray, keys: np.ndarray, n: int) -> np.ndarray:
    """Per slot, the sum of its ``keys`` mod 2^64 (two exact float sums of 32-bit halves: < 2^21 keys a slot)."""
    low = np.bincount(slot, weights=(keys & np.uint64(0xFFFFFFFF)).astype(np.float64), minlength=n)
    high = np.bincount(slot, weights=(keys >> np.uint64(32)).astype(np.float64), minlength=n)
    return low.astype(np.uint64) + (high.astype(np.uint64) << np.uint64(32))


def _domain(hierarchy: Hierarchy) -> pd.Series:
    """The hierarchy's leaves, numeric when every leaf is a number (so ranges cover them)."""
    leaves = pd.Series(list(hierarchy.leaves), dtype=object)
    numbers = pd.to_numeric(leaves, errors="coerce")
    return pd.Series(numbers.to_numpy(dtype=float)) if not numbers.isna().any() else leaves
