"""LoadOperator: read the source, validate it against the spec, drop identifiers, store it privately."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privacy_plugins.integrations.airflow.operators._base import ReleaseStepOperator
from privacy_plugins.release import LoadedTable, ReleaseSpec, load_step

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["LoadOperator"]


class LoadOperator(ReleaseStepOperator):
    """Release step 1: ``load_step``; pushes the ``LoadedTable`` dict (a working-file path and counts).

    Example:
        ``load = LoadOperator(task_id="load", spec_path="specs/demo_census.yaml")``
    """

    def run_step(self, spec: ReleaseSpec, context: Context) -> LoadedTable:
        """Load and validate the source table."""
        loaded = load_step(spec, run_id=self.run_id(context))
        self.log.info("loaded %d rows, dropped identifiers %s", loaded.rows, loaded.dropped_identifiers)
        return loaded
