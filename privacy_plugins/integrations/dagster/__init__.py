"""Dagster assets and blocking asset checks for a privacy release (``pip install 'privacy-plugins[dagster]'``).

``build_release_assets(spec)`` turns a :class:`~privacy_plugins.release.ReleaseSpec`
into ``raw → privacy_diagnosis → anonymized_candidate → published`` with one
blocking check per requirement (and per GX suite) on the candidate; the
destination is written only by ``published``, only when they pass.

Example:
    >>> from privacy_plugins.integrations.dagster import build_release_assets
    >>> release = build_release_assets("specs/demo_census.yaml")  # doctest: +SKIP
    >>> defs = release.definitions()  # doctest: +SKIP
"""

from privacy_plugins.integrations._compat import import_optional_dependency

import_optional_dependency("dagster", extra="dagster")

from privacy_plugins.integrations.dagster.assets import ASSET_NAMES, ReleaseAssets, build_release_assets  # noqa: E402
from privacy_plugins.integrations.dagster.component import PrivacyRelease  # noqa: E402
from privacy_plugins.integrations.dagster.metadata import class_size_table  # noqa: E402
from privacy_plugins.integrations.dagster.naming import (  # noqa: E402
    SEVERITIES,
    STRUCTURAL_CHECKS,
    requirement_check_names,
)
from privacy_plugins.integrations.dagster.policy import Policy  # noqa: E402
from privacy_plugins.integrations.dagster.pseudonym_resource import PseudonymKeyResource  # noqa: E402
from privacy_plugins.integrations.dagster.resources import PrivacyReleaseResource  # noqa: E402

__all__ = [
    "ASSET_NAMES",
    "SEVERITIES",
    "STRUCTURAL_CHECKS",
    "Policy",
    "PrivacyRelease",
    "PrivacyReleaseResource",
    "PseudonymKeyResource",
    "ReleaseAssets",
    "build_release_assets",
    "class_size_table",
    "requirement_check_names",
]
