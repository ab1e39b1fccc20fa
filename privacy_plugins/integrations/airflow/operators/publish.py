"""PublishOperator: the core's atomic publish, only for a candidate whose check passed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset

from privacy_plugins.integrations.airflow.exceptions import PrivacyCheckFailed
from privacy_plugins.integrations.airflow.operators._base import ReleaseStepOperator
from privacy_plugins.release import Candidate, CheckResult, Publication, ReleaseBlocked, ReleaseSpec, publish_step

if TYPE_CHECKING:
    from airflow.sdk import Context, XComArg

__all__ = ["PublishOperator"]


class PublishOperator(ReleaseStepOperator):
    """Release step 5: ``publish_step``; pushes the ``Publication`` dict (destination, table, rows).

    Declare ``outlets=[Asset(...)]`` to schedule downstream DAGs on the release;
    each asset event carries the publication dict as its ``extra``.

    Args:
        candidate: the ``AnonymizeOperator``'s output.
        check: the ``PrivacyCheckOperator``'s output; a failed check raises ``PrivacyCheckFailed``.
        spec_path, overrides: see ``ReleaseStepOperator``; ``overrides={"destination": {...}}`` retargets it.
    """

    template_fields: Sequence[str] = (*ReleaseStepOperator.template_fields, "candidate", "check")

    def __init__(
        self, *, candidate: Mapping[str, Any] | XComArg, check: Mapping[str, Any] | XComArg, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.check = check

    def run_step(self, spec: ReleaseSpec, context: Context) -> Publication:
        """Publish atomically (the destination keeps its old table on any failure)."""
        candidate = self.artifact(Candidate, self.candidate, name="candidate")
        check = self.artifact(CheckResult, self.check, name="check")
        try:
            publication = publish_step(spec, candidate, check, run_id=self.run_id(context))
        except ReleaseBlocked as exc:
            raise PrivacyCheckFailed(str(exc), check=check.to_dict()) from exc
        self.end_run(spec, context, candidate.run_id)
        self.log.info("published %d rows to %s", publication.rows, publication.destination)
        outlet_events = context.get("outlet_events")
        if outlet_events is not None:
            for outlet in (o for o in self.outlets if isinstance(o, Asset)):
                outlet_events[outlet].extra = publication.to_dict()
        return publication
