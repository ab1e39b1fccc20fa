"""The provider registers the Airflow way: the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytest.importorskip("airflow")


def test_entry_point_returns_valid_provider_info() -> None:
    (entry_point,) = [e for e in entry_points(group="apache_airflow_provider") if e.value.startswith("privacy_plugins")]
    info = entry_point.load()()
    assert info["package-name"] == "privacy-plugins"  # must equal the distribution name
    assert info["versions"] and info["operators"][0]["python-modules"]


def test_airflow_lists_the_provider() -> None:
    from airflow.providers_manager import ProvidersManager

    providers = ProvidersManager().providers  # validates the info against Airflow's schema
    assert "privacy-plugins" in providers
    modules = providers["privacy-plugins"].data["operators"][0]["python-modules"]
    for module in modules:  # every module listed in the provider info imports
        __import__(module)
