"""Comparing two JSON trees the way the diagnosis equality tests need: floats to 1e-12 relative, NaN equal to NaN.

Sums over a weighted snapshot run over the units in another order than over the records,
so a float may differ in its last bits; everything else must be equal, types included.
"""

from __future__ import annotations

import math
from typing import Any


def assert_same_json(left: Any, right: Any, where: str = "") -> None:
    """Equal JSON trees (same keys in the same order); floats to 1e-12 relative; ``where`` names the path."""
    if isinstance(left, dict):
        assert isinstance(right, dict) and list(left) == list(right), where
        for key in left:
            assert_same_json(left[key], right[key], f"{where}.{key}")
    elif isinstance(left, list):
        assert isinstance(right, list) and len(left) == len(right), where
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_same_json(a, b, f"{where}[{i}]")
    elif isinstance(left, float) and isinstance(right, float):
        close = left == right or math.isclose(left, right, rel_tol=1e-12) or (math.isnan(left) and math.isnan(right))
        assert close, (where, left, right)
    else:
        assert left == right and type(left) is type(right), (where, left, right)
