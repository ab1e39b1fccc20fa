"""Import an optional framework with an install hint instead of a bare ImportError."""

from __future__ import annotations

import importlib
from types import ModuleType

from privacy_plugins.errors import MissingDependencyError

__all__ = ["import_optional_dependency"]


def import_optional_dependency(module: str, *, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"privacy_plugins.integrations.{extra} requires {module!r}. "
            f"Install it with: pip install 'privacy-plugins[{extra}]'"
        ) from exc
