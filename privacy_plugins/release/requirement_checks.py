"""The checks of a staged candidate: no identifier, row accounting, suppression limit, then every model.

One body for every candidate, whatever algorithm made it and wherever it is staged: the
checks read the :class:`~privacy_plugins.release.staging.StagedMeasure` (columns, rows,
classes by one ``GROUP BY`` where the rows are, or a two-table pair's groups) and the
candidate's accounting. Marked rows (``suppressed_rows: mark``) are published, so they
are counted among the staged rows and measured as the class they form.
"""

from __future__ import annotations

from collections.abc import Container, Hashable
from pathlib import Path

from privacy_plugins.core.models import PrivacyModel, check_name
from privacy_plugins.core.models.base import MeasuredResult, ModelResult
from privacy_plugins.core.results import ClassViolations
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.artifacts import Candidate, RequirementCheck
from privacy_plugins.release.identifier_gate import identifier_check
from privacy_plugins.release.judged_tables import JudgedTables
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.staging import StagedMeasure

__all__ = ["accounting_checks", "candidate_checks", "model_checks"]


def candidate_checks(
    spec: ReleaseSpec,
    measured: StagedMeasure,
    candidate: Candidate,
    loaded_rows: int,
    tables: JudgedTables | None = None,
) -> list[RequirementCheck]:
    """Identifiers, row accounting, suppression limit and every model, on the staged rows' classes.

    A model judged on tables (``judged_on_tables``: the attacks) gets the original and the candidate
    as rows from ``tables``; without them it is an error, never a silent pass.
    """
    marked = spec.algorithm.option("suppressed_rows") == "mark"
    expected_rows = candidate.rows_out + (candidate.suppressed if marked else 0)
    accounted = (
        loaded_rows == candidate.rows_in == candidate.rows_out + candidate.suppressed + candidate.out_of_scope
        and measured.rows == expected_rows
    )
    published = f"{candidate.rows_out} published" + (f" + {candidate.suppressed} marked" if marked else "")
    joined = "; each QIT row joins exactly one ST group" if len(measured.written) > 1 else ""
    columns = [c for part in measured.written.values() for c in part]
    checks = accounting_checks(
        spec,
        candidate,
        columns=columns,
        loaded_rows=loaded_rows,
        accounted=accounted,
        observed_rows=measured.rows,
        expected_rows=expected_rows,
        where=f"{measured.rows} rows staged ({published} expected){joined}",
    )
    checks.append(identifier_check(spec, candidate))  # a flagged QI left unchanged (issue 27)
    models = spec.models()
    return checks + model_checks(models, [_evaluate(spec, model, measured, tables, candidate) for model in models])


def _evaluate(
    spec: ReleaseSpec,
    model: PrivacyModel,
    measured: StagedMeasure,
    tables: JudgedTables | None,
    candidate: Candidate | None = None,
) -> ModelResult:
    subset = model.research_subset_column
    if subset is not None and str(subset) not in measured.columns and candidate is not None:
        return verified_on_the_population(model, candidate)  # issue 30: the candidate holds the subset only
    if not model.judged_on_tables:
        return model.evaluate(measured.classes)
    if tables is None:
        raise ConfigurationError(f"{model} is judged on the original and the candidate, which this check was not given")
    original, original_counts, release, release_counts = tables()  # distinct rows with their counts
    result = model.evaluate_tables(
        original,
        release,
        quasi_identifiers=list(spec.quasi_identifiers),
        hierarchies=spec.build_hierarchies(original),
        original_counts=original_counts,
        release_counts=release_counts,
    )
    assert result is not None  # judged_on_tables promises a verdict
    return result


def accounting_checks(
    spec: ReleaseSpec,
    candidate: Candidate,
    *,
    columns: Container[Hashable],
    loaded_rows: int,
    accounted: bool,
    observed_rows: int,
    expected_rows: int,
    where: str,
) -> list[RequirementCheck]:
    """The checks before the models: no identifier in ``columns``, row accounting, suppression limit.

    ``accounted`` is the caller's row accounting verdict, ``where`` its account of
    the rows it found (after the loaded/in/kept/suppressed counts in the detail).
    """
    leaked = [c for c in spec.identifiers if c in columns]
    budget = spec.suppression_budget(candidate.rows_in)
    return [
        RequirementCheck(
            "no identifiers",
            not leaked,
            None,
            None,
            f"identifier columns present: {leaked}" if leaked else "no identifier column in the candidate",
            name="no_identifiers",
        ),
        RequirementCheck(
            "row accounting",
            accounted,
            float(observed_rows),
            float(expected_rows),
            f"{loaded_rows} loaded, {candidate.rows_in} in = {candidate.rows_out} kept + "
            f"{candidate.suppressed} suppressed"
            + (f" + {candidate.out_of_scope} out of scope" if candidate.out_of_scope else "")
            + f"; {where}",
            name="row_accounting",
        ),
        RequirementCheck(
            "suppression limit",
            candidate.suppressed <= budget,
            float(candidate.suppressed),
            float(budget),
            f"{candidate.suppressed} suppressed, at most {budget} allowed",
            name="suppression_limit",
        ),
    ]


def model_checks(models: list[PrivacyModel], results: list[ModelResult]) -> list[RequirementCheck]:
    """One check per model from its measured result (however it was measured: records or GROUP BY)."""
    checks = []
    for model, result in zip(models, results, strict=True):
        detail = "holds" if result.passed else model.describe_gap(result.observed)
        checks.append(
            RequirementCheck(
                str(model),
                result.passed,
                result.observed,
                result.threshold,
                f"{detail}; {result.violations.classes} classes ({result.violations.records} records) in violation",
                name=check_name(model),
                measures=dict(result.measures) if isinstance(result, MeasuredResult) else {},
            )
        )
    return checks


def verified_on_the_population(model: PrivacyModel, candidate: Candidate) -> ModelResult:
    """A research-subset model's verdict from the core's re-check of the whole generalized table (issue 30).

    δ-presence is measured on the population (the whole table, generalized and suppressed as
    published), while the staged candidate holds the research subset alone: the anonymize step's
    ``verify`` measured it there (anonymization.json), and its result is the check. Missing, it fails.
    """
    import json

    report = json.loads(Path(candidate.report_path).read_text(encoding="utf-8"))
    for found in report.get("models", []):
        if found.get("model") == str(model):
            violations = found["violations"]
            return ModelResult(
                model=str(model),
                passed=bool(found["passed"]),
                observed=float(found["observed"]),
                threshold=float(found["threshold"]),
                violations=ClassViolations(
                    target=str(violations["target"]),
                    classes=int(violations["classes"]),
                    records=int(violations["records"]),
                    size_histogram={int(k): int(v) for k, v in violations["size_histogram"].items()},
                ),
            )
    raise ConfigurationError(f"{model} was not measured on the population by the anonymize step; nothing is published")
