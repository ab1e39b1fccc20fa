"""Build generalization hierarchies from values, rules or mappings instead of CSV files.

The builders mirror ARX's ``HierarchyBuilderIntervalBased``,
``HierarchyBuilderRedactionBased``, ``HierarchyBuilderDate`` and
``HierarchyBuilderOrderBased``. Each one computes ARX-style rows
(``leaf, level1, …, top``) and returns :meth:`Hierarchy.from_rows`, so every
hierarchy, built or read, passes the same validation. Leaves are the values as
:func:`as_labels` writes them (``39`` and ``39.0`` both become ``"39"``), so a
hierarchy built from a column generalizes that column.
"""

from __future__ import annotations

import datetime as dt
import math
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import pairwise
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from privacy_plugins.core.disclosure import examples
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy, as_labels
from privacy_plugins.errors import HierarchyError

__all__ = [
    "date_hierarchy",
    "grouping_hierarchy",
    "interval_hierarchy",
    "masking_hierarchy",
    "taxonomy_hierarchy",
]

# Date levels from fine to coarse; any subsequence nests (a day lies in one month, …).
_DATE_LEVELS: Mapping[str, Callable[[dt.date], str]] = {
    "day": lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}",
    "month": lambda d: f"{d.year:04d}-{d.month:02d}",
    "quarter": lambda d: f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}",
    "year": lambda d: f"{d.year:04d}",
    "decade": lambda d: f"{d.year // 10 * 10}s",
}


def interval_hierarchy(
    attribute: Hashable,
    values: Iterable[object],
    *,
    widths: Sequence[float] | None = None,
    cuts: Sequence[Sequence[float]] | None = None,
    top: str = "*",
) -> Hierarchy:
    """Numeric values generalized to ever wider intervals ``[a-b)``, then ``top``.

    Give exactly one of ``widths`` or ``cuts``. Interval bounds are written as
    canonical numbers (``20``, never ``20.0``); a negative bound reads
    ``[-10--5)``. Arithmetic is exact on the decimal text of each number, so
    ``0.3`` falls in ``[0.3-0.4)`` for width ``0.1``.

    Args:
        attribute: the column the hierarchy is for.
        values: finite ints or floats (not bools, not NaN); duplicates are fine.
            The distinct values become the leaves, sorted by value.
        widths: one bin width per level, each > 0 and an integer multiple (2× or
            more) of the previous one, e.g. ``(5, 10, 20)``. Bins are aligned at
            multiples of the width: with width 5, 23 falls in ``[20-25)``.
        cuts: per level a strictly increasing list of at least two cut points,
            e.g. ``[[0, 18, 30, 50, 65, 120], [0, 30, 65, 120]]``. Bins are
            half-open, so every value needs ``first cut ≤ value < last cut``. Each
            level must be coarser than the previous one: it covers the previous
            range, each of its cut points inside that range is a cut point of the
            previous level, and it merges at least two bins.
        top: the label of the single top value.

    Returns:
        A hierarchy of height ``len(widths) + 1`` (or ``len(cuts) + 1``).

    Raises:
        HierarchyError: a missing value, a value that is not a finite number or
            lies outside the cut points (named in the message), both or neither
            of ``widths`` and ``cuts``, or widths/cuts that do not nest.

    Example:
        >>> h = interval_hierarchy("age", [23, 37, 41], widths=(5, 10, 20))
        >>> h.to_rows()[0]
        ['23', '[20-25)', '[20-30)', '[20-40)', '*']
        >>> interval_hierarchy("age", [17, 42], cuts=[[0, 18, 65, 120], [0, 120]]).generalize([42], 1).tolist()
        ['[18-65)']
    """
    if (widths is None) == (cuts is None):
        raise HierarchyError(f"interval_hierarchy for {attribute!r} needs exactly one of widths= or cuts=")
    binners = _width_binners(attribute, widths) if widths is not None else _cut_binners(attribute, cuts or ())
    leaves = _numeric_leaves(attribute, values)
    rows = [[label, *(binner(label, number) for binner in binners), top] for label, number in leaves]
    return Hierarchy.from_rows(attribute, rows)


