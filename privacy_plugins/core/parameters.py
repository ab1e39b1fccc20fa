"""Validation of numeric parameters, with messages that name the parameter and its domain."""

from __future__ import annotations

import math
import numbers

from privacy_plugins.errors import ConfigurationError

__all__ = ["TOLERANCE", "check_fraction", "check_integer", "check_positive", "check_real", "suppression_budget"]

#: Real-valued measures (entropy l, EMD, leakage shares) meet a user's threshold within
#: this tolerance, so exp(ln 3) = 2.9999999999999996 still counts as entropy 3-diverse.
TOLERANCE = 1e-9


def _shown(value: object) -> str:
    """``value`` as a message shows it: a NumPy scalar as the plain number (``-1.0``, not ``np.float64(-1.0)``)."""
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item):
        value = item()
    return repr(value)


def check_integer(value: object, *, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (bools and strings are type errors, not numbers)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {_shown(value)}")
    if value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {_shown(value)}")
    return int(value)


def check_real(value: object, *, name: str) -> float:
    """A finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {_shown(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ConfigurationError(f"{name} must be finite, got {_shown(value)}")
    return number


def check_positive(value: object, *, name: str, minimum: float = 0.0, inclusive: bool = False) -> float:
    """A real number above ``minimum`` (or at least it, with ``inclusive``)."""
    number = check_real(value, name=name)
    if number < minimum or (number == minimum and not inclusive):
        sign = ">=" if inclusive else ">"
        raise ConfigurationError(f"{name} must be {sign} {minimum:g}, got {_shown(value)}")
    return number


def check_fraction(value: object, *, name: str, open_low: bool = False) -> float:
    """A real number in ``[0, 1]`` (``(0, 1]`` with ``open_low``)."""
    number = check_real(value, name=name)
    if number > 1 or number < 0 or (open_low and number == 0):
        domain = "(0, 1]" if open_low else "[0, 1]"
        raise ConfigurationError(f"{name} must be in {domain}, got {_shown(value)}")
    return number


def suppression_budget(limit: float, rows: int) -> int:
    """⌊limit · rows⌋, the records a suppression limit allows, with :data:`TOLERANCE` for rounding.

    ``0.29 * 100`` is ``28.999999999999996`` in floating point; the tolerance makes it 29.
    Every place that turns a suppression limit (δ, MaxSup) into a row count uses this.

    Example:
        >>> suppression_budget(0.29, 100), suppression_budget(0.0, 100), suppression_budget(0.05, 30)
        (29, 0, 1)
    """
    return math.floor(limit * rows + TOLERANCE)
