"""The headline numbers of a table as published: rows, classes, each requirement measured — numbers only.

They travel where values must not: Airflow asset events (``extra``), Dagster
metadata, monitoring alerts. Every entry is a count or a measure (never a
quasi-identifier or sensitive value), so they are safe to show anyone who may
see the release's summary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from privacy_plugins.core.models import ModelResult, check_name
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["drift", "measure_classes", "measure_published", "numbers_from_results"]


def _finite(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded measure (e.g. l of a single-valued class set) becomes ``None``."""
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def measure_published(spec: ReleaseSpec, frame: pd.DataFrame) -> dict[str, Any]:
    """``rows``, ``classes``, ``measured``/``targets``/``met`` (by check name, e.g. ``k_anonymity``), ``holds``.

    The same core measures as the check and publish steps, on ``frame`` as published.
    """
    classes = EquivalenceClasses.from_frame(frame.reset_index(drop=True), list(spec.quasi_identifiers))
    return measure_classes(spec, classes, rows=len(frame), columns=[str(c) for c in frame.columns])


def measure_classes(spec: ReleaseSpec, classes: EquivalenceClasses, *, rows: int, columns: list[str]) -> dict[str, Any]:
    """:func:`measure_published` from the classes (records or a GROUP BY inside the database) and the columns."""
    results = {
        check_name(model): model.evaluate(classes)
        for model in spec.models()
        # δ-presence is measured on the population, which a published research subset is not (issue 30)
        if model.research_subset_column is None or str(model.research_subset_column) in columns
    }
    return numbers_from_results(spec, results, rows=rows, classes=int(classes.n_classes), columns=columns)


def numbers_from_results(
    spec: ReleaseSpec, results: Mapping[str, ModelResult], *, rows: int, classes: int, columns: list[str]
) -> dict[str, Any]:
    """The numbers from model results keyed by check name (:attr:`MeasureReport.results` or the check step's)."""
    measured = {name: _finite(result.observed) for name, result in results.items()}
    targets = {name: _finite(result.threshold) for name, result in results.items()}
    met = {name: bool(result.passed) for name, result in results.items()}
    holds = not any(column in columns for column in spec.identifiers) and all(met.values())
    return {
        "rows": rows,
        "classes": classes,
        "measured": measured,
        "targets": targets,
        "met": met,
        "holds": holds,
    }


def drift(released: dict[str, Any], now: dict[str, Any], *, tolerance: float = 1e-9) -> list[str]:
    """How the published table's numbers differ from the ones announced at release (empty: no drift).

    Args:
        released: the numbers of the release (an asset event's ``extra``, or :func:`measure_published` then).
        now: :func:`measure_published` of what is published now.
        tolerance: allowed absolute difference of a measure.
    """
    problems = [] if now.get("holds", False) else ["the published table no longer meets the requirements"]
    for key in ("rows", "classes"):
        if key in released and released[key] != now.get(key):
            problems.append(f"{key}: {released[key]} at release, {now.get(key)} now")
    before, after = released.get("measured"), now.get("measured", {})
    if before is None:  # nothing announced to compare with
        return problems
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if (old is None) != (new is None) or (old is not None and abs(float(old) - float(new)) > tolerance):
            problems.append(f"{name}: {old} at release, {new} now")
    return problems
