"""Which raw values a published label covers: the one rule set for every attack on a generalized release.

A published label covers a raw value when (the union of):

* the label is the value itself, written as :func:`~privacy_plugins.core.hierarchies.as_labels`
  writes it (``39`` and ``39.0`` are both ``"39"``);
* the label is ``"*"`` (a hierarchy's top, or a row marked suppressed: every QI ``"*"``);
* a hierarchy is given for the column and maps the value to that label at some level;
* the column is numeric in the source and the label is a range the anonymizers print:
  ``"[a-b]"`` (closed, Mondrian and clustering), ``"[a-b)"`` (half-open, interval
  hierarchies) or ``"a-b"`` (closed), with a ≤ value ≤ b (< b when half-open).

The intersection attack (:mod:`privacy_plugins.core.composition`) and the attacks of
:mod:`privacy_plugins.core.attacks` both read a release through these rules, so a label
means the same leaves to each of them.

**Marked suppressed rows** (:func:`marked_suppressed`): a row whose every QI is ``"*"`` *and*
whose sensitive value is hidden (``"*"`` or missing, as ``suppressed_rows: mark`` publishes
it) tells nothing about anyone's value: every reader of a release (the intersection attack,
the gate's record and domain checks, the history model) leaves it out, as a removed row. Any
other class whose labels are all ``"*"`` publishes real values: it covers every point, like
any class covers the points its labels cover (an adversary who assumes her target in the
release finds it there).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "STAR",
    "covering_index",
    "covering_matrix",
    "covering_pairs",
    "label_intervals",
    "marked_suppressed",
    "range_pairs",
    "require_hierarchies",
]

#: The label of a generalized-away value and of every QI of a marked suppressed row.
STAR = "*"


def require_hierarchies(
    quasi_identifiers: Sequence[Hashable], hierarchies: Mapping[Hashable, Hierarchy] | None, purpose: str
) -> None:
    """Refuse box comparisons over the QI domain where a QI has no hierarchy (its leaves are the domain).

    Raises:
        ConfigurationError: naming ``purpose`` and the QIs without a hierarchy.
    """
    missing = [str(qi) for qi in quasi_identifiers if (hierarchies or {}).get(qi) is None]
    if missing:
        raise ConfigurationError(
            f"{purpose} compares published boxes over the hierarchies' leaves and needs a hierarchy for {missing}"
        )


def marked_suppressed(table: pd.DataFrame, quasi_identifiers: Sequence[Hashable], attribute: Hashable) -> np.ndarray:
    """Rows of a published table that are marked suppressed rows for ``attribute``: no cover, no value.

    Every QI ``"*"`` and the sensitive value hidden (``"*"`` or missing); see the module.
    """
    starred = np.ones(len(table), dtype=bool)
    for qi in quasi_identifiers:  # most releases have no all-* row: stop at the first QI that says so
        starred &= as_labels(table[qi]).to_numpy(dtype=object) == STAR
        if not starred.any():
            return starred
    values = as_labels(table[attribute])
    hidden = values.isna().to_numpy() | (values.to_numpy(dtype=object) == STAR)
    return np.asarray(starred & hidden, dtype=bool)


_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^(?:\[(?P<a>{_NUMBER})-(?P<b>{_NUMBER})(?P<end>[\])])|(?P<c>{_NUMBER})-(?P<d>{_NUMBER}))$")


def covering_pairs(raw: pd.Series, labels: pd.Index, hierarchy: Hierarchy | None) -> pd.DataFrame:
    """Every (raw value code, published label code) where the label covers the value."""
    rows, cols = _covering(raw, labels, hierarchy)
    return pd.DataFrame({"raw": rows, "label": cols}).drop_duplicates(ignore_index=True)


def covering_index(raw: pd.Series, labels: pd.Index, hierarchy: Hierarchy | None) -> tuple[np.ndarray, np.ndarray]:
    """The covering labels of every raw value as integer codes, grouped by value (a CSR index).

    Returns ``(start, label)``: the labels covering raw value ``i`` (its position in ``raw``) are
    ``label[start[i]:start[i + 1]]``, each once, ascending — what a lookup expands a value into
    without a join.
    """
    rows, cols = _covering(raw, labels, hierarchy)
    width = max(len(labels), 1)
    key = np.unique(rows * width + cols)
    start = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // width, minlength=len(raw)), out=start[1:])
    return start, key % width


def _covering(raw: pd.Series, labels: pd.Index, hierarchy: Hierarchy | None) -> tuple[np.ndarray, np.ndarray]:
    """(raw value codes, label codes) of every covering pair, possibly repeated."""
    text = as_labels(raw).to_numpy(dtype=object)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    exact = labels.get_indexer(pd.Index(text, dtype=object))
    found.append((np.flatnonzero(exact >= 0), exact[exact >= 0]))
    star = labels.get_indexer([STAR])[0]
    if star >= 0:
        found.append((np.arange(len(text)), np.full(len(text), star)))
    if hierarchy is not None:
        leaf = pd.Index(hierarchy.leaves).get_indexer(pd.Index(text, dtype=object))
        known = np.flatnonzero(leaf >= 0)
        for level in range(hierarchy.height + 1):
            at_level = hierarchy.labels[level][hierarchy.codes[level, leaf[known]]]
            code = labels.get_indexer(pd.Index(at_level, dtype=object))
            found.append((known[code >= 0], code[code >= 0]))
    if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
        found.append(range_pairs(raw.to_numpy(dtype=float, na_value=np.nan), labels))
    rows = np.concatenate([pair[0] for pair in found]).astype(np.int64)
    cols = np.concatenate([pair[1] for pair in found]).astype(np.int64)
    return rows, cols


def range_pairs(numbers: np.ndarray, labels: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """(raw code, label code) for numeric values inside range labels, by binary search on sorted values."""
    parsed = pd.Series(labels.to_numpy(dtype=object), dtype=object).astype(str).str.extract(_RANGE)
    is_range = parsed["a"].notna() | parsed["c"].notna()
    if not is_range.any():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    low = pd.to_numeric(parsed["a"].fillna(parsed["c"])).to_numpy()[is_range.to_numpy()]
    high = pd.to_numeric(parsed["b"].fillna(parsed["d"])).to_numpy()[is_range.to_numpy()]
    half_open = (parsed["end"] == ")").to_numpy()[is_range.to_numpy()]
    label_codes = np.flatnonzero(is_range.to_numpy())
    valid = ~np.isnan(numbers)
    order = np.flatnonzero(valid)[np.argsort(numbers[valid], kind="stable")]
    ordered = numbers[order]
    start = np.searchsorted(ordered, low, side="left")
    stop = np.where(half_open, np.searchsorted(ordered, high, side="left"), np.searchsorted(ordered, high, "right"))
    width = np.maximum(stop - start, 0)
    label_of = np.repeat(label_codes, width)
    offsets = np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width)
    return order[np.repeat(start, width) + offsets], label_of


def covering_matrix(raw: pd.Series, labels: pd.Index, hierarchy: Hierarchy | None) -> np.ndarray:
    """Boolean (distinct raw values of ``raw``, in order) × ``labels``: true where the label covers the value."""
    rows, cols = _covering(raw, labels, hierarchy)
    covered = np.zeros((len(raw), len(labels)), dtype=bool)
    covered[rows, cols] = True
    return covered


def label_intervals(labels: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The closed numeric interval each label stands for: a number ``v`` is ``[v, v]``, a range its ends.

    ``NaN`` for a label that is neither (a category, a hierarchy label, ``*``). A half-open
    range ``[a-b)`` is read as ``[a, b]``: the interval serves distances, not coverage.
    """
    text = pd.Series(labels.to_numpy(dtype=object), dtype=object).astype(str)
    parsed = text.str.extract(_RANGE)
    low = pd.to_numeric(parsed["a"].fillna(parsed["c"]), errors="coerce").to_numpy(dtype=float, copy=True)
    high = pd.to_numeric(parsed["b"].fillna(parsed["d"]), errors="coerce").to_numpy(dtype=float, copy=True)
    single = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    plain = np.isnan(low) & ~np.isnan(single)
    low[plain] = single[plain]
    high[plain] = single[plain]
    return low, high
