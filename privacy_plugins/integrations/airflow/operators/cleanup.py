"""ReleaseCleanupOperator: the release's teardown — remove the run's working files however the run ended.

The publish task removes the run's working folder after publishing; a run that
stops earlier (requirements that cannot be met, a failed or short-circuited
check, a crash) would keep ``raw.parquet`` and the candidate under the temp
root and on the shared ``working_storage``. ``release_tasks`` adds this
operator as an Airflow 3 *teardown* (``as_teardown()``) after the five steps: it
runs once every step is done — succeeded, failed, skipped or upstream-failed —
and a failure of its own does not change the DAG run's state. It removes the
run's local folder (unless the spec sets ``workdir:``, which asks to keep it)
and the run's folder on the working storage.

A cleared task cannot reuse the removed files: clear the release's whole task
group (or the task with its upstream) to re-run it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.operators._base import ReleaseStepOperator
from privacy_plugins.integrations.airflow.storage import WorkingStorage

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["ReleaseCleanupOperator"]


class ReleaseCleanupOperator(ReleaseStepOperator):
    """Remove one DAG run's working files, local and shared (use as a teardown; ``release_tasks`` does).

    Args:
        spec_path, overrides, working_storage, working_storage_conn_id: the same as the release's
            other tasks (they locate the run's folders).
    """

    ui_color = "#f1f3f4"

    def execute(self, context: Context) -> dict[str, Any]:
        """Remove the folders of this DAG run; a no-op for folders already gone (e.g. after publishing)."""
        run = self.run_id(context)
        if run is None:
            self.log.warning("%s: not in a DAG run; no working files to remove", self.task_id)
            return {"run_id": None, "removed": False}
        try:
            spec = self.release_spec()
        except (ConfigurationError, FileNotFoundError) as exc:
            # No step could have read this spec either, so none wrote working files for it.
            self.log.warning("%s: the spec cannot be read (%s); no working files to locate", self.task_id, exc)
            return {"run_id": run, "removed": False}
        self._storage = WorkingStorage.configured(self.working_storage, self.working_storage_conn_id)
        self.end_run(spec, context, run)
        return {"run_id": run, "removed": True}
