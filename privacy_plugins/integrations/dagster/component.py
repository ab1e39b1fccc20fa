"""The release as a Dagster Component: a ``defs.yaml`` whose attributes are the release spec.

Scaffold one with ``dg scaffold defs privacy_plugins.integrations.dagster.PrivacyRelease my_release``
(it writes a working ``defs.yaml`` for the demo census); every key of a release
spec (``name``, ``source``, ``quasi_identifiers``, ``requirements``, ``destination`` …)
is an attribute. Each section is typed key by key (see
:mod:`~privacy_plugins.integrations.dagster.component_model`), so ``dg check yaml``
names the line and column of a misspelt key; the values are validated by
:class:`~privacy_plugins.release.ReleaseSpec` when the definitions load —
relative paths resolve against the component's folder. Four
more attributes configure the graph as :func:`build_release_assets` does:
``key_prefix``, ``expectation_suite`` (GX suite files), ``gx_context_root`` (a GX file context
keeping each suite check's result and Data Docs) and ``policy`` (floors in code,
e.g. ``{min_k: 10}``). The component's definitions are one release graph with its
resource and reader (see ``ReleaseAssets.definitions``).
"""

# No ``from __future__ import annotations``: Dagster's Model/Resolvable read the annotations at class creation.

from typing import Any

import dagster as dg

from privacy_plugins.core.anonymize.registry import DEFAULT_ALGORITHM
from privacy_plugins.integrations.dagster.assets import build_release_assets
from privacy_plugins.integrations.dagster.component_model import (
    AlgorithmModel,
    DestinationModel,
    HierarchyModel,
    HistoryModel,
    PolicyModel,
    PopulationModel,
    ReportModel,
    RequirementsModel,
    SourceModel,
    section,
    yaml_checked,
)
from privacy_plugins.release import ReleaseSpec

__all__ = ["PrivacyRelease", "PrivacyReleaseScaffolder"]

TEMPLATE: dict[str, Any] = {
    "name": "my_release",
    "source": {"generate": "census", "rows": 5000, "seed": 0},
    "identifiers": ["person_id"],
    "quasi_identifiers": ["age", "sex", "zip"],
    "sensitive_attributes": ["disease"],
    "insensitive": ["education", "marital_status", "occupation", "income"],  # every column needs a role
    "hierarchies": {
        "age": {"interval": {"widths": [5, 10, 20, 40]}},
        "sex": {"taxonomy": {"*": ["Female", "Male"]}},
        "zip": {"masking": {}},
    },
    "requirements": {"k": 5, "l": 2, "suppression_limit": 0.05},
    "algorithm": {"name": DEFAULT_ALGORITHM},
    "destination": {"duckdb": "release_output/my_release.duckdb", "table": "my_release"},
}


class PrivacyReleaseScaffolder(dg.Scaffolder[Any]):
    """``dg scaffold defs …PrivacyRelease NAME`` writes a ``defs.yaml`` with a working demo spec to edit."""

    def scaffold(self, request: dg.ScaffoldRequest[Any]) -> None:
        """Write the template, named after the new folder."""
        name = request.target_path.name
        attributes = {
            **TEMPLATE,
            "name": name,
            "destination": {"duckdb": f"release_output/{name}.duckdb", "table": name},
        }
        dg.scaffold_component(request, attributes)


@dg.scaffold_with(PrivacyReleaseScaffolder)
class PrivacyRelease(dg.Component, dg.Model, dg.Resolvable):
    """A privacy release (raw → privacy_diagnosis → anonymized_candidate → published, blocking checks) from YAML."""

    name: str
    source: SourceModel
    quasi_identifiers: list[str]
    requirements: RequirementsModel
    destination: DestinationModel
    identifiers: list[str] | None = None
    sensitive_attributes: list[str] | None = None
    hierarchies: dict[str, HierarchyModel] | str | None = None
    algorithm: AlgorithmModel | None = None
    report: ReportModel | None = None
    workdir: str | None = None
    history: HistoryModel | bool | None = None
    population: PopulationModel | None = None
    insensitive: list[str] | None = None
    unlisted_columns: str | None = None
    pseudonymize: dict[str, Any] | None = None  # checked by ReleaseSpec (the key: {env: NAME}, never the key)
    acknowledged_identifiers: list[str] | None = None
    key_prefix: str | None = None
    expectation_suite: list[str] | None = None
    gx_context_root: str | None = None
    policy: PolicyModel | None = None
    owners: list[str] | None = None
    tags: dict[str, str] | None = None

    @classmethod
    def get_model_cls(cls) -> Any:
        """Dagster's YAML model of these attributes, with a schema that points ``dg check yaml`` at the typo."""
        return yaml_checked(cls.model())

    def spec(self, base_dir: Any) -> ReleaseSpec:
        """The validated release spec (relative paths against ``base_dir``, the component's folder)."""
        data = {key: section(getattr(self, key)) for key in ReleaseSpec.KEYS if getattr(self, key) is not None}
        return ReleaseSpec.from_dict(data, base_dir=base_dir)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        """One release graph with its resource and reader."""
        suites = [context.path / suite for suite in self.expectation_suite or ()]
        release = build_release_assets(
            self.spec(context.path),
            key_prefix=self.key_prefix,
            policy=section(self.policy) if self.policy is not None else None,
            expectation_suite=suites or None,
            gx_context_root=context.path / self.gx_context_root if self.gx_context_root else None,
            owners=self.owners,
            tags=self.tags,
        )
        return release.definitions()
