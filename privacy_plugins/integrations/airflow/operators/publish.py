"""PublishOperator: the core's atomic publish, only for a candidate whose check passed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset, AssetAlias

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.assets import destination_uri
from privacy_plugins.integrations.airflow.exceptions import PrivacyCheckFailed
from privacy_plugins.integrations.airflow.operators._base import ReleaseStepOperator
from privacy_plugins.release import Candidate, CheckResult, Publication, ReleaseBlocked, ReleaseSpec, publish_step
from privacy_plugins.release.release_report import release_html_path

if TYPE_CHECKING:
    from airflow.sdk import Context, XComArg

__all__ = ["PublishOperator", "release_alias"]


def release_alias(dag_id: str, task_id: str) -> AssetAlias:
    """The asset alias a publish task declares: ``privacy-release/<dag_id>/<task_id>``."""
    return AssetAlias(name=f"privacy-release/{dag_id}/{task_id}", group="privacy")


class PublishOperator(ReleaseStepOperator):
    """Release step 5: ``publish_step``; pushes the ``Publication`` dict (destination, table, rows).

    Its outlet is derived from the destination (see :mod:`..assets`): the task declares the
    asset alias :func:`release_alias` and, once published, adds to it an event of the asset
    of the table it wrote (``postgres://host:5432/db/public/table``, ``duckdb:///file/main/table``,
    ``file:///folder/table.parquet``), so a DAG with ``schedule=[Asset("duckdb:///…")]`` runs on
    each release. Extra ``outlets=[Asset(...)]`` get an event too. Each event's ``extra`` is the
    publication dict (numbers only). ``get_openlineage_facets_on_complete`` reports the source and
    destination datasets, the published schema and the release's counts (:mod:`..lineage`).

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
        self.release_alias = release_alias(self.dag_id, self.task_id)
        self.outlets = [*self.outlets, self.release_alias]
        self._published: tuple[ReleaseSpec, Publication] | None = None

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
        self._published = (spec, publication)
        summary = json.dumps(publication.to_dict(), indent=2) + "\n"
        reports: dict[str, Path | bytes] = {"release.json": summary.encode("utf-8")}
        if release_html_path(spec).is_file():  # not rewritten by a re-run that found the release published
            reports["release.html"] = release_html_path(spec)
        self.store_reports(spec, context, reports)
        outlet_events = context.get("outlet_events")
        if outlet_events is not None:
            extra = publication.to_dict()
            for outlet in (o for o in self.outlets if isinstance(o, Asset)):
                outlet_events[outlet].extra = extra
            try:
                uri = destination_uri(spec)
                asset = None if uri is None else Asset(uri=uri)  # Airflow's URI rules (and handlers) apply
            except (ConfigurationError, ValueError) as exc:  # published already: name the gap, do not fail
                self.log.warning("the destination has no asset URI (%s); no derived asset event", exc)
                asset = None
            if asset is not None:
                outlet_events[self.release_alias].add(asset, extra=extra)
                self.log.info("asset event: %s", asset.uri)
        return publication

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """OpenLineage (Airflow's OpenLineage provider calls this after a successful run); ``None`` before one."""
        if self._published is None:
            return None
        from privacy_plugins.integrations.airflow.connections import airflow_resolver
        from privacy_plugins.integrations.airflow.lineage import operator_lineage
        from privacy_plugins.release.connections import connection_resolver

        with connection_resolver(airflow_resolver):
            return operator_lineage(*self._published)
