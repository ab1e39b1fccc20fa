"""The intersection attack over a set of published tables (composition of releases).

Threat model (Ganta, Kasiviswanathan & Smith, KDD 2008): the adversary holds every
published table, knows a target's raw quasi-identifier values and that the target is
in the source. In each release she finds the classes whose generalized QI labels
*cover* those values, collects the sensitive values of those classes, and intersects
the collections across releases. What is left is what she believes the target's
sensitive value can be.

Coverage of one QI value by one published label (the union of these rules):

* the label is the value itself, written as :func:`~privacy_plugins.core.hierarchies.as_labels`
  writes it (``39`` and ``39.0`` are both ``"39"``);
* the label is ``"*"`` (a hierarchy's top, or a class generalized away on every QI);
* a hierarchy is given for the QI and maps the value to that label at some level;
* the QI is numeric in the source and the label is a range the anonymizers print:
  ``"[a-b]"`` (closed, Mondrian and clustering), ``"[a-b)"`` (half-open, interval
  hierarchies) or ``"a-b"`` (closed), with a ≤ value ≤ b (< b when half-open).

A class covers a target when every QI label covers the target's value. A row marked
suppressed (every QI ``"*"``, its sensitive value hidden: ``"*"`` or missing) publishes no
value and covers nobody (:func:`~privacy_plugins.core.coverage.marked_suppressed`); a class
whose labels are all ``"*"`` but whose values are published covers everyone.

A release in which no class covers the target tells her nothing: she cannot tell a
record the release removed (suppressed) from a person who is not in it, so that release
contributes every sensitive value (counting it as a disclosure would be guessing, not
knowing). Conversely she *may assume* the target is in every release whose classes cover
it, even when it is not (it joined later, or was suppressed there while another class
covers its values): then the intersection can miss the target's true value, and can be
empty. ``disclosed`` counts every single-value intersection (what she believes);
``disclosed_correctly`` those equal to the record's own value; an empty intersection is
counted below ``l`` (conservatively) and reported as ``empty``.

The work is done over distinct raw QI combinations with their counts, on integer codes
(no join): per QI the coverage rules are evaluated once per (distinct raw value, published
label) into an index of the labels covering each value; a combination walks the QIs and
keeps a (combination, class-prefix) pair only while some class of the release has that
prefix (``docs/release-history.md``, "How the check is computed"). Value sets are bitsets
over the sensitive attribute's codes, OR-ed over a release's covering classes; the callers
intersect them with ``&``.

References:
    Ganta S. R., Kasiviswanathan S. P., Smith A. Composition attacks and auxiliary
    information in data privacy. KDD 2008.
    Xiao X., Tao Y. m-Invariance: towards privacy preserving re-publication of dynamic
    datasets. SIGMOD 2007.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.coverage import STAR, covering_index, marked_suppressed
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["STAR", "CoveringSets", "IntersectionCount", "IntersectionReport", "covering_sets", "intersection_attack"]


@dataclass(frozen=True)
class IntersectionCount:
    """What the intersection over one set of releases leaves the adversary, in counts.

    Attributes:
        releases: positions (0-based, in the order given) of the releases intersected.
        records: source records (targets).
        disclosed: records whose intersection holds exactly one distinct sensitive value.
        disclosed_correctly: of those, the records whose single value is their own (``None``
            when the source has no sensitive column; it differs from ``disclosed`` only when
            she wrongly assumed a target to be in a release that covers it).
        below_l: records whose intersection holds fewer than ``l`` distinct values
            (empty intersections included).
        empty: records whose intersection is empty (she learns the target is missing
            from a release that covers it).
        uncovered: records that no class covers in at least one of these releases
            (such a release tells her nothing about them).
        smallest: the smallest intersection size over all records (``None`` with no records).
    """

    releases: tuple[int, ...]
    records: int
    disclosed: int
    disclosed_correctly: int | None
    below_l: int
    empty: int
    uncovered: int
    smallest: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready counts."""
        return {
            "releases": list(self.releases),
            "records": self.records,
            "disclosed": self.disclosed,
            "disclosed_correctly": self.disclosed_correctly,
            "below_l": self.below_l,
            "empty": self.empty,
            "uncovered": self.uncovered,
            "smallest": self.smallest,
        }