def masking_hierarchy(
    attribute: Hashable, values: Iterable[object], *, mask_char: str = "*", levels: int | None = None
) -> Hierarchy:
    """Fixed-width codes redacted right to left: ``47907 → 4790* → 479** → … → *****``.

    Level ``i`` masks the last ``i`` characters, keeping the width. The last
    level is always all mask characters: with ``levels`` smaller than the width
    it is added after level ``levels``, so the hierarchy keeps a single top.

    Args:
        attribute: the column the hierarchy is for.
        values: codes (strings, or ints such as zip codes) whose text all has
            the same length ≥ 1; ``2139`` and ``47907`` do not mix — pass
            zero-padded strings (``"02139"``) instead. No missing values.
        mask_char: a single character.
        levels: the number of redaction steps, an integer in ``1..width``;
            default the full width.

    Returns:
        A hierarchy of height ``levels`` (``levels + 1`` when ``levels`` < width).

    Raises:
        HierarchyError: codes of different lengths, an empty code, a missing value,
            or a bad ``mask_char``/``levels``.

    Example:
        >>> masking_hierarchy("zip", ["47907", "47906", "47610"]).to_rows()[-1]
        ['47907', '4790*', '479**', '47***', '4****', '*****']
        >>> masking_hierarchy("zip", [47907], levels=2).to_rows()
        [['47907', '4790*', '479**', '*****']]
    """
    if not isinstance(mask_char, str) or len(mask_char) != 1:
        raise HierarchyError(f"mask_char for {attribute!r} must be a single character, got {mask_char!r}")
    codes = sorted(_distinct_labels(attribute, values))
    by_width = {len(code): code for code in codes}
    if len(by_width) > 1:
        raise HierarchyError(
            f"masking_hierarchy for {attribute!r} needs codes that are all strings of the same length, "
            f"got lengths {sorted(by_width)}{examples([by_width[width] for width in sorted(by_width)])}; "
            "pad them to one width, e.g. zip '02139'"
        )
    width = len(codes[0])
    if width == 0:
        raise HierarchyError(f"masking_hierarchy for {attribute!r} got empty codes; there is nothing to mask")
    steps = width if levels is None else levels
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 1 <= steps <= width:
        raise HierarchyError(f"levels for {attribute!r} must be an integer in 1..{width} (the width), got {levels!r}")
    masked = list(range(int(steps) + 1)) + ([width] if steps < width else [])
    rows = [[code[: width - i] + mask_char * i for i in masked] for code in codes]
    return Hierarchy.from_rows(attribute, rows)


def date_hierarchy(
    attribute: Hashable,
    values: Iterable[object],
    *,
    levels: Sequence[str] = ("month", "year", "decade"),
    top: str = "*",
) -> Hierarchy:
    """Dates generalized along the calendar, e.g. ``2020-03-15 → 2020-03 → 2020 → 2020s → *``.

    Level labels: ``"day"`` → ``2020-03-15``, ``"month"`` → ``2020-03``,
    ``"quarter"`` → ``2020-Q1``, ``"year"`` → ``2020``, ``"decade"`` → ``2020s``.
    The leaves are the values as :func:`as_labels` writes them: ``2020-03-15``
    for dates and ISO date strings, the full text for datetimes with a time (add
    ``"day"`` to group those by day). Build it from the column you generalize.

    Args:
        attribute: the column the hierarchy is for.
        values: ``datetime.date``/``datetime``/``pandas.Timestamp``/``numpy.datetime64``
            values or ISO 8601 strings (``"2020-03-15"``, ``"2020-03-15T10:00"``);
            no missing values.
        levels: one or more names from ``day, month, quarter, year, decade``, in
            that order (any subsequence, e.g. ``("quarter", "decade")``).
        top: the label of the single top value.

    Returns:
        A hierarchy of height ``len(levels) + 1``.

    Raises:
        HierarchyError: a value that is missing or not a date (named in the
            message), or unknown or misordered level names.

    Example:
        >>> h = date_hierarchy("admitted", ["2020-03-15", "2021-11-02"], levels=("quarter", "year", "decade"))
        >>> h.to_rows()
        [['2020-03-15', '2020-Q1', '2020', '2020s', '*'], ['2021-11-02', '2021-Q4', '2021', '2020s', '*']]
    """
    order = list(_DATE_LEVELS)
    if isinstance(levels, str) or not all(isinstance(name, str) and name in _DATE_LEVELS for name in levels):
        raise HierarchyError(f"levels for {attribute!r} must be a sequence of names from {order}, got {levels!r}")
    positions = [order.index(name) for name in levels]
    if not positions or positions != sorted(set(positions)):
        raise HierarchyError(
            f"levels for {attribute!r} must be one or more of {order}, each once and in that order, got {levels!r}"
        )
    dates = {label: _parse_date(attribute, value) for label, value in _distinct_labels(attribute, values).items()}
    leaves = sorted(dates, key=lambda label: (dates[label].year, dates[label].month, dates[label].day, label))
    rows = [[label, *(_DATE_LEVELS[name](dates[label]) for name in levels), top] for label in leaves]
    return Hierarchy.from_rows(attribute, rows)


