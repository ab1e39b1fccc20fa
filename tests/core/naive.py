"""A deliberately naive reference implementation of every measure.

Written straight from the definitions with plain Python loops, dicts and
:class:`fractions.Fraction`, independently of ``privacy_plugins`` (nothing is
imported from it, and no numpy/pandas is used). The property tests in
``test_naive_reference.py`` and ``test_adult.py`` check that the library agrees
with it.

Input is a table as ``{column name: list of values}`` (all lists the same length);
``frame_columns`` turns a DataFrame into that form. Missing values (``None``, float
NaN, ``pd.NA``, ``NaT``) in any column are normalised to the single sentinel
:data:`MISSING` before grouping, so all missing values of a column are ONE value of
their own (like SQL ``GROUP BY`` on NULL).

Definitions (n = rows, E = equivalence classes = groups of rows equal on all QIs):

* k = min |E|; classes = #E; sample_uniques = #{E : |E| = 1}.
* suppression_needed(k) = Σ |E| over |E| < k (rows) and that / n.
* k_after_suppression(δ): budget = ⌊δ·n⌋; with distinct class sizes s1 < … < sd,
  remove every class of size ≤ sj for the largest j ≤ d−1 whose cost
  Σ_{|E| ≤ sj} |E| fits the budget; k is the smallest remaining size.
* distinct l = min_E #distinct SA values; frequency l = min_E |E| / max_v count;
  entropy l = min_E exp(−Σ p ln p).
* recursive (c,l): counts r1 ≥ … ≥ rm; c*(E) = r1 / (r_l + … + r_m), +inf if m < l;
  table c* = max_E c*(E).
* t-closeness = max_E EMD(P_E, P_T): equal distance ½ Σ_v |p_v − q_v|; ordered
  distance over the m sorted table values (missing last)
  1/(m−1) · Σ_i |Σ_{j≤i} (p_j − q_j)| (0 when m = 1).
* personalized leakage: Pleak(t) = count(E_t, t.s) / |E_t| against bound b(t).
* prosecutor risk: record risk 1/|E_t|.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from typing import Any

__all__ = [
    "MISSING",
    "TOLERANCE",
    "frame_columns",
    "group_rows",
    "is_missing",
    "naive_measure",
    "normalise",
]

#: Tolerance of the definitions for real-valued comparisons (l, t, leakage).
TOLERANCE = 1e-9


class _Missing:
    """The one value every missing cell is replaced by."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def is_missing(value: Any) -> bool:
    """None, NaN (float or numpy), pd.NA and NaT are missing; nothing else is."""
    if value is None or value is MISSING:
        return True
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(value != value)  # only NaN is unequal to itself
    except (TypeError, ValueError):
        return False


def normalise(value: Any) -> Any:
    return MISSING if is_missing(value) else value


def frame_columns(frame: Any, columns: list[Any] | None = None) -> dict[Any, list[Any]]:
    """Plain Python lists of a DataFrame's columns (the only pandas touch point)."""
    names = list(frame.columns) if columns is None else columns
    return {name: list(frame[name].tolist()) for name in names}


def group_rows(table: dict[Any, list[Any]], quasi_identifiers: list[Any]) -> dict[tuple[Any, ...], list[int]]:
    """Equivalence classes: tuple of normalised QI values → row indices."""
    n = len(table[quasi_identifiers[0]])
    classes: dict[tuple[Any, ...], list[int]] = {}
    for row in range(n):
        key = tuple(normalise(table[q][row]) for q in quasi_identifiers)
        if key not in classes:
            classes[key] = []
        classes[key].append(row)
    return classes


def _violations(sizes_of_violating: list[int]) -> dict[str, Any]:
    histogram: dict[int, int] = {}
    for size in sizes_of_violating:
        histogram[size] = histogram.get(size, 0) + 1
    return {
        "classes": len(sizes_of_violating),
        "records": sum(sizes_of_violating),
        "size_histogram": histogram,
    }


def k_after_suppression(sizes: list[int], n: int, suppression_limit: float) -> dict[str, int]:
    """Suppress whole smallest classes within ⌊δ·n⌋ rows, keeping at least one class."""
    # floor(δ·n) read as the user means it: δ = 0.29 on 100 rows allows 29 rows, although
    # 0.29 * 100 == 28.999999999999996 in floating point (hence the 1e-9).
    budget = math.floor(suppression_limit * n + 1e-9)
    distinct = sorted(set(sizes))
    suppressed = 0
    remaining_k = distinct[0]
    for j in range(len(distinct) - 1):  # j ≤ d−1: the largest size is never removed
        cost = 0
        for size in sizes:
            if size <= distinct[j]:
                cost += size
        if cost <= budget:
            suppressed = cost
            remaining_k = distinct[j + 1]
        else:
            break
    return {"budget_rows": budget, "k": remaining_k, "suppressed_rows": suppressed}


def emd_equal(class_counts: Counter, size: int, table_counts: Counter, n: int) -> Fraction:
    total = Fraction(0)
    for value in table_counts:
        p = Fraction(class_counts.get(value, 0), size)
        q = Fraction(table_counts[value], n)
        total += abs(p - q)
    return total / 2


def ordered_values(table_counts: Counter) -> list[Any]:
    """The table's distinct values sorted ascending, the missing value last."""
    present = sorted(v for v in table_counts if v is not MISSING)
    if MISSING in table_counts:
        present.append(MISSING)
    return present


def emd_ordered(class_counts: Counter, size: int, table_counts: Counter, n: int) -> Fraction:
    order = ordered_values(table_counts)
    m = len(order)
    if m == 1:
        return Fraction(0)
    total = Fraction(0)
    running = Fraction(0)  # Σ_{j≤i} (p_j − q_j), extended one value at a time
    for value in order:
        running += Fraction(class_counts.get(value, 0), size) - Fraction(table_counts[value], n)
        total += abs(running)
    return total / (m - 1)


