"""Publish receipts: a publish step re-run for a run that already published succeeds, and says so.

A publish task can be run again after it published: a worker killed after the
commit (its task retried), Airflow's *Clear*, a Dagster re-execution. By then the
run's working folder is gone (removed after publishing), so the candidate cannot
be read again. The publish step therefore leaves a receipt in the report folder
(``publish_receipt.json``; numbers and names only, never a value):

- just before it writes to the destination: the run id, the digest of the
  checked candidate (``CheckResult.candidate_sha256``), the destination, and
  what the published table will measure — its columns, rows, classes and every
  requirement's measure (:func:`~privacy_plugins.release.published_numbers.measure_published`);
- after the commit, the same with ``"state": "published"``.

A re-run whose artifacts name that run and that digest reads what the
destination holds now and measures it the same way: when it matches the receipt
(whichever state: the worker may have died between the commit and the receipt's
update) the step returns the :class:`~privacy_plugins.release.steps.Publication`
again, logs "already published by run …" and publishes nothing. The receipt is
consulted only when the candidate file is gone: while it is there (a retry after a
failed write) the step publishes it again, re-measured, rather than trust a receipt
whose commit may never have happened. Otherwise — a
run that never published, or whose release was since replaced — a run whose
folder is gone fails as before: re-run the release from the load step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_plugins.errors import PrivacyPluginsError
from privacy_plugins.release.destination.files import atomic_file
from privacy_plugins.release.progress import LOGGER
from privacy_plugins.release.published_numbers import drift, measure_published
from privacy_plugins.release.spec import ReleaseSpec

if TYPE_CHECKING:
    from privacy_plugins.release.artifacts import Candidate, CheckResult, Publication

__all__ = ["RECEIPT_FILE", "already_published", "write_receipt"]

RECEIPT_FILE = "publish_receipt.json"


def write_receipt(
    spec: ReleaseSpec, check: CheckResult, numbers: dict[str, Any], columns: list[str], state: str
) -> None:
    """Record (atomically) that ``check``'s run is publishing (``state="publishing"``) or has published."""
    receipt = {
        "state": state,
        "run_id": check.run_id,
        "spec_name": spec.name,
        "source_fingerprint": spec.source_fingerprint,
        "candidate_digest": check.candidate_sha256,
        "destination": spec.destination.describe(),
        "columns": [str(c) for c in columns],
        "numbers": numbers,
    }
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    with atomic_file(spec.report.directory / RECEIPT_FILE) as temporary:
        temporary.write_text(json.dumps(receipt, indent=2) + "\n", encoding="utf-8")


def _receipt(spec: ReleaseSpec) -> dict[str, Any] | None:
    path = spec.report.directory / RECEIPT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() and not path.is_symlink() else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def already_published(
    spec: ReleaseSpec, candidate: Candidate, check: CheckResult, run_id: str | None
) -> Publication | None:
    """The publication of these artifacts' run if the destination still holds just what it published, else ``None``."""
    if not candidate.staging_table and Path(candidate.path).is_file():
        return None  # the candidate is still here: publish it (again, re-measured); a receipt proves no commit
    receipt = _receipt(spec)
    run = check.run_id
    if (
        receipt is None
        or not check.passed
        or (run_id is not None and run_id != run)
        or candidate.run_id != run
        or check.candidate_path != candidate.path
        or receipt.get("run_id") != run
        or receipt.get("spec_name") != spec.name
        or check.spec_name != spec.name
        or receipt.get("source_fingerprint") != spec.source_fingerprint
        or check.source_fingerprint != spec.source_fingerprint
        or receipt.get("candidate_digest") != check.candidate_sha256
        or receipt.get("destination") != spec.destination.describe()
    ):
        return None
    from privacy_plugins.release.artifacts import Publication

    numbers = receipt.get("numbers")
    try:
        now = _measured_now(spec, candidate)
    except (PrivacyPluginsError, OSError):
        return None
    if now is None or not isinstance(numbers, dict) or now[0] != receipt.get("columns") or drift(numbers, now[1]):
        return None
    if receipt.get("state") != "published":
        write_receipt(spec, check, numbers, list(receipt["columns"]), "published")  # the commit did happen
    LOGGER.warning(
        "publish: already published by run %s to %s; nothing published again", run, spec.destination.describe()
    )
    return Publication(
        destination=spec.destination.describe(),
        table=spec.destination.table,
        rows=int(now[1]["rows"]),
        numbers=numbers,
        already_published_by=run,
    )


def _measured_now(spec: ReleaseSpec, candidate: Candidate) -> tuple[list[str], dict[str, Any]] | None:
    """The columns and numbers of what the destination holds now (``None``: nothing), measured as at publishing."""
    if not candidate.linked_path:
        return _measured_in_database(spec, candidate.staging_table)  # measured where it is, as publishing did
    from privacy_plugins.release.linked import read_release  # a two-table release: by its groups

    table = read_release(spec)
    if table is None:
        return None
    return [str(c) for c in table.columns], measure_published(spec, table)


def _measured_in_database(spec: ReleaseSpec, staging_table: str) -> tuple[list[str], dict[str, Any]] | None:
    """The published table measured where it is (DuckDB, a SQL database, a Parquet file through DuckDB).

    ``None`` also while the run's ``staging_table`` exists: the swap renames it in the commit, so it
    was not published (whatever the destination measures now).
    """
    from privacy_plugins.release.destination import open_destination
    from privacy_plugins.release.published_numbers import measure_classes

    measured = open_destination(spec.destination).measure_published(spec, staging_table)
    if measured is None:
        return None
    numbers = measure_classes(spec, measured.classes, rows=measured.rows, columns=measured.columns)
    return [str(c) for c in measured.columns], numbers