@dataclass(frozen=True)
class IntersectionReport:
    """The intersection attack on a set of releases: per release, per pair, over all. Counts only.

    Attributes:
        l: the threshold ``below_l`` counts against.
        records: source records (the targets).
        per_release: each release alone.
        pairs: every pair of releases (i < j).
        overall: all releases together.
    """

    l: int
    records: int
    per_release: tuple[IntersectionCount, ...]
    pairs: tuple[IntersectionCount, ...]
    overall: IntersectionCount

    @property
    def disclosed(self) -> int:
        """Records disclosed by intersecting all releases."""
        return self.overall.disclosed

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready counts; never a value."""
        return {
            "l": self.l,
            "records": self.records,
            "per_release": [count.to_dict() for count in self.per_release],
            "pairs": [count.to_dict() for count in self.pairs],
            "overall": self.overall.to_dict(),
        }

    def __str__(self) -> str:
        worst = max(self.pairs, key=lambda count: count.disclosed, default=None)
        pair = f"; worst pair {worst.releases}: {worst.disclosed} disclosed" if worst is not None else ""
        o = self.overall
        return (
            f"intersection attack on {len(self.per_release)} releases: {o.disclosed} of {o.records} records "
            f"disclosed, {o.below_l} below l={self.l}, smallest intersection {o.smallest}{pair}"
        )


def intersection_attack(
    source: pd.DataFrame,
    releases: Sequence[pd.DataFrame],
    *,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attribute: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    l: int = 2,
) -> IntersectionReport:
    """Run the intersection attack of every source record against ``releases``.

    Args:
        source: the raw table; every record is a target (its raw QI values are known). When it
            holds the sensitive column, ``disclosed_correctly`` compares with the true values.
        releases: the published tables (QI labels and the sensitive column), oldest first.
        quasi_identifiers: the QI columns, present in the source and in every release.
        sensitive_attribute: the sensitive column of every release.
        hierarchies: per QI, the hierarchy the releases generalize along (optional).
        l: integer ≥ 1; ``below_l`` counts records left with fewer distinct values.

    Raises:
        ConfigurationError: ``l`` is not an integer ≥ 1, no QIs or no releases.
        UnknownColumnError: a QI or the sensitive column is missing (the release is named).
        TypeError: a release is not a DataFrame or a hierarchy not a :class:`Hierarchy`.

    Example:
        >>> source = pd.DataFrame({"age": [21, 22, 23, 24, 25], "disease": ["flu", "hiv", "flu", "cold", "hiv"]})
        >>> first = pd.DataFrame({"age": ["[21-22]"] * 2 + ["[23-24]"] * 2, "disease": ["flu", "hiv", "flu", "cold"]})
        >>> second = source.assign(age=["[21-23]"] * 3 + ["[24-25]"] * 2)
        >>> report = intersection_attack(
        ...     source, [first, second], quasi_identifiers=["age"], sensitive_attribute="disease"
        ... )
        >>> report.disclosed, report.per_release[0].disclosed, report.overall.smallest
        (2, 0, 1)
    """
    qis = _validate(source, releases, quasi_identifiers, sensitive_attribute, hierarchies, l)
    knows_truth = sensitive_attribute in source.columns
    keys = [*qis, sensitive_attribute] if knows_truth else qis
    sizes = source.groupby(keys, dropna=False, sort=False, observed=True).size()
    groups = sizes.index.to_frame(index=False)
    counts = sizes.to_numpy(dtype=np.int64)
    combo_of_group = groups.groupby(qis, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    combos = groups.iloc[np.unique(combo_of_group, return_index=True)[1]].reset_index(drop=True)
    covering = covering_sets(combos, releases, qis, sensitive_attribute, hierarchies)
    values = covering.labels
    sets = list(zip(covering.held, covering.covered, strict=True))
    n = len(releases)
    truth = (
        values.get_indexer(as_labels(groups[sensitive_attribute]).to_numpy(dtype=object))
        if knows_truth
        else np.full(len(groups), -1)
    )

    def count(members: tuple[int, ...]) -> IntersectionCount:
        held = np.ones((len(combos), len(values)), dtype=bool)
        uncovered = np.zeros(len(combos), dtype=bool)
        for member in members:
            held &= sets[member][0]
            uncovered |= ~sets[member][1]
        # A record no release of ``members`` covers learns the adversary nothing: her set is every value of the
        # domain, not the few labels published about others (none at all when every row is marked): never at risk.
        seen = np.zeros(len(combos), dtype=bool)
        for member in members:
            seen |= sets[member][1]
        seen = seen[combo_of_group]
        size = held.sum(axis=1)[combo_of_group]
        single = seen & (size == 1)
        right = single & (truth >= 0)
        right &= held[combo_of_group, np.maximum(truth, 0)] if len(values) else False  # every row marked: no value
        return IntersectionCount(
            releases=members,
            records=int(counts.sum()),
            disclosed=int(counts[single].sum()),
            disclosed_correctly=int(counts[right].sum()) if knows_truth else None,
            below_l=int(counts[seen & (size < l)].sum()),
            empty=int(counts[seen & (size == 0)].sum()),
            uncovered=int(counts[uncovered[combo_of_group]].sum()),
            smallest=int(size[seen].min()) if seen.any() else None,
        )

    return IntersectionReport(
        l=l,
        records=int(counts.sum()),
        per_release=tuple(count((i,)) for i in range(n)),
        pairs=tuple(count(pair) for pair in itertools.combinations(range(n), 2)),
        overall=count(tuple(range(n))),
    )


@dataclass(frozen=True, eq=False)
class CoveringSets:
    """Per distinct raw QI combination and per release: the sensitive values of the covering classes.

    Attributes:
        labels: the sensitive labels published in any of the releases (the columns below).
        held: per release, a (combinations × values) boolean matrix: C_r(t) of ``docs/composition.md``
            (a combination no class covers holds every value: the release tells nothing about it).
        covered: per release, whether some class covers the combination.
        counts: per release when asked, (combinations × values) rows summed over the covering
            classes (the ``__count`` column of a class signature, or one per published row).
        matches: per release, ``(combination, class, class of each release row)``: every
            (combination, covering class) pair, classes numbered per release.
    """

    labels: pd.Index
    held: list[np.ndarray]
    covered: list[np.ndarray]
    counts: list[np.ndarray] | None = None
    matches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None


def covering_sets(
    combos: pd.DataFrame,
    releases: Sequence[pd.DataFrame],
    quasi_identifiers: Sequence[Hashable],
    sensitive_attribute: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    *,
    with_counts: bool = False,
    count_column: Hashable | None = None,
) -> CoveringSets:
    """The covering classes' sensitive values of every distinct raw QI combination, in every release.

    The shared core of :func:`intersection_attack` and the history checks: ``combos`` holds
    distinct raw QI combinations (the targets); a release is a published table or a class
    signature (then ``count_column`` holds its rows per signature row). Marked suppressed rows
    are left out (``matches`` then numbers the rows kept). No argument checks: the callers validate.
    """
    qis = list(quasi_identifiers)
    hierarchies = hierarchies or {}
    releases = [_readable(release, qis, sensitive_attribute) for release in releases]
    coded = [{column: _coded(release[column]) for column in [*qis, sensitive_attribute]} for release in releases]
    values = _union([columns[sensitive_attribute][1] for columns in coded])
    raw_codes: list[np.ndarray] = []
    label_index: list[pd.Index] = []
    index: list[tuple[np.ndarray, np.ndarray]] = []
    for qi in qis:
        codes, uniques = pd.factorize(combos[qi], use_na_sentinel=False)
        labels = _union([columns[qi][1] for columns in coded])
        raw_codes.append(codes.astype(np.int64))
        label_index.append(labels)
        index.append(covering_index(pd.Series(uniques, dtype=combos[qi].dtype), labels, hierarchies.get(qi)))

    def code(found: tuple[np.ndarray, np.ndarray], labels: pd.Index) -> np.ndarray:
        codes, text = found
        return labels.get_indexer(pd.Index(text, dtype=object)).astype(np.int64)[codes]

    found = [
        _value_sets(
            release,
            [code(columns[qi], label_index[q]) for q, qi in enumerate(qis)],
            code(columns[sensitive_attribute], values),
            len(values),
            raw_codes,
            index,
            len(combos),
            with_counts=with_counts,
            count_column=count_column if count_column is not None and count_column in release.columns else None,
        )
        for release, columns in zip(releases, coded, strict=True)
    ]
    return CoveringSets(
        labels=values,
        held=[held for held, _, _, _ in found],
        covered=[covered for _, covered, _, _ in found],
        counts=[counts for _, _, counts, _ in found if counts is not None] if with_counts else None,
        matches=[matches for _, _, _, matches in found],
    )


def _readable(release: pd.DataFrame, qis: list[Hashable], attribute: Hashable) -> pd.DataFrame:
    """``release`` without its marked suppressed rows (:func:`~privacy_plugins.core.coverage.marked_suppressed`)."""
    marked = marked_suppressed(release, qis, attribute)
    return release.loc[~marked].reset_index(drop=True) if marked.any() else release


def _coded(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A published column as codes into its distinct labels' text (text computed once per distinct value)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    text = as_labels(pd.Series(uniques, dtype=column.dtype)).to_numpy(dtype=object)
    return codes.astype(np.int64), text


def _union(texts: Sequence[np.ndarray]) -> pd.Index:
    """The distinct labels of several columns, in order of first appearance."""
    if not texts:
        return pd.Index([], dtype=object)
    return pd.Index(pd.unique(np.concatenate(texts).astype(object)), dtype=object)


def _validate(
    source: pd.DataFrame,
    releases: Sequence[pd.DataFrame],
    quasi_identifiers: Sequence[Hashable],
    sensitive_attribute: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    l: int,
) -> list[Hashable]:
    """Check the arguments once, naming what is wrong."""
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 1:
        raise ConfigurationError(f"l must be an integer >= 1, got {l!r}")
    if not isinstance(source, pd.DataFrame):
        raise TypeError(f"source must be a pandas DataFrame, got {type(source).__name__}")
    if isinstance(releases, pd.DataFrame) or not isinstance(releases, Sequence) or not releases:
        raise ConfigurationError("releases must be a non-empty sequence of published tables (DataFrames)")
    qis = list(quasi_identifiers)
    if not qis or isinstance(quasi_identifiers, str):
        raise ConfigurationError(f"quasi_identifiers must be a non-empty list of columns, got {quasi_identifiers!r}")
    if sensitive_attribute in qis:
        raise ConfigurationError(
            f"{sensitive_attribute!r} cannot be both a quasi-identifier and the sensitive attribute"
        )
    missing = [qi for qi in qis if qi not in source.columns]
    if missing:
        raise UnknownColumnError(f"quasi_identifiers not found in the source: {missing!r}")
    for position, release in enumerate(releases):
        if not isinstance(release, pd.DataFrame):
            raise TypeError(f"releases[{position}] must be a pandas DataFrame, got {type(release).__name__}")
        absent = [column for column in [*qis, sensitive_attribute] if column not in release.columns]
        if absent:
            raise UnknownColumnError(f"releases[{position}] lacks column(s) {absent!r}")
    for qi, hierarchy in (hierarchies or {}).items():
        if not isinstance(hierarchy, Hierarchy):
            raise TypeError(f"hierarchies[{qi!r}] must be a Hierarchy, got {type(hierarchy).__name__}")
    return qis


def _value_sets(
    release: pd.DataFrame,
    label_codes: Sequence[np.ndarray],
    value: np.ndarray,
    n_values: int,
    raw_codes: Sequence[np.ndarray],
    index: Sequence[tuple[np.ndarray, np.ndarray]],
    n_combos: int,
    *,
    with_counts: bool = False,
    count_column: Hashable | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per distinct raw combination: the union of its covering classes' values, and whether any class covers it.

    Integer codes throughout, no join: a class is numbered by its label tuple's prefix ids (the
    id of its first ``s + 1`` labels, in the QI order chosen below, is a position in the sorted
    keys of step ``s``); a combination walks the QIs, expands each raw value into the labels
    covering it (:func:`~privacy_plugins.core.coverage.covering_index`) and keeps a
    (combination, prefix) pair only while some class has that prefix (a binary search). QIs
    whose values few of this release's labels cover go first, so the frontier stays small.
    """
    sizes = [int(codes.max()) + 1 if len(codes) else 1 for codes in label_codes]
    spans: list[tuple[np.ndarray, np.ndarray]] = []
    fanout = np.zeros(len(label_codes))
    for q, codes in enumerate(label_codes):
        start, labels = index[q]
        present = np.zeros(sizes[q], dtype=bool)
        present[codes] = True
        keep = _present(labels, present)
        raw = np.repeat(np.arange(len(start) - 1, dtype=np.int64), np.diff(start))[keep]
        narrowed = np.zeros(len(start), dtype=np.int64)
        np.cumsum(np.bincount(raw, minlength=len(start) - 1), out=narrowed[1:])
        spans.append((narrowed, labels[keep]))
        fanout[q] = float(np.diff(narrowed)[raw_codes[q]].mean()) if n_combos else 0.0
    order = np.argsort(fanout, kind="stable")
    prefix = np.zeros(len(release), dtype=np.int64)
    steps: list[np.ndarray] = []
    for q in order:
        keys, prefix = _sorted_codes(prefix * sizes[q] + label_codes[q])
        steps.append(keys)
    combo = np.arange(n_combos, dtype=np.int64) if len(release) else np.zeros(0, dtype=np.int64)
    at = np.zeros(len(combo), dtype=np.int64)
    for keys, q in zip(steps, order, strict=True):
        combo, at = _step(combo, at, raw_codes[q][combo], keys, spans[q], sizes[q])
    n_classes = len(steps[-1]) if steps else 0
    width = max(n_values, 1)
    weight = (
        None
        if not with_counts
        else np.ones(len(release))
        if count_column is None
        else release[count_column].to_numpy(dtype=float)
    )
    pair, pair_of_row = _sorted_codes(prefix * width + value)
    pair_weight = None if weight is None else np.bincount(pair_of_row, weights=weight, minlength=len(pair))
    class_start = np.zeros(n_classes + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair // width, minlength=n_classes), out=class_start[1:])
    covered = np.zeros(n_combos, dtype=bool)
    covered[combo] = True
    counts = None
    if pair_weight is None and n_values <= _BITSET_VALUES:  # bitsets: one OR per (combination, covering class)
        sets = _bitsets(pair // width, pair % width, n_classes, n_values)
        held = _unpack(_or_rows(combo, sets[at], n_combos), n_values)
    elif pair_weight is None:  # a large domain: each covering class's values, as sorted codes
        source, chosen = _spread(class_start[at], class_start[at + 1] - class_start[at])
        held = _cells(combo[source] * width + pair[chosen] % width, n_combos, n_values)
    else:
        source, chosen = _spread(class_start[at], class_start[at + 1] - class_start[at])
        cell = combo[source] * width + pair[chosen] % width
        counts = np.bincount(cell, weights=pair_weight[chosen], minlength=n_combos * n_values).reshape(
            n_combos, n_values
        )
        held = counts > 0 if (pair_weight > 0).all() else _cells(cell, n_combos, n_values)
    held[~covered] = True
    return held, covered, counts, (combo, at, prefix)


_BITSET_VALUES = 256
"""Sensitive domains up to this size are handled as bitsets (4 words); larger ones as sorted codes per class."""

_DENSE = 1 << 23
"""Key spaces up to this size are looked up in a direct-address table, larger ones by binary search."""


def _step(
    combo: np.ndarray,
    at: np.ndarray,
    raw: np.ndarray,
    keys: np.ndarray,
    span: tuple[np.ndarray, np.ndarray],
    size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """One QI of the walk: every (combination, prefix) pair extended by a label that covers and that some class has.

    Each pair is extended the cheaper way: through the labels covering its raw value (then a
    lookup among the classes' keys), or through the labels the classes continue its prefix
    with (a contiguous run of the sorted keys; then a lookup among the covering pairs) —
    whichever are fewer.
    """
    start, labels = span
    n_prefixes = int(keys[-1] // size) + 1 if len(keys) else 0
    bounds = np.searchsorted(keys, np.arange(n_prefixes + 1, dtype=np.int64) * size)
    inside = at < n_prefixes
    low = np.where(inside, bounds[np.minimum(at, n_prefixes)], 0)
    children = np.where(inside, bounds[np.minimum(at + 1, n_prefixes)] - low, 0)
    fanout = start[raw + 1] - start[raw]
    by_value = fanout <= children
    # through the covering labels
    source, label_at = _spread(start[raw[by_value]], fanout[by_value])
    entry = np.flatnonzero(by_value)[source]
    position = _find(keys, at[entry] * size + labels[label_at], n_prefixes * size)
    hit = position >= 0
    found_entry, found_at = [entry[hit]], [position[hit]]
    # through the classes' continuations
    source, position = _spread(low[~by_value], children[~by_value])
    entry = np.flatnonzero(~by_value)[source]
    pairs = np.repeat(np.arange(len(start) - 1, dtype=np.int64), np.diff(start)) * size + labels
    wanted = raw[entry] * size + keys[position] - at[entry] * size
    hit = _find(pairs, wanted, (len(start) - 1) * size) >= 0
    found_entry.append(entry[hit])
    found_at.append(position[hit])
    return combo[np.concatenate(found_entry)], np.concatenate(found_at)


def _bitsets(row: np.ndarray, member: np.ndarray, n_rows: int, n_members: int) -> np.ndarray:
    """Sets as rows of 64-bit words: bit ``member[i]`` of row ``row[i]`` set."""
    words = np.zeros((n_rows, max(-(-n_members // 64), 1)), dtype=np.uint64)
    np.bitwise_or.at(words, (row, member // 64), np.left_shift(np.uint64(1), (member % 64).astype(np.uint64)))
    return words


def _or_rows(row: np.ndarray, words: np.ndarray, n_rows: int) -> np.ndarray:
    """The union of the sets ``words[i]`` landing on each row ``row[i]``."""
    union = np.zeros((n_rows, words.shape[1]), dtype=np.uint64)
    np.bitwise_or.at(union, row, words)
    return union


def _unpack(words: np.ndarray, n_members: int) -> np.ndarray:
    """Bitsets as a boolean (rows × members) matrix."""
    little = np.ascontiguousarray(words, dtype="<u8").view(np.uint8)
    return np.unpackbits(little, axis=1, bitorder="little")[:, :n_members].astype(bool)


def _cells(cell: np.ndarray, n_rows: int, n_members: int) -> np.ndarray:
    """A boolean (rows × members) matrix true at the flat positions ``cell``."""
    held = np.zeros((n_rows, n_members), dtype=bool)
    held.reshape(-1)[cell] = True
    return held


def _sorted_codes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, sorted, and each key's position among them (hashing, then sorting the few distinct)."""
    codes, uniques = pd.factorize(key)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return np.asarray(uniques, dtype=np.int64)[order], rank[codes]


def _find(keys: np.ndarray, wanted: np.ndarray, space: int) -> np.ndarray:
    """Each wanted key's position in the sorted, distinct ``keys`` (all in ``[0, space)``); -1 when absent."""
    if not len(keys) or not len(wanted):
        return np.full(len(wanted), -1, dtype=np.int64)
    if space <= min(_DENSE, 8 * (len(keys) + len(wanted)) + 4096):
        table = np.full(space, -1, dtype=np.int32 if len(keys) < 2**31 else np.int64)
        table[keys] = np.arange(len(keys))
        return table[wanted].astype(np.int64)
    position = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[position] == wanted, position, -1)


def _spread(first: np.ndarray, width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(i, first[i] + j)`` for ``j < width[i]``, as two arrays (a vectorized nested loop)."""
    source = np.repeat(np.arange(len(first), dtype=np.int64), width)
    offset = np.arange(len(source), dtype=np.int64) - np.repeat(np.cumsum(width) - width, width)
    return source, np.repeat(first, width) + offset


def _present(labels: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Which label codes are among ``present`` (codes past its end are not)."""
    inside = labels < len(present)
    keep = np.zeros(len(labels), dtype=bool)
    keep[inside] = present[labels[inside]]
    return keep
