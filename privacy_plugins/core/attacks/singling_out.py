"""Singling out: predicates read off the release that hold for exactly one original record.

A predicate is a conjunction of one condition per chosen column. On a numeric column a
condition compares the number (``<=``, ``>=``, ``==``, ``!=``, ``<``, ``>``, or "is
missing"); on a label column it is "covered by label L" (or not): in the release a row
meets it when its label *is* L, in a raw table when L covers the raw value (a range its
numbers, a hierarchy label its leaves, ``*`` everything).

* **multivariate** (Anonymeter's default): a random release row and ``n_cols`` random
  columns; a number becomes ``>= v`` above the column's median and ``<= v`` otherwise, a
  label ``covered by L``. Kept when it singles out one row of the (deduplicated) release.
* **univariate**: a label or number that occurs once in the release, and each numeric
  column's ``<= min`` and ``>= max``; kept on the same condition.
* **baseline**: random columns, random values of the release and random operators, not
  filtered (the random-guess attacker).

An attack succeeds when its predicate matches exactly one record of the deduplicated
original (or control). Predicates are evaluated in blocks of (predicates × rows)
boolean arrays, grouped per column; no loop runs over rows.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from privacy_plugins.core.attacks.encoding import EncodedRelease, EncodedTable

__all__ = [
    "Predicates",
    "baseline_predicates",
    "count_matches",
    "match_matrix",
    "multivariate_predicates",
    "release_as_table",
    "size_correction",
    "univariate_predicates",
]

# Operators (numeric columns compare numbers; label columns use IN / NOT_IN on label codes).
LE, GE, EQ, NE, LT, GT, IS_NA, NOT_NA, IN, NOT_IN = range(10)
_NUMERIC_OPS = np.array([EQ, NE, GT, LT, GE, LE])
_LABEL_OPS = np.array([IN, NOT_IN])
#: Entries of a (predicates × rows) block evaluated at once.
_BLOCK = 8_000_000


@dataclass(frozen=True)
class Predicates:
    """``n`` conjunctions of ``width`` conditions: column positions, operators and operands.

    ``columns[i, j] == -1`` marks an unused slot (univariate predicates in a wider array).
    The operand is a number (numeric columns) or a release label code (label columns).
    """

    columns: np.ndarray
    ops: np.ndarray
    operands: np.ndarray

    def __len__(self) -> int:
        return len(self.columns)

    def take(self, index: np.ndarray) -> Predicates:
        """The predicates at ``index``."""
        return Predicates(self.columns[index], self.ops[index], self.operands[index])

    def unique_in_order(self) -> np.ndarray:
        """Index of the first occurrence of each distinct predicate, in order."""
        if not len(self):
            return np.empty(0, dtype=np.int64)
        keys = np.concatenate([self.columns, self.ops, np.nan_to_num(self.operands, nan=np.inf)], axis=1)
        order = np.unique(keys, axis=0, return_index=True)[1]
        return np.sort(order)


def release_as_table(release: EncodedRelease) -> EncodedTable:
    """The release read as a raw table: a label matches only itself, numbers compare as numbers."""
    codes, numbers, covered = [], [], []
    for column in release.columns:
        codes.append(column.codes)
        numbers.append(column.numbers)
        covered.append(None if column.numeric else np.eye(len(column.labels), dtype=bool))
    return EncodedTable(release.n_rows, tuple(codes), tuple(numbers), tuple(covered))


def _compare(x: np.ndarray, op: int, v: np.ndarray) -> np.ndarray:
    """One numeric operator, (conditions × rows)."""
    missing = np.isnan(x)
    if op == IS_NA:
        return np.broadcast_to(missing, (len(v), len(x)))
    if op == NOT_NA:
        return np.broadcast_to(~missing, (len(v), len(x)))
    xs, vs = x[None, :], v[:, None]
    with np.errstate(invalid="ignore"):
        if op == LE:
            return xs <= vs
        if op == GE:
            return xs >= vs
        if op == EQ:
            return xs == vs
        if op == NE:
            return (xs != vs) & ~missing[None, :]
        if op == LT:
            return xs < vs
        return xs > vs


def _condition(
    release: EncodedRelease, table: EncodedTable, column: int, ops: np.ndarray, operands: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """Boolean (conditions × rows) for conditions on one column."""
    if release.columns[column].numeric:
        out = np.empty((len(ops), len(rows)), dtype=bool)
        x = table.numbers[column][table.codes[column][rows]]
        for op in np.unique(ops):
            which = ops == op
            out[which] = _compare(x, int(op), operands[which])
        return out
    hit = _label_rows(table, column, rows)[operands.astype(np.int64)]
    outside = ops == NOT_IN
    hit[outside] = ~hit[outside]
    return hit


def _label_rows(table: EncodedTable, column: int, rows: np.ndarray) -> np.ndarray:
    """Boolean (release labels × ``rows``): the label covers the row's value.

    ``rows`` is every row in order or a subset; for every row the matrix is kept between calls when small.
    """
    covered = table.covered[column]
    assert covered is not None
    if len(rows) < table.n_rows or covered.shape[1] * table.n_rows > _BLOCK:
        return covered.T[:, table.codes[column][rows]]
    key = ("label_rows", column)
    if key not in table.cache:
        table.cache[key] = np.ascontiguousarray(covered.T[:, table.codes[column]])
    return table.cache[key]


def match_matrix(
    release: EncodedRelease, table: EncodedTable, predicates: Predicates, rows: np.ndarray | None = None
) -> np.ndarray:
    """Boolean (predicates × rows of ``table``): the predicate holds for the row.

    Predicates are taken in blocks sharing their columns, so each condition is and-ed into
    a contiguous block of the result in place.
    """
    rows = np.arange(table.n_rows) if rows is None else rows
    order = np.lexsort(predicates.columns.T[::-1]) if len(predicates) else np.empty(0, np.int64)
    ordered = predicates.take(order)
    match = np.ones((len(predicates), len(rows)), dtype=bool)
    if len(ordered):
        change = np.flatnonzero((np.diff(ordered.columns, axis=0) != 0).any(axis=1)) + 1
        bounds = np.r_[0, change, len(ordered)]
        for start, stop in itertools.pairwise(bounds):
            for slot, column in enumerate(ordered.columns[start]):
                if column < 0:
                    continue
                ops, operands = ordered.ops[start:stop, slot], ordered.operands[start:stop, slot]
                match[start:stop] &= _condition(release, table, int(column), ops, operands, rows)
    out = np.empty_like(match)
    out[order] = match
    return out


def count_matches(
    release: EncodedRelease, table: EncodedTable, predicates: Predicates, rows: np.ndarray | None = None
) -> np.ndarray:
    """Per predicate, the number of rows of ``table`` (or of ``rows`` of it) it matches."""
    rows = np.arange(table.n_rows) if rows is None else rows
    n = len(predicates)
    counts = np.zeros(n, dtype=np.int64)
    if not n or not len(rows):
        return counts
    chunk = max(1, _BLOCK // len(rows))
    for start in range(0, n, chunk):
        part = predicates.take(np.arange(start, min(n, start + chunk)))
        counts[start : start + len(part)] = np.count_nonzero(match_matrix(release, table, part, rows), axis=1)
    return counts


def _medians(release: EncodedRelease) -> np.ndarray:
    """Per column, the median of the release's numbers (``NaN`` for label columns or no number)."""
    out = np.full(len(release.columns), np.nan)
    for position, column in enumerate(release.columns):
        if column.numeric and np.isfinite(column.numbers).any():
            out[position] = np.nanmedian(column.numbers[column.codes])
    return out