def taxonomy_hierarchy(attribute: Hashable, tree: Mapping[object, object], *, top: str | None = None) -> Hierarchy:
    """A hierarchy from a nested mapping such as ``{"*": {"Europe": ["France"], "Asia": {...}}}``.

    A key maps to a nested mapping, to a list of leaves, or to ``None`` (or an
    empty list/mapping) when the key itself is a leaf; lists may also hold
    mappings. Leaves deeper than others set the height; a shallower leaf is
    padded by repeating its own value at the levels just above it, so
    ``France`` under ``* > Europe`` next to ``* > Asia > East > Japan`` gives the
    row ``France, France, Europe, *``.

    Args:
        attribute: the column the hierarchy is for.
        tree: a non-empty mapping. With ``top=None`` a mapping with a single key
            has that key as the top; with several keys they sit under ``"*"``.
        top: when given, the keys of ``tree`` all sit under this top value.

    Returns:
        A hierarchy whose height is the depth of the deepest leaf.

    Raises:
        HierarchyError: a leaf listed twice (naming both places), a missing
            label, children that are neither a mapping, a list nor ``None``, or a
            node with two parents at one level.

    Example:
        >>> tree = {"*": {"Europe": ["France", "Germany"], "Asia": {"East": ["Japan"], "South": ["India"]}}}
        >>> for row in taxonomy_hierarchy("country", tree).to_rows():
        ...     print(row)
        ['France', 'France', 'Europe', '*']
        ['Germany', 'Germany', 'Europe', '*']
        ['Japan', 'East', 'Asia', '*']
        ['India', 'South', 'Asia', '*']
    """
    if not isinstance(tree, Mapping) or not tree:
        raise HierarchyError(f"taxonomy for {attribute!r} must be a non-empty mapping, got {tree!r}")
    if top is None and len(tree) == 1:
        ((root, children),) = tree.items()
        if _is_leaf(children):
            raise HierarchyError(
                f"taxonomy for {attribute!r}: its single key {root!r} is taken as the top and has no children; "
                "pass top='*' to make the keys leaves"
            )
    else:
        root, children = ("*" if top is None else top), tree
    paths: list[list[str]] = []
    _walk(attribute, children, [_text(attribute, root)], paths)
    seen: dict[str, list[str]] = {}
    for path in paths:
        if path[-1] in seen:
            places = [" > ".join(p[:-1]) for p in (seen[path[-1]], path)]
            raise HierarchyError(f"taxonomy for {attribute!r} lists leaf {path[-1]!r} twice: under {places!r}")
        seen[path[-1]] = path
    depth = max(len(path) for path in paths)
    rows = [[path[-1]] * (depth - len(path)) + path[::-1] for path in paths]
    return Hierarchy.from_rows(attribute, rows)


def grouping_hierarchy(
    attribute: Hashable, mapping: Mapping[object, Sequence[object]], *, top: str | None = "*"
) -> Hierarchy:
    """A hierarchy from ``{leaf: [parent, grandparent, …]}``, every list of the same length.

    ``top`` is added as the last level unless every list already ends with it
    (or ``top`` is None).

    Args:
        attribute: the column the hierarchy is for.
        mapping: a non-empty mapping from each leaf to its ancestors, nearest
            first; all lists have the same length (0 allowed: leaves then ``top``).
        top: the label of the single top value, or None to add none.

    Returns:
        A hierarchy of height ``len(list)`` (+ 1 when ``top`` is added).

    Raises:
        HierarchyError: lists of different lengths (naming a leaf of each length),
            a list given as a plain string, or groups that do not form a tree.

    Example:
        >>> grouping_hierarchy("sex", {"male": [], "female": []}).to_rows()
        [['male', '*'], ['female', '*']]
        >>> grouping_hierarchy("city", {"Lyon": ["France"], "Kyoto": ["Japan"]}).generalize(["Kyoto"], 1).tolist()
        ['Japan']
    """
    if not isinstance(mapping, Mapping) or not mapping:
        raise HierarchyError(f"grouping for {attribute!r} must be a non-empty mapping, got {mapping!r}")
    rows: list[list[str]] = []
    for leaf, parents in mapping.items():
        if isinstance(parents, str) or not isinstance(parents, Sequence):
            raise HierarchyError(
                f"grouping for {attribute!r}: the parents of {leaf!r} must be a list such as ['Europe'], "
                f"got {parents!r}"
            )
        rows.append([_text(attribute, item) for item in (leaf, *parents)])
    by_length = {len(row) - 1: row[0] for row in rows}
    if len(by_length) > 1:
        raise HierarchyError(
            f"grouping for {attribute!r} needs the same number of parents for every leaf, got "
            + ", ".join(f"{n} for {leaf!r}" for n, leaf in sorted(by_length.items()))
        )
    if top is not None and not all(len(row) > 1 and row[-1] == top for row in rows):
        rows = [[*row, top] for row in rows]
    return Hierarchy.from_rows(attribute, rows)