def entropy_l(counts: Counter, size: int) -> float:
    h = 0.0
    for count in counts.values():
        p = count / size
        h -= p * math.log(p)
    return math.exp(h)


def recursive_c(counts: Counter, l: int) -> float:
    r = sorted(counts.values(), reverse=True)
    if len(r) < l:
        return math.inf
    denominator = sum(r[l - 1 :])  # r_l + … + r_m, 1-based
    return r[0] / denominator


def naive_measure(
    table: dict[Any, list[Any]],
    quasi_identifiers: list[Any],
    sensitive_attributes: list[Any] = (),  # type: ignore[assignment]
    *,
    t_distance: dict[Any, str] | None = None,
    k: int | None = None,
    l: float | None = None,
    c: float | None = None,
    t: float | None = None,
    suppression_limit: float | None = None,
    bound: float | None = None,
    bounds: list[float] | None = None,
    risk_threshold: float = 0.2,
) -> dict[str, Any]:
    """Every measure, as nested plain dicts (see the module docstring).

    ``t_distance`` maps each sensitive attribute to ``"equal"`` or ``"ordered"``
    (default equal). ``bound`` is one bound for all records, ``bounds`` one per row.
    """
    classes = group_rows(table, list(quasi_identifiers))
    n = len(table[quasi_identifiers[0]])
    sizes = [len(rows) for rows in classes.values()]
    size_of_row = [0] * n
    for rows in classes.values():
        for row in rows:
            size_of_row[row] = len(rows)

    histogram: dict[int, int] = {}
    for size in sizes:
        histogram[size] = histogram.get(size, 0) + 1

    risk_sum = 0.0
    at_risk = 0
    for row in range(n):
        risk_sum += 1 / size_of_row[row]
        if 1 / size_of_row[row] > risk_threshold:
            at_risk += 1

    out: dict[str, Any] = {
        "rows": n,
        "classes": len(classes),
        "k": min(sizes),
        "sample_uniques": sum(1 for size in sizes if size == 1),
        "class_size_histogram": histogram,
        "risk": {
            "max_risk": 1 / min(sizes),
            "mean_risk": risk_sum / n,
            "records_at_risk": at_risk,
            "share_at_risk": at_risk / n,
        },
        "suppression_needed": None,
        "k_violations": None,
        "k_after_suppression": None,
        "sensitive": {},
    }
    if k is not None:
        small = [size for size in sizes if size < k]
        out["suppression_needed"] = {"rows": sum(small), "fraction": sum(small) / n}
        out["k_violations"] = _violations(small)
    if suppression_limit is not None:
        out["k_after_suppression"] = k_after_suppression(sizes, n, suppression_limit)

    if bound is not None:
        bounds = [bound] * n

    for attribute in sensitive_attributes:
        column = [normalise(v) for v in table[attribute]]
        distance = (t_distance or {}).get(attribute, "equal")
        table_counts = Counter(column)
        per_class = []  # (size, counts, distinct, frequency, entropy, emd, rows)
        for rows in classes.values():
            counts = Counter(column[row] for row in rows)
            size = len(rows)
            emd = (
                emd_ordered(counts, size, table_counts, n)
                if distance == "ordered"
                else emd_equal(counts, size, table_counts, n)
            )
            per_class.append(
                {
                    "size": size,
                    "rows": rows,
                    "counts": counts,
                    "distinct": len(counts),
                    "frequency": size / max(counts.values()),
                    "entropy": entropy_l(counts, size),
                    "emd": emd,
                }
            )
        report: dict[str, Any] = {
            "distinct_l": min(e["distinct"] for e in per_class),
            "frequency_l": min(e["frequency"] for e in per_class),
            "entropy_l": min(e["entropy"] for e in per_class),
            "t_closeness": float(max(e["emd"] for e in per_class)),
            "t_distance": distance,
            "recursive_l": None,
            "recursive_c": None,
            "l_violations": None,
            "t_violations": None,
            "leakage": None,
        }
        if l is not None:
            report["l_violations"] = {
                variant: _violations([e["size"] for e in per_class if e[variant] < l - TOLERANCE])
                for variant in ("distinct", "frequency", "entropy")
            }
            if float(l) == int(l):
                whole = int(l)
                c_star = [recursive_c(e["counts"], whole) for e in per_class]
                report["recursive_l"] = whole
                report["recursive_c"] = max(c_star)
                if c is not None:
                    report["l_violations"]["recursive"] = _violations(
                        [e["size"] for e, value in zip(per_class, c_star) if value >= c]
                    )
        if t is not None:
            report["t_violations"] = _violations([e["size"] for e in per_class if float(e["emd"]) > t + TOLERANCE])
        if bounds is not None:
            leak_max = 0.0
            leak_sum = 0.0
            violations = 0
            infeasible = 0
            violating_sizes = []
            for e in per_class:
                class_violates = False
                for row in e["rows"]:
                    same = e["counts"][column[row]]
                    size = e["size"]
                    b = bounds[row]
                    leak_max = max(leak_max, same / size)
                    leak_sum += same / size
                    if same - b * size > TOLERANCE * size:
                        violations += 1
                        class_violates = True
                    if b * size < 1 - TOLERANCE:
                        infeasible += 1
                if class_violates:
                    violating_sizes.append(e["size"])
            report["leakage"] = {
                "max_leakage": leak_max,
                "mean_leakage": leak_sum / n,
                "violations": violations,
                "infeasible": infeasible,
                "classes": _violations(violating_sizes),
            }
        out["sensitive"][attribute] = report
    return out
