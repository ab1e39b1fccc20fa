"""Dagster code location of the demo releases: ``dagster dev -m dagster_defs``."""

from dagster_defs.definitions import defs

__all__ = ["defs"]