# --- helpers -----------------------------------------------------------------


def _series(attribute: Hashable, values: Iterable[object]) -> pd.Series:
    if isinstance(values, (str, bytes, Mapping)):
        raise HierarchyError(
            f"values for {attribute!r} must be a list or column of values, got a {type(values).__name__}"
        )
    series = values.reset_index(drop=True) if isinstance(values, pd.Series) else pd.Series(list(values))
    if series.empty:
        raise HierarchyError(f"cannot build a hierarchy for {attribute!r} from no values")
    return series


def _distinct_labels(attribute: Hashable, values: Iterable[object]) -> dict[str, object]:
    """The label of each distinct value, mapped to one value that has it."""
    series = _series(attribute, values)
    labels = as_labels(series)
    _check_present(attribute, series, labels.isna().to_numpy())
    return dict(zip(labels.tolist(), series.tolist(), strict=True))


def _check_present(attribute: Hashable, series: pd.Series, missing: np.ndarray) -> None:
    if missing.any():
        raise HierarchyError(
            f"values for {attribute!r} include a missing value ({series[missing].tolist()[0]!r}); "
            "a hierarchy covers present values only, so fill or drop missing values first"
        )


def _is_number(value: object) -> TypeGuard[int | float | np.integer[Any] | np.floating[Any]]:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, (float, np.floating)) and math.isfinite(value)


def _exact(attribute: Hashable, what: str, value: object) -> Fraction:
    """A number as the exact fraction its decimal text denotes (0.1 is 1/10)."""
    if not _is_number(value):
        raise HierarchyError(f"{what} for {attribute!r} must be finite numbers, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    return Fraction(repr(float(value)))


def _number_text(number: Fraction) -> str:
    return str(number.numerator) if number.denominator == 1 else str(float(number))


def _numeric_leaves(attribute: Hashable, values: Iterable[object]) -> list[tuple[str, Fraction]]:
    series = _series(attribute, values)
    _check_present(attribute, series, series.isna().to_numpy())
    numeric = pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)
    finite = np.isfinite(series.to_numpy(dtype=float)) if numeric else [_is_number(v) for v in series.tolist()]
    if not np.all(finite):
        raise HierarchyError(
            f"interval_hierarchy for {attribute!r} needs finite numbers (int or float), got "
            f"{int(np.size(finite) - np.count_nonzero(finite))} other value(s)"
            + examples(series[~np.asarray(finite)].tolist(), limit=1)
        )
    distinct = pd.Series(series.infer_objects().unique()).sort_values(ignore_index=True)
    return [(label, Fraction(label)) for label in dict.fromkeys(as_labels(distinct).tolist())]


Binner = Callable[[str, Fraction], str]


def _width_binners(attribute: Hashable, widths: Sequence[float]) -> list[Binner]:
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or not widths:
        raise HierarchyError(f"widths for {attribute!r} must be a non-empty sequence such as (5, 10), got {widths!r}")
    exact = [_exact(attribute, "widths", width) for width in widths]
    for width in exact:
        if width <= 0:
            raise HierarchyError(f"widths for {attribute!r} must be > 0, got {_number_text(width)}")
    for finer, coarser in pairwise(exact):
        ratio = coarser / finer
        if ratio.denominator != 1 or ratio < 2:
            raise HierarchyError(
                f"widths for {attribute!r} must each be a multiple (2× or more) of the previous one so that "
                f"intervals nest, got {_number_text(coarser)} after {_number_text(finer)}"
            )

    def binner(width: Fraction) -> Binner:
        texts: dict[int, str] = {}  # bin number → label; many leaves share a bin

        def label(_: str, number: Fraction) -> str:
            index = (number.numerator * width.denominator) // (number.denominator * width.numerator)
            if index not in texts:
                texts[index] = f"[{_number_text(index * width)}-{_number_text((index + 1) * width)})"
            return texts[index]

        return label

    return [binner(width) for width in exact]


