"""The package version (single source, read by pyproject)."""

__version__ = "0.1.0"
