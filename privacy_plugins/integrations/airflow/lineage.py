"""OpenLineage for the publish task: input and output datasets, the published schema, the release's numbers.

Airflow's OpenLineage provider calls ``PublishOperator.get_openlineage_facets_on_complete``
after a successful publish; this module builds what it returns. Datasets are named
from the same URIs as the task's asset (:mod:`.assets`), following OpenLineage's
naming (``postgres://host:port`` + ``db.schema.table``, ``file`` + path, …). The
custom run facet ``privacyRelease`` carries counts and measures only — rows in and
out, suppressed, classes, each requirement's measured value and target — never a
value of the table. Without the OpenLineage provider nothing here is imported.
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations._destination import dataset_name, destination_uri, published_schema, source_uri
from privacy_plugins.release import Publication, ReleaseSpec

__all__ = ["operator_lineage", "release_facet_fields"]

log = logging.getLogger(__name__)

_COUNTS = ("rows_in", "rows", "suppressed", "classes", "ncp", "holds", "measured", "targets", "met")


def release_facet_fields(numbers: dict[str, Any]) -> dict[str, Any]:
    """The counts and measures of a publication's ``numbers`` (numbers and booleans only)."""

    def numeric(value: Any) -> bool:
        return value is None or isinstance(value, int | float | bool)

    kept: dict[str, Any] = {}
    for key in _COUNTS:
        value = numbers.get(key)
        if isinstance(value, dict):
            kept[key] = {str(k): v for k, v in value.items() if numeric(v)}
        elif numeric(value) and key in numbers:
            kept[key] = value
    return kept


@cache
def _facet_class() -> type:
    """The ``privacyRelease`` run facet (an OpenLineage ``RunFacet``), defined once the client is importable."""
    import attrs
    from airflow.providers.common.compat.openlineage.facet import RunFacet

    # RunFacet is typed where the OpenLineage provider is installed, Any (a subclassing error) where it is not.
    @attrs.define
    class PrivacyReleaseRunFacet(RunFacet):  # type: ignore[misc,unused-ignore]
        """Counts and measures of a privacy release (no value of the table)."""

        numbers: dict[str, Any] = attrs.field(factory=dict)

        @staticmethod
        def _get_schema() -> str:
            return "https://pypi.org/project/privacy-plugins/#PrivacyReleaseRunFacet"

    return PrivacyReleaseRunFacet


def operator_lineage(spec: ReleaseSpec, publication: Publication) -> Any:
    """The ``OperatorLineage`` of a publish (needs Airflow's OpenLineage provider)."""
    from airflow.providers.common.compat.openlineage.facet import (
        Dataset,
        OutputDataset,
        OutputStatisticsOutputDatasetFacet,
        SchemaDatasetFacet,
        SchemaDatasetFacetFields,
    )
    from airflow.providers.openlineage.extractors import OperatorLineage

    inputs = []
    try:
        uri = source_uri(spec)
    except (ConfigurationError, ValueError) as exc:
        log.warning("OpenLineage: the source has no dataset name (%s)", exc)
        uri = None
    if uri is not None:
        namespace, name = dataset_name(uri)
        inputs.append(Dataset(namespace=namespace, name=name))
    outputs = []
    target = destination_uri(spec)
    if target is not None:
        namespace, name = dataset_name(target)
        fields = [SchemaDatasetFacetFields(name=column, type=kind) for column, kind in published_schema(spec)]
        outputs.append(
            OutputDataset(
                namespace=namespace,
                name=name,
                facets={"schema": SchemaDatasetFacet(fields=fields)},
                outputFacets={"outputStatistics": OutputStatisticsOutputDatasetFacet(rowCount=publication.rows)},
            )
        )
    facet = _facet_class()(numbers=release_facet_fields(publication.numbers))
    return OperatorLineage(inputs=inputs, outputs=outputs, run_facets={"privacyRelease": facet})
