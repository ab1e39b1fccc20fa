"""The diagnosis step's reports: the core diagnosis of the loaded table (or its weighted snapshot), JSON and HTML."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.models import bind_hierarchies
from privacy_plugins.errors import ConfigurationError, PopulationMismatchError
from privacy_plugins.release.artifacts import DiagnosisSummary
from privacy_plugins.release.population_spec import population_table
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["write_diagnosis"]


def write_diagnosis(
    spec: ReleaseSpec,
    frame: pd.DataFrame,
    *,
    weights: str | None = None,
    on_progress: OnProgress | None = None,
    flagged: Sequence[Mapping[str, Any]] = (),
) -> DiagnosisSummary:
    """Diagnose ``frame`` against the spec, write the JSON and HTML reports, and sum them up.

    ``weights``: the column of record counts when ``frame`` is the weighted snapshot of a
    release inside the database; the reports are then those of the records it stands for.
    ``flagged``: the load step's direct-identifier findings, reported with the diagnosis.
    """
    requirements = spec.requirements
    sensitive = list(spec.sensitive_attributes)
    records = len(frame) if weights is None else int(frame[weights].sum())
    try:
        diagnosis = diagnose(
            frame,
            quasi_identifiers=list(spec.quasi_identifiers),
            sensitive_attributes=sensitive,
            k=min(requirements.k, records) if requirements.k is not None else None,
            l=requirements.l if sensitive else None,
            l_variant=requirements.l_variant,  # type: ignore[arg-type]
            c=requirements.c if requirements.l_variant == "recursive" else None,
            models=[  # the listed models that have borders (monotone over quasi-identifier subsets)
                spec.population_bound(
                    m.with_release_population(None if spec.population is None else spec.population.setting())
                )
                for m in bind_hierarchies(requirements.listed, spec.sensitive_hierarchies())
                if m.is_monotonic(with_suppression=False)
            ],
            suppression_limit=requirements.suppression_limit,
            progress=StepProgress("diagnose", "subsets measured", on_progress),
            weights=weights,
            population=None if spec.population is None else spec.population.model(lambda t: population_table(spec, t)),
        )
    except PopulationMismatchError as exc:  # a population that misses the sample: name the setting
        if spec.population is None:
            raise
        raise ConfigurationError(f"{spec.population.setting().given()}: {exc}") from None
    diagnosis = dataclasses.replace(diagnosis, direct_identifiers=tuple(dict(f) for f in flagged))
    if diagnosis.mode_reason is not None:
        LOGGER.info("diagnose: level-wise up to the borders: %s", diagnosis.mode_reason)
    spec.report.directory.mkdir(parents=True, exist_ok=True)
    spec.report.diagnosis_json.write_text(json.dumps(diagnosis.to_dict(), indent=2) + "\n", encoding="utf-8")
    from privacy_plugins.report import render  # matplotlib: loaded only when a report is written

    spec.report.diagnosis_html.write_text(render(diagnosis), encoding="utf-8")
    whole = diagnosis.all_quasi_identifiers
    return DiagnosisSummary(
        json_path=str(spec.report.diagnosis_json),
        html_path=str(spec.report.diagnosis_html),
        k=int(whole.k),
        sample_uniques=int(whole.sample_uniques),
        share_at_risk=float(whole.share_at_risk),
        suppression_needed=int(whole.suppression_needed) if whole.suppression_needed is not None else None,
        flagged_identifiers=[dict(f) for f in flagged],
    )
