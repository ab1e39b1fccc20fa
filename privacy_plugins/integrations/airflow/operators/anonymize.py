"""AnonymizeOperator: anonymize into a private candidate file (published only after the check)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow.sdk.exceptions import AirflowFailException

from privacy_plugins.errors import InfeasibleAnonymizationError
from privacy_plugins.integrations.airflow.operators._base import LoadedTableStepOperator
from privacy_plugins.release import Candidate, LoadedTable, ReleaseSpec, anonymize_step

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["AnonymizeOperator"]


class AnonymizeOperator(LoadedTableStepOperator):
    """Release step 3: ``anonymize_step``; pushes the ``Candidate`` dict (path, levels, row accounting).

    Requirements that no generalization can meet fail the task without retries
    (``AirflowFailException``); downstream check and publish never run.

    Args:
        loaded: the ``LoadOperator``'s output (``load.output``).
        spec_path, overrides: see ``ReleaseStepOperator``.
    """

    def run_step(self, spec: ReleaseSpec, context: Context) -> Candidate:
        """Anonymize, or fail with the reason the requirements cannot be met."""
        loaded = self.artifact(LoadedTable, self.loaded, name="loaded")
        try:
            candidate = anonymize_step(spec, loaded, run_id=self.run_id(context))
        except InfeasibleAnonymizationError as exc:
            raise AirflowFailException(
                f"release {spec.name!r}: requirements cannot be met: {exc}. Nothing will be published; "
                f"the diagnosis is in {spec.report.directory}"
            ) from exc
        self.log.info(
            "candidate: levels %s, %d of %d rows kept (%d suppressed), NCP %.3f",
            candidate.levels,
            candidate.rows_out,
            candidate.rows_in,
            candidate.suppressed,
            candidate.ncp,
        )
        return candidate