def _cut_binners(attribute: Hashable, cuts: Sequence[Sequence[float]]) -> list[Binner]:
    if isinstance(cuts, (str, bytes)) or not isinstance(cuts, Sequence) or not cuts:
        raise HierarchyError(
            f"cuts for {attribute!r} must be a non-empty list of cut-point lists such as [[0, 18, 65, 120]], "
            f"got {cuts!r}"
        )
    levels: list[list[Fraction]] = []
    for number, level in enumerate(cuts, start=1):
        if isinstance(level, (str, bytes)) or not isinstance(level, Sequence):
            raise HierarchyError(f"cuts of level {number} for {attribute!r} must be a list of numbers, got {level!r}")
        exact = [_exact(attribute, f"cuts of level {number}", cut) for cut in level]
        if len(exact) < 2 or any(a >= b for a, b in pairwise(exact)):
            raise HierarchyError(
                f"cuts of level {number} for {attribute!r} must be at least two strictly increasing numbers, "
                f"got {list(level)!r}"
            )
        levels.append(exact)
    for number, (finer, coarser) in enumerate(pairwise(levels), start=2):
        inner = [cut for cut in coarser if finer[0] < cut < finer[-1]]
        stray = [_number_text(cut) for cut in inner if cut not in set(finer)]
        if coarser[0] > finer[0] or coarser[-1] < finer[-1] or stray:
            raise HierarchyError(
                f"cuts of level {number} for {attribute!r} do not nest in level {number - 1}: a coarser level "
                f"must cover [{_number_text(finer[0])}, {_number_text(finer[-1])}) and cut only where level "
                f"{number - 1} cuts" + (f"; {stray} are not cuts of level {number - 1}" if stray else "")
            )
        if len(inner) == len(finer) - 2:
            raise HierarchyError(
                f"cuts of level {number} for {attribute!r} are not coarser than level {number - 1}: they merge no bins"
            )

    def binner(number: int, level: list[Fraction]) -> Binner:
        def label(text: str, value: Fraction) -> str:
            index = bisect_right(level, value) - 1
            if not 0 <= index < len(level) - 1:
                low, high = _number_text(level[0]), _number_text(level[-1])
                raise HierarchyError(
                    f"value {text} of {attribute!r} is outside the cut points of level {number}: "
                    f"values must satisfy {low} ≤ value < {high}"
                )
            return f"[{_number_text(level[index])}-{_number_text(level[index + 1])})"

        return label

    return [binner(number, level) for number, level in enumerate(levels, start=1)]


def _parse_date(attribute: Hashable, value: object) -> dt.date:
    if isinstance(value, dt.date):  # also datetime and pandas.Timestamp
        return value
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value).to_pydatetime()
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise HierarchyError(
        f"date_hierarchy for {attribute!r} cannot read a value as a date{examples([value])}; "
        "give dates, datetimes or ISO 8601 strings such as '2020-03-15'"
    )


def _text(attribute: Hashable, value: object) -> str:
    """One label as :func:`as_labels` would write it."""
    if isinstance(value, str):
        return value
    label = as_labels(pd.Series([value])).iloc[0]
    if label is None or (isinstance(label, float) and math.isnan(label)):
        raise HierarchyError(f"hierarchy for {attribute!r} has a missing label ({value!r})")
    return str(label)


def _is_leaf(children: object) -> bool:
    return children is None or (isinstance(children, (Mapping, list, tuple)) and len(children) == 0)


def _walk(attribute: Hashable, node: object, path: list[str], paths: list[list[str]]) -> None:
    """Append the path (top first) of every leaf under ``node`` to ``paths``."""
    if isinstance(node, Mapping):
        for key, children in node.items():
            label = _text(attribute, key)
            if _is_leaf(children):
                paths.append([*path, label])
            else:
                _walk(attribute, children, [*path, label], paths)
    elif isinstance(node, (list, tuple)):
        for item in node:
            if isinstance(item, Mapping):
                _walk(attribute, item, path, paths)
            else:
                paths.append([*path, _text(attribute, item)])
    else:
        raise HierarchyError(
            f"taxonomy for {attribute!r}: the children of {path[-1]!r} must be a mapping, a list of leaves "
            f"or None, got {node!r}"
        )
