"""A two-dimensional Newton–Raphson solver with deterministic restarts, for the uniqueness estimators.

The maximum-likelihood (Pitman) and moment (SNB) equations of
:mod:`privacy_plugins.core.metrics.uniqueness` are two equations in two
unknowns. The solver runs Newton steps from the given start; when a try
diverges, leaves the parameter domain or exceeds its iterations it restarts
from the next point of a fixed grid over [0, 1]² — the schedule ARX's
``ARXSolverConfiguration`` uses by default (accuracy 1e-6, 1000 iterations per
try, 16 grid starts, the last of which gets one step), so "no estimate" means
the same in both tools. It never draws random numbers: equal input, equal
answer. Plain floats, no NumPy: an evaluation is a handful of scalars, and the
solver may run thousands of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["ACCURACY", "Equations", "solve_2d"]

#: The solver stops where both equations are within this of zero.
ACCURACY = 1e-6
ITERATIONS_PER_TRY = 1000

Equations = Callable[[float, float], tuple[float, float, float, float, float, float]]
"""(x, y) → (f1, f2, ∂f1/∂x, ∂f1/∂y, ∂f2/∂x, ∂f2/∂y)."""


def _grid() -> list[tuple[float, float]]:
    """The 16 restart points 0, 0.33, 0.66, 0.99 squared (accumulated as ARX does)."""
    steps = []
    value = 0.0
    while value < 1.0:
        steps.append(value)
        value += 0.33
    return [(a, b) for a in steps for b in steps]


_GRID = _grid()


def _step(
    x: float, y: float, f1: float, f2: float, j11: float, j12: float, j21: float, j22: float
) -> tuple[float, float]:
    try:
        scale = 1.0 / (j11 * j22 - j12 * j21)
        return x - (j22 * f1 - j12 * f2) * scale, y - (-j21 * f1 + j11 * f2) * scale
    except (ZeroDivisionError, OverflowError):
        return math.nan, math.nan


def solve_2d(
    equations: Equations, start: tuple[float, float], *, domain: Callable[[float, float], bool] | None = None
) -> tuple[float, float] | None:
    """A root of ``equations`` within :data:`ACCURACY`, or ``None`` when no try converges.

    ``domain`` (e.g. θ ≥ 0) ends a try whose step leaves it. A try that returns
    to a point it has visited (bit for bit) is in a cycle of the deterministic
    Newton map and can never converge, so it ends there instead of after its
    1000 iterations — the same answer, sooner.
    """
    starts = [start, *_GRID]
    for index, (x, y) in enumerate(starts):
        last = index == len(starts) - 1
        seen: set[tuple[float, float]] = set()
        for iteration in range(ITERATIONS_PER_TRY + 2):
            f1, f2, j11, j12, j21, j22 = equations(x, y)
            if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                return x, y
            x, y = _step(x, y, f1, f2, j11, j12, j21, j22)
            if last:
                return None
            if domain is not None and not domain(x, y):
                break
            if math.isnan(x) or math.isnan(y) or iteration >= ITERATIONS_PER_TRY or (x, y) in seen:
                break
            seen.add((x, y))
    return None
