"""The release history in the gate: read it, check a candidate against it, append the candidate when it publishes.

``check_step`` and ``publish_step`` call :func:`composition_checks` with the history read
from the destination (:func:`read_history`), the candidate's class signature (from the
classes the check measured where the rows are staged) and the run's targets — the raw
quasi-identifier and sensitive values the load step stored, as distinct combinations with
their counts. A failing composition check blocks the publish exactly like a failing model.
Publishing reads the history again under the destination's lock and hands the appended
history to the destination's swap (:func:`history_companions`), so the release and its
history entry are written together.

The threat model and the measure: ``docs/composition.md``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.history import COUNT, ReleaseHistory
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.errors import HistoryError, UnknownColumnError
from privacy_plugins.release.artifacts import Candidate, RequirementCheck
from privacy_plugins.release.destination.base import Companions, Destination, io_errors
from privacy_plugins.release.history_store import (
    appended_tables,
    history_from_tables,
    history_tables,
    signature_of_measure,
)
from privacy_plugins.release.progress import LOGGER
from privacy_plugins.release.staged_candidate import LOADED_FILE, SNAPSHOT_FILE

if TYPE_CHECKING:
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = [
    "adopt_published",
    "composition_check_names",
    "composition_checks",
    "history_companions",
    "read_history",
    "run_targets",
]

COMPOSITION_CHECK = "composition"
"""The name of the composition check (stable: orchestrators map checks by name)."""


def read_history(spec: ReleaseSpec, destination: Destination) -> ReleaseHistory:
    """The spec's history as the destination keeps it (empty before the first release).

    Raises:
        HistoryError: the destination holds a published table but no history (it was published before
            histories were kept, by another tool, or the history was deleted), one history table without
            the other, or a history changed outside privacy-plugins.
    """
    names = history_tables(spec)
    found = destination.read_companions(names.names)
    where = f"{spec.destination.describe()}"
    if len(found) == 1:
        raise HistoryError(
            f"the release history of {where} is incomplete ({', '.join(found)} without its other table); restore "
            "it from a backup, or start a new one with history: {name: …}"
        )
    if not found:
        if _holds_a_release(spec, destination):
            raise HistoryError(
                f"{where} holds a published release but no release history {names.classes!r}: it was published "
                "before histories were kept, by another tool, or its history was deleted; record what is published "
                f"now with `privacy-plugins history SPEC --adopt`, or set history: off to check releases alone"
            )
        return history_from_tables(spec, None)
    return history_from_tables(spec, found, published_sha256=destination.published_sha256())


def _holds_a_release(spec: ReleaseSpec, destination: Destination) -> bool:
    """Whether the destination holds a table with the spec's quasi-identifier and sensitive columns.

    A table without them (another table of the same name) published nothing about these people.
    """
    database_errors: tuple[type[BaseException], ...] = io_errors()
    try:
        return destination.measure_published(spec, "") is not None
    except UnknownColumnError:
        return False
    except database_errors as exc:  # a missing column is the database's error; any other error is raised
        if "column" not in str(exc).lower() or "connect" in str(exc).lower():
            raise
        LOGGER.info(
            "the table at %s lacks this release's columns: not one of its releases", spec.destination.describe()
        )
        return False


def run_targets(spec: ReleaseSpec, folder: Path) -> pd.DataFrame:
    """The run's raw QI and sensitive values as distinct combinations with their counts (``COUNT``)."""
    columns = [*spec.quasi_identifiers, *spec.sensitive_attributes]
    rows, snapshot = folder / LOADED_FILE, folder / SNAPSHOT_FILE
    if snapshot.is_file():
        frame = pd.read_parquet(snapshot, columns=[*columns, COUNT_COLUMN])
        weights = frame.pop(COUNT_COLUMN).to_numpy(dtype=np.int64)
    elif rows.is_file():
        frame = pd.read_parquet(rows, columns=columns)
        weights = np.ones(len(frame), dtype=np.int64)
    else:
        raise HistoryError(f"the run's loaded table is gone from {folder}; re-run the release from the load step")
    frame[COUNT] = weights
    return frame.groupby(columns, dropna=False, sort=False, observed=True)[COUNT].sum().reset_index()


