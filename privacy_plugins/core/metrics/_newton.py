"""A two-dimensional Newton–Raphson solver with deterministic restarts, for the uniqueness estimators.

The maximum-likelihood (Pitman) and moment (SNB) equations of
:mod:`privacy_plugins.core.metrics.uniqueness` are two equations in two
unknowns. The solver runs Newton steps from the given start; when a try
diverges, leaves the parameter domain or exceeds its iterations it restarts
from the next point of a fixed grid over [0, 1]² — the schedule ARX's
``ARXSolverConfiguration`` uses by default (accuracy 1e-6, 1000 iterations per
try, 16 grid starts), so "no estimate" means the same thing in both tools. It
never draws random numbers: equal input, equal answer.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["ACCURACY", "solve_2d"]

#: The solver stops where both equations are within this of zero.
ACCURACY = 1e-6
ITERATIONS_PER_TRY = 1000

Equations = Callable[[float, float], tuple[float, float, np.ndarray]]
"""(x, y) → (f1, f2, Jacobian 2×2 as [[∂f1/∂x, ∂f1/∂y], [∂f2/∂x, ∂f2/∂y]])."""


def _grid() -> list[tuple[float, float]]:
    """The 16 restart points 0, 0.33, 0.66, 0.99 squared (accumulated as ARX does)."""
    steps = []
    value = 0.0
    while value < 1.0:
        steps.append(value)
        value += 0.33
    return [(a, b) for a in steps for b in steps]


_GRID = _grid()


def solve_2d(
    equations: Equations, start: tuple[float, float], *, domain: Callable[[float, float], bool] | None = None
) -> tuple[float, float] | None:
    """A root of ``equations`` within :data:`ACCURACY`, or ``None`` when no try converges.

    ``domain`` (e.g. θ ≥ 0) ends a try whose step leaves it. As in ARX, the last
    grid start gets a single step.
    """
    starts = [start, *_GRID]
    for index, (x, y) in enumerate(starts):
        last = index == len(starts) - 1
        for iteration in range(ITERATIONS_PER_TRY + 2):
            f1, f2, jacobian = equations(x, y)
            if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                return x, y
            with np.errstate(all="ignore"):
                det = jacobian[0, 0] * jacobian[1, 1] - jacobian[0, 1] * jacobian[1, 0]
                dx = (jacobian[1, 1] * f1 - jacobian[0, 1] * f2) / det
                dy = (-jacobian[1, 0] * f1 + jacobian[0, 0] * f2) / det
            x, y = float(x - dx), float(y - dy)
            if last:
                return None
            if domain is not None and not domain(x, y):
                break
            if np.isnan(x) or np.isnan(y) or iteration >= ITERATIONS_PER_TRY:
                break
    return None
