"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point (``airflow providers list``).

This module imports nothing from Airflow: the providers manager calls it while
Airflow itself is starting.
"""

from __future__ import annotations

from typing import Any

from privacy_plugins._version import __version__

__all__ = ["get_provider_info"]

_ASSETS = "privacy_plugins.integrations.airflow.assets"
_DUCKDB_URIS = {
    "schemes": ["duckdb"],
    "handler": f"{_ASSETS}.sanitize_uri",
    "factory": f"{_ASSETS}.create_asset",
    "to_openlineage_converter": f"{_ASSETS}.convert_asset_to_openlineage",
}


def get_provider_info() -> dict[str, Any]:
    """The provider-info dict (``package-name`` must match the distribution name)."""
    return {
        "package-name": "privacy-plugins",
        "name": "Privacy Plugins",
        "description": (
            "Privacy release operators: diagnose re-identification risk, anonymize (k-anonymity, "
            "l-diversity, t-closeness, personalized privacy), gate on privacy checks and publish atomically."
        ),
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Privacy Plugins",
                "external-doc-url": "https://pypi.org/project/privacy-plugins/",
                "tags": ["software"],
            }
        ],
        "operators": [
            {
                "integration-name": "Privacy Plugins",
                "python-modules": [
                    "privacy_plugins.integrations.airflow.operators.load",
                    "privacy_plugins.integrations.airflow.operators.diagnosis",
                    "privacy_plugins.integrations.airflow.operators.anonymize",
                    "privacy_plugins.integrations.airflow.operators.privacy_check",
                    "privacy_plugins.integrations.airflow.operators.publish",
                    "privacy_plugins.integrations.airflow.operators.cleanup",
                ],
            }
        ],
        "hooks": [
            {"integration-name": "Privacy Plugins", "python-modules": ["privacy_plugins.integrations.airflow.hooks"]}
        ],
        "connection-types": [
            {
                "hook-class-name": "privacy_plugins.integrations.airflow.hooks.PrivacyHook",
                "connection-type": "privacy_duckdb",
            }
        ],
        # The outlet of a DuckDB destination: duckdb:///path/file.duckdb/schema/table (assets.py).
        "asset-uris": [_DUCKDB_URIS],
        "dataset-uris": [_DUCKDB_URIS],
    }
