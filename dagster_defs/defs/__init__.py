"""Releases scaffolded with ``dg scaffold defs privacy_plugins.integrations.dagster.PrivacyRelease NAME``."""
