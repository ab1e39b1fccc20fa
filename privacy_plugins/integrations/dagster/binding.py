"""What every asset and check of one release graph shares: the spec, its keys, its resource and its artifacts.

Assets pass the release layer's small JSON artifacts (paths and numbers) through
files in the graph's private working folder, ``<workdir>/<key prefix>/``, not
through an IO manager: the candidate table itself never leaves that folder
until ``published`` copies it to the destination through ``publish_step``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import dagster as dg

from privacy_plugins.integrations.dagster.gx_suites import SuiteRef
from privacy_plugins.integrations.dagster.policy import Policy, tighten
from privacy_plugins.integrations.dagster.resources import PrivacyReleaseResource
from privacy_plugins.release import Candidate, DiagnosisSummary, LoadedTable, ReleaseSpec
from privacy_plugins.release.destinations import atomic_file

__all__ = ["ASSET_NAMES", "ReleaseAssets", "ReleaseBinding", "discard_artifact", "load_artifact", "save_artifact"]

ASSET_NAMES = ("raw", "privacy_diagnosis", "anonymized_candidate", "published")

A = TypeVar("A", LoadedTable, DiagnosisSummary, Candidate)


@dataclass(frozen=True)
class ReleaseBinding:
    """One release graph's fixed parts (all validated when the graph is defined)."""

    spec: ReleaseSpec
    prefix: tuple[str, ...]
    resource_key: str
    severities: Mapping[str, str]
    suites: tuple[SuiteRef, ...]
    policy: Policy

    @property
    def namespace(self) -> str:
        """The prefix as one name: the working sub-folder and the stem of op names."""
        return "__".join(self.prefix)

    def key(self, name: str) -> dg.AssetKey:
        """The asset key of ``raw``, ``privacy_diagnosis``, ``anonymized_candidate`` or ``published``."""
        return dg.AssetKey([*self.prefix, name])

    def release_spec(self, context: Any) -> ReleaseSpec:
        """The spec with the run's resource applied (destination, paths)."""
        resource: PrivacyReleaseResource = getattr(context.resources, self.resource_key)
        return resource.release_spec(self.spec, namespace=self.namespace)

    def gate_spec(self, context: Any) -> ReleaseSpec:
        """:meth:`release_spec` tightened by the factory's and the resource's policy: what the checks enforce."""
        resource: PrivacyReleaseResource = getattr(context.resources, self.resource_key)
        return resource.gate_spec(tighten(self.release_spec(context), self.policy))


@dataclass(frozen=True)
class ReleaseAssets:
    """One release graph: pass ``assets`` and ``asset_checks`` to ``Definitions`` or ``materialize``."""

    spec: ReleaseSpec
    key_prefix: tuple[str, ...]
    resource_key: str
    assets: tuple[dg.AssetsDefinition, ...]
    asset_checks: tuple[dg.AssetChecksDefinition, ...]
    check_names: tuple[str, ...]

    def key(self, name: str) -> dg.AssetKey:
        """The key of one of :data:`ASSET_NAMES`."""
        if name not in ASSET_NAMES:
            raise KeyError(f"{name!r} is not one of {list(ASSET_NAMES)}")
        return dg.AssetKey([*self.key_prefix, name])

    def definitions(self, resource: PrivacyReleaseResource | None = None) -> dg.Definitions:
        """``Definitions`` with this graph and its resource (default: the spec's own settings)."""
        resources = {self.resource_key: resource or PrivacyReleaseResource()}
        return dg.Definitions(assets=self.assets, asset_checks=self.asset_checks, resources=resources)


def save_artifact(spec: ReleaseSpec, name: str, artifact: LoadedTable | DiagnosisSummary | Candidate) -> None:
    """Write ``artifact.to_dict()`` to ``<workdir>/<name>.json`` (atomically)."""
    with atomic_file(spec.workdir / f"{name}.json") as temporary:
        temporary.write_text(json.dumps(artifact.to_dict(), indent=2) + "\n", encoding="utf-8")


def load_artifact(spec: ReleaseSpec, name: str, kind: type[A]) -> A:
    """Read an upstream asset's artifact; a clear failure when it was never materialized (or was discarded)."""
    path = spec.workdir / f"{name}.json"
    if not path.is_file():
        raise dg.Failure(
            description=f"release {spec.name!r}: no {name} in {str(spec.workdir)!r}; materialize {name} first",
            allow_retries=False,
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    return kind.from_dict(data)


def discard_artifact(spec: ReleaseSpec, name: str) -> None:
    """Forget an artifact, so a failed re-run leaves nothing a later ``published`` could pick up."""
    (spec.workdir / f"{name}.json").unlink(missing_ok=True)
