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

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from privacy_plugins.core.history import COUNT, ReleaseHistory
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import domain_break_records
from privacy_plugins.core.history_signatures import signature_breaks
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.errors import HistoryError
from privacy_plugins.release.artifacts import Candidate, CheckResult, RequirementCheck
from privacy_plugins.release.destination.base import LINKED_PARTS, Companions, Destination
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
    "composition_key",
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
    found = destination.read_companions(names.names)  # DestinationBusy while another process writes the file
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
    Asked of the table's schema (no row is read); any error reading it is raised.
    """
    columns = destination.published_columns()
    if columns is None:  # a two-table release: the columns of its two parts
        pair = destination.read(LINKED_PARTS)
        if pair is None:
            return False
        columns = [str(c) for part in pair.values() for c in part.columns]
    missing = [str(c) for c in [*spec.quasi_identifiers, *spec.sensitive_attributes] if str(c) not in columns]
    if missing:
        LOGGER.info(
            "the table at %s lacks %d of this release's columns: not one of its releases",
            spec.destination.describe(),
            len(missing),
        )
        return False
    return True


def _published_pair(spec: ReleaseSpec, destination: Destination) -> StagedMeasure | None:
    """A two-table release published at the destination, measured by its groups (``None``: none)."""
    from privacy_plugins.release.staging import measure_pair

    pair = destination.read(LINKED_PARTS)
    return None if pair is None else measure_pair(spec, pair["qit"], pair["st"], "")


def run_targets(spec: ReleaseSpec, folder: Path) -> pd.DataFrame:
    """The run's raw QI and sensitive values as distinct combinations with their counts (``COUNT``).

    The engine's weighted snapshot is such a table already; the rows of the in-memory path are
    grouped by DuckDB over the run's Parquet file, so only distinct combinations reach pandas
    (typed as pandas reads the file).
    """
    read = [*spec.quasi_identifiers, *spec.sensitive_attributes, *(str(c) for m in spec.models() for c in m.columns)]
    columns = list(dict.fromkeys(read))  # a bound column too: a personalized model reads it
    rows, snapshot = folder / LOADED_FILE, folder / SNAPSHOT_FILE
    if snapshot.is_file():  # the engine's GROUP BY already: a few distinct rows, regrouped in pandas
        frame = pd.read_parquet(snapshot, columns=[*columns, COUNT_COLUMN])
        frame[COUNT] = frame.pop(COUNT_COLUMN).astype("int64")
        return frame.groupby(columns, dropna=False, sort=False, observed=True)[COUNT].sum().reset_index()
    if rows.is_file():
        return _grouped(rows, [str(c) for c in columns], None)
    raise HistoryError(f"the run's loaded table is gone from {folder}; re-run the release from the load step")


def _grouped(path: Path, columns: list[str], weight: str | None) -> pd.DataFrame:
    """``SELECT columns, SUM(weight) … GROUP BY columns`` on a Parquet file of the run, by DuckDB."""
    import duckdb
    import pyarrow.parquet as pq

    def name(column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    schema = pq.read_schema(path)  # opened and closed: the run's folder is removed after the run
    missing = [column for column in [*columns, *([weight] if weight else [])] if column not in schema.names]
    if missing:
        raise HistoryError(f"the run's loaded table lacks column(s) {missing!r}; re-run the release from the load step")
    typed = schema.empty_table().select(columns).to_pandas()  # the dtypes pandas reads the file with
    keys = ", ".join(map(name, columns))
    count = f"SUM({name(weight)})" if weight else "COUNT(*)"
    source = "'" + str(path).replace("'", "''") + "'"
    with duckdb.connect() as connection:
        grouped = connection.execute(
            f"SELECT {keys}, CAST({count} AS BIGINT) AS {name(COUNT)} FROM read_parquet({source}) "
            f"GROUP BY {keys} ORDER BY {keys}"
        ).df()
    for column in columns:
        dtype = typed[column].dtype
        if isinstance(dtype, pd.CategoricalDtype):  # its categories are in the file's dictionaries, not the schema
            grouped[column] = grouped[column].astype(pd.CategoricalDtype(ordered=dtype.ordered))
        elif grouped[column].dtype != dtype:
            grouped[column] = grouped[column].astype(dtype)
    return grouped


def composition_check_names(spec: ReleaseSpec) -> tuple[str, ...]:
    """The names of the composition checks ``check_step`` reports for ``spec`` (fixed before any run)."""
    return (COMPOSITION_CHECK,) if spec.history.enabled else ()


def composition_checks(
    spec: ReleaseSpec, history: ReleaseHistory, measured: StagedMeasure, targets: pd.DataFrame
) -> list[RequirementCheck]:
    """The candidate against the history: every record's intersection must still meet each sensitive model.

    One check (``composition``) when the spec keeps a history, none otherwise; the measure is
    :func:`~privacy_plugins.core.history_check.composition_check` on the candidate's class signature.
    """
    if not spec.history.enabled:
        return []
    hierarchies = spec.build_hierarchies(targets) if len(history) else {}
    result = composition_check(
        targets,
        signature_of_measure(spec, measured),
        history,
        spec.models(),
        hierarchies=hierarchies,
        count_column=COUNT,
    )
    earlier = f"{len(history)} earlier release{'s' if len(history) != 1 else ''}"
    passed, at_risk, detail = result.passed, result.records_at_risk, str(result)
    if spec.history.keep_signatures and len(history):  # deletions: the last release's signatures are kept
        signature = signature_of_measure(spec, measured)
        broken = signature_breaks(
            history.releases[-1].classes, signature, spec.quasi_identifiers, spec.sensitive_attributes, hierarchies
        )
        records = int(signature.loc[broken, COUNT].sum()) if COUNT in signature else int(broken.sum())
        if records:
            passed, at_risk = False, at_risk + records
            detail += (
                f"; {records} records in classes that drop a value of an earlier class they overlap "
                "(history.keep_signatures)"
            )
    if spec.history.protect_domain and len(history):  # every point of the QI domain, not only present records
        signature = signature_of_measure(spec, measured)
        records = domain_break_records(signature, history, spec.models(), spec.quasi_identifiers, hierarchies)
        if records:
            passed, at_risk = False, at_risk + records
            detail += (
                f"; {records} records in classes that leave a point of their box (someone not in this source) "
                "fewer values than l (history.protect: domain)"
            )
    if len(history):  # what was judged, whichever way history.protect was set or resolved (auto)
        detail += "; judged: " + (
            "every point of the QI domain the classes cover (history.protect: domain)"
            if spec.history.protect_domain
            else "this source's records (history.protect: records)"
        )
    return [
        RequirementCheck(f"composition with {earlier}", passed, float(at_risk), 0.0, detail, name=COMPOSITION_CHECK)
    ]


def composition_key(spec: ReleaseSpec, history: ReleaseHistory, measured: StagedMeasure) -> str:
    """What a composition verdict of this run depends on: every kept release, the candidate, the models.

    The run's targets are fixed per run (its loaded table, checked by digest). A release published in
    between (or one dropped by ``keep_releases``) changes the key; so does another candidate, a
    tightened spec or other hierarchies. Each release is named by its sequence, run, time and a
    hash of its class signature (the history read verified those against its digests and chain).
    """
    releases = [
        [
            release.sequence,
            release.run_id,
            release.published_at,
            release.release_sha256,
            int(pd.util.hash_pandas_object(release.classes, index=False).sum()),
        ]
        for release in history.releases
    ]
    payload = {
        "history": history.name,
        "releases": releases,
        "candidate": measured.digest,
        "models": [str(model) for model in spec.models()],
        "hierarchies": spec.hierarchies,  # coverage reads them (a folder: by its path)
        "keep_signatures": spec.history.keep_signatures,
        "protect": spec.history.protect,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def cached_composition(
    spec: ReleaseSpec, history: ReleaseHistory, measured: StagedMeasure, check: CheckResult
) -> list[RequirementCheck] | None:
    """The check step's composition verdict when nothing it depends on changed since (``None``: re-run it).

    ``history`` is read under the destination's lock; a release published since the check changes the key.
    """
    if not spec.history.enabled or not check.composition_key:
        return None
    if composition_key(spec, history, measured) != check.composition_key:
        LOGGER.info("publish: the release history changed since the check; the composition check runs again")
        return None
    kept = [c for c in check.checks if c.name == COMPOSITION_CHECK]
    return kept or None


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
        release_sha256=(candidate.sha256 or measured.digest) if anchored else "",  # a staged Spark folder: digest
        rows=measured.rows,
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
    measured = destination.measure_published(spec, "") or _published_pair(spec, destination)
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
        rows=measured.rows,
    )
    destination.write_companions(tables)
    return history_from_tables(spec, tables, published_sha256=destination.published_sha256())
