"""How the readable (``--format table``) output prints numbers, shares and label columns."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["aligned", "number", "share"]


def number(value: float | int) -> str:
    """Integers (also ``5.0``) with thousands separators; other reals to 4 significant digits."""
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        if not value.is_integer():
            return f"{value:.4g}"
        value = int(value)
    return f"{value:,}"


def share(fraction: float) -> str:
    """A share in percent that never rounds a non-zero share to 0% (``<0.1%``) nor a partial one to 100%."""
    if 0 < fraction < 0.001:
        return "<0.1%"
    if 0.999 < fraction < 1:
        return ">99.9%"
    return f"{fraction:.1%}"


def aligned(rows: Iterable[tuple[str, str] | str], *, indent: str = "  ") -> list[str]:
    """``label  value`` lines with the values in one column (two spaces after the longest label).

    A plain string among the rows is a line of its own (printed as it is, not aligned).
    """
    items: Sequence[tuple[str, str] | str] = list(rows)
    width = max((len(item[0]) for item in items if isinstance(item, tuple)), default=0)
    return [item if isinstance(item, str) else f"{indent}{item[0]:<{width}}  {item[1]}" for item in items]