def _operand_ops(
    release: EncodedRelease, columns: np.ndarray, rows: np.ndarray, medians: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The attacker's conditions read off release ``rows`` on ``columns`` (same shape)."""
    ops = np.empty(columns.shape, dtype=np.int64)
    operands = np.empty(columns.shape, dtype=float)
    for position, column in enumerate(release.columns):
        where = columns == position
        if not where.any():
            continue
        code = column.codes[np.broadcast_to(rows[:, None], columns.shape)[where]]
        if column.numeric:
            value = column.numbers[code]
            ops[where] = np.where(np.isnan(value), IS_NA, np.where(value > medians[position], GE, LE))
            operands[where] = value
        else:
            ops[where] = IN
            operands[where] = code
    return ops, operands


#: Bytes the release's bit sets may take; above it the release is checked with boolean blocks.
_BITS_BUDGET = 256 * 2**20
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


class _ReleaseBits:
    """Per (column, operator, release code): the release rows meeting the condition, as packed bits.

    A condition read off a release row is ``IN`` its label, or ``<=``/``>=`` its number, or
    "is missing": a predicate's rows are the AND of its conditions' bit sets, and it singles
    out a row when their popcount is 1 — eight rows per byte instead of one.
    """

    def __init__(self, release: EncodedRelease) -> None:
        self.offsets: dict[tuple[int, int], int] = {}
        blocks: list[np.ndarray] = []
        at = 0
        for position, column in enumerate(release.columns):
            codes = column.codes
            every = np.arange(len(column.labels))
            if column.numeric:
                x = column.numbers[codes]
                with np.errstate(invalid="ignore"):
                    tests = {
                        LE: x[None, :] <= column.numbers[:, None],
                        GE: x[None, :] >= column.numbers[:, None],
                        IS_NA: np.broadcast_to(np.isnan(x), (len(every), len(x))),
                    }
            else:
                tests = {IN: codes[None, :] == every[:, None]}
            for op, test in tests.items():
                self.offsets[(position, op)] = at
                blocks.append(np.packbits(test, axis=1))
                at += len(every)
        self.bits = np.concatenate(blocks)
        #: (columns × release rows): every row's code per column.
        self.codes = np.stack([column.codes for column in release.columns])

    @staticmethod
    def size(release: EncodedRelease) -> int:
        """Bytes the bit sets of ``release`` take."""
        per_row = (release.n_rows + 7) // 8
        return sum(len(c.labels) * (3 if c.numeric else 1) * per_row for c in release.columns)

    def singles(self, columns: np.ndarray, ops: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Per predicate (conditions as release codes): it holds for exactly one release row."""
        index = np.empty(columns.shape, dtype=np.int64)
        for (position, op), offset in self.offsets.items():
            where = (columns == position) & (ops == op)
            index[where] = offset + codes[where]
        rows = self.bits[index[:, 0]].copy()
        for slot in range(1, columns.shape[1]):
            rows &= self.bits[index[:, slot]]
        count = np.bitwise_count(rows) if hasattr(np, "bitwise_count") else _POPCOUNT[rows]
        return np.asarray(count.sum(axis=1, dtype=np.int64) == 1)


def _column_sets(positions: np.ndarray, width: int) -> np.ndarray | None:
    """Every set of ``width`` columns (sorted), when there are few; a uniform pick of one is a random set."""
    if math.comb(len(positions), width) > 100_000:
        return None
    return np.array(list(itertools.combinations(positions.tolist(), width)), dtype=np.int64).reshape(-1, width)


def multivariate_predicates(
    release: EncodedRelease, positions: np.ndarray, n_wanted: int, n_cols: int, rng: np.random.Generator, max_tries: int
) -> Predicates:
    """Up to ``n_wanted`` distinct predicates on ``n_cols`` columns that single out one release row."""
    width = min(n_cols, len(positions))
    whole = release_as_table(release)
    bits = _ReleaseBits(release) if _ReleaseBits.size(release) <= _BITS_BUDGET else None
    medians = _medians(release)
    combos = _column_sets(positions, width)
    found: list[Predicates] = []
    have = 0
    tried = 0
    batch = max(64, 2 * n_wanted)
    while have < n_wanted and tried < max_tries:
        rows = rng.integers(release.n_rows, size=batch)
        if combos is not None:
            columns = combos[rng.integers(len(combos), size=batch)]
        else:
            columns = positions[np.sort(rng.random((batch, len(positions))).argsort(axis=1)[:, :width], axis=1)]
        ops, operands = _operand_ops(release, columns, rows, medians)
        candidates = Predicates(columns, ops, operands)
        tried += batch
        if bits is not None:
            single = bits.singles(columns, ops, bits.codes[columns, rows[:, None]])
        else:
            single = count_matches(release, whole, candidates) == 1
        singles = candidates.take(np.flatnonzero(single))
        pool = _concat([*found, singles])
        pool = pool.take(pool.unique_in_order())
        found = [pool]
        # the next batch aims at what is missing, at the rate seen so far (bounded)
        rate = max(len(pool), 1) / tried
        batch = int(min(max(64, 1.2 * (n_wanted - len(pool)) / rate), 20 * n_wanted, 200_000))
        have = len(pool)
    pool = _concat(found) if found else _empty(width)
    return pool.take(np.arange(min(n_wanted, len(pool))))


def univariate_predicates(
    release: EncodedRelease, positions: np.ndarray, n_wanted: int, rng: np.random.Generator
) -> Predicates:
    """Up to ``n_wanted`` one-column predicates (rare labels or numbers, extremes) that single out a release row."""
    columns: list[np.ndarray] = []
    ops: list[np.ndarray] = []
    operands: list[np.ndarray] = []
    for position in positions:
        column = release.columns[position]
        counts = np.bincount(column.codes, minlength=len(column.labels))
        rare = np.flatnonzero(counts == 1)
        if column.numeric:
            finite = np.isfinite(column.numbers)
            rare = rare[finite[rare]]
            extremes = [(LE, np.nanmin(column.numbers)), (GE, np.nanmax(column.numbers))] if finite.any() else []
            columns.append(np.full(len(rare) + len(extremes), position))
            ops.append(np.array([EQ] * len(rare) + [op for op, _ in extremes], dtype=np.int64))
            operands.append(np.concatenate([column.numbers[rare], [value for _, value in extremes]]))
        else:
            columns.append(np.full(len(rare), position))
            ops.append(np.full(len(rare), IN))
            operands.append(rare.astype(float))
    candidates = Predicates(
        np.concatenate(columns)[:, None].astype(np.int64),
        np.concatenate(ops)[:, None].astype(np.int64),
        np.concatenate(operands)[:, None].astype(float),
    )
    candidates = candidates.take(rng.permutation(len(candidates)))
    candidates = candidates.take(candidates.unique_in_order())
    singles = np.flatnonzero(count_matches(release, release_as_table(release), candidates) == 1)
    return candidates.take(singles[:n_wanted])


def baseline_predicates(
    release: EncodedRelease, positions: np.ndarray, n: int, n_cols: int, rng: np.random.Generator
) -> Predicates:
    """``n`` random predicates: random columns, a random distinct release value each, a random operator."""
    width = min(n_cols, len(positions))
    columns = positions[np.sort(rng.random((n, len(positions))).argsort(axis=1)[:, :width], axis=1)]
    ops = np.empty(columns.shape, dtype=np.int64)
    operands = np.empty(columns.shape, dtype=float)
    for position, column in enumerate(release.columns):
        where = columns == position
        count = int(where.sum())
        if not count:
            continue
        code = rng.integers(len(column.labels), size=count)
        if column.numeric:
            value = column.numbers[code]
            ops[where] = np.where(
                np.isnan(value), rng.choice([IS_NA, NOT_NA], size=count), rng.choice(_NUMERIC_OPS, size=count)
            )
            operands[where] = value
        else:
            ops[where] = rng.choice(_LABEL_OPS, size=count)
            operands[where] = code
    return Predicates(columns, ops, operands)


def size_correction(
    release: EncodedRelease, control: EncodedTable, predicates: Predicates, target_size: int, rng: np.random.Generator
) -> float:
    """The factor that scales control successes to a control as large as the original (Anonymeter's fit).

    The chance that a predicate of weight ``w`` singles out in ``n`` records is
    ``n w (1 - w)^(n - 1)`` (Cohen & Nissim 2020); integrated over ``w`` in ``[0, w_eff]`` it
    gives ``((1 - (n w_eff + 1)(1 - w_eff)^n) / (n + 1))``. Its scale and ``w_eff`` are fitted
    (least squares, ``w_eff`` on a log grid) to the successes on random subsets of the control
    of 10 sizes × 5 draws; the factor is the fitted model at the original's size over it at the
    control's.
    """
    size = control.n_rows
    if size == target_size or not len(predicates):
        return 1.0
    sizes = np.repeat(np.linspace(min(1000, size), size, 10).astype(np.int64), 5)
    draws = [rng.choice(size, size=m, replace=False) for m in sizes]
    if len(predicates) * size <= _BLOCK:  # one matrix, counted over every draw by one product
        picked = np.zeros((size, len(draws)), dtype=np.float32)
        for i, draw in enumerate(draws):
            picked[draw, i] = 1.0
        counts = match_matrix(release, control, predicates).astype(np.float32) @ picked
        successes = (np.abs(counts - 1.0) < 0.5).sum(axis=0).astype(float)
    else:  # blocks of control rows, each evaluated once and counted for every draw (not once per draw)
        member = np.zeros((len(draws), size), dtype=np.float32)
        for i, draw in enumerate(draws):
            member[i, draw] = 1.0
        counts = np.zeros((len(predicates), len(draws)), dtype=np.float32)
        chunk = max(1, _BLOCK // len(predicates))
        for start in range(0, size, chunk):
            rows = np.arange(start, min(size, start + chunk))
            counts += match_matrix(release, control, predicates, rows).astype(np.float32) @ member[:, rows].T
        successes = (np.abs(counts - 1.0) < 0.5).sum(axis=0).astype(float)
    grid = np.logspace(-9, 0, 400)[:, None]
    n = sizes[None, :].astype(float)
    shape = (1.0 - (n * grid + 1.0) * (1.0 - grid) ** n) / (n + 1.0)
    norm = (shape @ successes) / np.maximum((shape * shape).sum(axis=1), 1e-300)
    error = ((norm[:, None] * shape - successes[None, :]) ** 2).sum(axis=1)
    best = int(np.argmin(error))
    w, c = float(grid[best, 0]), float(norm[best])

    def model(m: float) -> float:
        return c * (1.0 - (m * w + 1.0) * (1.0 - w) ** m) / (m + 1.0)

    at_control = model(size)
    return model(target_size) / at_control if at_control > 0 else 1.0


def _concat(parts: list[Predicates]) -> Predicates:
    return Predicates(
        np.concatenate([p.columns for p in parts]),
        np.concatenate([p.ops for p in parts]),
        np.concatenate([p.operands for p in parts]),
    )


def _empty(width: int) -> Predicates:
    return Predicates(np.empty((0, width), np.int64), np.empty((0, width), np.int64), np.empty((0, width)))