def _l_by_attribute(spec: ReleaseSpec) -> dict[str, int]:
    """Per sensitive attribute with an l requirement, the largest l asked of it."""
    wanted: dict[str, int] = {}
    for model in spec.models():
        attribute = model.sensitive_attribute
        if attribute is not None and model.report_key == "l":
            wanted[str(attribute)] = max(wanted.get(str(attribute), 1), int(np.ceil(model.threshold)))
    return wanted


def composition_check_names(spec: ReleaseSpec) -> tuple[str, ...]:
    """The names of the composition checks ``check_step`` reports for ``spec`` (fixed before any run)."""
    if not spec.history.enabled:
        return ()
    return tuple(f"{COMPOSITION_CHECK}_{_name(attribute)}" for attribute in _l_by_attribute(spec))


def _name(attribute: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", attribute)


def composition_checks(
    spec: ReleaseSpec, history: ReleaseHistory, measured: StagedMeasure, targets: pd.DataFrame
) -> list[RequirementCheck]:
    """Per sensitive attribute with an l: no record's intersection over history and candidate has fewer values.

    No check when the spec keeps no history; passing checks naming 0 earlier releases before the first.
    """
    if not spec.history.enabled:
        return []
    earlier = len(history)
    signature = signature_of_measure(spec, measured)
    records = int(targets[COUNT].sum())
    checks: list[RequirementCheck] = []
    source = targets.loc[targets.index.repeat(targets[COUNT].to_numpy())].drop(columns=[COUNT]) if earlier else None
    hierarchies = spec.build_hierarchies(source) if source is not None else {}
    for attribute, l in _l_by_attribute(spec).items():
        if source is None:
            checks.append(_check(attribute, l, 0, 0, records, None))
            continue
        report = intersection_attack(
            source,
            [*history.signatures(), signature],
            quasi_identifiers=list(spec.quasi_identifiers),
            sensitive_attribute=attribute,
            hierarchies=hierarchies,
            l=l,
        )
        checks.append(_check(attribute, l, earlier, report.overall.below_l, report.records, report.overall.smallest))
    return checks


def _check(attribute: str, l: int, earlier: int, at_risk: int, records: int, smallest: int | None) -> RequirementCheck:
    where = f"with {earlier} earlier release{'s' if earlier != 1 else ''}"
    detail = (
        f"{at_risk} of {records} records left with fewer than {l} values of {attribute!s} by intersecting this "
        f"release {where}" + (f" (smallest intersection {smallest})" if smallest is not None else "")
    )
    return RequirementCheck(
        f"composition: {l} values of {attribute!s} {where}",
        at_risk == 0,
        float(at_risk),
        0.0,
        detail,
        name=f"{COMPOSITION_CHECK}_{_name(attribute)}",
    )


def history_companions(
    spec: ReleaseSpec,
    destination: Destination,
    history: ReleaseHistory,
    *,
    run_id: str,
    measured: StagedMeasure,
    candidate: Candidate,
) -> Companions | None:
    """The history with this release appended, as the tables the destination swaps in with it."""
    if not spec.history.enabled:
        return None
    anchored = destination.published_sha256() is not None and not candidate.linked_path
    transformation = {"levels": dict(candidate.levels)} if candidate.levels else {}
    return appended_tables(
        spec,
        history,
        run_id=run_id,
        classes=signature_of_measure(spec, measured),
        transformation={"algorithm": candidate.algorithm, **transformation},
        release_sha256=candidate.sha256 if anchored else "",
    )


def adopt_published(spec: ReleaseSpec, destination: Destination) -> ReleaseHistory:
    """Start the spec's history with the release published now (one published before histories were kept).

    Raises:
        HistoryError: the history exists already, or nothing is published.
    """
    from datetime import UTC, datetime

    names = history_tables(spec)
    if destination.read_companions(names.names):
        raise HistoryError(f"{spec.destination.describe()} already keeps the release history {names.classes!r}")
    measured = destination.measure_published(spec, "")
    if measured is None:
        raise HistoryError(f"nothing is published at {spec.destination.describe()}: there is no release to adopt")
    run_id = "adopted-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    tables = appended_tables(
        spec,
        history_from_tables(spec, None),
        run_id=run_id,
        classes=signature_of_measure(spec, measured),
        transformation={"adopted": True},
        release_sha256=destination.published_sha256() or "",
    )
    destination.write_companions(tables)
    return history_from_tables(spec, tables, published_sha256=destination.published_sha256())
