"""numba, optional: the one place that imports it and compiles the core's kernels.

Each kernel module (``*_kernel.py``) decorates its loops with :func:`njit` and says whether it
can run with :data:`AVAILABLE`; without numba its callers take their numpy (or Python) path,
which makes the same choices. Kernels are cached on disk where a cache directory is writable.
"""

from __future__ import annotations

from typing import Any

numba: Any
try:  # optional: the numpy paths run without it
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "njit"]

#: Whether compiled kernels can run here.
AVAILABLE = numba is not None


def njit(function: Any, **options: Any) -> Any:
    """``numba.njit`` (cached on disk when a cache directory is writable), else the function itself (never called)."""
    if numba is None:
        return function
    try:
        return numba.njit(cache=True, nogil=True, **options)(function)
    except RuntimeError:  # no writable cache location: compile in every process instead
        return numba.njit(nogil=True, **options)(function)
