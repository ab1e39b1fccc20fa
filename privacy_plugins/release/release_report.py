"""The publish step's ``release.html`` (beside ``diagnosis.html``): the outcome of a release, for people.

Written once the swap committed, from what the publish step has in hand: the candidate's
accounting and anonymization report, the staged rows as re-measured inside the swap, the
re-checked requirements (the composition check among them), the history read under the
destination's lock, and the run's loaded values (still in its working folder) for the
"before" side of the plots. Only names and numbers reach
:class:`~privacy_plugins.release.release_html.ReleaseFacts`.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.history import COUNT
from privacy_plugins.core.metrics import class_size_histogram
from privacy_plugins.release.artifacts import Candidate, RequirementCheck
from privacy_plugins.release.column_roles import listed_roles
from privacy_plugins.release.composition_gate import COMPOSITION_CHECK, run_targets
from privacy_plugins.release.destination.files import atomic_file
from privacy_plugins.release.judged_tables import judged_tables
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staging import StagedMeasure

__all__ = ["RELEASE_HTML", "release_html_path", "write_release_html"]

RELEASE_HTML = "release.html"
# The utility measures an anonymization report may carry (NCP first); others appear when the algorithm computed them.
_UTILITY = ("ncp", "lm", "discernibility", "c_avg", "height", "precision", "ileft")
_NOT_TRANSFORMATION = frozenset({"seed", "rounds", "candidates_checked"})


def release_html_path(spec: ReleaseSpec) -> Path:
    """Where the release report goes: the spec's report folder, beside ``diagnosis.html``."""
    return spec.report.directory / RELEASE_HTML


def _anonymization_report(candidate: Candidate) -> dict[str, Any]:
    path = Path(candidate.report_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _transformation(details: Any) -> dict[str, float]:
    """Counts of a local recoding (partitions, classes, cuts per QI …) from the report's ``details``."""
    counts: dict[str, float] = {}
    for key, value in (details or {}).items() if isinstance(details, dict) else ():
        if key in _NOT_TRANSFORMATION:
            continue
        if _number(value):
            counts[str(key).replace("_", " ")] = value
        elif isinstance(value, dict) and value and all(_number(v) for v in value.values()):
            counts.update({f"{key} · {qi}": v for qi, v in value.items()})
    return counts


def _class_sizes(targets: pd.DataFrame, quasi_identifiers: Sequence[str]) -> dict[int, int]:
    """Class size → classes, of the loaded records (distinct combinations with their counts)."""
    sizes = targets.groupby(list(quasi_identifiers), dropna=False, observed=True, sort=False)[COUNT].sum()
    counted = pd.Series(sizes.to_numpy(dtype=np.int64)).value_counts()
    return {int(size): int(n) for size, n in counted.items()}


def _attacks(
    spec: ReleaseSpec, folder: Path, measured: StagedMeasure, hierarchies: Mapping[Hashable, Any]
) -> tuple[dict[str, Any], dict[str, float]]:
    """Each attack's rates and interval, when a model judged on tables can attack the release (deterministic)."""
    attacks: dict[str, Any] = {}
    limits: dict[str, float] = {}
    tables = judged_tables(spec, folder, measured)
    for model in spec.models():
        attack = getattr(model, "attack", None)
        if not model.judged_on_tables or not callable(attack):
            continue
        original, original_counts, release, release_counts = tables()
        report = attack(
            original,
            release,
            quasi_identifiers=list(spec.quasi_identifiers),
            hierarchies=hierarchies,
            original_counts=original_counts,
            release_counts=release_counts,
        )
        attacks.update({key: result.to_dict() for key, result in report.results.items()})
        limits.update(getattr(model, "limits", dict)())
    return attacks, limits


def write_release_html(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    measured: StagedMeasure,
    checks: Sequence[RequirementCheck],
    folder: Path,
    loaded_rows: int,
    earlier_releases: int | None,
    run_id: str,
) -> Path:
    """Write ``release.html`` for a release that was just published; its path.

    ``earlier_releases``: the releases the history held before this one (``None``: no history kept).
    """
    from privacy_plugins.release.release_html import CheckLine, ReleaseFacts, render_release_html

    quasi_identifiers = [str(q) for q in spec.quasi_identifiers]
    targets = run_targets(spec, folder)
    report = _anonymization_report(candidate)
    published = measured.classes.frame
    levels = {str(q): int(v) for q, v in candidate.levels.items()}
    hierarchies = spec.build_hierarchies(targets)  # the run's values: the same domain the checks' attacks used
    heights = {str(q): int(h.height) for q, h in hierarchies.items() if str(q) in levels}
    utility = {"NCP": float(candidate.ncp)}
    utility |= {name: float(report[name]) for name in _UTILITY[1:] if _number(report.get(name))}
    composition = None
    if earlier_releases is not None:
        check = next((c for c in checks if c.name == COMPOSITION_CHECK), None)
        composition = {
            "releases": earlier_releases + 1,
            "records_at_risk": int(check.observed or 0) if check is not None else 0,
            "passed": check.passed if check is not None else True,
            "detail": check.detail if check is not None else "",
        }
    attacks, limits = _attacks(spec, folder, measured, hierarchies)
    roles = dict(candidate.column_roles) or listed_roles(spec)  # (a candidate of an older run has no roles)
    roles |= {str(c): "published (no role named)" for c in measured.columns if str(c) not in roles}
    facts = ReleaseFacts(
        name=spec.name,
        run_id=run_id,
        destination=spec.destination.describe(),
        algorithm=candidate.algorithm,
        headline=candidate.headline,
        rows_loaded=int(loaded_rows),
        rows_in=int(candidate.rows_in),
        rows_published=int(measured.rows),
        suppressed=int(candidate.suppressed),
        classes_published=int(measured.classes.n_classes),
        checks=[CheckLine(c.requirement, c.passed, c.observed, c.target, c.detail) for c in checks],
        roles=roles,
        published_columns=[str(c) for c in measured.columns],
        class_sizes_before=_class_sizes(targets, quasi_identifiers),
        class_sizes_after=class_size_histogram(measured.classes),
        distinct_before={q: int(targets[q].nunique(dropna=False)) for q in quasi_identifiers},
        distinct_after={q: int(published[q].nunique(dropna=False)) for q in quasi_identifiers if q in published},
        levels=levels,
        heights=heights,
        transformation=_transformation(report.get("details")),
        utility=utility,
        composition=composition,
        attacks=attacks,
        attack_limits=limits,
    )
    path = release_html_path(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as temporary:
        temporary.write_text(render_release_html(facts), encoding="utf-8")
    return path
