"""PrivacyDiagnosisOperator: diagnose the raw table and write the JSON/HTML reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from privacy_plugins.integrations.airflow.operators._base import LoadedTableStepOperator
from privacy_plugins.release import DiagnosisSummary, LoadedTable, ReleaseSpec, diagnose_step

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["PrivacyDiagnosisOperator"]


class PrivacyDiagnosisOperator(LoadedTableStepOperator):
    """Release step 2: ``diagnose_step``; pushes the ``DiagnosisSummary`` dict (report paths, headline numbers).

    Args:
        loaded: the ``LoadOperator``'s output (``load.output``).
        spec_path, overrides: see ``ReleaseStepOperator``.
    """

    def run_step(self, spec: ReleaseSpec, context: Context) -> DiagnosisSummary:
        """Diagnose; the reports stay in the spec's report folder even when the release fails later."""
        loaded = self.artifact(LoadedTable, self.loaded, name="loaded")
        summary = diagnose_step(spec, loaded, run_id=self.run_id(context))
        self.log.info(
            "k = %d, %d sample uniques, %.1f%% of records at risk; report: %s",
            summary.k,
            summary.sample_uniques,
            100 * summary.share_at_risk,
            summary.html_path,
        )
        self.store_reports(
            spec, context, {"diagnosis.html": Path(summary.html_path), "diagnosis.json": Path(summary.json_path)}
        )
        return summary
