"""A deliberately naive brute force of the diagnosis, written from the definitions.

Nothing here imports privacy_plugins, numpy or pandas. Tables are
``{column: list of values}``; every missing value (``None``, float NaN) of a
column is one value of its own. Each subset is grouped from scratch with a dict,
and the borders are read off *all* 2^d subsets by their definitions:

* Bd+ = satisfying subsets with no satisfying strict superset;
* Bd− = violating subsets whose every strict subset satisfies;
* the level-wise search evaluates ∅; then, if ∅ satisfies, the full set; then,
  unless the full set satisfies, every non-empty subset whose strict subsets all
  satisfy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations
from typing import Any

TOLERANCE = 1e-9


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def _key(value: Any) -> Any:
    if value is None:
        return MISSING
    if isinstance(value, float) and value != value:
        return MISSING
    return value


def all_subsets(attributes: list[Any]) -> list[frozenset[Any]]:
    out = []
    for size in range(len(attributes) + 1):
        for combo in combinations(attributes, size):
            out.append(frozenset(combo))
    return out


def group(table: dict[Any, list[Any]], subset: frozenset[Any], n: int) -> list[list[int]]:
    """Rows grouped by their values on ``subset`` (the empty subset: one group)."""
    columns = sorted(subset, key=str)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for row in range(n):
        key = tuple(_key(table[c][row]) for c in columns)
        groups.setdefault(key, []).append(row)
    return list(groups.values())


def subset_measures(
    table: dict[Any, list[Any]],
    subset: frozenset[Any],
    n: int,
    *,
    sensitive: Any = None,
    k: int = 2,
    l: int | None = None,
    suppression_limit: float | None = None,
    threshold: float = 0.2,
) -> dict[str, Any]:
    groups = group(table, subset, n)
    sizes = [len(g) for g in groups]
    out: dict[str, Any] = {
        "classes": len(groups),
        "k": min(sizes),
        "sample_uniques": sizes.count(1),
        "suppression_needed": sum(s for s in sizes if s < k),
        "records_at_risk": sum(s for s in sizes if 1 / s > threshold),
    }
    if suppression_limit is not None:
        budget = math.floor(suppression_limit * n + 1e-9)
        best = min(sizes)
        for candidate in sorted(set(sizes)):
            cost = sum(s for s in sizes if s < candidate)
            if cost <= budget and cost < n:
                best = candidate
        out["k_after_suppression"] = best
    if sensitive is None:
        return out
    distinct, frequency, entropy, recursive = [], [], [], []
    for rows in groups:
        counts: dict[Any, int] = {}
        for row in rows:
            value = _key(table[sensitive][row])
            counts[value] = counts.get(value, 0) + 1
        r = sorted(counts.values(), reverse=True)
        distinct.append(len(r))
        frequency.append(len(rows) / r[0])
        entropy.append(math.exp(-sum(c / len(rows) * math.log(c / len(rows)) for c in r)))
        if l is not None:
            recursive.append(math.inf if len(r) < l else r[0] / sum(r[l - 1 :]))
    out.update(distinct_l=min(distinct), frequency_l=min(frequency), entropy_l=min(entropy))
    if l is not None:
        out["recursive_c"] = max(recursive)
    return out


def satisfies(measures: dict[str, Any], model: str, threshold: float, c: float | None = None) -> bool:
    if model == "k":
        return measures["k"] >= threshold
    if model == "recursive":
        return c is not None and c > measures["recursive_c"]
    return measures[f"{model}_l"] >= threshold - TOLERANCE


def brute_force_borders(
    attributes: list[Any], satisfied: Callable[[frozenset[Any]], bool]
) -> tuple[set[frozenset[Any]], set[frozenset[Any]], set[frozenset[Any]]]:
    """(Bd+, Bd−, subsets the level-wise search evaluates), by checking every subset."""
    subsets = all_subsets(attributes)
    ok = {s: satisfied(s) for s in subsets}
    positive = {s for s in subsets if ok[s] and not any(ok[t] for t in subsets if s < t)}
    negative = {s for s in subsets if not ok[s] and all(ok[t] for t in subsets if t < s)}
    empty, full = frozenset(), frozenset(attributes)
    if not ok[empty]:
        return positive, negative, {empty}
    if ok[full]:
        return positive, negative, {empty, full}
    evaluated = {s for s in subsets if s and all(ok[t] for t in subsets if t < s)}
    return positive, negative, evaluated | {empty, full}
