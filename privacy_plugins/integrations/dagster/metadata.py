"""Asset and check metadata people want to look at — counts, measures and shapes, never raw values.

Every number comes from the release artifacts or from one core ``measure`` call
on the candidate. Class sizes are shown as a bucketed table (how many
classes and records of each size), so no quasi-identifier or sensitive value of
a small class can reach the Dagster UI, its event log or its alerts. Tables are
``MetadataValue.table`` with a ``TableSchema``: the UI renders and sorts them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import dagster as dg
import numpy as np

from privacy_plugins.core.measure import SensitiveReport, measure_sensitive
from privacy_plugins.integrations._destination import (
    destination_kind,
    destination_uri,
    published_schema,
    qualified_table_name,
    source_kind,
)
from privacy_plugins.release import (
    Candidate,
    DiagnosisSummary,
    LoadedTable,
    Publication,
    ReleaseSpec,
    RequirementCheck,
)
from privacy_plugins.release.published_numbers import measure_classes
from privacy_plugins.release.snapshot_path import pushdown_reason
from privacy_plugins.release.staged_candidate import staged_measure

__all__ = [
    "asset_kinds",
    "candidate_metadata",
    "check_metadata",
    "class_size_buckets",
    "class_size_table",
    "destination_metadata",
    "diagnosis_metadata",
    "loaded_metadata",
    "publication_metadata",
    "requirements_table",
]

log = logging.getLogger(__name__)

_EDGES = (2, 3, 5, 10, 20, 50, 100, 200, 500, 1_000, 10_000)


#: Columns of the class-size histogram: a bucket label (a size range, never a value), counts only.
CLASS_SIZE_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("class size", "string", description="range of equivalence-class sizes"),
        dg.TableColumn("classes", "int", description="classes whose size is in the range"),
        dg.TableColumn("records", "int", description="records in those classes"),
    ]
)
#: Columns of the requirements table: each requirement's measure on the data against its target.
REQUIREMENTS_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("requirement", "string", description="check name, e.g. k_anonymity"),
        dg.TableColumn("measured", "float", description="measured on the table (empty: unbounded)"),
        dg.TableColumn("target", "float", description="the spec's target"),
        dg.TableColumn("met", "bool"),
    ]
)


def class_size_buckets(histogram: Mapping[int, int]) -> list[tuple[str, int, int]]:
    """Class sizes grouped in buckets (1, 2, 3–4, 5–9, …): label, classes, records — so small tables stay readable."""
    buckets: dict[str, list[int]] = {}
    for size, count in sorted(histogram.items()):
        low = max([1, *(e for e in _EDGES if e <= size)])
        high = next((e - 1 for e in _EDGES if e > size), None)
        label = str(low) if high == low else f"{low}–{high}" if high is not None else f"≥ {low}"
        totals = buckets.setdefault(label, [0, 0])
        totals[0] += count
        totals[1] += size * count
    return [(label, classes, records) for label, (classes, records) in buckets.items()]


def class_size_table(histogram: Mapping[int, int]) -> dg.TableMetadataValue:
    """The bucketed class-size histogram as a Dagster table (the UI sorts and renders it; counts only)."""
    records = [
        dg.TableRecord({"class size": label, "classes": classes, "records": rows})
        for label, classes, rows in class_size_buckets(histogram)
    ]
    return dg.MetadataValue.table(records, schema=CLASS_SIZE_SCHEMA)


def requirements_table(numbers: Mapping[str, Any]) -> dg.TableMetadataValue:
    """Measured against target per requirement, from :func:`.published_numbers.numbers_from_results`."""
    measured, targets, met = numbers.get("measured", {}), numbers.get("targets", {}), numbers.get("met", {})
    records = []
    for name in sorted(measured):
        value, target = measured.get(name), targets.get(name)
        records.append(
            dg.TableRecord(
                {
                    "requirement": name,
                    "measured": None if value is None else float(value),  # None: unbounded (JSON has no inf)
                    "target": None if target is None else float(target),
                    "met": bool(met.get(name, numbers.get("holds", False))),
                }
            )
        )
    return dg.MetadataValue.table(records, schema=REQUIREMENTS_SCHEMA)


def loaded_metadata(loaded: LoadedTable) -> dict[str, Any]:
    """Rows and column names of the loaded table (identifiers already dropped)."""
    return {
        "dagster/row_count": loaded.rows,
        "columns": dg.MetadataValue.json(loaded.columns),
        "dropped identifier columns": dg.MetadataValue.json(loaded.dropped_identifiers),
    }


def diagnosis_metadata(summary: DiagnosisSummary) -> dict[str, Any]:
    """Headline risk of the raw table and where the full reports are."""
    metadata: dict[str, Any] = {
        "k (raw)": summary.k,
        "sample uniques (raw)": summary.sample_uniques,
        "share of records at risk": summary.share_at_risk,
        "report (HTML)": dg.MetadataValue.path(summary.html_path),
        "report (JSON)": dg.MetadataValue.path(summary.json_path),
    }
    if summary.suppression_needed is not None:
        metadata["rows to suppress for k"] = summary.suppression_needed
    metadata["direct identifiers flagged"] = dg.MetadataValue.json(summary.flagged_identifiers)  # counts only
    return metadata


def _accounting(spec: ReleaseSpec, candidate: Candidate, rows: int) -> dict[str, Any]:
    return {
        "dagster/row_count": rows,
        "rows in": candidate.rows_in,
        "rows published": candidate.rows_out,
        "rows suppressed": candidate.suppressed,
        "suppression budget": spec.suppression_budget(candidate.rows_in),
        "generalization levels": dg.MetadataValue.json(candidate.levels),
        "utility loss (NCP)": candidate.ncp,
    }


def _measured(spec: ReleaseSpec, numbers: dict[str, Any], sensitive: list[SensitiveReport]) -> dict[str, Any]:
    """``measured <check>`` per model, and each sensitive attribute's l (the spec's variant) and t."""
    variant = spec.requirements.l_variant if spec.requirements.l_variant != "recursive" else "distinct"
    metadata = {f"measured {name}": value for name, value in numbers["measured"].items() if value is not None}
    for report in sensitive:
        name = str(report.sensitive_attribute)
        metadata[f"measured {variant} l ({name})"] = getattr(report, f"{variant}_l")
        metadata[f"measured t ({name}, {report.t_distance})"] = report.t_closeness
    return metadata


def candidate_metadata(spec: ReleaseSpec, candidate: Candidate) -> dict[str, Any]:
    """Row accounting, utility loss, each model measured, l/t and class sizes of the candidate as it would be published.

    One body for every candidate: the spec's models and each sensitive attribute measured on the
    candidate's classes (:func:`_candidate_classes`); the requirements table and the ``measured <check>``
    entries are keyed by the check names the asset checks use.
    """
    measured = staged_measure(spec, candidate)  # where it is staged: one GROUP BY (a pair: its groups)
    rows, columns, classes = measured.rows, measured.columns, measured.classes
    sizes, counts = np.unique(classes.sizes, return_counts=True)
    histogram = {int(size): int(count) for size, count in zip(sizes, counts, strict=True)}
    numbers = measure_classes(spec, classes, rows=rows, columns=columns)
    along = spec.sensitive_hierarchies()  # the hierarchical t-distance measures along them
    sensitive = [
        measure_sensitive(classes, attribute, spec.requirements.t_distance, hierarchy=along.get(attribute))  # type: ignore[arg-type]
        for attribute in spec.sensitive_attributes
    ]
    staged = {"staged": candidate.staging_table or "Parquet working file"}
    return (
        _accounting(spec, candidate, rows)
        | {
            "measured k": int(sizes.min()) if len(sizes) else 0,
            "equivalence classes": int(classes.n_classes),
            "class sizes": class_size_table(histogram),
            "requirements": requirements_table(numbers),
        }
        | staged
        | _measured(spec, numbers, sensitive)
    )


def check_metadata(check: RequirementCheck, *, severity: str) -> dict[str, Any]:
    """One re-measured requirement: observed against target, and its GX severity."""
    metadata: dict[str, Any] = {"requirement": check.requirement, "detail": check.detail, "severity": severity}
    for key, value in (("observed", check.observed), ("target", check.target)):
        if value is not None and math.isfinite(value):  # an infinite c* means no c works; the detail says so
            metadata[key] = float(value)
    for name, measure in check.measures.items():  # e.g. each attack's risk, interval and rates (no value)
        if not isinstance(measure, dict):
            continue
        for field in ("risk", "attack_rate", "baseline_rate", "control_rate"):
            if isinstance(measure.get(field), (int, float)):
                metadata[f"{name} {field.replace('_', ' ')}"] = float(measure[field])
        bounds = measure.get("ci") or []
        if len(bounds) == 2 and all(isinstance(bound, (int, float)) for bound in bounds):
            metadata[f"{name} ci"] = dg.MetadataValue.json([float(bound) for bound in bounds])
    if check.measures:
        metadata["measures"] = dg.MetadataValue.json(check.measures)
    return metadata


def asset_kinds(spec: ReleaseSpec) -> dict[str, set[str]]:
    """The catalog kinds of each asset: where its data lives (``duckdb``, ``postgres``, ``parquet``, ``spark`` …).

    Declared when the graph is built, so a ``conn_id`` is not resolved: its kind is ``sql``.
    """
    source = source_kind(spec)
    staged = source if pushdown_reason(spec) is None and source not in ("csv", "parquet", "python") else "parquet"
    destination = "sql" if spec.destination.conn_id is not None else destination_kind(spec)
    return {
        "raw": {"python", source},
        "privacy_diagnosis": {"python", "html"},
        "anonymized_candidate": {"python", staged},
        "published": {"python", destination},
    }


def destination_metadata(spec: ReleaseSpec) -> dict[str, Any]:
    """``dagster/table_name``, ``dagster/column_schema`` and ``dagster/uri`` of the published table (no row read)."""
    try:
        uri = destination_uri(spec)
        columns = published_schema(spec)
        table_name = qualified_table_name(spec)
    except Exception as exc:  # published already: say what is missing, do not fail the asset
        log.warning("the published table's catalog metadata is missing (%s)", type(exc).__name__)
        return {}
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in columns])
    # The keys of Dagster's TableMetadataSet / UriMetadataSet (as dagster-duckdb and dagster-dbt set them).
    metadata: dict[str, Any] = {
        "dagster/table_name": dg.MetadataValue.text(table_name),
        "dagster/column_schema": dg.MetadataValue.table_schema(schema),
    }
    if uri is not None:
        metadata["dagster/uri"] = dg.MetadataValue.text(uri)
    return metadata


def publication_metadata(spec: ReleaseSpec, publication: Publication, warned: list[str]) -> dict[str, Any]:
    """Where the release went (a URL's password hidden), its rows, and the checks that only warned."""
    where = spec.destination.describe()
    if spec.destination.url is not None:
        from sqlalchemy.engine import make_url

        safe_url = make_url(spec.destination.url).render_as_string(hide_password=True)
        where = f"url:{safe_url}#{spec.destination.table}"
    return destination_metadata(spec) | {
        "dagster/row_count": publication.rows,
        "destination": where,
        "table": publication.table,
        "warn-only failures": dg.MetadataValue.json(warned),
        "release numbers": dg.MetadataValue.json(publication.numbers),  # measured vs targets, classes, NCP
        "requirements": requirements_table(publication.numbers),
    }
